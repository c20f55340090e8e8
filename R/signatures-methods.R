#' Inspect extracted signatures and refitted exposures
#'
#' Methods for [nmf_signatures()] (class `nmfkit_signatures`) and
#' [refit_signatures()] (class `nmfkit_refit`).
#'
#' For `nmfkit_signatures`: `print()` shows the per-rank table and the
#' chosen rank; `summary()` returns the table (a data frame of class
#' `summary.nmfkit_signatures`); `glance()` one row: the chosen rank, the
#' ranks tried, the replicates and the chosen rank's stability and
#' cosine; `coef()` and `basis()` give
#' the exposures and signatures of the chosen rank (or of `rank`);
#' `plot()` draws, for `type = "rank"`, stability and mean reconstruction
#' cosine against rank with the thresholds and the chosen rank marked;
#' for `"signatures"`, the consensus spectra of a rank with their
#' per-entry intervals ([plot_spectra()]); for `"exposures"`, the
#' samples' exposures as stacked bars. `tidy()` gives the signatures
#' (`matrix = "W"`: `context`, `signature`, `value`, `sd`, `lower`,
#' `upper`) or exposures (`"H"`) of a rank in long form.
#'
#' For `nmfkit_refit`: `print()` and `summary()` (per signature: the
#' samples in which it is present, its share of all exposures, and with
#' intervals the mean share of replicates in which it is present; a data
#' frame of class `summary.nmfkit_refit`); `glance()` one row (samples,
#' signatures, signatures used, loss, selection, replicates and the
#' reconstruction cosine); `coef()` the exposures; `fitted()` `W h`;
#' `tidy()` one row per signature and sample (`exposure`, and with
#' intervals `lower`, `upper`, `present`); `plot()` the exposures as
#' stacked bars (`type = "exposures"`, relative with `proportions = TRUE`)
#' or, with intervals, each sample's exposures with their intervals
#' (`"intervals"`).
#'
#' @param x,object An `nmfkit_signatures` or `nmfkit_refit` object.
#' @param type What to draw (see Details).
#' @param rank A rank of the extraction (by default the chosen one).
#' @param matrix For `tidy()`: `"W"` or `"H"`.
#' @param proportions Draw exposures as shares of each sample.
#' @param ... Unused; an argument given here is an error (a misspelling);
#'   `plot()` takes graphical parameters, which replace the plot's own.
#' @return `print()` and `plot()` return `x` invisibly; `summary()`,
#'   `tidy()` and `glance()` data frames; `coef()`, `basis()`, `fitted()`
#'   matrices.
#' @examples
#' set.seed(1)
#' W <- simulate_signatures(3)
#' sim <- simulate_catalogue(W, n = 20, mutations = 1000, active = 2)
#' sig <- nmf_signatures(sim$counts, rank = 2:4, nrun = 8)
#' plot(sig, type = "rank")
#' plot(sig, type = "signatures")
#' head(tidy(sig))
#' fit <- refit_signatures(sim$counts[, 1:4], W, B = 30)
#' summary(fit)
#' plot(fit, type = "intervals")
#' @name print.nmfkit_signatures
NULL

#' @rdname print.nmfkit_signatures
#' @export
print.nmfkit_signatures <- function(x, ...) {
  check_dots_empty()
  cat(sprintf("Mutational signatures: %d %s replicate%s per rank, fitted under %s\n",
              x$nrun, x$resample, if (x$nrun == 1L) "" else "s",
              check_loss(x$loss)$label))
  r <- x$results
  r$stable <- ifelse(r$stable, "*", "")
  print(format(r, digits = 3), row.names = FALSE)
  if (is.null(x$rank_search)) {
    cat(sprintf("chosen rank: %d (stable: stability >= %s, minimum >= %s; then the smallest within %s of the largest stable rank's cosine)\n",
                x$rank, format(x$stability), format(x$min_stability),
                format(x$cosine_tol)))
  }
  print_rank_note(x)
  invisible(x)
}

#' @rdname print.nmfkit_signatures
#' @export
summary.nmfkit_signatures <- function(object, ...) {
  check_dots_empty()
  new_summary_table(object$results, "nmfkit_signatures",
                    "Signature extraction by rank")
}

#' @rdname print.nmfkit_signatures
#' @method glance nmfkit_signatures
#' @export
glance.nmfkit_signatures <- function(x, ...) {
  check_dots_empty()
  r <- x$results[x$results$rank == x$rank, , drop = FALSE]
  data.frame(rank = x$rank, ranks = length(x$ranks), nrun = x$nrun,
             resample = x$resample, loss = check_loss(x$loss)$name,
             stability = r$stability, min_stability = r$min_stability,
             cosine = r$cosine, stringsAsFactors = FALSE)
}

#' @rdname print.nmfkit_signatures
#' @export
coef.nmfkit_signatures <- function(object, rank = NULL, ...) {
  check_dots_empty()
  signature_fit(object, rank)$H
}

#' @rdname print.nmfkit_signatures
#' @export
basis.nmfkit_signatures <- function(object, rank = NULL, ...) {
  check_dots_empty()
  signature_fit(object, rank)$W
}

#' @rdname print.nmfkit_signatures
#' @export
plot.nmfkit_signatures <- function(x, type = c("rank", "signatures",
                                               "exposures"),
                                   rank = NULL, ...) {
  check_graphics_dots()
  type <- check_choice(type)
  # checked whatever the type (only two types read it)
  f <- signature_fit(x, rank)
  if (type == "rank") {
    r <- x$results
    old <- graphics::par(mar = c(5, 4, 4, 5) + 0.1)
    on.exit(graphics::par(old))
    draw(graphics::plot, r$rank, r$stability, type = "b", pch = 19,
         col = "#1f77b4",
         ylim = range(c(r$stability, r$min_stability, 0, 1)),
         xlab = "rank", ylab = "stability (mean silhouette)",
         main = "Signature extraction: rank", xaxt = "n", user = list(...))
    graphics::lines(r$rank, r$min_stability, type = "b", pch = 1,
                    col = "#1f77b4", lty = 2)
    graphics::abline(h = c(x$stability, x$min_stability), col = "grey70",
                     lty = 3)
    graphics::abline(v = x$rank, col = "grey40", lty = 2)
    graphics::axis(1, at = r$rank)
    graphics::par(new = TRUE)
    graphics::plot(r$rank, r$cosine, type = "b", pch = 17, col = "#d62728",
                   axes = FALSE, xlab = "", ylab = "")
    graphics::axis(4, col.axis = "#d62728")
    graphics::mtext("mean reconstruction cosine", side = 4, line = 3,
                    col = "#d62728")
    graphics::legend("bottomleft", bty = "n", cex = 0.8,
                     legend = c("stability", "minimum stability", "cosine"),
                     col = c("#1f77b4", "#1f77b4", "#d62728"),
                     pch = c(19, 1, 17), lty = c(1, 2, 1))
  } else if (type == "signatures") {
    plot_spectra(f$W, lower = f$lower, upper = f$upper, ...)
  } else {
    exposure_bars(f$H, user = list(...))
  }
  invisible(x)
}

#' @rdname print.nmfkit_signatures
#' @method tidy nmfkit_signatures
#' @export
tidy.nmfkit_signatures <- function(x, matrix = c("W", "H"), rank = NULL,
                                   ...) {
  check_dots_empty()
  matrix <- check_choice(matrix)
  f <- signature_fit(x, rank)
  if (matrix == "H") {
    return(data.frame(signature = rep(rownames(f$H), ncol(f$H)),
                      sample = rep(colnames(f$H), each = nrow(f$H)),
                      exposure = as.vector(f$H), stringsAsFactors = FALSE))
  }
  data.frame(context = rep(rownames(f$W), ncol(f$W)),
             signature = rep(colnames(f$W), each = nrow(f$W)),
             value = as.vector(f$W), sd = as.vector(f$sd),
             lower = as.vector(f$lower), upper = as.vector(f$upper),
             stringsAsFactors = FALSE)
}

# The consensus of one rank (NULL: the chosen rank).
signature_fit <- function(x, rank, call = rlang::caller_env()) {
  if (is.null(rank)) rank <- x$rank
  if (!is_number(rank) || !as.character(rank) %in% names(x$fits)) {
    abort_nmfkit(c("{.arg rank} must be one of the ranks extracted: {x$ranks}.",
                   "x" = "It is {describe_value(rank)}."),
                 "rank", call = call, value = rank)
  }
  x$fits[[as.character(rank)]]
}

# Stacked bars of exposures (signatures x samples).
exposure_bars <- function(H, proportions = FALSE, user = list()) {
  if (proportions) H <- sweep(H, 2, pmax(colSums(H), 1e-300), "/")
  cols <- grDevices::hcl.colors(max(nrow(H), 2L), "Set 2")[seq_len(nrow(H))]
  old <- graphics::par(mar = c(6, 4, 3, 7), xpd = TRUE)
  on.exit(graphics::par(old))
  draw(graphics::barplot, H, col = cols, border = NA, las = 2,
       ylab = if (proportions) "share of mutations" else "mutations",
       main = "Exposures", user = user)
  graphics::legend("topright", inset = c(-0.22, 0), legend = rownames(H),
                   fill = cols, bty = "n", cex = 0.8)
}

#' @rdname print.nmfkit_signatures
#' @export
print.nmfkit_refit <- function(x, ...) {
  check_dots_empty()
  sel <- switch(x$select, none = "all signatures",
                cosine = sprintf("backward elimination on cosine (max_delta %s)",
                                 format(x$max_delta)),
                lrt = sprintf("backward elimination by likelihood ratio (alpha %s)",
                              format(x$alpha)))
  cat(sprintf("Signature refit: %d sample%s on %d signatures, %s loss, %s\n",
              ncol(x$exposures), if (ncol(x$exposures) == 1L) "" else "s",
              nrow(x$exposures), check_loss(x$loss)$label, sel))
  cat(sprintf("reconstruction cosine: mean %.3f, min %.3f\n",
              mean(x$cosine), min(x$cosine)))
  if (x$B > 0) {
    cat(sprintf("%d bootstrap replicates per sample; %s%% intervals\n", x$B,
                format(100 * x$level)))
  }
  s <- summary(x)
  s <- s[s$samples > 0, , drop = FALSE]
  print(format(utils::head(s, 10), digits = 3), row.names = FALSE)
  if (nrow(s) > 10) cat(sprintf("... and %d more signatures present\n",
                                nrow(s) - 10))
  invisible(x)
}

#' @rdname print.nmfkit_signatures
#' @export
summary.nmfkit_refit <- function(object, ...) {
  check_dots_empty()
  h <- object$exposures
  out <- data.frame(signature = rownames(h), samples = rowSums(h > 0),
                    share = rowSums(h) / max(sum(h), 1e-300),
                    row.names = NULL, stringsAsFactors = FALSE)
  if (object$B > 0) out$present <- rowMeans(object$present)
  new_summary_table(out[order(-out$share, out$signature), , drop = FALSE],
                    "nmfkit_refit", "Signatures by share of the mutations")
}

#' @rdname print.nmfkit_signatures
#' @method glance nmfkit_refit
#' @export
glance.nmfkit_refit <- function(x, ...) {
  check_dots_empty()
  h <- x$exposures
  data.frame(samples = ncol(h), signatures = nrow(h),
             used = sum(rowSums(h) > 0), loss = x$loss, select = x$select,
             B = x$B, mean_cosine = mean(x$cosine),
             min_cosine = min(x$cosine), stringsAsFactors = FALSE)
}

#' @rdname print.nmfkit_signatures
#' @export
coef.nmfkit_refit <- function(object, ...) {
  check_dots_empty()
  object$exposures
}

#' @rdname print.nmfkit_signatures
#' @export
fitted.nmfkit_refit <- function(object, ...) {
  check_dots_empty()
  object$signatures %*% object$exposures
}

#' @rdname print.nmfkit_signatures
#' @method tidy nmfkit_refit
#' @export
tidy.nmfkit_refit <- function(x, ...) {
  check_dots_empty()
  h <- x$exposures
  out <- data.frame(signature = rep(rownames(h), ncol(h)),
                    sample = rep(colnames(h), each = nrow(h)),
                    exposure = as.vector(h), stringsAsFactors = FALSE)
  if (x$B > 0) {
    out$lower <- as.vector(x$lower)
    out$upper <- as.vector(x$upper)
    out$present <- as.vector(x$present)
  }
  out
}

#' @rdname print.nmfkit_signatures
#' @export
plot.nmfkit_refit <- function(x, type = c("exposures", "intervals"),
                              proportions = FALSE, ...) {
  check_graphics_dots()
  type <- check_choice(type)
  check_flag(proportions)
  h <- x$exposures
  used <- rowSums(h) > 0
  if (x$B > 0) used <- used | rowSums(x$upper) > 0
  if (type == "exposures") {
    exposure_bars(h[used, , drop = FALSE], proportions = proportions,
                  user = list(...))
    return(invisible(x))
  }
  if (x$B == 0) {
    abort_nmfkit(c("{.code type = \"intervals\"} draws bootstrap intervals: refit with {.arg B} > 0.",
                   "x" = "This refit has none."),
                 "choice", value = type)
  }
  n <- ncol(h)
  k <- sum(used)
  old <- graphics::par(mfrow = grDevices::n2mfrow(n), mar = c(6, 4, 2, 1))
  on.exit(graphics::par(old))
  for (j in seq_len(n)) {
    mids <- draw(graphics::barplot, h[used, j], col = "grey60", border = NA,
                 las = 2, ylim = c(0, 1.05 * max(x$upper[used, j], 1)),
                 main = colnames(h)[j], cex.names = 0.7, user = list(...))
    # whiskers in colour with caps, so an interval on an empty bar (a
    # signature dropped here but kept by some replicates) reads as one
    wide <- x$upper[used, j] > x$lower[used, j]
    if (any(wide)) {
      graphics::arrows(mids[wide], x$lower[used, j][wide], mids[wide],
                       x$upper[used, j][wide], angle = 90, code = 3,
                       length = 0.02, lwd = 1.2, col = "#D7301F")
    }
  }
  invisible(x)
}
