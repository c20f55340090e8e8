test_that("shifted_shapes() builds the permutation-NMF experiments", {
  sim <- withr::with_seed(1, shifted_shapes(10, noise = 0))
  expect_equal(dim(sim$x), c(400L, 10L))
  expect_equal(attr(sim$x, "image_dim"), c(20L, 20L))
  expect_equal(vapply(sim$shapes, sum, 0), c(square = 9, plus = 9))
  expect_true(all(sim$counts == 1L))
  # noise-free images are exactly the shapes at their positions (max)
  for (j in 1:10) {
    img <- matrix(0, 20, 20)
    p <- sim$positions[sim$positions$image == j, ]
    for (i in seq_len(nrow(p))) {
      s <- sim$shapes[[as.character(p$shape[i])]]
      rows <- p$row[i] + seq_len(nrow(s))
      cols <- p$col[i] + seq_len(ncol(s))
      img[rows, cols] <- pmax(img[rows, cols], s)
    }
    expect_equal(as.vector(img), sim$x[, j])
  }
  noisy <- withr::with_seed(1, shifted_shapes(10))
  expect_true(all(noisy$x >= 0 & noisy$x <= 1))
  expect_equal(mean(noisy$x[sim$x == 0]), 0.15, tolerance = 0.02)

  e2 <- experiment_2(3)
  expect_equal(dim(e2$x), c(900L, 20L))
  expect_true(all(e2$counts >= 0 & e2$counts <= 2) && all(colSums(e2$counts) >= 1))
  expect_equal(as.vector(table(e2$positions$image)), as.vector(colSums(e2$counts)))
  # no overlap: bounding boxes at least one pixel apart
  for (j in 1:20) {
    p <- e2$positions[e2$positions$image == j, ]
    if (nrow(p) < 2) next
    dims <- t(vapply(as.character(p$shape), function(s) dim(e2$shapes[[s]]), c(0L, 0L)))
    for (a in 1:(nrow(p) - 1)) for (b in (a + 1):nrow(p)) {
      apart <- p$row[a] + dims[a, 1] < p$row[b] || p$row[b] + dims[b, 1] < p$row[a] ||
        p$col[a] + dims[a, 2] < p$col[b] || p$col[b] + dims[b, 2] < p$col[a]
      expect_true(apart)
    }
  }
})

test_that("nmf_shift() returns a valid model with consistent methods", {
  sim <- withr::with_seed(4, shifted_shapes(10))
  fit <- withr::with_seed(1, nmf_shift(sim$x, 2))
  expect_s3_class(fit, c("nmfkit_shift", "nmfkit"))
  nmfkit:::validate_nmfkit(fit)
  expect_equal(colSums(fit$W^2), c(nmf1 = 1, nmf2 = 1))
  expect_equal(dim(fit$shifts$row), c(2L, 10L))
  expect_true(all(fit$shifts$row >= 0 & fit$shifts$row < 20))
  expect_equal(fit$g, fit$shifts$row + 20L * fit$shifts$col,
               ignore_attr = TRUE)
  # the loss trace never increases and matches fitted()
  expect_true(all(diff(fit$loss) <= 1e-12))
  rel <- sqrt(sum(residuals(fit)^2) / sum(sim$x^2))
  expect_equal(rel, utils::tail(fit$loss, 1), tolerance = 1e-10)
  expect_equal(fitted(fit) + residuals(fit), sim$x, ignore_attr = TRUE)
  expect_equal(min(fit$restart_loss), utils::tail(fit$loss, 1))
  expect_equal(summary(fit)$relative_error, rel)
  inst <- instances(fit)
  expect_named(inst, c("image", "atom", "row", "col", "coefficient"))
  expect_true(all(inst$coefficient > 0))
  # predict() on the training images: the H step from zero, close to the fit
  p <- predict(fit, sim$x)
  # a coefficient matrix like every predict(), placements as attributes
  expect_true(is.matrix(p) && is.numeric(p))
  expect_identical(dim(p), dim(fit$H))
  expect_lt(attr(p, "relative_error"), utils::tail(fit$loss, 1) + 0.02)
  expect_gte(mean(attr(p, "g") == fit$g), 0.9)
  expect_equal(unclass(predict(fit))[, ], fit$H)
  pdf(NULL)
  on.exit(grDevices::dev.off())
  for (type in c("basis", "placements", "coef", "loss")) {
    expect_identical(plot(fit, type = type), fit)
  }
})

test_that("shifting every image shifts the positions and keeps the atoms", {
  sim <- withr::with_seed(5, shifted_shapes(10))
  ctrl <- nmf_control(max_iter = 30, h_start = "zero")
  fit <- withr::with_seed(2, nmf_shift(sim$x, 2, control = ctrl))
  moved <- roll_images(sim$x, c(20, 20), 7, 3)
  fit2 <- withr::with_seed(2, nmf_shift(moved, 2, control = ctrl))
  expect_equal(fit2$W, fit$W, tolerance = 1e-8)
  expect_equal(fit2$H, fit$H, tolerance = 1e-8)
  expect_equal(fit2$shifts$row, (fit$shifts$row + 7L) %% 20L)
  expect_equal(fit2$shifts$col, (fit$shifts$col + 3L) %% 20L)
  # predict() on shifted images moves the positions by the same amount
  p <- predict(fit, sim$x)
  p2 <- predict(fit, moved)
  expect_equal(p2[, ], p[, ], tolerance = 1e-8)
  expect_equal(attr(p2, "shifts")$row, (attr(p, "shifts")$row + 7L) %% 20L)
})

test_that("experiment 1: both shapes in >= 17 of 20 seeds (best of 3)", {
  found <- vapply(1:20, function(seed) {
    sim <- withr::with_seed(seed, shifted_shapes(10))
    # 20 outer iterations as in the prototype (some stop on the cap)
    fit <- withr::with_seed(seed, suppressWarnings(nmf_shift(
      sim$x, 2, nrun = 3, control = nmf_control(max_iter = 20, tol = 1e-6))))
    all_shapes_found(sim, fit)
  }, logical(1))
  expect_gte(sum(found), 17)
})

test_that("experiment 1 with projected gradient and the 1-D group", {
  found <- vapply(1:6, function(seed) {
    sim <- withr::with_seed(seed, shifted_shapes(10))
    pg <- withr::with_seed(seed, nmf_shift(sim$x, 2, w_step = "pg",
                                           shift = "circular1d"))
    expect_true(all(diff(pg$loss) <= 1e-12))
    all_shapes_found(sim, pg)
  }, logical(1))
  expect_gte(sum(found), 4)
})

test_that("experiment 2: exact multiplicity in >= 18 of 20 images", {
  sim <- experiment_2(2)
  fit <- withr::with_seed(2, suppressWarnings(nmf_shift(
    sim$x, 3, instances = 6, control = nmf_control(max_iter = 30, tol = 1e-6))))
  expect_equal(sort(unname(atom_shapes(fit, sim))), 1:3)
  counts <- found_counts(fit, sim)
  expect_gte(sum(colSums(counts != sim$counts) == 0), 18)
  expect_equal(nrow(instances(fit)), sum(counts))
  expect_length(fit$stages, 2L)
  # the composed model reconstructs the objects (not the background, which
  # stage 2 removes from the atoms)
  expect_lt(sqrt(sum(residuals(fit)^2) / sum(sim$x^2)), 0.5)
})

test_that("fits are reproducible and identical for 1 and 2 threads", {
  sim <- withr::with_seed(6, shifted_shapes(40))
  a <- withr::with_seed(3, nmf_shift(sim$x, 2))
  b <- withr::with_seed(3, nmf_shift(sim$x, 2))
  c2 <- withr::with_seed(3, nmf_shift(sim$x, 2,
                                      control = nmf_control(max_iter = 30, threads = 2)))
  for (f in c("W", "H", "g", "loss", "restart_loss")) {
    expect_identical(b[[f]], a[[f]])
    expect_identical(c2[[f]], a[[f]])
  }
  pa <- predict(a, sim$x[, 1:5])
  pc <- predict(c2, sim$x[, 1:5])
  expect_identical(pc, pa)
})

test_that("bad input gets classed errors", {
  x <- withr::with_seed(1, shifted_shapes(4))$x
  expect_error(nmf_shift(x, 2, image_dim = c(20, 21)), class = "nmfkit_error_image_dim")
  expect_error(nmf_shift(x, 2, image_dim = c(20.5, 20)), class = "nmfkit_error")
  expect_error(nmf_shift(x, 2, image_dim = c(-20, -20)), class = "nmfkit_error")
  expect_error(nmf_shift(unclass(x)[, 1:4], 2, image_dim = NULL), class = "nmfkit_error")
  expect_error(nmf_shift(x, 0), class = "nmfkit_error_rank")
  expect_error(nmf_shift(x, 1.5), class = "nmfkit_error_rank")
  expect_error(nmf_shift(x, 401), class = "nmfkit_error_rank")
  expect_error(nmf_shift(x, 2, instances = 1), class = "nmfkit_error_instances")
  expect_error(nmf_shift(x, 2, instances = 3.5), class = "nmfkit_error_instances")
  expect_error(nmf_shift(x, 2, instances = 1000), class = "nmfkit_error_instances")
  z <- x
  z[, 3] <- 0
  expect_error(nmf_shift(z, 2), class = "nmfkit_error_zero")
  expect_error(nmf_shift(x * 0, 2), class = "nmfkit_error")
  expect_error(nmf_shift(-x, 2), class = "nmfkit_error_negative")
  expect_error(nmf_shift(x, 2, shift = "rotate"), class = "nmfkit_error_choice")
  expect_error(nmf_shift(x, 2, inner = 0), class = "nmfkit_error")
  expect_identical(withr::with_seed(1, nmf_shift(
    x, 2, nrun = 1, control = nmf_control(max_iter = 30, inner = 3)))$inner,
    3L)
  expect_error(nmf_shift(x, 2, nrun = -1), class = "nmfkit_error")
  expect_error(nmf_shift(x, 2, control = nmf_control(h_start = "svd")),
               class = "nmfkit_error_control")
  expect_error(shifted_shapes(3, shapes = "circle"), class = "nmfkit_error_shapes")
  expect_error(shifted_shapes(3, frame = c(4, 4)), class = "nmfkit_error_shapes")
  expect_error(shifted_shapes(3, copies = c(2, 1)), class = "nmfkit_error_copies")
  fit <- withr::with_seed(1, nmf_shift(x, 2, nrun = 1))
  expect_error(predict(fit, x[1:10, ]), class = "nmfkit_error_dimension")
  expect_error(plot(fit, type = "placements", images = 9), class = "nmfkit_error_images")

  expect_snapshot(error = TRUE, {
    nmf_shift(x, 2, image_dim = c(20, 21))
    nmf_shift(x, 2, image_dim = c(20.5, 20))
    nmf_shift(unclass(x)[, 1:4], 2, image_dim = NULL)
    nmf_shift(x, 401)
    nmf_shift(x, 2, instances = 1)
    nmf_shift(x, 2, instances = 3.5)
    nmf_shift(z, 2)
    nmf_shift(x, 2, control = nmf_control(h_start = "svd"))
    shifted_shapes(3, copies = c(2, 1))
  })
})

test_that("print and summary", {
  sim <- withr::with_seed(4, shifted_shapes(10))
  fit <- withr::with_seed(1, nmf_shift(sim$x, 2))
  e2 <- experiment_2(2)
  fit2 <- withr::with_seed(2, suppressWarnings(nmf_shift(
    e2$x, 3, instances = 6, control = nmf_control(max_iter = 30, tol = 1e-6))))
  expect_snapshot({
    print(fit)
    summary(fit)
    print(fit2)
  }, transform = scrub_status)
})
