# The proof that a streamed fit never holds the data: a child R process
# whose address space (RLIMIT_AS, `ulimit -v`) is capped below the size of
# the matrix in memory fits it from HDF5, while realising the matrix in the
# same process fails; the fit equals the uncapped one bit for bit.

test_that("an HDF5 matrix larger than the child's address space is fitted", {
  skip_on_cran()
  skip_if_not_installed("HDF5Array")
  skip_if_not(.Platform$OS.type == "unix" && nzchar(Sys.which("sh")))
  # 2000 x 30000 doubles: 480 MB in memory, written uncompressed
  m <- 2000
  n <- 30000
  set.seed(1)
  x <- matrix(runif(m * 8), m) %*% matrix(runif(8 * n), 8) +
    matrix(runif(m * n, 0, 0.1), m)
  path <- withr::local_tempfile(fileext = ".h5")
  HDF5Array::writeHDF5Array(x, path, "x", chunkdim = c(m, 250), level = 0)
  rm(x)
  gc()
  ctrl <- nmf_control(max_iter = 3, block_size = 2^24)  # 16 MB blocks
  xh <- HDF5Array::HDF5Array(path, "x")
  set.seed(2)
  uncapped <- nmf(xh, 8, control = ctrl)

  out <- withr::local_tempfile(fileext = ".rds")
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    'suppressMessages({library(nmfkit); library(HDF5Array)})',
    'args <- commandArgs(TRUE)',
    'status <- readLines("/proc/self/status")',
    'vm <- as.numeric(gsub("[^0-9]", "", grep("^VmSize", status, value = TRUE)))',
    'xh <- HDF5Array(args[1], "x")',
    # what is left of the address space is less than the matrix
    'realised <- tryCatch({ as.matrix(xh); "realised" }, error = function(e) conditionMessage(e))',
    'set.seed(2)',
    'fit <- nmf(xh, 8, control = nmf_control(max_iter = 3, block_size = 2^24))',
    'peak <- as.numeric(gsub("[^0-9]", "", grep("^VmPeak", readLines("/proc/self/status"), value = TRUE)))',
    'saveRDS(list(W = fit$W, H = fit$H, loss = fit$loss, vm = vm, peak = peak, realised = realised), args[2])'
  ), script)
  # the cap: what R with these packages takes (measured in a child), plus
  # 300 MB, less than the 480 MB of the matrix
  base <- system2("sh", c("-c", shQuote(paste(
    "MALLOC_ARENA_MAX=1 OMP_NUM_THREADS=1", file.path(R.home("bin"), "Rscript"),
    "-e", shQuote('suppressMessages({library(nmfkit); library(HDF5Array)}); cat(grep("^VmSize", readLines("/proc/self/status"), value = TRUE))')))),
    stdout = TRUE, env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))
  base_kb <- as.numeric(gsub("[^0-9]", "", base))
  cap_kb <- base_kb + 300 * 1024
  status <- system2("sh", c("-c", shQuote(paste(
    "ulimit -v", format(cap_kb, scientific = FALSE), "&&",
    "MALLOC_ARENA_MAX=1 OMP_NUM_THREADS=1", file.path(R.home("bin"), "Rscript"),
    shQuote(script), shQuote(path), shQuote(out)))),
    env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))
  expect_identical(status, 0L)
  child <- readRDS(out)
  # the cap bit: the matrix could not be realised in the child
  expect_false(identical(child$realised, "realised"))
  expect_lt(child$peak, cap_kb + 1)
  expect_lt(child$peak - child$vm, 480 * 1024)
  # and the fit is the uncapped one
  expect_identical(child$W, uncapped$W)
  expect_identical(child$H, uncapped$H)
  expect_identical(child$loss, uncapped$loss)
})
