# Fixtures for test-nmf-manifold.R: base-R references of the graph rules.

# k-NN affinity by brute force (constructW semantics): k nearest other
# points, ties to the lower index, then max(W, W').
knn_reference <- function(x, k, weight = "binary") {
  n <- ncol(x)
  d2 <- as.matrix(stats::dist(t(x)))^2
  t_heat <- mean(sqrt(d2))
  nb <- lapply(seq_len(n), function(j) {
    o <- order(d2[, j], seq_len(n))
    o[o != j][seq_len(k)]
  })
  sigma <- vapply(seq_len(n), function(j) sqrt(d2[nb[[j]][k], j]), numeric(1))
  w <- matrix(0, n, n)
  for (j in seq_len(n)) {
    i <- nb[[j]]
    w[j, i] <- switch(weight,
      binary = 1,
      heat = exp(-d2[i, j] / (2 * t_heat^2)),
      selftune = exp(-d2[i, j] / (sigma[j] * sigma[i]))
    )
  }
  pmax(w, t(w))
}

# Objective of GNMF for W (p x c), H (c x n), affinity s.
gnmf_objective <- function(x, W, H, s, lambda) {
  lap <- diag(rowSums(s)) - s
  sum((x - W %*% H)^2) + lambda * sum(diag(H %*% lap %*% t(H)))
}

# Three Gaussian blobs (4 features, 60 points each, sd 0.3) at the corners
# of an equilateral triangle of side 3 centred at the origin: signed data,
# clusters k-means separates perfectly.
three_blobs <- function() {
  a <- c(90, 210, 330) * pi / 180
  centres <- rbind(sqrt(3) * cos(a), sqrt(3) * sin(a), 0, 0)
  y <- rep(1:3, each = 60)
  x <- centres[, y] + matrix(stats::rnorm(4 * 180, sd = 0.3), 4)
  attr(x, "labels") <- y
  x
}

# Gaussian blobs, points in columns, that k-means separates: cluster r
# (sizes[r] points) around scale * e_r + offset (every coordinate shifted
# by `offset`) in p features, noise sd `sd`; with aniso > 1 the noise has
# sd `aniso * sd` along one random unit direction and `sd / aniso`
# across it. Labels in attr "labels".
blobs <- function(sizes = c(60, 60, 60), p = 4, offset = 0, sd = 0.3,
                  scale = 3, aniso = 1) {
  k <- length(sizes)
  y <- rep(seq_len(k), sizes)
  n <- length(y)
  noise <- matrix(stats::rnorm(p * n, sd = sd), p)
  if (aniso != 1) {
    u <- stats::rnorm(p)
    u <- u / sqrt(sum(u^2))
    along <- u %*% crossprod(u, noise)
    noise <- aniso * along + (noise - along) / aniso
  }
  x <- scale * diag(p)[, y, drop = FALSE] + offset + noise
  attr(x, "labels") <- y
  x
}

# The generator families of the clustering checks (bench/manifold-blobs.R
# and test-nmf-manifold.R): name = arguments of blobs(), or "triangle" for
# three_blobs() (signed, centred at the origin).
blob_families <- list(
  axes = list(),
  shift1 = list(offset = 1),
  shift2 = list(offset = 2),
  shift5 = list(offset = 5),
  aniso = list(offset = 1, aniso = 2),
  unequal = list(sizes = c(20, 60, 100), offset = 1),
  wide = list(p = 20, offset = 1),
  two = list(sizes = c(90, 90), offset = 1),
  five = list(sizes = rep(40, 5), p = 6, offset = 1),
  triangle = NULL
)

draw_blobs <- function(family) {
  args <- blob_families[[family]]
  if (is.null(args)) three_blobs() else do.call(blobs, args)
}
