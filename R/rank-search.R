#' Find the rank by an adaptive held-out search
#'
#' The settings of `rank = "auto"` in [nmf()] and [nmf_consensus()]: the
#' range of ranks to search and its held-out folds. `rank = "auto"` is
#' `auto_rank()`; in [nmf()], `rank = c(lo, hi)` is `auto_rank(lo, hi)`.
#'
#' The search scores ranks as [nmf_rank()] does (`method = "cv"`): `nfolds`
#' disjoint folds of held-out entries, drawn once and shared by every rank
#' (for sparse data with the unbiased sample of zeros), each fold's entries
#' masked in a fit of the same settings and scored in the fit's own loss
#' (relative error for Frobenius, the held-out divergence relative to that
#' of the mean for a beta-divergence). It never fits the whole range:
#'
#' 1. *Bracket.* Ranks `lo`, `2 lo`, `4 lo`, ... (capped at `hi`) until a
#'    rank's mean error is no longer the lowest so far (or `hi` is reached).
#' 2. *Refine.* Repeatedly bisect the gaps next to the rank of lowest mean
#'    error, and the gap below the smallest rank whose mean error is within
#'    one standard error (over folds) of that lowest, until both have no
#'    untried rank inside.
#'
#' The choice is the one-standard-error rule on the ranks tried: the
#' smallest whose mean error is within one standard error of the lowest
#' mean. When the held-out error falls and then rises (or levels off), the
#' gaps bisected are those the full grid's rule depends on, so the search
#' picks what [nmf_rank()] over every rank of the range would pick on the
#' same folds, from about `2 log2(hi)` ranks instead of `hi - lo + 1`. Each
#' round's fits (one per new rank and fold) go through
#' [future.apply::future_vapply()] with `future.seed = TRUE`, so every
#' `future::plan()` gives the same path.
#'
#' `tol` sets a looser tolerance for the held-out fits than the fit to
#' keep, which saves time but can change the choice: on the 300 x 200
#' planted rank-8 problem of `bench/rank.R` (Frobenius), `tol = 1e-3` took
#' 20 % less time and chose as `1e-4` did; on planted rank-3 Poisson counts
#' (`bench/rank-calibration.R`, 100 x 80, noise 0.1) it chose 8 and 6 in 2
#' of 3 problems where the grid at `1e-4` chose 3 (the rank-3 fits stopped
#' short). So by default (`NULL`) the held-out fits run to the control's
#' tolerance.
#'
#' The path (every rank tried, its mean error, standard error and the round
#' that tried it), the choice and the reason are kept in the fit as
#' `$rank_search` (class `nmfkit_rank_search`), which prints and plots.
#'
#' @param lo,hi The smallest and largest rank to consider; `hi = NULL` for
#'   `min(50, min(dim(x)))`.
#' @param nfolds Number of folds, at least 2.
#' @param fraction Fraction of the observed entries held out per fold, in
#'   `(0, 0.5]`.
#' @param tol `NULL` (the held-out fits run to [nmf_control()]'s `tol`) or
#'   a tolerance for the held-out fits alone (the control's own when that
#'   is looser); the fit at the chosen rank keeps the control's. See
#'   Details.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return An object of class `nmfkit_auto_rank`, for `rank`.
#' @seealso [nmf_rank()] to score every rank of a grid.
#' @examples
#' set.seed(1)
#' x <- matrix(runif(80 * 4), 80) %*% matrix(runif(4 * 60), 4) +
#'   matrix(runif(80 * 60), 80) * 0.05
#' fit <- nmf(x, rank = "auto")
#' fit$rank
#' fit$rank_search
#' plot(fit$rank_search)
#' @export
auto_rank <- function(lo = 1L, hi = NULL, nfolds = 3L, fraction = 0.05,
                      tol = NULL, ...) {
  check_dots_empty()
  lo <- check_count(lo, min = 1)
  if (!is.null(hi)) {
    hi <- check_count(hi, min = 1)
    if (hi < lo) {
      abort_nmfkit(c("The rank range must have {.arg lo} <= {.arg hi}.",
                     "x" = "It is {lo} to {hi}."), "rank", value = c(lo, hi))
    }
  }
  nfolds <- check_count(nfolds, min = 2)
  fraction <- check_fraction(fraction)
  check_fold_count(nfolds, fraction)
  if (!is.null(tol)) tol <- check_number(tol, min = 0)
  structure(list(lo = lo, hi = hi, nfolds = nfolds, fraction = fraction,
                 tol = tol),
            class = "nmfkit_auto_rank")
}

# The search a `rank` argument asks for, or NULL for a plain rank: "auto",
# auto_rank(), or (where `pair`) a range c(lo, hi).
as_auto_rank <- function(rank, pair = TRUE, call = rlang::caller_env()) {
  if (inherits(rank, "nmfkit_auto_rank")) return(rank)
  if (is.character(rank)) {
    if (identical(rank, "auto")) return(auto_rank())
    abort_nmfkit(c("{.arg rank} must be a whole number, {.val auto}{if (pair) ', a range c(lo, hi)' else ''} or {.fn auto_rank}.",
                   "x" = "It is {describe_value(rank)}."),
                 "rank", call = call, value = rank)
  }
  if (pair && is.numeric(rank) && length(rank) == 2L) {
    if (anyNA(rank) || any(!is.finite(rank)) || any(rank != round(rank)) ||
        any(rank < 1)) {
      abort_nmfkit(c("A rank range {.arg rank} = {.code c(lo, hi)} must hold two whole numbers from 1.",
                     "x" = "It is {.code {deparse1(rank)}}."),
                   "rank", call = call, value = rank)
    }
    if (rank[1] > rank[2]) {
      abort_nmfkit(c("A rank range {.arg rank} = {.code c(lo, hi)} must have {.code lo <= hi}.",
                     "x" = "It is {rank[1]} to {rank[2]}."),
                   "rank", call = call, value = rank)
    }
    return(auto_rank(rank[1], rank[2]))
  }
  NULL
}

# The range resolved against the data: hi defaults to min(50, min(dim)).
search_range <- function(search, x, call = rlang::caller_env()) {
  top <- min(dim(x))
  hi <- search$hi %||% min(50L, top)
  check_ranks(c(search$lo, hi), top, arg = "rank", call = call)
  c(search$lo, hi)
}

# The adaptive search (see auto_rank()): `fit` (nmf) with `args` on the
# folds of cv_folds(); returns the nmfkit_rank_search path.
rank_search <- function(x, search, fit, args, call = rlang::caller_env()) {
  range <- search_range(search, x, call)
  if (!is.null(search$tol)) {
    # the held-out fits' tolerance (the final fit keeps the user's)
    args$control <- check_control(args$control %||% nmf_control(),
                                  arg = "control", call = call)
    args$control$tol <- max(args$control$tol, search$tol)
  }
  cv <- cv_folds(x, search$fraction, search$nfolds, call = call)
  results <- data.frame(rank = integer(), fold = integer(), error = double(),
                        round = integer())
  capped <- numeric()
  round <- 0L
  try_ranks <- function(ranks) {
    round <<- round + 1L
    tasks <- expand.grid(fold = seq_len(search$nfolds), rank = ranks)
    out <- cv_run(tasks$rank, function(t) {
      cv_task_error(x, cv, cv$folds[[tasks$fold[t]]], fit, tasks$rank[t],
                    args, call)
    })
    capped <<- c(capped, out[2, ])
    results <<- rbind(results, data.frame(rank = tasks$rank, fold = tasks$fold,
                                          error = out[1, ], round = round))
  }
  # bracket: double until the error stops falling
  r <- range[1]
  repeat {
    try_ranks(r)
    s <- cv_summary(results)
    if (r >= range[2] || s$rank[which.min(s$mean)] != r) break
    r <- min(range[2], max(r + 1L, 2L * r))
  }
  # refine: bisect the gaps the one-SE rule depends on
  repeat {
    s <- cv_summary(results)
    lo <- which.min(s$mean)
    ok <- which(s$mean <= s$mean[lo] + s$se[lo])
    gaps <- rbind(c(lo - 1L, lo), c(lo, lo + 1L), c(min(ok) - 1L, min(ok)))
    gaps <- gaps[gaps[, 1] >= 1 & gaps[, 2] <= nrow(s), , drop = FALSE]
    mids <- unique(unlist(lapply(seq_len(nrow(gaps)), function(g) {
      a <- s$rank[gaps[g, 1]]
      b <- s$rank[gaps[g, 2]]
      if (b - a > 1L) (a + b) %/% 2L
    })))
    if (!length(mids)) break
    try_ranks(sort(as.integer(mids)))
  }
  warn_capped(capped, call = call)
  s <- cv_summary(results)
  best <- cv_best(results[c("rank", "fold", "error")])
  s$round <- vapply(s$rank, function(k) min(results$round[results$rank == k]),
                    integer(1))
  lo <- which.min(s$mean)
  reason <- sprintf(
    "smallest rank tried within one standard error of the lowest mean held-out error (rank %d: %s + %s)",
    s$rank[lo], format(s$mean[lo], digits = 3), format(s$se[lo], digits = 3))
  structure(list(
    rank = best[["one_se"]], min = best[["min"]], reason = reason,
    summary = s, results = results, range = range,
    nfolds = search$nfolds, fraction = search$fraction,
    tol = args$control$tol,
    beta = if (is.null(args$loss)) 2 else check_loss(args$loss)$beta
  ), class = "nmfkit_rank_search")
}

# nmf(x, rank = "auto", ...): the search with nmf()'s other arguments, then
# the fit at the chosen rank, which keeps the path.
nmf_auto_rank <- function(x, search, args, keep_data, assay, call) {
  x <- input_matrix(x, assay)
  abort_streamed_holdout(x, "nmf", call = call)
  given <- !vapply(args[c("weights", "mask", "fixed", "ard")], is.null,
                   logical(1))
  if (any(given)) {
    abort_nmfkit(c("{.code rank = \"auto\"} holds out entries by masks and fits no {.arg {names(given)[given]}}.",
                   "i" = "Choose the rank with {.fn nmf_rank} and a fitting function of your own, or give a rank."),
                 "rank", call = call)
  }
  args[c("weights", "mask", "fixed", "ard")] <- NULL
  na <- check_choice(args$na, c("fail", "omit"), arg = "na", call = call)
  x <- check_data(x, allow_na = na == "omit", call = call)
  path <- rank_search(x, search, nmf, args, call = call)
  fit <- do.call(nmf, c(list(x, rank = path$rank, keep_data = keep_data),
                        args))
  fit$call <- call
  fit$rank_search <- path
  fit
}

#' @export
print.nmfkit_rank_search <- function(x, ...) {
  check_dots_empty()
  s <- x$summary
  cat(sprintf("Rank search on held-out entries (%d folds%s): rank %d chosen\n",
              x$nfolds, if (is.null(x$tol)) "" else
                sprintf(", fits to tol %s", format(x$tol)), x$rank))
  cat(sprintf("Tried %d of the %d ranks from %d to %d:\n", nrow(s),
              x$range[2] - x$range[1] + 1L, x$range[1], x$range[2]))
  print(format(s, digits = 3), row.names = FALSE)
  cat(sprintf("Lowest mean error at rank %d; chosen: the %s.\n", x$min,
              x$reason))
  invisible(x)
}

#' @export
plot.nmfkit_rank_search <- function(x, ...) {
  check_dots_empty()
  s <- x$summary
  lo <- s$mean - s$se
  hi <- s$mean + s$se
  graphics::plot(s$rank, s$mean, type = "n", ylim = range(lo, hi),
                 xlim = x$range, xlab = "rank",
                 ylab = rank_error_label(x),
                 main = "Rank search: held-out error of the ranks tried")
  ok <- hi - lo > 1e-3 * abs(s$mean)
  if (any(ok)) {
    graphics::arrows(s$rank[ok], lo[ok], s$rank[ok], hi[ok], angle = 90,
                     code = 3, length = 0.03, col = "grey50")
  }
  cols <- grDevices::hcl.colors(max(s$round), "viridis")
  graphics::points(s$rank, s$mean, pch = 19, col = cols[s$round])
  graphics::text(s$rank, s$mean, s$round, pos = 3, cex = 0.7)
  graphics::abline(h = s$mean[s$rank == x$min] + s$se[s$rank == x$min],
                   lty = 3, col = "grey40")
  graphics::abline(v = x$rank, lty = 2)
  graphics::legend("topright", bty = "n", cex = 0.8,
                   legend = c("chosen rank", "lowest mean + 1 SE",
                              "label: search round"),
                   lty = c(2, 3, NA), col = c("black", "grey40", NA))
  invisible(x)
}

# The line print() adds for a rank found by the search or by ARD.
print_rank_note <- function(x) {
  if (!is.null(x$rank_search)) {
    s <- x$rank_search
    cat(sprintf("rank %d chosen by held-out search (%d of %d ranks tried; see $rank_search)\n",
                s$rank, nrow(s$summary), s$range[2] - s$range[1] + 1L))
  }
  if (!is.null(x$ard)) {
    cat(sprintf("rank %d of %d kept by ARD (%s prior; see $ard)\n",
                sum(x$ard$active), x$ard$rank_max, toupper(x$ard$prior)))
  }
  invisible(NULL)
}
