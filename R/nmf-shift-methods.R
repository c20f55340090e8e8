# Methods of shift-invariant NMF fits (class nmfkit_shift).

#' @export
print_extra.nmfkit_shift <- function(x, digits = 3L, ...) {
  cat(sprintf("Images %d x %d, %s shifts, W step %s, %d inner sweep%s\n",
              x$image_dim[1], x$image_dim[2], x$shift, x$w_step, x$inner,
              if (x$inner == 1L) "" else "s"))
  cat(sprintf("Best of %d run%s (final errors %s); stopped: %s\n",
              x$nrun, if (x$nrun == 1L) "" else "s",
              paste(format(x$restart_loss, digits = digits), collapse = ", "),
              x$stop))
  if (!is.null(x$stages)) {
    s1 <- x$stages[[1]]
    s2 <- x$stages[[2]]
    cat(sprintf(paste0("Two stages: %d instance atoms (%d kept, error %s), ",
                       "%d shapes (error %s on the atoms); %d instances\n"),
                ncol(s1$W), length(s1$kept),
                format(utils::tail(s1$loss, 1), digits = digits), x$rank,
                format(utils::tail(s2$loss, 1), digits = digits),
                nrow(instances(x))))
  }
  invisible(NULL)
}

#' Summarise a shift-invariant NMF fit
#'
#' As [summary.nmfkit()], with the relative error of the shifted model and
#' the placements: how many images use each atom and, for the two-stage
#' method, how many instances of each atom were found.
#'
#' @param object A fit from [nmf_shift()].
#' @param x A `summary.nmfkit_shift` object.
#' @param ... Passed to [print.summary.nmfkit()].
#' @return A list of class `c("summary.nmfkit_shift", "summary.nmfkit")`.
#' @examples
#' set.seed(1)
#' fit <- nmf_shift(shifted_shapes(8)$x, rank = 2, nrun = 1)
#' summary(fit)
#' @export
summary.nmfkit_shift <- function(object, ...) {
  check_dots_empty()
  out <- summary.nmfkit(object)
  out$relative_error <- if (is.null(object$data)) NA_real_ else
    relative_norm(stats::residuals(object), object$data)
  inst <- instances(object)
  out$placements <- stats::setNames(
    tabulate(inst$atom, nbins = object$rank), colnames(object$W))
  out$two_stage <- !is.null(object$stages)
  out$shift <- object$shift
  class(out) <- c("summary.nmfkit_shift", class(out))
  out
}

#' @rdname summary.nmfkit_shift
#' @export
print.summary.nmfkit_shift <- function(x, ...) {
  NextMethod()
  cat(sprintf("%s by atom (%s shifts):\n",
              if (x$two_stage) "Instances found" else "Images using",
              x$shift))
  print(x$placements)
  invisible(x)
}

#' @rdname nmfkit-methods
#' @export
fitted.nmfkit_shift <- function(object, ...) {
  check_dots_empty()
  terms <- shift_terms(object)
  out <- r_shift_reconstruct(object$W, object$image_dim, object$shift,
                             as.integer(terms$image - 1L),
                             as.integer(terms$atom - 1L), terms$coefficient,
                             as.integer(terms$g), ncol(object$H))
  dimnames(out) <- object$dimnames
  out
}

#' Coefficients and shifts of new images on fixed atoms
#'
#' Holds the atoms `W` of a shift-invariant fit fixed and finds, for each
#' new image, each atom's coefficient and shift: MultPermNNLS from zero
#' coefficients (the first sweep matches atoms greedily by FFT
#' cross-correlation), `inner` sweeps.
#'
#' @param object A fit from [nmf_shift()].
#' @param newdata A nonnegative matrix of images (pixels x images) of the
#'   fit's image size.
#' @param type `"coef"` or `"class"`, as in [predict.nmfkit()].
#' @param inner Sweeps of block coordinate descent.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @param assay For `newdata` in a container: its assay (or Seurat layer),
#'   as in [predict.nmfkit()].
#' @return The coefficients, an atoms x images matrix like every
#'   `predict()` of nmfkit, with the placements as attributes: `shifts`
#'   (list of `row` and `col` offset matrices), `g` (0-based shift indices)
#'   and `relative_error` of the projection. Without `newdata`, the fit's own
#'   `H` with its shifts.
#' @examples
#' set.seed(3)
#' sim <- shifted_shapes(8)
#' fit <- nmf_shift(sim$x[, 1:6], rank = 2, nrun = 1,
#'                  image_dim = sim$image_dim)
#' h <- predict(fit, sim$x[, 7:8])
#' h
#' attr(h, "shifts")
#' @export
predict.nmfkit_shift <- function(object, newdata, type = c("coef", "class"),
                                 inner = object$inner, ..., assay = "counts") {
  check_dots_empty()
  # checked whether or not `newdata` is given (without it nothing reads them)
  inner <- check_count(inner, min = 1)
  check_assay_arg(assay, rlang::current_env())
  if (missing(newdata) && identical(type[1], "coef")) {
    return(structure(object$H, shifts = object$shifts, g = object$g,
                     relative_error = utils::tail(object$loss, 1)))
  }
  predict_with(object, newdata, type, read = function(newdata) {
    newdata <- check_newdata(newdata, nrow(object$W))
    if (inherits(newdata, "dgCMatrix")) as.matrix(newdata) else newdata
  }, solve = function(newdata) {
    # scale-equivariant (unit atoms): project newdata / 2^e, scale H back
    e <- data_exponent(newdata)
    p <- r_shift_project(scale_data(newdata, e), object$W, object$image_dim,
                         object$shift, inner, object$control)
    dn <- list(colnames(object$W), colnames(newdata))
    H <- unscale_coef(p$H, e)
    g <- p$G
    storage.mode(g) <- "integer"
    dimnames(H) <- dimnames(g) <- dn
    structure(H, shifts = shift_offsets(g, object$image_dim, dn), g = g,
              relative_error = p$loss)
  }, assay = assay)
}

#' Plot a shift-invariant NMF fit
#'
#' `type = "basis"` draws the atoms as images, `"placements"` draws selected
#' images with the outline of each atom (thresholded at half its maximum)
#' where the fit places it, one colour per atom; `"coef"` and `"loss"` are
#' as in [plot.nmfkit()].
#'
#' @param x A fit from [nmf_shift()].
#' @param type What to draw.
#' @param images Images to draw for `"placements"` (indices); the first six
#'   by default.
#' @param components Atoms to draw (indices or names); all by default.
#' @param image_dim Image size `c(rows, columns)` for `"basis"`; the fit's
#'   by default. `"placements"` always draws in the fit's geometry, where its
#'   shifts live.
#' @param data The images, when the fit does not keep them.
#' @param ... Graphical parameters (see [graphics::par()]), named; one the
#'   plot sets itself (`main`, `col`, `xlab`, ...) is replaced by the user's.
#'   Any other name is an error naming the nearest argument.
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' fit <- nmf_shift(shifted_shapes(6)$x, rank = 2, nrun = 1)
#' plot(fit, type = "placements")
#' @export
plot.nmfkit_shift <- function(x, type = c("basis", "placements", "coef",
                                          "loss"),
                              image_dim = x$image_dim, images = NULL,
                              components = NULL, data = NULL, ...) {
  check_graphics_dots()
  type <- check_choice(type)
  image_dim <- check_image_dim(image_dim, nrow(x$W))
  # `images` and `data` are checked whatever the type (only the
  # placements read them)
  if (type != "placements") {
    if (!is.null(data)) model_data(x, data, arg = "data")
    if (!is.null(images)) check_plot_images(images, ncol(x$H))
    return(plot.nmfkit(x, type = type, image_dim = image_dim,
                       components = components, ...))
  }
  comp <- select_components(x, components)
  data <- model_data(x, data, arg = "data")
  if (is.null(images)) images <- seq_len(min(6L, ncol(data)))
  images <- check_plot_images(images, ncol(data))
  inst <- instances(x)
  inst <- inst[inst$image %in% images & inst$atom %in% comp, , drop = FALSE]
  cols <- grDevices::hcl.colors(max(3L, x$rank), "Set 2")
  plot_images(as.matrix(data)[, images, drop = FALSE], x$image_dim,
              titles = paste("image", images), user = list(...),
              after = function(k) {
                here <- inst[inst$image == images[k], , drop = FALSE]
                for (i in seq_len(nrow(here))) {
                  outline_atom(x, here$atom[i], here$row[i], here$col[i],
                               cols[here$atom[i]])
                }
              })
  invisible(x)
}

check_plot_images <- function(images, m, call = rlang::caller_env()) {
  if (!is.numeric(images) || !length(images) || anyNA(images) ||
      any(images < 1 | images > m | images != round(images))) {
    abort_nmfkit(c("{.arg images} must index images of the fit (1 to {m}).",
                   "x" = "It is {.code {deparse(images)}}."),
                 "images", call = call)
  }
  as.integer(images)
}

# Outline of atom t (pixels >= half its maximum) moved by (row, col), on an
# image drawn by plot_images() (x from 0 to 1 across columns, y from 1 at the
# top row to 0).
outline_atom <- function(fit, t, row, col, colour) {
  r <- fit$image_dim[1]
  s <- fit$image_dim[2]
  w <- matrix(fit$W[, t], r, s)
  mask <- w >= 0.5 * max(w)
  ii <- (row(mask)[mask] - 1L + row) %% r
  jj <- (col(mask)[mask] - 1L + col) %% s
  on <- matrix(FALSE, r, s)
  on[cbind(ii + 1L, jj + 1L)] <- TRUE
  dx <- 1 / max(s - 1, 1)
  dy <- 1 / max(r - 1, 1)
  cx <- function(j) (j - 1) * dx
  cy <- function(i) 1 - (i - 1) * dy
  pad <- rbind(FALSE, cbind(FALSE, on, FALSE), FALSE)
  idx <- which(on, arr.ind = TRUE)
  i <- idx[, 1]
  j <- idx[, 2]
  edge <- function(di, dj) !pad[cbind(i + 1L + di, j + 1L + dj)]
  up <- edge(-1L, 0L); dn <- edge(1L, 0L)
  lf <- edge(0L, -1L); rt <- edge(0L, 1L)
  seg <- function(sel, x0, y0, x1, y1) {
    if (any(sel)) graphics::segments(x0[sel], y0[sel], x1[sel], y1[sel],
                                     col = colour, lwd = 3)
  }
  seg(up, cx(j) - dx / 2, cy(i) + dy / 2, cx(j) + dx / 2, cy(i) + dy / 2)
  seg(dn, cx(j) - dx / 2, cy(i) - dy / 2, cx(j) + dx / 2, cy(i) - dy / 2)
  seg(lf, cx(j) - dx / 2, cy(i) - dy / 2, cx(j) - dx / 2, cy(i) + dy / 2)
  seg(rt, cx(j) + dx / 2, cy(i) - dy / 2, cx(j) + dx / 2, cy(i) + dy / 2)
}
