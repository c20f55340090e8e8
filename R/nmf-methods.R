# Methods of standard NMF fits (class nmfkit_nmf) that depend on its loss,
# penalties and fixed components.

#' @export
print_extra.nmfkit_nmf <- function(x, digits = 3L, ...) {
  beta <- x$beta %||% 2
  if (beta != 2) {
    cat(sprintf("loss: %s; divergence %s (%s of the rank-one baseline)\n",
                loss_label(x$loss_function, beta),
                format(x$divergence, digits = digits),
                format(x$divergence / x$baseline, digits = digits)))
  }
  if (!is.null(x$penalty)) {
    on <- x$penalty[x$penalty > 0]
    cat(sprintf("penalty: %s\n",
                paste(sprintf("%s = %s", names(on), format(on, digits = digits)),
                      collapse = ", ")))
  }
  if (!is.null(x$fixed)) {
    cat(sprintf("fixed components: %d of W, %d of H\n", x$fixed[1],
                x$fixed[2]))
  }
  invisible(NULL)
}

#' @rdname predict.nmfkit
#' @export
predict.nmfkit_nmf <- function(object, newdata, type = c("coef", "class"),
                               tol = 1e-12, max_passes = 2000L, ...,
                               assay = "counts") {
  beta <- object$beta %||% 2
  if (beta == 2) return(NextMethod())
  check_dots_empty()
  loss <- list(name = object$loss_function, beta = beta)
  predict_with(object, newdata, type, function(newdata) {
    check_positive_for_loss(newdata, loss, NULL, call = rlang::caller_env(4))
    divergence_coef(newdata, object$W, loss, check_number(tol, min = 0),
                    check_count(max_passes, min = 1), object$control$threads)
  }, assay = assay)
}
