# Methods of stratified NMF models (class nmfkit_stratified).

#' @export
print_extra.nmfkit_stratified <- function(x, digits = 4L, ...) {
  sizes <- table(x$strata)
  shown <- utils::head(sizes, 6L)
  more <- if (length(sizes) > 6L) sprintf(", ... (%d more)",
                                          length(sizes) - 6L) else ""
  cat(sprintf("%d strat%s: %s%s\n", length(sizes),
              if (length(sizes) == 1L) "um" else "a",
              paste0(names(shown), " (", shown, ")", collapse = ", "), more))
  final <- if (length(x$normalized_loss))
    format(utils::tail(x$normalized_loss, 1), digits = digits) else "none"
  cat(sprintf(
    "normalised loss: %s; %s updates, %d shift update%s per iteration\n",
    final, sub("_", "-", x$update_order), x$v_updates,
    if (x$v_updates == 1L) "" else "s"))
  invisible(NULL)
}

#' Summarise a stratified NMF fit
#'
#' Adds to [summary.nmfkit()] a table with one row per stratum: its number of
#' samples, the share of its fitted values that its shift accounts for
#' (`shift_share`, `m_i sum(v_i) / sum(v_i 1' + W H_i)`), and its own
#' normalised loss `||X_i - v_i 1' - W H_i|| / ||X_i||`. The relative error
#' is the normalised loss of all strata together, shift included.
#'
#' @param object A fit from [nmf_stratified()].
#' @param x A `summary.nmfkit_stratified` object.
#' @param digits Significant digits to print.
#' @param ... For `summary()`, unused: an argument given there is an error
#'   (a misspelling). For `print()`, passed to [print()].
#' @return A list of class `c("summary.nmfkit_stratified", "summary.nmfkit")`
#'   with the fields of [summary.nmfkit()] and `strata`, a data frame with
#'   columns `stratum`, `samples`, `shift_share` and `normalized_loss`.
#' @examples
#' set.seed(1)
#' x <- list(a = matrix(runif(200), 10), b = matrix(runif(200) + 1, 10))
#' summary(nmf_stratified(x, rank = 2))
#' @export
summary.nmfkit_stratified <- function(object, ...) {
  check_dots_empty()
  out <- summary.nmfkit(object)
  # without kept data the losses are unknown (NA); the shares need no data
  x <- object$data
  if (is.null(x)) x <- matrix(NA_real_, nrow(object$W), ncol(object$H))
  # on x / 2^e and the factors scaled alike (exact), so that sums of
  # squares of data near .Machine$double.xmax or 1e-300 stay finite
  e <- data_exponent(if (inherits(x, "dgCMatrix")) x@x[!is.na(x@x)]
                     else x[!is.na(x)])
  if (e != 0) {
    object$W <- scale_data(object$W, e %/% 2)
    object$H <- scale_data(object$H, e - e %/% 2)
    object$V <- scale_data(object$V, e)
    x <- scale_data(x, e)
  }
  parts <- stratified_parts(object, x)
  fitted_mass <- parts$shift_mass + parts$basis_mass
  out$relative_error <- sqrt(sum(parts$sq_error) / sum(parts$sq_norm))
  out$strata <- data.frame(
    stratum = levels(object$strata),
    samples = as.integer(table(object$strata)),
    shift_share = ifelse(fitted_mass > 0, parts$shift_mass / fitted_mass, 0),
    normalized_loss = ifelse(is.na(parts$sq_norm) | parts$sq_norm > 0,
                             sqrt(parts$sq_error / parts$sq_norm), 0),
    row.names = NULL
  )
  class(out) <- c("summary.nmfkit_stratified", class(out))
  out
}

#' @rdname summary.nmfkit_stratified
#' @export
print.summary.nmfkit_stratified <- function(
    x, digits = max(3L, getOption("digits") - 3L), ...) {
  NextMethod()
  cat("Strata (shift share of the fit, normalised loss):\n")
  tab <- x$strata
  tab$shift_share <- signif(tab$shift_share, digits)
  tab$normalized_loss <- signif(tab$normalized_loss, digits)
  print(tab, row.names = FALSE)
  invisible(x)
}

# Per-stratum pieces from small matrices (x dense or dgCMatrix, never
# densified): squared data norms, squared errors by the identity
# ||X-v1'-WH||^2 = ||X||^2 + m||v||^2 + <W'W, HH'> - 2 v'X1 - 2 <H, W'X>
# + 2 (H1)'W'v, and the fitted mass of the shift and of W H.
stratified_parts <- function(object, x) {
  W <- object$W
  H <- object$H
  V <- object$V
  g <- object$strata
  m <- as.integer(table(g))
  ind <- Matrix::sparseMatrix(i = seq_along(g), j = as.integer(g), x = 1,
                              dims = c(length(g), nlevels(g)))
  col_sq <- if (inherits(x, "dgCMatrix")) Matrix::colSums(x^2) else colSums(x^2)
  sq_norm <- as.vector(col_sq %*% ind)
  row_sums <- as.matrix(x %*% ind)                  # features x strata
  wtx <- as.matrix(Matrix::crossprod(W, x))                 # rank x samples
  hsum <- as.matrix(H %*% ind)                      # rank x strata
  wtv <- crossprod(W, V)
  wtw <- crossprod(W)
  hh <- vapply(seq_len(nlevels(g)), function(i) {
    hi <- H[, g == levels(g)[i], drop = FALSE]
    c(sum(wtw * tcrossprod(hi)), sum(hi * wtx[, g == levels(g)[i]]))
  }, numeric(2))
  sq_error <- sq_norm + m * colSums(V^2) + hh[1, ] - 2 * colSums(row_sums * V) -
    2 * hh[2, ] + 2 * colSums(hsum * wtv)
  list(sq_norm = sq_norm, sq_error = pmax(sq_error, 0),
       shift_mass = m * colSums(V), basis_mass = colSums(W %*% hsum))
}

#' Fitted values and residuals of a stratified NMF fit
#'
#' `fitted()` is `W H` plus each sample's stratum shift; `residuals()` (the
#' shared method, see [residuals.nmfkit()]) is the data minus that. Columns
#' follow the order of the data given to [nmf_stratified()] (for a list, its
#' matrices one after another).
#'
#' @param object A fit from [nmf_stratified()].
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return A features x samples matrix.
#' @examples
#' set.seed(1)
#' x <- list(a = matrix(runif(200), 10), b = matrix(runif(200) + 1, 10))
#' fit <- nmf_stratified(x, rank = 2)
#' max(abs(residuals(fit)))
#' @name fitted.nmfkit_stratified
#' @export
fitted.nmfkit_stratified <- function(object, ...) {
  check_dots_empty()
  out <- object$W %*% object$H + object$V[, object$strata, drop = FALSE]
  dimnames(out) <- object$dimnames
  out
}


#' Coefficients of new samples of known strata
#'
#' Holds the shared basis `W` and the shifts `V` of a stratified fit fixed
#' and finds, for each new sample `x_j` of stratum `g`, the nonnegative
#' coefficients `argmin_{h >= 0} ||x_j - v_g - W h||` (the shift removed), by
#' coordinate descent to a tight tolerance.
#'
#' @param object A fit from [nmf_stratified()].
#' @param newdata A matrix (or numeric data frame or `dgCMatrix`) of new
#'   samples in columns with the fit's features in rows, or a list of such
#'   matrices named by stratum.
#' @param strata For a matrix `newdata`: the stratum of each column (names of
#'   strata of the fit). `NULL` when `newdata` is a list.
#' @param type `"coef"` or `"class"`, as in [predict.nmfkit()].
#' @param tol,max_passes Stopping rule of the coordinate descent, as in
#'   [predict.nmfkit()].
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @param assay For `newdata` in a container: its assay (or Seurat layer),
#'   as in [predict.nmfkit()].
#' @return A components x samples matrix of coefficients; without `newdata`,
#'   the fitted coefficients `H`.
#' @examples
#' set.seed(1)
#' x <- list(a = matrix(runif(200), 10), b = matrix(runif(200) + 1, 10))
#' fit <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 500))
#' h <- predict(fit, x$b[, 1:3], strata = rep("b", 3))
#' @export
predict.nmfkit_stratified <- function(object, newdata, strata = NULL,
                                      type = c("coef", "class"),
                                      tol = 1e-12, max_passes = 2000L, ...,
                                      assay = "counts") {
  check_dots_empty()
  # checked whether or not `newdata` is given (without it nothing reads them)
  tol <- check_number(tol, min = 0)
  max_passes <- check_count(max_passes, min = 1)
  group <- NULL
  predict_with(object, newdata, type, read = function(newdata) {
    input <- stratified_input(newdata, strata,
                              levels = levels(object$strata),
                              arg = "newdata")
    if (nrow(input$x) != nrow(object$W)) {
      abort_nmfkit(c("{.arg newdata} must have {nrow(object$W)} rows, one per feature of the fit.",
                     "x" = "It has {nrow(input$x)} row{?s}.",
                     "i" = "Columns are samples; transpose with {.fn t} if your samples are rows."),
                   "dimension")
    }
    group <<- input$group
    input$x
  }, solve = function(newdata) {
    # scale-equivariant: solve on powers-of-two-scaled data when products
    # would overflow or underflow (as predict.nmfkit())
    ex <- max(data_exponent(newdata), data_exponent(object$V))
    ew <- data_exponent(object$W)
    unscale_coef(r_stratified_coef(scale_data(newdata, ex), group,
                                   scale_data(object$W, ew),
                                   scale_data(object$V, ex), tol, max_passes,
                                   object$control$threads), ex - ew)
  }, assay = assay)
}

#' Plot a stratified NMF fit
#'
#' `type = "strata"` draws the stratum shifts `V`: as images when `image_dim`
#' is given or stored (one image per stratum), otherwise as bars per feature
#' (a heatmap when there are more than 60 features). `"basis"` and `"coef"`
#' are those of [plot.nmfkit()]; `"loss"` draws the normalised loss trace.
#'
#' @param x A fit from [nmf_stratified()].
#' @param type What to draw.
#' @param image_dim Image size `c(rows, columns)` for `"strata"` and
#'   `"basis"`.
#' @param components Components to draw for `"basis"` and `"coef"`.
#' @param ... Graphical parameters (see [graphics::par()]), named; one the
#'   plot sets itself (`main`, `col`, `xlab`, ...) is replaced by the user's.
#'   Any other name is an error naming the nearest argument.
#' @return `x`, invisibly.
#' @examples
#' set.seed(1)
#' x <- list(a = matrix(runif(200), 10), b = matrix(runif(200) + 1, 10))
#' fit <- nmf_stratified(x, rank = 2)
#' plot(fit, type = "strata")
#' plot(fit, type = "loss")
#' @export
plot.nmfkit_stratified <- function(x, type = c("strata", "basis", "coef",
                                                "loss"),
                                   image_dim = x$image_dim, components = NULL,
                                   ...) {
  check_graphics_dots()
  type <- check_choice(type)
  # checked whatever the type (the strata and loss plots do not read it)
  select_components(x, components)
  V <- x$V
  if (type == "strata") {
    if (!is.null(image_dim)) {
      image_dim <- check_image_dim(image_dim, nrow(V))
      plot_images(V, image_dim, titles = colnames(V), user = list(...))
    } else if (nrow(V) <= 60L) {
      draw(graphics::barplot, t(V), beside = TRUE, legend.text = colnames(V),
           names.arg = rownames(V), main = "Stratum shifts V",
           ylab = "shift", las = 2,
           col = grDevices::hcl.colors(ncol(V), "Dark 3"), user = list(...))
    } else {
      plot_heatmap(V, main = "Stratum shifts V", xlab = "feature",
                   ylab = "stratum", user = list(...))
    }
  } else if (type == "loss") {
    plot_loss(x$normalized_loss, "normalised loss", user = list(...))
  } else {
    plot.nmfkit(x, type = type, image_dim = image_dim,
                components = components, ...)
  }
  invisible(x)
}

#' @rdname top_features
#' @param which For stratified fits: `"strata"` ranks the features of each
#'   stratum's shift, `"basis"` those of each shared component.
#' @export
top_features.nmfkit_stratified <- function(object, n = 10,
                                           which = c("strata", "basis"),
                                           score = c("weight", "specificity",
                                                     "kim"), ...) {
  check_dots_empty()
  which <- check_choice(which)
  score <- check_choice(score)
  if (which == "basis") {
    return(top_features.nmfkit(object, n = n, score = score))
  }
  top_feature_scores(object$V, check_top_n(n), score, "stratum")
}

# A list of strata as the data of a fit (model_data()).
model_input.nmfkit_stratified <- function(object, x, arg = "x",
                                          call = rlang::caller_env(), ...) {
  if (!is.list(x) || is.data.frame(x)) return(x)
  stratified_input(x, NULL, levels = levels(object$strata), arg = arg,
                   call = call)$x
}

# The stratum of each sample, for tidy(matrix = "H") and augment().
sample_groups.nmfkit_stratified <- function(object) {
  data.frame(stratum = object$strata)
}

#' @rdname tidy.nmfkit
#' @method tidy nmfkit_stratified
#' @export
tidy.nmfkit_stratified <- function(x, matrix = c("W", "H", "V"), ...) {
  check_dots_empty()
  matrix <- check_choice(matrix)
  if (matrix == "V") return(tidy_long(x$V, "feature", "stratum"))
  tidy_factor(x, matrix)
}
