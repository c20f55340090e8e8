# Methods of manifold-regularised fits (class nmfkit_manifold).

method_label <- function(x) {
  switch(x$method, gnmf = "GNMF", rmnmf = "RMNMF", smrmf = "SMRMF",
         fsmrmf = "f-SMRMF", x$method)
}

graph_label <- function(x) {
  edges <- Matrix::nnzero(x$graph) / 2
  if (x$method %in% c("smrmf", "fsmrmf")) {
    return(sprintf("selective graph of %d exemplars (k = %d), %s edges",
                   length(x$exemplars), x$k, format(edges)))
  }
  if (identical(x$weight, "user")) {
    return(sprintf("user graph, %s edges", format(edges)))
  }
  sprintf("%d-NN %s graph, %s edges", x$k, x$weight, format(edges))
}

#' @export
print_extra.nmfkit_manifold <- function(x, ...) {
  sign <- if (x$method %in% c("rmnmf", "smrmf", "fsmrmf"))
    if (isTRUE(x$control$sign_compat)) ", author sign (+)" else ", sign (-)"
  else ""
  cat(sprintf("%s, lambda = %s%s; %s\n", method_label(x), format(x$lambda),
              sign, graph_label(x)))
  sizes <- tabulate(x$labels, x$rank)
  cat(sprintf("cluster sizes: %s\n", paste(sizes, collapse = ", ")))
  if (inherits(x$data, "dgCMatrix") && x$method != "gnmf") {
    cat("sparse data densified for the ALM solver\n")
  }
  if (!identical(x$preprocess$method, "none")) {
    cat(sprintf("data preprocessed: %s\n", x$preprocess$method))
  }
  if (length(x$exemplars)) {
    cat(sprintf("%d exemplars; first: %s\n", length(x$exemplars),
                paste(utils::head(x$exemplars, 5), collapse = ", ")))
  }
  invisible(NULL)
}

#' Summarise a manifold-regularised fit
#'
#' Adds to [summary.nmfkit()] the cluster sizes, the graph (points, edges,
#' neighbours, weights), the last ALM residual and the exemplars.
#'
#' @param object A fit from [nmf_manifold()].
#' @param x A `summary.nmfkit_manifold` object.
#' @param digits Significant digits to print.
#' @param ... Unused.
#' @return A list of class `c("summary.nmfkit_manifold", "summary.nmfkit")`.
#' @examples
#' set.seed(1)
#' summary(nmf_manifold(two_moons(100), rank = 2, preprocess = "minmax"))
#' @export
summary.nmfkit_manifold <- function(object, ...) {
  check_dots_empty()
  out <- NextMethod()
  out$relative_error <- if (is.null(object$data)) NA_real_ else
    relative_norm(stats::residuals(object), object$data)
  out$method <- method_label(object)
  out$cluster_sizes <- tabulate(object$labels, object$rank)
  out$graph <- graph_label(object)
  out$residual <- if (length(object$residual)) utils::tail(object$residual, 1)
  out$exemplars <- object$exemplars
  class(out) <- c("summary.nmfkit_manifold", class(out))
  out
}

#' @rdname summary.nmfkit_manifold
#' @export
print.summary.nmfkit_manifold <- function(
    x, digits = max(3L, getOption("digits") - 3L), ...) {
  NextMethod()
  cat(sprintf("%s; %s\n", x$method, x$graph))
  cat(sprintf("Cluster sizes: %s\n", paste(x$cluster_sizes, collapse = ", ")))
  if (!is.null(x$residual)) {
    cat(sprintf("Final ALM residual: %s\n", format(x$residual, digits = 2)))
  }
  if (length(x$exemplars)) {
    cat(sprintf("Exemplars (%d): %s\n", length(x$exemplars),
                paste(utils::head(x$exemplars, 10), collapse = ", ")))
  }
  invisible(x)
}

#' @rdname clusters
#' @export
clusters.nmfkit_manifold <- function(object, ...) {
  check_dots_empty()
  object$labels
}

#' Fitted values, residuals and predictions of a manifold fit
#'
#' `fitted()` is the model `F G'` (for GNMF `W H`), `residuals()` the
#' (preprocessed) data minus it. `predict()` holds the basis `F` fixed and
#' finds the codes of new points, `argmin_{g >= 0} ||x - F g||` (the same
#' minimiser for the squared Frobenius loss of GNMF and for the 2,1 loss of
#' RMNMF, which is a sum of per-point norms; the graph term does not apply to
#' points outside the graph). New data are preprocessed like the fit's.
#'
#' @param object A fit from [nmf_manifold()].
#' @param newdata Points in columns with the fit's features in rows.
#' @param type `"coef"` (codes, components x points) or `"class"` (the
#'   cluster of each point, the largest code).
#' @param tol,max_passes Stopping rule of the coordinate descent.
#' @param ... Unused.
#' @param assay For `newdata` in a container: its assay (or Seurat layer),
#'   as in [predict.nmfkit()].
#' @return `fitted()`, `residuals()`: features x points matrices;
#'   `predict()`: codes or clusters.
#' @examples
#' set.seed(1)
#' x <- two_moons(100)
#' fit <- nmf_manifold(x, rank = 2, preprocess = "minmax")
#' predict(fit, x[, 1:5], type = "class")
#' @name fitted.nmfkit_manifold
#' @export
fitted.nmfkit_manifold <- function(object, ...) {
  check_dots_empty()
  out <- object$W %*% t(object$G)
  dimnames(out) <- object$dimnames
  out
}

#' @rdname fitted.nmfkit_manifold
#' @export
predict.nmfkit_manifold <- function(object, newdata, type = c("coef", "class"),
                                    tol = 1e-12, max_passes = 2000L, ...,
                                    assay = "counts") {
  check_dots_empty()
  # checked whether or not `newdata` is given (without it nothing reads them)
  tol <- check_number(tol, min = 0)
  max_passes <- check_count(max_passes, min = 1)
  predict_with(object, newdata, type, read = function(newdata) {
    call <- rlang::caller_env(2)
    newdata <- as_numeric_matrix(newdata, "newdata", call)
    check_finite_values(newdata, if (inherits(newdata, "dgCMatrix"))
      newdata@x else newdata, "newdata", call)
    if (nrow(newdata) != nrow(object$W)) {
      abort_nmfkit(c("{.arg newdata} must have {nrow(object$W)} rows, one per feature of the fit.",
                     "x" = "It has {nrow(newdata)} row{?s}."), "dimension",
                   call = call)
    }
    pre <- object$preprocess
    if (identical(pre$method, "minmax")) {
      newdata <- (as.matrix(newdata) - pre$min) /
        ifelse(pre$range > 0, pre$range, Inf)
    }
    as.matrix(newdata)
  }, solve = function(newdata) {
    nnls_coef(newdata, object$W, tol, max_passes, object$control$threads)
  }, assay = assay)
}

#' Plot a manifold-regularised fit
#'
#' The types of [plot.nmfkit()] and `type = "graph"`: the points in their
#' first two coordinates (or, with more than two features, a classical MDS
#' of them), coloured by cluster, with the graph's edges drawn and exemplars
#' (SMRMF) marked.
#'
#' @param x A fit from [nmf_manifold()].
#' @param type `"graph"`, `"basis"`, `"coef"` or `"loss"`.
#' @param coords For `"graph"`: `"auto"`, `"first2"` or `"mds"`.
#' @param ... Graphical parameters (see [graphics::par()]), named; one the
#'   plot sets itself (`main`, `col`, `xlab`, ...) is replaced by the user's.
#'   Any other name is an error naming the nearest argument.
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' fit <- nmf_manifold(two_moons(100), rank = 2, preprocess = "minmax")
#' plot(fit, type = "graph")
#' @export
plot.nmfkit_manifold <- function(x, type = c("graph", "basis", "coef", "loss"),
                                 coords = c("auto", "first2", "mds"), ...) {
  check_graphics_dots()
  type <- check_choice(type, c("graph", "basis", "coef", "loss"))
  coords <- check_choice(coords, c("auto", "first2", "mds"))
  if (type != "graph") return(plot.nmfkit(x, type = type, ...))
  data <- as.matrix(model_data(x))
  if (coords == "auto") coords <- if (nrow(data) <= 2L) "first2" else "mds"
  xy <- if (coords == "first2" || nrow(data) < 2L) {
    t(data[seq_len(min(2L, nrow(data))), , drop = FALSE])
  } else {
    stats::cmdscale(stats::dist(t(data)), k = 2)
  }
  if (ncol(xy) == 1L) xy <- cbind(xy, 0)
  g <- Matrix::summary(methods::as(x$graph, "TsparseMatrix"))
  g <- g[g$i < g$j, , drop = FALSE]
  cols <- grDevices::hcl.colors(max(3L, x$rank), "Dark 3")[x$labels]
  draw(graphics::plot, xy, type = "n", asp = 1, xlab = "", ylab = "",
       main = sprintf("%s clusters and graph", method_label(x)),
       user = list(...))
  graphics::segments(xy[g$i, 1], xy[g$i, 2], xy[g$j, 1], xy[g$j, 2],
                     col = grDevices::gray(0.8))
  graphics::points(xy, col = cols, pch = 19, cex = 0.6)
  if (length(x$exemplars)) {
    graphics::points(xy[x$exemplars, , drop = FALSE], pch = 1, cex = 1.4)
  }
  invisible(x)
}
