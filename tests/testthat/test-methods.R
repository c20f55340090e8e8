test_that("print and summary show one screen each", {
  set.seed(1)
  # some starts end in Swimmer's known local minimum (error 0.13): best of 3
  fit <- nmf(swimmer(), 17, nrun = 3)
  expect_identical(fit$status, "converged")
  expect_lt(tail(fit$loss, 1), 1e-3)
  expect_snapshot(print(fit), transform = scrub_numbers)
  expect_snapshot(summary(fit), transform = scrub_numbers)
  expect_invisible(print(fit))
  s <- summary(fit)
  expect_equal(sum(s$share), 1)
  # the trace's Gram-form loss loses digits at errors near 1e-6
  # (||X||^2 - 2 <WH, X> + ||WH||^2 cancels): compare absolutely
  expect_lt(abs(s$relative_error - tail(fit$loss, 1)), 1e-9)
})

test_that("coef, basis, fitted and residuals agree", {
  x <- small_data()
  set.seed(2)
  fit <- nmf(x, 3)
  expect_identical(coef(fit), fit$H)
  expect_identical(basis(fit), fit$W)
  expect_equal(fitted(fit), fit$W %*% fit$H, ignore_attr = TRUE)
  expect_identical(dimnames(fitted(fit)), dimnames(x))
  expect_equal(residuals(fit), x - fitted(fit))
  nodata <- nmf(x, 3, keep_data = FALSE)
  expect_null(nodata$data)
  expect_error(residuals(nodata), class = "nmfkit_error_data")
  expect_equal(residuals(nodata, x = x), x - fitted(nodata))
})

test_that("predict() on the training data reproduces coef() once converged", {
  p <- planted_nmf(40, 30, 4, seed = 3)
  x <- p$x + 0.01
  set.seed(3)
  fit <- nmf(x, 4, control = nmf_control(tol = 1e-10, max_iter = 5000))
  h <- predict(fit, x)
  expect_equal(h, fit$H, tolerance = 1e-5)
  expect_identical(predict(fit), fit$H)
  hs <- predict(fit, Matrix::Matrix(x, sparse = TRUE))
  expect_equal(hs, h, tolerance = 1e-12)
  expect_error(predict(fit, x[-1, ]), class = "nmfkit_error_dimension")
  expect_error(predict(fit, -x), class = "nmfkit_error_negative")
  expect_snapshot(predict(fit, x[-1, ]), error = TRUE)
})

test_that("predict() solves each column's NNLS problem (KKT)", {
  x <- small_data()
  set.seed(4)
  fit <- nmf(x, 3)
  newx <- small_data(seed = 99)
  h <- predict(fit, newx)
  g <- crossprod(fit$W) %*% h - crossprod(fit$W, newx)
  expect_true(all(h >= 0))
  expect_lt(max(abs(pmin(h, g))), 1e-8)
})

test_that("plot() draws every type and returns the model invisibly", {
  set.seed(5)
  fit <- nmf(swimmer(), 17)
  withr::local_pdf(NULL)
  for (type in c("basis", "coef", "loss")) {
    expect_invisible(plot(fit, type = type))
  }
  expect_invisible(plot(fit, type = "basis", image_dim = NULL))
  expect_invisible(plot(fit, components = c("nmf1", "nmf3")))
  expect_error(plot(fit, components = 40), class = "nmfkit_error_components")
  expect_error(plot(fit, image_dim = c(10, 10)),
               class = "nmfkit_error_image_dim")
  expect_error(plot(fit, type = "nope"), class = "nmfkit_error_choice")
})

test_that("nmf_distance() gives a dist between samples in coefficient space", {
  x <- small_data()
  set.seed(6)
  fit <- nmf(x, 3)
  d <- nmf_distance(fit)
  expect_s3_class(d, "dist")
  expect_identical(attr(d, "Labels"), colnames(x))
  expect_equal(as.matrix(d)[1, 2], sqrt(sum((fit$H[, 1] - fit$H[, 2])^2)))
  dc <- as.matrix(nmf_distance(fit, metric = "cosine"))
  expect_equal(unname(diag(dc)), rep(0, 20), tolerance = 1e-12)
  expect_true(all(dc >= 0 & dc <= 1 + 1e-12))
  expect_s3_class(stats::hclust(d), "hclust")
  expect_error(nmf_distance(1:3), class = "nmfkit_error_type")
})

test_that("the model object holds its invariants", {
  set.seed(7)
  fit <- nmf(small_data(), 3)
  expect_invisible(nmfkit:::validate_nmfkit(fit))
  expect_s3_class(fit, c("nmfkit_nmf", "nmfkit"), exact = TRUE)
  expect_identical(fit$rank, 3L)
  expect_true(fit$status %in% c("converged", "max_iter"))
})

# One small fit of every variant, with its data as the user gave it.
every_variant <- function(keep_data = TRUE) {
  set.seed(1)
  x <- swimmer()
  y <- x + matrix(stats::runif(length(x)), nrow(x)) * 0.2
  strata <- list(a = x[, 1:40] + 1, b = y[, 41:90])
  sim <- shifted_shapes(4)
  hist <- matrix(stats::runif(20 * 12), 20, 12) * 5
  list(
    nmf = list(fit = nmf(x, 4, keep_data = keep_data), x = x),
    joint = list(fit = nmf_joint(x, y, rank = 4, keep_data = keep_data),
                 x = cbind(x, y)),
    stratified = list(fit = nmf_stratified(strata, rank = 2,
                                           keep_data = keep_data),
                      x = strata),
    shift = list(fit = nmf_shift(sim$x, 2, nrun = 1,
                                 keep_data = keep_data),
                 x = sim$x),
    wasserstein = list(
      fit = suppressMessages(nmf_wasserstein(
        hist, 2, image_dim = c(4, 5),
        control = nmf_control(max_iter = 2, inner = 30), keep_data = keep_data)),
      x = hist)
  )
}

test_that("residuals() with and without x agree for every variant", {
  fits <- every_variant()
  for (v in names(fits)) {
    f <- fits[[v]]$fit
    r <- residuals(f)
    expect_equal(residuals(f, x = fits[[v]]$x), r, tolerance = 1e-12,
                 label = v)
    expect_equal(unname(r + fitted(f)), unname(as.matrix(f$data)),
                 tolerance = 1e-12,
                 label = v)
  }
  # Wasserstein NMF and joint NMF fit normalised columns: residuals are on
  # that scale, not 0.93 apart
  w <- fits$wasserstein
  expect_lt(max(abs(residuals(w$fit))), 1)
})

test_that("keep_data = FALSE works for every fitting function", {
  fits <- every_variant(keep_data = FALSE)
  kept <- every_variant()
  for (v in names(fits)) {
    f <- fits[[v]]$fit
    expect_null(f$data, label = v)
    expect_error(residuals(f), class = "nmfkit_error_data", label = v)
    expect_equal(residuals(f, x = fits[[v]]$x), residuals(kept[[v]]$fit),
                 tolerance = 1e-12, label = v)
    expect_s3_class(summary(f), "summary.nmfkit")
  }
})

test_that("predict() returns a coefficient matrix and plot() takes image_dim", {
  fits <- every_variant()
  pdf(NULL)
  on.exit(grDevices::dev.off())
  for (v in names(fits)) {
    f <- fits[[v]]$fit
    newdata <- if (v == "stratified") f$data[, 1:3] else
      as.matrix(fits[[v]]$x)[, 1:3]
    h <- if (v == "stratified") predict(f, newdata, strata = f$strata[1:3])
         else suppressMessages(predict(f, newdata))
    expect_true(is.matrix(h) && is.numeric(h), label = v)
    expect_identical(dim(h), c(f$rank, 3L), label = v)
    dims <- if (v == "shift") f$image_dim else if (v == "wasserstein")
      c(5L, 4L) else c(20L, 11L)
    expect_identical(plot(f, type = "basis", image_dim = dims), f, label = v)
  }
})

test_that("summary() gives the weighted error of masked fits and any scale", {
  set.seed(1)
  x <- matrix(runif(12 * 10), 12, 10)
  x[2, 3] <- NA
  x[5, 1] <- NA
  f <- nmf(x, 2, na = "omit")
  s <- summary(f)
  expect_equal(s$relative_error,
               sqrt(sum((x - fitted(f))^2, na.rm = TRUE) /
                      sum(x^2, na.rm = TRUE)), tolerance = 1e-8)
  f2 <- nmf(Matrix::Matrix(x, sparse = TRUE), 2, na = "omit")
  expect_equal(summary(f2)$relative_error, utils::tail(f2$loss, 1),
               tolerance = 1e-6)
  x[is.na(x)] <- 1
  w <- matrix(runif(120), 12)
  f3 <- nmf(x, 2, weights = w)
  expect_equal(summary(f3)$relative_error,
               sqrt(sum(w * (x - fitted(f3))^2) / sum(w * x^2)),
               tolerance = 1e-8)
  set.seed(1)
  g <- nmf(x, 2)
  for (c in c(1e300, 1e-300)) {
    set.seed(1)
    expect_equal(summary(nmf(x * c, 2))$relative_error,
                 summary(g)$relative_error, tolerance = 1e-10)
  }
})

test_that("predict() on huge data is exact or a classed overflow error", {
  set.seed(1)
  x <- matrix(runif(12 * 10), 12, 10)
  fit <- nmf(x, 2)
  h <- predict(fit, x)
  # 2^1000 * x: the coefficients are 2^1000 h, representable
  big <- predict(fit, x * 2^1000)
  expect_true(all(is.finite(big)))
  expect_equal(big / 2^1000, h, tolerance = 1e-10)
  small <- fit
  small$W <- fit$W / 4
  expect_equal(predict(small, x), 4 * h, tolerance = 1e-10)
  expect_error(predict(small, x * .Machine$double.xmax),
               class = "nmfkit_error_overflow")
  mfit <- nmf_manifold(x, rank = 2, method = "gnmf", k = 3,
                       control = nmf_control(max_iter = 5))
  hm <- predict(mfit, x)
  expect_equal(predict(mfit, x * 2^1000) / 2^1000, hm, tolerance = 1e-10)
  expect_equal(predict(mfit, x * 2^-1000) * 2^1000, hm, tolerance = 1e-10)
})

test_that("the data given to fitted methods are matched to the features by name", {
  x <- small_data(m = 12, n = 10)
  fit <- withr::with_seed(1, nmf(x, 2))
  rev_rows <- rev(seq_len(nrow(x)))
  expect_equal(residuals(fit, x = x[rev_rows, ]), residuals(fit))
  other <- x
  rownames(other)[1] <- "zz"
  expect_error(residuals(fit, x = other), class = "nmfkit_error_dimnames")
})
