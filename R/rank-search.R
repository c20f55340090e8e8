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
#' 1. *Bracket*, on the first fold alone: ranks `lo`, `2 lo`, `4 lo`, ...
#'    (capped at `hi`) until the fold's error has twice in a row not been
#'    the lowest so far (or `hi` is reached).
#' 2. *Refine.* The bracket's lowest rank is fitted on the other folds.
#'    Then, among the ranks fitted on every fold, the gaps next to the rank
#'    of lowest mean error (R) and below the smallest rank within one
#'    standard error of it, each up to the next rank tried, are bisected,
#'    the middle fitted on the first fold, until no such gap has an untried
#'    rank inside. A rank fitted on the first fold is fitted on the others
#'    when the rule may need it: its first-fold error is below R's (it may
#'    be the lowest), or it lies below R with a first-fold error above R's
#'    by at most three standard deviations of R's errors over the folds (it
#'    may fall within one standard error of R).
#'
#' The choice is the one-standard-error rule on the ranks fitted on every
#' fold: the smallest whose mean error is within one standard error of the
#' lowest mean. A rank left at the first fold is taken to be above R in
#' mean: the folds shift the errors of neighbouring ranks alike, so their
#' order on one fold is, but for near ties, their order in mean. When the
#' held-out error falls and then rises (or levels off), the search picks
#' what [nmf_rank()] over every rank of the range picks on the same folds:
#' on the 100 planted problems of `bench/rank-calibration.R` ("seeds") in
#' 92 of 100 (where the choice differs, the held-out curve is flat near its
#' minimum: Poisson counts with components sharing a profile), from a few
#' ranks on every fold and `2 log2(hi)` or so on the first. On the 300 x
#' 200 planted rank-8 problem of `bench/rank.R` (range 1-16) it makes 12
#' fits (the grid 48), 573 iterations in all (the grid 2,647). Each round's
#' fits go through [future.apply::future_vapply()] with `future.seed =
#' TRUE`, so every `future::plan()` gives the same path.
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
#' The path (every rank tried, the folds it was fitted on, its mean error,
#' standard error and the round that tried it; the first fold's error for a
#' rank fitted on it alone), the choice and the reason are kept in the fit
#' as
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
  # fits of `ranks` on every fold, and of `complete` (fitted on the first
  # fold already) on the others: one round
  others <- seq_len(search$nfolds)[-1]
  try_ranks <- function(ranks = integer(), complete = integer(),
                        screen = integer(), folds = seq_len(search$nfolds)) {
    round <<- round + 1L
    tasks <- rbind(expand.grid(fold = others, rank = complete),
                   expand.grid(fold = 1L, rank = screen),
                   expand.grid(fold = folds, rank = ranks))
    out <- cv_run(tasks$rank, function(t) {
      cv_task_error(x, cv, cv$folds[[tasks$fold[t]]], fit, tasks$rank[t],
                    args, call)
    })
    capped <<- c(capped, out[2, ])
    results <<- rbind(results, data.frame(rank = tasks$rank, fold = tasks$fold,
                                          error = out[1, ], round = round))
  }
  # bracket, on the first fold alone: double until its error has not
  # fallen twice in a row (one fold's error can rise from rank 1 to 2 and
  # then fall: sparse planted rank 3 in bench/rank-calibration.R)
  r <- range[1]
  misses <- 0L
  repeat {
    try_ranks(r, folds = 1L)
    first <- results[results$fold == 1L, ]
    misses <- if (first$rank[which.min(first$error)] == r) 0L else misses + 1L
    if (r >= range[2] || misses == 2L) break
    r <- min(range[2], max(r + 1L, 2L * r))
  }
  # refine: the bracket's lowest on the other folds, then bisect the gaps
  # the one-SE rule depends on, between ranks fitted on every fold and the
  # bracket's next to them (a bracket rank next to one of them is fitted
  # on the other folds)
  todo <- list(screen = integer(),
               complete = first$rank[which.min(first$error)])
  repeat {
    try_ranks(complete = todo$complete, screen = todo$screen)
    todo <- refine_ranks(results, search$nfolds)
    if (!length(unlist(todo))) break
  }
  warn_capped(capped, call = call)
  # the rule reads the ranks fitted on every fold; the path keeps all
  s <- cv_summary(results)
  s$folds <- as.integer(table(results$rank)[as.character(s$rank)])
  s$round <- vapply(s$rank, function(k) min(results$round[results$rank == k]),
                    integer(1))
  s <- s[c("rank", "folds", "mean", "se", "round")]
  full <- results[results$rank %in% s$rank[s$folds == search$nfolds], ]
  best <- cv_best(full[c("rank", "fold", "error")])
  lo <- match(best[["min"]], s$rank)
  reason <- sprintf(
    "smallest rank fitted on every fold within one standard error of the lowest mean held-out error (rank %d: %s + %s)",
    s$rank[lo], format(s$mean[lo], digits = 3), format(s$se[lo], digits = 3))
  structure(list(
    rank = best[["one_se"]], min = best[["min"]], reason = reason,
    summary = s, results = results, range = range,
    nfolds = search$nfolds, fraction = search$fraction,
    tol = args$control$tol,
    beta = if (is.null(args$loss)) 2 else check_loss(args$loss)$beta
  ), class = "nmfkit_rank_search")
}

# The next ranks of the refinement, from the ranks fitted on every fold
# (`full`) and those fitted on the first fold alone: the middle of a gap
# next to the rank of lowest mean error (R), above or below, or below the
# smallest rank within one standard error of it, where the gap ends at the
# next rank tried, is fitted on the first fold (`screen`). A first-fold
# rank is fitted on the other folds (`complete`) when the rule may need
# it: its first-fold error is below R's (it may be the lowest), or it lies
# below R with a first-fold error above R's by at most `margin` times the
# standard deviation of R's errors over the folds (it may fall within one
# standard error). The errors of neighbouring ranks move together over the
# folds (the folds shift them alike), so a rank further above R on the
# first fold is taken to be above it in mean.
refine_ranks <- function(results, nfolds, margin = 3) {
  n_folds <- table(results$rank)
  tried <- sort(as.integer(names(n_folds)))
  full <- as.integer(names(n_folds)[n_folds == nfolds])
  s <- cv_summary(results[results$rank %in% full, ])
  lo <- which.min(s$mean)
  ok <- which(s$mean <= s$mean[lo] + s$se[lo])
  top <- s$rank[lo]
  screen <- integer()
  for (side in list(c(top, -1), c(top, 1), c(s$rank[min(ok)], -1))) {
    near <- tried[sign(tried - side[1]) == side[2]]
    if (!length(near)) next
    a <- if (side[2] < 0) max(near) else min(near)
    if (abs(a - side[1]) > 1L) screen <- c(screen, (a + side[1]) %/% 2L)
  }
  first <- results[results$fold == 1L, ]
  e1 <- function(r) first$error[match(r, first$rank)]
  part <- setdiff(tried, full)
  gap <- e1(part) - e1(top)
  sd_top <- s$se[lo] * sqrt(nfolds)
  complete <- part[gap < 0 | (part < top & gap <= margin * sd_top)]
  list(screen = sort(unique(as.integer(screen))),
       complete = sort(as.integer(complete)))
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
  cat(sprintf("Tried %d of the %d ranks from %d to %d (%d on every fold, the others on the first):\n",
              nrow(s), x$range[2] - x$range[1] + 1L, x$range[1], x$range[2],
              sum(s$folds == x$nfolds)))
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
  graphics::plot(s$rank, s$mean, type = "n",
                 ylim = range(lo, hi, s$mean, na.rm = TRUE),
                 xlim = x$range, xlab = "rank",
                 ylab = rank_error_label(x),
                 main = "Rank search: held-out error of the ranks tried")
  ok <- !is.na(s$se) & hi - lo > 1e-3 * abs(s$mean)
  if (any(ok)) {
    graphics::arrows(s$rank[ok], lo[ok], s$rank[ok], hi[ok], angle = 90,
                     code = 3, length = 0.03, col = "grey50")
  }
  cols <- grDevices::hcl.colors(max(s$round), "viridis")
  graphics::points(s$rank, s$mean, pch = ifelse(s$folds == x$nfolds, 19, 1),
                   col = cols[s$round])
  graphics::text(s$rank, s$mean, s$round, pos = 3, cex = 0.7)
  graphics::abline(h = s$mean[s$rank == x$min] + s$se[s$rank == x$min],
                   lty = 3, col = "grey40")
  graphics::abline(v = x$rank, lty = 2)
  graphics::legend("topright", bty = "n", cex = 0.8,
                   legend = c("chosen rank", "lowest mean + 1 SE",
                              "every fold (mean, SE)", "first fold only",
                              "label: search round"),
                   lty = c(2, 3, NA, NA, NA), pch = c(NA, NA, 19, 1, NA),
                   col = c("black", "grey40", "grey30", "grey30", NA))
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
