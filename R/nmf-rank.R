#' Choose the rank of an NMF
#'
#' Fits a factorisation at every rank in `ranks` and reports how well each
#' rank does, by cross-validation of held-out entries or by the stability of
#' the clusters over random starts.
#'
#' `method = "cv"` holds out `nfolds` disjoint random sets of entries, each
#' a `fraction` of the observed entries (for a `dgCMatrix`, that fraction of
#' its stored entries and that fraction of its zeros, so held-out entries
#' are zeros and nonzeros in proportion), fits every rank on the rest with
#' the held-out entries masked (`fit(x, rank, mask = )`), and reports the
#' relative error on the held-out entries,
#' `sqrt(sum((x - fitted)^2) / sum(x^2))` over them. Every rank sees the
#' same folds. The reported ranks are the one of lowest mean error and the
#' smallest whose mean error is within one standard error (over folds) of
#' that lowest.
#'
#' `method = "consensus"` runs `nrun` fits per rank from random starts,
#' assigns each sample (column) to its largest coefficient, and reports the
#' consensus matrix (the fraction of runs in which two samples share a
#' cluster), its cophenetic correlation (Brunet et al., PNAS 2004: the
#' correlation between `1 - consensus` and the cophenetic distances of its
#' average-linkage clustering) and its dispersion (Kim and Park 2007:
#' `mean(4 * (C - 1/2)^2)`, 1 for a perfectly stable clustering).
#'
#' The fits go through [future.apply::future_lapply()] with
#' `future.seed = TRUE`, so `future::plan()` chooses where they run
#' (sequentially, on local workers or on a scheduler through
#' `future.batchtools`) and `set.seed()` gives the same numbers on every
#' plan. Progress is reported through `progressr` (wrap the call in
#' [progressr::with_progress()] to see it).
#'
#' @param x A nonnegative matrix or `dgCMatrix` (samples as columns); `NA`
#'   entries are left out of every fit and never held out.
#' @param ranks Ranks to try: whole numbers from 1 to `min(dim(x))`.
#' @param method `"cv"` or `"consensus"`.
#' @param fit The fitting function: [nmf()] or another nmfkit function that
#'   takes `rank`, `keep_data` and (for `"cv"`) `mask`.
#' @param fraction Fraction of the observed entries held out per fold, in
#'   `(0, 0.5]`.
#' @param nfolds Number of folds (disjoint held-out sets), at least 2.
#' @param nrun Fits per rank for `"consensus"`, at least 2.
#' @param ... Further arguments of `fit`, such as `init` or `control`.
#'   `method` is `nmf_rank()`'s own; to choose the fit's method, wrap it:
#'   `fit = function(...) nmf(..., method = "hals")`.
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
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' r <- nmf_rank(x, ranks = c(8, 12, 16, 17, 20), nfolds = 2,
#'               control = nmf_control(max_iter = 100))
#' r
#' plot(r)
#' @export
nmf_rank <- function(x, ranks, method = c("cv", "consensus"), fit = nmf,
                     fraction = 0.05, nfolds = 3L, nrun = 10L, ...) {
  call <- match.call()
  x <- check_data(x, allow_na = TRUE)
  if (missing(ranks)) {
    abort_nmfkit("{.arg ranks} is missing: give the ranks to compare.",
                 "missing")
  }
  ranks <- check_ranks(ranks, min(dim(x)))
  method <- check_choice(method)
  if (!is.function(fit)) {
    abort_nmfkit(c("{.arg fit} must be an nmfkit fitting function.",
                   "x" = "It is {.obj_type_friendly {fit}}."), "fit")
  }
  needs <- c("rank", "keep_data", if (method == "cv") "mask")
  # a wrapper taking ... passes them on (e.g. to fix the fit's own method)
  missing_args <- if ("..." %in% names(formals(fit))) character() else
    setdiff(needs, names(formals(fit)))
  if (length(missing_args)) {
    abort_nmfkit(c("{.arg fit} must take {.arg {needs}}.",
                   "x" = "It has no {.arg {missing_args}} argument."), "fit")
  }
  has_na <- anyNA(if (inherits(x, "dgCMatrix")) x@x else x)
  na_args <- if (has_na) list(na = "omit") else list()
  out <- if (method == "cv") {
    fraction <- check_fraction(fraction)
    nfolds <- check_count(nfolds, min = 2)
    if (nfolds * fraction > 1) {
      abort_nmfkit(c("{.arg nfolds} disjoint folds of {.arg fraction} {fraction} do not fit in the data.",
                     "x" = "{nfolds} x {fraction} = {nfolds * fraction} > 1."),
                   "count")
    }
    rank_cv(x, ranks, fit, fraction, nfolds, c(na_args, list(...)))
  } else {
    nrun <- check_count(nrun, min = 2)
    rank_consensus(x, ranks, fit, nrun, c(na_args, list(...)))
  }
  out$method <- method
  out$ranks <- ranks
  out$call <- call
  structure(out, class = "nmfkit_rank")
}

# Sorted unique whole ranks from 1 to max_rank.
check_ranks <- function(ranks, max_rank, arg = "ranks",
                        call = rlang::caller_env()) {
  if (!is.numeric(ranks) || !length(ranks) || anyNA(ranks) ||
      any(!is.finite(ranks)) || any(ranks != round(ranks))) {
    abort_nmfkit(c("{.arg {arg}} must be a nonempty vector of whole numbers.",
                   "x" = "It is {describe_value(ranks)}."),
                 "rank", call = call)
  }
  if (any(ranks < 1 | ranks > max_rank)) {
    bad <- ranks[ranks < 1 | ranks > max_rank]
    abort_nmfkit(c("{.arg {arg}} must be between 1 and {max_rank} (the smaller dimension of {.arg x}).",
                   "x" = "{cli::qty(length(bad))}Rank{?s} {bad} {?is/are} out of range."),
                 "rank", call = call)
  }
  sort(unique(as.integer(ranks)))
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
rank_cv <- function(x, ranks, fit, fraction, nfolds, args) {
  folds <- draw_folds(x, fraction, nfolds)
  tasks <- expand.grid(fold = seq_len(nfolds), rank = ranks)
  prog <- progressr::progressor(steps = nrow(tasks))
  out <- future.apply::future_vapply(seq_len(nrow(tasks)), function(t) {
    f <- folds[[tasks$fold[t]]]
    run <- quiet_fit(fit, c(list(x, rank = tasks$rank[t],
                                 mask = fold_mask(x, f), keep_data = FALSE),
                            args))
    prog()
    pred <- rowSums(run$model$W[f$i, , drop = FALSE] *
                      t(run$model$H)[f$j, , drop = FALSE])
    c(sqrt(sum((f$value - pred)^2) /
             max(sum(f$value^2), .Machine$double.xmin)), run$capped)
  }, numeric(2), future.seed = TRUE)
  warn_capped(out[2, ])
  results <- data.frame(rank = tasks$rank, fold = tasks$fold,
                        error = out[1, ])
  list(results = results, best = cv_best(results), consensus = NULL)
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

# nfolds disjoint held-out sets, each `fraction` of the observed entries
# (for sparse x, of its stored entries and of its zeros separately), as
# 1-based rows i, columns j and values. No row or column is held out whole.
draw_folds <- function(x, fraction, nfolds) {
  m <- nrow(x)
  n <- ncol(x)
  if (inherits(x, "dgCMatrix")) {
    j_all <- rep.int(seq_len(n), diff(x@p))
    obs <- which(!is.na(x@x))
    nz <- obs[sample.int(length(obs), nfolds * round(fraction * length(obs)))]
    n_zero <- m * as.double(n) - length(x@x)
    zeros <- sample_unstored(x, nfolds * round(fraction * n_zero))
    nz_split <- split(nz, rep_len(seq_len(nfolds), length(nz)))
    z_split <- split(zeros, rep_len(seq_len(nfolds), length(zeros)))
    folds <- lapply(seq_len(nfolds), function(k) {
      a <- nz_split[[as.character(k)]]
      z <- z_split[[as.character(k)]]
      list(i = c(x@i[a] + 1L, as.integer((z - 1) %% m) + 1L),
           j = c(j_all[a], as.integer((z - 1) %/% m) + 1L),
           value = c(x@x[a], numeric(length(z))))
    })
  } else {
    obs <- which(!is.na(x))
    held <- obs[sample.int(length(obs), nfolds * round(fraction * length(obs)))]
    folds <- lapply(split(held, rep_len(seq_len(nfolds), length(held))),
                    function(h) {
      list(i = as.integer((h - 1) %% m) + 1L,
           j = as.integer((h - 1) %/% m) + 1L, value = x[h])
    })
  }
  lapply(unname(folds), function(f) keep_coverage(f, x))
}

# `size` distinct linear indices (1-based) of unstored entries of x.
sample_unstored <- function(x, size) {
  if (size == 0) return(numeric())
  m <- nrow(x)
  stored <- rep.int(seq_len(ncol(x)) - 1, diff(x@p)) * m + x@i + 1
  total <- m * as.double(ncol(x))
  out <- numeric()
  while (length(out) < size) {
    cand <- sample.int(total, min(total, 2 * (size - length(out)) + 16))
    cand <- cand[!cand %in% stored & !cand %in% out]
    out <- c(out, cand)
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
rank_consensus <- function(x, ranks, fit, nrun, args) {
  tasks <- expand.grid(run = seq_len(nrun), rank = ranks)
  if ("init" %in% names(formals(fit)) && is.null(args$init)) {
    args$init <- "random"
  }
  prog <- progressr::progressor(steps = nrow(tasks))
  clusters <- future.apply::future_lapply(seq_len(nrow(tasks)), function(t) {
    run <- quiet_fit(fit, c(list(x, rank = tasks$rank[t], keep_data = FALSE),
                            args))
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
# (nmf_rank() warns once for all its fits).
quiet_fit <- function(fit, args) {
  capped <- 0
  model <- withCallingHandlers(
    do.call(fit, args),
    nmfkit_warning_convergence = function(w) {
      capped <<- 1
      invokeRestart("muffleWarning")
    }
  )
  list(model = model, capped = capped)
}

warn_capped <- function(capped, call = rlang::caller_env(2)) {
  if (!any(capped > 0)) return(invisible(NULL))
  cli::cli_warn(
    c("{sum(capped > 0)} of {length(capped)} fits did not reach {.arg tol} within {.arg max_iter} iterations.",
      "i" = "Raise {.code max_iter} in {.fn nmf_control} if the errors look unsettled."),
    class = c("nmfkit_warning_convergence", "nmfkit_warning"), call = call
  )
}
