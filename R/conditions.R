# Classed conditions. Every error the package raises on bad input has class
# c("nmfkit_error_<what>", "nmfkit_error"), is reported against the user's
# call, and names the argument and what was found.

abort_nmfkit <- function(message, what, ..., call = rlang::caller_env(),
                         .envir = parent.frame()) {
  cli::cli_abort(
    message,
    class = c(paste0("nmfkit_error_", what), "nmfkit_error"),
    call = call, ..., .envir = .envir
  )
}

# The default method of a generic that needs a fit: `fn` names the generic,
# `needs` what it takes.
abort_not_fit <- function(object, fn, needs = "a fitted nmfkit model",
                          call = rlang::caller_env()) {
  if (missing(object)) {
    abort_nmfkit("{.arg object} is missing: {.fn {fn}} needs {needs}.",
                 "missing", call = call)
  }
  abort_nmfkit(c("{.fn {fn}} needs {needs}.",
                 "x" = "{.arg object} is {.obj_type_friendly {object}}."),
               "type", call = call, value = object)
}

# Warnings likewise: class c("nmfkit_warning_<what>", "nmfkit_warning"),
# fields in `...` (the offending value, for handlers).
warn_nmfkit <- function(message, what, ..., call = rlang::caller_env(),
                        .envir = parent.frame()) {
  cli::cli_warn(
    message,
    class = c(paste0("nmfkit_warning_", what), "nmfkit_warning"),
    call = call, ..., .envir = .envir
  )
}

# An argument renamed or retired, or an order changed: it keeps working
# for one release with a warning of class nmfkit_warning_deprecated, once
# per session and name. `old` and `new` are cli inline text.
deprecate_nmfkit <- function(old, new, fn, call = rlang::caller_env()) {
  what <- cli::format_inline(old)
  instead <- cli::format_inline(new)
  warn_nmfkit(
    c("{what} in {.fn {fn}} is deprecated; use {instead} instead.",
      "i" = "It still works in this release and will be removed in the next."),
    "deprecated", call = call, old = old, new = new,
    .frequency = "once", .frequency_id = paste0("nmfkit_", fn, "_", old)
  )
}

# An argument renamed `new`, given by its old name `old`: the deprecation
# warning. Both names at once (`both`) is an error, since one of the two
# values would be ignored.
deprecate_renamed <- function(old, new, fn, both, call = rlang::caller_env()) {
  if (both) {
    abort_nmfkit(c("Give {.arg {new}} only: {.arg {old}} is its deprecated old name.",
                   "x" = "Both {.arg {old}} and {.arg {new}} are given."),
                 "renamed", call = call)
  }
  deprecate_nmfkit(paste0("{.arg ", old, "}"), paste0("{.arg ", new, "}"),
                   fn, call = call)
}

# A fitting function whose arguments were put in the grammar's order
# (ARCHITECTURE.md, "Conventions"): a call that matches arguments by
# position past the first `fixed` ones, which did not move, and means
# something else under the former order `old` (the names, in order) gets
# the old meaning for one release, with a deprecation warning. Returns
# NULL, or the call with every argument named, for the caller to evaluate
# instead. Called first thing, before any argument is evaluated.
old_positions <- function(old, fixed, fn, call = sys.call(-1L),
                          fun = sys.function(-1L),
                          env = parent.frame(2L)) {
  nm <- names(call)
  n_unnamed <- if (is.null(nm)) length(call) - 1L else sum(!nzchar(nm[-1L]))
  if (n_unnamed <= fixed) return(NULL)
  before <- fun
  # arguments past the old ones land in `...` under either order (where
  # the function has it), for check_dots_empty() to report
  formals(before) <- formals(fun)[c(old, intersect("...",
                                                   names(formals(fun))))]
  now <- match.call(fun, call, expand.dots = TRUE, envir = env)
  then <- match.call(before, call, expand.dots = TRUE, envir = env)
  sorted <- function(cl) {
    a <- as.list(cl)[-1L]
    a[order(names(a))]
  }
  if (identical(sorted(now), sorted(then))) return(NULL)
  moved <- setdiff(names(as.list(then)[-1L]),
                   c(nm[nzchar(nm)], old[seq_len(fixed)]))
  deprecate_nmfkit(
    paste0("giving ", paste0("{.arg ", moved, "}", collapse = ", "),
           " by position"),
    paste0("names (the order is now {.code ",
           paste(names(formals(fun)), collapse = ", "), "})"),
    fn)
  then
}

# `rank` without a default in nmf_joint() and nmf_distance(): a missing rank
# is 10 for one release, with a warning, so that scripts written for the
# default keep running while they are updated.
deprecated_rank_default <- function(fn, call = rlang::caller_env()) {
  warn_nmfkit(
    c("{.arg rank} of {.fn {fn}} will be required: give it explicitly.",
      "i" = "Using the old default, {.code rank = 10}, in this release."),
    "deprecated", call = call, old = "rank", new = "rank",
    .frequency = "once", .frequency_id = paste0("nmfkit_", fn, "_rank")
  )
  10L
}

# A fit that stopped on its iteration cap although the user asked for a
# tolerance, or that stopped on a numerical error.
warn_status <- function(status, control, iterations, call) {
  if (identical(status, "degenerate")) {
    warn_nmfkit(
      c("The fit is zero: every component has an all-zero basis vector or coefficient row, so {.code W %*% H} is 0 (relative error 1).",
        "i" = "The status is {.val degenerate}, not converged. A zero {.arg init} stays zero; try another {.arg init}."),
      "degenerate", call = call
    )
  } else if (identical(status, "numerical_error")) {
    warn_nmfkit(
      c("The fit stopped after {iterations} iteration{?s} on a numerical error.",
        "i" = "The factors are those of the last finite iteration; try another {.arg init}."),
      "numerical", call = call
    )
  } else if (identical(status, "max_iter") && isTRUE(control$tol_set) &&
             control$tol > 0) {
    warn_nmfkit(
      c("The fit did not reach {.code tol = {control$tol}} in {iterations} iteration{?s}.",
        "i" = "Raise {.code max_iter} in {.fn nmf_control}, or loosen {.code tol}."),
      "convergence", call = call
    )
  }
  invisible(NULL)
}
