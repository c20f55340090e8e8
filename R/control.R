#' Settings for nmfkit's solvers
#'
#' Like [stats::glm.control()], `nmf_control()` gathers the rarely changed
#' settings of every solver in the package. Each variant documents which
#' extra settings it reads from `...`.
#'
#' @param tol Stopping tolerance, at least 0. For `nmf()` the fit stops when
#'   the projected-gradient violation falls to `tol` times that of the first
#'   iteration (scikit-learn's rule). `0` runs `max_iter` iterations.
#' @param max_iter Maximum number of outer iterations, at least 1.
#' @param threads Number of OpenMP threads, at least 1. Results are identical
#'   for any number of threads.
#' @param verbose Report the loss as the fit goes.
#' @param inner Passes over each factor per outer iteration, or `NULL` for the
#'   solver's default. For `nmf(method = "hals")` the default 1 is plain HALS
#'   (scikit-learn's `cd` solver); more passes reuse the Gram system while they
#'   still pay off (Gillis and Glineur's accelerated HALS), which helps on
#'   dense, ill-conditioned problems.
#' @param ... Named settings that particular variants read (see their help).
#' @return A list of class `nmfkit_control`.
#' @examples
#' nmf_control(max_iter = 500, tol = 1e-6)
#' @export
nmf_control <- function(tol = 1e-4, max_iter = 200L,
                        threads = getOption("nmfkit.threads", 1L),
                        verbose = FALSE, inner = NULL, ...) {
  extra <- list(...)
  if (length(extra) && (is.null(names(extra)) || any(names(extra) == ""))) {
    abort_nmfkit("All settings in {.arg ...} must be named.", "control")
  }
  structure(
    c(list(tol = check_number(tol, min = 0, what = "control"),
           max_iter = check_count(max_iter, min = 1, what = "control"),
           threads = check_count(threads, min = 1, what = "control"),
           verbose = check_flag(verbose),
           inner = if (!is.null(inner))
             check_count(inner, min = 1, what = "control"),
           tol_set = !missing(tol)),
      extra),
    class = "nmfkit_control"
  )
}

#' @export
print.nmfkit_control <- function(x, ...) {
  cat("<nmfkit_control>\n")
  shown <- unclass(x)
  shown$tol_set <- NULL
  shown <- shown[!vapply(shown, is.null, logical(1))]
  utils::str(shown, no.list = TRUE, give.head = FALSE)
  invisible(x)
}

# The control argument of an exported function: an nmfkit_control, or a plain
# list of settings merged into `default`.
check_control <- function(control, default = nmf_control(),
                          arg = rlang::caller_arg(control),
                          call = rlang::caller_env()) {
  if (inherits(control, "nmfkit_control")) return(control)
  if (is.list(control) && (!length(control) || !is.null(names(control)))) {
    settings <- unclass(default)
    settings$tol_set <- NULL
    out <- do.call(nmf_control, utils::modifyList(settings, control))
    out$tol_set <- "tol" %in% names(control) || isTRUE(default$tol_set)
    return(out)
  }
  abort_nmfkit(c("{.arg {arg}} must be made by {.fn nmf_control}.",
                 "x" = "It is {.obj_type_friendly {control}}."),
               "control", call = call)
}

# An R function(iter, loss) for the core's progress hook, or NULL.
progress_callback <- function(control) {
  if (!isTRUE(control$verbose)) return(NULL)
  every <- max(1L, control$max_iter %/% 20L)
  function(iter, loss) {
    if (iter == 1L || iter %% every == 0L) {
      cli::cli_inform("iteration {iter}: loss {signif(loss, 6)}")
    }
  }
}
