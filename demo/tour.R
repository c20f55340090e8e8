# The nmfkit tour: every method on real or paper data. Writes PNG figures and
# a short summary to demo-output/. Run with `make demo` (or Rscript demo/tour.R
# once nmfkit is installed).
suppressPackageStartupMessages(library(nmfkit))

out_dir <- file.path(getwd(), "demo-output")
dir.create(out_dir, showWarnings = FALSE, recursive = TRUE)
summary_file <- file.path(out_dir, "summary.txt")
writeLines(c("nmfkit tour", format(Sys.time(), "%Y-%m-%d %H:%M:%S %Z"), ""),
           summary_file)

# Appends one line to the summary and echoes it.
summary_line <- function(...) {
  line <- paste0(...)
  cat(line, "\n", sep = "")
  cat(line, "\n", file = summary_file, sep = "", append = TRUE)
}

# Each stop is demo/tour-<variant>.R, run in its own environment; a failing
# stop is reported and the tour goes on, but the tour then exits non-zero.
stops <- c("nmf", "counts", "ooc", "inference", "signatures", "masks",
           "joint", "stratified", "shift", "wasserstein", "manifold")
failed <- character(0)
for (stop_name in stops) {
  file <- file.path("demo", paste0("tour-", stop_name, ".R"))
  if (!file.exists(file)) next
  cat("\n== ", stop_name, "\n", sep = "")
  env <- new.env(parent = globalenv())
  env$out_dir <- out_dir
  env$summary_line <- summary_line
  t0 <- proc.time()[["elapsed"]]
  ok <- tryCatch({
    sys.source(file, envir = env)
    TRUE
  }, error = function(e) {
    message("stop '", stop_name, "' failed: ", conditionMessage(e))
    FALSE
  })
  if (!ok) failed <- c(failed, stop_name)
  summary_line(sprintf("  [%s: %.1f s]", stop_name,
                       proc.time()[["elapsed"]] - t0))
}
cat("\nFigures and summary in", out_dir, "\n")
if (length(failed)) {
  message("Failed stops: ", paste(failed, collapse = ", "))
  quit(status = 1)
}
