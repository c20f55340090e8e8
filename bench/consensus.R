# Issue 27's benchmark: cNMF consensus programs on real single-cell counts.
#
# Data: fastTopics' pbmc_facs (example_counts("pbmc"): 16,791 genes x 3,774
# FACS-purified cells), prepared as cNMF prepares it: counts per 10,000 of
# each cell, the 2,000 genes of highest variance-to-mean ratio (among genes
# detected in at least 1 % of cells), each gene scaled to unit variance
# without centring (cNMF's "norm_counts").
# nmfkit: nmf_consensus(x, rank = c(6, 8, 10), nrun = 50), default method,
# 2 threads; the time of the whole consensus (runs, clustering, refits).
# scikit-learn, called the way cNMF calls it (its defaults: NMF(init =
# "random", solver = "mu", beta_loss = "frobenius", tol = 1e-4, max_iter =
# 1000), one run per seed, samples as rows): bench/consensus_sklearn.py times
# `--sk-runs` runs per rank (default 10: a full 150 runs would take most of
# an hour) and the per-run mean times 50 is its cost of the runs alone (the
# k-means and refit of cNMF are left out, in its favour).
# Peak RSS: VmHWM of the R child, ru_maxrss of Python. Result:
# bench/consensus-results.md.
#
# Usage: Rscript bench/consensus.R [--sk-runs 10]

args <- commandArgs(trailingOnly = TRUE)
lib <- Sys.getenv("NMFKIT_BENCH_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
suppressMessages({library(nmfkit); library(Matrix)})
python <- "/usr/bin/python3"
sk_runs <- if ("--sk-runs" %in% args) as.integer(args[which(args == "--sk-runs") + 1]) else 10L
ranks <- c(6, 8, 10)

vm_hwm <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmHWM", s, value = TRUE))) / 1024
}

if (length(args) && args[1] == "--child") {
  x <- readRDS(args[2])
  future::plan("sequential")
  set.seed(1)
  t <- system.time(cons <- nmf_consensus(
    x, rank = ranks, nrun = 50,
    control = nmf_control(threads = 2)))[["elapsed"]]
  cat("RESULT", deparse(list(seconds = t, rss_mb = vm_hwm(),
                             results = cons$results)), "\n")
  quit(save = "no")
}

pbmc <- example_counts("pbmc")
counts <- pbmc$counts
per10k <- counts %*% Diagonal(x = 1e4 / colSums(counts))
detected <- rowMeans(counts > 0) >= 0.01
mu <- rowMeans(per10k)
v <- rowMeans(per10k^2) - mu^2
ratio <- ifelse(detected & mu > 0, v / mu, -Inf)
genes <- order(ratio, decreasing = TRUE)[1:2000]
x <- as.matrix(per10k[genes, ])
x <- x / apply(x, 1, stats::sd)
dir <- file.path("bench", "data")
dir.create(dir, showWarnings = FALSE)
rds <- file.path(dir, "consensus-x.rds")
saveRDS(x, rds)
# cells x genes in row-major order is x (genes x cells) column-major
writeBin(as.vector(x), file.path(dir, "consensus-x.bin"), size = 8)
cat("data:", nrow(x), "genes x", ncol(x), "cells;", round(mean(x > 0), 3),
    "nonzero\n")

uptime <- system("uptime", intern = TRUE)
rscript <- file.path(R.home("bin"), "Rscript")
out <- system2(rscript, c("bench/consensus.R", "--child", rds), stdout = TRUE,
               env = c("OMP_NUM_THREADS=2",
                       if (nzchar(lib)) paste0("NMFKIT_BENCH_LIB=", lib)))
ours <- eval(parse(text = sub("^RESULT ", "", grep("^RESULT", out, value = TRUE))))

sk <- system2(python, c("bench/consensus_sklearn.py",
                        file.path(dir, "consensus-x.bin"), ncol(x), nrow(x),
                        sk_runs, paste(ranks, collapse = ",")),
              stdout = TRUE, env = c("OMP_NUM_THREADS=2",
                                     "OPENBLAS_NUM_THREADS=2"))
sk <- jsonlite::fromJSON(sub("^RESULT ", "", grep("^RESULT", sk, value = TRUE)))
sk_total <- sum(sk$per_run * 50)

report <- c(
  "# Consensus benchmark (bench/consensus.R)", "",
  paste("Load before the run:", uptime), "",
  sprintf("Data: pbmc_facs as cNMF prepares it, %d genes x %d cells.",
          nrow(x), ncol(x)), "",
  sprintf("nmfkit `nmf_consensus(rank = c(6, 8, 10), nrun = 50)`, 2 threads: %.1f s for the whole consensus (150 runs, clustering, refits), peak RSS %.0f MB.",
          ours$seconds, ours$rss_mb), "",
  "| rank | stability | error | kept | agreement |", "| --- | --- | --- | --- | --- |",
  sprintf("| %d | %.3f | %.4f | %.2f | %.3f |", ours$results$rank,
          ours$results$stability, ours$results$error, ours$results$kept,
          ours$results$agreement), "",
  sprintf("scikit-learn `NMF(init = \"random\", solver = \"mu\", tol = 1e-4, max_iter = 1000)` as cNMF calls it, %d runs per rank timed, 2 threads: seconds per run %s (ranks %s); 150 runs would take %.0f s, peak RSS %.0f MB.",
          sk_runs, paste(sprintf("%.2f", sk$per_run), collapse = ", "),
          paste(ranks, collapse = ", "), sk_total, sk$rss_mb), "",
  sprintf("Ratio (scikit-learn runs alone / nmfkit whole consensus): %.1f.",
          sk_total / ours$seconds))
writeLines(report, "bench/consensus-results.md")
cat(report, sep = "\n")
