# The planted problems of bench/differential-calibration.R and
# bench/differential-fdr.R: 150 features in three blocks of 50, rank 3;
# a basis with each block on its component, coefficients on [0, 2] with
# 40 % zeros (a unique factorisation).
m <- 150
k <- 3
blocks <- rep(seq_len(k), each = m / k)
basis <- function() {
  W <- matrix(0, m, k)
  for (i in seq_len(k)) W[blocks == i, i] <- runif(sum(blocks == i), 0.5, 1.5)
  W
}
coef <- function(n) matrix(runif(k * n, 0, 2) * (runif(k * n) > 0.4), k, n)
