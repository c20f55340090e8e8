# Declarations: what each fitting function and each variant says about
# itself, in its own file, so that no shared file names a variant
# (ARCHITECTURE.md, "Declarations").
#
# A variant file calls declare_variant() at top level; the shared code (the
# settings in control.R, the fit pipeline in fit.R, the model object in
# class.R, predict.R) reads the declaration back with variant_of(). Functions
# that read settings without being a variant (ot_distance(), nmf_distance()
# on a list) call declare_settings() only.

`%||%` <- function(a, b) if (is.null(a)) b else a

# The registry, filled when the package's R files are sourced at install time
# (this file sorts before every file that declares).
registry <- new.env(parent = emptyenv())
registry$settings <- list()
registry$variants <- list()

# A setting that a function reads beyond the base ones (tol, max_iter,
# threads, verbose): its default (NULL: none) and its check, a function
# (value, arg, call) returning the checked value.
setting <- function(default = NULL, check) {
  list(default = default, check = check)
}

# Passes over each factor per outer iteration (or iterations of a
# subproblem): read by several functions, which list it in their
# declarations.
setting_inner <- setting(check = function(x, arg, call) {
  check_count(x, min = 1, arg = arg, call = call, what = "control")
})

# The settings `fn` reads, as a named list of setting() objects, and the
# defaults of its base settings when a plain list is given as `control`
# (those of nmf_control() otherwise).
declare_settings <- function(fn, settings = list(), defaults = list()) {
  registry$settings[[fn]] <- list(settings = settings, defaults = defaults)
  invisible(fn)
}

# The declaration of a variant (class "nmfkit_<name>"):
# * fn: its fitting function (errors and control settings name it);
#   label: its name in print() and summary(); loss_name: what its trace is.
# * settings, defaults: as declare_settings() (control$... it reads).
# * scale: exponents p of the fields of a fit of x / 2^e that scale as
#   (2^e)^p (c(W = 0.5, H = 0.5): factors scale as sqrt(x)); NULL when the
#   variant's data are scale-free (normalised) and nothing is rescaled.
# * drop_lines: all-zero rows and columns are left out of the fit and come
#   back as zeros.
# * start(x, rank, init, spec, control): starting factors of one run;
#   `init` is the user's for the first run and "random" for the others.
# * run(x, start, spec, control): one run of the core solver; returns a list
#   with W, H, loss, iterations, status and the variant's own fields.
# * post(fit, x, spec, control): the fit after unscaling (default: as is).
# * status_factors(fit): list(W, H) whose product is the fit (for the
#   "degenerate" and "numerical_error" status; default the fit's W and H).
# * model(fit, spec): the variant's fields of the model object.
declare_variant <- function(name, fn, label, loss_name = "relative error",
                            settings = list(), defaults = list(),
                            scale = c(W = 0.5, H = 0.5), drop_lines = FALSE,
                            start, run, post = NULL, status_factors = NULL,
                            model = NULL) {
  declare_settings(fn, settings, defaults)
  registry$variants[[name]] <- list(
    name = name, fn = fn, label = label, loss_name = loss_name,
    scale = scale, drop_lines = drop_lines, start = start, run = run,
    post = post %||% function(fit, x, spec, control) fit,
    status_factors = status_factors %||% function(fit) fit[c("W", "H")],
    model = model %||% function(fit, spec) list()
  )
  invisible(name)
}

# The declaration of a variant by name, or of a model's variant.
variant_of <- function(x) {
  name <- if (is.character(x)) x else sub("^nmfkit_", "", class(x)[1])
  registry$variants[[name]]
}

# The settings entry of function `fn` (list(settings, defaults)).
settings_of <- function(fn) {
  registry$settings[[fn]] %||% list(settings = list(), defaults = list())
}

# Every extra setting any function reads, name -> setting() (for
# nmf_control(), which does not know which function it is for). A name read
# by several functions is checked by the first declaration's check; they
# agree (shared settings are declared once, in control.R).
all_settings <- function() {
  out <- list()
  for (entry in registry$settings) {
    new <- setdiff(names(entry$settings), names(out))
    out[new] <- entry$settings[new]
  }
  # in a fixed order, whatever the order the files declared them in
  out[sort(names(out))]
}

# Which functions read setting `name`.
readers_of <- function(name) {
  fns <- names(registry$settings)
  fns[vapply(registry$settings, function(e) name %in% names(e$settings),
             logical(1))]
}
