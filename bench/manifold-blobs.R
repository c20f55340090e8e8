# Manifold clustering on families of Gaussian blobs (issue 36): accuracy of
# nmf_manifold()'s four methods next to k-means on draws k-means separates.
#   Rscript bench/manifold-blobs.R [draws] [family ...] [diag]
# Default: 10 draws of every family of tests/testthat/helper-manifold.R.
# GNMF is fitted on x - min(x) (it needs x >= 0), the others on x, all with
# their defaults and one start. "diag" adds, per SMRMF draw, the share of
# the selective graph's weight across clusters and the accuracy of the
# start (argmax of the NNDSVD codes).
suppressPackageStartupMessages(library(nmfkit))
source("tests/testthat/helper-manifold.R")
args <- commandArgs(trailingOnly = TRUE)
num <- suppressWarnings(as.integer(args))
draws <- if (any(!is.na(num))) num[!is.na(num)][1] else 10L
families <- intersect(args, names(blob_families))
if (!length(families)) families <- names(blob_families)
diag_mode <- "diag" %in% args
methods <- c("gnmf", "rmnmf", "smrmf", "fsmrmf")

cross_weight <- function(g, y) {
  s <- Matrix::summary(methods::as(g, "TsparseMatrix"))
  if (!nrow(s)) return(NA_real_)
  sum(s$x[y[s$i] != y[s$j]]) / sum(s$x)
}

one_draw <- function(family, seed) {
  set.seed(seed)
  x <- draw_blobs(family)
  y <- attr(x, "labels")
  k <- length(unique(y))
  set.seed(seed)
  km <- cluster_acc(y, stats::kmeans(t(x), k, nstart = 10)$cluster)
  out <- c(kmeans = km)
  for (m in methods) {
    set.seed(seed)
    xx <- if (m == "gnmf") x - min(x) else x
    t0 <- proc.time()[["elapsed"]]
    fit <- suppressWarnings(nmf_manifold(xx, k, method = m))
    out[m] <- cluster_acc(y, clusters(fit))
    out[paste0(m, "_it")] <- fit$iterations
    out[paste0(m, "_s")] <- proc.time()[["elapsed"]] - t0
    if (diag_mode && m %in% c("smrmf", "fsmrmf")) {
      out[paste0(m, "_cross")] <- cross_weight(fit$graph, y)
    }
  }
  out
}

rows <- list()
t_all <- proc.time()[["elapsed"]]
for (f in families) {
  res <- vapply(seq_len(draws), function(s) one_draw(f, s),
                one_draw(f, 1L))
  ok <- res["kmeans", ] == 1
  if (diag_mode) {
    cat(f, "\n")
    print(round(res, 3))
  }
  summ <- function(m) {
    a <- res[m, ok]
    sprintf("%.3f (%.2f)", mean(a), min(a))
  }
  rows[[f]] <- data.frame(
    family = f, draws = draws, kmeans_1 = sum(ok),
    GNMF = summ("gnmf"), RMNMF = summ("rmnmf"), SMRMF = summ("smrmf"),
    f_SMRMF = summ("fsmrmf"),
    iterations = paste(round(rowMeans(res[paste0(methods, "_it"), ,
                                          drop = FALSE])), collapse = "/"),
    seconds = paste(sprintf("%.2f", rowMeans(res[paste0(methods, "_s"), ,
                                                 drop = FALSE])),
                    collapse = "/"))
}
tab <- do.call(rbind, rows)
cat(sprintf("\n%s draws per family; mean accuracy (min) over the draws where k-means gets 1\n",
            draws))
cat("| family | k-means = 1 | GNMF | RMNMF | SMRMF | f-SMRMF | iterations G/R/S/f | s per fit G/R/S/f |\n")
cat("|---|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(tab))) {
  r <- tab[i, ]
  cat(sprintf("| %s | %d of %d | %s | %s | %s | %s | %s | %s |\n", r$family,
              r$kmeans_1, r$draws, r$GNMF, r$RMNMF, r$SMRMF, r$f_SMRMF,
              r$iterations, r$seconds))
}
cat(sprintf("total %.0f s\n", proc.time()[["elapsed"]] - t_all))
