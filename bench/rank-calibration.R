# Calibration of the chosen rank (issue 38): the share of planted problems
# whose rank is recovered by nmf(rank = "auto") (the adaptive held-out
# search), by ARD-NMF (nmf(rank = K_max, ard = "l1")) and by the full-grid
# nmf_rank() one-standard-error rule, with the time each takes.
#
# Planted W0 (m x k), H0 (k x n): entries Exp(1), 40 % zero at random, the
# diagonal set to 1 (every component used), W0 H0 scaled to mean 10.
# Frobenius: x = W0 H0 + Gaussian noise of sd `noise` x mean, clipped at 0.
# KL: x ~ Poisson(W0 H0 * scale) with scale 10 / `noise`^2 (the same
# coefficient of variation at the mean entry). "correlated": the columns of
# W0 share a common profile (W0 = 0.5 * shared + 0.5 * own), cosine about
# 0.8 between components. "sparse": 75 % of the entries of W0 and H0 zero
# (W0 H0 is then zero at about 60 % of the entries, still of rank k), the
# noise only where W0 H0 > 0, the data a dgCMatrix.
#
# Run: Rscript bench/rank-calibration.R [reps] [big]
#   (default 4 replicates per cell; "big" the full grid, k = 20 at 300 x 200)
suppressPackageStartupMessages({
  library(nmfkit)
  library(Matrix)
})
args <- commandArgs(TRUE)
reps <- if (length(args)) as.integer(args[1]) else 4L
big <- length(args) > 1 && args[2] == "big"

planted <- function(k, m, n, noise, loss, design, sparse) {
  zero <- if (sparse) 0.75 else 0.4
  W0 <- matrix(rexp(m * k), m) * (runif(m * k) > zero)
  if (design == "correlated") {
    W0 <- 0.5 * rexp(m) + 0.5 * W0
  }
  H0 <- matrix(rexp(k * n), k) * (runif(k * n) > zero)
  W0[cbind(seq_len(k), seq_len(k))] <- 1
  H0[cbind(seq_len(k), seq_len(k))] <- 1
  mu <- W0 %*% H0
  mu <- mu * 10 / mean(mu)
  x <- if (loss == "kl") {
    s <- 10 / noise^2
    matrix(rpois(m * n, mu * s / 10), m)
  } else {
    pmax(mu + noise * 10 * matrix(rnorm(m * n), m), 0) * (mu > 0 | !sparse)
  }
  if (sparse) Matrix(x, sparse = TRUE) else x
}

one <- function(k, m, n, noise, loss, design, sparse, seed, hi) {
  set.seed(seed)
  x <- planted(k, m, n, noise, loss, design, sparse)
  ctl <- nmf_control(max_iter = 100)
  q <- function(e) suppressWarnings(e)
  t_auto <- system.time(fa <- q(nmf(x, rank = c(1, hi), loss = loss,
                                    control = ctl)))[["elapsed"]]
  t_ard <- system.time(fd <- q(nmf(x, rank = min(2 * k, hi), loss = loss,
                                   ard = "l1", control = ctl)))[["elapsed"]]
  set.seed(seed)
  t_grid <- system.time(g <- q(nmf_rank(x, 1:hi, loss = loss,
                                        control = ctl)))[["elapsed"]]
  data.frame(k = k, m = m, n = n, noise = noise, loss = loss,
             design = design, sparse = sparse, seed = seed,
             auto = fa$rank, ard = fd$rank, grid = g$best[["one_se"]],
             auto_tried = nrow(fa$rank_search$summary),
             t_auto = t_auto, t_ard = t_ard, t_grid = t_grid)
}

# the modest grid (the machine was shared): rank 3, two noise levels,
# both losses and storages, and the correlated design at the lower noise;
# "big" adds rank 8 and 20, the middle noise level, and correlated cells
cells <- rbind(
  expand.grid(k = 3, noise = c(0.1, 0.5), loss = c("frobenius", "kl"),
              design = "independent", sparse = c(FALSE, TRUE),
              stringsAsFactors = FALSE),
  expand.grid(k = 3, noise = 0.1, loss = c("frobenius", "kl"),
              design = "correlated", sparse = FALSE,
              stringsAsFactors = FALSE))
if (big) {
  full <- expand.grid(k = c(3, 8, 20), noise = c(0.1, 0.3, 0.5),
                      loss = c("frobenius", "kl"),
                      design = c("independent", "correlated"),
                      sparse = c(FALSE, TRUE), stringsAsFactors = FALSE)
  cells <- unique(rbind(cells, full))
}
out <- do.call(rbind, lapply(seq_len(nrow(cells)), function(i) {
  cl <- cells[i, ]
  m <- if (cl$k == 20) 300 else 100
  n <- if (cl$k == 20) 200 else 80
  hi <- if (cl$k == 20) 40 else if (cl$k == 8) 16 else 10
  do.call(rbind, lapply(seq_len(reps), function(s) {
    r <- one(cl$k, m, n, cl$noise, cl$loss, cl$design, cl$sparse, s, hi)
    message(paste(format(r), collapse = " "))
    r
  }))
}))
saveRDS(out, "bench/rank-calibration.rds")
agg <- aggregate(cbind(auto = auto == k, ard = ard == k, grid = grid == k,
                       tried = auto_tried, t_auto = t_auto, t_ard = t_ard,
                       t_grid = t_grid) ~ k + loss + sparse + design + noise,
                 data = out, FUN = mean)
agg <- agg[order(agg$k, agg$loss, agg$sparse, agg$design, agg$noise), ]
fmt <- function(v, d = 2) formatC(v, format = "f", digits = d)
cat("| k | loss | storage | design | noise | auto | ARD | grid | ranks tried | time auto / ARD / grid (s) |\n")
cat("|---|---|---|---|---|---|---|---|---|---|\n")
for (i in seq_len(nrow(agg))) {
  a <- agg[i, ]
  cat(sprintf("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s / %s |\n",
              a$k, a$loss, if (a$sparse) "sparse" else "dense", a$design,
              a$noise, fmt(a$auto), fmt(a$ard), fmt(a$grid), fmt(a$tried, 1),
              fmt(a$t_auto), fmt(a$t_ard), fmt(a$t_grid)))
}
