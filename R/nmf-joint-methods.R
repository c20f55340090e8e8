# Methods of the joint-NMF model (class nmfkit_joint).

#' @export
print_extra.nmfkit_joint <- function(x, digits = 3L, ...) {
  lv <- levels(x$set)
  n <- table(x$set)
  cat(sprintf("Sets: %s (%d columns) and %s (%d columns)\n", lv[1], n[[1]],
              lv[2], n[[2]]))
  cat(sprintf("Distance ||p||_1: %s (%s p-bar)\n",
              format(x$distance, digits = digits), x$pbar))
  cat(sprintf("p-bar (positive: used more by %s):\n", lv[1]))
  print(round(x$p, digits))
  invisible(x)
}

#' Summarise a joint-NMF fit
#'
#' Adds to [summary.nmfkit()] one row per component: p-bar, its Monte Carlo
#' standard error, the component's share of the average coefficient in each
#' set (`mean(S1[i, ]) / (mean(S1[i, ]) + mean(S2[i, ]))` and its
#' complement), and, when the data have row names, the features with the
#' largest weights in the basis vector.
#'
#' @param object A fit from [nmf_joint()].
#' @param top Number of top features to list per component.
#' @param x A `summary.nmfkit_joint` object.
#' @param digits Significant digits to print.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return A list of class `c("summary.nmfkit_joint", "summary.nmfkit")`
#'   with the fields of [summary.nmfkit()] plus `distance` and `components`
#'   (a data frame ordered by `abs(p)`, largest first).
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' summary(nmf_joint(x, x + matrix(runif(length(x)), nrow(x)), rank = 10))
#' @export
summary.nmfkit_joint <- function(object, top = 5L, ...) {
  check_dots_empty()
  top <- check_count(top, min = 1)
  out <- summary.nmfkit(object)
  in1 <- object$set == levels(object$set)[1]
  m1 <- rowMeans(object$H[, in1, drop = FALSE])
  m2 <- rowMeans(object$H[, !in1, drop = FALSE])
  tot <- m1 + m2
  share1 <- ifelse(tot > 0, m1 / tot, 0.5)
  comp <- data.frame(component = names(object$p), p = unname(object$p),
                     se = unname(object$pbar_se), share1 = unname(share1),
                     share2 = unname(1 - share1))
  names(comp)[4:5] <- paste0("share_", levels(object$set))
  rn <- rownames(object$W)
  if (!is.null(rn)) {
    comp$top_features <- vapply(seq_len(object$rank), function(i) {
      w <- object$W[, i]
      idx <- utils::head(order(w, decreasing = TRUE), top)
      paste(rn[idx[w[idx] > 0]], collapse = ", ")
    }, character(1))
  }
  out$components <- comp[order(-abs(comp$p)), , drop = FALSE]
  rownames(out$components) <- NULL
  out$distance <- object$distance
  out$pbar <- object$pbar
  out$sets <- levels(object$set)
  class(out) <- c("summary.nmfkit_joint", class(out))
  out
}

#' @rdname summary.nmfkit_joint
#' @export
print.summary.nmfkit_joint <- function(x, digits = max(3L, getOption("digits") - 3L),
                                       ...) {
  NextMethod()
  cat(sprintf("Distance ||p||_1: %s (%s p-bar; positive p: used more by %s)\n",
              format(x$distance, digits = digits), x$pbar, x$sets[1]))
  comp <- x$components
  num <- vapply(comp, is.numeric, logical(1))
  comp[num] <- lapply(comp[num], round, digits = digits)
  if (x$pbar == "exact") comp$se <- NULL
  print(comp, row.names = FALSE)
  invisible(x)
}

#' Plot a joint-NMF fit
#'
#' `type = "p"` draws p-bar as a bar chart, sorted, positive bars (used more
#' by the first set) in one colour and negative ones in another.
#' `type = "basis"` draws the basis vectors, as images when `image_dim` is
#' known, each titled with its p-bar value (the paper's Figures 5 and 6).
#' The other types are those of [plot.nmfkit()].
#'
#' @param x A fit from [nmf_joint()].
#' @param type What to draw.
#' @param image_dim Image size `c(rows, columns)` for `type = "basis"`.
#' @param components Which components to draw; all by default.
#' @param ... Graphical parameters (see [graphics::par()]), named; one the
#'   plot sets itself (`main`, `col`, `xlab`, ...) is replaced by the user's.
#'   Any other name is an error naming the nearest argument.
#' @return `x`, invisibly.
#' @examples
#' x <- swimmer()
#' fit <- nmf_joint(x, 1 - x, rank = 10)
#' plot(fit, type = "p")
#' plot(fit, type = "basis")
#' @export
plot.nmfkit_joint <- function(x, type = c("p", "basis", "coef", "loss"),
                              image_dim = x$image_dim, components = NULL,
                              ...) {
  check_graphics_dots()
  type <- check_choice(type)
  comp <- select_components(x, components)
  # checked whatever the type (only the basis images read it)
  if (!is.null(image_dim)) image_dim <- check_image_dim(image_dim, nrow(x$W))
  if (type == "p") {
    p <- x$p[comp]
    p <- p[order(p)]
    lv <- levels(x$set)
    cols <- ifelse(p >= 0, "#D55E00", "#0072B2")
    draw(graphics::barplot, p, col = cols, border = NA, las = 2,
         ylim = range(c(p, 0, -0.05, 0.05)),
         main = sprintf("p-bar, distance %.3f", x$distance),
         ylab = sprintf("+ used more by %s / - by %s", lv[1], lv[2]),
         user = list(...))
    graphics::abline(h = 0, col = "grey40")
    return(invisible(x))
  }
  if (type == "basis" && !is.null(image_dim)) {
    titles <- sprintf("%s: %.3f", colnames(x$W)[comp], x$p[comp])
    plot_images(x$W[, comp, drop = FALSE], image_dim, titles = titles,
                user = list(...))
    return(invisible(x))
  }
  plot.nmfkit(x, type = type, image_dim = image_dim,
              components = components, ...)
}

#' Coefficients of new points on a joint basis
#'
#' Normalises the columns of `newdata` as [nmf_joint()] normalised its input
#' (when the fit did), then solves the nonnegative least squares problem on
#' the joint basis as [predict.nmfkit()] does.
#'
#' @param object A fit from [nmf_joint()].
#' @param newdata A nonnegative matrix with the fit's features as rows.
#' @param type `"coef"` or `"class"`, as in [predict.nmfkit()].
#' @param normalize Normalise the columns of `newdata` first.
#' @param tol,max_passes Stopping rule of the coordinate descent, as in
#'   [predict.nmfkit()].
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @param assay For `newdata` in a container: its assay (or Seurat layer),
#'   as in [predict.nmfkit()].
#' @return A components x columns matrix of coefficients.
#' @examples
#' x <- swimmer()
#' fit <- nmf_joint(x, x[, 1:100], rank = 10)
#' h <- predict(fit, x[, 1:3])
#' round(h, 3)
#' @export
predict.nmfkit_joint <- function(object, newdata, type = c("coef", "class"),
                                 normalize = object$normalize, tol = 1e-12,
                                 max_passes = 2000L, ..., assay = "counts") {
  check_dots_empty()
  # checked whether or not `newdata` is given (without it nothing reads them)
  tol <- check_number(tol, min = 0)
  max_passes <- check_count(max_passes, min = 1)
  check_flag(normalize)
  predict_with(object, newdata, type, read = function(newdata) {
    newdata <- check_newdata(newdata, nrow(object$W))
    if (normalize) normalize_columns(newdata) else newdata
  }, solve = function(newdata) {
    nnls_coef(newdata, object$W, tol, max_passes, object$control$threads)
  }, assay = assay)
}

# With normalize = TRUE the pooled data are fitted with each set's columns
# normalised: the user's cbind(x1, x2) is normalised the same way
# (model_data()).
model_scale.nmfkit_joint <- function(object, x) {
  if (!isTRUE(object$normalize) || ncol(x) != length(object$set)) return(x)
  in1 <- object$set == levels(object$set)[1]
  out <- as.matrix(x)
  out[, in1] <- as.matrix(normalize_columns(x[, in1, drop = FALSE]))
  out[, !in1] <- as.matrix(normalize_columns(x[, !in1, drop = FALSE]))
  out
}

# The data set of each sample, for tidy(matrix = "H") and augment().
sample_groups.nmfkit_joint <- function(object) {
  data.frame(set = object$set)
}
