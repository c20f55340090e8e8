test_that("a planted factorisation is recovered up to permutation and scale", {
  p <- planted_nmf()
  set.seed(1)
  fit <- nmf(p$x, 5, control = nmf_control(tol = 0, max_iter = 3000))
  expect_lt(tail(fit$loss, 1), 1e-6)
  expect_true(all(best_cosine(p$W0, fit$W) > 1 - 1e-6))
  expect_true(all(fit$W >= 0) && all(fit$H >= 0))
})

test_that("the relative error never increases, for HALS, MU and ANLS", {
  x <- small_data()
  for (method in c("hals", "mu", "anls")) {
    set.seed(3)
    fit <- nmf(x, 4, method = method, control = nmf_control(tol = 0, max_iter = 150))
    expect_true(all(diff(fit$loss) <= 1e-10), label = method)
    expect_equal(fit$iterations, 150L)
  }
})

test_that("the loss trace is the relative error of the factors", {
  x <- small_data()
  set.seed(4)
  fit <- nmf(x, 3)
  direct <- norm(x - fit$W %*% fit$H, "F") / norm(x, "F")
  expect_equal(tail(fit$loss, 1), direct, tolerance = 1e-10)
})

test_that("KKT conditions hold at convergence", {
  x <- small_data(5, 40, 30)
  for (a in list(list("hals", 10L), list("anls", NULL))) {
    set.seed(5)
    fit <- nmf(x, 4, method = a[[1]],
               control = nmf_control(tol = 1e-6, max_iter = 5000, inner = a[[2]]))
    expect_identical(fit$status, "converged")
    W <- fit$W
    H <- fit$H
    gW <- W %*% tcrossprod(H) - tcrossprod(x, H)
    gH <- crossprod(W) %*% H - crossprod(W, x)
    expect_lt(max(abs(pmin(W, gW))), 1e-3 * max(abs(gW)))
    expect_lt(max(abs(pmin(H, gH))), 1e-3 * max(abs(gH)))
  }
})

test_that("dense and sparse inputs give the same fit from the same start", {
  x <- small_data(6, 50, 40)
  x[x < 0.6] <- 0
  x[4, ] <- 0
  x[, 7] <- 0
  xs <- Matrix::Matrix(x, sparse = TRUE)
  # method "auto" runs ANLS on dense and HALS on sparse data: compare each
  for (method in c("hals", "anls")) for (init in c("nndsvda", "random")) {
    set.seed(7)
    a <- nmf(x, 4, method = method, init = init)
    set.seed(7)
    b <- nmf(xs, 4, method = method, init = init)
    expect_equal(a$W, b$W, tolerance = 1e-10)
    expect_equal(a$H, b$H, tolerance = 1e-10)
  }
  expect_true(all(a$W[4, ] == 0))
  expect_true(all(a$H[, 7] == 0))
})

test_that("sparse input stays sparse in the model", {
  xs <- Matrix::rsparsematrix(200, 100, 0.05, rand.x = function(n) runif(n))
  set.seed(8)
  fit <- nmf(xs, 3)
  expect_s4_class(fit$data, "dgCMatrix")
  expect_true(is.finite(summary(fit)$relative_error))
})

test_that("set.seed() reproduces a fit and threads do not change it", {
  x <- small_data(9, 60, 45)
  for (init in c("nndsvda", "nndsvdar", "random")) {
    set.seed(10)
    a <- nmf(x, 5, init = init)
    set.seed(10)
    b <- nmf(x, 5, init = init)
    set.seed(10)
    c2 <- nmf(x, 5, init = init, control = nmf_control(threads = 2))
    expect_identical(a$W, b$W)
    expect_identical(a$W, c2$W)
    expect_identical(a$H, c2$H)
  }
})

test_that("the AVX2 product kernels and Eigen's products give the same fits", {
  # the kernels run where the processor has AVX2 and FMA; elsewhere both
  # fits below use Eigen's products and the test compares a fit with itself
  # the state the session had (NMFKIT_SIMD=generic keeps them off)
  was <- nmfkit:::r_simd_enabled()
  withr::defer(nmfkit:::r_set_simd(was))
  x <- small_data(13, 83, 61)
  sw <- swimmer()
  fits <- lapply(c(FALSE, TRUE), function(on) {
    nmfkit:::r_set_simd(on)
    set.seed(14)
    ctl <- nmf_control(tol = 0, max_iter = 40)
    list(h = nmf(x, 7, method = "hals", control = ctl),
         a = nmf(x, 7, method = "anls", control = ctl),
         j = nmf_joint(sw, sw[, 256:1]))
  })
  for (m in c("h", "a")) {
    expect_equal(fits[[1]][[m]]$W, fits[[2]][[m]]$W, tolerance = 1e-9)
    expect_equal(fits[[1]][[m]]$H, fits[[2]][[m]]$H, tolerance = 1e-9)
  }
  # a permuted copy is at distance exactly 0 on both paths
  expect_identical(fits[[1]]$j$distance, 0)
  expect_identical(fits[[2]]$j$distance, 0)
})

test_that("the package never touches the caller's seed itself", {
  x <- small_data()
  set.seed(11)
  before <- .Random.seed
  nmf(x, 2, init = list(W = matrix(1, 30, 2), H = matrix(1, 2, 20)))
  expect_identical(.Random.seed, before)
})

test_that("every init works and user starting factors are used", {
  x <- small_data()
  for (init in c("nndsvd", "nndsvda", "nndsvdar", "random")) {
    set.seed(12)
    fit <- nmf(x, 3, init = init)
    expect_s3_class(fit, "nmfkit_nmf")
  }
  start <- list(W = matrix(0.5, 30, 3), H = matrix(0.5, 3, 20))
  one <- nmf(x, 3, init = start, control = nmf_control(max_iter = 1))
  expect_equal(one$iterations, 1L)
})

test_that("nrun keeps the best of several fits, reproducibly", {
  x <- small_data()
  set.seed(13)
  a <- nmf(x, 3, nrun = 3)
  set.seed(13)
  b <- nmf(x, 3, nrun = 3)
  expect_identical(a$W, b$W)
  set.seed(13)
  single <- nmf(x, 3)
  expect_lte(tail(a$loss, 1), tail(single$loss, 1))
})

test_that("dimnames flow to W and H; components are named", {
  x <- small_data()
  set.seed(14)
  fit <- nmf(x, 3)
  expect_identical(rownames(fit$W), rownames(x))
  expect_identical(colnames(fit$H), colnames(x))
  expect_identical(colnames(fit$W), c("nmf1", "nmf2", "nmf3"))
  expect_identical(rownames(fit$H), c("nmf1", "nmf2", "nmf3"))
})

test_that("integer matrices and numeric data frames are accepted", {
  x <- matrix(rpois(200, 3), 20, 10)
  set.seed(15)
  a <- nmf(x, 2)
  set.seed(15)
  b <- nmf(as.data.frame(x), 2)
  expect_equal(a$W, b$W, ignore_attr = TRUE)
})

test_that("all-zero rows and columns stay zero and cause no NaN", {
  x <- small_data()
  x[c(2, 9), ] <- 0
  x[, 3] <- 0
  dimnames(x) <- list(paste0("f", seq_len(nrow(x))),
                      paste0("s", seq_len(ncol(x))))
  for (method in c("auto", "hals", "mu", "anls")) {
    set.seed(16)
    fit <- nmf(x, 3, method = method)
    expect_true(all(is.finite(fit$W)) && all(is.finite(fit$H)))
    expect_true(all(fit$W[c(2, 9), ] == 0))
    expect_true(all(fit$H[, 3] == 0))
    expect_identical(dimnames(fit$W)[[1]], rownames(x))
    expect_identical(dimnames(fit$H)[[2]], colnames(x))
    # the zero lines are left out of the fit: the same as fitting without
    set.seed(16)
    inner <- nmf(x[-c(2, 9), -3], 3, method = method)
    expect_identical(unname(fit$W[-c(2, 9), ]), unname(inner$W))
    expect_identical(fit$loss, inner$loss)
  }
  xs <- Matrix::Matrix(x, sparse = TRUE)
  set.seed(16)
  fit <- nmf(xs, 3)
  expect_true(all(fit$W[c(2, 9), ] == 0) && all(fit$H[, 3] == 0))
  # explicitly stored zeros do not make a line nonzero: the same fit
  xz <- xs
  xz[2, 5] <- 1
  xz@x[xz@x == 1] <- 0
  expect_true(any(xz@i == 1L))  # row 2 holds a stored zero
  set.seed(16)
  fit_z <- nmf(xz, 3)
  expect_identical(fit_z$W, fit$W)
  expect_identical(fit_z$loss, fit$loss)
})

test_that("method = 'auto' runs ANLS on dense data in either storage", {
  # the solver follows the share of nonzeros, not the class (test-sparse.R
  # has the sparse side: HALS below 25 % in both storages)
  x <- small_data()
  set.seed(30)
  expect_identical(nmf(x, 3)$method, "anls")
  set.seed(30)
  expect_identical(nmf(Matrix::Matrix(x, sparse = TRUE), 3)$method, "anls")
})

test_that("the default reaches 1e-6 on a planted exact rank-5 problem", {
  set.seed(31)
  x <- matrix(runif(200 * 5), 200) %*% matrix(runif(5 * 120), 5)
  # (bench/nmf.R times it; tol = 1e-12 may not be reached)
  fit <- withCallingHandlers(
    nmf(x, 5, control = nmf_control(tol = 1e-12, max_iter = 5000)),
    nmfkit_warning_convergence = function(w) invokeRestart("muffleWarning")
  )
  expect_identical(fit$method, "anls")
  expect_lt(tail(fit$loss, 1), 1e-6)
})

test_that("extrapolation keeps the loss monotone and threads irrelevant", {
  x <- small_data(32, 50, 40)
  for (method in c("hals", "anls", "mu")) {
    ctl <- nmf_control(tol = 0, max_iter = 60, extrapolate = TRUE)
    set.seed(32)
    a <- nmf(x, 4, method = method, control = ctl)
    ctl$threads <- 2L
    set.seed(32)
    b <- nmf(x, 4, method = method, control = ctl)
    expect_true(all(diff(a$loss) <= 1e-10), label = method)
    expect_identical(a$W, b$W)
    direct <- norm(x - a$W %*% a$H, "F") / norm(x, "F")
    expect_equal(tail(a$loss, 1), direct, tolerance = 1e-10)
  }
})

test_that("a rank-one matrix and rank = min(dim) work", {
  x <- outer(1:6, 1:4)
  set.seed(16)
  fit <- nmf(x, 1)
  expect_identical(fit$status, "converged")
  # the fit is exact; the traced loss comes from Gram matrices, whose
  # cancellation leaves up to about sqrt(.Machine$double.eps) (1.8e-8 from
  # some starts), so the exactness is checked on the residual itself
  expect_lt(norm(x - fit$W %*% fit$H, "F") / norm(x, "F"), 1e-12)
  expect_lt(tail(fit$loss, 1), 1e-7)
  set.seed(17)
  full <- nmf(small_data(m = 8, n = 5), 5)
  expect_equal(dim(full$W), c(8, 5))
})

test_that("a tolerance the fit cannot reach gives a classed warning", {
  x <- small_data()
  set.seed(18)
  expect_warning(
    nmf(x, 3, control = nmf_control(tol = 1e-12, max_iter = 3)),
    class = "nmfkit_warning_convergence"
  )
  set.seed(18)
  expect_no_warning(nmf(x, 3, control = nmf_control(max_iter = 3)))
})

test_that("verbose reports progress as messages", {
  x <- small_data()
  set.seed(19)
  expect_message(nmf(x, 2, control = nmf_control(verbose = TRUE, max_iter = 5)),
                 "iteration")
})

test_that("accelerated HALS and ANLS reach a planted optimum faster than HALS", {
  p <- planted_nmf(80, 60, 5, seed = 20)
  runs <- lapply(list(list("hals", NULL), list("hals", 10L), list("anls", NULL)),
    function(a) {
      set.seed(20)
      nmf(p$x, 5, method = a[[1]],
          control = nmf_control(tol = 0, max_iter = 30, inner = a[[2]]))
    })
  final <- vapply(runs, function(f) tail(f$loss, 1), numeric(1))
  expect_lt(final[2], final[1])
  expect_lt(final[3], final[1])
  # near an exact fit the Gram-form loss carries rounding noise of ~1e-9
  for (f in runs) expect_true(all(diff(f$loss) <= 1e-8))
})

test_that("ANLS and accelerated HALS keep dense == sparse and 1 == 2 threads", {
  x <- small_data(21, 50, 40)
  x[x < 0.5] <- 0
  xs <- Matrix::Matrix(x, sparse = TRUE)
  for (a in list(list("anls", NULL), list("hals", 4L))) {
    ctl1 <- nmf_control(inner = a[[2]])
    ctl2 <- nmf_control(inner = a[[2]], threads = 2)
    set.seed(22)
    d1 <- nmf(x, 4, method = a[[1]], control = ctl1)
    set.seed(22)
    d2 <- nmf(x, 4, method = a[[1]], control = ctl2)
    set.seed(22)
    s1 <- nmf(xs, 4, method = a[[1]], control = ctl1)
    expect_identical(d1$W, d2$W)
    expect_equal(d1$W, s1$W, tolerance = 1e-10)
  }
})
