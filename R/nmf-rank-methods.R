#' Inspect a rank selection
#'
#' Methods for the result of [nmf_rank()]. `print()` shows the per-rank
#' table and the chosen ranks; `summary()` returns that table, a data frame
#' of class `summary.nmfkit_rank` that prints itself (mean and
#' standard error of the held-out error over folds for `"cv"`; cophenetic
#' correlation and dispersion for `"consensus"`); `as.data.frame()` and
#' `tidy()` return the raw results (one row per rank and fold for `"cv"`);
#' `glance()` one row: the method, the number of ranks and folds, and the
#' ranks chosen (lowest mean and one-standard-error for `"cv"`, the highest
#' cophenetic correlation for `"consensus"`); `plot()` draws
#' the held-out error with one-standard-error bars against rank (`"cv"`),
#' the cophenetic correlation and dispersion against rank (`"consensus"`),
#' or, with `rank =`, the consensus matrix of that rank as a heatmap, its
#' samples ordered by average-linkage clustering.
#'
#' @param x,object A `nmfkit_rank` object.
#' @param rank For `plot()` of a consensus selection: the rank whose
#'   consensus matrix to draw; `NULL` draws the curves.
#' @param row.names `NULL`, or one distinct name per row of the results.
#' @param optional `TRUE` or `FALSE` (for the generic; the columns keep
#'   their names either way).
#' @param ... Unused (an argument given here is an error), but for
#'   `plot()`: graphical parameters, which replace the plot's own.
#' @return `print()` and `plot()` return `x` invisibly; `summary()` a data
#'   frame of class `summary.nmfkit_rank`; `as.data.frame()`, `tidy()` and
#'   `glance()` data frames.
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' r <- nmf_rank(x[, 1:64], rank = 2:5, method = "consensus", nrun = 4,
#'               control = nmf_control(max_iter = 50))
#' summary(r)
#' plot(r)
#' plot(r, rank = 4)
#' @name print.nmfkit_rank
NULL

#' @rdname print.nmfkit_rank
#' @export
print.nmfkit_rank <- function(x, ...) {
  check_dots_empty()
  s <- summary(x)
  if (x$method == "cv") {
    nf <- length(unique(x$results$fold))
    cat(sprintf("NMF rank selection by cross-validation (%d folds)\n", nf))
    cat("Held-out relative error by rank (mean and standard error):\n")
    print(format(as.data.frame(s), digits = 3), row.names = FALSE)
    cat(sprintf("Lowest mean error at rank %d; one-standard-error rank %d.\n",
                x$best[["min"]], x$best[["one_se"]]))
  } else {
    cat("NMF rank selection by consensus clustering\n")
    print(format(as.data.frame(s), digits = 3), row.names = FALSE)
  }
  invisible(x)
}

#' @rdname print.nmfkit_rank
#' @export
summary.nmfkit_rank <- function(object, ...) {
  check_dots_empty()
  if (object$method == "cv") {
    new_summary_table(cv_summary(object$results), "nmfkit_rank",
                      "Held-out relative error by rank (mean and standard error)")
  } else {
    new_summary_table(object$results, "nmfkit_rank",
                      "Consensus clustering by rank")
  }
}

#' @rdname print.nmfkit_rank
#' @method tidy nmfkit_rank
#' @export
tidy.nmfkit_rank <- function(x, ...) {
  check_dots_empty()
  x$results
}

#' @rdname print.nmfkit_rank
#' @method glance nmfkit_rank
#' @export
glance.nmfkit_rank <- function(x, ...) {
  check_dots_empty()
  r <- x$results
  cv <- x$method == "cv"
  data.frame(method = x$method, ranks = length(x$ranks),
             folds = if (cv) length(unique(r$fold)) else NA_integer_,
             min_rank = if (cv) x$best[["min"]] else NA_integer_,
             one_se_rank = if (cv) x$best[["one_se"]] else NA_integer_,
             cophenetic_rank = if (cv) NA_integer_ else
               r$rank[which.max(r$cophenetic)],
             stringsAsFactors = FALSE)
}

#' @rdname print.nmfkit_rank
#' @export
as.data.frame.nmfkit_rank <- function(x, row.names = NULL, optional = FALSE,
                                      ...) {
  check_dots_empty()
  results_frame(x$results, row.names, optional)
}

#' @rdname print.nmfkit_rank
#' @export
plot.nmfkit_rank <- function(x, rank = NULL, ...) {
  check_graphics_dots()
  if (!is.null(rank)) {
    if (x$method != "consensus") {
      abort_nmfkit(c("{.arg rank} draws a consensus matrix, which only {.code method = \"consensus\"} computes.",
                     "i" = "Omit {.arg rank} to plot the held-out error."),
                   "rank")
    }
    if (!is_number(rank) || !as.character(rank) %in% names(x$consensus)) {
      abort_nmfkit(c("{.arg rank} must be one of the ranks tried: {names(x$consensus)}.",
                     "x" = "It is {describe_value(rank)}."), "rank")
    }
    cm <- x$consensus[[as.character(rank)]]
    ord <- stats::hclust(stats::as.dist(1 - cm), method = "average")$order
    plot_heatmap(cm[ord, ord], main = sprintf("Consensus matrix, rank %s",
                                              rank),
                 xlab = "sample", ylab = "sample",
                 user = utils::modifyList(list(zlim = c(0, 1)), list(...)))
    return(invisible(x))
  }
  s <- summary(x)
  if (x$method == "cv") {
    # log scale (errors span decades once the rank is right); bars that
    # reach below zero are cut at a tenth of the smallest mean
    log_y <- all(s$mean > 0)
    lo <- s$mean - s$se
    if (log_y) lo <- pmax(lo, min(s$mean) / 10)
    hi <- s$mean + s$se
    draw(graphics::plot, s$rank, s$mean, type = "b", pch = 19,
         ylim = range(lo, hi), log = if (log_y) "y" else "", xlab = "rank",
         ylab = rank_error_label(x), main = "Cross-validation",
         user = list(...))
    ok <- hi / lo > 1.001
    if (any(ok)) {
      graphics::arrows(s$rank[ok], lo[ok], s$rank[ok], hi[ok], angle = 90,
                       code = 3, length = 0.04)
    }
    graphics::abline(v = x$best, lty = c(2, 3), col = "grey40")
  } else {
    old <- graphics::par(mfrow = c(1, 2))
    on.exit(graphics::par(old))
    draw(graphics::plot, s$rank, s$cophenetic, type = "b", pch = 19,
         xlab = "rank", ylab = "cophenetic correlation", main = "Cophenetic",
         user = list(...))
    draw(graphics::plot, s$rank, s$dispersion, type = "b", pch = 19,
         xlab = "rank", ylab = "dispersion", main = "Dispersion",
         user = list(...))
  }
  invisible(x)
}

# The y label of a cross-validation plot: the loss its folds were scored by.
rank_error_label <- function(x) {
  fit_loss(x)$holdout_label
}
