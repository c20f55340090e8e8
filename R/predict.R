#' Coefficients of new samples on a fitted basis
#'
#' Holds the basis `W` of a fit fixed and finds the coefficients of the
#' columns of `newdata`. For standard NMF this is the nonnegative least
#' squares problem `argmin_{H >= 0} ||newdata - W H||_F`, solved by the same
#' coordinate descent as the fit, to a tight tolerance; it is strictly convex
#' when `W` has full column rank, so its answer is unique. It is solved on
#' `newdata` and `W` divided by powers of two when their products would
#' overflow or underflow (data near `.Machine$double.xmax`), which changes
#' nothing else. Variants solve
#' their own subproblem (see their help pages).
#'
#' @param object A fitted model.
#' @param type `"coef"` (the coefficients) or `"class"` (the component with
#'   the largest coefficient of each sample, as [clusters()] gives for the
#'   fit's own samples). The same two types for every variant.
#' @param newdata A nonnegative matrix (or numeric data frame, or
#'   `dgCMatrix`) with the same features as the fit in its rows; or new
#'   samples in a container (a `SummarizedExperiment`,
#'   `SingleCellExperiment`, `Seurat` object, quanteda `dfm` or tidytext
#'   count table, see [nmfkit-containers]).
#' @param assay For `newdata` in a container: its assay (or Seurat layer),
#'   by name or index, as in [nmf()].
#' @param tol,max_passes Stopping rule of the coordinate descent: stop when
#'   the projected-gradient violation falls to `tol` times its first value, or
#'   after `max_passes` passes.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @param interval For a fit of [nmf()]: `"bootstrap"` gives intervals of
#'   the coefficients (and of each sample's proportions) from the bases of
#'   bootstrap replicates, see [predict.nmfkit_bootstrap()].
#' @param level Confidence level of the intervals, in `(0, 1)`.
#' @param bootstrap An [nmf_bootstrap()] of the fit; by default one is run
#'   (100 column replicates, which needs the fit's data).
#' @return For `type = "coef"` a components x samples matrix of
#'   coefficients, with the column names of `newdata` (without `newdata`,
#'   the fit's `H`); for `"class"` an integer vector of components. With
#'   `interval = "bootstrap"` an `nmfkit_interval` object (see
#'   [predict.nmfkit_bootstrap()]).
#' @examples
#' x <- swimmer()
#' fit <- nmf(x, rank = 17, control = nmf_control(tol = 1e-8, max_iter = 1000))
#' h <- predict(fit, x[, 1:5])
#' max(abs(h - coef(fit)[, 1:5]))
#' @export
predict.nmfkit <- function(object, newdata, type = c("coef", "class"),
                           tol = 1e-12, max_passes = 2000L, ...,
                           assay = "counts") {
  check_dots_empty()
  # checked whether or not `newdata` is given (without it nothing reads them)
  tol <- check_number(tol, min = 0)
  max_passes <- check_count(max_passes, min = 1)
  predict_with(object, newdata, type, function(newdata) {
    nnls_coef(newdata, object$W, tol, max_passes, object$control$threads)
  }, assay = assay)
}

# The predict() scaffold every variant's method goes through: `type`,
# the fit's own coefficients (or clusters()) without `newdata`, the matrix
# of a container `newdata` (its assay `assay`, input_matrix()), the
# variant's reading of `newdata` (`read`, by default check_newdata()), its
# solver `solve(newdata)`, the dimnames, and "class" as the component of
# the largest coefficient.
predict_with <- function(object, newdata, type, solve, read = NULL,
                         assay = "counts", call = rlang::caller_env()) {
  type <- check_choice(type, c("coef", "class"), arg = "type", call = call)
  check_assay_arg(assay, call)
  if (missing(newdata) || is.null(newdata)) {
    return(if (type == "class") clusters(object) else object$H)
  }
  # in text, a term a document lacks is a count of zero; elsewhere a missing
  # feature is worth a warning
  counts <- inherits(newdata, "dfm") || (is.data.frame(newdata) &&
    all(c("document", "term", "n") %in% names(newdata)))
  newdata <- input_matrix(newdata, assay, arg = "newdata", call = call)
  newdata <- align_newdata(newdata, rownames(object$W), call, !counts)
  newdata <- if (is.null(read)) {
    check_newdata(newdata, nrow(object$W), arg = "newdata", call = call,
                  budget = object$control$block_size)
  } else {
    read(newdata)
  }
  # a DelayedMatrix is solved a block of columns at a time
  h <- solve_columns(newdata, solve, object$control$block_size)
  if (is.null(dimnames(h))) {
    dimnames(h) <- list(colnames(object$W), colnames(newdata))
  }
  if (type == "coef") return(h)
  out <- max.col(t(h), ties.method = "first")
  names(out) <- colnames(newdata)
  out
}

# align_features() of `newdata`, or of each element of a list of strata
# (predict() of a stratified fit), named as the user would index it.
align_newdata <- function(newdata, features, call, warn_absent) {
  if (!is.list(newdata) || is.data.frame(newdata)) {
    return(align_features(newdata, features, arg = "newdata", call = call,
                          warn_absent = warn_absent))
  }
  nm <- names(newdata)
  out <- lapply(seq_along(newdata), function(i) {
    arg <- if (!is.null(nm) && !is.na(nm[i]) && nzchar(nm[i])) {
      sprintf("newdata[[\"%s\"]]", nm[i])
    } else {
      sprintf("newdata[[%d]]", i)
    }
    align_features(newdata[[i]], features, arg = arg, call = call,
                   warn_absent = warn_absent)
  })
  names(out) <- nm
  out
}

# The rows of `x` in the order of the fit's `features`, matched by name
# wherever both have names (a count table's terms come in the order of
# their first appearance, a gene list in any order): a feature of the fit
# that `x` lacks is a row of zeros (a term not counted; with `warn_absent`,
# outside text, with a classed warning), a row of `x` that is no feature of
# the fit is dropped with a classed warning. Without names
# on either side the rows are matched by position (check_newdata() counts
# them). A data frame's automatic row names ("1", "2", ...) are no names.
align_features <- function(x, features, arg, call, warn_absent = TRUE) {
  rn <- feature_names(x)
  if (is.null(features) || is.null(rn) || identical(rn, features)) return(x)
  if (methods::is(x, "sparseMatrix")) check_sparse_structure(x, arg, call)
  if (anyDuplicated(rn)) {
    dup <- unique(rn[duplicated(rn)])
    abort_nmfkit(c("The row names of {.arg {arg}} must be distinct: its rows are matched to the fit's features by name.",
                   "x" = "{cli::qty(length(dup))}Feature{?s} {.val {utils::head(dup, 5)}} {?is/are} repeated."),
                 "dimnames", call = call)
  }
  pos <- match(features, rn)
  if (all(is.na(pos))) {
    abort_nmfkit(c("The row names of {.arg {arg}} must be feature names of the fit.",
                   "x" = "None of its {length(rn)} row names is one of the fit's {length(features)} features (such as {.val {utils::head(features, 3)}}); it has {.val {utils::head(rn, 3)}}.",
                   "i" = "Remove the row names ({.code rownames(newdata) <- NULL}) to match rows by position."),
                 "dimnames", call = call)
  }
  unknown <- rn[!rn %in% features]
  if (length(unknown)) {
    warn_nmfkit(c("{length(unknown)} row{?s} of {.arg {arg}} {?is/are} no feature of the fit and {?is/are} left out.",
                  "i" = "For example {.val {utils::head(unknown, 3)}}."),
                "features", call = call, features = unknown)
  }
  if (is.data.frame(x)) x <- as_numeric_matrix(x, arg, call)
  if (!anyNA(pos)) return(x[pos, , drop = FALSE])
  if (warn_absent) {
    absent <- features[is.na(pos)]
    warn_nmfkit(c("{length(absent)} of the fit's {length(features)} features {?is/are} not in {.arg {arg}} and {?is/are} taken as zero.",
                  "i" = "For example {.val {utils::head(absent, 3)}}."),
                "features", call = call, features = absent)
  }
  # the fit's features that x lacks: rows of zeros, appended then placed
  zero <- if (is.matrix(x)) {
    matrix(0, 1L, ncol(x))
  } else if (is_delayed(x)) {
    DelayedArray::DelayedArray(Matrix::sparseMatrix(
      i = integer(), j = integer(), x = numeric(), dims = c(1L, ncol(x))))
  } else {
    Matrix::sparseMatrix(i = integer(), j = integer(), x = numeric(),
                         dims = c(1L, ncol(x)))
  }
  pos[is.na(pos)] <- nrow(x) + 1L
  out <- rbind(x, zero)[pos, , drop = FALSE]
  rownames(out) <- features
  out
}

# Row names of a matrix-like `x` (NULL for a data frame's automatic ones).
feature_names <- function(x) {
  if (is.data.frame(x)) {
    return(if (.row_names_info(x) > 0L) rownames(x))
  }
  if (length(dim(x)) != 2L) return(NULL)
  rownames(x)
}

