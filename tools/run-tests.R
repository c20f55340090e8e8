# Runs the R test suite against the installed package and prints one line
#   R tests: N passed, N failed, N skipped
# counting test_that() blocks. Exit status 1 on any failure or error.
Sys.setenv(NOT_CRAN = "true")
suppressPackageStartupMessages(library(testthat))
# every file runs, whatever fails before it
options(testthat.progress.max_fails = Inf)
res <- testthat::test_dir(
  "tests/testthat", package = "nmfkit", load_package = "installed",
  reporter = testthat::ProgressReporter$new(show_praise = FALSE),
  stop_on_failure = FALSE, stop_on_warning = FALSE
)
df <- as.data.frame(res)
bad <- df$failed > 0 | df$error
skipped <- !bad & df$skipped
passed <- !bad & !skipped
cat(sprintf("R tests: %d passed, %d failed, %d skipped\n", sum(passed),
            sum(bad), sum(skipped)))
quit(status = if (any(bad)) 1L else 0L)
