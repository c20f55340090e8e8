test_that("nmf_distance() on a list gives a labelled, symmetric dist", {
  x <- swimmer()
  set.seed(1)
  n <- swimmer_noise(x)
  sets <- list(swimmer = x, noisy = x + n, noise = n)
  set.seed(2)
  d <- nmf_distance(sets, rank = 10)
  expect_s3_class(d, c("nmfkit_dist", "dist"))
  expect_identical(attr(d, "Labels"), names(sets))
  m <- as.matrix(d)
  expect_equal(m, t(m))
  expect_true(all(diag(m) == 0))
  # each entry is the jNMF distance of the pair (the starts differ only in
  # the randomized SVD's draw, so the fits agree closely)
  expect_equal(m["swimmer", "noisy"], nmf_joint(x, x + n, rank = 10)$distance,
               tolerance = 1e-3)
  expect_equal(m["swimmer", "noise"], nmf_joint(x, n, rank = 10)$distance,
               tolerance = 1e-3)
  expect_true(all(as.vector(attr(d, "sd")) == 0))
  hc <- stats::hclust(d)
  expect_length(hc$order, 3)
  dc <- nmf_distance(sets, method = "chamfer", variant = "reference_code")
  expect_equal(as.matrix(dc)["swimmer", "noise"],
               chamfer_distance(x, n, "reference_code"))
})

test_that("trials and resampling average and keep the spread", {
  x <- swimmer()
  sets <- list(a = x, b = x[, 1:128], c = 1 - x)
  set.seed(3)
  d <- nmf_distance(sets, rank = 4, trials = 3, resample = 60)
  sdv <- attr(d, "sd")
  expect_s3_class(sdv, "dist")
  expect_true(all(as.vector(sdv) > 0))
  expect_equal(attr(d, "trials"), 3L)
  set.seed(3)
  expect_identical(nmf_distance(sets, rank = 4, trials = 3, resample = 60), d)
})

test_that("sequential and multisession plans give the same distances", {
  skip_if_not_installed("future")
  skip_on_cran()
  x <- swimmer()
  sets <- list(a = x[, 1:80], b = x[, 81:160], c = 1 - x[, 1:80])
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  set.seed(4)
  seq_d <- nmf_distance(sets, rank = 3, trials = 2, resample = 40)
  future::plan(future::multisession, workers = 2)
  set.seed(4)
  par_d <- nmf_distance(sets, rank = 3, trials = 2, resample = 40)
  expect_identical(as.vector(par_d), as.vector(seq_d))
  expect_identical(as.vector(attr(par_d, "sd")), as.vector(attr(seq_d, "sd")))
})

test_that("a batchtools scheduler gives the sequential distances bit for bit", {
  skip_if_not_installed("future")
  skip_if_not_installed("future.batchtools")
  skip_on_cran()
  # each pair is a batchtools job run by a fresh R process (as on a cluster);
  # the registry goes to a temporary folder, not the working directory
  withr::local_options(future.cache.path = withr::local_tempdir())
  x <- swimmer()
  sets <- list(a = x[, 1:60], b = x[, 61:120], c = 1 - x[, 1:60])
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  set.seed(6)
  seq_d <- nmf_distance(sets, rank = 3, trials = 2, resample = 30)
  future::plan(future.batchtools::batchtools_local)
  set.seed(6)
  bt_d <- nmf_distance(sets, rank = 3, trials = 2, resample = 30)
  expect_identical(as.vector(bt_d), as.vector(seq_d))
  expect_identical(as.vector(attr(bt_d, "sd")), as.vector(attr(seq_d, "sd")))
  expect_identical(attr(bt_d, "Labels"), names(sets))
})

test_that("the distance plot reorders by hclust or kmeans", {
  x <- swimmer()
  sets <- list(a = x, b = x[, 1:200], c = 1 - x, d = (1 - x)[, 1:200])
  d <- nmf_distance(sets, method = "chamfer")
  pdf(NULL)
  on.exit(grDevices::dev.off())
  out <- plot(d)
  ord <- attr(out, "order")
  expect_setequal(ord, 1:4)
  # the two Swimmer sets sit together
  expect_equal(abs(diff(match(c(1, 2), ord))), 1)
  set.seed(5)
  out <- plot(d, order = "kmeans", centers = 2)
  expect_setequal(attr(out, "order"), 1:4)
  expect_error(plot(d, order = "kmeans", centers = 9),
               class = "nmfkit_error")
})

test_that("the permutation test separates different sets, not equal ones", {
  x <- swimmer()
  set.seed(6)
  n <- swimmer_noise(x)
  t1 <- nmf_joint_test(x[, 1:50], n[, 1:50], rank = 3, B = 9)
  expect_s3_class(t1, "htest")
  expect_equal(t1$p.value, 0.1) # the smallest possible with B = 9
  expect_length(t1$null_distribution, 9)
  # two random halves of one set: exchangeable, so p is uniform; check it
  # is not the minimum for a fixed seed and that it is a valid p-value
  set.seed(7)
  idx <- sample(256)
  t2 <- nmf_joint_test(x[, idx[1:60]], x[, idx[61:120]], rank = 3, B = 19)
  expect_gt(t2$p.value, 0.05)
  expect_lte(t2$p.value, 1)
})

test_that("bad input to nmf_distance() and nmf_joint_test() gets classed errors", {
  x <- swimmer()
  bad <- list(
    no_names = quote(nmf_distance(list(x, x), rank = 10)),
    empty_name = quote(nmf_distance(list(a = x, x), rank = 10)),
    one_set = quote(nmf_distance(list(a = x), rank = 10)),
    not_list = quote(nmf_distance(list(), rank = 10)),
    rows = quote(nmf_distance(list(a = x, b = x[101:160, ]), rank = 10)),
    empty_set = quote(nmf_distance(list(a = x, b = x[, 0]), rank = 10)),
    negative = quote(nmf_distance(list(a = x, b = -x), rank = 10)),
    trials = quote(nmf_distance(list(a = x, b = x), rank = 10, trials = 0)),
    resample = quote(nmf_distance(list(a = x, b = x), rank = 10, resample = 0)),
    rank = quote(nmf_distance(list(a = x[, 1:2], b = x[, 1:2]), rank = 5)),
    samples = quote(nmf_distance(list(a = x, b = x), rank = 10, samples = 0)),
    init = quote(nmf_distance(list(a = x, b = x), rank = 10, init = "svd")),
    method = quote(nmf_distance(list(a = x, b = x), rank = 10, method = "emd")),
    B = quote(nmf_joint_test(x, x, rank = 10, B = 0)),
    test_rows = quote(nmf_joint_test(x, x[1:5, ], rank = 10, B = 1))
  )
  for (nm in names(bad)) {
    expect_error(eval(bad[[nm]]), class = "nmfkit_error", label = nm)
  }
  expect_error(nmf_distance(list(x, x), rank = 10), class = "nmfkit_error_names")
  expect_error(nmf_distance(list(a = x), rank = 10), class = "nmfkit_error_list")
  expect_snapshot(error = TRUE, {
    nmf_distance(list(x, x), rank = 10)
    nmf_distance(list(a = x), rank = 10)
    nmf_distance(list(a = x, b = x[101:160, ]), rank = 10)
    nmf_distance(list(a = x, b = x[, 0]), rank = 10)
    nmf_distance(list(a = x, b = x), rank = 10, trials = 0)
    nmf_distance(list(a = x[, 1:2], b = x[, 1:2]), rank = 5)
  })
})
