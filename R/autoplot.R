#' ggplot2 plots of fits, rank selections and consensus programs
#'
#' `autoplot()` methods (ggplot2's generic) beside the base-graphics
#' `plot()` methods, drawing the same things and returning a ggplot that can
#' be themed and extended. They are registered when ggplot2 is loaded
#' (nmfkit does not need ggplot2 otherwise): call `library(ggplot2)` first.
#'
#' For a fit, `type = "basis"` draws `W` as a heatmap (or, with
#' `image_dim`, each basis vector as an image), `"coef"` a heatmap of `H`,
#' `"loss"` the loss trace. For [nmf_tune()] results: the mean held-out
#' error against rank, one line per other setting, as [plot.nmfkit_tune()].
#' For [nmf_rank()] results: the held-out error
#' with one-standard-error bars (`"cv"`), the cophenetic correlation and
#' dispersion (`"consensus"`) against rank, or with `rank =` that rank's
#' consensus matrix. For [nmf_consensus()] results, see
#' [plot.nmfkit_consensus()]: stability and error against rank (cNMF's
#' k-selection plot), the local densities, or one rank's programs.
#'
#' @param object A fitted nmfkit model, an `nmfkit_rank`, `nmfkit_tune` or
#'   `nmfkit_consensus` object.
#' @param type What to draw (see Details).
#' @param image_dim Image size `c(rows, columns)` for `type = "basis"`.
#' @param components Which components to draw (indices or names); all by
#'   default.
#' @param rank For rank selections: the rank whose consensus matrix to draw
#'   (`NULL`: the curves). For consensus programs: the rank to draw.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return A ggplot object.
#' @examples
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   library(ggplot2)
#'   x <- swimmer()
#'   set.seed(1)
#'   fit <- nmf(x, rank = 17)
#'   autoplot(fit)
#'   autoplot(fit, type = "loss")
#' }
#' @name autoplot.nmfkit
NULL

#' @rdname autoplot.nmfkit
autoplot.nmfkit <- function(object, type = c("basis", "coef", "loss"),
                            image_dim = object$image_dim, components = NULL,
                            ...) {
  check_dots_empty()
  # every argument is checked here, whatever `type` reads: a ggplot is built
  # only when printed, and an error raised inside print()'s S4 dispatch
  # (Matrix makes print() an S4 generic) loses its class
  type <- check_choice(type)
  comp <- select_components(object, components)
  if (!is.null(image_dim)) {
    image_dim <- check_image_dim(image_dim, nrow(object$W))
  }
  switch(type,
    basis = {
      W <- object$W[, comp, drop = FALSE]
      if (!is.null(image_dim)) {
        gg_images(W, image_dim)
      } else {
        gg_heatmap(tidy_long(W, "feature", "component"), "feature",
                   "component", "Basis W")
      }
    },
    coef = gg_heatmap(tidy_long(t(object$H[comp, , drop = FALSE]), "sample",
                                "component"), "sample", "component",
                      "Coefficients H"),
    loss = {
      d <- data.frame(iteration = seq_along(object$loss), loss = object$loss)
      p <- ggplot2::ggplot(d, ggplot2::aes(.data$iteration, .data$loss)) +
        ggplot2::geom_line() +
        ggplot2::labs(x = "iteration", y = object$loss_name,
                      title = "Loss trace")
      if (nrow(d) && all(d$loss > 0)) p <- p + ggplot2::scale_y_log10()
      p
    }
  )
}

#' @rdname autoplot.nmfkit
autoplot.nmfkit_rank <- function(object, rank = NULL, ...) {
  check_dots_empty()
  if (!is.null(rank)) {
    if (object$method != "consensus") {
      abort_nmfkit(c("{.arg rank} draws a consensus matrix, which only {.code method = \"consensus\"} computes.",
                     "i" = "Omit {.arg rank} to plot the held-out error."),
                   "rank")
    }
    if (!is_number(rank) || !as.character(rank) %in% names(object$consensus)) {
      abort_nmfkit(c("{.arg rank} must be one of the ranks tried: {names(object$consensus)}.",
                     "x" = "It is {describe_value(rank)}."), "rank")
    }
    cm <- object$consensus[[as.character(rank)]]
    ord <- stats::hclust(stats::as.dist(1 - cm), method = "average")$order
    cm <- cm[ord, ord, drop = FALSE]
    dimnames(cm) <- list(as.character(ord), as.character(ord))
    d <- tidy_long(cm, "sample1", "sample2")
    d$sample1 <- factor(d$sample1, levels = rownames(cm))
    return(
      ggplot2::ggplot(d, ggplot2::aes(.data$sample1, .data$sample2,
                                      fill = .data$value)) +
        ggplot2::geom_raster() +
        ggplot2::scale_fill_distiller(palette = "YlOrRd", direction = 1,
                                      limits = c(0, 1), name = "consensus") +
        ggplot2::labs(x = "sample", y = "sample",
                      title = sprintf("Consensus matrix, rank %s", rank)) +
        gg_no_labels("x") + gg_no_labels("y")
    )
  }
  s <- summary(object)
  if (object$method == "cv") {
    ggplot2::ggplot(s, ggplot2::aes(.data$rank, .data$mean)) +
      ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$mean - .data$se,
                                          ymax = .data$mean + .data$se),
                             width = 0.2) +
      ggplot2::geom_line() + ggplot2::geom_point() +
      ggplot2::geom_vline(xintercept = unname(object$best),
                          linetype = c(2, 3), colour = "grey40") +
      ggplot2::labs(x = "rank", y = rank_error_label(object),
                    title = "Cross-validation")
  } else {
    d <- data.frame(rank = rep(s$rank, 2),
                    measure = rep(c("cophenetic", "dispersion"),
                                  each = nrow(s)),
                    value = c(s$cophenetic, s$dispersion))
    gg_curves(d, "Consensus clustering")
  }
}

#' @rdname autoplot.nmfkit
autoplot.nmfkit_tune <- function(object, ...) {
  check_dots_empty()
  d <- tune_plot_data(object)
  s <- d$s
  s$setting <- factor(s$setting, levels = d$settings)
  p <- ggplot2::ggplot(s, ggplot2::aes(.data$px, .data$mean,
                                       colour = .data$setting,
                                       group = .data$setting)) +
    ggplot2::geom_errorbar(ggplot2::aes(ymin = .data$lo, ymax = .data$hi),
                           width = 0.05) +
    ggplot2::geom_line() + ggplot2::geom_point() +
    ggplot2::geom_point(data = s[d$best[1], , drop = FALSE], shape = 4,
                        size = 5, colour = "black", show.legend = FALSE) +
    ggplot2::geom_point(data = s[d$best[2], , drop = FALSE], shape = 1,
                        size = 6, colour = "black", show.legend = FALSE) +
    ggplot2::scale_x_continuous(breaks = sort(unique(s$rank))) +
    ggplot2::labs(x = "rank", y = tune_score_label(object), colour = NULL,
                  title = "Cross-validation grid")
  if (length(d$settings) == 1L) {
    p <- p + ggplot2::guides(colour = "none")
  }
  if (d$log_y) p <- p + ggplot2::scale_y_log10()
  p
}

#' @rdname autoplot.nmfkit
autoplot.nmfkit_consensus <- function(object, type = c("selection", "density",
                                                       "basis"),
                                      rank = NULL, ...) {
  check_dots_empty()
  type <- check_choice(type)
  # checked whatever `type` reads (see autoplot.nmfkit())
  fits <- consensus_fits(object, rank, one = type == "basis")
  switch(type,
    selection = {
      r <- object$results
      d <- data.frame(rank = rep(r$rank, 2),
                      measure = rep(c("stability (mean silhouette)",
                                      "relative error"), each = nrow(r)),
                      value = c(r$stability, r$error))
      d$measure <- factor(d$measure, levels = unique(d$measure))
      gg_curves(d, "Consensus rank selection") +
        ggplot2::scale_x_continuous(breaks = r$rank)
    },
    density = {
      d <- data.frame(
        rank = factor(rep(names(fits), vapply(fits, function(f)
          length(f$density), integer(1))), levels = names(fits)),
        density = unlist(lapply(fits, `[[`, "density"), use.names = FALSE))
      ggplot2::ggplot(d, ggplot2::aes(.data$density)) +
        ggplot2::geom_histogram(bins = 30) +
        ggplot2::geom_vline(xintercept = object$density_threshold,
                            linetype = 2, colour = "#d62728") +
        ggplot2::facet_wrap(ggplot2::vars(.data$rank), scales = "free_y",
                            labeller = ggplot2::label_both) +
        ggplot2::labs(x = "local density", y = "components",
                      title = "Local density of run components")
    },
    basis = autoplot.nmfkit(fits[[1]])
  )
}

# Heatmap of a long table (x, y, value).
gg_heatmap <- function(d, x, y, title) {
  d[[x]] <- factor(d[[x]], levels = unique(d[[x]]))
  p <- ggplot2::ggplot(d, ggplot2::aes(.data[[x]], .data[[y]],
                                       fill = .data$value)) +
    ggplot2::geom_raster() +
    ggplot2::scale_fill_distiller(palette = "YlOrRd", direction = 1,
                                  name = "value") +
    ggplot2::labs(x = x, y = y, title = title)
  if (nlevels(d[[x]]) > 40L) p <- p + gg_no_labels("x")
  p
}

# Images of the columns of W (pixels in column-major order), row 1 on top.
gg_images <- function(W, image_dim) {
  d <- tidy_long(W, "pixel", "component")
  pixel <- as.integer(rep(seq_len(nrow(W)), ncol(W)))
  d$row <- (pixel - 1L) %% image_dim[1] + 1L
  d$col <- (pixel - 1L) %/% image_dim[1] + 1L
  ggplot2::ggplot(d, ggplot2::aes(.data$col, .data$row, fill = .data$value)) +
    ggplot2::geom_raster() +
    ggplot2::scale_y_reverse() +
    ggplot2::scale_fill_gradient(low = "white", high = "black") +
    ggplot2::facet_wrap(ggplot2::vars(.data$component)) +
    ggplot2::coord_fixed() +
    ggplot2::theme_void() +
    ggplot2::labs(title = "Basis W")
}

# Measures against rank, one panel each.
gg_curves <- function(d, title) {
  ggplot2::ggplot(d[!is.na(d$value), , drop = FALSE],
                  ggplot2::aes(.data$rank, .data$value)) +
    ggplot2::geom_line() + ggplot2::geom_point() +
    ggplot2::facet_wrap(ggplot2::vars(.data$measure), ncol = 1,
                        scales = "free_y") +
    ggplot2::labs(x = "rank", y = NULL, title = title)
}

gg_no_labels <- function(axis) {
  if (axis == "x") {
    ggplot2::theme(axis.text.x = ggplot2::element_blank(),
                   axis.ticks.x = ggplot2::element_blank())
  } else {
    ggplot2::theme(axis.text.y = ggplot2::element_blank(),
                   axis.ticks.y = ggplot2::element_blank())
  }
}
