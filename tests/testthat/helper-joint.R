# Fixtures for the joint-NMF tests.

# Uniform noise of the Swimmer's size, from the current RNG state.
swimmer_noise <- function(x = swimmer(), eps = 1) {
  matrix(stats::runif(length(x)), nrow(x)) * eps
}

# p-bar by brute-force integration: (1/s) * the integral over [0, s] of
# frac(S1 > T) - frac(S2 > T), summed over the intervals between the sorted
# pooled values of each row (independent of the package's closed form).
pbar_breakpoints <- function(h, n1) {
  apply(h, 1, function(v) {
    s <- max(v)
    if (s <= 0) return(0)
    pts <- sort(unique(c(0, v)))
    mids <- (pts[-1] + pts[-length(pts)]) / 2
    g <- vapply(mids, function(t) mean(v[seq_len(n1)] > t) -
                  mean(v[-seq_len(n1)] > t), numeric(1))
    sum(diff(pts) * g) / s
  })
}

# The reference code's Chamfer distance by its definition (O(m n1 n2)).
chamfer_rows_direct <- function(x, y) {
  tot <- 0
  for (p in seq_len(nrow(x))) {
    d <- outer(x[p, ], y[p, ], "-")^2
    tot <- tot + sum(apply(d, 1, min)) + sum(apply(d, 2, min))
  }
  tot / nrow(x)
}

# The paper's eq. (1) by its definition.
chamfer_columns_direct <- function(x, y) {
  d <- as.matrix(stats::dist(t(cbind(x, y))))^2
  d <- d[seq_len(ncol(x)), ncol(x) + seq_len(ncol(y)), drop = FALSE]
  mean(apply(d, 1, min)) + mean(apply(d, 2, min))
}
