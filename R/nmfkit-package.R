#' nmfkit: fast nonnegative matrix factorization and its published variants
#'
#' Standard NMF ([nmf()]) on a C++ core, and variants that reuse its engine.
#' Data are features x samples (columns are samples); every fit is an S3
#' model object with `print()`, `summary()`, `coef()`, `basis()`, `fitted()`,
#' `residuals()`, `predict()` and `plot()` methods, and [nmf_distance()].
#'
#' Options: `nmfkit.threads` sets the default number of threads of
#' [nmf_control()].
#'
#' @keywords internal
#' @useDynLib nmfkit, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom grDevices gray.colors hcl.colors
"_PACKAGE"
