# Ground costs and the methods of Wasserstein NMF fits.

# The ground cost of OT on m bins: list(type, spec (for the C++ kernel),
# coords, image_dim, source). See nmf_wasserstein() for the rules.
ground_cost <- function(m, cost, coords, image_dim, kernel,
                        call = rlang::caller_env()) {
  if (!is.null(coords) && !is.null(image_dim)) {
    abort_nmfkit(c("Give {.arg coords} or {.arg image_dim}, not both.",
                   "i" = "{.arg image_dim} places the bins on the pixel centres of an image."),
                 "geometry", call = call)
  }
  if (!is.null(image_dim)) image_dim <- check_image_dim(image_dim, m, call = call)
  if (!is.null(coords)) coords <- check_coords(coords, m, call)
  if (!is.null(cost)) {
    if (kernel == "separable") {
      abort_nmfkit(c("{.code kernel = \"separable\"} needs {.arg image_dim} or 1-D {.arg coords}, not a {.arg cost} matrix.",
                     "i" = "Use {.code kernel = \"dense\"} with a cost matrix."),
                   "kernel", call = call)
    }
    cost <- check_cost(cost, m, call)
    return(list(type = "dense", spec = list(type = "dense", cost = cost),
                coords = coords, image_dim = image_dim, source = "cost"))
  }
  if (is.null(coords) && is.null(image_dim)) coords <- seq_len(m)
  one_d <- !is.null(coords) && !is.matrix(coords)
  if (kernel == "separable" && !(one_d || !is.null(image_dim))) {
    abort_nmfkit(c("{.code kernel = \"separable\"} needs {.arg image_dim} or 1-D {.arg coords}.",
                   "x" = "{.arg coords} is a matrix of points."),
                 "kernel", call = call)
  }
  if (!is.null(image_dim)) {
    c1 <- outer(seq_len(image_dim[1]), seq_len(image_dim[1]), "-")^2
    c2 <- outer(seq_len(image_dim[2]), seq_len(image_dim[2]), "-")^2
    mu <- mean(c1) + mean(c2)
    if (mu == 0) mu <- 1
    spec <- list(type = "separable", c1 = c1 / mu, c2 = c2 / mu)
    if (kernel == "dense") spec <- list(type = "dense", cost = separable_full(spec))
    return(list(type = spec$type, spec = spec, coords = NULL,
                image_dim = image_dim, source = "image_dim"))
  }
  full <- if (one_d) outer(coords, coords, "-")^2
          else as.matrix(stats::dist(coords))^2
  dimnames(full) <- NULL
  mu <- mean(full)
  if (mu == 0) mu <- 1
  list(type = "dense", spec = list(type = "dense", cost = full / mu),
       coords = coords, image_dim = NULL, source = "coords")
}

# C((i, j), (k, l)) = c1[i, k] + c2[j, l] with bins in column-major order.
separable_full <- function(spec) {
  r <- nrow(spec$c1)
  s <- nrow(spec$c2)
  kronecker(matrix(1, s, s), spec$c1) + kronecker(spec$c2, matrix(1, r, r))
}

ground_dense <- function(ground) {
  if (ground$spec$type == "separable") separable_full(ground$spec)
  else ground$spec$cost
}

check_cost <- function(cost, m, call) {
  if (!is.matrix(cost) || !is.numeric(cost)) {
    abort_nmfkit(c("{.arg cost} must be a numeric matrix.",
                   "x" = "It is {.obj_type_friendly {cost}}."), "cost",
                 call = call)
  }
  if (nrow(cost) != m || ncol(cost) != m) {
    abort_nmfkit(c("{.arg cost} must be {m} x {m}, one row and column per bin.",
                   "x" = "It is {nrow(cost)} x {ncol(cost)}."), "cost",
                 call = call)
  }
  if (any(!is.finite(cost))) {
    abort_nmfkit(c("{.arg cost} must be finite.",
                   "x" = "It has {sum(!is.finite(cost))} missing or infinite entr{?y/ies}."),
                 "cost", call = call)
  }
  if (any(cost < 0)) {
    abort_nmfkit(c("{.arg cost} must be nonnegative.",
                   "x" = "It has {sum(cost < 0)} negative entr{?y/ies}; the smallest is {signif(min(cost), 4)}."),
                 "cost", call = call)
  }
  problems <- c(
    if (!isSymmetric(unname(cost))) "it is not symmetric",
    if (any(diag(cost) != 0)) "its diagonal is not zero"
  )
  if (length(problems)) {
    warn_nmfkit(c("{.arg cost} is not a distance-like cost: {paste(problems, collapse = ' and ')}.",
                  "i" = "OT still works, but the cost of moving no mass is then not zero."),
                "cost", call = call)
  }
  storage.mode(cost) <- "double"
  dimnames(cost) <- NULL
  cost
}

check_coords <- function(coords, m, call) {
  ok_type <- is.numeric(coords) && (is.null(dim(coords)) || is.matrix(coords))
  n_pts <- if (is.matrix(coords)) nrow(coords) else length(coords)
  if (!ok_type || n_pts != m || any(!is.finite(coords))) {
    found <- if (!ok_type) cli::format_inline("{.obj_type_friendly {coords}}")
             else if (n_pts != m) sprintf("%d point%s", n_pts,
                                          if (n_pts == 1) "" else "s")
             else "not finite everywhere"
    abort_nmfkit(c("{.arg coords} must give one finite position per bin ({m}): a numeric vector or a matrix with {m} rows.",
                   "x" = "It is {found}."),
                 "coords", call = call)
  }
  if (is.matrix(coords)) storage.mode(coords) <- "double" else
    coords <- as.double(coords)
  coords
}

describe_ground <- function(ground) {
  if (ground$type == "separable") {
    return(sprintf("separable squared Euclidean on a %d x %d grid",
                   ground$image_dim[1], ground$image_dim[2]))
  }
  m <- nrow(ground$spec$cost)
  src <- switch(ground$source,
    cost = "user cost",
    coords = if (is.matrix(ground$coords)) "squared Euclidean between points"
             else "squared Euclidean on a line",
    image_dim = sprintf("squared Euclidean on a %d x %d grid",
                        ground$image_dim[1], ground$image_dim[2])
  )
  sprintf("dense %d x %d, %s", m, m, src)
}

#' @export
print_extra.nmfkit_wasserstein <- function(x, digits = 4L, ...) {
  cat(sprintf("Ground cost: %s\n", describe_ground(x$ground)))
  cat(sprintf("epsilon %s; rho: weights %s, dictionary %s\n",
              format(x$epsilon, digits = digits),
              format(x$rho[["weights"]], digits = digits),
              format(x$rho[["dictionary"]], digits = digits)))
  last <- x$steps[x$steps$outer == max(c(0, x$steps$outer)), , drop = FALSE]
  if (nrow(last)) {
    parts <- sprintf("%s %d (max |grad| %s)", last$step, last$iterations,
                     format(last$grad_max, digits = 2))
    cat("Last L-BFGS steps: ", paste(parts, collapse = ", "), "\n", sep = "")
  }
  invisible(NULL)
}

#' @rdname nmf_wasserstein
#' @param object A fitted `nmfkit_wasserstein` model.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @export
summary.nmfkit_wasserstein <- function(object, ...) {
  check_dots_empty()
  s <- summary.nmfkit(object)
  s$epsilon <- object$epsilon
  s$rho <- object$rho
  s$ground <- describe_ground(object$ground)
  s$steps <- object$steps
  class(s) <- c("summary.nmfkit_wasserstein", class(s))
  s
}

#' @export
print.summary.nmfkit_wasserstein <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  NextMethod()
  cat(sprintf("Ground cost: %s\nepsilon %s; rho: weights %s, dictionary %s\n",
              x$ground, format(x$epsilon, digits = digits),
              format(x$rho[["weights"]], digits = digits),
              format(x$rho[["dictionary"]], digits = digits)))
  if (nrow(x$steps)) {
    agg <- tapply(x$steps$iterations, x$steps$step, sum)
    cat(sprintf("L-BFGS iterations in total: %s\n",
                paste(names(agg), agg, collapse = ", ")))
  }
  invisible(x)
}

#' Weights of new histograms on fixed Wasserstein atoms
#'
#' Solves the weights step of [nmf_wasserstein()] for the columns of
#' `newdata` with the atoms `W` held fixed:
#' \eqn{\min_{h \in \Delta} OT_\epsilon(x, W h) + \rho_1 E(h)}, in its dual by
#' L-BFGS from zero, with the fit's ground cost, `epsilon`, `rho` and
#' control settings.
#'
#' @param object A fitted `nmfkit_wasserstein` model.
#' @param newdata Histograms with the fit's bins as rows (normalised).
#' @param type `"coef"` or `"class"`, as in [predict.nmfkit()].
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @param assay For `newdata` in a container: its assay (or Seurat layer),
#'   as in [predict.nmfkit()].
#' @return A components x samples matrix whose columns lie on the simplex.
#' @examples
#' set.seed(1)
#' t <- seq(-5, 5, length.out = 40)
#' x <- sapply(1:20, function(i) dnorm(t, sample(c(-2, 2), 1)) + 0.01)
#' fit <- nmf_wasserstein(x, rank = 2, coords = t,
#'                        control = nmf_control(max_iter = 3))
#' round(predict(fit, x[, 1:3]), 3)
#' @export
predict.nmfkit_wasserstein <- function(object, newdata,
                                       type = c("coef", "class"), ...,
                                       assay = "counts") {
  check_dots_empty()
  predict_with(object, newdata, type, read = function(newdata) {
    newdata <- check_newdata(newdata, nrow(object$W))
    check_histograms(newdata, verbose = isTRUE(object$control$verbose))
  }, solve = function(newdata) {
    r_wasserstein_weights(newdata, object$W, object$ground$spec,
                          object$epsilon, object$rho[["weights"]],
                          wasserstein_engine(object$control))$H
  }, assay = assay)
}

#' Plot a Wasserstein NMF fit
#'
#' `type = "basis"` draws the atoms: as curves over `coords` for 1-D bins, as
#' images on an image grid, as a heatmap otherwise. `"coef"` and `"loss"` are
#' as in [plot.nmfkit()].
#'
#' @param x A fitted `nmfkit_wasserstein` model.
#' @param type `"basis"`, `"coef"` or `"loss"`.
#' @param components Which atoms to draw; all by default.
#' @param image_dim Image size `c(rows, columns)`: draw the atoms as images
#'   (the fit's grid by default, when it has one).
#' @param ... Graphical parameters (see [graphics::par()]), named; one the
#'   plot sets itself (`main`, `col`, `xlab`, ...) is replaced by the user's.
#'   Any other name is an error naming the nearest argument.
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' t <- seq(-5, 5, length.out = 40)
#' x <- sapply(1:20, function(i) dnorm(t, sample(c(-2, 2), 1)) + 0.01)
#' fit <- nmf_wasserstein(x, rank = 2, coords = t,
#'                        control = nmf_control(max_iter = 3))
#' plot(fit)
#' plot(fit, type = "loss")
#' @export
plot.nmfkit_wasserstein <- function(x, type = c("basis", "coef", "loss"),
                                    image_dim = x$image_dim,
                                    components = NULL, ...) {
  check_graphics_dots()
  type <- check_choice(type)
  one_d <- !is.null(x$coords) && !is.matrix(x$coords) && is.null(image_dim)
  if (type != "basis" || !one_d) {
    return(plot.nmfkit(x, type = type, image_dim = image_dim,
                       components = components, ...))
  }
  comp <- select_components(x, components)
  ord <- order(x$coords)
  cols <- grDevices::hcl.colors(max(3L, length(comp)), "Dark 3")
  draw(graphics::matplot, x$coords[ord], x$W[ord, comp, drop = FALSE],
       type = "l", lty = 1, lwd = 2, col = cols, xlab = "coordinate",
       ylab = "mass", main = "Atoms W", user = list(...))
  graphics::legend("topright", legend = colnames(x$W)[comp], col = cols,
                   lty = 1, lwd = 2, bty = "n", cex = 0.8)
  invisible(x)
}

#' @rdname nmf_distance
#' @param space For a Wasserstein fit: `"reconstruction"` (entropic OT
#'   between the samples' reconstructions `W h_i`, debiased into the Sinkhorn
#'   divergence \eqn{OT(a,b) - (OT(a,a) + OT(b,b))/2} so that the distance of
#'   a sample to itself is zero) or `"coef"` (distances between the columns of
#'   `H`, with `metric` and `normalize`).
#' @param method,control For OT: the method and its settings, as in
#'   [ot_distance()] (here `tol = 1e-6` by default). There are `n (n + 1) / 2`
#'   OT problems, solved together.
#' @export
nmf_distance.nmfkit_wasserstein <- function(x, space = c("reconstruction",
                                                         "coef"),
                                            method = c("sinkhorn", "lbfgs"),
                                            control = nmf_control(
                                              max_iter = 10000, tol = 1e-6),
                                            ...) {
  space <- check_choice(space)
  if (space == "coef") return(nmf_distance.nmfkit(x, ...))
  check_dots_empty()
  method <- check_choice(method)
  control <- check_control(control,
                           default = nmf_control(max_iter = 10000, tol = 1e-6),
                           fn = "ot_distance")
  y <- x$W %*% x$H
  y <- sweep(pmax(y, 0), 2, colSums(y), "/")
  n <- ncol(y)
  pairs <- which(lower.tri(matrix(0, n, n)), arr.ind = TRUE)
  cost <- ot_pairs(y[, pairs[, 1], drop = FALSE], y[, pairs[, 2], drop = FALSE],
                   x$ground, x$epsilon, control, method)$cost
  self <- ot_self(y, x$ground, x$epsilon, control)$cost
  d <- cost - (self[pairs[, 1]] + self[pairs[, 2]]) / 2
  labels <- colnames(x$H)
  if (is.null(labels)) labels <- as.character(seq_len(n))
  new_nmfkit_dist(structure(pmax(d, 0), Size = n, Labels = labels,
                            Diag = FALSE, Upper = FALSE),
                  "sinkhorn divergence", match.call())
}

# Histograms are fitted normalised (model_data()).
model_scale.nmfkit_wasserstein <- function(object, x) unit_mass(x)
