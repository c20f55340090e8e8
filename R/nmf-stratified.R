#' Stratified NMF: shared topics plus a shift per stratum
#'
#' Data collected in strata (regions, periods, income groups, newsgroups)
#' often share their topics while each stratum adds something of its own.
#' Stratified NMF (Chapman, Yaniv and Needell, 2023) models stratum `i`, a
#' features x samples matrix `X_i`, as
#' \deqn{X_i \approx v_i 1^T + W H_i,}{X_i ~ v_i 1' + W H_i,}
#' with one basis `W` shared by all strata, coefficients `H_i` for the
#' samples of stratum `i`, and a nonnegative shift vector `v_i` (one value per
#' feature) that is added to every sample of the stratum. It minimises
#' \eqn{\sum_i ||X_i - v_i 1^T - W H_i||_F^2}{sum_i ||X_i - v_i 1' - W H_i||^2}.
#' Read the shifts to see what makes each stratum different.
#'
#' The fit runs the paper's multiplicative updates. Each iteration updates
#' every shift `v_updates` times (all with the same `W` and `H`), then the
#' coefficients and the basis. `update_order = "gauss_seidel"` (the default)
#' updates `W` from the new coefficients, as in the paper's Algorithm 1,
#' whose Theorem 2 shows that the objective never increases;
#' `"jacobi"` updates both from the old factors, as the authors' code does.
#' `1e-9` (`nmf_control(eps = )`) times the data's scale is added to every
#' denominator (`eps * s` for the shifts and `eps * s^1.5` for `W` and `H`,
#' with `s` the root mean square of the data, the powers at which those
#' denominators scale), and nothing to the numerators: an entry that reaches zero stays zero (for example the
#' shift of a feature that is zero throughout its stratum).
#'
#' `nmf_control(update = "hals")` fits the same model by exact block
#' updates instead: each shift in closed form (the mean over its stratum of
#' what `W H_i` leaves, clipped at zero), then coordinate-descent passes
#' over `H` and over `W` (as [nmf()]'s HALS; `inner` passes, by default 1).
#' It reaches a given loss in far fewer iterations than the
#' multiplicative rules (see `bench/README.md`) and adds no `eps`;
#' `update_order` and `v_updates` do not apply to it.
#'
#' The paper stores samples as rows; nmfkit stores them as columns, so the
#' paper's `H` is `t(W)` here and its `W(i)` is `t(H_i)`.
#'
#' The fit runs `control$max_iter` iterations, as the authors' code does,
#' unless `tol` is set in [nmf_control()]: then it stops once an iteration
#' lowers the loss by no more than `tol` times its value.
#'
#' Sparse input (`dgCMatrix`) stays sparse: the rank-one shift terms are never
#' formed, the loss comes from small matrices. With one stratum only the model
#' is NMF with a nonnegative offset per feature; this is allowed.
#'
#' @param x Either a list of nonnegative matrices (or numeric data frames or
#'   `dgCMatrix`), one per stratum, with the same features in their rows and
#'   samples in their columns, named by stratum (unnamed lists get names
#'   `stratum1`, `stratum2`, ...); or one such matrix whose columns are the
#'   samples of all strata, with `strata` saying which column belongs where.
#' @param strata For a matrix `x`: a factor (or a character or integer vector)
#'   with one entry per column of `x`, without missing values or unused
#'   levels. Must be `NULL` when `x` is a list.
#' @param rank Number of shared components, from 1 to `min(dim(x))`.
#' @param update_order `"gauss_seidel"` or `"jacobi"`, see Details.
#' @param v_updates Number of shift updates per iteration (the paper's `M`),
#'   a whole number, at least 0 (0 keeps the shifts at their start).
#' @param init `"random"`, the authors' start made scale-aware (shifts
#'   uniform on `[0, s)`, `W` and `H` uniform on `[0, sqrt(s))` divided by
#'   `sqrt(rank)`, with `s = mean(x)`; the authors draw on `[0, 1)`, which
#'   makes the fit depend on the units of the data); `"authors"`, their
#'   draws exactly (on `[0, 1)` whatever the data's scale: not
#'   scale-equivariant, but it reproduces the paper's results); or a list `list(W = , H = , V = )` of starting factors (`H` with
#'   columns in the order of the samples of `x`, `V` features x strata).
#' @param control Solver settings from [nmf_control()]: `max_iter` (default
#'   100), `threads`, `verbose`, `tol` (see Details) and the extra `eps`
#'   (default `1e-9`).
#' @return An object of class `c("nmfkit_stratified", "nmfkit")`, a list with
#'   `W` (features x `rank`, the shared basis), `H` (`rank` x samples, columns
#'   in the order of `x`, or of the list's matrices one after another), `V`
#'   (features x strata, columns named by stratum), `strata` (the stratum of
#'   each sample, a factor), `loss` (the square root of the objective after
#'   each iteration), `normalized_loss` (`loss` divided by the Frobenius norm
#'   of all the data, the paper's normalised loss), `initial_loss` (the loss
#'   of the starting factors), `update_order`, `v_updates` and the fields of
#'   every nmfkit model. Fitting `c * x` takes the same iterations and gives
#'   `sqrt(c)` times `W` and `H`, `c` times `V` and the loss.
#' @param nrun Number of fits to run; the one with the lowest final loss is
#'   kept (as in [nmf()]: the runs after the first start from `"random"`,
#'   all starts drawn first from R's RNG).
#' @param keep_data Keep a reference to the data (no copy is made) for
#'   [fitted()] and [residuals()]; with `FALSE` pass the data to them as `x`.
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @references Chapman, J., Yaniv, Y. and Needell, D. (2023). Stratified-NMF
#'   for heterogeneous data. 57th Asilomar Conference on Signals, Systems, and
#'   Computers. \doi{10.48550/arXiv.2311.10789}
#' @seealso [predict.nmfkit_stratified()], [plot.nmfkit_stratified()],
#'   [top_features()], [summary.nmfkit_stratified()].
#' @examples
#' # three strata sharing two topics, each with its own shift
#' set.seed(1)
#' W <- matrix(runif(20 * 2), 20, 2)
#' x <- lapply(1:3, function(i) {
#'   W %*% matrix(runif(2 * 30), 2, 30) + i * (1:20 == 5 * i)
#' })
#' names(x) <- c("a", "b", "c")
#' fit <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 500))
#' fit
#' round(fit$V[c(5, 10, 15), ], 2)
#'
#' # the same data as one matrix and a factor
#' fit2 <- nmf_stratified(do.call(cbind, x), strata = rep(names(x), each = 30),
#'                        rank = 2)
#' @export
nmf_stratified <- function(x, rank, strata = NULL,
                           update_order = c("gauss_seidel", "jacobi"),
                           v_updates = 2, init = "random",
                           control = nmf_control(max_iter = 100),
                           nrun = 1L, keep_data = TRUE, ...) {
  check_dots_empty()
  call <- match.call()
  # strata came before rank: nmf_stratified(x, strata, rank) still works
  if (!missing(rank) && is_number(strata) &&
      (is.null(rank) || length(rank) > 1L || !is.numeric(rank))) {
    deprecate_nmfkit("giving {.arg strata} before {.arg rank}",
                     "{.code nmf_stratified(x, rank, strata = )}",
                     "nmf_stratified")
    swap <- rank
    rank <- strata
    strata <- swap
  }
  input <- stratified_input(x, strata)
  x <- input$x
  rank <- check_rank(rank, min(dim(x)),
                     why = sprintf(paste("the smaller dimension of the strata",
                                         "side by side, %d x %d"),
                                   nrow(x), ncol(x)))
  update_order <- check_choice(update_order)
  v_updates <- check_count(v_updates, min = 0)
  control <- check_control(control, fn = "nmf_stratified")
  nrun <- check_count(nrun, min = 1)
  check_flag(keep_data)
  spec <- list(strata = input$strata, group = input$group,
               update_order = update_order, v_updates = v_updates,
               image_dim = input$image_dim, features = rownames(x))
  fit_variant("stratified", x, rank, init, control, nrun, keep_data, spec,
              call)
}

declare_variant(
  "stratified", fn = "nmf_stratified", label = "Stratified NMF",
  loss_name = "loss",
  settings = list(
    inner = setting_inner,
    eps = setting(1e-9, function(x, arg, call) {
      check_number(x, min = 0, arg = arg, call = call, what = "control")
    }),
    update = setting("multiplicative", function(x, arg, call) {
      check_choice(x, c("multiplicative", "hals"), arg = arg, call = call,
                   what = "control")
    })
  ),
  defaults = list(max_iter = 100),
  # W and H scale as sqrt(x); the shifts and the loss (the square root of
  # the objective) as x
  scale = c(W = 0.5, H = 0.5, V = 1, loss = 1, initial_loss = 1),
  start = function(x, rank, init, spec, control, full) {
    stratified_init(x, nlevels(spec$strata), rank, init, call = spec$call)
  },
  run = function(x, start, spec, control) {
    # the core stops on tol only when the user set it (tol = 0 runs
    # max_iter iterations, as the reference code does)
    engine <- control
    if (!isTRUE(control$tol_set)) engine$tol <- 0
    r_nmf_stratified(x, spec$group, start$W, start$H, start$V,
                     spec$update_order, spec$v_updates, engine,
                     progress_callback(control))
  },
  # the fit is W H plus the shifts: V with a row of ones per stratum
  status_factors = function(fit) {
    list(W = cbind(fit$W, fit$V),
         H = rbind(fit$H, matrix(1, ncol(fit$V), ncol(fit$H))))
  },
  model = function(fit, spec) {
    V <- fit$V
    dimnames(V) <- list(spec$features, levels(spec$strata))
    list(V = V, strata = spec$strata, normalized_loss = fit$normalized_loss,
         initial_loss = fit$initial_loss, update_order = spec$update_order,
         v_updates = spec$v_updates, image_dim = spec$image_dim)
  }
)

# Input of nmf_stratified() and predict(): a list of strata, or a matrix and
# a factor over its columns. Returns list(x = one matrix with all samples,
# strata = factor, group = 0-based integer stratum per column, image_dim).
# With `levels` (predict), strata must be among these known levels.
stratified_input <- function(x, strata, levels = NULL, arg = "x",
                             call = rlang::caller_env()) {
  if (missing(x)) {
    abort_nmfkit("{.arg {arg}} is missing: give the strata's data.",
                 "missing", call = call)
  }
  if (is.list(x) && !is.data.frame(x)) {
    if (!is.null(strata)) {
      abort_nmfkit(c("{.arg strata} must be {.code NULL} when {.arg {arg}} is a list of strata.",
                     "i" = "The list's names are the strata."),
                   "strata", call = call)
    }
    parts <- stratified_list(x, arg, call)
    image_dim <- attr(x[[1]], "image_dim")
    strata <- factor(rep(names(parts), vapply(parts, ncol, integer(1))),
                     levels = names(parts))
    x <- if (length(parts) == 1L) parts[[1]] else do.call(cbind, unname(parts))
    if (is.null(levels)) check_some_nonzero(x, arg, call)
  } else {
    image_dim <- attr(x, "image_dim")
    x <- if (is.null(levels)) check_data(x, arg = arg, call = call)
         else check_data(x, arg = arg, call = call, allow_zero_matrix = TRUE)
    strata <- check_strata(strata, ncol(x), is.null(levels), call)
  }
  if (!is.null(levels)) strata <- match_strata(strata, levels, call, arg)
  list(x = x, strata = strata, group = as.integer(strata) - 1L,
       image_dim = image_dim)
}

# The strata of a list input, checked and made one type (all dgCMatrix when
# any is sparse).
stratified_list <- function(x, arg, call) {
  if (!length(x)) {
    abort_nmfkit(c("{.arg {arg}} must hold at least one stratum.",
                   "x" = "It is an empty list."), "strata", call = call)
  }
  nm <- names(x)
  if (is.null(nm)) nm <- paste0("stratum", seq_along(x))
  if (anyNA(nm) || any(nm == "") || anyDuplicated(nm)) {
    bad <- unique(nm[is.na(nm) | nm == "" | duplicated(nm)])
    abort_nmfkit(c("The strata in {.arg {arg}} must have distinct, non-empty names.",
                   "x" = "Found {.val {bad}}."), "strata", call = call)
  }
  names(x) <- nm
  parts <- lapply(nm, function(s) {
    el <- x[[s]]
    el_arg <- sprintf("%s[[\"%s\"]]", arg, s)
    if (!is.null(dim(el)) && length(dim(el)) == 2L && ncol(el) == 0L) {
      abort_nmfkit(c("Every stratum must have at least one sample (column).",
                     "x" = "Stratum {.val {s}} ({.arg {el_arg}}) has none."),
                   "strata", call = call)
    }
    check_data(el, arg = el_arg, call = call, allow_zero_matrix = TRUE)
  })
  names(parts) <- nm
  rows <- vapply(parts, nrow, integer(1))
  if (length(unique(rows)) > 1L) {
    abort_nmfkit(c("All strata in {.arg {arg}} must have the same number of rows (features).",
                   "x" = "Row counts: {paste0(nm, ' ', rows, collapse = ', ')}.",
                   "i" = "Columns are samples; transpose with {.fn t} if your samples are rows."),
                 "dimension", call = call)
  }
  if (any(vapply(parts, inherits, logical(1), "dgCMatrix"))) {
    parts <- lapply(parts, function(p) {
      if (inherits(p, "dgCMatrix")) return(p)
      as_dgc(Matrix::Matrix(p, sparse = TRUE), arg, call)
    })
  }
  parts
}

check_some_nonzero <- function(x, arg, call) {
  vals <- if (inherits(x, "dgCMatrix")) x@x else x
  if (!any(vals != 0)) {
    abort_nmfkit(c("{.arg {arg}} must have at least one nonzero entry.",
                   "x" = "All strata are zero."), "zero", call = call)
  }
}

# The `strata` factor of a matrix input.
check_strata <- function(strata, n_samples, fitting, call) {
  if (is.null(strata)) {
    abort_nmfkit(c("{.arg strata} must say which stratum each column of {.arg x} belongs to.",
                   "i" = "Pass a factor with one entry per column, or a list of matrices as {.arg x}."),
                 "strata", call = call)
  }
  if (!(is.factor(strata) || is.character(strata) || is.numeric(strata)) ||
      !is.null(dim(strata))) {
    abort_nmfkit(c("{.arg strata} must be a factor or a character or integer vector.",
                   "x" = "It is {.obj_type_friendly {strata}}."),
                 "strata", call = call)
  }
  if (length(strata) != n_samples) {
    abort_nmfkit(c("{.arg strata} must have one entry per column of {.arg x} ({n_samples}).",
                   "x" = "It has {length(strata)} entr{?y/ies}."),
                 "strata", call = call)
  }
  if (anyNA(strata)) {
    abort_nmfkit(c("{.arg strata} must not contain missing values.",
                   "x" = "It has {sum(is.na(strata))} NA{?s}; the first at position {which(is.na(strata))[1]}."),
                 "strata", call = call)
  }
  if (!is.factor(strata)) strata <- factor(strata)
  empty <- levels(strata)[tabulate(strata, nlevels(strata)) == 0L]
  if (fitting && length(empty)) {
    abort_nmfkit(c("Every stratum must have at least one sample.",
                   "x" = "{cli::qty(length(empty))}Level{?s} {.val {empty}} of {.arg strata} {?has/have} no samples.",
                   "i" = "Drop unused levels with {.fn droplevels}."),
                 "strata", call = call)
  }
  strata
}

# Strata of new samples, recoded to the levels of the fit.
match_strata <- function(strata, levels, call, arg = "newdata") {
  lab <- as.character(strata)
  unknown <- setdiff(unique(lab), levels)
  if (length(unknown)) {
    abort_nmfkit(c("The strata of {.arg {arg}} must be strata of the fit.",
                   "x" = "{cli::qty(length(unknown))}Unknown strat{?um/a}: {.val {unknown}}.",
                   "i" = "The fit has {.val {levels}}."),
                 "strata", call = call)
  }
  factor(lab, levels = levels)
}

# Starting factors: the authors' uniform draws, or the user's list.
stratified_init <- function(x, n_strata, rank, init,
                            call = rlang::caller_env()) {
  m <- nrow(x)
  n <- ncol(x)
  if (is.list(init)) {
    start <- check_init_list(init, list(W = c(m, rank), H = c(rank, n),
                                        V = c(m, n_strata)), call = call)
    # the multiplicative updates keep a zero a zero: a start with W H = 0
    # (no component with a nonzero column of W and row of H) stays there
    used <- colSums(start$W) > 0 & rowSums(start$H) > 0
    if (!any(used)) {
      abort_nmfkit(c("{.arg init} must give a nonzero {.code W %*% H}: the multiplicative updates never move a zero factor.",
                     "x" = "Every component has an all-zero column of {.field init$W} or row of {.field init$H}.",
                     "i" = "Start from {.val random}, or give positive entries."),
                   "init", call = call)
    }
    return(start)
  }
  if (!(identical(init, "random") || identical(init, "authors"))) {
    abort_nmfkit(c("{.arg init} must be {.val random}, {.val authors} or a list(W = , H = , V = ).",
                   "x" = "It is {.obj_type_friendly {init}}."),
                 "init", call = call)
  }
  # "random": the authors' draws in the units of the data, so that c * x
  # starts from c times the shifts and sqrt(c) times W and H; "authors":
  # their draws as they are (units of 1, whatever the data's)
  s <- if (init == "random") sum(x) / (as.double(m) * n) else 1
  V <- matrix(stats::runif(m * n_strata), m, n_strata) * s
  H <- matrix(stats::runif(rank * n), rank, n) * sqrt(s / rank)
  W <- matrix(stats::runif(m * rank), m, rank) * sqrt(s / rank)
  list(W = W, H = H, V = V)
}
