#' Tune an NMF by cross-validation over a grid
#'
#' Cross-validates every setting of a grid of ranks, penalties, losses and
#' variants on the same held-out folds and reports the held-out error of
#' each, the setting of lowest mean error and the one-standard-error
#' choice. It is [nmf_rank()]'s cross-validation (`method = "cv"`) with more
#' than the rank to choose.
#'
#' @section The grid:
#' The grid is the cross product of `rank`, `loss` (for [nmf()] fits),
#' `variant` and the tuning values in `grid`: a named list of vectors,
#' crossed with each other (`grid = list(l1 = c(0, 0.1, 1))`), or a data
#' frame whose rows are the combinations to try (paired values, such as
#' `data.frame(l1_W = c(0, 0.1), l1_H = c(0, 1))`). The tuning parameters
#' are, for `variant = "nmf"`, the penalty weights of [nmf()] (`l1`, `l2`,
#' `l1_W`, `l1_H`, `l2_W`, `l2_H`, given to each fit as `penalty`), and for
#' `"manifold"` the graph weight `lambda` of [nmf_manifold()]. With several
#' variants, a column is tried with the variants that take it (and is `NA`
#' in the others' rows); `loss` applies to the `"nmf"` rows (it is `NA` in
#' the others). Every other argument in `...` (such as `init`, `control`,
#' `method`, `nrun`, `k`) is passed unchanged to every fit whose function
#' takes it (with both variants, an argument both take, such as `method`,
#' goes to both). A fixed `penalty` in `...` is kept in every `"nmf"` row,
#' the grid's weights added to it (`penalty = c(l2 = 0.01), grid =
#' list(l1_H = c(0, 0.1))`).
#'
#' @section Held-out folds and scores:
#' The folds are drawn once, from R's RNG, and every grid row is fitted and
#' scored on the same folds, so the rows' errors differ by their settings
#' only (and the fits' own random starts). `holdout = "entries"` holds out
#' `nfolds` disjoint random sets of entries, each a `fraction` of the
#' observed ones, fitted with the held-out entries masked (the folds of
#' [nmf_rank()], whose details for sparse data and `NA` apply): it needs
#' fits that take a `mask`, which [nmf()] does and [nmf_manifold()] does
#' not. `holdout = "blocks"` is bi-cross-validation (Owen and Perry 2009):
#' the rows and the columns are each split at random into `nfolds` groups;
#' fold `k` holds out the block of row group `k` x column group `k`. The
#' fit sees every column but those of the block (all rows), the held-out
#' columns' coefficients are solved with the basis fixed on the rows not
#' held out (nonnegative least squares, as [predict()] does; under a
#' divergence loss, that loss's projection), and the block is predicted by
#' the held-out rows of the basis times those coefficients. `fraction` is
#' not used; a fold holds out about `1 / nfolds^2` of the entries. The
#' fits are then on `1 - 1 / nfolds` of the columns, so the largest rank is
#' the smaller of the rows and columns left outside a block. `"auto"` (the
#' default) takes `"entries"` when every variant takes a mask and
#' `"blocks"` otherwise: one scheme for the whole grid, so every row's
#' error is comparable.
#'
#' Data read in blocks (a `DelayedMatrix`) are refused
#' (`nmfkit_error_streamed`), for the reason [nmf_rank()] gives: held-out
#' entries make every column's coefficients solve their own system.
#'
#' Held-out errors under different losses are not comparable, so every row
#' is scored by one loss, `score` (by default the first of `loss`): the
#' relative error `sqrt(sum((x - pred)^2) / sum(x^2))` over the held-out
#' entries for Frobenius, the held-out divergence relative to that of the
#' mean of `x` for a beta-divergence (as in [nmf_rank()]). A row fitted
#' under KL and scored by Frobenius is thus judged by how well it predicts
#' the held-out values in squares.
#'
#' @section The choice:
#' `best` holds the row of lowest mean error (`"min"`) and the
#' one-standard-error choice (`"one_se"`): among the rows whose mean error
#' is within one standard error (over folds) of the lowest mean, the
#' simplest: the smallest rank, then the largest sum of the tuning values
#' (the most regularised: larger penalties and larger `lambda` constrain
#' the fit more), then the lowest mean error.
#'
#' @section Where the fits run:
#' One future per grid row and fold, through [future.apply::future_lapply()]
#' with `future.seed = TRUE` and the costliest fits (highest ranks) spread
#' over the workers' chunks, so `future::plan()` chooses where they run and
#' `set.seed()` gives the same numbers on every plan. Progress is reported
#' through `progressr`. With `rank` alone (no `grid`, one loss, `"nmf"`),
#' the fits and errors are exactly those of `nmf_rank(x, rank, method =
#' "cv")` with the same seed.
#'
#' `variant = "wasserstein"` is not supported: [nmf_wasserstein()] takes no
#' mask, and a bi-cross-validation block cannot be scored by its loss (an
#' optimal-transport cost needs whole histograms, and the held-out rows are
#' bins of them), so its held-out error would be on another scale than its
#' fit. Compare its settings by their fits, or tune the rank with
#' `variant = "nmf"` on the same data.
#'
#' @param x A nonnegative matrix or `dgCMatrix` (samples as columns); `NA`
#'   entries are left out of every fit and never held out (`"entries"`
#'   only). Or data in a container, as for [nmf()] (see
#'   [nmfkit-containers]).
#' @param rank Ranks to try: whole numbers from 1 to `min(dim(x))` (for
#'   `"blocks"`, the rows and columns outside a block).
#' @param ... Arguments passed unchanged to every fit (see "The grid").
#'   `x`, `rank`, `mask` and `keep_data` are `nmf_tune()`'s to set.
#' @param variant `"nmf"` ([nmf()]), `"manifold"` ([nmf_manifold()]) or
#'   both.
#' @param loss Losses of the `"nmf"` fits to try: names or numbers as
#'   [nmf()]'s `loss` takes (a vector or list).
#' @param grid `NULL`, a named list of vectors of tuning values (crossed),
#'   or a data frame of combinations (see "The grid").
#' @param score The loss every row is scored by; `NULL` for the first of
#'   `loss`.
#' @param holdout `"auto"`, `"entries"` or `"blocks"` (see "Held-out folds
#'   and scores").
#' @param fraction Fraction of the observed entries held out per fold
#'   (`"entries"`), in `(0, 0.5]`.
#' @param nfolds Number of folds, at least 2.
#' @param assay The assay (or Seurat layer) of a container `x`, as in
#'   [nmf()].
#' @return An object of class `nmfkit_tune`: a list with `results` (one row
#'   per grid row and fold: the grid's columns, `fold` and `error`),
#'   `summary` (one row per grid row: the grid's columns, `mean` and `se`
#'   of the error over folds), `best` (the `"min"` and `"one_se"` rows of
#'   `summary`, with a column `choice`), `grid`, `score` (the scoring loss's
#'   name and beta), `holdout`, `nfolds`, `fraction` and `call`. See
#'   [print.nmfkit_tune()] for its methods.
#' @references Owen, A. B. and Perry, P. O. (2009). Bi-cross-validation of
#'   the SVD and the nonnegative matrix factorization. *Annals of Applied
#'   Statistics* 3(2), 564-594.
#' @seealso [nmf_rank()] for the rank alone (and consensus clustering).
#' @examples
#' set.seed(1)
#' w <- matrix(runif(40 * 3), 40)
#' h <- matrix(runif(3 * 30), 3) * (runif(90) < 0.4)
#' x <- w %*% h + matrix(runif(40 * 30), 40) * 0.05
#' tu <- nmf_tune(x, rank = 2:4, grid = list(l1 = c(0, 0.01)), nfolds = 2,
#'                fraction = 0.1, control = nmf_control(max_iter = 50))
#' tu
#' tidy(tu)
#' plot(tu)
#' @export
nmf_tune <- function(x, rank, ..., variant = "nmf", loss = "frobenius",
                     grid = NULL, score = NULL,
                     holdout = c("auto", "entries", "blocks"),
                     fraction = 0.05, nfolds = 3L, assay = "counts") {
  call <- match.call()
  original <- if (!missing(x)) x  # input_matrix() reports a missing x
  x <- input_matrix(x, assay)
  abort_streamed_holdout(x, "nmf_tune", call = call)
  x <- check_data(x, allow_na = TRUE)
  if (missing(rank)) {
    abort_nmfkit("{.arg rank} is missing: give the ranks to try.", "missing")
  }
  variant <- check_tune_variant(variant)
  holdout <- check_choice(holdout)
  if (holdout == "auto") {
    holdout <- if (all(variant == "nmf")) "entries" else "blocks"
  } else if (holdout == "entries" && any(variant != "nmf")) {
    abort_nmfkit(c("{.code holdout = \"entries\"} masks the held-out entries, and {.fn nmf_manifold} takes no mask.",
                   "i" = "Use {.code holdout = \"blocks\"} (bi-cross-validation) for {.val manifold}."),
                 "holdout", value = holdout)
  }
  fraction <- check_fraction(fraction)
  nfolds <- check_count(nfolds, min = 2, max = min(dim(x)))
  if (holdout == "entries") check_fold_count(nfolds, fraction)
  has_na <- anyNA(if (inherits(x, "dgCMatrix")) x@x else x)
  if (holdout == "blocks" && has_na) {
    abort_nmfkit(c("{.code holdout = \"blocks\"} needs {.arg x} without {.code NA}: the held-out columns' coefficients are solved on every row outside the block.",
                   "x" = "{.arg x} has {sum(is.na(if (inherits(x, 'dgCMatrix')) x@x else x))} missing entr{?y/ies}."),
                 "value")
  }
  ranks <- if (holdout == "blocks") {
    check_ranks(rank, min(nrow(x) - ceiling(nrow(x) / nfolds),
                          ncol(x) - ceiling(ncol(x) / nfolds)),
                arg = "rank", why = "the rows and columns outside a block")
  } else {
    check_ranks(rank, min(dim(x)), arg = "rank", 
                why = rank_bound(x, original, assay))
  }
  losses <- check_tune_losses(loss, variant)
  # the score defaults to the first loss: a bad one is reported as `loss`
  score_arg <- if (is.null(score)) "loss" else "score"
  score <- check_loss(score %||% loss_arg(losses[1]), arg = score_arg)
  has_zero <- if (inherits(x, "dgCMatrix")) {
    length(x@x) < length(x) || any(x@x == 0, na.rm = TRUE)
  } else {
    any(x == 0, na.rm = TRUE)
  }
  if (score$positive && has_zero) {
    abort_nmfkit(c("{.arg {score_arg}} {.val {score$name}} scores held-out zeros as infinite, and {.arg x} has zeros.",
                   "i" = if (score_arg == "loss") "The held-out error is scored by the first {.arg loss} unless {.arg score} is given: give {.code score = \"frobenius\"} or {.code score = \"kl\"}." else "Score by {.val frobenius} or {.val kl}."),
                 "loss", value = score$name)
  }
  dots <- list(...)
  check_tune_dots(dots, variant, names(grid), ncol(x))
  if (!is.null(dots$penalty)) {
    check_penalty(dots$penalty, arg = "penalty")
    dots$penalty <- unlist(dots$penalty)
  }
  grid <- tune_grid(ranks, losses, variant, grid, dots$penalty)
  args <- if (has_na) list(na = "omit") else list()
  out <- tune_cv(x, grid, fraction, nfolds, holdout, score, dots, args,
                 call = rlang::current_env())
  out$grid <- grid
  out$score <- c(name = score$name, beta = format(score$beta))
  out$holdout <- holdout
  out$nfolds <- nfolds
  out$fraction <- fraction
  out$call <- call
  structure(out, class = "nmfkit_tune")
}

# The tuning parameters of each variant nmf_tune() supports; the other
# variants are known and refused with the reason.
tune_params <- list(nmf = c("l1", "l2", "l1_W", "l1_H", "l2_W", "l2_H"),
                    manifold = "lambda")
tune_functions <- list(nmf = "nmf", manifold = "nmf_manifold")

# The cross-validation of a grid: the folds drawn once, one task per grid
# row and fold (rows by rank for the balanced order), each fit on its fold
# and scored by `score`.
tune_cv <- function(x, grid, fraction, nfolds, holdout, score, dots, args,
                    call = rlang::caller_env()) {
  cv <- cv_folds(x, fraction, nfolds, holdout = holdout, call = call)
  tasks <- expand.grid(fold = seq_len(nfolds), row = seq_len(nrow(grid)))
  out <- cv_run(grid$rank[tasks$row], function(t) {
    g <- grid[tasks$row[t], , drop = FALSE]
    f <- cv$folds[[tasks$fold[t]]]
    # the fits' warnings about their penalty or a zero or non-finite fit
    # are said once for all the fits, as the convergence warnings are
    seen <- stats::setNames(numeric(length(tune_warnings)), tune_warnings)
    run <- withCallingHandlers(
      tune_fit(x, g, f, dots, args, call),
      nmfkit_warning = function(w) {
        cls <- paste0("nmfkit_warning_", tune_warnings)
        hit <- tune_warnings[inherits(w, cls, which = TRUE) > 0]
        if (length(hit)) {
          seen[hit] <<- 1
          invokeRestart("muffleWarning")
        }
      })
    c(fold_error(cv, f, run$model, score, x), run$capped, seen)
  }, size = 2L + length(tune_warnings))
  warn_capped(out[2, ], call = call)
  warn_tune_fits(out[-(1:2), , drop = FALSE], call)
  results <- grid[tasks$row, , drop = FALSE]
  results$fold <- tasks$fold
  results$error <- out[1, ]
  rownames(results) <- NULL
  summary <- tune_summary(results, grid)
  list(results = results, summary = summary, best = tune_best(summary))
}

# Warnings of the fits that nmf_tune() gathers into one each.
tune_warnings <- c("penalty", "degenerate", "numerical")

warn_tune_fits <- function(seen, call) {
  what <- c(penalty = "about their penalty (one-sided, or so strong that the fit is no better than the baseline)",
            degenerate = "that their fit is zero (W H = 0)",
            numerical = "of a numerical error")
  for (q in seq_along(tune_warnings)) {
    n_hit <- sum(seen[q, ] > 0)
    if (n_hit == 0) next
    warn_nmfkit(c("{n_hit} of {ncol(seen)} fits warned {what[[tune_warnings[q]]]}.",
                  "i" = "Fit that row of the grid on its own to see the warning."),
                tune_warnings[q], call = call)
  }
}

# One fit of grid row `g` on fold `f`: masked (entries) or on the columns
# outside the block (blocks).
tune_fit <- function(x, g, f, dots, args, call) {
  v <- g$variant
  blocks <- !is.null(f$cols)
  xf <- if (blocks) x[, -f$cols, drop = FALSE] else x
  base <- list(xf, rank = g$rank)
  if (!blocks) base$mask <- fold_mask(x, f)
  base$keep_data <- FALSE
  pars <- unlist(g[intersect(names(g), tune_params[[v]])])
  pars <- pars[!is.na(pars)]
  takes <- tune_takes(v)
  dots <- dots[names(dots) %in% takes]
  if (v == "nmf") {
    base$loss <- loss_arg(g$loss)
    if (length(pars)) {
      # the grid's weights on top of the fixed ones in `...`
      pen <- dots$penalty %||% numeric()
      pen[names(pars)] <- pars
      base$penalty <- pen
      dots$penalty <- NULL
    }
  } else {
    base <- c(base, as.list(pars))
    if (blocks && !is.null(dots$graph)) {
      dots$graph <- dots$graph[-f$cols, -f$cols, drop = FALSE]
    }
  }
  fn <- get(tune_functions[[v]], envir = asNamespace("nmfkit"))
  quiet_fit(fn, c(base, args[names(args) %in% takes], dots), xf, g$rank,
            call, signed_w = v != "nmf")
}

# The names of arguments a variant's function takes (nmf_manifold()'s
# knobs through its `...` included).
tune_takes <- function(v) {
  fn <- get(tune_functions[[v]], envir = asNamespace("nmfkit"))
  c(setdiff(names(formals(fn)), "..."),
    if (v == "manifold") manifold_settings)
}

# nmf()'s `loss` from a grid's loss label (a name, or a beta as text).
loss_arg <- function(label) {
  if (label %in% c("frobenius", "kl", "is")) label else as.numeric(label)
}

# Mean and standard error over folds of each grid row.
tune_summary <- function(results, grid) {
  row <- rep(seq_len(nrow(grid)), each = nrow(results) / nrow(grid))
  by_row <- split(results$error, row)
  s <- grid
  s$mean <- vapply(by_row, mean, numeric(1))
  s$se <- vapply(by_row, function(e) stats::sd(e) / sqrt(length(e)),
                 numeric(1))
  rownames(s) <- NULL
  s
}

# The rows of lowest mean error and the one-standard-error choice: within
# one standard error of the lowest mean, the smallest rank, then the
# largest sum of tuning values, then the lowest mean.
tune_best <- function(s) {
  lo <- which.min(s$mean)
  near <- which(s$mean <= s$mean[lo] + s$se[lo])
  pars <- intersect(names(s), unlist(tune_params))
  strength <- if (length(pars)) {
    rowSums(replace(as.matrix(s[pars]), is.na(as.matrix(s[pars])), 0))
  } else {
    numeric(nrow(s))
  }
  pick <- near[order(s$rank[near], -strength[near], s$mean[near])[1]]
  best <- s[c(lo, pick), , drop = FALSE]
  best <- cbind(choice = c("min", "one_se"), best, stringsAsFactors = FALSE)
  rownames(best) <- NULL
  best
}

# The grid: rank fastest, then the tuning values, then loss, per variant;
# columns rank, the tuning parameters, loss, variant.
tune_grid <- function(ranks, losses, variant, grid, fixed_penalty = NULL,
                      call = rlang::caller_env()) {
  grid <- check_tune_grid(grid, variant, call)
  params <- names(grid)
  parts <- lapply(variant, function(v) {
    own <- intersect(params, tune_params[[v]])
    vals <- if (!length(own)) {
      data.frame(row.names = 1L)
    } else if (is.data.frame(grid)) {
      unique(grid[own])
    } else {
      expand.grid(grid[own], KEEP.OUT.ATTRS = FALSE)
    }
    if (v == "nmf" && length(own)) {
      for (r in seq_len(nrow(vals))) {
        pen <- fixed_penalty %||% numeric()
        pen[own] <- unlist(vals[r, , drop = FALSE])
        check_penalty(pen, arg = "grid", call = call)
      }
    }
    lv <- if (v == "nmf") losses else NA_character_
    idx <- expand.grid(rank = ranks, p = seq_len(nrow(vals)), loss = lv,
                       KEEP.OUT.ATTRS = FALSE, stringsAsFactors = FALSE)
    out <- data.frame(rank = idx$rank)
    for (p in params) {
      out[[p]] <- if (p %in% own) as.double(vals[[p]][idx$p]) else NA_real_
    }
    out$loss <- idx$loss
    out$variant <- v
    out
  })
  out <- do.call(rbind, parts)
  rownames(out) <- NULL
  out
}

# `grid`: NULL, a named list of nonempty numeric vectors or a data frame
# of numeric columns; every name a tuning parameter of some variant.
check_tune_grid <- function(grid, variant, call) {
  if (is.null(grid)) return(list())
  ok <- is.list(grid) && length(grid) && !is.null(names(grid)) &&
    all(nzchar(names(grid))) && !anyDuplicated(names(grid))
  if (!ok) {
    abort_nmfkit(c("{.arg grid} must be a named list of vectors or a data frame of tuning values.",
                   "x" = "It is {describe_value(grid)}.",
                   "i" = "For example {.code grid = list(l1 = c(0, 0.1, 1))}."),
                 "grid", call = call, value = grid)
  }
  own <- intersect(names(grid), c("rank", "loss", "variant"))
  if (length(own)) {
    abort_nmfkit(c("{.arg grid} must not hold {.arg {own}}: give {cli::qty(length(own))}{?it/them} as {.fn nmf_tune}'s own argument{?s}.",
                   "i" = "Their values are crossed with the grid."),
                 "grid", call = call)
  }
  valid <- unique(unlist(tune_params[variant]))
  bad <- setdiff(names(grid), valid)
  if (length(bad)) {
    hint <- nearest_name(bad[1], unlist(tune_params))
    abort_nmfkit(c("{.arg grid} tunes {.val {bad}}, which {.or {.val {variant}}} do{?es/} not take.",
                   "i" = if (length(valid)) "{.val {variant}} tune{?s/} {.or {.val {valid}}}." else "Nothing of {.val {variant}} is tuned.",
                   "i" = if (!is.null(hint) && !hint %in% valid) "{.val {hint}} is a tuning parameter of {.val {names(tune_params)[vapply(tune_params, function(p) hint %in% p, logical(1))]}}."),
                 "grid", call = call, value = bad)
  }
  for (p in names(grid)) {
    v <- grid[[p]]
    if (!length(v)) {
      abort_nmfkit(c("{.arg grid} is empty: {.field {p}} has no values.",
                     "i" = "Give at least one value per tuning parameter."),
                   "grid", call = call, value = p)
    }
    if (!is.numeric(v) || any(!is.finite(v)) || any(v < 0)) {
      abort_nmfkit(c("{.arg grid}{.field ${p}} must hold finite nonnegative numbers.",
                     "x" = "It is {describe_value(v)}."),
                   "grid", call = call, value = v)
    }
  }
  grid
}

check_tune_variant <- function(variant, call = rlang::caller_env()) {
  supported <- names(tune_params)
  other <- c("wasserstein", "joint", "stratified", "shift")
  if (!is.character(variant) || !length(variant) || anyNA(variant)) {
    abort_nmfkit(c("{.arg variant} must be {.or {.val {supported}}}, or both.",
                   "x" = "It is {describe_value(variant)}."),
                 "choice", call = call, value = variant)
  }
  variant <- unique(variant)
  refused <- intersect(variant, other)
  if (length(refused)) {
    why <- switch(refused[1],
      wasserstein = "{.fn nmf_wasserstein} takes no mask, and a bi-cross-validation block (bins x histograms) cannot be scored by its optimal-transport loss, which needs whole histograms.",
      shift = "{.fn nmf_shift} takes no mask, and its components move across the rows (pixels), so a block's rows have no rows of the basis of their own.",
      "{.fn nmf_{refused[1]}} fits several data sets or strata, which the folds of one matrix do not split.")
    abort_nmfkit(c("{.fn nmf_tune} does not tune {.arg variant} = {.val {refused[1]}} fits.",
                   "x" = why,
                   "i" = "It tunes {.or {.val {supported}}}."),
                 "variant", call = call, value = refused[1])
  }
  for (v in variant) {
    check_choice(v, supported, arg = "variant", call = call)
  }
  variant
}

# The losses of the grid as labels: "frobenius", "kl", "is" or a beta as
# text; unique, in order.
check_tune_losses <- function(loss, variant, call = rlang::caller_env()) {
  if (!length(loss) || !(is.character(loss) || is.numeric(loss) ||
                         is.list(loss))) {
    abort_nmfkit(c("{.arg loss} must be one or more losses of {.fn nmf}.",
                   "x" = "It is {describe_value(loss)}."),
                 "loss", call = call, value = loss)
  }
  labels <- vapply(as.list(loss), function(l) {
    l <- check_loss(l, arg = "loss", call = call)
    format(l$arg)
  }, character(1))
  labels <- unique(labels)
  if (!"nmf" %in% variant && !identical(labels, "frobenius")) {
    abort_nmfkit(c("{.arg loss} applies to {.val nmf} fits, and {.arg variant} has none.",
                   "i" = "{.fn nmf_manifold} fits its own loss; score it with {.arg score}."),
                 "loss", call = call, value = loss)
  }
  labels
}

# `...` of nmf_tune(): not what it sets itself, not what the grid tunes,
# and taken by some variant's function.
check_tune_dots <- function(dots, variant, grid_names, n,
                            call = rlang::caller_env()) {
  nm <- names(dots)
  if (!length(dots)) return(invisible(NULL))
  if (is.null(nm) || any(!nzchar(nm))) {
    abort_nmfkit(c("Arguments in {.arg ...} must be named.",
                   "x" = "{sum(!nzchar(nm %||% rep('', length(dots))))} of them {?is/are} not."),
                 "dots", call = call)
  }
  check_own_dots(nm, "nmf_tune", "rank", call = call)
  tuned <- intersect(c(nm, names(dots$penalty)), grid_names)
  if (length(tuned)) {
    abort_nmfkit(c("{.arg ...} sets {.arg {tuned}}, which {.arg grid} tunes.",
                   "i" = "Give a tuned value in {.arg grid} only."),
                 "dots", call = call)
  }
  takes <- unique(unlist(lapply(variant, tune_takes)))
  foreign <- setdiff(nm, takes)
  if (length(foreign)) {
    abort_nmfkit(c("{.arg ...} sets {.arg {foreign}}, which {.fn {unlist(tune_functions[variant])}} do{?es/} not take.",
                   "i" = if (any(foreign %in% unlist(tune_params))) "Tuning values go in {.arg grid}."),
                 "dots", call = call)
  }
  if (identical(dots$preprocess, "minmax")) {
    abort_nmfkit(c("{.code preprocess = \"minmax\"} would score each fit on its own scaling of {.arg x}.",
                   "i" = "Scale {.arg x} first, so that every grid row is scored on the same data."),
                 "dots", call = call)
  }
  if (!is.null(dots$graph)) {
    if (!identical(dim(dots$graph), c(n, n))) {
      abort_nmfkit(c("{.arg graph} must be {n} x {n}, one row and column per column of {.arg x}.",
                     "x" = "It is {describe_value(dots$graph)}."),
                   "graph", call = call)
    }
  }
  invisible(NULL)
}

# Bi-cross-validation folds (Owen and Perry 2009): the rows and the
# columns each split at random into nfolds groups; fold k is the block of
# row group k x column group k, its entries in column-major order (i, j,
# value, weight 1) with the `rows` and `cols` it spans.
draw_blocks <- function(x, nfolds) {
  m <- nrow(x)
  n <- ncol(x)
  rg <- split(sample.int(m), rep_len(seq_len(nfolds), m))
  cg <- split(sample.int(n), rep_len(seq_len(nfolds), n))
  lapply(seq_len(nfolds), function(k) {
    rows <- sort(rg[[k]])
    cols <- sort(cg[[k]])
    value <- as.vector(as.matrix(x[rows, cols, drop = FALSE]))
    list(i = rep(rows, length(cols)), j = rep(cols, each = length(rows)),
         value = value, weight = rep(1, length(value)), rows = rows,
         cols = cols)
  })
}

# The coefficients of a block's columns given the basis on the rows outside
# it: nonnegative least squares, or the projection of the fit's divergence.
block_coef <- function(x, f, model) {
  xc <- x[-f$rows, f$cols, drop = FALSE]
  W <- model$W[-f$rows, , drop = FALSE]
  threads <- model$control$threads %||% 1L
  fit_loss(model)$coef(xc, W, 1e-12, 2000L, threads)
}
