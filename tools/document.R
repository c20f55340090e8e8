# Regenerates the Rcpp glue (src/RcppExports.cpp, R/RcppExports.R), man/ and
# NAMESPACE. roxygen reads the R code without compiling it (the docs need
# no compiled code), so this takes seconds, not a debug build's minutes.
Rcpp::compileAttributes()
roxygen2::roxygenise(load_code = function(path) {
  # (without a compiled library pkgload warns that it found none)
  suppressWarnings(pkgload::load_all(path, compile = FALSE, helpers = FALSE,
                                     attach_testthat = FALSE, quiet = TRUE))$env
})
