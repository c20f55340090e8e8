# Fixtures for the shift-invariant NMF tests.

# Does `shape` equal the atom thresholded at half its maximum, up to a
# shift of the group (torus, or cyclic shift of the vectorised image)?
shape_found <- function(shape, atom, dims, group = "torus2d") {
  mask <- matrix(atom >= 0.5 * max(atom), dims[1], dims[2])
  if (sum(mask) != sum(shape > 0)) return(FALSE)
  idx <- which(shape > 0, arr.ind = TRUE)
  if (group == "circular1d") {
    q <- idx[, 1] + dims[1] * (idx[, 2] - 1) - 1
    n <- prod(dims)
    return(any(vapply(0:(n - 1), function(g) all(mask[(q + g) %% n + 1]),
                      logical(1))))
  }
  for (a in 0:(dims[1] - 1)) for (b in 0:(dims[2] - 1)) {
    hit <- mask[cbind((idx[, 1] - 1 + a) %% dims[1] + 1,
                      (idx[, 2] - 1 + b) %% dims[2] + 1)]
    if (all(hit)) return(TRUE)
  }
  FALSE
}

# Are all shapes of a simulation found among the atoms of a fit?
all_shapes_found <- function(sim, fit) {
  all(vapply(sim$shapes, function(s) {
    any(vapply(seq_len(fit$rank), function(t) {
      shape_found(s, fit$W[, t], sim$image_dim, fit$shift)
    }, logical(1)))
  }, logical(1)))
}

# Every image moved cyclically by (a, b): content goes a down and b right.
roll_images <- function(x, dims, a, b) {
  i <- (seq_len(dims[1]) - 1 - a) %% dims[1] + 1
  j <- (seq_len(dims[2]) - 1 - b) %% dims[2] + 1
  out <- apply(x, 2, function(v) as.vector(matrix(v, dims[1])[i, j]))
  attr(out, "image_dim") <- dims
  out
}

# Which simulated shape each atom of a fit is: the shape whose image, alone,
# the atom explains with the largest coefficient.
atom_shapes <- function(fit, sim) {
  probes <- vapply(sim$shapes, function(s) {
    img <- matrix(0, sim$image_dim[1], sim$image_dim[2])
    img[seq_len(nrow(s)), seq_len(ncol(s))] <- s
    as.vector(img) / sqrt(sum(img^2))
  }, numeric(prod(sim$image_dim)))
  h <- predict(fit, probes)
  apply(h, 1, which.max)
}

# Shape counts per image found by a two-stage fit (shapes x images).
found_counts <- function(fit, sim) {
  map <- atom_shapes(fit, sim)
  inst <- instances(fit)
  counts <- matrix(0L, length(sim$shapes), ncol(sim$x))
  for (i in seq_len(nrow(inst))) {
    s <- map[inst$atom[i]]
    counts[s, inst$image[i]] <- counts[s, inst$image[i]] + 1L
  }
  counts
}

experiment_2 <- function(seed) {
  withr::with_seed(seed, shifted_shapes(20, frame = c(30, 30),
    shapes = c("plane", "tank", "ship"), copies = c(0, 2), overlap = FALSE))
}
