#' Inspect a tuning grid
#'
#' Methods for the result of [nmf_tune()]. `print()` shows the grid's
#' held-out errors and the two choices; `summary()` and `tidy()` return the
#' table of one row per grid row (its settings, `mean` and `se` of the
#' held-out error over folds); `glance()` one row about the whole tuning;
#' `as.data.frame()` the raw results (one row per grid row and fold);
#' `plot()` draws the mean held-out error with one-standard-error bars
#' against rank, one line per other setting of the grid, the
#' one-standard-error choice circled and the lowest mean marked by a cross.
#'
#' @param x,object An `nmfkit_tune` object.
#' @param settings For `plot()`: the settings (lines) to draw, by index or
#'   label (as `print()` names them); `NULL` for all.
#' @param row.names `NULL`, or one distinct name per row of the results.
#' @param optional `TRUE` or `FALSE` (for the generic; the columns keep
#'   their names either way).
#' @param ... Unused (an argument given here is an error), but for
#'   `plot()`: graphical parameters, which replace the plot's own.
#' @return `print()` and `plot()` return `x` invisibly; the others data
#'   frames. `glance()`: `settings` (grid rows), `nfolds`, `holdout`,
#'   `score`, and the rank, settings label and mean error of the `min` and
#'   `one_se` choices.
#' @examples
#' set.seed(1)
#' x <- matrix(runif(30 * 3), 30) %*% matrix(runif(3 * 20), 3)
#' tu <- nmf_tune(x, rank = 2:4, loss = c("frobenius", "kl"), nfolds = 2,
#'                fraction = 0.1, control = nmf_control(max_iter = 50))
#' summary(tu)
#' glance(tu)
#' plot(tu)
#' @name print.nmfkit_tune
NULL

#' @rdname print.nmfkit_tune
#' @export
print.nmfkit_tune <- function(x, ...) {
  check_dots_empty()
  how <- if (x$holdout == "blocks") "bi-cross-validation blocks" else
    "held-out entries"
  cat(sprintf("NMF tuning by cross-validation (%d folds of %s; %d settings)\n",
              x$nfolds, how, nrow(x$summary)))
  cat(sprintf("Held-out %s (mean and standard error):\n",
              tune_score_label(x)))
  s <- x$summary
  keep <- vapply(s, function(col) length(unique(col)) > 1L, logical(1))
  keep[c("rank", "mean", "se")] <- TRUE
  s <- s[keep]
  shown <- if (nrow(s) > 30L) s[seq_len(30L), , drop = FALSE] else s
  print(format(shown, digits = 3), row.names = FALSE)
  if (nrow(s) > 30L) cat(sprintf("... and %d more rows\n", nrow(s) - 30L))
  lab <- tune_labels(x$best, x$grid)
  cat(sprintf("Lowest mean error: rank %d%s; one-standard-error choice: rank %d%s.\n",
              x$best$rank[1], tune_suffix(lab[1]), x$best$rank[2],
              tune_suffix(lab[2])))
  invisible(x)
}

#' @rdname print.nmfkit_tune
#' @export
summary.nmfkit_tune <- function(object, ...) {
  check_dots_empty()
  new_summary_table(object$summary, "nmfkit_tune",
                    "Held-out error by setting (mean and standard error)")
}

#' @rdname print.nmfkit_tune
#' @method tidy nmfkit_tune
#' @export
tidy.nmfkit_tune <- function(x, ...) {
  check_dots_empty()
  x$summary
}

#' @rdname print.nmfkit_tune
#' @method glance nmfkit_tune
#' @export
glance.nmfkit_tune <- function(x, ...) {
  check_dots_empty()
  lab <- tune_labels(x$best, x$grid)
  data.frame(settings = nrow(x$summary), nfolds = x$nfolds,
             holdout = x$holdout, score = x$score[["name"]],
             min_rank = x$best$rank[1], min_setting = lab[1],
             min_error = x$best$mean[1], one_se_rank = x$best$rank[2],
             one_se_setting = lab[2], one_se_error = x$best$mean[2],
             stringsAsFactors = FALSE)
}

#' @rdname print.nmfkit_tune
#' @export
as.data.frame.nmfkit_tune <- function(x, row.names = NULL, optional = FALSE,
                                      ...) {
  check_dots_empty()
  results_frame(x$results, row.names, optional)
}

#' @rdname print.nmfkit_tune
#' @export
plot.nmfkit_tune <- function(x, settings = NULL, ...) {
  check_graphics_dots()
  d <- tune_plot_data(x, settings)
  s <- d$s
  ns <- length(d$settings)
  cols <- if (ns > 1L) grDevices::hcl.colors(ns, "Dark 3") else "black"
  ylim <- range(s$lo, s$hi)
  if (ns > 1L) {
    # room above the curves for the legend (a share of the log range on a
    # log axis)
    room <- 0.08 * (ns + 1)
    ylim[2] <- if (d$log_y) ylim[2] * (ylim[2] / ylim[1])^room else
      ylim[2] + room * diff(ylim)
  }
  draw(graphics::plot, s$px, s$mean, type = "n", ylim = ylim,
       log = if (d$log_y) "y" else "", xlab = "rank",
       ylab = tune_score_label(x), main = "Cross-validation grid",
       xaxt = "n", user = list(...))
  graphics::axis(1, at = sort(unique(s$rank)))
  for (q in seq_len(ns)) {
    r <- which(s$line == q)
    r <- r[order(s$rank[r])]
    graphics::lines(s$px[r], s$mean[r], type = "b", pch = 19, col = cols[q])
    ok <- r[s$hi[r] / s$lo[r] > 1.001]
    if (length(ok)) {
      graphics::arrows(s$px[ok], s$lo[ok], s$px[ok], s$hi[ok], angle = 90,
                       code = 3, length = 0.03, col = cols[q])
    }
  }
  b <- s[d$best, , drop = FALSE]
  graphics::points(b$px[1], b$mean[1], pch = 4, cex = 2, lwd = 2)
  graphics::points(b$px[2], b$mean[2], pch = 1, cex = 2.5, lwd = 2)
  if (ns > 1L) {
    graphics::legend("topright", legend = d$settings, col = cols, lty = 1,
                     pch = 19, bty = "n", cex = 0.8, ncol = if (ns > 6L) 2L
                     else 1L)
  }
  invisible(x)
}

# What plot() and autoplot() draw: the summary with each row's setting
# label, line, x position (the lines side by side, so that their bars do
# not hide each other) and bar ends (log scale as for nmf_rank(): bars
# below zero cut at a tenth of the smallest mean); the rows of the two
# choices.
tune_plot_data <- function(x, settings = NULL, call = rlang::caller_env()) {
  s <- x$summary
  s$setting <- tune_labels(s, x$grid)
  all_settings <- unique(s$setting)
  if (!is.null(settings)) {
    ok <- if (is.numeric(settings)) {
      length(settings) && all(settings %in% seq_along(all_settings))
    } else {
      is.character(settings) && length(settings) &&
        all(settings %in% all_settings)
    }
    if (!ok) {
      abort_nmfkit(c("{.arg settings} must be indices or labels of the grid's settings.",
                     "x" = "It is {describe_value(settings)}.",
                     "i" = "The settings are {.val {all_settings}}."),
                   "value", call = call, value = settings)
    }
    keep <- if (is.numeric(settings)) all_settings[settings] else settings
    s <- s[s$setting %in% keep, , drop = FALSE]
  }
  settings <- unique(s$setting)
  ns <- length(settings)
  s$line <- match(s$setting, settings)
  s$px <- s$rank + if (ns > 1L) (s$line - (ns + 1) / 2) * 0.3 / ns else 0
  log_y <- all(s$mean > 0)
  s$lo <- s$mean - s$se
  if (log_y) s$lo <- pmax(s$lo, min(s$mean) / 10)
  s$hi <- s$mean + s$se
  # the choices, when their settings are drawn (NA otherwise)
  b_lab <- tune_labels(x$best, x$grid)
  best <- vapply(1:2, function(b) {
    which(s$rank == x$best$rank[b] & s$setting == b_lab[b])[1]
  }, integer(1))
  list(s = s, settings = settings, log_y = log_y, best = best)
}

# Each row's setting apart from its rank: the grid's columns that vary
# ("l1 = 0.1, kl, manifold"); "" when only the rank varies.
tune_labels <- function(rows, grid) {
  cols <- setdiff(names(grid), "rank")
  vary <- cols[vapply(grid[cols], function(col) length(unique(col)) > 1L,
                      logical(1))]
  if (!length(vary)) return(rep("", nrow(rows)))
  parts <- lapply(vary, function(p) {
    v <- rows[[p]]
    if (p %in% c("loss", "variant")) ifelse(is.na(v), "", v)
    else ifelse(is.na(v), "", paste(p, "=", vapply(v, format, "",
                                                    digits = 3)))
  })
  out <- do.call(paste, c(parts, sep = ", "))
  out <- gsub("(, )+", ", ", out)
  sub("^, |, $", "", out)
}

tune_suffix <- function(label) if (nzchar(label)) paste0(", ", label) else ""

tune_score_label <- function(x) {
  check_loss(as.numeric(x$score[["beta"]]))$score_label
}
