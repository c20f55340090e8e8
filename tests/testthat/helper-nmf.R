# Fixtures for the standard NMF tests.

# A planted exact factorisation X = W0 H0 with an anchor row and column per
# component, so that the factors are identifiable up to permutation and scale.
planted_nmf <- function(m = 60, n = 50, k = 5, seed = 1) {
  withr::with_seed(seed, {
    W0 <- matrix(runif(m * k), m, k) * (runif(m * k) > 0.5)
    H0 <- matrix(runif(k * n), k, n) * (runif(k * n) > 0.5)
  })
  W0[cbind(seq_len(k), seq_len(k))] <- 2
  H0[cbind(seq_len(k), seq_len(k))] <- 2
  list(W0 = W0, H0 = H0, x = W0 %*% H0)
}

# Largest cosine similarity of each column of `a` with some column of `b`.
best_cosine <- function(a, b) {
  na <- sweep(a, 2, sqrt(colSums(a^2)), "/")
  nb <- sweep(b, 2, sqrt(colSums(b^2)), "/")
  apply(crossprod(na, nb), 1, max)
}

small_data <- function(seed = 2, m = 30, n = 20) {
  withr::with_seed(seed, matrix(runif(m * n), m, n,
    dimnames = list(paste0("f", seq_len(m)), paste0("s", seq_len(n)))))
}
