# The paper's 20 Newsgroups distance matrix: 20 groups, 100 documents drawn
# with replacement per group and trial, tf-idf, jNMF rank 10, all 190 pairs,
# averaged over trials, on 2 local workers. Reports the time and the peak
# resident memory of the main process and of each worker.
# Needs the archived CRAN package lda 1.4.2 (see DATA.md).
# Usage: Rscript bench/joint-newsgroups.R [trials]   (default 50)
suppressPackageStartupMessages(library(nmfkit))
if (!requireNamespace("lda", quietly = TRUE)) {
  message("lda 1.4.2 is not installed; skipping")
  quit(status = 0)
}
args <- commandArgs(trailingOnly = TRUE)
trials <- if (length(args)) as.integer(args[1]) else 50L
here <- if (file.exists("bench/newsgroups-tfidf.R")) "bench" else "."
source(file.path(here, "newsgroups-tfidf.R"))

vm_hwm <- function() {
  st <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", st[grepl("^VmHWM", st)])) / 1024
}
sets <- newsgroups_tfidf()
cat(sprintf("%d groups, %d terms, %s documents\n", length(sets),
            nrow(sets[[1]]), sum(vapply(sets, ncol, integer(1)))))
future::plan(future::multisession, workers = 2)
set.seed(1)
t <- system.time(
  d <- nmf_distance(sets, rank = 10, trials = trials, resample = 100)
)[["elapsed"]]
workers <- unlist(future.apply::future_lapply(1:2, function(i) vm_hwm()))
future::plan(future::sequential)
cat(sprintf("%d x %d distances, %d trials, 2 workers: %.1f s\n",
            length(sets), length(sets), trials, t))
cat(sprintf("peak memory (VmHWM): main %.0f MB, workers %s MB\n", vm_hwm(),
            paste(sprintf("%.0f", workers), collapse = ", ")))
km <- stats::kmeans(as.matrix(d), centers = 6, nstart = 10)
print(split(names(sets), km$cluster))
saveRDS(d, file.path(tempdir(), "newsgroups-dist.rds"))
