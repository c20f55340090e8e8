#' Inspect feature-level differential tests
#'
#' Methods for the result of [nmf_differential()]. `print()` shows a short
#' header and the rows with the smallest p-values; `summary()` returns a
#' `summary.nmfkit_differential` object: the number of tests and of
#' discoveries at Benjamini-Hochberg level `alpha` (overall and per
#' component or stratum), the discoveries ordered by p-value and, for a
#' joint fit, the components' tests; `tidy()` gives the table (one row per
#' feature and component or stratum, a plain data frame); `glance()` one
#' row about the test; `augment()` one row per feature, with the number of
#' its discoveries, its smallest adjusted p-value and where it is; `plot()`
#' draws a volcano plot: the estimate against `-log10(p_value)`, the
#' discoveries at `alpha` in colour (by the sign of the estimate), up to
#' `top` of them labelled with their feature and component or stratum,
#' chosen in order of p-value among those whose labels do not overlap.
#'
#' @param x,object An `nmfkit_differential` object (for `print()` also its
#'   summary).
#' @param n Number of rows to print.
#' @param alpha Level of the Benjamini-Hochberg adjusted p-values at which a
#'   test is a discovery, in `(0, 1)`.
#' @param top Largest number of discoveries to label, at least 0.
#' @param data For `augment()`: `NULL`, or a data frame with one row per
#'   feature of the fit, in their order, to which the columns are added.
#' @param ... Unused; an argument given here is an error (a misspelling);
#'   `plot()` takes graphical parameters, which replace the plot's own.
#' @return `print()` and `plot()` return `x` invisibly; `summary()` a list
#'   of class `summary.nmfkit_differential` (`type`, `B`, `alpha`, `tests`,
#'   `discoveries`, `by` (a data frame of counts per component or
#'   stratum), `table` (the discoveries) and, for a joint fit,
#'   `components`); `tidy()`, `glance()` and `augment()` data frames:
#'   `glance()` with `type`, `B`, `tests`, `discoveries` (at 5 %),
#'   `permutations` (the most any test used), `min_p_value` and, for a
#'   joint fit, `component_discoveries`; `augment()` with `feature` (or
#'   `data`), `.discoveries`, `.p_adjusted` (the smallest), `.where` (its
#'   component or stratum) and `.estimate` there.
#' @examples
#' set.seed(1)
#' W <- matrix(runif(12 * 2), 12, 2)
#' s <- lapply(1:2, function(i) W %*% matrix(runif(2 * 15), 2, 15) +
#'   (i == 2) * (1:12 <= 3))
#' sfit <- nmf_stratified(setNames(s, c("a", "b")), rank = 2,
#'                        control = nmf_control(update = "hals",
#'                                              max_iter = 50))
#' dt <- nmf_differential(sfit, B = 99)
#' print(dt, n = 3)
#' summary(dt, alpha = 0.1)
#' head(tidy(dt))
#' glance(dt)
#' head(augment(dt))
#' plot(dt, top = 3)
#' @name print.nmfkit_differential
NULL

#' @rdname print.nmfkit_differential
#' @export
print.nmfkit_differential <- function(x, n = 6L, ...) {
  check_dots_empty()
  n <- check_count(n, min = 0)
  tab <- x$table
  by <- names(tab)[2]
  cat(sprintf("Feature-level differential test (%s NMF, up to %d permutation%s)\n",
              x$type, x$B, if (x$B == 1L) "" else "s"))
  cat(sprintf("%d tests (%d features x %d %s); %d with BH-adjusted p < 0.05\n",
              nrow(tab), length(unique(tab$feature)), nlevels(tab[[2]]),
              if (by == "component") "components" else "strata",
              sum(tab$p_adjusted < 0.05)))
  if (!is.null(x$components)) {
    cat(sprintf("Components used differently (p-bar, BH < 0.05): %s\n",
                differential_names(x$components, 0.05)))
  }
  if (n > 0L) print(differential_rows(tab, n), row.names = FALSE)
  invisible(x)
}

# The n rows of smallest p-value (then largest |statistic|), rounded.
differential_rows <- function(tab, n) {
  top <- tab[order(tab$p_value, -abs(tab$statistic)), , drop = FALSE]
  top <- utils::head(top, n)
  num <- vapply(top, is.double, logical(1))
  top[num] <- lapply(top[num], signif, digits = 3)
  top
}

differential_names <- function(comp, alpha) {
  hit <- as.character(comp$component[comp$p_adjusted < alpha])
  if (length(hit)) paste(hit, collapse = ", ") else "none"
}

#' @rdname print.nmfkit_differential
#' @export
summary.nmfkit_differential <- function(object, alpha = 0.05, ...) {
  check_dots_empty()
  alpha <- check_level(alpha)
  tab <- object$table
  hit <- tab$p_adjusted < alpha
  by <- names(tab)[2]
  counts <- data.frame(
    by = levels(tab[[2]]),
    tests = as.integer(table(tab[[2]])),
    discoveries = as.integer(tapply(hit, tab[[2]], sum)),
    up = as.integer(tapply(hit & tab$statistic > 0, tab[[2]], sum)),
    down = as.integer(tapply(hit & tab$statistic < 0, tab[[2]], sum)),
    stringsAsFactors = FALSE
  )
  names(counts)[1] <- by
  found <- tab[hit, , drop = FALSE]
  found <- found[order(found$p_value, -abs(found$statistic)), , drop = FALSE]
  rownames(found) <- NULL
  structure(list(type = object$type, B = object$B, alpha = alpha,
                 tests = nrow(tab), discoveries = sum(hit), by = counts,
                 table = found, components = object$components),
            class = "summary.nmfkit_differential")
}

#' @rdname print.nmfkit_differential
#' @export
print.summary.nmfkit_differential <- function(x, n = 10L, ...) {
  check_dots_empty()
  n <- check_count(n, min = 0)
  cat(sprintf("Feature-level differential test (%s NMF, up to %d permutation%s)\n",
              x$type, x$B, if (x$B == 1L) "" else "s"))
  if (!is.null(x$components)) {
    cat("Components (p-bar: used more by the first set when positive):\n")
    comp <- x$components
    num <- vapply(comp, is.double, logical(1))
    comp[num] <- lapply(comp[num], signif, digits = 3)
    print(comp, row.names = FALSE)
  }
  cat(sprintf("%d of %d feature tests with BH-adjusted p < %s\n",
              x$discoveries, x$tests, format(x$alpha)))
  print(x$by, row.names = FALSE)
  if (n > 0L && nrow(x$table)) {
    cat("Discoveries:\n")
    print(differential_rows(x$table, n), row.names = FALSE)
    if (nrow(x$table) > n) cat(sprintf("... %d more\n", nrow(x$table) - n))
  }
  invisible(x)
}

#' @rdname print.nmfkit_differential
#' @method tidy nmfkit_differential
#' @export
tidy.nmfkit_differential <- function(x, ...) {
  check_dots_empty()
  out <- x$table
  rownames(out) <- NULL
  out
}

#' @rdname print.nmfkit_differential
#' @method glance nmfkit_differential
#' @export
glance.nmfkit_differential <- function(x, ...) {
  check_dots_empty()
  tab <- x$table
  out <- data.frame(type = x$type, B = x$B, tests = nrow(tab),
                    discoveries = sum(tab$p_adjusted < 0.05),
                    permutations = max(tab$permutations),
                    min_p_value = min(tab$p_value),
                    stringsAsFactors = FALSE)
  if (!is.null(x$components)) {
    out$component_discoveries <- sum(x$components$p_adjusted < 0.05)
  }
  out
}

#' @rdname print.nmfkit_differential
#' @method augment nmfkit_differential
#' @export
augment.nmfkit_differential <- function(x, data = NULL, alpha = 0.05, ...) {
  check_dots_empty()
  alpha <- check_level(alpha)
  tab <- x$table
  features <- unique(tab$feature)
  m <- length(features)
  if (is.null(data)) {
    data <- data.frame(feature = features, stringsAsFactors = FALSE)
  } else if (!is.data.frame(data) || nrow(data) != m) {
    abort_nmfkit(c("{.arg data} must be a data frame with one row per feature ({m}).",
                   "x" = if (is.data.frame(data)) "It has {nrow(data)} row{?s}."
                         else "It is {.obj_type_friendly {data}}."),
                 "data", value = data)
  }
  padj <- matrix(tab$p_adjusted, m)
  best <- max.col(-padj, ties.method = "first")
  data$.discoveries <- rowSums(padj < alpha)
  data$.p_adjusted <- padj[cbind(seq_len(m), best)]
  data$.where <- factor(levels(tab[[2]])[best], levels = levels(tab[[2]]))
  data$.estimate <- matrix(tab$estimate, m)[cbind(seq_len(m), best)]
  data
}

#' @rdname print.nmfkit_differential
#' @export
plot.nmfkit_differential <- function(x, alpha = 0.05, top = 10L, ...) {
  check_graphics_dots()
  alpha <- check_level(alpha)
  top <- check_count(top, min = 0)
  tab <- x$table
  y <- -log10(tab$p_value)
  hit <- tab$p_adjusted < alpha
  col <- ifelse(!hit, "grey60",
                ifelse(tab$estimate >= 0, "#D55E00", "#0072B2"))
  by <- names(tab)[2]
  what <- if (x$type == "joint") {
    sets <- levels(x$fit$set)
    sprintf("difference of loadings (%s - %s), share of the component",
            sets[1], sets[2])
  } else {
    "centred shift"
  }
  draw(graphics::plot, tab$estimate, y, col = col,
       pch = ifelse(hit, 19, 1), cex = 0.8, xlab = what,
       ylab = "-log10(p-value)",
       main = sprintf("Differential features (%s, BH %s)", x$type,
                      format(alpha)),
       ylim = c(0, max(y, 1) * 1.2), user = list(...))
  graphics::abline(v = 0, col = "grey80")
  if (any(hit)) {
    # the least significant discovery's p-value: where BH draws the line
    graphics::abline(h = -log10(max(tab$p_value[hit])), lty = 2,
                     col = "grey40")
  }
  lab <- which(hit)
  lab <- lab[order(tab$p_value[lab], -abs(tab$statistic[lab]))]
  if (length(lab) && top > 0L) {
    text <- paste(tab$feature[lab], tab[[by]][lab], sep = ":")
    keep <- place_labels(tab$estimate[lab], y[lab], text, top, cex = 0.65)
    graphics::text(keep$x, keep$y, keep$text, cex = 0.65, pos = 3,
                   offset = 0.3, xpd = TRUE)
  }
  invisible(x)
}

# A subset of labels, in the given order of priority, at most `top`, whose
# boxes (above their points, as text(pos = 3) draws them) overlap neither
# each other nor the plot's edge: the first that fit are kept.
place_labels <- function(x, y, text, top, cex) {
  usr <- graphics::par("usr")
  w <- graphics::strwidth(text, cex = cex) * 1.05
  h <- graphics::strheight("M", cex = cex) * 1.6
  lift <- graphics::strheight("M", cex = cex) * 0.6
  box <- cbind(x - w / 2, y + lift, x + w / 2, y + lift + h)
  kept <- integer()
  for (i in seq_along(text)) {
    if (length(kept) >= top) break
    b <- box[i, ]
    if (b[1] < usr[1] || b[3] > usr[2] || b[4] > usr[4]) next
    clash <- any(b[1] < box[kept, 3] & b[3] > box[kept, 1] &
                   b[2] < box[kept, 4] & b[4] > box[kept, 2])
    if (!clash) kept <- c(kept, i)
  }
  list(x = x[kept], y = y[kept], text = text[kept])
}
