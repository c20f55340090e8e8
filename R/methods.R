#' Inspect a fitted nmfkit model
#'
#' The methods every nmfkit model has. `coef()` returns the coefficients
#' `H` (components x samples) and `basis()` the basis `W` (features x
#' components). `fitted()` is the reconstruction in the variant's own model
#' and `residuals()` is `x - fitted(object)`; both need the data, kept in the
#' model by default or passed as `x`.
#'
#' @param object,x A fitted model (class `nmfkit`).
#' @param digits Significant digits to print.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return `print()` returns `x` invisibly; `coef()`, `basis()`, `fitted()`
#'   and `residuals()` return matrices with dimnames from the data.
#' @examples
#' fit <- nmf(swimmer(), rank = 17)
#' dim(basis(fit))
#' dim(coef(fit))
#' max(abs(residuals(fit)))
#' @name nmfkit-methods
NULL

#' @rdname nmfkit-methods
#' @export
print.nmfkit <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  check_dots_empty()
  digits <- check_count(digits, min = 1, max = 22)
  cat(sprintf("<%s> rank %d on %d features x %d samples\n",
              variant_label(x), x$rank, nrow(x$W), ncol(x$H)))
  final <- if (length(x$loss)) format(utils::tail(x$loss, 1), digits = digits)
           else "none"
  cat(sprintf("%s: %s after %d iteration%s (%s)\n", x$loss_name, final,
              x$iterations, if (x$iterations == 1L) "" else "s",
              status_label(x$status)))
  print_extra(x, digits = digits)
  invisible(x)
}

status_label <- function(status) {
  switch(status,
    converged = "converged",
    max_iter = "iteration cap reached",
    interrupted = "interrupted",
    numerical_error = "numerical error",
    degenerate = "degenerate: zero fit, not converged",
    status
  )
}

# Variant-specific lines of print(); nothing for standard NMF.
print_extra <- function(x, ...) UseMethod("print_extra")
#' @export
print_extra.default <- function(x, ...) invisible(NULL)

#' @rdname nmfkit-methods
#' @export
coef.nmfkit <- function(object, ...) {
  check_dots_empty()
  object$H
}

#' Basis matrix of a factorisation
#'
#' @param object A fitted model.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return The basis `W` (features x components).
#' @examples
#' fit <- nmf(swimmer(), rank = 17)
#' basis(fit)[1:3, 1:4]
#' @export
basis <- function(object, ...) UseMethod("basis")

#' @rdname basis
#' @export
basis.default <- function(object, ...) {
  abort_not_fit(object, "basis")
}

#' @rdname basis
#' @export
basis.nmfkit <- function(object, ...) {
  check_dots_empty()
  object$W
}

#' @rdname nmfkit-methods
#' @export
fitted.nmfkit <- function(object, ...) {
  check_dots_empty()
  out <- object$W %*% object$H
  dimnames(out) <- object$dimnames
  out
}

#' @rdname nmfkit-methods
#' @param type `"response"` (`x - fitted`) or `"deviance"` (the signed
#'   square root of twice each entry's divergence, `sign(x - mu) *
#'   sqrt(2 d(x | mu))`: for `loss = "kl"` the Poisson deviance residuals,
#'   whose squares sum to the deviance). The default is `"deviance"` for
#'   fits under a divergence and `"response"` otherwise.
#' @export
residuals.nmfkit <- function(object, x = NULL, type = NULL, ...) {
  check_dots_empty()
  loss <- fit_loss(object)
  type <- if (is.null(type)) {
    loss$residual
  } else {
    check_choice(type, c("response", "deviance"))
  }
  x <- model_data(object, x)
  x <- as.matrix(x)
  mu <- stats::fitted(object)
  out <- if (type == "response") x - mu else loss$deviance_residuals(x, mu)
  out <- mask_residuals(object, out)
  dimnames(out) <- object$dimnames
  out
}

#' Summarise a fitted nmfkit model
#'
#' @param object A fitted model.
#' @param x A `summary.nmfkit` object.
#' @param digits Significant digits to print.
#' @param ... For `summary()`, unused: an argument given there is an error
#'   (a misspelling). For `print()`, passed to [print()].
#' @return A list of class `summary.nmfkit` with the relative error (when the
#'   data are kept), the sparsity (share of zero entries) of `W` and `H`, and
#'   each component's share of the reconstruction's total mass (for `W H`
#'   these shares add up to one exactly).
#' @examples
#' summary(nmf(swimmer(), rank = 17))
#' @export
summary.nmfkit <- function(object, ...) {
  check_dots_empty()
  W <- object$W
  H <- object$H
  mass <- colSums(W) * rowSums(H)
  # NA for factors that are not finite (a fit stopped on a numerical error)
  share <- if (isTRUE(sum(mass) > 0)) mass / sum(mass)
           else if (all(is.finite(mass))) mass else mass * NA_real_
  out <- list(variant = variant_label(object), call = object$call,
              rank = object$rank, dim = c(nrow(W), ncol(H)),
              relative_error = NA_real_, loss = utils::tail(object$loss, 1),
              loss_name = object$loss_name, iterations = object$iterations,
              status = object$status,
              sparsity = c(W = mean(W == 0), H = mean(H == 0)),
              share = share)
  # the loss's own fields: relative error, or divergence and baseline
  fields <- fit_loss(object)$summary(object)
  out[names(fields)] <- fields
  structure(out, class = "summary.nmfkit")
}

#' @rdname summary.nmfkit
#' @export
print.summary.nmfkit <- function(x, digits = max(3L, getOption("digits") - 3L),
                                 ...) {
  # the variants' methods pass their `...` here (NextMethod())
  check_dots_empty()
  digits <- check_count(digits, min = 1, max = 22)
  cat(sprintf("%s, rank %d on %d features x %d samples\n", x$variant, x$rank,
              x$dim[1], x$dim[2]))
  if (!is.null(x$call)) cat("Call: ", paste(deparse(x$call), collapse = "\n"),
                            "\n", sep = "")
  cat(sprintf("%d iteration%s, %s; final %s %s\n", x$iterations,
              if (x$iterations == 1L) "" else "s", status_label(x$status),
              x$loss_name, format(x$loss, digits = digits)))
  if (!is.na(x$relative_error)) {
    cat(sprintf("Relative error ||x - fitted|| / ||x||: %s\n",
                format(x$relative_error, digits = digits)))
  }
  if (!is.null(x$loss_function)) {
    cat(sprintf("Loss: %s\n", x$loss_function))
    cat(sprintf("Divergence D(x | fitted): %s (rank-one baseline %s)%s\n",
                format(x$divergence, digits = digits),
                format(x$baseline, digits = digits),
                if (!is.null(x$deviance)) sprintf("; deviance %s",
                  format(x$deviance, digits = digits)) else ""))
  }
  cat(sprintf("Sparsity (share of zeros): W %s, H %s\n",
              format(x$sparsity[["W"]], digits = digits),
              format(x$sparsity[["H"]], digits = digits)))
  cat("Share of the fit by component:\n")
  print(round(x$share, digits), ...)
  invisible(x)
}

#' Cluster of each point
#'
#' The cluster of each sample: for [nmf_manifold()] fits the labels the
#' method made (`labels` on the object); for every other nmfkit fit the
#' component with the largest coefficient in the sample's column of `H`
#' (ties go to the lowest index), the usual NMF clustering rule. Score them
#' against known classes with [cluster_acc()] and [cluster_nmi()].
#'
#' @param object A fitted nmfkit model.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return An integer vector, the cluster (1 to `rank`) of each sample, named
#'   by the sample names of the data when it has them.
#' @examples
#' set.seed(1)
#' x <- two_moons(100)
#' table(clusters(nmf_manifold(x, rank = 2, preprocess = "minmax")),
#'       attr(x, "labels"))
#' @export
clusters <- function(object, ...) UseMethod("clusters")

#' @rdname clusters
#' @export
clusters.default <- function(object, ...) {
  abort_not_fit(object, "clusters")
}

#' @rdname clusters
#' @export
clusters.nmfkit <- function(object, ...) {
  check_dots_empty()
  h <- object$H
  out <- max.col(t(h), ties.method = "first")
  names(out) <- colnames(h)
  out
}
