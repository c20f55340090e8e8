# Calibration of nmf_bootstrap() intervals on planted data (issue 29, item 5).
#
# Planted W0 (m x k) and H0 (k x n), data drawn with Poisson or Gaussian
# noise, a fit at the true rank (KL for Poisson, Frobenius for Gaussian),
# B = 100 replicates of each type, and the share of entries of W0 (and, for
# "parametric", H0) inside the nominal 90 % intervals, after matching the
# fit's components to the truth (Hungarian on cosine similarity) and scaling
# the truth to the fit's column sums. Averaged over simulation seeds.
#
# Design "identifiable": every row of W0 and every column of H0 uses two of
# the three components (one zero each, at random), entries 0.3 + Exp(1):
# the zeros make the factorisation unique and any two supports meet, so
# W0 H0 > 0 and Gaussian noise is seldom clipped at 0.
# Design "sparse": 30 % of the entries of W0 and H0 zero at random: about
# 13 % of W0 H0 is 0, where Gaussian noise clipped at 0 (the data must be
# nonnegative) has mean 0.4 sd: the model is misspecified there, the fit
# biased, and no resampling interval can cover the truth at its level.
#
# Run: Rscript bench/inference-calibration.R [seeds] [tol] [file]  (about 10
# minutes at 1 thread)
suppressPackageStartupMessages(library(nmfkit))
args <- commandArgs(TRUE)
seeds <- if (length(args)) seq_len(as.integer(args[1])) else 1:10
# a second argument: the replicates' tol (relative to their first
# violation) in place of nmf_bootstrap()'s default; a third: the table's file
rep_tol <- if (length(args) > 1) as.numeric(args[2])
out_file <- if (length(args) > 2) args[3] else "bench/inference-calibration.md"
m <- 60; n <- 120; k <- 3; B <- 100; scale <- 20; sd_rel <- 0.1

planted <- function(design) {
  if (design == "identifiable") {
    W0 <- matrix(0.3 + rexp(m * k), m, k)
    W0[cbind(seq_len(m), sample(k, m, TRUE))] <- 0
    H0 <- matrix(0.3 + rexp(k * n), k, n)
    H0[cbind(sample(k, n, TRUE), seq_len(n))] <- 0
  } else {
    W0 <- matrix(rexp(m * k), m, k) * (runif(m * k) < 0.7)
    H0 <- matrix(rexp(k * n), k, n) * (runif(n * k) < 0.7)
  }
  s <- scale / mean(W0 %*% H0)
  list(W0 = W0 * s, H0 = H0)
}

coverage <- function(seed, design, noise) {
  set.seed(seed)
  p <- planted(design)
  mu <- p$W0 %*% p$H0
  x <- if (noise == "poisson") matrix(rpois(m * n, mu), m) else
    pmax(mu + matrix(rnorm(m * n, sd = sd_rel * scale), m), 0)
  fit <- suppressWarnings(nmf(x, k, loss = if (noise == "poisson") "kl" else "frobenius",
                              control = nmf_control(max_iter = 1000, tol = 1e-6)))
  mt <- match_components(fit, p$W0)
  f <- colSums(fit$W) / colSums(p$W0[, mt$permutation])
  Wt <- sweep(p$W0[, mt$permutation], 2, f, "*")
  Ht <- p$H0[mt$permutation, ] / f
  out <- NULL
  for (type in c("columns", "parametric")) {
    t0 <- proc.time()[[3]]
    ctl <- if (!is.null(rep_tol)) {
      replace(fit$control, c("tol", "max_iter"), list(rep_tol, 50L))
    }
    b <- suppressWarnings(nmf_bootstrap(fit, B = B, type = type, control = ctl))
    inW <- Wt >= b$W_lower & Wt <= b$W_upper
    inH <- if (type == "parametric") Ht >= b$H_lower & Ht <= b$H_upper
    out <- rbind(out, data.frame(
      design = design, noise = noise, type = type, seed = seed,
      W = mean(inW), W_nonzero = mean(inW[Wt > 0]), W_zero = mean(inW[Wt == 0]),
      H = if (is.null(inH)) NA else mean(inH),
      cosine = mean(mt$similarity), stability = mean(b$stability$cosine),
      iterations = mean(b$iterations), capped = mean(b$status != "converged"),
      seconds = proc.time()[[3]] - t0))
  }
  out
}

t0 <- proc.time()[[3]]
res <- NULL
for (design in c("identifiable", "sparse")) {
  for (noise in c("poisson", "gaussian")) {
    for (s in seeds) res <- rbind(res, coverage(s, design, noise))
  }
}
agg <- aggregate(cbind(W, W_nonzero, W_zero, H, cosine, iterations, capped,
                       seconds) ~ design + noise + type,
                 data = transform(res, H = ifelse(is.na(H), -1, H)), FUN = mean)
agg$H[agg$H < 0] <- NA
sdW <- aggregate(W ~ design + noise + type, data = res, FUN = sd)
agg$W_sd <- sdW$W
agg <- agg[order(agg$design != "identifiable", agg$noise, agg$type), ]
fmt <- function(v) ifelse(is.na(v), "-", sprintf("%.3f", v))
lines <- c(
  sprintf("Run %s; %d seeds; m = %d, n = %d, rank %d, B = %d, 90 %% intervals; replicate tol %s; uptime: %s",
          format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"), length(seeds), m, n, k, B,
          if (is.null(rep_tol)) "nmf_bootstrap()'s default" else format(rep_tol),
          trimws(system("uptime", intern = TRUE))),
  "",
  "| design | noise | type | coverage W | W > 0 | W = 0 | coverage H | sd over seeds | truth cosine | iterations per replicate | capped | s per bootstrap |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|",
  sprintf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %.1f | %.2f | %.1f |", agg$design,
          agg$noise, agg$type, fmt(agg$W), fmt(agg$W_nonzero), fmt(agg$W_zero), fmt(agg$H),
          fmt(agg$W_sd), fmt(agg$cosine), agg$iterations, agg$capped, agg$seconds),
  "", sprintf("Total %.0f s.", proc.time()[[3]] - t0))
writeLines(lines)
writeLines(lines, out_file)
