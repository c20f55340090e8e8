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

# Human name of a variant, for print and summary (from its declaration).
variant_label <- function(object) {
  v <- variant_of(object)
  if (!is.null(v)) return(v$label)
  # models that no variant fits (consensus programs) may carry a label
  if (is.character(object$label)) object$label
  else sub("^nmfkit_", "", class(object)[1])
}

# The data a model was fitted to, or an error saying how to supply it.
# Data passed by the user are read as the variant reads its input
# (model_input()) and put on the scale of the kept data (model_scale()).
model_data <- function(object, x = NULL, arg = "x",
                       call = rlang::caller_env()) {
  if (!is.null(x)) {
    x <- model_input(object, x, arg = arg, call = call)
    x <- same_features(x, rownames(object$W), arg, call)
    x <- check_newdata(x, nrow(object$W), arg = arg, call = call)
    if (ncol(x) != ncol(object$H)) {
      abort_nmfkit(c("{.arg {arg}} must be the data of the fit: {ncol(object$H)} sample{?s} (columns).",
                     "x" = "It has {ncol(x)} column{?s}.",
                     "i" = "For new samples use {.fn predict}."),
                   "dimension", call = call)
    }
    return(model_scale(object, x))
  }
  if (is.null(object$data)) {
    abort_nmfkit(c("This fit does not keep its data.",
                   "i" = "Pass the data as {.arg x}, or fit with {.code keep_data = TRUE}."),
                 "data", call = call)
  }
  object$data
}

# The fit's own data given again, its rows matched to the fit's features by
# name where both have names (the same features in another order are put
# in order; other names are an error: these are not the data of the fit).
same_features <- function(x, features, arg, call) {
  rn <- feature_names(x)
  if (is.null(rn) || is.null(features) || identical(rn, features)) return(x)
  if (anyDuplicated(rn) || !setequal(rn, features)) {
    odd <- utils::head(c(setdiff(rn, features), setdiff(features, rn)), 3)
    abort_nmfkit(c("The rows of {.arg {arg}} must be the features of the fit.",
                   "x" = "Its row names are not the fit's features{if (anyDuplicated(rn)) ' (some repeat)'}{if (length(odd)) cli::format_inline(': {.val {odd}} differ')}.",
                   "i" = "For new samples use {.fn predict}."),
                 "dimnames", call = call)
  }
  x[match(features, rn), , drop = FALSE]
}

# The user's data as one matrix, for variants that take other input
# shapes (a list of strata); as is by default.
model_input <- function(object, x, ...) UseMethod("model_input")
model_input.default <- function(object, x, ...) x

# The user's data on the scale the model was fitted to: as is by default;
# variants that fit normalised data normalise it the same way.
model_scale <- function(object, x) UseMethod("model_scale")
model_scale.default <- function(object, x) x
