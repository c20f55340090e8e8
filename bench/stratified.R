# Stratified NMF: nmfkit against the authors' algorithm written in numpy from
# the authors' code (bench/stratified_ref.py, the reference code's Jacobi order), on
# the authors' synthetic problem (4 strata x 100 samples x 100 features,
# rank 5), same starting factors, same machine, same run. Prints seconds per
# iteration, the ratio, and how closely the two loss traces agree.
# Then, when the archived CRAN package lda 1.4.2 is installed, the full
# 20 Newsgroups problem (20 strata, rank 20, 100 iterations) with its time
# and peak memory.
#   Rscript bench/stratified.R [iterations [synthetic]]
# (default 10000 iterations; "synthetic" skips 20 Newsgroups)
suppressPackageStartupMessages(library(nmfkit))
args <- commandArgs(trailingOnly = TRUE)
iters <- if (length(args)) as.integer(args[1]) else 10000L
python <- "/usr/bin/python3"
here <- local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE))
  if (length(f)) dirname(normalizePath(f)) else "bench"
})

# The synthetic data and the authors' start, drawn with R's RNG.
set.seed(2023)
s <- 4; m <- 100; n <- 100; r <- 5
basis <- matrix(runif(n * r), n, r)
x <- lapply(seq_len(s), function(i) {
  basis %*% matrix(runif(r * m), r, m) + (runif(n) + (i - 1))
})
names(x) <- paste0("s", seq_len(s))
start <- list(V = matrix(runif(n * s), n, s),
              H = matrix(runif(r * m * s), r, m * s) / sqrt(r),
              W = matrix(runif(n * r), n, r) / sqrt(r))

# The same problem for numpy, samples as rows.
dir <- tempfile("stratified-bench-")
dir.create(dir)
wtxt <- function(mat, name) {
  utils::write.table(format(mat, digits = 17), file.path(dir, name),
                     quote = FALSE, row.names = FALSE, col.names = FALSE)
}
for (i in seq_len(s)) {
  wtxt(t(x[[i]]), sprintf("A_%d.txt", i - 1))
  wtxt(t(start$H[, (i - 1) * m + seq_len(m)]), sprintf("W_%d.txt", i - 1))
}
wtxt(t(start$W), "H.txt")
wtxt(t(start$V), "V.txt")

run_numpy <- function(env = character()) {
  out <- system2(python, c(file.path(here, "stratified_ref.py"), dir, iters),
                 stdout = TRUE, env = env)
  as.numeric(utils::tail(out, 2))  # CPU, elapsed seconds
}
# numpy as installed (OpenBLAS may use both cores), then with one BLAS thread
numpy_default <- run_numpy()
numpy_single <- run_numpy(c("OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1"))
loss_numpy <- scan(file.path(dir, "loss.txt"), quiet = TRUE)

fit_time <- function(order, threads) {
  t0 <- proc.time()
  fit <- nmf_stratified(x, rank = r, update_order = order, init = start,
                        control = nmf_control(max_iter = iters,
                                              threads = threads))
  t1 <- proc.time() - t0
  list(fit = fit, time = t1[["elapsed"]],
       cpu = t1[["user.self"]] + t1[["sys.self"]])
}
invisible(fit_time("jacobi", 1L))  # warm-up, untimed
# threads = 2 on this small problem: the Parallel policy keeps loops below
# its one work threshold on one thread, so it should match threads = 1.
runs <- list(jacobi_1 = fit_time("jacobi", 1L),
             jacobi_2 = fit_time("jacobi", 2L),
             gauss_seidel_1 = fit_time("gauss_seidel", 1L))

# nmfkit's loss after iteration k is the reference's loss before k + 1.
jac <- runs$jacobi_1$fit
ours <- c(jac$initial_loss, jac$loss)[seq_len(iters)]
agree <- max(abs(ours - loss_numpy) / loss_numpy)
x_norm <- sqrt(sum(vapply(x, function(a) sum(a^2), 0)))

cat(sprintf("Synthetic problem, %d iterations, rank %d, %s\n", iters, r,
            format(Sys.time(), "%Y-%m-%d")))
cat("  (elapsed time; CPU time, which a busy machine disturbs less)\n")
for (np in list(list("numpy reference (Jacobi):", numpy_default),
                list("numpy, 1 BLAS thread:", numpy_single))) {
  cat(sprintf("  %-27s %7.1f us/iter          CPU %7.1f us/iter\n", np[[1]],
              1e6 * np[[2]][2] / iters, 1e6 * np[[2]][1] / iters))
}
cat("  nmfkit (ratios: numpy default / nmfkit; numpy 1 thread / nmfkit)\n")
for (nm in names(runs)) {
  tm <- runs[[nm]]$time
  cpu <- runs[[nm]]$cpu
  cat(sprintf(
    "  %-17s %7.1f us/iter (%4.1fx, %4.1fx)  CPU %7.1f us/iter (%4.1fx, %4.1fx)\n",
    paste0(nm, ":"), 1e6 * tm / iters, numpy_default[2] / tm,
    numpy_single[2] / tm, 1e6 * cpu / iters, numpy_default[1] / cpu,
    numpy_single[1] / cpu))
}
cat(sprintf("  loss traces agree to %.1e (max relative difference)\n", agree))
cat(sprintf("  final normalised loss: numpy %.3e, nmfkit Jacobi %.3e, Gauss-Seidel %.3e\n",
            utils::tail(loss_numpy, 1) / x_norm,
            utils::tail(jac$normalized_loss, 1),
            utils::tail(runs$gauss_seidel_1$fit$normalized_loss, 1)))
cat("  final v means (Gauss-Seidel):",
    format(colMeans(runs$gauss_seidel_1$fit$V), digits = 3), "\n")

# Time to the authors' final loss: the loss of the multiplicative rules after
# `iters` iterations (nmfkit's Jacobi trace, which matches numpy's), reached
# by update = "hals" from the same start. Paired runs alternate numpy's
# `iters` iterations with the HALS fit stopped at that loss; the ratio is
# the median of the per-pair ratios (elapsed time).
target <- utils::tail(jac$loss, 1)
hals_fit <- function(max_iter) {
  nmf_stratified(x, rank = r, init = start,
                 control = nmf_control(max_iter = max_iter, update = "hals"))
}
hit <- which(hals_fit(iters)$loss <= target)[1]
if (is.na(hit)) {
  cat("  update = \"hals\" did not reach the multiplicative rules' loss\n")
} else {
  t_np <- t_hals <- numeric(5)
  for (i in seq_along(t_np)) {
    t_np[i] <- run_numpy()[2]
    t0 <- proc.time()[["elapsed"]]
    invisible(hals_fit(hit))
    t_hals[i] <- proc.time()[["elapsed"]] - t0
  }
  cat(sprintf(paste0(
    "  time to the multiplicative rules' loss after %d iterations ",
    "(%.6g):\n    numpy %d iterations: median %.3f s; nmfkit ",
    "update = \"hals\", %d iterations: median %.4f s;\n",
    "    ratio (median of %d paired runs) %.0fx; load average %s\n"),
    iters, target, iters, stats::median(t_np), hit, stats::median(t_hals),
    length(t_np), stats::median(t_np / t_hals),
    paste(utils::head(strsplit(readLines("/proc/loadavg"), " ")[[1]], 3),
          collapse = " ")))
}
unlink(dir, recursive = TRUE)

if (identical(args[2], "synthetic")) {
  cat("20 Newsgroups skipped (second argument \"synthetic\").\n")
} else if (requireNamespace("lda", quietly = TRUE)) {
  source(file.path(here, "stratified-20ng.R"), local = TRUE)
} else {
  cat("20 Newsgroups skipped: install the archived CRAN package lda 1.4.2.\n")
}
