#' Choose the rank of an NMF
#'
#' Fits a factorisation at every rank in `ranks` and reports how well each
#' rank does, by cross-validation of held-out entries or by the stability of
#' the clusters over random starts.
#'
#' `method = "cv"` holds out `nfolds` disjoint random sets of entries, each
#' a `fraction` of the observed entries, fits every rank on the rest with
#' the held-out entries masked (`fit(x, rank, mask = )`), and reports the
#' relative error on the held-out entries,
#' `sqrt(sum((x - fitted)^2) / sum(x^2))` over them; for fits under a
#' divergence (`loss = "kl"`, passed in `...`) the held-out divergence of
#' the fit's own loss (Poisson deviance / 2 for KL) relative to that of
#' predicting every held-out entry by the mean of `x`, predictions floored
#' at `1e-8` times that mean. Every rank sees the
#' same folds. The reported ranks are the one of lowest mean error and the
#' smallest whose mean error is within one standard error (over folds) of
#' that lowest.
#'
#' With `fraction` at most 0.05, no row or column of 80 entries or more
#' holds out more than 10 % of them (the held-out entries of a line above
#' that, the last drawn, are released: a few of thousands), so the masked
#' fits fill the held-out entries in with their prediction, at the cost of
#' an unmasked fit, instead of solving every line's own system (17 times
#' slower per iteration at rank 16 on 300 x 200).
#'
#' For a `dgCMatrix`, a fold holds out `fraction` of its stored entries and
#' a random sample of its zeros: as many zeros as held-out stored entries,
#' at least 10,000, at most the `fraction` of all zeros that a fold in
#' proportion would hold out (when that is fewer, the fold holds out exactly
#' those, as for dense data). Each sampled zero's squared error is weighted
#' by (zeros a fold in proportion holds out) / (zeros sampled), so the
#' reported error is `sqrt(sum(w * (x - fitted)^2) / sum(x^2))` over the
#' held-out entries, with `w = 1` for stored entries. Over the random draw
#' of the zeros, the weighted squared error is an unbiased estimate of the
#' squared error over the held-out stored entries plus `fraction` of all
#' zeros (zeros and nonzeros in proportion). A fold then masks twice its
#' held-out stored entries instead of (at 0.5 % density) ten times as many
#' zeros, and a masked fit costs little more than an unmasked one. The
#' zeros left out of the sample stay in the fit. The sample is the same for
#' every rank, so its noise shifts all ranks' errors alike.
#'
#' `method = "consensus"` runs `nrun` fits per rank from random starts,
#' assigns each sample (column) to its largest coefficient, and reports the
#' consensus matrix (the fraction of runs in which two samples share a
#' cluster), its cophenetic correlation (Brunet et al., PNAS 2004: the
#' correlation between `1 - consensus` and the cophenetic distances of its
#' average-linkage clustering) and its dispersion (Kim and Park 2007:
#' `mean(4 * (C - 1/2)^2)`, 1 for a perfectly stable clustering).
#'
#' Data read in blocks (a `DelayedMatrix`: HDF5, 10x, delayed operations)
#' are refused with a `nmfkit_error_streamed`, as by [nmf_tune()] and
#' `rank = "auto"`: a fit that leaves held-out entries out solves, for
#' every column, the coefficients with the Gram matrix of the basis over
#' that column's observed rows (and every row's basis over its observed
#' columns), one system per column, where a fit read in blocks forms one
#' Gram matrix `W'W` per pass, shared by all columns, from blocks that
#' carry no per-entry weights. Choose the rank on a sample of columns held
#' in memory, then fit it to all the data.
#'
#' The fits go through [future.apply::future_lapply()] with
#' `future.seed = TRUE`, so `future::plan()` chooses where they run
#' (sequentially, on local workers or on a scheduler through
#' `future.batchtools`) and `set.seed()` gives the same numbers on every
#' plan. Progress is reported through `progressr` (wrap the call in
#' [progressr::with_progress()] to see it).
#'
#' @param x A nonnegative matrix or `dgCMatrix` (samples as columns); `NA`
#'   entries are left out of every fit and never held out. Or data in a
#'   container, as for [nmf()]: a `SummarizedExperiment`,
#'   `SingleCellExperiment`, `Seurat` object, quanteda `dfm` or tidytext
#'   count table (see [nmfkit-containers]).
#' @param rank Ranks to try: whole numbers from 1 to `min(dim(x))`.
#' @param method `"cv"` or `"consensus"`.
#' @param variant The model: the name of an nmfkit variant (`"nmf"`, the
#'   default, fits [nmf()]; `"manifold"` [nmf_manifold()], ...) or a fitting
#'   function that takes `rank`, `keep_data` and (for `"cv"`) `mask`.
#' @param ranks,fit Deprecated names of `rank` and `variant`.
#' @param fraction Fraction of the observed entries held out per fold, in
#'   `(0, 0.5]`.
#' @param nfolds Number of folds (disjoint held-out sets), at least 2.
#' @param nrun Fits per rank for `"consensus"`, at least 2.
#' @param ... Further arguments of the variant's fitting function, such as
#'   `init` or `control`. `method` is `nmf_rank()`'s own; to choose the
#'   fit's method, wrap it:
#'   `variant = function(...) nmf(..., method = "hals")`.
#' @param assay The assay (or Seurat layer) of a container `x`, as in
#'   [nmf()].
#' @return An object of class `nmfkit_rank`: a list with `method`, `ranks`,
#'   `results` (a data frame with one row per rank and fold for `"cv"`:
#'   `rank`, `fold`, `error`; one row per rank for `"consensus"`: `rank`,
#'   `cophenetic`, `dispersion`), `consensus` (a list of consensus matrices,
#'   one per rank), `best` (`"cv"`: the ranks `min` and `one_se`), and
#'   `call`. See [print.nmfkit_rank()] for its methods.
#' @references Brunet, J.-P., Tamayo, P., Golub, T. R. and Mesirov, J. P.
#'   (2004). Metagenes and molecular pattern discovery using matrix
#'   factorization. *PNAS* 101(12), 4164-4169.
#'
#'   Kim, H. and Park, H. (2007). Sparse non-negative matrix factorizations
#'   via alternating non-negativity-constrained least squares for
#'   microarray data analysis. *Bioinformatics* 23(12), 1495-1502.
#' @seealso [nmf_tune()] to choose penalties, losses and variants with the
#'   rank, on the same folds.
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' r <- nmf_rank(x, rank = c(8, 12, 16, 17, 20), nfolds = 2,
#'               control = nmf_control(max_iter = 100))
#' r
#' plot(r)
#' @export
nmf_rank <- function(x, rank, method = c("cv", "consensus"),
                     variant = "nmf", fraction = 0.05, nfolds = 3L,
                     nrun = 10L, ..., assay = "counts", ranks, fit) {
  call <- match.call()
  original <- if (!missing(x)) x  # input_matrix() reports a missing x
  if (!missing(ranks)) {
    deprecate_renamed("ranks", "rank", "nmf_rank", both = !missing(rank))
    rank <- ranks
  }
  variant_arg <- "variant"
  if (!missing(fit)) {
    deprecate_renamed("fit", "variant", "nmf_rank", both = !missing(variant))
    variant <- fit
    variant_arg <- "fit"
  }
  x <- input_matrix(x, assay)
  abort_streamed_holdout(x, "nmf_rank", call = call)
  x <- check_data(x, allow_na = TRUE)
  if (missing(rank)) {
    abort_nmfkit("{.arg rank} is missing: give the ranks to compare.",
                 "missing")
  }
  ranks <- check_ranks(rank, min(dim(x)), arg = "rank",
                       why = rank_bound(x, original, assay))
  method <- check_choice(method)
  # checked whatever the method (each reads some of them)
  fraction <- check_fraction(fraction)
  nfolds <- check_count(nfolds, min = 2)
  nrun <- check_count(nrun, min = 2)
  fit <- variant_fitter(variant, arg = variant_arg)
  needs <- c("rank", "keep_data", if (method == "cv") "mask")
  # a wrapper taking ... passes them on (e.g. to fix the fit's own method);
  # the package's fitters take ... only to refuse what they do not know
  passes_dots <- "..." %in% names(formals(fit)) &&
    !identical(environment(fit), asNamespace("nmfkit"))
  missing_args <- if (passes_dots) character() else
    setdiff(needs, names(formals(fit)))
  if (length(missing_args)) {
    abort_nmfkit(c("{.arg fit} must take {.arg {needs}}.",
                   "x" = "It has no {.arg {missing_args}} argument."), "fit")
  }
  check_own_dots(names(list(...)), "nmf_rank", "rank", mask = method == "cv")
  has_na <- anyNA(if (inherits(x, "dgCMatrix")) x@x else x)
  na_args <- if (has_na) list(na = "omit") else list()
  out <- if (method == "cv") {
    check_fold_count(nfolds, fraction)
    rank_cv(x, ranks, fit, fraction, nfolds, c(na_args, list(...)),
            call = rlang::current_env())
  } else {
    rank_consensus(x, ranks, fit, nrun, c(na_args, list(...)),
                   call = rlang::current_env())
  }
  out$method <- method
  out$ranks <- ranks
  # the loss the folds were scored by (a fitting function's own `loss`)
  dots <- list(...)
  out$beta <- if (is.null(dots$loss)) 2 else
    tryCatch(check_loss(dots$loss)$beta, error = function(e) 2)
  out$call <- call
  structure(out, class = "nmfkit_rank")
}

# Sorted unique whole ranks from 1 to max_rank.
# The fitting function of `variant`: a declared variant's name, or a
# function (a user's wrapper of one).
variant_fitter <- function(variant, arg = "variant",
                           call = rlang::caller_env()) {
  if (is.function(variant)) return(variant)
  known <- sort(names(registry$variants))
  if (!is.character(variant) || length(variant) != 1L || is.na(variant)) {
    abort_nmfkit(c("{.arg {arg}} must be the name of an nmfkit variant ({.or {.val {known}}}) or a fitting function.",
                   "x" = "It is {describe_value(variant)}."),
                 "variant", call = call, value = variant)
  }
  check_choice(variant, known, arg = arg, call = call)
  get(variant_of(variant)$fn, envir = asNamespace("nmfkit"), mode = "function")
}

check_ranks <- function(ranks, max_rank, arg = "rank", why = NULL,
                        call = rlang::caller_env()) {
  if (!is.numeric(ranks) || !length(ranks) || anyNA(ranks) ||
      any(!is.finite(ranks)) || any(ranks != round(ranks))) {
    abort_nmfkit(c("{.arg {arg}} must be a nonempty vector of whole numbers.",
                   "x" = "It is {describe_value(ranks)}."),
                 "rank", call = call)
  }
  if (any(ranks < 1 | ranks > max_rank)) {
    bad <- ranks[ranks < 1 | ranks > max_rank]
    abort_nmfkit(c(paste0("{.arg {arg}} must be between 1 and {max_rank} (", why %||% "the smaller dimension of {.arg x}", ")."),
                   "x" = "{cli::qty(length(bad))}Rank{?s} {bad} {?is/are} out of range."),
                 "rank", call = call)
  }
  sort(unique(as.integer(ranks)))
}

# Arguments in `...` that a function running many fits (nmf_rank(),
# nmf_tune()) sets itself for every fit: the data, the rank, keep_data and,
# for held-out folds, the fold's mask.
check_own_dots <- function(names, fn, rank_arg, mask = TRUE,
                           call = rlang::caller_env()) {
  if (is.null(names)) return(invisible(NULL))
  own <- c("x", "rank", "keep_data", if (mask) "mask")
  bad <- intersect(names, own)
  if (length(bad)) {
    abort_nmfkit(c("{.arg ...} must not set {.arg {bad}}: {.fn {fn}} sets {cli::qty(length(bad))}{?it/them} for every fit.",
                   "i" = if ("mask" %in% bad) "To leave entries out of every fit, set them to {.code NA}: they are then never held out either.",
                   "i" = if ("rank" %in% bad) "Give the ranks as {.arg {rank_arg}}."),
                 "dots", call = call)
  }
  invisible(NULL)
}

# nfolds disjoint folds of `fraction` of the entries must fit in the data.
check_fold_count <- function(nfolds, fraction, call = rlang::caller_env()) {
  if (nfolds * fraction > 1) {
    abort_nmfkit(c("{.arg nfolds} disjoint folds of {.arg fraction} {fraction} do not fit in the data.",
                   "x" = "{nfolds} x {fraction} = {nfolds * fraction} > 1."),
                 "count", call = call)
  }
  invisible(NULL)
}

check_fraction <- function(fraction, call = rlang::caller_env()) {
  if (!is_number(fraction) || fraction <= 0 || fraction > 0.5) {
    abort_nmfkit(c("{.arg fraction} must be a number in (0, 0.5].",
                   "x" = "It is {describe_value(fraction)}."),
                 "value", call = call)
  }
  as.double(fraction)
}

# Cross-validation: the same folds for every rank; one task per rank and
# fold, each returning its held-out error.
rank_cv <- function(x, ranks, fit, fraction, nfolds, args, zeros = NULL,
                    call = rlang::caller_env()) {
  cv <- cv_folds(x, fraction, nfolds, zeros, call = call)
  tasks <- expand.grid(fold = seq_len(nfolds), rank = ranks)
  out <- cv_run(tasks$rank, function(t) {
    cv_task_error(x, cv, cv$folds[[tasks$fold[t]]], fit, tasks$rank[t], args,
                  call)
  })
  warn_capped(out[2, ])
  results <- data.frame(rank = tasks$rank, fold = tasks$fold,
                        error = out[1, ])
  list(results = results, best = cv_best(results), consensus = NULL)
}

# One fit at `rank` with fold f of `cv` masked: c(held-out error in the
# fit's own loss, 1 if it stopped at max_iter). The task of nmf_rank() and
# of the rank search (rank-search.R).
cv_task_error <- function(x, cv, f, fit, rank, args, call) {
  run <- quiet_fit(fit, c(list(x, rank = rank, mask = fold_mask(x, f),
                               keep_data = FALSE), args), x, rank, call)
  c(fold_error(cv, f, run$model, fit_loss(run$model)), run$capped)
}

# The folds of a cross-validation, drawn once (from the session's RNG) and
# shared by every fit: `holdout = "entries"`, nfolds disjoint random sets
# of entries (draw_folds()); `"blocks"`, nfolds disjoint blocks of rows x
# columns (draw_blocks()). Returns list(folds, e, x_mean, holdout): the
# held-out values on the scale x / 2^e on which the fits run, so data near
# .Machine$double.xmax give the errors of any other scale, and the mean of
# x on that scale (the reference of a divergence's held-out error: every
# held-out entry predicted by the mean).
cv_folds <- function(x, fraction, nfolds, zeros = NULL, holdout = "entries",
                     call = rlang::caller_env()) {
  folds <- if (holdout == "blocks") draw_blocks(x, nfolds) else
    draw_folds(x, fraction, nfolds, zeros)
  sizes <- vapply(folds, function(f) length(f$i), integer(1))
  n_empty <- nfolds - sum(sizes > 0L)
  if (n_empty > 0L) {
    abort_nmfkit(c("{.arg fraction} {fraction} holds out no entry in {n_empty} of the {nfolds} folds.",
                   "x" = "{.arg x} has {observed_entries(x)} observed entr{?y/ies}; a fold needs at least one that leaves every row and column an observed entry.",
                   "i" = "Raise {.arg fraction} (or use fewer {.arg nfolds})."),
                 "value", call = call)
  }
  e <- data_exponent(if (inherits(x, "dgCMatrix")) x@x[!is.na(x@x)]
                     else x[!is.na(x)])
  folds <- lapply(folds, function(f) {
    f$value <- scale_data(f$value, e)
    f
  })
  x_mean <- scale_data(if (inherits(x, "dgCMatrix"))
    sum(x@x, na.rm = TRUE) / (length(x) - sum(is.na(x@x))) else
    mean(x, na.rm = TRUE), e)
  list(folds = folds, e = e, x_mean = x_mean, holdout = holdout)
}

# The held-out error of one fold of `cv` (from cv_folds()) for a model
# fitted without it, scored under the loss object `loss` (its `score`).
# Held-out entries are predicted by the model's W H; a held-out block by
# W[rows, ] times the coefficients of its columns solved on the rows not
# held out (block_coef()). Both on the scale of x / 2^e.
fold_error <- function(cv, f, model, loss, x = NULL) {
  e <- cv$e
  W <- scale_data(model$W, e %/% 2)
  pred <- if (is.null(f$rows)) {
    H <- scale_data(model$H, e - e %/% 2)
    rowSums(W[f$i, , drop = FALSE] * t(H)[f$j, , drop = FALSE])
  } else {
    h <- scale_data(block_coef(x, f, model), e - e %/% 2)
    as.vector(W[f$rows, , drop = FALSE] %*% h)
  }
  loss$score(f, pred, cv$x_mean)
}

# One task per element of `cost` (a task's relative cost: its rank), run
# through future.apply with `future.seed = TRUE` in balanced order; each
# task(t) returns `size` numbers (c(error, capped) for nmf_rank()).
# Returns the size x n matrix of them.
cv_run <- function(cost, task, size = 2L) {
  n <- length(cost)
  prog <- progressr::progressor(steps = n)
  ord <- order(cost)[balanced_order(n)]
  seed_session()
  # the globals named, not searched for: future's search walks the code of
  # every function `task` reaches, 60 ms a call on 300 x 200 (a fifth of
  # the rank search's time, which calls this once a round); `task` carries
  # its data in its environment to any worker
  future.apply::future_vapply(seq_len(n), function(t) {
    out <- task(t)
    prog()
    out
  }, numeric(size), future.seed = TRUE,
  future.globals = list(task = task, prog = prog),
  future.packages = "nmfkit",
  future.scheduling = structure(1, ordering = ord))
}

# An order of n tasks of increasing cost (here: by rank) whose contiguous
# runs, the chunks future.apply hands to each worker, cost about the same:
# the costliest, the cheapest, the next costliest, ... The results (and
# their random seeds, drawn per task) do not depend on it.
balanced_order <- function(n) {
  hi <- rev(seq_len(n))[seq_len(ceiling(n / 2))]
  lo <- seq_len(n - length(hi))
  as.vector(rbind(hi, c(lo, 0L)[seq_along(hi)]))[seq_len(n)]
}

# The rank of lowest mean held-out error, and the smallest rank within one
# standard error of it.
cv_best <- function(results) {
  s <- cv_summary(results)
  lo <- which.min(s$mean)
  one_se <- min(s$rank[s$mean <= s$mean[lo] + s$se[lo]])
  c(min = s$rank[lo], one_se = one_se)
}

cv_summary <- function(results) {
  by_rank <- split(results$error, results$rank)
  data.frame(rank = as.integer(names(by_rank)),
             mean = vapply(by_rank, mean, numeric(1)),
             se = vapply(by_rank, function(e) stats::sd(e) / sqrt(length(e)),
                         numeric(1)),
             row.names = NULL)
}

# nfolds disjoint held-out sets as 1-based rows i, columns j, values and
# weights of their squared errors. Dense x: `fraction` of the observed
# entries, weight 1. Sparse x: `fraction` of the stored entries (weight 1)
# plus a random sample of the zeros, each weighted so that the sample's
# squared error estimates, without bias, that of the `fraction` of all zeros
# a fold in proportion would hold out (see cv_zero_sample()). No row or
# column is held out whole.
draw_folds <- function(x, fraction, nfolds, zeros = NULL) {
  m <- nrow(x)
  n <- ncol(x)
  if (inherits(x, "dgCMatrix")) {
    j_all <- rep.int(seq_len(n), diff(x@p))
    obs <- which(!is.na(x@x))
    n_stored <- round(fraction * length(obs))
    nz <- obs[sample.int(length(obs), nfolds * n_stored)]
    n_prop <- round(fraction * (m * as.double(n) - length(x@x)))
    n_sample <- cv_zero_sample(n_stored, n_prop, zeros)
    z <- sample_unstored(x, nfolds * n_sample)
    w <- if (n_sample > 0) n_prop / n_sample else 1
    nz_split <- split(nz, rep_len(seq_len(nfolds), length(nz)))
    z_split <- split(z, rep_len(seq_len(nfolds), length(z)))
    folds <- lapply(seq_len(nfolds), function(k) {
      a <- nz_split[[as.character(k)]]
      zk <- z_split[[as.character(k)]]
      list(i = c(x@i[a] + 1L, as.integer((zk - 1) %% m) + 1L),
           j = c(j_all[a], as.integer((zk - 1) %/% m) + 1L),
           value = c(x@x[a], numeric(length(zk))),
           weight = c(rep(1, length(a)), rep(w, length(zk))))
    })
  } else {
    obs <- which(!is.na(x))
    held <- obs[sample.int(length(obs), nfolds * round(fraction * length(obs)))]
    folds <- lapply(split(held, rep_len(seq_len(nfolds), length(held))),
                    function(h) {
      list(i = as.integer((h - 1) %% m) + 1L,
           j = as.integer((h - 1) %/% m) + 1L, value = x[h],
           weight = rep(1, length(h)))
    })
  }
  lapply(unname(folds), function(f) {
    cap_line_share(keep_coverage(f, x), x, fraction)
  })
}

# The core fills held-out entries in with the prediction (an EM step, at
# the cost of an unmasked update) when no row or column misses more than
# kFewMissing = 10 % of its entries (inst/include/nmfkit/masked.hpp), and
# otherwise solves every line's own system: at rank 16 on 300 x 200 that
# was 15 ms per iteration against 0.9 ms. A fold of 5 % drawn at random
# puts more than 10 % into some row of 200 about half the time, so for a
# `fraction` up to half that share, the held-out entries of a line above it
# are released (the last drawn; a few of thousands). Lines shorter than 80,
# or data whose missing entries already exceed it, are left as drawn.
cv_fill_share <- 0.1
cap_line_share <- function(f, x, fraction) {
  if (fraction > cv_fill_share / 2 || !length(f$i)) return(f)
  cap <- floor(cv_fill_share * c(ncol(x), nrow(x)))  # per row, per column
  if (any(cap < 8)) return(f)
  if (inherits(x, "dgCMatrix")) {
    na <- is.na(x@x)
    na_r <- tabulate(x@i[na] + 1L, nrow(x))
    na_c <- tabulate(rep.int(seq_len(ncol(x)), diff(x@p))[na], ncol(x))
  } else {
    na_r <- rowSums(is.na(x))
    na_c <- colSums(is.na(x))
  }
  if (any(na_r > cap[1]) || any(na_c > cap[2])) return(f)
  keep <- stats::ave(seq_along(f$i), f$i, FUN = seq_along) <=
    (cap[1] - na_r)[f$i]
  f <- lapply(f, `[`, keep)
  keep <- stats::ave(seq_along(f$j), f$j, FUN = seq_along) <=
    (cap[2] - na_c)[f$j]
  lapply(f, `[`, keep)
}

# Zeros sampled per fold of sparse data: as many as the fold's held-out
# stored entries, at least cv_min_zeros, at most the n_prop zeros of a fold
# in proportion (then all of them, weight 1). `zeros` overrides the rule
# (tests).
cv_min_zeros <- 10000
cv_zero_sample <- function(n_stored, n_prop, zeros = NULL) {
  if (is.null(zeros)) zeros <- max(n_stored, cv_min_zeros)
  min(n_prop, zeros)
}

# `size` distinct linear indices (1-based, in random order) of unstored
# entries of x, drawn uniformly without replacement. The candidates are
# drawn with replacement and the stored and repeated ones rejected, so no
# m x n index set is built unless the zeros are few enough to list.
sample_unstored <- function(x, size) {
  if (size == 0) return(numeric())
  m <- nrow(x)
  stored <- rep.int(seq_len(ncol(x)) - 1, diff(x@p)) * m + x@i + 1
  total <- m * as.double(ncol(x))
  n_zero <- total - length(stored)
  if (size > n_zero / 2) {
    # most of the zeros: list them (the folds are this large anyway)
    zeros <- if (length(stored)) seq_len(total)[-stored] else seq_len(total)
    return(zeros[sample.int(length(zeros), size)])
  }
  out <- numeric()
  while (length(out) < size) {
    need <- size - length(out)
    cand <- sample.int(total, ceiling(1.1 * need * total / n_zero) + 16,
                       replace = TRUE)
    cand <- cand[is.na(match(cand, stored))]
    out <- c(out, cand)
    out <- out[!duplicated(out)]
  }
  out[seq_len(size)]
}

# Releases the held-out entries of any row or column the fold would leave
# with no observed entry.
keep_coverage <- function(f, x) {
  if (inherits(x, "dgCMatrix")) {
    na <- is.na(x@x)
    j_na <- rep.int(seq_len(ncol(x)), diff(x@p))[na]
    obs_rows <- ncol(x) - tabulate(x@i[na] + 1L, nrow(x))
    obs_cols <- nrow(x) - tabulate(j_na, ncol(x))
  } else {
    obs_rows <- rowSums(!is.na(x))
    obs_cols <- colSums(!is.na(x))
  }
  full_r <- which(tabulate(f$i, nrow(x)) >= obs_rows)
  full_c <- which(tabulate(f$j, ncol(x)) >= obs_cols)
  drop <- f$i %in% full_r | f$j %in% full_c
  lapply(f, `[`, !drop)
}

# The held-out entries of a fold as a logical mask (sparse for sparse x).
fold_mask <- function(x, f) {
  if (inherits(x, "dgCMatrix")) {
    return(Matrix::sparseMatrix(i = f$i, j = f$j, x = TRUE, dims = dim(x)))
  }
  mk <- matrix(FALSE, nrow(x), ncol(x))
  mk[cbind(f$i, f$j)] <- TRUE
  mk
}

# Consensus clustering: nrun fits per rank from random starts; each returns
# the cluster (largest coefficient) of every sample.
rank_consensus <- function(x, ranks, fit, nrun, args,
                           call = rlang::caller_env()) {
  tasks <- expand.grid(run = seq_len(nrun), rank = ranks)
  if ("init" %in% names(formals(fit)) && is.null(args$init)) {
    args$init <- "random"
  }
  prog <- progressr::progressor(steps = nrow(tasks))
  seed_session()
  clusters <- future.apply::future_lapply(seq_len(nrow(tasks)), function(t) {
    run <- quiet_fit(fit, c(list(x, rank = tasks$rank[t], keep_data = FALSE),
                            args), x, tasks$rank[t], call)
    prog()
    list(max.col(t(run$model$H), ties.method = "first"), run$capped)
  }, future.seed = TRUE)
  warn_capped(vapply(clusters, `[[`, numeric(1), 2))
  by_rank <- split(lapply(clusters, `[[`, 1), tasks$rank)
  consensus <- lapply(by_rank, function(cl) {
    cm <- Reduce(`+`, lapply(cl, function(a) outer(a, a, `==`) * 1)) /
      length(cl)
    dimnames(cm) <- list(colnames(x), colnames(x))
    cm
  })
  stats <- vapply(consensus, function(cm) {
    d <- stats::as.dist(1 - cm)
    coph <- if (length(unique(d)) > 1) {
      stats::cor(stats::cophenetic(stats::hclust(d, method = "average")), d)
    } else {
      1
    }
    c(coph, mean(4 * (cm - 0.5)^2))
  }, numeric(2))
  results <- data.frame(rank = ranks, cophenetic = stats[1, ],
                        dispersion = stats[2, ], row.names = NULL)
  list(results = results, best = NULL, consensus = consensus)
}

# One fit, its "did not reach tol" warning muffled and reported as `capped`
# (nmf_rank() warns once for all its fits). Its model must hold finite
# nonnegative factors W (m x rank) and H (rank x n): anything else (a user's
# `fit` returning another object, NaN factors) is an error naming `fit`,
# never a NaN error or a clustering of NaN. `signed_w`: the basis may have
# any sign (nmf_manifold()'s ALM methods).
quiet_fit <- function(fit, args, x, rank, call = rlang::caller_env(),
                      signed_w = FALSE) {
  capped <- 0
  model <- withCallingHandlers(
    do.call(fit, args),
    nmfkit_warning_convergence = function(w) {
      capped <<- 1
      invokeRestart("muffleWarning")
    }
  )
  check_fit_model(model, nrow(x), ncol(x), rank, call, signed_w)
  list(model = model, capped = capped)
}

check_fit_model <- function(model, m, n, rank, call, signed_w = FALSE) {
  shape_ok <- function(f, r, c) {
    is.matrix(f) && is.numeric(f) && nrow(f) == r && ncol(f) == c
  }
  if (!is.list(model) || !shape_ok(model$W, m, rank) ||
      !shape_ok(model$H, rank, n)) {
    abort_nmfkit(c("{.arg fit} must return a model with factors {.field W} ({m} x {rank}) and {.field H} ({rank} x {n}).",
                   "x" = "At rank {rank} it returned {.obj_type_friendly {model}}{if (is.list(model)) cli::format_inline(' with W {fmt_dim(model$W)} and H {fmt_dim(model$H)}')}."),
                 "fit", call = call)
  }
  bad <- c(W = sum(!is.finite(model$W)), H = sum(!is.finite(model$H)))
  if (any(bad > 0)) {
    abort_nmfkit(c("{.arg fit} returned non-finite factors at rank {rank}.",
                   "x" = "{.field W} has {bad[['W']]} and {.field H} {bad[['H']]} NA, NaN or infinite entr{?y/ies}{if (!is.null(model$status)) paste0(' (status \"', model$status, '\")')}.",
                   "i" = "Check the fit at this rank on its own; held-out errors and clusters of such factors mean nothing."),
                 "fit", call = call)
  }
  if ((!signed_w && any(model$W < 0)) || any(model$H < 0)) {
    abort_nmfkit(c("{.arg fit} returned negative factors at rank {rank}.",
                   "x" = "{.field W} has {sum(model$W < 0)} and {.field H} {sum(model$H < 0)} negative entr{?y/ies}."),
                 "fit", call = call)
  }
  invisible(model)
}

fmt_dim <- function(f) {
  if (is.null(dim(f))) cli::format_inline("{.obj_type_friendly {f}}")
  else paste(dim(f), collapse = " x ")
}

# Observed (not NA) entries of x.
observed_entries <- function(x) {
  vals <- if (inherits(x, "dgCMatrix")) x@x else x
  if (inherits(x, "dgCMatrix")) {
    prod(as.double(dim(x))) - sum(is.na(vals))
  } else {
    sum(!is.na(vals))
  }
}

warn_capped <- function(capped, call = rlang::caller_env(2)) {
  if (!any(capped > 0)) return(invisible(NULL))
  warn_nmfkit(
    c("{sum(capped > 0)} of {length(capped)} fits did not reach {.arg tol} within {.arg max_iter} iterations.",
      "i" = "Raise {.code max_iter} in {.fn nmf_control} if the errors look unsettled."),
    "convergence", call = call
  )
}
