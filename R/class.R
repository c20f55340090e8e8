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
model_data <- function(object, x = NULL, call = rlang::caller_env()) {
  if (!is.null(x)) return(check_newdata(x, nrow(object$W), arg = "x", call = call))
  if (is.null(object$data)) {
    abort_nmfkit(c("This fit does not keep its data.",
                   "i" = "Pass the data as {.arg x}."), "data", call = call)
  }
  object$data
}
