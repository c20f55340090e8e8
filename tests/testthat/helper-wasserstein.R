# Fixtures for the Wasserstein NMF tests.

# The 1-D Gaussian mixtures of the OptimalTransport.jl example: 100 bins on
# [-12, 12], each column a mixture of bumps near -6, 0 and 6 with uniform
# weights (unnormalised).
wasserstein_gm_data <- function(n = 100L, bins = 100L) {
  t <- seq(-12, 12, length.out = bins)
  f <- function(mu) exp(-(t - mu)^2)
  x <- vapply(seq_len(n), function(i) {
    stats::runif(1) * f(stats::rnorm(1) + 6) +
      stats::runif(1) * f(stats::rnorm(1)) +
      stats::runif(1) * f(stats::rnorm(1) - 6)
  }, numeric(bins))
  list(x = x, t = t)
}

# Mean and standard deviation of each atom (column of w) over coordinates t.
atom_moments <- function(w, t) {
  mu <- colSums(w * t)
  sdv <- sqrt(colSums(w * outer(t, mu, "-")^2))
  o <- order(mu)
  list(mean = unname(mu[o]), sd = unname(sdv[o]))
}

# A small fast fit for methods and snapshots.
wasserstein_small_fit <- function(control = nmf_control(max_iter = 3,
                                                         inner = 60)) {
  withr::with_seed(3, {
    d <- wasserstein_gm_data(n = 70L, bins = 30L)
    suppressMessages(nmf_wasserstein(d$x, 3, coords = d$t,
                                     control = control))
  })
}

# Normalised random histograms (m x n) with strictly positive entries.
random_histograms <- function(m, n) {
  x <- matrix(stats::runif(m * n) + 0.05, m, n)
  sweep(x, 2, colSums(x), "/")
}
