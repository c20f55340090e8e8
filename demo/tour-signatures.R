# Mutational signatures: catalogues simulated from COSMIC signatures at
# 100, 2,000 and 50,000 mutations per sample (SigFitTest's protocol), de
# novo extraction with its rank, decomposition into COSMIC, refits with
# sparse selection and bootstrap intervals; then the MutationalPatterns
# example catalogue. Needs tools/install-signatures.R (make demo runs it).
if (!cosmic_signatures_available() || !example_counts_available("mutations")) {
  stop("COSMIC signatures not installed: run Rscript tools/install-signatures.R")
}
cosmic <- cosmic_signatures("SBS", artefacts = FALSE)
planted <- c("SBS1", "SBS2", "SBS5", "SBS13", "SBS18")

# extraction on 60 samples of 2,000 mutations, 3 of 5 signatures each
set.seed(1)
sim <- simulate_catalogue(cosmic[, planted], n = 60, mutations = 2000,
                          active = 3)
t_ext <- system.time(
  sig <- nmf_signatures(sim$counts, rank = 2:8, nrun = 20)
)[["elapsed"]]
m <- match_components(cosmic[, planted], basis(sig))
summary_line(sprintf(
  "extraction, 96 x 60 planted at rank 5, ranks 2-8 x 20 replicates: %.1f s; chosen rank %d; cosine to the planted signatures %s",
  t_ext, sig$rank, paste(sprintf("%.3f", m$similarity), collapse = " ")))
png(file.path(out_dir, "signatures-rank.png"), 900, 600, res = 110)
plot(sig, type = "rank")
dev.off()
png(file.path(out_dir, "signatures-extracted.png"), 1000, 1100, res = 110)
plot(sig, type = "signatures")
dev.off()
dec <- decompose_signatures(sig, cosmic)
summary_line(sprintf("decomposition into COSMIC: %s",
                     paste(sprintf("%s = %s (cos %.3f)", dec$table$signature,
                                   dec$table$decomposition, dec$table$cosine),
                           collapse = "; ")))
png(file.path(out_dir, "signatures-decomposition.png"), 900, 600, res = 110)
plot(dec)
dev.off()

# refits at 100, 2,000 and 50,000 mutations: total absolute error of the
# exposures (as shares of each sample) against the truth, over samples
for (n_mut in c(100, 2000, 50000)) {
  set.seed(2)
  s <- simulate_catalogue(cosmic[, planted], n = 30, mutations = n_mut,
                          active = 3)
  truth <- matrix(0, ncol(cosmic), 30, dimnames = list(colnames(cosmic), NULL))
  truth[planted, ] <- s$exposures
  err <- vapply(c("none", "cosine", "lrt"), function(sel) {
    h <- refit_signatures(s$counts, cosmic, select = sel)$exposures
    mean(colSums(abs(sweep(h, 2, colSums(s$counts), "/") -
                       sweep(truth, 2, n_mut, "/"))))
  }, numeric(1))
  summary_line(sprintf(
    "refit of 30 samples x %s mutations on 60 COSMIC signatures: mean total absolute error of exposure shares: all %.3f, cosine selection %.3f, likelihood ratio %.3f",
    format(n_mut, big.mark = ","), err[1], err[2], err[3]))
}

# the MutationalPatterns example: strict refit with bootstrap intervals
mm <- example_counts("mutations")
set.seed(3)
t_fit <- system.time(
  fit <- refit_signatures(mm$counts, cosmic, loss = "frobenius",
                          select = "cosine", max_delta = 0.05, B = 100)
)[["elapsed"]]
s <- summary(fit)
summary_line(sprintf(
  "MutationalPatterns example (96 x 9): strict refit (least squares, cosine, as fit_to_signatures_bootstrapped()) with 100 bootstrap replicates in %.1f s; signatures present: %s; mean cosine %.3f",
  t_fit, paste(sprintf("%s (%d samples)", s$signature[s$samples > 0],
                       s$samples[s$samples > 0]), collapse = ", "),
  mean(fit$cosine)))
png(file.path(out_dir, "signatures-spectra.png"), 1000, 1100, res = 110)
plot_spectra(mm$counts[, c("colon1", "intestine1", "liver1")])
dev.off()
png(file.path(out_dir, "signatures-intervals.png"), 1200, 900, res = 110)
plot(fit, type = "intervals")
dev.off()
