#' Nonnegative matrix factorization
#'
#' Factorises a nonnegative matrix `x` (features in rows, samples in columns)
#' as `x ~ W H` with `W` (features x `rank`) and `H` (`rank` x samples)
#' nonnegative, minimising the Frobenius loss `||x - W H||^2 / 2`.
#'
#' `method = "auto"` (the default) picks the solver measured fastest to a
#' given error for the kind of data (see `bench/README.md`): `"anls"` for a
#' dense matrix and accelerated `"hals"` for a sparse one, its passes over
#' each factor chosen by Gillis and Glineur's (2012) cost rule (a pass
#' over a factor is repeated while it costs less than half of the product
#' and Gram matrix it reuses: 2 passes over `W` and 5 over `H` on the
#' benchmark's 20000 x 5000 matrix at rank 20) unless `control$inner` is
#' given; the fit records the solver it ran in `$method`
#' and the settings in `$control`. `method = "hals"` runs cyclic coordinate descent on the
#' Gram systems (hierarchical alternating least squares, the algorithm of
#' scikit-learn's `solver = "cd"`), `control$inner` passes over `W` then over
#' `H` per iteration, one component across all rows at a time;
#' `method = "mu"` runs Lee and Seung's multiplicative updates, and
#' `method = "anls"` alternating nonnegative least squares: each factor is
#' solved exactly given the other, by block principal pivoting (Kim and Park
#' 2011) warm-started from the previous iterate. `control$extrapolate`
#' adds Ang and Gillis's (2019) extrapolation between iterations, with its
#' restart rule (the loss never rises). All stop when the projected-gradient
#' violation falls to `control$tol` times its first value, or after
#' `control$max_iter` iterations.
#'
#' Starting points: `"auto"` (the default) is `"random"` for `"anls"` and for
#' `method = "auto"`, and `"nndsvda"` for a named `"hals"` or `"mu"`, so
#' dense and sparse storage of the same data give the same fit for a named
#' method. (ANLS from a random start measured 2-3 times fewer iterations
#' than from NNDSVDa; on the sparse benchmark the randomized SVD behind
#' NNDSVDa cost more than half of the whole fit, and HALS from a random start
#' reached the same error in 5 iterations instead of 3, in 0.26 s instead of
#' 0.55 s.) `"nndsvda"` is NNDSVD from a randomized
#' truncated SVD with zeros (entries below `1e-6 * sqrt(mean(x) / rank)`)
#' filled by `sqrt(mean(x) / rank)`, the typical size of a factor entry
#' (`rank` products of it make `mean(x)`); `"nndsvd"` keeps the zeros;
#' `"nndsvdar"` fills them with small uniform values (up to a hundredth of
#' that); `"random"` draws uniformly from `[0, sqrt(mean(x) / rank))`. Every
#' start scales like the factors, so `nmf(c * x)` runs the same iterations as
#' `nmf(x)` and returns `sqrt(c)` times its factors (scikit-learn fills with
#' `mean(x)`, which makes its fits depend on the scale of the data). All draws use R's RNG, so
#' `set.seed()` reproduces a fit, and any number of threads gives the same
#' result.
#'
#' Sparse input (`dgCMatrix`) stays sparse: no dense copy is made.
#' All-zero rows or columns are allowed: they are left out of the fit (which
#' then runs on the smaller matrix) and their rows of `W` or columns of `H`
#' come out exactly zero.
#'
#' @section Missing entries, masks and weights:
#' With `na = "omit"`, `weights` or `mask`, the loss is
#' `sum(a * (x - W H)^2) / 2` with entry weights `a` (0 for a missing or
#' masked entry) and `loss` traces `sqrt(sum(a * (x - WH)^2) / sum(a * x^2))`.
#' Each row of `W` and column of `H` then solves its own nonnegative least
#' squares problem, whose Gram matrix is the unmasked one corrected by one
#' outer product per masked (or reweighted) entry of that row or column, so
#' a few missing entries cost little. When missing entries outnumber four
#' times the stored entries per component (30 % of a sparse matrix), or are
#' at most 10 % of every row and column (the held-out entries of
#' [nmf_rank()]'s folds), they are instead filled in with the
#' current prediction at each update (the EM step for missing data, which
#' still lowers the masked loss every iteration but may need more
#' iterations; HALS and ANLS then run the unmasked engine's update, at the
#' cost of an unmasked fit). Every method (`"hals"`, `"mu"`,
#' `"anls"`) works. Starting points are computed from `x` with missing
#' entries set to 0. `fitted()` returns `W H` everywhere, so it fills in
#' (imputes) the missing entries; `residuals()` is `NA` there. Every row and
#' column must keep an observed entry of positive weight. With no `NA`, no
#' mask and unit (or no) weights, the fit is exactly the unmasked one.
#' Weights are used as a dense matrix; sparse data stay sparse with `NA`
#' entries and masks.
#'
#' @param x A nonnegative numeric matrix, numeric data frame or `dgCMatrix`,
#'   with samples as columns.
#' @param rank Number of components, from 1 to `min(dim(x))`.
#' @param method `"auto"`, `"hals"`, `"mu"` or `"anls"`.
#' @param init `"auto"`, `"nndsvda"`, `"nndsvd"`, `"nndsvdar"`, `"random"`,
#'   or a list
#'   `list(W = , H = )` of starting factors.
#' @param control Solver settings from [nmf_control()].
#' @param nrun Number of fits to run; the one with the lowest final loss is
#'   kept. Runs after the first start from `"random"` and go through
#'   `future.apply`, so `future::plan()` chooses where they run; they
#'   report progress through `progressr` (wrap the call in
#'   [progressr::with_progress()] to see it).
#' @param keep_data Keep a reference to `x` in the model (no copy is made), so
#'   that `fitted()` and `residuals()` work without passing the data again.
#' @param na `"fail"` (the default): an `NA` in `x` is an error; `"omit"`:
#'   `NA` entries (stored ones, for a `dgCMatrix`) are left out of the loss.
#' @param weights `NULL`, or a nonnegative matrix the shape of `x` (dense or
#'   sparse; a sparse one's unstored entries weigh 0) weighting the squared
#'   error entrywise. Weight 2 counts an entry twice; weight 0 leaves it out.
#' @param mask `NULL`; `"zeros"`, leaving out every unstored entry of a
#'   sparse `x` (every zero of a dense one), as recommender data need; or a
#'   logical matrix (base or `lgCMatrix`) whose `TRUE` entries are left out.
#'   See "Missing entries, masks and weights".
#' @return An object of class `c("nmfkit_nmf", "nmfkit")`: a list with `W`,
#'   `H`, `loss` (the relative error `||x - WH|| / ||x||` after each
#'   iteration, computed from the Gram matrices `W'W` and `HH'` without
#'   forming the residual: below about `1e-8` it is rounding, and an exact
#'   fit may show `1e-8` rather than 0), `iterations`, `status` (`"converged"`, `"max_iter"`,
#'   `"interrupted"`, `"numerical_error"` or `"degenerate"`: `W H` is zero,
#'   with a `nmfkit_warning_degenerate`), `call`, `control`, `rank`,
#'   `dimnames` and `method` (the solver that ran: `"auto"` is resolved).
#'   Row names of `x` name the rows of `W`, column
#'   names of `x` the columns of `H`; components are named `nmf1`, `nmf2`, ...
#' @seealso [predict.nmfkit()], [plot.nmfkit()], [summary.nmfkit()],
#'   [nmf_distance()].
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' fit <- nmf(x, rank = 17, nrun = 3)  # best of 3 starts
#' fit
#' plot(fit, type = "basis")
#' @export
nmf <- function(x, rank, method = c("auto", "hals", "mu", "anls"),
                init = "auto", control = nmf_control(), nrun = 1L,
                keep_data = TRUE, na = c("fail", "omit"), weights = NULL,
                mask = NULL) {
  call <- match.call()
  na <- check_choice(na)
  checked <- check_data(x, allow_na = na == "omit", with_scan = TRUE)
  x <- checked$x
  masked <- masked_setup(x, weights, mask)
  x_data <- x
  # the checks' read of x tells its scale and zero lines (not those of the
  # masked fit's data)
  scan <- if (is.null(masked)) checked$scan
  if (!is.null(masked)) x <- masked$x
  rank <- check_rank(rank, min(dim(x)))
  method <- check_choice(method)
  control <- check_control(control)
  nrun <- check_count(nrun, min = 1)
  check_flag(keep_data)
  image_dim <- attr(x, "image_dim")
  chosen <- method == "auto"
  # what the core runs: with method "auto" on sparse data, accelerated HALS
  # with the passes over each factor chosen by Gillis and Glineur's cost rule
  # (inner = "auto", which the glue maps to InnerPasses::automatic; the
  # model's control keeps the user's settings)
  engine <- control
  if (chosen && is.null(control$inner) && inherits(x, "sparseMatrix")) {
    engine$inner <- "auto"
  }
  method <- resolve_method(method, x)
  if (identical(init, "auto")) {
    init <- if (method == "anls" || chosen) "random" else "nndsvda"
  }

  # data near 1e-200 or .Machine$double.xmax: fit x / 2^e (exact), scale back
  e <- data_exponent(x, scan)
  xs <- scale_data(x, e)
  if (!is.null(masked)) masked$value <- scale_data(masked$value, e)
  # all-zero rows and columns are dropped and come back as exact zeros (a
  # masked fit keeps every line: its masks and weights are indexed by them;
  # scaling by 2^-e may flush tiny entries to zero, so then x is read again)
  keep <- if (is.null(masked)) nonzero_lines(xs, rank, if (e == 0) scan)
  xr <- kept_lines(xs, keep)
  start <- start_on_lines(xs, xr, keep, rank, init, control$threads, e)
  fit <- run_nmf(xr, start, method, engine, masked)
  if (nrun > 1L) {
    prog <- progressr::progressor(steps = nrun - 1L)
    others <- future.apply::future_lapply(seq_len(nrun - 1L), function(i) {
      fit <- run_nmf(xr, init_factors(xr, rank, "random", control$threads),
                     method, engine, masked)
      prog()
      fit
    }, future.seed = TRUE)
    finals <- vapply(c(list(fit), others), function(f) final_loss(f$loss),
                     numeric(1))
    fit <- c(list(fit), others)[[which.min(finals)]]
  }
  fit <- unscale_factors(fit, e)
  fit <- restore_fit(fit, keep)
  fit$status <- fit_status(fit$W, fit$H, fit$status)
  warn_status(fit$status, control, fit$iterations, call)
  model <- new_nmfkit(fit$W, fit$H, fit$loss, fit$iterations, fit$status,
                      call, control, variant = "nmf",
                      x = if (keep_data) x_data, dimnames = dimnames(x),
                      method = method, image_dim = image_dim)
  if (!is.null(masked)) {
    model$entry_weights <- masked[c("base", "i", "j", "delta")]
  }
  model
}

# The solver behind method = "auto": exact ANLS (block principal pivoting)
# for dense data, accelerated HALS for sparse data (measured fastest to a
# given error on each; bench/README.md).
resolve_method <- function(method, x) {
  if (method != "auto") return(method)
  if (inherits(x, "sparseMatrix")) "hals" else "anls"
}

# Rows and columns of x with a nonzero entry, as list(rows =, cols =)
# logical vectors; NULL when there is nothing to drop, or when dropping
# would leave fewer than `rank` rows or columns (then the fit runs on all of
# x, whose zero lines come out zero anyway).
nonzero_lines <- function(x, rank, scan = NULL) {
  # one read (or check_data()'s, passed as `scan`), no logical copy of the
  # data; a dgCMatrix may store explicit zeros, which do not make a line
  # nonzero
  if (is.null(scan)) scan <- scan_data(x)
  rows <- scan$rows
  cols <- scan$cols
  if (all(rows) && all(cols)) return(NULL)
  if (sum(rows) < rank || sum(cols) < rank) return(NULL)
  list(rows = rows, cols = cols)
}

# x restricted to the lines `keep` (from nonzero_lines(); NULL keeps all).
kept_lines <- function(x, keep) {
  if (is.null(keep)) x else x[keep$rows, keep$cols, drop = FALSE]
}

# The starting factors of a fit on xr = kept_lines(xs, keep): a named start
# is computed on xr itself; a user's list(W, H) is checked against the full
# xs (data scaled by 2^-e), rescaled and cut to the kept lines.
start_on_lines <- function(xs, xr, keep, rank, init, threads, e,
                           call = rlang::caller_env(), column_v = FALSE,
                           fill_value = NULL) {
  if (!is.list(init)) {
    return(init_factors(xr, rank, init, threads, call = call,
                        column_v = column_v, fill_value = fill_value))
  }
  start <- init_factors(xs, rank, init, threads, call = call,
                        column_v = column_v)
  start <- lapply(start, `*`, 2^(-e / 2))
  if (is.null(keep)) return(start)
  list(W = start$W[keep$rows, , drop = FALSE],
       H = start$H[, keep$cols, drop = FALSE])
}

# A fit on kept lines with W and H back at full size (dropped lines zero).
restore_fit <- function(fit, keep) {
  if (is.null(keep)) return(fit)
  fit$W <- restore_lines(fit$W, keep$rows, TRUE)
  fit$H <- restore_lines(fit$H, keep$cols, FALSE)
  fit
}

# A factor fitted on the kept lines, back at full size with zeros elsewhere.
restore_lines <- function(f, keep, by_row) {
  if (by_row) {
    out <- matrix(0, length(keep), ncol(f))
    out[keep, ] <- f
  } else {
    out <- matrix(0, nrow(f), length(keep))
    out[, keep] <- f
  }
  out
}

# The last loss of a run (Inf when it has none).
final_loss <- function(loss) if (length(loss)) loss[length(loss)] else Inf

# One run of the core solver from the starting factors `start`.
# `masked` (from masked_setup()) selects the masked and weighted solver.
run_nmf <- function(x, start, method, control, masked = NULL) {
  if (!is.null(masked)) {
    return(r_nmf_masked(x, start$W, start$H, method, control,
                        progress_callback(control), masked$base, masked$i,
                        masked$j, masked$delta, masked$value))
  }
  r_nmf(x, start$W, start$H, method, control, progress_callback(control))
}
