# Data for nmf_tune(): W uniform, H with a share `zero` of zero entries
# (every column keeps one positive coefficient), plus Gaussian noise of
# sd `noise` times the mean, clipped at 0.
tune_data <- function(m = 60, n = 50, k = 3, zero = 0.8, noise = 0.5,
                      seed = 1) {
  withr::with_seed(seed, {
    w <- matrix(runif(m * k), m)
    h <- matrix(rexp(k * n), k) * (runif(k * n) > zero)
    h[cbind(sample(k, n, TRUE), seq_len(n))] <- 1 + rexp(n)
    x <- w %*% h
    pmax(x + matrix(rnorm(m * n), m) * noise * mean(x), 0)
  })
}
