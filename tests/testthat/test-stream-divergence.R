# KL and beta-divergence fits of data read in column blocks: H is updated a
# block at a time as in memory; W from sums of one pass (the in-memory "mu"
# update, or KL coordinate descent's safeguarded Newton step), so "mu" gives
# the in-memory fit and "cd" its optimum.

skip_if_not_installed("DelayedArray")

# planted Poisson counts of a separated basis (about a quarter zero)
planted_counts <- function(m = 60, n = 400, k = 3, seed = 1) {
  set.seed(seed)
  w <- matrix(runif(m * k), m, k)
  h <- matrix(runif(k * n), k, n)
  x <- matrix(as.double(rpois(m * n, 4 * w %*% h)), m, n)
  dimnames(x) <- list(paste0("g", seq_len(m)), paste0("c", seq_len(n)))
  x
}

# fits of x and its streamed copy from the same seed
div_pair <- function(x, xd, ..., seed = 2) {
  set.seed(seed)
  a <- nmf(x, ...)
  set.seed(seed)
  b <- nmf(xd, ...)
  list(memory = a, streamed = b)
}

rel_dev <- function(p) abs(p$streamed$divergence / p$memory$divergence - 1)

test_that("streamed mu is the in-memory mu fit for KL, IS and beta", {
  x <- planted_counts() + 0.5  # positive: IS needs it
  xs <- Matrix::Matrix(x, sparse = TRUE)
  for (loss in list("kl", "is", 1.5)) {
    for (xm in list(x, xs)) {
      p <- suppressWarnings(div_pair(
        xm, DelayedArray::DelayedArray(xm), 3, loss = loss, method = "mu",
        control = nmf_control(block_size = 3e4, max_iter = 40, tol = 1e-6)))
      expect_identical(p$streamed$iterations, p$memory$iterations)
      expect_identical(p$streamed$status, p$memory$status)
      expect_equal(p$streamed$W, p$memory$W, tolerance = 1e-9)
      expect_equal(p$streamed$H, p$memory$H, tolerance = 1e-9)
      expect_lt(rel_dev(p), 1e-10)
      expect_equal(p$streamed$baseline, p$memory$baseline, tolerance = 1e-12)
      expect_identical(dimnames(p$streamed$W), dimnames(p$memory$W))
    }
  }
})

test_that("streamed KL (cd) reaches the in-memory deviance, dense and sparse HDF5", {
  skip_if_not_installed("HDF5Array")
  skip_if_not_installed("rhdf5")
  x <- planted_counts()
  xs <- Matrix::Matrix(x, sparse = TRUE)
  dense <- HDF5Array::writeHDF5Array(x, withr::local_tempfile(fileext = ".h5"),
                                     "x", with.dimnames = TRUE)
  sparse <- write_tenx(xs, withr::local_tempfile(fileext = ".h5"))
  ctrl <- nmf_control(block_size = 3e4, max_iter = 1500, tol = 0)
  for (xd in list(dense, sparse)) {
    p <- suppressWarnings(div_pair(x, xd, 3, loss = "kl", control = ctrl))
    expect_identical(p$streamed$method, "cd")
    # (the diagonal Newton step for W takes about three times the
    # iterations of coordinate descent: 6.4e-8 at 1,500 here, 1e-12 at
    # 3,000 on a smaller problem; the suite keeps the shorter run)
    expect_lt(rel_dev(p), 1e-7)
    # the exact zeros of W it reaches are coordinate descent's
    expect_true(all(which(p$streamed$W == 0) %in% which(p$memory$W == 0)))
  }
  # beta = 0.5 (mu) on the sparse file
  ctrl <- nmf_control(block_size = 3e4, max_iter = 60)
  p <- suppressWarnings(div_pair(x, sparse, 3, loss = 0.5, control = ctrl))
  expect_identical(p$streamed$iterations, p$memory$iterations)
  expect_lt(rel_dev(p), 1e-10)
})

test_that("streamed KL of a PBMC slice reaches the in-memory deviance", {
  skip_if_not(example_counts_available("pbmc"),
              "pbmc_facs not installed (tools/install-data.R)")
  x <- example_counts("pbmc")$counts
  genes <- order(Matrix::rowSums(x), decreasing = TRUE)[1:300]
  y <- x[genes, 1:600]
  ctrl <- nmf_control(block_size = 2e5, max_iter = 1000, tol = 0)
  p <- suppressWarnings(div_pair(y, DelayedArray::DelayedArray(y), 4,
                                 loss = "kl", control = ctrl))
  expect_lt(rel_dev(p), 1e-8)
})

test_that("streamed KL: 1 = 2 threads, sequential = multisession, scale-equivariant", {
  skip_on_cran()
  skip_if_not_installed("HDF5Array")
  x <- planted_counts(n = 300)
  path <- withr::local_tempfile(fileext = ".h5")
  xh <- HDF5Array::writeHDF5Array(x, path, "x", with.dimnames = TRUE)
  ctrl <- function(threads = 1) {
    nmf_control(block_size = 3e4, max_iter = 25, threads = threads)
  }
  fit <- function(xd, ...) {
    set.seed(5)
    suppressWarnings(nmf(xd, 3, loss = "kl", ...))
  }
  one <- fit(xh, control = ctrl(1))
  two <- fit(xh, control = ctrl(2))
  expect_identical(two$W, one$W)
  expect_identical(two$H, one$H)
  expect_identical(two$loss, one$loss)
  withr::defer(future::plan("sequential"))
  future::plan("multisession", workers = 2)
  ms <- fit(xh, control = ctrl(1))
  future::plan("sequential")
  expect_identical(ms$W, one$W)
  expect_identical(ms$H, one$H)
  expect_identical(ms$divergence, one$divergence)
  # c x: the same iterations, factors scaled by sqrt(c), divergence by c
  scaled <- fit(DelayedArray::DelayedArray(x * 1024), control = ctrl(1))
  expect_identical(scaled$iterations, one$iterations)
  expect_equal(scaled$W, one$W * 32, tolerance = 1e-10)
  expect_equal(scaled$loss, one$loss, tolerance = 1e-10)
  expect_equal(scaled$divergence, one$divergence * 1024, tolerance = 1e-10)
})

test_that("what streamed divergences refuse is classed", {
  x <- planted_counts(n = 100)
  xd <- DelayedArray::DelayedArray(x)
  # missing entries and masks need the data in memory
  expect_error(nmf(xd, 3, loss = "kl", mask = "zeros"),
               class = "nmfkit_error_streamed")
  # IS needs positive data: the scan's count of zeros
  expect_error(nmf(xd, 3, loss = "is"), class = "nmfkit_error_loss")
  # a user's start with W H = 0 at a positive count
  start <- list(W = matrix(1, nrow(x), 3), H = matrix(1, 3, ncol(x)))
  start$H[, 5] <- 0
  expect_error(nmf(xd, 3, loss = "kl", init = start),
               class = "nmfkit_error_init")
})
