# The planted problems of bench/rank-calibration.R (and of the ARD
# diagnosis bench/ard-correlated.R): W0 (m x k), H0 (k x n) Exp(1) with
# 40 % zeros (75 % for `sparse`), the diagonal 1 (every component used),
# W0 H0 scaled to mean 10. Frobenius: Gaussian noise of sd `noise` x 10,
# clipped at 0 (only where W0 H0 > 0 when sparse); KL: Poisson counts of
# mean W0 H0 / noise^2 (the same coefficient of variation at the mean
# entry). "correlated": W0's columns share a profile (W0 = 0.5 shared +
# 0.5 own, cosine about 0.8). `sparse`: the data a dgCMatrix. With
# `truth`, a list of x, W0 and H0 (W0 H0 on the scale of x's mean).
planted <- function(k, m, n, noise, loss, design, sparse, truth = FALSE) {
  zero <- if (sparse) 0.75 else 0.4
  W0 <- matrix(rexp(m * k), m) * (runif(m * k) > zero)
  if (design == "correlated") {
    W0 <- 0.5 * rexp(m) + 0.5 * W0
  }
  H0 <- matrix(rexp(k * n), k) * (runif(k * n) > zero)
  W0[cbind(seq_len(k), seq_len(k))] <- 1
  H0[cbind(seq_len(k), seq_len(k))] <- 1
  mu <- W0 %*% H0
  s <- 10 / mean(mu)
  mu <- mu * s
  x <- if (loss == "kl") {
    s2 <- 10 / noise^2
    matrix(rpois(m * n, mu * s2 / 10), m)
  } else {
    pmax(mu + noise * 10 * matrix(rnorm(m * n), m), 0) * (mu > 0 | !sparse)
  }
  if (sparse) x <- Matrix::Matrix(x, sparse = TRUE)
  if (!truth) return(x)
  list(x = x, W0 = W0 * s, H0 = H0)
}

# The size and search range of a planted rank.
dims <- function(k) {
  if (k >= 20) list(m = 300, n = 200, hi = 40) else
    if (k >= 8) list(m = 150, n = 120, hi = 2 * k) else
      list(m = 100, n = 80, hi = 10)
}
