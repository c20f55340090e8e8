# False-discovery rate and power of nmf_differential()'s feature-level
# joint test (issue 36), with standard errors: many planted data sets per
# row, every cell's p-value kept.
#
#   R_LIBS=<lib> nice Rscript bench/differential-fdr.R EFFECT USAGE RUNS TAG [B]
#   R_LIBS=<lib> Rscript bench/differential-fdr.R summary [TAG ...]
#
# A run: two sets of 60 columns over 150 features (three blocks of 50,
# rank 3, Poisson noise, coefficients with 40 % zeros); in set 2 the first
# 5 features of block 1 weigh EFFECT times as much in component 1 (1: no
# feature differs) and component 1 is used USAGE times as much. Data set r
# is drawn after set.seed(1000 r + 7); the joint fit (normalize = FALSE, 1
# thread) and nmf_differential() with the default B (9,000 here) unless B
# is given. Each data set's cells go to /tmp/differential-fdr-TAG.rds.
# `summary` prints the table of bench/differential-results.md.
suppressPackageStartupMessages(library(nmfkit))
a <- commandArgs(TRUE)
store <- function(tag) sprintf("/tmp/differential-fdr-%s.rds", tag)

if (identical(a[1], "summary")) {
  tags <- if (length(a) > 1) a[-1] else
    sub("differential-fdr-(.*)\\.rds", "\\1",
        list.files("/tmp", "^differential-fdr-.*\\.rds$"))
  se <- function(v) stats::sd(v) / sqrt(length(v))
  ms <- function(v, d = 3) sprintf(paste0("%.", d, "f (%.", d, "f)"),
                                   mean(v), se(v))
  rows <- lapply(tags, function(tg) {
    d <- readRDS(store(tg))
    s <- do.call(rbind, lapply(split(d, d$run), function(r) {
      h <- r$padj < 0.05
      null <- !r$planted_feat & r$t != 0
      c(found = if (any(r$planted_cell)) mean(h[r$planted_cell]) else NA,
        fd = sum(h & !r$planted_cell),
        fd_pf = sum(h & !r$planted_cell & r$planted_feat),
        fdp = if (any(h)) mean(!r$planted_cell[h]) else 0,
        any_fd = any(h & !r$planted_cell),
        lvl = mean(r$p[null] <= 0.05), perms = mean(r$perms),
        secs = r$secs[1])
    }))
    data.frame(
      row = tg, effect = d$effect[1], usage = d$usage[1], data_sets = nrow(s),
      power = if (all(is.na(s[, "found"]))) "-" else ms(s[, "found"]),
      FDR = ms(s[, "fdp"]), sets_with_false = sprintf("%.3f", mean(s[, "any_fd"])),
      false_per_set = sprintf("%.2f", mean(s[, "fd"])),
      of_which_planted_feature = sprintf("%.2f", mean(s[, "fd_pf"])),
      null_cells_p_le_05 = ms(s[, "lvl"], 4),
      mean_permutations = sprintf("%.0f", mean(s[, "perms"])),
      seconds_per_set = sprintf("%.1f", mean(s[, "secs"])),
      stringsAsFactors = FALSE)
  })
  tab <- do.call(rbind, rows)
  cat(paste("|", paste(names(tab), collapse = " | "), "|"), "\n")
  cat(paste("|", paste(rep("---", ncol(tab)), collapse = " | "), "|"), "\n")
  for (i in seq_len(nrow(tab))) {
    cat(paste("|", paste(tab[i, ], collapse = " | "), "|"), "\n")
  }
  quit(save = "no")
}

effect <- as.numeric(a[1])
usage <- as.numeric(a[2])
runs <- as.integer(a[3])
tag <- a[4]
B <- if (length(a) > 4) as.integer(a[5]) else NULL
future::plan(future::sequential)
ctl <- nmf_control(threads = 1)
here <- if (file.exists("bench/differential-problems.R")) "bench" else "."
source(file.path(here, "differential-problems.R"))
planted_rows <- which(blocks == 1)[seq_len(5)]
out <- list()
for (r in seq_len(runs)) {
  set.seed(1000 * r + 7)
  W <- basis()
  W2 <- W
  W2[planted_rows, 1] <- W2[planted_rows, 1] * effect
  h2 <- coef(60)
  h2[1, ] <- h2[1, ] * usage
  x1 <- matrix(rpois(m * 60, 5 * W %*% coef(60)), m)
  x2 <- matrix(rpois(m * 60, 5 * W2 %*% h2), m)
  t0 <- proc.time()[[3]]
  fit <- nmf_joint(x1, x2, rank = k, normalize = FALSE, control = ctl)
  tab <- nmf_differential(fit, B = B)$table
  comp <- which.max(colSums(fit$W[blocks == 1, ]))
  f <- as.integer(sub("f", "", tab$feature))
  ci <- as.integer(tab$component)
  pf <- f %in% planted_rows & effect != 1
  out[[r]] <- data.frame(
    run = r, effect = effect, usage = usage, f = f, ci = ci, comp = comp,
    t = tab$statistic, p = tab$p_value, padj = tab$p_adjusted,
    perms = tab$permutations, planted_cell = pf & ci == comp,
    planted_feat = pf, secs = proc.time()[[3]] - t0)
  cat(r, sum(tab$p_adjusted < 0.05),
      sum(tab$p_adjusted < 0.05 & !(pf & ci == comp)),
      round(proc.time()[[3]] - t0, 1), "\n")
  saveRDS(do.call(rbind, out), store(tag))
}
