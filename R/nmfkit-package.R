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
#' @section Progress:
#' In an interactive session every fitting function shows a `cli` progress
#' bar (iteration and current loss) once a fit has run for two seconds
#' (cli's option `cli.progress_show_after`); quick fits stay silent.
#' `options(nmfkit.progress = FALSE)` turns the bars off, and
#' `nmf_control(verbose = TRUE)` prints a line every `max_iter / 20`
#' iterations instead. Loops over fits (`nrun` restarts, [nmf_distance()]
#' on a list, [nmf_joint_test()]) report through `progressr`, so that they
#' report from `future` workers too: wrap the call in
#' [progressr::with_progress()], or set `progressr::handlers(global = TRUE)`.
#'
#' @keywords internal
#' @useDynLib nmfkit, .registration = TRUE
#' @importFrom Rcpp sourceCpp
#' @importFrom grDevices gray.colors hcl.colors
#' @importFrom rlang .data
"_PACKAGE"
