# Fixtures for test-differential.R: small planted problems with Poisson
# noise, three components on disjoint blocks of 20 features.

diff_basis <- function(m = 60, k = 3) {
  W <- matrix(0, m, k)
  block <- m %/% k
  for (i in seq_len(k)) {
    W[(i - 1) * block + seq_len(block), i] <- stats::runif(block, 0.5, 1.5)
  }
  W
}

# Coefficients on [0, 2] with 40% zeros: columns using only some of the
# components make the factorisation unique (dense coefficients let a
# component take some of another's features, and of its difference).
sparse_coef <- function(k, n) {
  matrix(stats::runif(k * n, 0, 2) * (stats::runif(k * n) > 0.4), k, n)
}

# Two sets of n columns; set 2 uses component 1 `effect` times more.
diff_joint_planted <- function(m = 60, n = 40, k = 3, effect = 3,
                               scale = 5) {
  W <- diff_basis(m, k)
  h1 <- sparse_coef(k, n)
  h2 <- sparse_coef(k, n)
  h2[1, ] <- h2[1, ] * effect
  x1 <- matrix(stats::rpois(m * n, scale * W %*% h1), m)
  x2 <- matrix(stats::rpois(m * n, scale * W %*% h2), m)
  rownames(x1) <- rownames(x2) <- paste0("g", seq_len(m))
  list(x1 = x1, x2 = x2, planted = seq_len(m %/% k))
}

# `strata` strata of n columns, a background of 1 and, in stratum
# `planted_stratum`, an extra shift `effect` on the features `planted`
# (by default five in each block).
diff_stratified_planted <- function(m = 60, n = 30, k = 3, strata = 3,
                                    effect = 3,
                                    planted = c(1:5, 21:25, 41:45),
                                    planted_stratum = 2) {
  W <- diff_basis(m, k)
  x <- lapply(seq_len(strata), function(s) {
    mu <- 5 * W %*% matrix(stats::runif(k * n, 0, 2), k, n) + 1 +
      effect * (s == planted_stratum) * (seq_len(m) %in% planted)
    matrix(stats::rpois(m * n, mu), m)
  })
  names(x) <- letters[seq_len(strata)]
  list(x = x, planted = planted,
       stratum = letters[planted_stratum])
}

# Two sets of n columns from one basis, except that in set 2 the first
# `frac` of component 1's features weigh `effect` times as much (a feature-
# level difference); set 2 may also use component 1 `usage` times as much.
diff_joint_features <- function(m = 90, n = 60, k = 3, frac = 0.1,
                                effect = 3, usage = 1, scale = 5) {
  W <- diff_basis(m, k)
  block <- seq_len(m %/% k)
  planted <- block[seq_len(round(frac * length(block)))]
  W2 <- W
  W2[planted, 1] <- W2[planted, 1] * effect
  h1 <- sparse_coef(k, n)
  h2 <- sparse_coef(k, n)
  h2[1, ] <- h2[1, ] * usage
  x1 <- matrix(stats::rpois(m * n, scale * W %*% h1), m)
  x2 <- matrix(stats::rpois(m * n, scale * W2 %*% h2), m)
  rownames(x1) <- rownames(x2) <- paste0("g", seq_len(m))
  list(x1 = x1, x2 = x2, planted = planted, block = block)
}
