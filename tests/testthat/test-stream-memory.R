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

# The same proof for KL on a 10x count file, with a cap that leaves room
# for the block budget and not for the counts: the child's address space
# is its measured size with the packages loaded and the file opened, plus
# 96 MB (64 MB ran out with std::bad_alloc in the merged suite on a loaded
# machine; the helper's run had passed). The fit needs about 46 MB of it
# (measured uncapped, 2 MB budget:
# blocks of one chunk of H, 3.7 MB each, their reads and copies; the
# factors; the 8 MB stack of the thread that computes a block while the
# next is read; MALLOC_ARENA_MAX=1 keeps that thread's malloc arena in the
# main one); the 9e6 counts as a dgCMatrix (103 MB, more while converted)
# do not fit.
test_that("a KL fit of a TENxMatrix runs under a cap the counts exceed", {
  skip_if_not_installed("HDF5Array")
  skip_if_not(file.exists("/proc/self/status") && nzchar(Sys.which("sh")),
              "RLIMIT_AS and /proc are Linux's")
  m <- 2000
  n <- 50000
  set.seed(3)
  per_col <- 180L  # 9 % of the rows: 9e6 counts
  i <- as.vector(vapply(seq_len(n), function(j) sort(sample.int(m, per_col)),
                        integer(per_col)))
  x <- Matrix::sparseMatrix(i = i, j = rep(seq_len(n), each = per_col),
                            x = as.double(1 + rpois(length(i), 2)),
                            dims = c(m, n))
  rm(i)
  path <- withr::local_tempfile(fileext = ".h5")
  write_tenx(x, path)
  dgc_mb <- (length(x@x) * 12 + length(x@p) * 4) / 2^20
  rm(x)
  invisible(gc())
  budget <- 2^21
  margin_mb <- 96
  expect_gt(dgc_mb, margin_mb)
  ctrl <- nmf_control(max_iter = 2, tol = 0, block_size = budget)
  set.seed(4)
  uncapped <- nmf(read_tenx(path), 3, loss = "kl", control = ctrl)

  out <- withr::local_tempfile(fileext = ".rds")
  script <- withr::local_tempfile(fileext = ".R")
  writeLines(c(
    'suppressMessages({library(nmfkit); library(HDF5Array)})',
    'args <- commandArgs(TRUE)',
    'kb <- function(f) as.numeric(gsub("[^0-9]", "", grep(paste0("^", f), readLines("/proc/self/status"), value = TRUE)))',
    # (TENxMatrix(), not read_tenx(): its check of the layout reads 1e7
    # indices at a time, before the fit and its budget)
    'xh <- TENxMatrix(args[1], "matrix")',
    'invisible(gc())',
    'if (args[3] == "measure") { cat(kb("VmSize"), "\\n"); quit(save = "no") }',
    'vm <- kb("VmSize")',
    'set.seed(4)',
    sprintf('fit <- nmf(xh, 3, loss = "kl", control = nmf_control(max_iter = 2, tol = 0, block_size = %d))', budget),
    'peak <- kb("VmPeak")',
    'invisible(gc())',
    # (after the fit: what a failed realisation leaves in the heap is not
    # the fit's)
    'realised <- tryCatch({ methods::as(xh, "dgCMatrix"); "realised" }, error = function(e) "failed")',
    'saveRDS(list(W = fit$W, H = fit$H, loss = fit$loss, vm = vm, peak = peak, realised = realised), args[2])'
  ), script)
  child <- function(mode, cap_kb = NULL) {
    cmd <- paste(
      if (!is.null(cap_kb)) paste("ulimit -v", format(cap_kb, scientific = FALSE), "&&"),
      "MALLOC_ARENA_MAX=1 OMP_NUM_THREADS=1",
      shQuote(file.path(R.home("bin"), "Rscript")), shQuote(script),
      shQuote(path), shQuote(out), mode)
    suppressWarnings(system2(
      "sh", c("-c", shQuote(cmd)), stdout = TRUE, stderr = TRUE,
      env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))))
  }
  base_kb <- as.numeric(utils::tail(child("measure"), 1))
  expect_true(is.finite(base_kb))
  cap_kb <- base_kb + margin_mb * 1024
  said <- child("fit", cap_kb)
  expect_true(file.exists(out), info = paste(said, collapse = "\n"))
  got <- readRDS(out)
  # the cap bites: the counts cannot be realised under it
  expect_identical(got$realised, "failed")
  expect_lte(got$peak, cap_kb)
  # and the fit is the uncapped one, bit for bit
  expect_identical(got$W, uncapped$W)
  expect_identical(got$H, uncapped$H)
  expect_identical(got$loss, uncapped$loss)
})
