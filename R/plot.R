#' Plot a fitted nmfkit model
#'
#' `type = "basis"` draws the basis vectors (columns of `W`): as images when
#' `image_dim = c(rows, columns)` is given or stored in the fit (pixels in
#' column-major order, as `matrix(w, rows, columns)` shows them), otherwise as
#' a heatmap of `W`. `type = "coef"` draws a heatmap of the coefficients `H`,
#' and `type = "loss"` the loss trace. Variants add their own types.
#'
#' @param x A fitted model.
#' @param type What to draw.
#' @param image_dim Image size `c(rows, columns)` for `type = "basis"`.
#' @param components Which components to draw (indices or names); all by
#'   default.
#' @param ... Graphical parameters (see [graphics::par()]), named; one the
#'   plot sets itself (`main`, `col`, `xlab`, ...) is replaced by the user's.
#'   Any other name is an error naming the nearest argument.
#' @return `x`, invisibly.
#' @examples
#' fit <- nmf(swimmer(), rank = 17)
#' plot(fit)
#' plot(fit, type = "loss")
#' @export
plot.nmfkit <- function(x, type = c("basis", "coef", "loss"),
                        image_dim = x$image_dim, components = NULL, ...) {
  check_graphics_dots()
  type <- check_choice(type)
  comp <- select_components(x, components)
  switch(type,
    basis = {
      if (!is.null(image_dim)) {
        image_dim <- check_image_dim(image_dim, nrow(x$W))
        plot_images(x$W[, comp, drop = FALSE], image_dim,
                    titles = colnames(x$W)[comp], user = list(...))
      } else {
        plot_heatmap(x$W[, comp, drop = FALSE], main = "Basis W",
                     xlab = "feature", ylab = "component", user = list(...))
      }
    },
    coef = plot_heatmap(t(x$H[comp, , drop = FALSE]), main = "Coefficients H",
                        xlab = "sample", ylab = "component",
                        user = list(...)),
    loss = plot_loss(x$loss, x$loss_name, user = list(...))
  )
  invisible(x)
}

select_components <- function(x, components, call = rlang::caller_env()) {
  if (is.null(components)) return(seq_len(x$rank))
  idx <- if (is.character(components)) match(components, colnames(x$W))
         else components
  # at least one, each once, whole numbers (1.5 is not truncated to 1)
  if (!is.numeric(idx) || !length(idx) || anyNA(idx) ||
      any(idx < 1 | idx > x$rank) || any(idx != round(idx)) ||
      anyDuplicated(idx)) {
    abort_nmfkit(c("{.arg components} must name or index distinct components of the fit (1 to {x$rank}).",
                   "x" = "It is {.code {deparse(components)}}."),
                 "components", call = call)
  }
  as.integer(idx)
}

# Calls the graphics function `fun` with a plot method's own arguments
# (`...`) and the user's graphical parameters `user` (the method's `...`
# as a list, checked by check_graphics_dots()): a user's setting replaces
# the method's of the same name (`main`, `log`, `col`, `axes`), where
# passing both would be R's "formal argument matched by multiple actual
# arguments". The values are bound to names in an environment of their
# own, so a label made by deparse(substitute()) deparses a name, not the
# data (the calls here give their labels), and a user's plotmath
# (`main = quote(alpha^2)`) stays a value.
draw <- function(fun, ..., user = list()) {
  own <- list(...)
  nm <- rlang::names2(own)
  args <- c(own[!nzchar(nm) | !nm %in% names(user)], user)
  env <- new.env(parent = emptyenv())
  syms <- sprintf("arg%d", seq_along(args))
  for (i in seq_along(args)) assign(syms[i], args[[i]], envir = env)
  cl <- as.call(c(list(fun), stats::setNames(lapply(syms, as.name),
                                              names(args))))
  eval(cl, env)
}

# Draws the columns of `m` (pixels x images) as a grid of grey images, row 1
# of each image at the top, higher values darker. `after(j)`, if given, is
# called after image j is drawn (to add outlines in its 0..1 coordinates).
# `user`: the user's graphical parameters (draw()); `ncol` and `col` there
# set the grid's columns and the colours.
plot_images <- function(m, image_dim, titles = colnames(m), ncol = NULL,
                        col = grDevices::gray.colors(64, start = 1, end = 0,
                                                     gamma = 1),
                        after = NULL, user = list()) {
  if (!is.null(user$ncol)) ncol <- user$ncol
  user$ncol <- NULL
  n <- ncol(m)
  if (is.null(ncol)) ncol <- ceiling(sqrt(n * image_dim[1] / image_dim[2]))
  ncol <- max(1L, min(n, ncol))
  nrow <- ceiling(n / ncol)
  old <- graphics::par(mfrow = c(nrow, ncol), mar = c(0.3, 0.3, 1.4, 0.3))
  on.exit(graphics::par(old))
  for (j in seq_len(n)) {
    img <- matrix(m[, j], image_dim[1], image_dim[2])
    draw(graphics::image, t(img)[, image_dim[1]:1, drop = FALSE], col = col,
         axes = FALSE, asp = image_dim[1] / image_dim[2], user = user)
    graphics::box(col = "grey70")
    if (!is.null(titles)) graphics::title(titles[j], cex.main = 0.9,
                                          font.main = 1)
    if (!is.null(after)) after(j)
  }
}

# Heatmap of a matrix (rows along x, columns along y).
plot_heatmap <- function(m, main = NULL, xlab = "", ylab = "",
                         col = grDevices::hcl.colors(64, "YlOrRd", rev = TRUE),
                         user = list()) {
  draw(graphics::image, seq_len(nrow(m)), seq_len(ncol(m)), m, col = col,
       main = main, xlab = xlab, ylab = ylab, axes = FALSE, user = user)
  graphics::axis(1)
  labels <- colnames(m)
  if (is.null(labels)) labels <- seq_len(ncol(m))
  graphics::axis(2, at = seq_len(ncol(m)), labels = labels, las = 1,
                 cex.axis = 0.7)
  graphics::box()
}

plot_loss <- function(loss, loss_name = "loss", user = list()) {
  if (!length(loss)) {
    graphics::plot.new()
    graphics::title("no loss recorded")
    return(invisible(NULL))
  }
  log <- if (all(loss > 0)) "y" else ""
  draw(graphics::plot, seq_along(loss), loss, type = "l", log = log,
       xlab = "iteration", ylab = loss_name, main = "Loss trace", user = user)
}
