#' Clustering accuracy and normalised mutual information
#'
#' `cluster_acc()` is the share of points whose predicted cluster, after the
#' best one-to-one relabelling of the clusters, equals the true class: the
#' relabelling maximises the matches on the contingency table (zero-padded
#' to a square when the numbers of labels differ) by the Hungarian
#' (Kuhn-Munkres) algorithm, as Cai's `bestMap`. `cluster_nmi()` is the
#' mutual information of the two partitions divided by the larger of their
#' entropies (`"max"`, Cai's `MutualInfo`), their geometric mean (`"sqrt"`)
#' or their mean (`"mean"`); it is 0 when both entropies are 0.
#'
#' @param y True classes: a vector (factor, character or integer) without
#'   missing values.
#' @param yhat Predicted clusters, a vector of the same length, for example
#'   [clusters()] of a fit.
#' @param normalize How mutual information is normalised.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return A number in `[0, 1]`.
#' @examples
#' y <- rep(1:3, each = 4)
#' yhat <- c(rep(2, 4), rep(3, 4), rep(1, 3), 2)
#' cluster_acc(y, yhat)  # 11 of 12 after relabelling
#' cluster_nmi(y, yhat)
#' @export
cluster_acc <- function(y, yhat, ...) {
  check_dots_empty()
  check_required(c("y", "yhat"))
  tab <- label_table(y, yhat)
  size <- max(dim(tab))
  square <- matrix(0, size, size)
  square[seq_len(nrow(tab)), seq_len(ncol(tab))] <- tab
  perm <- r_max_assignment(square)
  sum(square[cbind(seq_len(size), perm)]) / sum(tab)
}

#' @rdname cluster_acc
#' @export
cluster_nmi <- function(y, yhat, normalize = c("max", "sqrt", "mean"), ...) {
  check_dots_empty()
  check_required(c("y", "yhat"))
  normalize <- check_choice(normalize, c("max", "sqrt", "mean"))
  tab <- label_table(y, yhat)
  p <- tab / sum(tab)
  py <- rowSums(p)
  pc <- colSums(p)
  nz <- p > 0
  mi <- sum(p[nz] * log2(p[nz] / outer(py, pc)[nz]))
  entropy <- function(q) -sum(q[q > 0] * log2(q[q > 0]))
  hy <- entropy(py)
  hc <- entropy(pc)
  den <- switch(normalize, max = max(hy, hc), sqrt = sqrt(hy * hc),
                mean = (hy + hc) / 2)
  if (den <= 0) return(0)
  min(1, max(0, mi / den))
}

# Contingency table of two labelings, checked.
label_table <- function(y, yhat, call = rlang::caller_env()) {
  for (arg in c("y", "yhat")) {
    v <- if (arg == "y") y else yhat
    if (!is.atomic(v) || !is.null(dim(v)) || length(v) == 0L) {
      abort_nmfkit(c("{.arg {arg}} must be a vector of labels.",
                     "x" = "It is {.obj_type_friendly {v}}."),
                   "labels", call = call)
    }
    if (anyNA(v)) {
      abort_nmfkit(c("{.arg {arg}} must not contain missing labels.",
                     "x" = "It has {sum(is.na(v))} NA{?s}."),
                   "labels", call = call)
    }
  }
  if (length(y) != length(yhat)) {
    abort_nmfkit(c("{.arg y} and {.arg yhat} must have the same length.",
                   "x" = "{.arg y} has {length(y)} labels, {.arg yhat} has {length(yhat)}."),
                 "labels", call = call)
  }
  unclass(table(as.character(y), as.character(yhat)))
}

#' Two interleaved half circles
#'
#' The two-moons data of the manifold-regularisation papers, with points in
#' columns: `t ~ U(0, pi)` for moon 1 (`n %/% 2` points), then for moon 2;
#' moon 1 is `(cos t, sin t)`, moon 2 `(1 - cos t, 1/2 - sin t)`; then
#' `N(0, noise^2)` noise is added point by point to `(x, y)`. With `dim > 2`
#' the points get `dim - 2` further coordinates of pure `N(0, noise^2)`
#' noise (the 10-D moons of the SMRMF paper). All draws come from R's RNG.
#'
#' @param n Number of points, at least 2.
#' @param dim Number of coordinates, at least 2.
#' @param noise Standard deviation of the noise, at least 0.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return A `dim x n` matrix (points in columns) with an attribute
#'   `"labels"`: the moon of each point (1 or 2).
#' @examples
#' set.seed(1)
#' x <- two_moons(200)
#' plot(t(x), col = attr(x, "labels"), asp = 1)
#' @export
two_moons <- function(n = 500, dim = 2, noise = 0.1, ...) {
  check_dots_empty()
  n <- check_count(n, min = 2)
  dim <- check_count(dim, min = 2)
  noise <- check_number(noise, min = 0)
  n1 <- n %/% 2L
  t1 <- stats::runif(n1, 0, pi)
  t2 <- stats::runif(n - n1, 0, pi)
  x <- rbind(c(cos(t1), 1 - cos(t2)), c(sin(t1), 0.5 - sin(t2)))
  x <- x + matrix(stats::rnorm(2 * n, sd = noise), 2, n)
  if (dim > 2L) {
    x <- rbind(x, matrix(stats::rnorm((dim - 2L) * n, sd = noise), dim - 2L, n))
  }
  rownames(x) <- c("x", "y", if (dim > 2L) paste0("z", seq_len(dim - 2L)))
  attr(x, "labels") <- rep(1:2, c(n1, n - n1))
  x
}
