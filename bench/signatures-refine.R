# nmf_signatures(refine = TRUE / FALSE) against MutationalPatterns'
# extract_signatures() (NMF brunet, best of nrun fits of the catalogue):
# the matched cosine of each planted signature to the reported one (mean
# and min per catalogue), over `seeds` catalogues per rank (ranks 3 and 5;
# 50 samples x 2,000 mutations, 2 active; nrun 20; 1 thread). Catalogues
# with an all-zero context are skipped (NMF refuses them).
# Run: Rscript bench/signatures-refine.R [seeds]   (default 10)
suppressPackageStartupMessages({
  library(nmfkit)
  library(MutationalPatterns)
})
NMF::nmf.options(pbackend = "seq")
args <- commandArgs(TRUE)
seeds <- if (length(args) >= 1) as.integer(args[1]) else 10L
cat("start:", trimws(system("uptime", intern = TRUE)), "\n")
cosines <- function(truth, W) {
  m <- match_components(truth, W)$similarity
  c(mean = mean(m), min = min(m))
}
rows <- list()
for (k in c(3L, 5L)) for (s in seq_len(seeds)) {
  set.seed(1000 * k + s)
  W <- simulate_signatures(k)
  x <- simulate_catalogue(W, n = 50, mutations = 2000, active = 2)$counts
  if (any(rowSums(x) == 0)) next
  got <- lapply(c(FALSE, TRUE), function(r) {
    set.seed(1)
    f <- suppressWarnings(nmf_signatures(
      x, rank = k, nrun = 20, refine = r, control = nmf_control(threads = 1)))
    cosines(W, nmfkit::basis(f))
  })
  mp <- extract_signatures(x, rank = k, nrun = 20, single_core = TRUE)
  rows[[length(rows) + 1]] <- data.frame(
    rank = k, seed = s, centroid = got[[1]][["mean"]],
    refined = got[[2]][["mean"]],
    mp = cosines(W, mp$signatures)[["mean"]],
    centroid_min = got[[1]][["min"]], refined_min = got[[2]][["min"]],
    mp_min = cosines(W, mp$signatures)[["min"]])
}
d <- do.call(rbind, rows)
print(d, digits = 6, row.names = FALSE)
cat("\nmeans over catalogues\n")
print(aggregate(. ~ rank, d[, -2], mean), digits = 6, row.names = FALSE)
cat("\ncatalogues where refined >= MutationalPatterns - 1e-6:",
    sum(d$refined >= d$mp - 1e-6), "of", nrow(d), "\n")
cat("end:", trimws(system("uptime", intern = TRUE)), "\n")
