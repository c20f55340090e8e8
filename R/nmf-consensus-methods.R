#' Inspect consensus programs
#'
#' Methods for the result of [nmf_consensus()]. `print()` shows the
#' per-rank table; `summary()` returns it (`rank`, `stability`, `error`,
#' `kept`, `agreement`), a data frame of class `summary.nmfkit_consensus`
#' that prints itself; `basis()` and `coef()` give the programs `W` and
#' coefficients `H` at one rank (`rank`, or the only one); `plot()` and `autoplot()` draw, for
#' `type = "selection"`, stability (mean silhouette width) and error against
#' rank, as cNMF's k-selection plot; for `"density"`, the histogram of the
#' local densities of the run components with the threshold; for
#' `"basis"`, the programs of one rank (as [plot.nmfkit()] draws a basis).
#' `tidy()` gives the programs (`matrix = "W"`) or coefficients (`"H"`) of
#' every rank in long form with a `rank` column; `glance()` one row per
#' rank. The model at one rank is `x$fits[["<rank>"]]`, an nmfkit model
#' with every method of a fit.
#'
#' @param x,object An `nmfkit_consensus` object.
#' @param type What to draw: `"selection"`, `"density"` or `"basis"`.
#' @param rank For `"density"` and `"basis"`, `basis()` and `coef()`: the
#'   rank, one of those fitted (`NULL`: all ranks for `"density"`; the only
#'   rank, or an error, otherwise).
#' @param matrix For `tidy()`: `"W"` (programs) or `"H"` (coefficients).
#' @param ... Unused; an argument given here is an error (a misspelling);
#'   `plot()` takes graphical parameters, which replace the plot's own.
#' @return `print()` and `plot()` return `x` invisibly; `summary()`,
#'   `tidy()` and `glance()` data frames; `basis()` and `coef()` matrices;
#'   `autoplot()` a ggplot.
#' @examples
#' x <- swimmer()[, 1:96]
#' set.seed(1)
#' cons <- nmf_consensus(x, rank = c(4, 8), nrun = 4,
#'                       control = nmf_control(max_iter = 50))
#' summary(cons)
#' plot(cons)
#' plot(cons, type = "density")
#' head(tidy(cons))
#' @name print.nmfkit_consensus
NULL

#' @rdname print.nmfkit_consensus
#' @export
print.nmfkit_consensus <- function(x, ...) {
  check_dots_empty()
  cat(sprintf(
    "Consensus NMF programs (cNMF): %d run%s per rank; local density over %d neighbour%s below %s\n",
    x$nrun, if (x$nrun == 1L) "" else "s", x$neighbors,
    if (x$neighbors == 1L) "" else "s", format(x$density_threshold)))
  print(format(x$results, digits = 3), row.names = FALSE)
  print_rank_note(x)
  invisible(x)
}

#' @rdname print.nmfkit_consensus
#' @export
summary.nmfkit_consensus <- function(object, ...) {
  check_dots_empty()
  new_summary_table(object$results, "nmfkit_consensus",
                    "Consensus programs by rank")
}

#' @rdname print.nmfkit_consensus
#' @export
plot.nmfkit_consensus <- function(x, type = c("selection", "density",
                                              "basis"), rank = NULL, ...) {
  check_graphics_dots()
  type <- check_choice(type)
  # checked whatever the type (the selection plot does not read it)
  consensus_fits(x, rank, one = type == "basis")
  switch(type,
    selection = {
      r <- x$results
      old <- graphics::par(mar = c(5, 4, 4, 5) + 0.1)
      on.exit(graphics::par(old))
      stab <- if (all(is.na(r$stability))) c(0, 1) else r$stability
      draw(graphics::plot, r$rank, r$stability, type = "b", pch = 19,
           col = "#1f77b4", ylim = range(stab, na.rm = TRUE), xlab = "rank",
           ylab = "stability (mean silhouette)",
           main = "Consensus rank selection", xaxt = "n", user = list(...))
      graphics::axis(1, at = r$rank)
      graphics::par(new = TRUE)
      graphics::plot(r$rank, r$error, type = "b", pch = 17, col = "#d62728",
                     axes = FALSE, xlab = "", ylab = "")
      graphics::axis(4, col.axis = "#d62728")
      graphics::mtext("relative error", side = 4, line = 3, col = "#d62728")
    },
    density = {
      d <- unlist(lapply(consensus_fits(x, rank), `[[`, "density"))
      draw(graphics::hist, d, breaks = 30, xlab = "local density",
           main = "Local density of run components", user = list(...))
      graphics::abline(v = x$density_threshold, col = "#d62728", lty = 2)
    },
    basis = graphics::plot(consensus_fits(x, rank, one = TRUE)[[1]],
                           type = "basis", ...)
  )
  invisible(x)
}

#' @rdname print.nmfkit_consensus
#' @export
basis.nmfkit_consensus <- function(object, rank = NULL, ...) {
  check_dots_empty()
  consensus_fits(object, rank, one = TRUE)[[1]]$W
}

#' @rdname print.nmfkit_consensus
#' @export
coef.nmfkit_consensus <- function(object, rank = NULL, ...) {
  check_dots_empty()
  consensus_fits(object, rank, one = TRUE)[[1]]$H
}

#' @rdname print.nmfkit_consensus
#' @method tidy nmfkit_consensus
#' @export
tidy.nmfkit_consensus <- function(x, matrix = c("W", "H"), ...) {
  check_dots_empty()
  matrix <- check_choice(matrix)
  out <- lapply(x$fits, function(f) {
    d <- tidy_factor(f, matrix)
    cbind(rank = f$rank, d)
  })
  out <- do.call(rbind, out)
  rownames(out) <- NULL
  out
}

#' @rdname print.nmfkit_consensus
#' @method glance nmfkit_consensus
#' @export
glance.nmfkit_consensus <- function(x, ...) {
  check_dots_empty()
  x$results
}

# The fits of a consensus at `rank` (NULL: all; with `one`, the only one).
consensus_fits <- function(x, rank, one = FALSE, arg = "rank",
                           call = rlang::caller_env()) {
  if (is.null(rank)) {
    if (one && length(x$fits) > 1L) {
      abort_nmfkit(c("{.arg {arg}} must choose one of the ranks fitted: {x$ranks}.",
                     "x" = "It is missing."), "rank", call = call)
    }
    return(x$fits)
  }
  if (!is_number(rank) || !as.character(rank) %in% names(x$fits)) {
    abort_nmfkit(c("{.arg {arg}} must be one of the ranks fitted: {x$ranks}.",
                   "x" = "It is {describe_value(rank)}."),
                 "rank", call = call, value = rank)
  }
  x$fits[as.character(rank)]
}

#' @export
print_extra.nmfkit_programs <- function(x, digits = 4L, ...) {
  cat(sprintf(
    "Consensus of %d runs: %d of %d components kept; stability (silhouette) %s, agreement %s\n",
    length(x$run_loss), sum(x$kept), length(x$kept),
    format(x$silhouette, digits = digits),
    format(mean(x$agreement), digits = digits)))
  invisible(NULL)
}
