# The model object shared by every variant: a list of class
# c("nmfkit_<variant>", "nmfkit"), like lm.

# Builds a model object cheaply. `W` (m x k), `H` (k x n); `x` is the data
# (kept by reference, as lm keeps its model frame) for fitted/residuals;
# `...` adds variant fields.
new_nmfkit <- function(W, H, loss, iterations, status, call, control,
                       variant = "nmf", x = NULL, dimnames = NULL,
                       loss_name = "relative error", ...) {
  k <- ncol(W)
  comp <- paste0("nmf", seq_len(k))
  if (is.null(dimnames) && !is.null(x)) dimnames <- dimnames(x)
  if (is.null(dimnames)) dimnames <- list(NULL, NULL)
  dimnames(W) <- list(dimnames[[1]], comp)
  dimnames(H) <- list(comp, dimnames[[2]])
  structure(
    list(W = W, H = H, loss = as.double(loss),
         iterations = as.integer(iterations), status = status, call = call,
         control = control, rank = k, dimnames = dimnames,
         loss_name = loss_name, data = x, ...),
    class = c(paste0("nmfkit_", variant), "nmfkit")
  )
}

# Checks the invariants every model object holds; returns it invisibly.
validate_nmfkit <- function(object) {
  stopifnot(
    inherits(object, "nmfkit"),
    is.matrix(object$W), is.matrix(object$H),
    ncol(object$W) == object$rank, nrow(object$H) == object$rank,
    all(object$W >= 0), all(object$H >= 0),
    length(object$loss) == object$iterations || length(object$loss) == 0L,
    object$status %in% c("converged", "max_iter", "interrupted",
                         "numerical_error", "degenerate")
  )
  invisible(object)
}

# Human name of a variant, for print and summary.
variant_label <- function(object) {
  switch(class(object)[1],
    nmfkit_nmf = "NMF",
    nmfkit_joint = "Joint NMF",
    nmfkit_stratified = "Stratified NMF",
    nmfkit_shift = "Shift-invariant NMF",
    nmfkit_wasserstein = "Wasserstein NMF",
    nmfkit_manifold = "Manifold-regularised NMF",
    sub("^nmfkit_", "", class(object)[1])
  )
}

# The data a model was fitted to, or an error saying how to supply it.
# Data passed by the user go through as_model_scale(), so that they are on
# the scale of the kept data (normalised histograms or columns).
model_data <- function(object, x = NULL, arg = "x",
                       call = rlang::caller_env()) {
  if (!is.null(x)) {
    if (inherits(object, "nmfkit_stratified") && is.list(x) &&
        !is.data.frame(x)) {
      x <- stratified_input(x, NULL, levels = levels(object$strata),
                            arg = arg, call = call)$x
    }
    x <- check_newdata(x, nrow(object$W), arg = arg, call = call)
    if (ncol(x) != ncol(object$H)) {
      abort_nmfkit(c("{.arg {arg}} must be the data of the fit: {ncol(object$H)} sample{?s} (columns).",
                     "x" = "It has {ncol(x)} column{?s}.",
                     "i" = "For new samples use {.fn predict}."),
                   "dimension", call = call)
    }
    return(as_model_scale(object, x))
  }
  if (is.null(object$data)) {
    abort_nmfkit(c("This fit does not keep its data.",
                   "i" = "Pass the data as {.arg x}, or fit with {.code keep_data = TRUE}."),
                 "data", call = call)
  }
  object$data
}

# The user's data on the scale the model was fitted to: as is for most
# variants; Wasserstein NMF and joint NMF (normalize = TRUE) fit normalised
# columns, so fitted() and residuals() compare with those.
as_model_scale <- function(object, x) {
  if (inherits(object, "nmfkit_wasserstein")) return(unit_mass(x))
  if (inherits(object, "nmfkit_joint") && isTRUE(object$normalize) &&
      ncol(x) == length(object$set)) {
    in1 <- object$set == levels(object$set)[1]
    out <- as.matrix(x)
    out[, in1] <- as.matrix(normalize_columns(x[, in1, drop = FALSE]))
    out[, !in1] <- as.matrix(normalize_columns(x[, !in1, drop = FALSE]))
    return(out)
  }
  x
}
