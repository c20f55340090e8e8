#' ggplot2 plots of bootstrap intervals and differential tests
#'
#' `autoplot()` methods (ggplot2's generic) drawing what [plot()] draws for
#' an [nmf_bootstrap()] result (each component's top features with their
#' intervals, ranked by `score` as [summary.nmfkit_bootstrap()] ranks them)
#' and for an [nmf_differential()] result (the volcano plot: estimate
#' against `-log10(p)`, the discoveries at BH level `alpha` coloured by
#' direction, the least significant one's p-value dashed, the `top`
#' discoveries labelled where the labels do not overlap). They are
#' registered when ggplot2 is loaded: call `library(ggplot2)` first.
#'
#' @param object An `nmfkit_bootstrap` or `nmfkit_differential` object.
#' @param top Features per component (bootstrap) or discoveries labelled
#'   (differential).
#' @param components Components to draw (names or indices); all by default.
#' @param level Confidence level of the intervals, in `(0, 1)`.
#' @param score `"specificity"` or `"weight"`, as in
#'   [summary.nmfkit_bootstrap()].
#' @param alpha BH level of the discoveries, in `(0, 1)`.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return A ggplot object.
#' @examples
#' if (requireNamespace("ggplot2", quietly = TRUE)) {
#'   library(ggplot2)
#'   set.seed(1)
#'   W0 <- matrix(rexp(40 * 3), 40, 3)
#'   x <- matrix(rpois(40 * 60, W0 %*% matrix(rexp(3 * 60), 3) * 5), 40)
#'   fit <- nmf(x, 3, loss = "kl")
#'   autoplot(nmf_bootstrap(fit, B = 20), top = 5)
#' }
#' @name autoplot.nmfkit_bootstrap
NULL

#' @rdname autoplot.nmfkit_bootstrap
autoplot.nmfkit_bootstrap <- function(object, top = 10L, components = NULL,
                                      level = object$level,
                                      score = c("specificity", "weight"),
                                      ...) {
  check_dots_empty()
  # every argument checked here: a ggplot is built only when printed
  top <- check_count(top, min = 1)
  score <- check_choice(score)
  comp <- select_components(object$fit, components)
  if (check_level(level) != object$level) {
    object <- bootstrap_intervals(object, level)
  }
  W <- object$fit$W
  feats <- rownames(W) %||% paste0("f", seq_len(nrow(W)))
  names_k <- colnames(W) %||% paste0("nmf", seq_len(ncol(W)))
  by <- bootstrap_ranking(W, score)
  d <- do.call(rbind, lapply(comp, function(i) {
    idx <- rev(utils::head(order(-by[, i]), min(top, nrow(W))))
    data.frame(component = names_k[i], feature = feats[idx],
               key = paste(names_k[i], feats[idx], sep = "\r"),
               estimate = W[idx, i], lower = object$W_lower[idx, i],
               upper = object$W_upper[idx, i], stringsAsFactors = FALSE)
  }))
  d$key <- factor(d$key, levels = d$key)
  d$component <- factor(d$component, levels = names_k[comp])
  ggplot2::ggplot(d, ggplot2::aes(x = .data$estimate, y = .data$key)) +
    ggplot2::geom_linerange(ggplot2::aes(xmin = .data$lower,
                                         xmax = .data$upper),
                            colour = "steelblue", linewidth = 1) +
    ggplot2::geom_point(size = 1.5) +
    ggplot2::facet_wrap(ggplot2::vars(.data$component), scales = "free") +
    ggplot2::scale_y_discrete(labels = function(l) sub("^.*\r", "", l)) +
    ggplot2::labs(x = sprintf("weight in W, %s %% interval",
                              format(100 * object$level)),
                  y = NULL,
                  title = sprintf("Top %d features by %s, %d replicates",
                                  top, score, object$B))
}

#' @rdname autoplot.nmfkit_bootstrap
autoplot.nmfkit_differential <- function(object, alpha = 0.05, top = 10L,
                                         ...) {
  check_dots_empty()
  alpha <- check_level(alpha)
  top <- check_count(top, min = 0)
  tab <- object$table
  by <- names(tab)[2]
  hit <- tab$p_adjusted < alpha
  d <- data.frame(estimate = tab$estimate, y = -log10(tab$p_value),
                  call = factor(ifelse(!hit, "not found",
                                       ifelse(tab$estimate >= 0, "up",
                                              "down")),
                                levels = c("up", "down", "not found")),
                  label = paste(tab$feature, tab[[by]], sep = ":"))
  lab <- which(hit)
  lab <- utils::head(lab[order(tab$p_value[lab], -abs(tab$statistic[lab]))],
                     top)
  p <- ggplot2::ggplot(d, ggplot2::aes(.data$estimate, .data$y,
                                       colour = .data$call)) +
    ggplot2::geom_vline(xintercept = 0, colour = "grey80") +
    ggplot2::geom_point(size = 1.2) +
    ggplot2::scale_colour_manual(values = c(up = "#D55E00", down = "#0072B2",
                                            `not found` = "grey60"),
                                 drop = FALSE, name = NULL) +
    # room above the top points and beside the outer ones for their labels
    ggplot2::scale_y_continuous(expand = ggplot2::expansion(c(0.02, 0.15))) +
    ggplot2::scale_x_continuous(expand = ggplot2::expansion(0.12)) +
    ggplot2::labs(x = if (object$type == "joint") "difference of loadings"
                      else "centred shift",
                  y = "-log10(p-value)",
                  title = sprintf("Differential features (%s, BH %s)",
                                  object$type, format(alpha)))
  if (any(hit)) {
    p <- p + ggplot2::geom_hline(yintercept = -log10(max(tab$p_value[hit])),
                                 linetype = 2, colour = "grey40")
  }
  if (length(lab)) {
    # labels that would overlap are left out (the plot() method's rule)
    p <- p + ggplot2::geom_text(data = d[lab, , drop = FALSE],
                                ggplot2::aes(label = .data$label),
                                vjust = -0.6, size = 2.6,
                                check_overlap = TRUE, show.legend = FALSE)
  }
  p
}
