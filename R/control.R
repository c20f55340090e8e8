#' Settings for nmfkit's solvers
#'
#' Like [stats::glm.control()], `nmf_control()` gathers the rarely changed
#' settings of every solver in the package. A few settings are read by one
#' fitting function only; they are passed through `...` (see the table
#' below). Unknown names are errors (naming the nearest valid setting), and a
#' fitting function rejects a setting that it does not read, so that a
#' misspelled or misplaced setting never goes unnoticed. A control object
#' edited by hand (`ctl$max_iter <- -1`) is checked again when it is used.
#'
#' @section What `tol` and `max_iter` mean:
#' Each fitting function has its own natural stopping rule:
#'
#' | function | an iteration | `tol` stops it when | `tol` | `max_iter` |
#' |---|---|---|---|---|
#' | [nmf()], [nmf_joint()] | `W`, then `H` | violation <= `tol` x first | `1e-4` | 200 |
#' | [nmf_stratified()] | shifts, `H`, `W` | loss drop <= `tol` x loss | not used unless given | 100 |
#' | [nmf_shift()] | shifts and `H`, then `W` | error change < `tol` | `1e-4` | 30 |
#' | [nmf_wasserstein()] | dictionary step, then weights step | each step: max dual gradient <= `tol` | `1e-4` | 10 |
#' | [ot_distance()] | one Sinkhorn or L-BFGS step | marginal error <= `tol` | `1e-8` | 10000 |
#' | [nmf_manifold()] | one MU (GNMF) or ALM sweep | see below | `1e-5` (GNMF), `1e-8` (ALM) | 1000 |
#'
#' The `tol` and `max_iter` columns are the defaults of each function's
#' `control` argument (for example `nmf_shift(control =
#' nmf_control(max_iter = 30))`). A `control` you make with
#' `nmf_control()` carries `nmf_control()`'s own defaults for what it does
#' not set (`tol = 1e-4`, `max_iter = 200`); a plain list (`control =
#' list(tol = 1e-6)`) is completed from the function's defaults.
#' [nmf_manifold()] picks its method's `tol` whenever `tol` is not set, and
#' [nmf_stratified()] stops on `tol` only when it is set.
#'
#' In detail:
#' * [nmf()], [nmf_joint()] and [nmf_distance()] on a list: an iteration
#'   updates `W` then `H` (each by `inner` passes for HALS and MU, solved to
#'   tolerance for ANLS). The fit stops when the projected-gradient
#'   violation of the iteration's first passes falls to `tol` times that of
#'   the first iteration (scikit-learn's rule), or to `tol` times
#'   `tol_reference` when that is given (for example the `first_violation`
#'   of a fit another is warm-started from).
#' * [nmf_stratified()]: an iteration makes `v_updates` shift updates, then
#'   one multiplicative update of `H` and one of `W` (with
#'   `update = "hals"`: the shifts' exact update, then `inner` passes over
#'   `H` and over `W`). The fit stops when an
#'   iteration lowers the loss by no more than `tol` times its value, but
#'   only when `tol` is given: by default it runs `max_iter` iterations, as
#'   the authors' code does.
#' * [nmf_shift()]: an iteration runs, for every image, `inner` sweeps over
#'   the atoms' coefficients and shifts, then `inner` passes of the `W`
#'   step. The fit stops when the relative error changes by less than `tol`
#'   (an absolute change) between iterations, or when the shifts cycle
#'   without progress.
#' * [nmf_wasserstein()]: an iteration solves the dictionary subproblem,
#'   then the weights subproblem; `max_iter` (default 10) counts these
#'   iterations. Each subproblem runs at most `inner` (default 250) L-BFGS
#'   iterations and stops when the largest absolute entry of its dual
#'   gradient is at most `tol`.
#' * [ot_distance()] and [nmf_distance()] on a Wasserstein fit: an
#'   iteration is one Sinkhorn update of both potentials, or one L-BFGS
#'   iteration; they stop when the L1 error of the row sums (Sinkhorn) or
#'   the largest error of the column sums (L-BFGS) is at most `tol`.
#' * [nmf_manifold()]: for `"gnmf"` an iteration is one multiplicative
#'   update of the codes then of the basis; the fit stops after `min_iter`
#'   (30) iterations once the objective's moving average `m` (Cai's rule,
#'   `m <- 0.1 m + 0.9 J`) satisfies `(m - J) / m <= tol` (default `1e-5`).
#'   For the ALM methods (`"rmnmf"`, `"smrmf"`, `"fsmrmf"`) an iteration is
#'   one sweep of the augmented Lagrangian updates; the fit stops after
#'   `min_iter` iterations once the scaled constraint residuals
#'   (`||X - F G' - E|| / ||X||`, `||G - H|| / sqrt(n)`) are at most `tol`
#'   (default `1e-8`), or once the fit has stalled (residual at most `1e-3`
#'   and the objective changed by at most `1e-4`, relative, in one
#'   iteration). Their other knobs (`mu0`, `rho`, `sign_compat`, ...)
#'   are listed in [nmf_manifold()].
#'
#' @section Settings read by one function only:
#' * `block_size` ([nmf()] on a `DelayedMatrix`): the memory budget of a
#'   block of columns, in bytes (default
#'   `DelayedArray::getAutoBlockSize()`, 100 MB); a block is at least one
#'   chunk of the `H` update (about `n / 64` columns). The first scan of
#'   the data, every pass of the fit and `predict()` on a `DelayedMatrix`
#'   hold one block at a time: peak memory above the factors is about three
#'   budgets (or three chunks, if a chunk costs more).
#' * `batch_size` ([nmf()] with `method = "online"`): columns per
#'   mini-batch, rounded up to whole chunks (default about `n / 64`).
#' * `forget` ([nmf()] with `method = "online"`): the weight each pass over
#'   the data keeps of the earlier batches' statistics, in `(0, 1]`
#'   (default `0.01`; scikit-learn's `MiniBatchNMF` keeps `0.7`).
#' * `tol_reference` ([nmf()]): the violation `tol` is relative to, a
#'   positive number (default: the fit's own first iteration's), for
#'   example the `first_violation` of a fit this one is warm-started from.
#'   ([nmf_bootstrap()]'s replicates stop relative to their own first
#'   violation, which measures how far the resampling moved the optimum.)
#' * `extrapolate` ([nmf()]): `TRUE` (default) or `FALSE`. Extrapolation
#'   between iterations (Ang and Gillis 2019): each iteration starts from
#'   the last iterate pushed along its last move, `beta` growing while the
#'   error falls; an iteration whose error rises is discarded and the push
#'   shrinks, so the loss never rises. Measured 1.5-25 times fewer
#'   iterations to a given error (`bench/README.md`). [nmf_joint()] runs
#'   plain HALS, as the paper does.
#' * `eps` ([nmf_stratified()]): added to every denominator of the
#'   multiplicative updates, at least 0 (default `1e-9`).
#' * `update` ([nmf_stratified()]): `"multiplicative"` (default, the
#'   paper's rules) or `"hals"` (exact block updates of the same objective:
#'   shifts in closed form, then `inner` passes of coordinate descent over
#'   `H` and over `W`; much faster to a given loss).
#' * `h_start` ([nmf_shift()]): `"random"` (default) or `"zero"` starting
#'   coefficients and shifts.
#' * `fft_planner` ([nmf_shift()]): FFTW planner, `"estimate"` (default) or
#'   `"measure"`.
#' * `keep` ([nmf_shift()] with `instances`): first-stage atoms whose mass is
#'   below `keep` times the largest are dropped, between 0 and 1 (default
#'   0.05).
#' * `instance_threshold` ([nmf_shift()] with `instances`): instances are
#'   reported above this multiple of the median significant coefficient, at
#'   least 0 (default 0.5).
#'
#' `inner` is read by [nmf()], [nmf_joint()], [nmf_distance()] on a list,
#' [nmf_shift()], [nmf_stratified()] with `update = "hals"` and
#' [nmf_wasserstein()].
#'
#' @param tol Stopping tolerance, at least 0; see the table for what it
#'   measures in each function. `0` runs `max_iter` iterations.
#' @param max_iter Maximum number of iterations, at least 1; see the table.
#' @param threads Number of OpenMP threads, at least 1. Results are identical
#'   for any number of threads. More threads than the machine has are
#'   capped at that number, with a warning of class
#'   `nmfkit_warning_threads`. (Across machines the last bits can differ:
#'   the dense products use AVX2/FMA kernels on processors that have them,
#'   unless the environment variable `NMFKIT_SIMD` is `"generic"` when the
#'   package is first used.)
#' @param verbose Report the loss as the fit goes, a line every
#'   `max_iter / 20` iterations. Without it, interactive sessions show a
#'   progress bar for fits that take more than two seconds (see "Progress"
#'   in [nmfkit-package]).
#' @param inner Passes over each factor per outer iteration, or `NULL` for the
#'   solver's default. For `nmf(method = "hals")` the default 1 is plain HALS
#'   (scikit-learn's `cd` solver); more passes reuse the Gram system while they
#'   still pay off (Gillis and Glineur's accelerated HALS), which helps on
#'   dense, ill-conditioned problems. `nmf()`'s `method = "auto"` on sparse
#'   data chooses the passes over each factor by Gillis and Glineur's cost
#'   rule when `inner` is `NULL`. For [nmf_shift()] it is the default of
#'   its argument `inner`; for [nmf_stratified()] with `update = "hals"` the
#'   default is 1 (plain HALS). For [nmf_wasserstein()], the L-BFGS
#'   iterations per subproblem (default 250).
#' @param ... Named settings that particular functions read (see above).
#' @return A list of class `nmfkit_control`.
#' @examples
#' nmf_control(max_iter = 500, tol = 1e-6)
#' nmf_control(eps = 1e-12)  # for nmf_stratified()
#' try(nmf_control(maxiter = 10))
#' @export
nmf_control <- function(tol = 1e-4, max_iter = 200L,
                        threads = getOption("nmfkit.threads", 1L),
                        verbose = FALSE, inner = NULL, ...) {
  extra <- list(...)
  check_setting_names(names(extra), length(extra), arg = "...")
  settings <- c(list(tol = tol, max_iter = max_iter, threads = threads,
                     verbose = verbose, inner = inner), extra)
  out <- validate_settings(settings, prefix = "", call = rlang::current_env())
  out$tol_set <- !missing(tol)
  structure(out, class = "nmfkit_control")
}

#' @export
print.nmfkit_control <- function(x, ...) {
  check_dots_empty()
  cat("<nmfkit_control>\n")
  shown <- unclass(x)
  shown$tol_set <- NULL
  shown <- shown[!vapply(shown, is.null, logical(1))]
  utils::str(shown, no.list = TRUE, give.head = FALSE)
  invisible(x)
}

# Settings -----------------------------------------------------------------

# Settings every solver reads.
base_settings <- c("tol", "max_iter", "threads", "verbose")

# The control argument of the exported function `fn` (a name declared with
# declare_settings() or declare_variant()): an nmfkit_control (checked
# again: it may have been edited), or a plain list of settings merged into
# `default` (by default nmf_control() with the function's declared
# defaults). Fills in the defaults of the settings `fn` reads and rejects
# those it does not.
check_control <- function(control, fn = "nmf", default = NULL,
                          arg = rlang::caller_arg(control),
                          call = rlang::caller_env()) {
  force(arg)
  declared <- settings_of(fn)
  if (inherits(control, "nmfkit_control")) {
    settings <- unclass(control)
    tol_set <- isTRUE(settings[["tol_set"]])
    settings[["tol_set"]] <- NULL
  } else if (is.list(control) && !is.object(control)) {
    check_setting_names(names(control), length(control), arg = arg,
                        call = call)
    if (is.null(default)) default <- do.call(nmf_control, declared$defaults)
    settings <- unclass(default)
    settings[["tol_set"]] <- NULL
    settings[names(control)] <- control
    tol_set <- "tol" %in% names(control) || isTRUE(default[["tol_set"]])
  } else {
    abort_nmfkit(c("{.arg {arg}} must be made by {.fn nmf_control} or be a named list of settings.",
                   "x" = "It is {.obj_type_friendly {control}}."),
                 "control", call = call, value = control)
  }
  out <- validate_settings(settings, prefix = paste0(arg, "$"), call = call)
  readers <- names(declared$settings)
  given <- setdiff(names(out), base_settings)
  foreign <- setdiff(given, readers)
  if (length(foreign)) {
    users <- readers_of(foreign[1])
    abort_nmfkit(c("{.code {arg}${foreign[1]}} is not a setting of {.fn {fn}}.",
                   "i" = "It is read by {.or {.fn {users}}}; {.fn {fn}} reads {.code {c(base_settings, readers)}}."),
                 "control", call = call, value = foreign[1])
  }
  for (nm in readers) {
    if (is.null(out[[nm]])) out[nm] <- list(declared$settings[[nm]]$default)
  }
  out$tol_set <- tol_set
  structure(out, class = "nmfkit_control")
}

# Names of settings: all named, no repeats, all known (with the nearest
# known name as a hint).
check_setting_names <- function(nm, n, arg, call = rlang::caller_env()) {
  if (n == 0L) return(invisible(NULL))
  if (is.null(nm) || anyNA(nm) || any(nm == "")) {
    abort_nmfkit(c("All settings in {.arg {arg}} must be named.",
                   "x" = "{sum(is.na(nm) | nm == '') + n * is.null(nm)} {?is/are} not."),
                 "control", call = call)
  }
  if (anyDuplicated(nm)) {
    abort_nmfkit(c("Each setting in {.arg {arg}} must be given once.",
                   "x" = "{.code {unique(nm[duplicated(nm)])}} {?is/are} repeated."),
                 "control", call = call)
  }
  known <- c(base_settings, names(all_settings()))
  unknown <- setdiff(nm, known)
  if (length(unknown)) {
    hint <- nearest_name(unknown[1], known)
    abort_nmfkit(c("{.code {unknown[1]}} is not an nmfkit setting.",
                   "i" = if (!is.null(hint)) "Did you mean {.code {hint}}?",
                   "i" = "Settings are {.code {known}}; see {.code ?nmf_control}."),
                 "control", call = call)
  }
  invisible(NULL)
}

# Checks every setting of a full list (base settings present, extras
# optional); errors name the setting as `prefix` + name.
validate_settings <- function(s, prefix, call) {
  check_setting_names(names(s), length(s), arg = sub("\\$$", "", prefix),
                      call = call)
  a <- function(nm) paste0(prefix, nm)
  out <- list(
    tol = check_number(s[["tol"]], min = 0, arg = a("tol"), call = call,
                       what = "control"),
    max_iter = check_count(s[["max_iter"]], min = 1, arg = a("max_iter"),
                           call = call, what = "control"),
    threads = check_threads(s[["threads"]], arg = a("threads"), call = call),
    verbose = check_flag(s[["verbose"]], arg = a("verbose"), call = call,
                         what = "control")
  )
  extras <- all_settings()
  for (nm in intersect(names(extras), names(s))) {
    if (!is.null(s[[nm]])) out[[nm]] <- extras[[nm]]$check(s[[nm]], a(nm), call)
  }
  out
}

# A thread count: a whole number, at least 1, capped (with a warning) at
# what the machine runs, so that the OpenMP runtime is never asked for
# threads it cannot create.
check_threads <- function(x, arg = rlang::caller_arg(x),
                          call = rlang::caller_env()) {
  if (!is_number(x) || x != round(x) || x < 1) {
    check_count(x, min = 1, arg = arg, call = call, what = "control")
  }
  cap <- max_threads()
  if (x > cap) {
    warn_nmfkit(c("{.arg {arg}} is {describe_value(x)}, more than the {cap} thread{?s} this machine runs; using {cap}.",
                  "i" = "Results do not depend on the number of threads."),
                "threads", call = call, value = x)
    x <- cap
  }
  as.integer(x)
}

# Threads OpenMP can run here (1 without OpenMP).
max_threads <- function() {
  max(1L, r_max_threads())
}
