#' Coefficients of new samples on a fitted basis
#'
#' Holds the basis `W` of a fit fixed and finds the coefficients of the
#' columns of `newdata`. For standard NMF this is the nonnegative least
#' squares problem `argmin_{H >= 0} ||newdata - W H||_F`, solved by the same
#' coordinate descent as the fit, to a tight tolerance; it is strictly convex
#' when `W` has full column rank, so its answer is unique. It is solved on
#' `newdata` and `W` divided by powers of two when their products would
#' overflow or underflow (data near `.Machine$double.xmax`), which changes
#' nothing else. Variants solve
#' their own subproblem (see their help pages).
#'
#' @param object A fitted model.
#' @param newdata A nonnegative matrix (or numeric data frame, or
#'   `dgCMatrix`) with the same features as the fit in its rows.
#' @param tol,max_passes Stopping rule of the coordinate descent: stop when
#'   the projected-gradient violation falls to `tol` times its first value, or
#'   after `max_passes` passes.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return A components x samples matrix of coefficients, with the column
#'   names of `newdata`.
#' @examples
#' x <- swimmer()
#' fit <- nmf(x, rank = 17, control = nmf_control(tol = 1e-8, max_iter = 1000))
#' h <- predict(fit, x[, 1:5])
#' max(abs(h - coef(fit)[, 1:5]))
#' @export
predict.nmfkit <- function(object, newdata, tol = 1e-12, max_passes = 2000L,
                           ...) {
  check_dots_empty()
  if (missing(newdata)) return(object$H)
  newdata <- check_newdata(newdata, nrow(object$W))
  tol <- check_number(tol, min = 0)
  max_passes <- check_count(max_passes, min = 1)
  # NNLS is scale-equivariant: solve with newdata and W divided by powers of
  # two when their products would overflow or underflow, scale h back
  ex <- data_exponent(newdata)
  ew <- data_exponent(object$W)
  h <- unscale_coef(r_nnls(scale_data(newdata, ex), scale_data(object$W, ew),
                           tol, max_passes, object$control$threads), ex - ew)
  dimnames(h) <- list(colnames(object$W), colnames(newdata))
  h
}
