# Rank selection: cross-validation of held-out entries and consensus.

test_that("cross-validation picks the planted rank at three noise levels", {
  p <- planted_nmf(60, 50, 4, seed = 11)
  for (noise in c(0.001, 0.01, 0.05)) {
    x <- p$x + withr::with_seed(12, matrix(abs(rnorm(length(p$x))), 60)) *
      noise * mean(p$x)
    set.seed(1)
    r <- suppressWarnings(
      nmf_rank(x, 2:7, nfolds = 3, fraction = 0.1, method = "cv",
               control = nmf_control(max_iter = 500, tol = 1e-6)),
      classes = "nmfkit_warning_convergence"
    )
    # the one-standard-error rank is the pick; the minimum may sit one rank
    # above it, within the folds' spread (exact ANLS, the dense default,
    # fits the noise a little at rank 5: held-out error 0.6 % lower)
    expect_identical(r$best[["one_se"]], 4L, label = paste("noise", noise))
    expect_true(r$best[["min"]] %in% 4:5, label = paste("noise", noise))
  }
})

test_that("folds are disjoint, in proportion for sparse data, cover rows", {
  x <- Matrix::rsparsematrix(80, 60, 0.2, rand.x = function(n) runif(n))
  set.seed(2)
  folds <- draw_folds(x, 0.1, 3)
  keys <- unlist(lapply(folds, function(f) (f$j - 1) * 80 + f$i))
  expect_false(anyDuplicated(keys) > 0)
  nz <- vapply(folds, function(f) sum(f$value != 0), numeric(1))
  expect_true(all(abs(nz - 0.1 * Matrix::nnzero(x)) <= 1))
  expect_true(all(vapply(folds, function(f) length(f$i) - sum(f$value != 0),
                         numeric(1)) >= 0.1 * (4800 - Matrix::nnzero(x)) - 1))
  expect_equal(unname(as.matrix(x)[cbind(folds[[1]]$i, folds[[1]]$j)]),
               folds[[1]]$value)
  # a tiny matrix: no fold leaves a row or column without observed entries
  tiny <- matrix(runif(6), 2, 3)
  set.seed(3)
  for (f in draw_folds(tiny, 0.5, 2)) {
    expect_true(all(tabulate(f$i, 2) < 3) && all(tabulate(f$j, 3) < 2))
  }
})

test_that("no row or column of a 5 % fold holds out more than 10 %", {
  # so the masked fits fill the held-out entries in (masked.hpp's
  # kFewMissing) instead of solving every line's own system
  set.seed(5)
  x <- matrix(runif(300 * 200), 300)
  capped <- 0
  for (s in 1:5) {
    for (f in draw_folds(x, 0.05, 3)) {
      expect_lte(max(tabulate(f$i, 300)), 20)
      expect_lte(max(tabulate(f$j, 200)), 30)
      capped <- capped + (length(f$i) < 3000)
      # a few entries released at most
      expect_gt(length(f$i), 2950)
    }
  }
  # drawn at random, some folds exceed it
  expect_gt(capped, 0)
})

test_that("cv works on sparse data and data with NA; methods run", {
  p <- planted_nmf(50, 40, 3, seed = 13)
  xs <- Matrix::Matrix(p$x, sparse = TRUE)
  set.seed(4)
  r <- nmf_rank(xs, 2:4, nfolds = 2)
  expect_s3_class(r, "nmfkit_rank")
  expect_identical(nrow(as.data.frame(r)), 6L)
  expect_named(summary(r), c("rank", "mean", "se"))
  expect_output(print(r), "one-standard-error rank")
  x <- p$x
  x[1:5] <- NA
  set.seed(5)
  r2 <- nmf_rank(x, 2:4, nfolds = 2)
  expect_true(all(is.finite(r2$results$error)))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(r))
})

test_that("consensus: stable clusters at the planted rank", {
  h <- kronecker(diag(3), matrix(1, 1, 10))  # 3 clusters of 10 samples
  w <- withr::with_seed(6, matrix(runif(40 * 3), 40))
  x <- w %*% (h + 0.05) + withr::with_seed(7, matrix(runif(40 * 30), 40)) * 0.01
  set.seed(6)
  r <- nmf_rank(x, 2:4, method = "consensus", nrun = 5)
  s <- summary(r)
  expect_named(s, c("rank", "cophenetic", "dispersion"))
  cm <- r$consensus[["3"]]
  expect_true(isSymmetric(cm))
  expect_true(all(diag(cm) == 1))
  expect_gt(s$cophenetic[s$rank == 3], 0.99)
  expect_gt(s$dispersion[s$rank == 3], 0.99)
  expect_true(all(s$dispersion >= 0 & s$dispersion <= 1))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(r))
  expect_invisible(plot(r, rank = 3))
  expect_output(print(r), "consensus")
})

test_that("sequential, multisession and batchtools give the same numbers", {
  skip_on_cran()
  skip_if_not_installed("future")
  x <- planted_nmf(30, 20, 3, seed = 14)$x
  run <- function(m = "cv") {
    set.seed(8)
    as.data.frame(nmf_rank(x, 2:3, method = m, nfolds = 2, nrun = 2,
                           control = nmf_control(max_iter = 30)))
  }
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  seq_cv <- run()
  seq_cons <- run("consensus")
  future::plan("multisession", workers = 2)
  expect_identical(run(), seq_cv)
  expect_identical(run("consensus"), seq_cons)
  skip_if_not_installed("future.batchtools")
  withr::local_dir(withr::local_tempdir())  # batchtools writes .future/ here
  future::plan(future.batchtools::batchtools_local)
  expect_identical(run(), seq_cv)
})

test_that("consensus runs stratified NMF; cv needs a fit that takes masks", {
  x <- withr::with_seed(9, matrix(runif(30 * 20), 30))
  s <- rep(c("a", "b"), each = 10)
  set.seed(9)
  r <- nmf_rank(x, 2:3, method = "consensus", variant = "stratified",
                strata = s, nrun = 2, control = nmf_control(max_iter = 10))
  expect_identical(r$results$rank, 2:3)
  expect_error(nmf_rank(x, 2:3, variant = "stratified", strata = s),
               class = "nmfkit_error_fit")
})

test_that("a wrapper taking ... chooses the fit's own method", {
  p <- planted_nmf(30, 25, 2, seed = 3)
  set.seed(1)
  r <- suppressWarnings(nmf_rank(p$x, 2:3, nfolds = 2, method = "cv",
    variant = function(...) nmf(..., method = "hals"),
    control = nmf_control(max_iter = 50)))
  expect_s3_class(r, "nmfkit_rank")
  expect_identical(sort(unique(r$results$rank)), 2:3)
})

# Planted sparse-ish data: rank 4, about a third of the entries nonzero.
planted_sparse <- function(m = 200, n = 150, k = 4, seed = 21) {
  withr::with_seed(seed, {
    w <- matrix(runif(m * k), m, k) * (runif(m * k) < 0.1)
    h <- matrix(runif(k * n), k, n) * (runif(k * n) < 0.1)
  })
  w[cbind(seq_len(m), rep_len(seq_len(k), m))] <- 1
  h[cbind(rep_len(seq_len(k), n), sample(n))] <- 1
  Matrix::Matrix(w %*% h, sparse = TRUE)
}

test_that("sparse folds sample zeros, weighted to stand for a fold in proportion", {
  x <- planted_sparse()
  n_zero <- length(x) - length(x@x)
  n_prop <- round(0.1 * n_zero)
  set.seed(22)
  folds <- draw_folds(x, 0.1, 3, zeros = 200)
  set.seed(22)
  expect_identical(draw_folds(x, 0.1, 3, zeros = 200), folds)
  keys <- unlist(lapply(folds, function(f) (f$j - 1) * nrow(x) + f$i))
  expect_false(anyDuplicated(keys) > 0)
  xd <- as.matrix(x)
  for (f in folds) {
    z <- f$value == 0
    expect_identical(sum(z), 200L)
    expect_true(all(xd[cbind(f$i, f$j)][z] == 0))
    expect_equal(f$weight, ifelse(z, n_prop / 200, 1))
    expect_identical(sum(!z), as.integer(round(0.1 * length(x@x))))
  }
  # by default: as many zeros as held-out stored entries, at least 10,000,
  # at most those of a fold in proportion (then weight 1)
  expect_identical(cv_zero_sample(500, 1e6), 10000)
  expect_identical(cv_zero_sample(25000, 5e6), 25000)
  expect_identical(cv_zero_sample(500, 2310), 2310)
  f <- draw_folds(x, 0.1, 3)[[1]]
  expect_true(all(f$weight == 1))
  expect_identical(sum(f$value == 0), as.integer(n_prop))
})

test_that("the weighted held-out error is unbiased for a fold in proportion", {
  # with the fit held fixed, the mean over random folds of the weighted
  # squared held-out error equals its exact expectation over folds that hold
  # out 10 % of the stored entries and 10 % of all zeros
  x <- planted_sparse()
  fit <- nmf(x, 2, control = nmf_control(max_iter = 50),
             keep_data = FALSE)
  p <- fit$W %*% fit$H
  xd <- as.matrix(x)
  stored <- xd != 0
  exact <- round(0.1 * sum(stored)) / sum(stored) * sum((xd - p)[stored]^2) +
    round(0.1 * sum(!stored)) * mean(p[!stored]^2)
  set.seed(23)
  est <- unlist(lapply(seq_len(200), function(r) {
    vapply(draw_folds(x, 0.1, 3, zeros = 100), function(f) {
      pred <- p[cbind(f$i, f$j)]
      sum(f$weight * (f$value - pred)^2)
    }, numeric(1))
  }))
  se <- stats::sd(est) / sqrt(length(est))
  expect_lt(abs(mean(est) - exact), 4 * se)
  expect_lt(abs(mean(est) / exact - 1), 0.02)
  # the zeros' share is large, so unweighted zeros would be far off
  zero_part <- round(0.1 * sum(!stored)) * mean(p[!stored]^2)
  expect_gt(zero_part / exact, 0.2)
})

test_that("sampled zeros give the errors and rank of all zeros in proportion", {
  x <- planted_sparse()
  x@x <- x@x * withr::with_seed(24, exp(rnorm(length(x@x), sd = 0.02)))
  args <- list(control = nmf_control(max_iter = 300, tol = 1e-6))
  set.seed(25)
  full <- suppressWarnings(rank_cv(x, 2:6, nmf, 0.1, 3, args))
  set.seed(25)
  sampled <- suppressWarnings(rank_cv(x, 2:6, nmf, 0.1, 3, args,
                                      zeros = 300))
  # ranks up to the planted one, whose fits do not depend on the start (a
  # fit above it may land in a poorer local minimum in either run); there
  # the zeros carry 20 % of the error, which unweighted zeros would miss
  a <- cv_summary(full$results)[1:3, ]
  b <- cv_summary(sampled$results)[1:3, ]
  expect_lt(max(abs(b$mean / a$mean - 1)), 0.05)
  expect_identical(full$best[["one_se"]], 4L)
  expect_identical(sampled$best[["one_se"]], 4L)
})

test_that("zeros of a huge sparse matrix are sampled without listing them", {
  # 1e10 entries: listing the zeros would need 80 GB
  x <- Matrix::sparseMatrix(i = 1:1000 * 97, j = 1:1000 * 89, x = 1,
                            dims = c(1e5, 1e5))
  set.seed(26)
  folds <- draw_folds(x, 0.05, 3)
  for (f in folds) {
    expect_identical(sum(f$value == 0), 10000L)
    expect_identical(sum(f$value != 0), 50L)
    expect_equal(unique(f$weight[f$value == 0]),
                 round(0.05 * (1e10 - 1000)) / 10000)
  }
  keys <- unlist(lapply(folds, function(f) (f$j - 1) * 1e5 + f$i))
  expect_false(anyDuplicated(keys) > 0)
})

test_that("held-out errors do not depend on the scale of the data", {
  set.seed(1)
  x <- matrix(runif(12 * 10), 12, 10)
  set.seed(1)
  r0 <- nmf_rank(x, 1:2, nfolds = 2, fraction = 0.1)
  for (c in c(1e300, 1e-300)) {
    set.seed(1)
    r <- nmf_rank(x * c, 1:2, nfolds = 2, fraction = 0.1)
    expect_true(all(is.finite(r$results$error)))
    expect_equal(r$results$error, r0$results$error, tolerance = 1e-8)
  }
})

test_that("a fit that returns no model or NaN factors is a classed error", {
  x <- matrix(runif(12 * 10), 12, 10)
  nan_fit <- function(x, rank, keep_data, ...) {
    list(W = matrix(NaN, nrow(x), rank), H = matrix(1, rank, ncol(x)))
  }
  expect_error(nmf_rank(x, 1:2, nfolds = 2, variant = nan_fit),
               class = "nmfkit_error_fit")
  expect_error(nmf_rank(x, 1:2, method = "consensus", nrun = 2,
                        variant = nan_fit), class = "nmfkit_error_fit")
  expect_error(nmf_rank(x, 1:2, variant = function(x, rank, mask, keep_data) 1),
               class = "nmfkit_error_fit")
  expect_error(nmf_rank(x, 1:2, fraction = 1e-10), class = "nmfkit_error_value")
  expect_error(nmf_rank(x, 1:2, mask = x > 0.5), class = "nmfkit_error_dots")
})
