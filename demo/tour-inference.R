# Inference: how sure is a fit? Bootstrap stability and intervals of a KL
# fit of PBMC counts, intervals of held-out cells' proportions, feature-level
# differential tests of a joint fit (B cells against NK cells), and the
# rank and L1 penalty chosen by held-out error. Needs the data of
# tools/install-data.R (make demo installs them).
library(Matrix)
if (!example_counts_available("pbmc")) {
  stop("pbmc_facs is not installed: run Rscript tools/install-data.R")
}
pbmc <- example_counts("pbmc")
counts <- pbmc$counts
counts <- counts[rowSums(counts > 0) >= 0.01 * ncol(counts), ]
mu <- rowMeans(counts)
genes <- order((rowMeans(counts^2) - mu^2) / mu, decreasing = TRUE)[1:1000]
set.seed(1)
cells <- sort(sample(ncol(counts), 1500))
x <- counts[genes, cells]

# a converged KL fit and 50 parametric replicates
set.seed(1)
fit <- nmf(x, 6, loss = "kl", control = nmf_control(max_iter = 1000))
set.seed(2)
t_boot <- system.time(boot <- nmf_bootstrap(fit, B = 50, type = "parametric"))[["elapsed"]]
st <- boot$stability
summary_line(sprintf(
  "pbmc %d genes x %d cells, KL rank 6 (%d iterations): 50 parametric replicates in %.1f s; stability (mean matched cosine) %s; recovered %s",
  nrow(x), ncol(x), fit$iterations, t_boot,
  paste(sprintf("%.3f", st$cosine), collapse = " "),
  paste(sprintf("%.0f%%", 100 * st$recovered), collapse = " ")))
png(file.path(out_dir, "inference-bootstrap.png"), 1200, 800, res = 110)
plot(boot, top = 8)
dev.off()

# held-out cells: proportions with intervals
new <- pbmc$test[rownames(x), ]
p <- predict(fit, new, interval = "bootstrap", bootstrap = boot)
width <- p$proportion_upper - p$proportion_lower
summary_line(sprintf(
  "100 held-out cells: median width of the 90%% intervals of their proportions %.3f (largest %.3f)",
  median(width), max(width)))

# which genes make naive CD4+ T cells differ from cytotoxic CD8+ T cells
lab <- pbmc$labels
naive <- counts[genes, lab == "CD4+/CD45RA+/CD25- Naive T"]
cytotoxic <- counts[genes, lab == "CD8+ Cytotoxic T"]
set.seed(4)
jf <- nmf_joint(naive, cytotoxic, rank = 4, labels = c("naive CD4", "CD8"))
set.seed(5)
t_diff <- system.time(dt <- nmf_differential(jf, B = 499))[["elapsed"]]
tab <- dt$table
hits <- tab[tab$p_adjusted < 0.05, ]
hits <- hits[order(-abs(hits$statistic)), ]
summary_line(sprintf(
  "joint naive CD4 (%d) vs CD8 (%d) cells, rank 4, distance %.2f: %d gene-component tests at BH 5%% in %.1f s (499 permutations); top genes %s",
  ncol(naive), ncol(cytotoxic), jf$distance, nrow(hits), t_diff,
  paste(utils::head(unique(hits$feature), 8), collapse = " ")))
png(file.path(out_dir, "inference-volcano.png"), 900, 650, res = 110)
plot(dt)
dev.off()

# rank and L1 penalty by held-out KL divergence on 500 cells
set.seed(9)
sub <- x[, sample(ncol(x), 500)]
t_tune <- system.time(tu <- nmf_tune(sub, rank = c(4, 6, 8, 10, 12), loss = "kl",
                                     grid = list(l1 = c(0, 0.001, 0.01)),
                                     control = nmf_control(max_iter = 100)))[["elapsed"]]
b <- tu$best
summary_line(sprintf(
  "nmf_tune: 5 ranks x 3 L1 weights x 3 folds in %.1f s; one-SE choice rank %s, l1 %s (lowest mean: rank %s, l1 %s)",
  t_tune, b$rank[b$choice == "one_se"], format(b$l1[b$choice == "one_se"]),
  b$rank[b$choice == "min"], format(b$l1[b$choice == "min"])))
png(file.path(out_dir, "inference-tune.png"), 900, 600, res = 110)
plot(tu)
dev.off()
