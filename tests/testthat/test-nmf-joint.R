test_that("P2-P4: identical, permuted and rescaled copies give distance 0", {
  x <- swimmer()
  set.seed(11)
  copies <- list(same = x, permuted = x[, sample(ncol(x))],
                 scaled_0.1 = 0.1 * x, scaled_10 = 10 * x,
                 scaled_100 = 100 * x)
  for (nm in names(copies)) {
    fit <- nmf_joint(x, copies[[nm]], rank = 10)
    expect_lte(fit$distance, 1e-12)
    expect_lte(max(abs(fit$p)), 1e-12)
  }
  # the deterministic start and HALS make these exact, as in the paper
  expect_identical(nmf_joint(x, x[, ncol(x):1], rank = 10)$distance, 0)
  # a generic scale on generic data: zero up to rounding
  set.seed(12)
  y <- matrix(runif(40 * 30), 40, 30)
  expect_lt(nmf_joint(y, 3.7 * y[, sample(30)], rank = 4)$distance, 1e-12)
})

test_that("P1: swapping the sets keeps d and flips the sign of p-bar", {
  x <- swimmer()
  set.seed(1)
  noisy <- x + swimmer_noise(x)
  a <- nmf_joint(x, noisy, rank = 10)
  b <- nmf_joint(noisy, x, rank = 10)
  expect_equal(a$distance, b$distance, tolerance = 1e-6)
  expect_equal(sort(a$p), sort(-b$p), tolerance = 1e-6)
  # the component used only by the noisy set is the large negative one
  expect_lt(min(a$p), -0.8)
  expect_equal(a$distance, sum(abs(a$p)))
})

test_that("P5: large subsets are close, and closer as they grow", {
  x <- swimmer()
  set.seed(3)
  d <- vapply(c(26, 128), function(drop) {
    mean(replicate(3, nmf_joint(x, x[, -sample(256, drop)], rank = 10)$distance))
  }, numeric(1))
  expect_gt(d[1], 0)
  expect_lt(d[1], 0.1)
  expect_gt(d[2], d[1])
})

test_that("P6: the distance grows with the noise level and is 0 without", {
  x <- swimmer()
  set.seed(4)
  n <- swimmer_noise(x)
  d <- vapply(c(0, 0.1, 0.3, 0.9), function(eps) {
    nmf_joint(x, x + eps * n, rank = 10)$distance
  }, numeric(1))
  expect_identical(d[1], 0)
  expect_true(all(diff(d) > 0))
})

test_that("Table I (5 trials) is within the tolerances of the paper's values", {
  x <- swimmer()
  set.seed(2023)
  res <- replicate(5, {
    n <- swimmer_noise(x)
    sub <- x[, -sample(256, 26)]
    c(sub = nmf_joint(x, sub, rank = 10)$distance,
      noisy = nmf_joint(x, x + n, rank = 10)$distance,
      noise = nmf_joint(x, n, rank = 10)$distance,
      cham_sub = chamfer_distance(x, sub, "reference_code"),
      cham_noisy = chamfer_distance(x, x + n, "reference_code"),
      cham_noise = chamfer_distance(x, n, "reference_code"))
  })
  m <- rowMeans(res)
  expect_true(m[["sub"]] >= 0.03 && m[["sub"]] <= 0.08)
  expect_true(m[["noisy"]] >= 1.45 && m[["noisy"]] <= 1.56)
  expect_true(m[["noise"]] >= 2.15 && m[["noise"]] <= 2.45)
  expect_identical(m[["cham_sub"]], 0) # Swimmer rows hold only 2 values
  expect_equal(m[["cham_noisy"]], 0.741, tolerance = 0.01 / 0.741)
  expect_equal(m[["cham_noise"]], 1.56, tolerance = 0.01 / 1.56)
})

test_that("exact p-bar equals brute-force integration over breakpoints", {
  x <- swimmer()
  set.seed(5)
  fit <- nmf_joint(x[, 1:100], x[, 101:256] + swimmer_noise(x)[, 101:256], rank = 10)
  expect_equal(unname(fit$p), unname(pbar_breakpoints(fit$H, 100)),
               tolerance = 1e-12)
  # and the closed form itself
  h <- fit$H
  s <- apply(h, 1, max)
  closed <- (rowMeans(h[, 1:100]) - rowMeans(h[, -(1:100)])) / s
  expect_equal(unname(fit$p), unname(closed), tolerance = 1e-12)
  expect_true(all(fit$pbar_se == 0))
})

test_that("Monte Carlo p-bar is within its standard error of the exact one", {
  x <- swimmer()
  set.seed(6)
  noisy <- x + swimmer_noise(x)
  set.seed(7)
  exact <- nmf_joint(x, noisy, rank = 10)
  set.seed(7)
  mc <- nmf_joint(x, noisy, rank = 10, pbar = "montecarlo", samples = 1000)
  expect_identical(mc$H, exact$H) # same factorisation, only p-bar differs
  expect_true(all(mc$pbar_se > 0 & mc$pbar_se < 0.032))
  expect_true(all(abs(mc$p - exact$p) <= 4 * mc$pbar_se))
  expect_lt(abs(mc$distance - exact$distance), 0.05)
  # and converges: 100 times the draws, a tenth of the error bound
  set.seed(7)
  big <- nmf_joint(x, noisy, rank = 10, pbar = "montecarlo", samples = 1e5)
  expect_true(all(abs(big$p - exact$p) <= 4 * big$pbar_se))
  expect_true(all(big$pbar_se < mc$pbar_se / 5))
})

test_that("Chamfer variants match hand-computed values", {
  x <- matrix(c(0, 0, 1, 1), 2) # points (0, 0) and (1, 1)
  y <- matrix(c(1, 0), 2)       # point (1, 0)
  # columns: each x is at squared distance 1 from y; y is at 1 from both
  expect_equal(chamfer_distance(x, y, "paper", normalize = FALSE), 2)
  # rows: row 1 {0, 1} vs {1}: 1 + 0, back 0; row 2 {0, 1} vs {0}: 0 + 1,
  # back 0; mean over 2 rows = 1
  expect_equal(chamfer_distance(x, y, "reference_code", normalize = FALSE), 1)
  x <- matrix(c(0, 1), 1)
  y <- matrix(c(0.5, 2, 0.9), 1)
  expect_equal(chamfer_distance(x, y, "reference_code", normalize = FALSE),
               0.25 + 0.01 + 0.25 + 1 + 0.01)
  # normalisation: unit columns, the tiny column zeroed
  x <- cbind(c(3, 4), c(0, 2), c(0.001, 0))
  y <- cbind(c(0, 5))
  xn <- cbind(c(0.6, 0.8), c(0, 1), c(0, 0))
  expect_equal(chamfer_distance(x, y), chamfer_columns_direct(xn, cbind(c(0, 1))))
  set.seed(8)
  a <- matrix(runif(60), 6)
  b <- matrix(runif(42), 6)
  expect_equal(chamfer_distance(a, b, "reference_code", normalize = FALSE),
               chamfer_rows_direct(a, b), tolerance = 1e-12)
  expect_equal(chamfer_distance(a, b, normalize = FALSE),
               chamfer_columns_direct(a, b), tolerance = 1e-12)
  expect_identical(chamfer_distance(a, a[, 10:1]), 0)
})

test_that("Chamfer on Swimmer reproduces the reference code's values", {
  x <- swimmer()
  set.seed(9)
  n <- swimmer_noise(x)
  expect_equal(chamfer_distance(x, x + n, "paper"), 1.261, tolerance = 0.02)
  expect_equal(chamfer_distance(x, n, "paper"), 2.534, tolerance = 0.02)
  expect_equal(chamfer_distance(x, 1 - x, "reference_code"), 3.580,
               tolerance = 1e-3)
  expect_equal(chamfer_distance(x, 1 - x, "paper"), 3.324, tolerance = 1e-3)
  set.seed(10)
  expect_equal(chamfer_distance(x, x[, -sample(256, 26)], "paper"), 0.0234,
               tolerance = 0.2)
})

test_that("sparse input gives the dense answer", {
  x <- swimmer()
  set.seed(13)
  y <- x[, 1:150]
  xs <- Matrix::Matrix(x, sparse = TRUE)
  ys <- Matrix::Matrix(y, sparse = TRUE)
  set.seed(1)
  d_dense <- nmf_joint(x, y, rank = 6)
  set.seed(1)
  d_sparse <- nmf_joint(xs, ys, rank = 6)
  expect_equal(d_sparse$p, d_dense$p, tolerance = 1e-8)
  expect_equal(chamfer_distance(xs, ys), chamfer_distance(x, y))
})

test_that("1 and 2 threads give identical fits", {
  x <- swimmer()
  set.seed(14)
  n <- swimmer_noise(x)
  set.seed(1)
  a <- nmf_joint(x, x + n, rank = 10, control = nmf_control(threads = 1))
  set.seed(1)
  b <- nmf_joint(x, x + n, rank = 10, control = nmf_control(threads = 2))
  expect_identical(a$p, b$p)
  expect_identical(a$W, b$W)
})

test_that("the model object has set, p, distance and works with methods", {
  x <- swimmer()
  set.seed(15)
  fit <- nmf_joint(x, 1 - x, rank = 10, labels = c("swimmer", "inverted"))
  validate_nmfkit <- getFromNamespace("validate_nmfkit", "nmfkit")
  expect_silent(validate_nmfkit(fit))
  expect_s3_class(fit, c("nmfkit_joint", "nmfkit"))
  expect_equal(levels(fit$set), c("swimmer", "inverted"))
  expect_equal(as.vector(table(fit$set)), c(256, 256))
  expect_named(fit$p, paste0("nmf", 1:10))
  # Figure 6: two components used almost only by one set each
  expect_gt(sum(abs(fit$p) > 0.8), 1)
  h <- predict(fit, x[, 1:4])
  expect_equal(unname(h), unname(fit$H[, 1:4]), tolerance = 1e-3)
  s <- summary(fit)
  expect_s3_class(s, "summary.nmfkit_joint")
  expect_equal(nrow(s$components), 10)
  expect_equal(s$components$share_swimmer + s$components$share_inverted,
               rep(1, 10))
  pdf(NULL)
  on.exit(grDevices::dev.off())
  for (type in c("p", "basis", "coef", "loss")) {
    expect_identical(plot(fit, type = type), fit)
  }
})

test_that("summary lists top features when rows are named", {
  set.seed(16)
  a <- matrix(runif(60), 6, 10, dimnames = list(letters[1:6], NULL))
  b <- a
  b[1, ] <- b[1, ] + 3
  fit <- nmf_joint(a, b, rank = 2)
  s <- summary(fit, top = 2)
  expect_true(any(grepl("a", s$components$top_features)))
})

test_that("print, summary and the test print stably", {
  x <- swimmer()
  set.seed(17)
  # converged tightly: at the default tol = 1e-4 the stopping iteration, and
  # so p-bar's third digit, moved between two machines of the same kind
  # (glibc picks its libm code by CPU)
  fit <- nmf_joint(x, 1 - x, rank = 3,
                   control = nmf_control(tol = 1e-8, max_iter = 2000))
  # the numbers behind the scrubbed snapshots, to tolerances that the last
  # bits (and so the exact iteration count) do not decide. The start's last
  # bits decide between two local minima 2e-4 apart in loss: Eigen's SSE2
  # products reach loss 0.42603 with p = (-0.9970, 0.2299, 0.7527), the
  # AVX2 kernels 0.42593 with (-0.9972, 0.2262, 0.7555); both are checked
  expect_identical(fit$status, "converged")
  expect_equal(tail(fit$loss, 1), 0.4260, tolerance = 1e-3)
  expect_equal(fit$distance, 1.979, tolerance = 1e-3)
  expect_equal(unname(sort(fit$p)), c(-0.997, 0.228, 0.754),
               tolerance = 1e-2)
  expect_snapshot(print(fit), transform = scrub_numbers)
  expect_snapshot(print(summary(fit)), transform = scrub_numbers)
  set.seed(18)
  expect_snapshot(print(nmf_joint_test(x[, 1:40], 1 - x[, 1:40], rank = 2,
                                       B = 9)),
                  transform = scrub_numbers)
})

test_that("bad input to nmf_joint() and chamfer_distance() gets classed errors", {
  x <- swimmer()
  bad <- list(
    rows = quote(nmf_joint(x, x[1:100, ], rank = 10)),
    empty = quote(nmf_joint(x, x[, 0], rank = 10)),
    rank = quote(nmf_joint(x[, 1:3], x[, 1:4], rank = 8)),
    rank_zero = quote(nmf_joint(x, x, rank = 0)),
    samples = quote(nmf_joint(x, x, rank = 10, pbar = "montecarlo", samples = 0)),
    pbar = quote(nmf_joint(x, x, rank = 10, pbar = "bootstrap")),
    negative = quote(nmf_joint(x, -x, rank = 10)),
    missing = quote(nmf_joint(replace(x, 5, NA), x, rank = 10)),
    type = quote(nmf_joint(x, "a", rank = 10)),
    init = quote(nmf_joint(x, x, rank = 10, init = "svd")),
    control = quote(nmf_joint(x, x, rank = 10, control = 3)),
    normalize = quote(nmf_joint(x, x, rank = 10, normalize = NA)),
    labels = quote(nmf_joint(x, x, rank = 10, labels = c("a", "a"))),
    chamfer_rows = quote(chamfer_distance(x, t(x))),
    chamfer_variant = quote(chamfer_distance(x, x, variant = "hausdorff")),
    chamfer_zero = quote(chamfer_distance(x, 0 * x)),
    plot_type = quote(plot(nmf_joint(x[, 1:9], x[, 10:19], rank = 2), type = "pie"))
  )
  for (nm in names(bad)) {
    expect_error(eval(bad[[nm]]), class = "nmfkit_error", label = nm)
  }
  expect_error(nmf_joint(x, x[1:100, ], rank = 10), class = "nmfkit_error_dimension")
  expect_error(nmf_joint(x, x[, 0], rank = 10), class = "nmfkit_error_empty")
  expect_error(nmf_joint(x[, 1:3], x[, 1:4], rank = 8),
               class = "nmfkit_error_rank")
  fit <- nmf_joint(x[, 1:20], x[, 21:40], rank = 2)
  expect_error(predict(fit, x[1:10, ]), class = "nmfkit_error_dimension")
  expect_error(plot(fit, components = 5), class = "nmfkit_error_components")
  expect_snapshot(error = TRUE, {
    nmf_joint(x, x[1:100, ], rank = 10)
    nmf_joint(x, x[, 0], rank = 10)
    nmf_joint(x[, 1:3], x[, 1:4], rank = 8)
    nmf_joint(x, x, rank = 10, pbar = "montecarlo", samples = 0)
    nmf_joint(x, x, rank = 10, labels = c("a", "a"))
    chamfer_distance(x, t(x))
  })
})

test_that("without normalisation a joint fit is equivariant: c x gives sqrt(c) factors, same path", {
  x <- swimmer()
  set.seed(21)
  n <- matrix(runif(length(x)), nrow(x))
  fits <- lapply(c(1, 3, 1e-3), function(cc) {
    set.seed(22)
    nmf_joint(cc * x, cc * (x + n), rank = 10, normalize = FALSE)
  })
  for (i in 2:3) {
    cc <- c(1, 3, 1e-3)[i]
    expect_identical(fits[[i]]$iterations, fits[[1]]$iterations)
    expect_equal(fits[[i]]$distance, fits[[1]]$distance, tolerance = 1e-9)
    expect_equal(fits[[i]]$W / sqrt(cc), fits[[1]]$W, tolerance = 1e-8)
    expect_equal(fits[[i]]$H / sqrt(cc), fits[[1]]$H, tolerance = 1e-8)
  }
  expect_gt(fits[[1]]$distance, 0.5)
})

test_that("the joint start is the reference code's: noise pairs stop where scikit-learn stops", {
  # scikit-learn 1.2.1 NMF(n_components = 10) on the normalised pairs of
  # these data stopped after 140 (X1 vs X1 + N) and 187 (X1 vs N)
  # iterations, at distances 1.4812 and 2.2941 (exact p-bar)
  x <- swimmer()
  set.seed(1)
  n1 <- matrix(runif(length(x)), nrow(x))
  set.seed(3)
  n3 <- matrix(runif(length(x)), nrow(x))
  a <- nmf_joint(x, x + n1, rank = 10)
  b <- nmf_joint(x, n3, rank = 10)
  expect_lt(abs(a$iterations - 140), 3)
  expect_lt(abs(b$iterations - 187), 3)
  expect_equal(a$distance, 1.4812, tolerance = 2e-3)
  expect_equal(b$distance, 2.2941, tolerance = 2e-3)
})
