# Equivariance: fitting c * x takes the same iterations and scales the
# factors as the model says; extreme scales and zero fits are handled.

scales <- 10^seq(-8, 8, by = 4)

test_that("nmf() is scale-equivariant for every method and start", {
  x <- small_data(m = 40, n = 30)
  for (method in c("hals", "mu", "anls")) {
    for (init in c("nndsvda", "nndsvdar", "random")) {
      set.seed(5)
      ref <- nmf(x, 6, method = method, init = init,
                 control = nmf_control(max_iter = 300))
      for (c in scales) {
        set.seed(5)
        fit <- nmf(c * x, 6, method = method, init = init,
                   control = nmf_control(max_iter = 300))
        lab <- sprintf("%s/%s, c = %g", method, init, c)
        expect_identical(fit$iterations, ref$iterations, label = lab)
        expect_identical(fit$status, ref$status, label = lab)
        expect_equal(fit$W / sqrt(c), ref$W, tolerance = 1e-6, label = lab)
        expect_equal(fit$H / sqrt(c), ref$H, tolerance = 1e-6, label = lab)
        expect_equal(fit$loss, ref$loss, tolerance = 1e-8, label = lab)
      }
    }
  }
})

test_that("the default start does not stop early on large counts", {
  # NNDSVDa used to fill zeros with mean(x): Poisson counts with mean 50
  # stopped after 4 iterations, the same data divided by 50 ran on
  set.seed(9)
  counts <- matrix(stats::rpois(60 * 40, 50), 60, 40) *
    (matrix(stats::runif(60 * 40), 60, 40) > 0.3)
  set.seed(1)
  big <- nmf(counts, 6)
  set.seed(1)
  small <- nmf(counts / 50, 6)
  expect_identical(big$iterations, small$iterations)
  expect_gt(big$iterations, 10L)
  expect_equal(big$W / sqrt(50), small$W, tolerance = 1e-6)
  expect_equal(tail(big$loss, 1), tail(small$loss, 1), tolerance = 1e-8)
})

test_that("nmf() fits data near 1e-200 and near double.xmax", {
  x <- small_data()
  set.seed(2)
  ref <- nmf(x, 3)
  for (c in c(1e-200, 1e-300, .Machine$double.xmax / 2)) {
    set.seed(2)
    fit <- expect_no_warning(nmf(x * c, 3))
    expect_identical(fit$status, ref$status)
    expect_identical(fit$iterations, ref$iterations)
    expect_equal(fit$loss, ref$loss, tolerance = 1e-6)
    expect_equal(fit$W * fit$H[, 1] / c, ref$W * ref$H[, 1],
                 tolerance = 1e-6)
  }
})

test_that("subnormal data are fitted like unit-scale data", {
  x <- matrix(c(3, 1, 2, 5, 4, 1, 2, 2, 6), 3) * 1e-320  # subnormal
  ref <- nmf(matrix(c(3, 1, 2, 5, 4, 1, 2, 2, 6), 3), 1)
  fit <- expect_no_warning(nmf(x, 1))
  expect_true(fit$status %in% c("converged", "max_iter"))
  expect_true(all(fit$W > 0) && all(is.finite(fit$H)))
  # subnormals carry few digits: the data (and fit) are rounded versions
  expect_equal(tail(fit$loss, 1), tail(ref$loss, 1), tolerance = 1e-3)
})

test_that("predict() is finite and equivariant near double.xmax", {
  x <- small_data()
  ctl <- nmf_control(tol = 0, max_iter = 2000)
  set.seed(1)
  fit <- nmf(x, 3, control = ctl)
  c <- 2^1020  # max(x) < 1: entries up to 1.1e307
  h <- expect_no_warning(predict(fit, x * c))
  expect_true(all(is.finite(h)))
  expect_equal(h / c, predict(fit, x), tolerance = 1e-8)
  set.seed(1)
  big <- nmf(x * c, 3, control = ctl)
  expect_equal(big$W / sqrt(c), fit$W, tolerance = 1e-6)
  h <- predict(big, x * c)
  expect_true(all(is.finite(h)))
  expect_equal(h / sqrt(c), predict(fit, x), tolerance = 1e-6)
})

test_that("a zero fit is 'degenerate' with a classed warning, not converged", {
  x <- small_data()
  zero <- list(W = matrix(0, nrow(x), 2), H = matrix(0, 2, ncol(x)))
  expect_warning(fit <- nmf(x, 2, init = zero),
                 class = "nmfkit_warning_degenerate")
  expect_identical(fit$status, "degenerate")
  expect_output(print(fit), "degenerate")
  expect_output(print(summary(fit)), "degenerate")
  # nmf_stratified()'s multiplicative updates never leave W H = 0: such a
  # start is refused up front
  set.seed(1)
  expect_error(nmf_stratified(list(a = x[, 1:10], b = x[, 11:20]),
                              rank = 2, v_updates = 0,
                              init = list(W = zero$W, H = zero$H,
                                          V = matrix(0, nrow(x), 2))),
               class = "nmfkit_error_init")
})

test_that("nmf_stratified() is scale-equivariant", {
  # noisy, so that the loss stops on the tolerance, not on rounding noise
  # at an exact fit
  set.seed(1)
  x <- lapply(stratified_small(zeros = 0), function(m) {
    m + matrix(stats::runif(length(m)), nrow(m)) * 0.3
  })
  ctl <- nmf_control(max_iter = 2000, tol = 1e-5)
  set.seed(4)
  ref <- nmf_stratified(x, rank = 2, control = ctl)
  expect_identical(ref$status, "converged")
  for (c in scales) {
    set.seed(4)
    fit <- nmf_stratified(lapply(x, `*`, c), rank = 2, control = ctl)
    lab <- sprintf("c = %g", c)
    expect_identical(fit$iterations, ref$iterations, label = lab)
    expect_equal(fit$W / sqrt(c), ref$W, tolerance = 1e-6, label = lab)
    expect_equal(fit$H / sqrt(c), ref$H, tolerance = 1e-6, label = lab)
    expect_equal(fit$V / c, ref$V, tolerance = 1e-6, label = lab)
    expect_equal(fit$loss / c, ref$loss, tolerance = 1e-8, label = lab)
    expect_equal(fit$normalized_loss, ref$normalized_loss, tolerance = 1e-8)
    xs <- lapply(x, `*`, c)
    expect_equal(predict(fit, xs["b"]) / sqrt(c), predict(ref, x["b"]),
                 tolerance = 1e-6, label = lab)
  }
})

test_that("nmf_joint() is scale-free, with or without normalising", {
  x <- swimmer()
  set.seed(1)
  y <- x + matrix(stats::runif(length(x)), nrow(x)) * 0.2
  ref <- nmf_joint(x, y, rank = 6)
  raw <- nmf_joint(x, y, rank = 6, normalize = FALSE)
  for (c in scales) {
    fit <- nmf_joint(c * x, c * y, rank = 6)
    lab <- sprintf("c = %g", c)
    expect_identical(fit$iterations, ref$iterations, label = lab)
    expect_equal(fit$p, ref$p, tolerance = 1e-6, label = lab)
    fit <- nmf_joint(c * x, c * y, rank = 6, normalize = FALSE)
    expect_identical(fit$iterations, raw$iterations, label = lab)
    expect_equal(fit$p, raw$p, tolerance = 1e-6, label = lab)
    expect_equal(fit$W / sqrt(c), raw$W, tolerance = 1e-6, label = lab)
  }
})

test_that("nmf_shift() is scale-equivariant (unit atoms, c times H)", {
  set.seed(3)
  sim <- shifted_shapes(6)
  set.seed(7)
  ref <- nmf_shift(sim$x, rank = 2, restarts = 1)
  for (c in scales) {
    set.seed(7)
    fit <- nmf_shift(sim$x * c, rank = 2, restarts = 1)
    lab <- sprintf("c = %g", c)
    expect_identical(fit$iterations, ref$iterations, label = lab)
    expect_identical(fit$g, ref$g, label = lab)
    expect_equal(fit$W, ref$W, tolerance = 1e-6, label = lab)
    expect_equal(fit$H / c, ref$H, tolerance = 1e-6, label = lab)
    expect_equal(fit$loss, ref$loss, tolerance = 1e-8, label = lab)
  }
})

test_that("nmf_wasserstein() ignores the scale of each histogram", {
  withr::with_seed(3, d <- wasserstein_gm_data(n = 20L, bins = 20L))
  ctl <- nmf_control(max_iter = 40)
  set.seed(1)
  ref <- suppressMessages(nmf_wasserstein(d$x, 2, coords = d$t, outer = 2,
                                          control = ctl))
  for (c in scales) {
    w <- c * 10^seq(-2, 2, length.out = ncol(d$x))
    set.seed(1)
    fit <- suppressMessages(nmf_wasserstein(sweep(d$x, 2, w, "*"), 2,
                                            coords = d$t, outer = 2,
                                            control = ctl))
    expect_identical(fit$iterations, ref$iterations)
    # L-BFGS stops at a gradient tolerance: agreement to its accuracy
    expect_equal(fit$W, ref$W, tolerance = 1e-5)
    expect_equal(fit$H, ref$H, tolerance = 1e-5)
  }
})

test_that("histograms near double.xmax or subnormal normalise and fit", {
  withr::with_seed(3, d <- wasserstein_gm_data(n = 12L, bins = 15L))
  ctl <- nmf_control(max_iter = 30)
  set.seed(1)
  ref <- suppressMessages(nmf_wasserstein(d$x, 2, coords = d$t, outer = 2,
                                          control = ctl))
  # largest entry xmax / 2: the column sums overflow; and subnormal
  # (subnormals keep about 8 digits: a looser tolerance there)
  for (top in c(.Machine$double.xmax / 2, 1e-315)) {
    xc <- d$x / max(d$x) * top
    set.seed(1)
    fit <- suppressMessages(nmf_wasserstein(xc, 2, coords = d$t,
                                            outer = 2, control = ctl))
    expect_equal(fit$W, ref$W, tolerance = if (top > 1) 1e-5 else 1e-2)
    h <- suppressMessages(predict(fit, xc[, 1:3]))
    expect_true(all(is.finite(h)))
    expect_equal(residuals(fit, x = xc), residuals(fit), tolerance = 1e-10)
  }
  expect_equal(suppressMessages(ot_distance(d$x[, 1] * 1e308, d$x[, 2],
                                            coords = d$t)),
               suppressMessages(ot_distance(d$x[, 1], d$x[, 2],
                                            coords = d$t)))
})
