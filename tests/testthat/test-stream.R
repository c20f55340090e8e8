# Fits of data read in column blocks (a DelayedMatrix): the same answer as
# the in-memory fit, on any plan and thread count, with the data never
# realised whole.

skip_if_not_installed("DelayedArray")

# noisy low-rank data with zeros (about 40 % nonzero), dense and sparse
stream_data <- function(m = 60, n = 700, k = 4, seed = 1) {
  set.seed(seed)
  w <- matrix(runif(m * k), m, k) * (runif(m * k) < 0.6)
  h <- matrix(runif(k * n), k, n)
  x <- w %*% h + matrix(0.05 * runif(m * n), m, n)
  x[x < 0.6] <- 0
  dimnames(x) <- list(paste0("g", seq_len(m)), paste0("c", seq_len(n)))
  x
}

# the same start for both fits
fit_pair <- function(x, xd, ..., seed = 3) {
  set.seed(seed)
  a <- nmf(x, ...)
  set.seed(seed)
  b <- nmf(xd, ...)
  list(memory = a, streamed = b)
}

expect_same_fit <- function(p, tol = 1e-10) {
  expect_identical(p$streamed$iterations, p$memory$iterations)
  expect_identical(p$streamed$status, p$memory$status)
  expect_identical(p$streamed$method, p$memory$method)
  rel <- function(a, b) sqrt(sum((a - b)^2) / sum(b^2))
  expect_lt(rel(p$streamed$W, p$memory$W), tol)
  expect_lt(rel(p$streamed$H, p$memory$H), tol)
  expect_lt(abs(final_loss(p$streamed$loss) / final_loss(p$memory$loss) - 1),
            tol)
  expect_identical(dimnames(p$streamed$W), dimnames(p$memory$W))
  expect_identical(dimnames(p$streamed$H), dimnames(p$memory$H))
}

final_loss <- function(l) l[length(l)]

# a budget of a few chunks (16 columns each) per block: several blocks
small_blocks <- function(...) nmf_control(block_size = 1e5, ...)

test_that("a streamed fit is the in-memory fit, for every method, dense and sparse", {
  x <- stream_data()
  xs <- Matrix::Matrix(x, sparse = TRUE)
  for (method in c("auto", "hals", "mu", "anls")) {
    for (sparse in c(FALSE, TRUE)) {
      # extrapolation on (the default) for dense data, off for sparse
      ctrl <- small_blocks(extrapolate = !sparse, tol = 1e-5, max_iter = 40)
      init <- if (method %in% c("hals", "mu")) "random" else "auto"
      xm <- if (sparse) xs else x
      p <- suppressWarnings(fit_pair(xm, DelayedArray::DelayedArray(xm),
                                     rank = 4, method = method,
                                     control = ctrl, init = init))
      expect_gt(p$memory$iterations, 5)
      expect_same_fit(p)
    }
  }
})

test_that("blocks of any budget give the in-memory fit; zero lines come back zero", {
  x <- stream_data(n = 500)
  x[5, ] <- 0
  x[, c(3, 400)] <- 0
  xd <- DelayedArray::DelayedArray(Matrix::Matrix(x, sparse = TRUE))
  for (budget in c(1, 1e5, 1e9)) {
    p <- fit_pair(x, xd, rank = 3, control = nmf_control(block_size = budget))
    expect_same_fit(p)
    expect_true(all(p$streamed$W[5, ] == 0))
    expect_true(all(p$streamed$H[, c(3, 400)] == 0))
  }
})

test_that("penalties, fixed components and nrun work on streamed data", {
  x <- stream_data(n = 300)
  xd <- DelayedArray::DelayedArray(x)
  fw <- matrix(runif(nrow(x)), ncol = 1)
  p <- fit_pair(x, xd, rank = 3, penalty = c(l1 = 0.01),
                fixed = list(W = fw), nrun = 2, control = small_blocks())
  expect_same_fit(p)
  expect_identical(unname(p$streamed$W[, 1]), as.vector(fw))
})

test_that("a delayed operation is applied block by block", {
  x <- stream_data(n = 400) * 20
  xd <- log1p(DelayedArray::DelayedArray(Matrix::Matrix(x, sparse = TRUE)))
  expect_true(DelayedArray::isPristine(xd) == FALSE)
  p <- fit_pair(log1p(x), xd, rank = 4, control = small_blocks())
  expect_same_fit(p)
})

test_that("HDF5-backed matrices stream and give the in-memory fit", {
  skip_if_not_installed("HDF5Array")
  x <- stream_data(n = 400)
  path <- withr::local_tempfile(fileext = ".h5")
  xh <- HDF5Array::writeHDF5Array(x, path, "x", chunkdim = c(nrow(x), 50),
                                  with.dimnames = TRUE)
  expect_s4_class(xh, "HDF5Matrix")
  p <- fit_pair(x, xh, rank = 4, control = small_blocks())
  expect_same_fit(p)
  # the model keeps the file-backed matrix, not a copy of the data
  expect_s4_class(p$streamed$data, "HDF5Matrix")
})

test_that("streamed fits are identical on 1 and 2 threads and reproducible", {
  x <- stream_data(n = 600)
  xd <- DelayedArray::DelayedArray(Matrix::Matrix(x, sparse = TRUE))
  set.seed(4)
  one <- nmf(xd, 5, control = small_blocks(threads = 1, max_iter = 30))
  set.seed(4)
  two <- nmf(xd, 5, control = small_blocks(threads = 2, max_iter = 30))
  set.seed(4)
  again <- nmf(xd, 5, control = small_blocks(threads = 1, max_iter = 30))
  expect_identical(one$W, two$W)
  expect_identical(one$H, two$H)
  expect_identical(one$loss, two$loss)
  expect_identical(one$W, again$W)
})

test_that("a pass spread over futures gives the sequential bits (multisession, cluster)", {
  skip_on_cran()
  skip_if_not_installed("HDF5Array")
  x <- stream_data(n = 400)
  path <- withr::local_tempfile(fileext = ".h5")
  xh <- HDF5Array::writeHDF5Array(x, path, "x", with.dimnames = TRUE)
  ctrl <- small_blocks(max_iter = 15)
  set.seed(5)
  seq_fit <- nmf(xh, 3, control = ctrl)
  withr::defer(future::plan("sequential"))
  future::plan("multisession", workers = 2)
  set.seed(5)
  ms_fit <- nmf(xh, 3, control = ctrl)
  expect_identical(ms_fit$W, seq_fit$W)
  expect_identical(ms_fit$H, seq_fit$H)
  expect_identical(ms_fit$loss, seq_fit$loss)
  cl <- parallel::makeCluster(2)
  withr::defer(parallel::stopCluster(cl), priority = "first")
  future::plan("cluster", workers = cl)
  set.seed(5)
  cl_fit <- nmf(xh, 3, control = ctrl)
  expect_identical(cl_fit$W, seq_fit$W)
  expect_identical(cl_fit$H, seq_fit$H)
})

test_that("what needs the data in memory is a classed error on streamed data", {
  x <- stream_data(n = 100)
  xd <- DelayedArray::DelayedArray(x)
  expect_error(nmf(xd, 3, na = "omit"), class = "nmfkit_error_streamed")
  expect_error(nmf(xd, 3, weights = x), class = "nmfkit_error_streamed")
  expect_error(nmf(xd, 3, mask = "zeros"), class = "nmfkit_error_streamed")
  expect_error(nmf(xd, 3, init = "nndsvda"), class = "nmfkit_error_init")
  neg <- x
  neg[2, 3] <- -1
  expect_error(nmf(DelayedArray::DelayedArray(neg), 3),
               class = "nmfkit_error_negative")
  nan <- x
  nan[2, 3] <- NaN
  expect_error(nmf(DelayedArray::DelayedArray(nan), 3),
               class = "nmfkit_error_nonfinite")
  expect_error(nmf(DelayedArray::DelayedArray(x * 0), 3),
               class = "nmfkit_error_zero")
  chr <- DelayedArray::DelayedArray(matrix("a", 3, 3))
  expect_error(nmf(chr, 1), class = "nmfkit_error_type")
  expect_error(nmf(xd, 3, control = nmf_control(block_size = -1)),
               class = "nmfkit_error")
})

test_that("predict() on a DelayedMatrix solves it block by block", {
  x <- stream_data(n = 300)
  set.seed(6)
  fit <- nmf(x, 3)
  xd <- DelayedArray::DelayedArray(Matrix::Matrix(x, sparse = TRUE))
  expect_equal(predict(fit, xd), predict(fit, x), tolerance = 1e-12)
  expect_identical(colnames(predict(fit, xd)), colnames(x))
  expect_identical(predict(fit, xd, type = "class"),
                   predict(fit, x, type = "class"))
})

test_that("nmf_rank() on a DelayedMatrix says how to sample it", {
  xd <- DelayedArray::DelayedArray(stream_data(n = 100))
  expect_error(nmf_rank(xd, 2:3), class = "nmfkit_error_streamed")
})

test_that("online NMF: passes over mini-batches, in memory and on disk alike", {
  set.seed(7)
  w <- matrix(runif(80 * 6), 80) * (runif(480) < 0.4)
  h <- matrix(runif(6 * 3000), 6)
  x <- w %*% h
  x[] <- rpois(length(x), 5 * x)
  xs <- Matrix::Matrix(x, sparse = TRUE)
  ctrl <- nmf_control(max_iter = 6, tol = 0)
  set.seed(8)
  on <- nmf(xs, 6, method = "online", control = ctrl)
  expect_identical(on$method, "online")
  expect_identical(on$iterations, 6L)
  # one loss per pass, then the exact error of the W, H returned
  expect_length(on$loss, 7)
  exact <- sqrt(sum((x - on$W %*% on$H)^2) / sum(x^2))
  expect_equal(on$loss[7], exact, tolerance = 1e-8)
  expect_lt(on$loss[6], on$loss[1])
  # within 2 % of the batch fit's error at convergence
  set.seed(8)
  batch <- nmf(xs, 6, control = nmf_control(tol = 1e-6, max_iter = 500))
  expect_lt(on$loss[7], 1.02 * batch$loss[length(batch$loss)])
  # the same mini-batches read from a DelayedMatrix, dense or sparse: the
  # same bits; 2 threads too
  set.seed(8)
  on_d <- nmf(DelayedArray::DelayedArray(xs), 6, method = "online",
              control = ctrl)
  expect_identical(on_d$W, on$W)
  expect_identical(on_d$H, on$H)
  set.seed(8)
  on_2 <- nmf(xs, 6, method = "online",
              control = nmf_control(max_iter = 6, tol = 0, threads = 2))
  expect_identical(on_2$W, on$W)
  # scale equivariance: the same passes, factors scaled by sqrt(c)
  set.seed(8)
  on_c <- nmf(xs * 1024, 6, method = "online", control = ctrl)
  expect_equal(on_c$W, on$W * 32, tolerance = 1e-10)
  expect_equal(on_c$loss, on$loss, tolerance = 1e-10)
  # what online does not fit
  expect_error(nmf(xs, 6, method = "online", weights = 2 * (x >= 0)),
               class = "nmfkit_error_method")
  expect_error(nmf(xs, 6, method = "online", loss = "kl"),
               class = "nmfkit_error_method")
  expect_error(nmf(xs, 6, method = "online",
                   control = nmf_control(forget = 0)),
               class = "nmfkit_error")
})

test_that("online NMF: a matrix and its dgCMatrix copy give the same fit", {
  # the mini-batches' form (and so the passes' cost rule) follows the share
  # of nonzeros, never the storage: one case on each side of 25 %
  for (density in c(0.1, 0.6)) {
    set.seed(9)
    w <- matrix(runif(80 * 5), 80) * (runif(400) < density)
    x <- w %*% matrix(runif(5 * 1500), 5)
    x[] <- rpois(length(x), 3 * x)
    xs <- Matrix::Matrix(x, sparse = TRUE)
    ctrl <- nmf_control(max_iter = 8, tol = 0)
    set.seed(10)
    dense <- nmf(x, 5, method = "online", control = ctrl)
    set.seed(10)
    sparse <- nmf(xs, 5, method = "online", control = ctrl)
    expect_identical(sparse$iterations, dense$iterations)
    expect_identical(sparse$W, dense$W)
    expect_identical(sparse$H, dense$H)
    expect_identical(sparse$loss, dense$loss)
  }
})
