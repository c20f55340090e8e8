test_that("synthetic experiment meets the paper's synthetic-data result", {
  set.seed(2311)
  x <- stratified_synthetic()
  fit <- nmf_stratified(x, rank = 5, control = nmf_control(max_iter = 10000))
  expect_s3_class(fit, c("nmfkit_stratified", "nmfkit"))
  expect_equal(fit$iterations, 10000L)
  trace <- c(fit$initial_loss, fit$loss)
  expect_true(all(diff(trace) <= 1e-12 * trace[-1]))
  expect_lt(utils::tail(fit$normalized_loss, 1), 5e-3)
  v_means <- colMeans(fit$V)
  expect_named(v_means, paste0("s", 1:4))
  expect_true(all(diff(v_means) > 0))
  expect_true(all(abs(v_means - (1:4 - 0.5)) < 0.45))
})

test_that("California housing strata reproduce the paper's shift table", {
  skip_if_not_installed("MMAC")
  d <- california_strata()
  expect_identical(as.vector(table(d$strata)), c(807L, 1482L, 305L))
  set.seed(1)
  # the paper's start is the authors' draws on [0, 1), in the data's units
  fit <- nmf_stratified(d$x, d$strata, rank = 5, init = "authors")
  # stored normalised loss at iteration 99: 0.0461 (one unseeded run)
  expect_gt(utils::tail(fit$normalized_loss, 1), 0.040)
  expect_lt(utils::tail(fit$normalized_loss, 1), 0.052)
  # Figure 3: drop AveOccup, each variable normalised across the strata
  v <- fit$V[rownames(fit$V) != "AveOccup", ]
  share <- v / rowSums(v)
  paper <- rbind(MedInc = c(0.067, 0.265, 0.668),
                 HouseAge = c(0.367, 0.302, 0.331),
                 AveRooms = c(0.232, 0.323, 0.445),
                 AveBedrms = c(0.355, 0.328, 0.317),
                 Population = c(0.207, 0.551, 0.242))
  expect_lt(max(abs(share - paper)), 0.01)
})

test_that("loss never increases under either order and is the residual norm", {
  set.seed(1)
  x <- stratified_small()
  for (order in c("gauss_seidel", "jacobi")) {
    fit <- nmf_stratified(x, rank = 2, update_order = order,
                          control = nmf_control(max_iter = 300))
    trace <- c(fit$initial_loss, fit$loss)
    expect_true(all(diff(trace) <= 1e-12 * trace[-1]), label = order)
    expect_lt(utils::tail(fit$loss, 1), 0.7 * fit$initial_loss)
    expect_equal(utils::tail(fit$loss, 1),
                 stratified_direct_loss(fit, do.call(cbind, x)),
                 tolerance = 1e-8)
    expect_equal(fit$normalized_loss,
                 fit$loss / sqrt(sum(sapply(x, function(m) sum(m^2)))))
    expect_true(all(fit$W >= 0) && all(fit$H >= 0) && all(fit$V >= 0))
  }
  set.seed(3)
  gs <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 5))
  set.seed(3)
  jac <- nmf_stratified(x, rank = 2, update_order = "jacobi",
                        control = nmf_control(max_iter = 5))
  expect_false(isTRUE(all.equal(gs$W, jac$W)))
})

test_that("a list equals one matrix plus a factor, in the caller's order", {
  set.seed(2)
  x <- stratified_small()
  set.seed(5)
  from_list <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 50))
  xm <- do.call(cbind, x)
  g <- rep(names(x), vapply(x, ncol, integer(1)))
  set.seed(5)
  from_matrix <- nmf_stratified(xm, strata = g, rank = 2,
                                control = nmf_control(max_iter = 50))
  for (f in c("W", "H", "V", "loss", "normalized_loss", "strata")) {
    expect_identical(from_list[[f]], from_matrix[[f]], label = f)
  }
  expect_identical(dimnames(from_list$V), list(rownames(xm), names(x)))
  expect_identical(colnames(from_list$H), colnames(xm))

  # shuffled columns: the same fit, with H's columns shuffled alike
  set.seed(6)
  start <- list(W = matrix(runif(24), 12), H = matrix(runif(48), 2),
                V = matrix(runif(36), 12))
  ref <- nmf_stratified(xm, g, rank = 2, init = start,
                        control = nmf_control(max_iter = 30))
  p <- sample(ncol(xm))
  start_p <- start
  start_p$H <- start$H[, p]
  shuffled <- nmf_stratified(xm[, p], g[p], rank = 2, init = start_p,
                             control = nmf_control(max_iter = 30))
  expect_equal(shuffled$H, ref$H[, p], tolerance = 1e-12)
  expect_equal(shuffled$W, ref$W, tolerance = 1e-12)
  expect_equal(shuffled$V, ref$V, tolerance = 1e-12)
})

test_that("sparse input stays sparse and gives the dense fit", {
  set.seed(3)
  x <- stratified_small(zeros = 0.5)
  xs <- lapply(x, Matrix::Matrix, sparse = TRUE)
  set.seed(7)
  dense <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 100))
  set.seed(7)
  sparse <- nmf_stratified(xs, rank = 2, control = nmf_control(max_iter = 100))
  expect_s4_class(sparse$data, "dgCMatrix")
  expect_equal(sparse$W, dense$W, tolerance = 1e-10)
  expect_equal(sparse$H, dense$H, tolerance = 1e-10)
  expect_equal(sparse$V, dense$V, tolerance = 1e-10)
  expect_equal(sparse$loss, dense$loss, tolerance = 1e-10)
  expect_equal(summary(sparse)$strata, summary(dense)$strata,
               tolerance = 1e-8)
})

test_that("fitted includes the shift; summary pieces match dense algebra", {
  set.seed(4)
  x <- stratified_small()
  fit <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 200))
  xm <- do.call(cbind, x)
  expected <- fit$W %*% fit$H + fit$V[, rep(1:3, c(8, 10, 6))]
  expect_equal(unname(fitted(fit)), unname(expected))
  expect_identical(dimnames(fitted(fit)), dimnames(xm))
  expect_equal(residuals(fit) + fitted(fit), xm)
  s <- summary(fit)
  expect_s3_class(s, "summary.nmfkit_stratified")
  res <- residuals(fit)
  per <- vapply(names(x), function(k) {
    sqrt(sum(res[, fit$strata == k]^2) / sum(x[[k]]^2))
  }, numeric(1))
  expect_equal(s$strata$normalized_loss, unname(per), tolerance = 1e-8)
  expect_equal(s$relative_error, utils::tail(fit$normalized_loss, 1),
               tolerance = 1e-8)
  shift <- c(8, 10, 6) * colSums(fit$V)
  fit_mass <- vapply(names(x), function(k) sum(fitted(fit)[, fit$strata == k]),
                     numeric(1))
  expect_equal(s$strata$shift_share, unname(shift / fit_mass))
})

test_that("predict on the training data recovers the coefficients", {
  set.seed(5)
  x <- stratified_small(zeros = 0)
  fit <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 3000))
  xm <- do.call(cbind, x)
  h <- predict(fit, xm, strata = fit$strata)
  expect_identical(dimnames(h), dimnames(fit$H))
  expect_equal(h, fit$H, tolerance = 1e-3)
  # NNLS is optimal for fixed W and V: no worse than the fitted H
  res_pred <- xm - fit$W %*% h - fit$V[, fit$strata]
  expect_lte(sum(res_pred^2), sum(residuals(fit)^2) * (1 + 1e-10))
  # a list of strata, and strata given as a subset of the fit's levels
  expect_equal(predict(fit, x["b"]), h[, fit$strata == "b"])
  expect_equal(predict(fit, x$c, strata = rep("c", 6)), h[, fit$strata == "c"])
  expect_identical(predict(fit), fit$H)
})

test_that("results are reproducible and equal for 1 and 2 threads", {
  set.seed(6)
  # large enough (nnz x rank >= 2^20) for the core to use the threads
  x <- stratified_synthetic(s = 3, m = 400, n = 400, r = 4)
  xs <- lapply(x, function(m) {
    m[m < 1.2] <- 0
    Matrix::Matrix(m, sparse = TRUE)
  })
  expect_gt(4 * sum(vapply(xs, function(m) length(m@x), 1)), 2^20)
  for (data in list(x, xs)) {
    fits <- lapply(c(1L, 2L, 1L), function(th) {
      set.seed(11)
      nmf_stratified(data, rank = 4,
                     control = nmf_control(max_iter = 30, threads = th))
    })
    for (f in c("W", "H", "V", "loss")) {
      expect_identical(fits[[1]][[f]], fits[[2]][[f]])
      expect_identical(fits[[1]][[f]], fits[[3]][[f]])
    }
  }
})

test_that("one stratum is NMF with an offset; tol stops early", {
  set.seed(8)
  x <- stratified_small()
  one <- nmf_stratified(x["a"], rank = 2, control = nmf_control(max_iter = 50))
  expect_identical(dim(one$V), c(12L, 1L))
  expect_identical(colnames(one$V), "a")
  fit <- nmf_stratified(x, rank = 2,
                        control = nmf_control(max_iter = 5000, tol = 1e-4))
  expect_identical(fit$status, "converged")
  expect_lt(fit$iterations, 5000L)
  n <- fit$iterations
  expect_lte(fit$loss[n - 1] - fit$loss[n], 1e-4 * fit$loss[n - 1])
})

test_that("top_features ranks shifts and basis vectors, largest first", {
  set.seed(9)
  x <- stratified_small()
  fit <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 100))
  top <- top_features(fit, n = 3)
  expect_s3_class(top, "data.frame")
  expect_named(top, c("stratum", "rank", "feature", "value"))
  expect_identical(nrow(top), 9L)
  for (k in names(x)) {
    sub <- top[top$stratum == k, ]
    expect_identical(sub$rank, 1:3)
    sorted <- sort(fit$V[, k], decreasing = TRUE)[1:3]
    expect_identical(sub$value, unname(sorted))
    expect_identical(sub$feature, names(sorted))
  }
  basis <- top_features(fit, n = 100, which = "basis")
  expect_named(basis, c("component", "rank", "feature", "value"))
  expect_identical(nrow(basis), 24L)
})

test_that("plot types draw and return the fit", {
  set.seed(10)
  x <- stratified_small()
  fit <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 20))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  for (type in c("strata", "basis", "coef", "loss")) {
    expect_identical(plot(fit, type = type), fit)
  }
  expect_identical(plot(fit, type = "strata", image_dim = c(3, 4)), fit)
  expect_error(plot(fit, type = "strata", image_dim = c(5, 5)),
               class = "nmfkit_error_image_dim")
})

test_that("print and summary are stable", {
  set.seed(12)
  x <- stratified_small()
  fit <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 100))
  expect_snapshot(print(fit), transform = scrub_numbers)
  expect_snapshot(print(summary(fit)), transform = scrub_numbers)
})

test_that("bad inputs give classed errors", {
  set.seed(13)
  x <- stratified_small()
  xm <- do.call(cbind, x)
  g <- rep(names(x), c(8, 10, 6))
  bad_rows <- x
  bad_rows$b <- bad_rows$b[-1, ]
  no_samples <- x
  no_samples$c <- x$c[, 0]
  unused <- factor(g, levels = c("a", "b", "c", "d"))
  fit <- nmf_stratified(x, rank = 2, control = nmf_control(max_iter = 5))
  cases <- list(
    rows = function() nmf_stratified(bad_rows, rank = 2),
    length = function() nmf_stratified(xm, strata = g[-1], rank = 2),
    empty = function() nmf_stratified(no_samples, rank = 2),
    unused = function() nmf_stratified(xm, strata = unused, rank = 2),
    missing = function() nmf_stratified(xm, rank = 2),
    na = function() nmf_stratified(xm, strata = replace(g, 3, NA), rank = 2),
    both = function() nmf_stratified(x, strata = g, rank = 2),
    names = function() nmf_stratified(unname(x)[c(1, 1)] |>
                                        stats::setNames(c("a", "a")),
                                      rank = 2),
    negative = function() nmf_stratified(list(a = -x$a), rank = 2),
    rank = function() nmf_stratified(x, rank = 30),
    v_updates = function() nmf_stratified(x, rank = 2, v_updates = -1),
    init = function() nmf_stratified(x, rank = 2, init = list(W = 1)),
    predict_strata = function() predict(fit, xm, strata = rep("z", 24)),
    predict_rows = function() predict(fit, unname(xm)[-1, ], strata = g),
    predict_list = function() predict(fit, list(q = x$a))
  )
  for (nm in names(cases)) {
    expect_error(cases[[nm]](), class = "nmfkit_error", label = nm)
  }
  expect_error(nmf_stratified(x, rank = 2, update_order = "random"),
               class = "nmfkit_error_choice")
  expect_error(cases$rows(), class = "nmfkit_error_dimension")
  expect_error(cases$unused(), class = "nmfkit_error_strata")
  expect_error(cases$predict_strata(), class = "nmfkit_error_strata")
  expect_snapshot(error = TRUE, {
    nmf_stratified(bad_rows, rank = 2)
    nmf_stratified(xm, strata = g[-1], rank = 2)
    nmf_stratified(no_samples, rank = 2)
    nmf_stratified(xm, strata = unused, rank = 2)
    nmf_stratified(xm, rank = 2)
    nmf_stratified(xm, strata = replace(g, 3, NA), rank = 2)
    nmf_stratified(x, strata = g, rank = 2)
    predict(fit, xm, strata = rep("z", 24))
    predict(fit, unname(xm)[-1, ], strata = g)
  })
})

test_that("update = \"hals\" fits the same model, monotone and below MU", {
  set.seed(2311)
  x <- stratified_synthetic()
  set.seed(5)
  fit <- nmf_stratified(x, rank = 5,
                        control = nmf_control(max_iter = 300,
                                              update = "hals"))
  set.seed(5)
  mu <- nmf_stratified(x, rank = 5, control = nmf_control(max_iter = 300))
  trace <- c(fit$initial_loss, fit$loss)
  expect_true(all(diff(trace) <= 1e-12 * trace[-1]))
  expect_equal(fit$initial_loss, mu$initial_loss)
  expect_lt(utils::tail(fit$loss, 1), utils::tail(mu$loss, 1))
  expect_equal(utils::tail(fit$loss, 1),
               stratified_direct_loss(fit, do.call(cbind, x)),
               tolerance = 1e-8)
  expect_true(all(fit$W >= 0) && all(fit$H >= 0) && all(fit$V >= 0))
  expect_error(nmf_control(update = "fast"), class = "nmfkit_error_control")
  expect_error(nmf(x[[1]], 2, control = nmf_control(update = "hals")),
               class = "nmfkit_error")
})

test_that("update = \"hals\" is scale-equivariant and thread-independent", {
  set.seed(1)
  x <- lapply(stratified_small(zeros = 0), function(m) {
    m + matrix(stats::runif(length(m)), nrow(m)) * 0.3
  })
  ctl <- nmf_control(max_iter = 2000, tol = 1e-6, update = "hals")
  set.seed(4)
  ref <- nmf_stratified(x, rank = 2, control = ctl)
  expect_identical(ref$status, "converged")
  for (c in c(1e-6, 1e6)) {
    set.seed(4)
    fit <- nmf_stratified(lapply(x, `*`, c), rank = 2, control = ctl)
    lab <- sprintf("c = %g", c)
    expect_identical(fit$iterations, ref$iterations, label = lab)
    expect_equal(fit$W / sqrt(c), ref$W, tolerance = 1e-6, label = lab)
    expect_equal(fit$V / c, ref$V, tolerance = 1e-6, label = lab)
  }
  ctl$threads <- 2L
  set.seed(4)
  two <- nmf_stratified(x, rank = 2, control = ctl)
  expect_identical(two$W, ref$W)
  expect_identical(two$loss, ref$loss)
})

test_that("predict() of a list of strata matches strata and features by name", {
  x <- withr::with_seed(1, matrix(runif(120), 12, dimnames = list(
    paste0("g", 1:12), paste0("c", 1:10))))
  x2 <- withr::with_seed(2, matrix(runif(96) + 1, 12, dimnames = list(
    paste0("g", 1:12), paste0("d", 1:8))))
  fit <- withr::with_seed(1, nmf_stratified(
    list(a = x, b = x2), 2, control = nmf_control(max_iter = 20)))
  ref <- predict(fit, list(a = x[, 1:3], b = x2[, 1:2]))
  # strata in another order
  other <- predict(fit, list(b = x2[, 1:2], a = x[, 1:3]))
  expect_equal(other[, colnames(ref)], ref, tolerance = 1e-12)
  # each stratum's rows in another order: matched by feature name, as a
  # matrix's are
  rev_rows <- predict(fit, list(a = x[12:1, 1:3], b = x2[12:1, 1:2]))
  expect_equal(rev_rows, ref, tolerance = 1e-12)
  expect_equal(predict(fit, x[12:1, 1:3], strata = rep("a", 3)),
               ref[, 1:3], tolerance = 1e-12)
  # a stratum without a feature: a classed warning, the feature taken as 0
  expect_warning(predict(fit, list(a = x[-1, 1:3])),
                 class = "nmfkit_warning_features")
})
