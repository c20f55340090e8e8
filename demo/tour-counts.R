# Count data: Poisson NMF (KL) on raw UMI counts against Frobenius NMF on
# log-normalised counts, on 3,774 FACS-purified PBMCs (pbmc_facs), and KL
# topics of 20 Newsgroups word counts. Needs the data of
# tools/install-data.R (make demo installs them).
library(Matrix)
if (!example_counts_available("pbmc")) {
  stop("pbmc_facs is not installed: run Rscript tools/install-data.R")
}
pbmc <- example_counts("pbmc")
x <- pbmc$counts
size <- colSums(x)
# log-normalised counts (counts per median library size, log1p): sparse
lognorm <- function(x, size) {
  y <- x %*% Diagonal(x = median(size) / size)
  y@x <- log1p(y@x)
  as(y, "CsparseMatrix")
}
xl <- lognorm(x, size)
set.seed(1)
t_kl <- system.time(kl <- nmf(x, rank = 6, loss = "kl",
                              control = nmf_control(max_iter = 100)))[["elapsed"]]
set.seed(1)
t_fr <- system.time(fr <- nmf(xl, rank = 6,
                              control = nmf_control(max_iter = 100)))[["elapsed"]]
prop_nmi <- function(fit, y) {
  h <- fit$H * colSums(fit$W)
  cluster_nmi(as.integer(y), max.col(t(h), ties.method = "first"))
}
summary_line(sprintf("  NMI by topic proportions: KL %.2f, Frobenius %.2f",
                     prop_nmi(kl, pbmc$subpop), prop_nmi(fr, pbmc$subpop)))
nmi <- function(fit, y) cluster_nmi(as.integer(y), clusters(fit))
summary_line(sprintf(
  "pbmc_facs %d genes x %d cells: KL rank 6 %d iterations %.1f s, NMI with the 5 populations %.2f (Frobenius on log counts: %d iterations %.1f s, NMI %.2f)",
  nrow(x), ncol(x), kl$iterations, t_kl, nmi(kl, pbmc$subpop), fr$iterations,
  t_fr, nmi(fr, pbmc$subpop)))

# held-out cells: projected under each fit's loss, scored by Poisson deviance
test <- pbmc$test
dev <- function(x, mu) {
  x <- as.matrix(x)
  2 * sum(ifelse(x > 0, x * log(x / mu), 0) - x + mu)
}
h_kl <- predict(kl, test)
mu_kl <- kl$W %*% h_kl
tsize <- colSums(test)
h_fr <- predict(fr, lognorm(test, tsize))
# back to counts: expm1 of the fitted log values, rescaled to each cell's
# library size (the fit's own mean of the counts)
mu_fr <- expm1(pmax(fr$W %*% h_fr, 0))
mu_fr <- sweep(mu_fr, 2, pmax(colSums(mu_fr), 1e-12) / tsize, "/")
mu_fr <- pmax(mu_fr, 1e-8)  # a zero mean at a positive count: infinite
summary_line(sprintf(
  "held-out 100 cells, Poisson deviance per count: KL %.3f, Frobenius on log counts %.3f",
  dev(test, mu_kl) / sum(test), dev(test, mu_fr) / sum(test)))

# structure plot: each cell's topic proportions, grouped by FACS type
png(file.path(out_dir, "counts-pbmc-structure.png"), 1400, 560, res = 110)
op <- par(mfrow = c(2, 1), mar = c(2.5, 4, 2, 1))
for (f in list(list(kl, "KL on raw counts"),
               list(fr, "Frobenius on log-normalised counts"))) {
  h <- f[[1]]$H * colSums(f[[1]]$W)
  prop <- sweep(h, 2, pmax(colSums(h), 1e-300), "/")
  ord <- order(pbmc$labels, max.col(t(prop)))
  barplot(prop[, ord], col = hcl.colors(6, "Dark 3"), border = NA,
          space = 0, main = f[[2]], ylab = "share", axisnames = FALSE)
  mids <- cumsum(table(pbmc$labels[ord]))
  axis(1, at = c(0, mids), labels = FALSE)
  mtext(levels(pbmc$labels), 1, at = mids - table(pbmc$labels) / 2,
        line = 0.4, cex = 0.5)
}
par(op)
dev.off()

# marker genes of each KL program
tops <- top_features(kl, n = 5, score = "specificity")
summary_line("KL programs' top genes: ",
             paste(tapply(tops$feature, tops$component, paste,
                          collapse = " "), collapse = " | "))

if (example_counts_available("newsgroups")) {
  ng <- example_counts("newsgroups")
  y <- ng$counts
  # drop very rare and very common words (a stop list by frequency)
  df <- rowSums(y > 0)
  y <- y[df >= 5 & df <= 0.1 * ncol(y), ]
  y <- y[, colSums(y) > 0]
  set.seed(2)
  t_ng <- system.time(tk <- nmf(y, rank = 20, loss = "kl",
                                control = nmf_control(max_iter = 60)))[["elapsed"]]
  lab <- ng$labels[match(colnames(y), colnames(ng$counts))]
  summary_line(sprintf(
    "20 Newsgroups %d words x %d documents: KL rank 20 %d iterations %.1f s, NMI with the newsgroups %.2f",
    nrow(y), ncol(y), tk$iterations, t_ng, nmi(tk, lab)))
  words <- top_features(tk, n = 6, score = "specificity")
  summary_line("  topics: ", paste(utils::head(tapply(
    words$feature, words$component, paste, collapse = " "), 6),
    collapse = " | "))
}
