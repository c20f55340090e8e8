# Methods of standard NMF fits (class nmfkit_nmf) that depend on its loss,
# penalties and fixed components.

#' @export
print_extra.nmfkit_nmf <- function(x, digits = 3L, ...) {
  print_rank_note(x)
  loss <- fit_loss(x)
  if (length(loss$fit_fields)) {
    cat(sprintf("loss: %s; divergence %s (%s of the rank-one baseline)\n",
                loss$label,
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
                               interval = c("none", "bootstrap"),
                               level = 0.9, bootstrap = NULL,
                               assay = "counts") {
  check_dots_empty()
  # checked whether or not `newdata` is given (without it nothing reads them)
  tol <- check_number(tol, min = 0)
  max_passes <- check_count(max_passes, min = 1)
  interval <- check_choice(interval)
  level <- check_level(level)
  if (interval == "bootstrap") {
    return(predict_interval(object, newdata, type, tol, max_passes, level,
                            bootstrap, assay))
  }
  if (!is.null(bootstrap)) {
    abort_nmfkit(c("{.arg bootstrap} gives intervals: it goes with {.code interval = \"bootstrap\"}.",
                   "x" = "{.arg interval} is {.val none}, so nothing would read it."),
                 "bootstrap")
  }
  loss <- fit_loss(object)
  predict_with(object, newdata, type, function(newdata) {
    check_positive_for_loss(newdata, loss, NULL, call = rlang::caller_env(4))
    loss$coef(newdata, object$W, tol, max_passes, object$control$threads)
  }, assay = assay)
}

# predict(fit, newdata, interval = "bootstrap"): the replicates' bases of
# `bootstrap` (an nmf_bootstrap() of this fit; by default 100 column
# replicates) carried through to intervals of the new coefficients.
predict_interval <- function(object, newdata, type, tol, max_passes, level,
                             bootstrap, assay, call = rlang::caller_env()) {
  type <- check_choice(type, c("coef", "class"), arg = "type", call = call)
  if (type != "coef") {
    abort_nmfkit(c("{.code interval = \"bootstrap\"} gives intervals of coefficients: {.code type = \"coef\"}.",
                   "x" = "{.arg type} is {.val {type}}."),
                 "choice", call = call, value = type)
  }
  level <- check_level(level, call = call)
  if (is.null(bootstrap)) {
    bootstrap <- nmf_bootstrap(object, level = level)
  } else if (!inherits(bootstrap, "nmfkit_bootstrap") ||
             !identical(unname(bootstrap$fit$W), unname(object$W))) {
    abort_nmfkit(c("{.arg bootstrap} must be an {.fn nmf_bootstrap} of this fit.",
                   "x" = if (inherits(bootstrap, "nmfkit_bootstrap")) "It bootstraps another fit (its {.field W} differs)." else "It is {.obj_type_friendly {bootstrap}}."),
                 "bootstrap", call = call)
  }
  predict.nmfkit_bootstrap(bootstrap, newdata, level = level, tol = tol,
                           max_passes = max_passes, assay = assay)
}
