# The checks of `...`. R answers an argument a function lacks with its own
# unclassed "unused argument" error before any of the function's code runs,
# so every exported function has `...` and checks it here (ARCHITECTURE.md,
# "Conventions"): empty, named arguments of the function it goes to, or
# graphical parameters.

# The names of the arguments in `...` of the function whose frame is `env`
# ("" for an unnamed one), or NULL when it is empty.
dots_names <- function(env) {
  n <- eval(quote(...length()), env)
  if (n == 0L) return(NULL)
  nm <- eval(quote(...names()), env)
  if (is.null(nm)) rep("", n) else nm
}

# `...` of an exported function that passes it on to `to`: every argument
# named, and named as one of `valid`.
check_dots_named <- function(valid, to, env = rlang::caller_env(),
                             call = rlang::caller_env()) {
  nm <- dots_names(env)
  if (is.null(nm)) return(invisible(NULL))
  valid <- setdiff(valid, "...")
  bad <- nm[!nm %in% valid]
  if (!length(bad)) return(invisible(NULL))
  near <- if (nzchar(bad[1])) nearest_name(bad[1], valid)
  abort_nmfkit(c("Arguments in {.arg ...} must be named arguments of {.fn {to}}: {.arg {valid}}.",
                 "x" = if (nzchar(bad[1])) "Unknown argument {.arg {bad[1]}}."
                       else "{sum(!nzchar(nm))} argument{?s} {?is/are} unnamed.",
                 "i" = if (!is.null(near)) "Did you mean {.arg {near}}?"),
               "dots", call = call)
}

# `...` of an exported function that reads none of it: any argument there is
# a misspelling or a setting of another function.
check_dots_empty <- function(env = rlang::caller_env(),
                             call = rlang::caller_env()) {
  nm <- dots_names(env)
  if (is.null(nm)) return(invisible(NULL))
  n <- length(nm)
  fn <- sys.function(sys.parent())
  valid <- setdiff(names(formals(fn)), "...")
  named <- nm[nzchar(nm)]
  hints <- c(character(), unlist(lapply(named, function(a) {
    near <- nearest_name(a, valid)
    if (!is.null(near)) cli::format_inline("{.arg {a}}: did you mean {.arg {near}}?")
  })))
  found <- if (length(named)) cli::format_inline(
    "{cli::qty(length(named))}Unknown argument{?s} {.arg {named}}.")
  else cli::format_inline("{n} unnamed argument{?s}.")
  names(hints) <- rep("i", length(hints))
  if (length(named) == n) {
    # every one named: say so in the function's terms (most of these
    # functions have `...` only to catch them)
    head <- sys.call(sys.parent())[[1]]
    msg <- if (is.name(head)) {
      # the generic the user called, not its method
      head <- sub("\\.(nmfkit\\w*|list|default|SingleCellExperiment|Seurat)$",
                  "", as.character(head))
      cli::format_inline("{.fn {head}} has no argument{?s} {.arg {named}}.")
    } else {
      cli::format_inline("There is no argument{?s} {.arg {named}}.")
    }
    abort_nmfkit(c(msg, hints), "dots", call = call)
  }
  abort_nmfkit(c("Arguments in {.arg ...} must be empty here; nothing reads them.",
                 "x" = found, hints),
               "dots", call = call)
}

# `...` of a plot method, passed on to base graphics: every argument named,
# and named as a graphical parameter or an argument of the base plotting
# functions. Otherwise R draws anyway and only warns ("is not a graphical
# parameter"), and a misspelt argument of the method itself is lost.
check_graphics_dots <- function(env = rlang::caller_env(),
                                call = rlang::caller_env()) {
  nm <- dots_names(env)
  if (is.null(nm)) return(invisible(NULL))
  bad <- nm[!nzchar(nm) | !nm %in% graphics_arguments()]
  if (!length(bad)) return(invisible(NULL))
  own <- setdiff(names(formals(sys.function(sys.parent()))), "...")
  near <- if (nzchar(bad[1])) nearest_name(bad[1], own)
  abort_nmfkit(c("Arguments in {.arg ...} go to the graphics functions: each must be a named graphical parameter.",
                 "x" = if (nzchar(bad[1])) "{.arg {bad[1]}} is no argument of this method and no graphical parameter."
                       else "{sum(!nzchar(nm))} argument{?s} {?is/are} unnamed.",
                 "i" = if (!is.null(near)) "Did you mean {.arg {near}}?"),
               "dots", call = call)
}

# Graphical parameters (par()) and the arguments of the base functions the
# plot methods call.
graphics_arguments <- function() {
  fns <- list(graphics::plot.default, graphics::image.default,
              graphics::barplot.default, graphics::title, graphics::axis,
              graphics::matplot, graphics::legend, graphics::text.default,
              graphics::points.default, graphics::lines.default,
              graphics::hist.default, graphics::boxplot.default)
  unique(c(get(".Pars", envir = asNamespace("graphics")),
           unlist(lapply(fns, function(f) names(formals(f))))))
}
