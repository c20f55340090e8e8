test_that("W-NMF finds the three Gaussian atoms of the OptimalTransport.jl example", {
  set.seed(42)
  d <- wasserstein_gm_data()
  withr::local_options(rlib_message_verbosity = "verbose")  # not just once
  expect_message(fit <- nmf_wasserstein(d$x, 3, coords = d$t),
                 class = "nmfkit_message_normalise")
  mom <- atom_moments(fit$W, d$t)
  expect_true(all(abs(mom$mean - c(-6, 0, 6)) <= 0.5))
  expect_true(all(mom$sd < 2))
  expect_equal(fit$iterations, 10L)
  expect_length(fit$loss, 10L)
  # factors on the simplex
  expect_true(all(fit$W >= 0) && all(fit$H >= 0))
  expect_equal(unname(colSums(fit$W)), rep(1, 3), tolerance = 1e-12)
  expect_equal(unname(colSums(fit$H)), rep(1, 100), tolerance = 1e-12)
  # the outer objective decreases overall, and the steps are recorded
  expect_lt(fit$loss[10], fit$loss[1])
  expect_equal(nrow(fit$steps), 20L)
  expect_true(all(fit$steps$iterations >= 1L))
})

test_that("weights step: strong duality with ot_distance() and predict()", {
  fit <- wasserstein_small_fit()
  x <- fit$data
  h <- predict(fit, x)
  expect_equal(dim(h), dim(fit$H))
  expect_equal(unname(colSums(h)), rep(1, ncol(x)), tolerance = 1e-12)
  # the last weights step had the same atoms: a cold start lands nearby
  expect_lt(max(abs(h - fit$H)), 0.02)
  # -min F(G) = sum_i OT_eps(x_i, W h_i) + rho1 sum E(h_i), with the same
  # OT_eps convention (the - 1 in the entropy) as ot_distance()
  ctrl <- nmf_control(max_iter = 3000, tol = 1e-11)
  tight <- fit
  tight$control <- ctrl
  h <- predict(tight, x)
  res <- r_wasserstein_weights(x, fit$W, fit$ground$spec, fit$epsilon,
                               fit$rho[["weights"]], ctrl)
  ot <- ot_distance(x, fit$W %*% h, coords = fit$coords,
                    epsilon = fit$epsilon, type = "entropic",
                    control = list(max_iter = 50000, tol = 1e-11))
  primal <- sum(ot) + fit$rho[["weights"]] * sum(h * log(h))
  expect_equal(-res$dual, primal, tolerance = 1e-7)
})

test_that("ot_distance(): plan marginals, conventions and kernels agree", {
  set.seed(1)
  t <- seq(0, 1, length.out = 25)
  a <- random_histograms(25, 3)
  b <- random_histograms(25, 3)
  r <- ot_distance(a, b, coords = t, epsilon = 0.05, plan = TRUE,
                   type = "entropic", control = list(tol = 1e-12))
  for (j in 1:3) {
    expect_equal(rowSums(r$plan[[j]]), a[, j], tolerance = 1e-9)
    expect_equal(colSums(r$plan[[j]]), b[, j], tolerance = 1e-12)
    p <- r$plan[[j]]
    # OT_eps = <P,C> + eps sum P (log P - 1)
    expect_equal(r$cost[j], r$transport[j] + 0.05 * sum(p * (log(p) - 1)),
                 tolerance = 1e-9)
  }
  # L-BFGS on the semi-dual: same costs, row sums exact
  l <- ot_distance(a, b, coords = t, epsilon = 0.05, method = "lbfgs",
                   plan = TRUE, type = "entropic")
  expect_equal(l$cost, r$cost, tolerance = 1e-8)
  expect_equal(rowSums(l$plan[[2]]), a[, 2], tolerance = 1e-12)
  expect_equal(colSums(l$plan[[2]]), b[, 2], tolerance = 1e-7)
  # same cost as a user cost matrix; vectors and recycling
  cmat <- outer(t, t, "-")^2
  cmat <- cmat / mean(cmat)
  expect_equal(ot_distance(a, b, cost = cmat, epsilon = 0.05,
                           type = "entropic", control = list(tol = 1e-12)),
               r$cost,
               tolerance = 1e-12)
  expect_equal(ot_distance(a[, 1], b, coords = t, epsilon = 0.05,
                           type = "entropic", control = list(tol = 1e-12))[1],
               r$cost[1], tolerance = 1e-12)
  # symmetric in a, b for a symmetric cost; transport is smallest for a = b
  expect_equal(ot_distance(b, a, coords = t, epsilon = 0.05,
                           type = "entropic"), r$cost,
               tolerance = 1e-8)
  # separable grid kernel equals the dense one; small epsilon stays finite
  g1 <- random_histograms(35, 2)
  g2 <- random_histograms(35, 2)
  sep <- ot_distance(g1, g2, image_dim = c(5, 7), epsilon = 0.05)
  den <- ot_distance(g1, g2, image_dim = c(5, 7), epsilon = 0.05,
                     kernel = "dense")
  expect_equal(sep, den, tolerance = 1e-10)
  # Sinkhorn is slow for tiny epsilon, but stays finite and says so
  expect_warning(
    tiny <- ot_distance(g1, g2, image_dim = c(5, 7), epsilon = 1e-3,
                        control = nmf_control(max_iter = 200)),
    class = "nmfkit_warning_convergence"
  )
  expect_true(all(is.finite(tiny)))
})

test_that("no NaN or Inf with epsilon = 1e-3 on a 28 x 28 grid", {
  set.seed(2)
  x <- matrix(0, 784, 4)
  for (j in 1:4) {
    img <- matrix(0, 28, 28)
    r <- sample(3:24, 1)
    s <- sample(3:24, 1)
    img[r + (-2:2), s + (-2:2)] <- stats::runif(25)
    x[, j] <- img / sum(img)
  }
  fit <- nmf_wasserstein(x, 2, image_dim = c(28, 28), epsilon = 1e-3,
                         rho = 0.005,
                         control = nmf_control(max_iter = 1, inner = 15))
  expect_true(all(is.finite(fit$W)) && all(is.finite(fit$H)))
  expect_true(all(is.finite(fit$loss)))
  expect_equal(fit$ground$type, "separable")
})

test_that("fits are reproducible and identical for 1 and 2 threads", {
  f1 <- wasserstein_small_fit()
  f2 <- wasserstein_small_fit()
  f3 <- wasserstein_small_fit(nmf_control(max_iter = 3, inner = 60,
                                          threads = 2))
  expect_identical(f1$W, f2$W)
  expect_identical(f1$W, f3$W)
  expect_identical(f1$H, f3$H)
  expect_identical(f1$loss, f3$loss)
})

test_that("nmf_distance() gives Sinkhorn divergences or coefficient distances", {
  fit <- wasserstein_small_fit()
  d <- nmf_distance(fit)
  expect_s3_class(d, "dist")
  expect_equal(attr(d, "Size"), 70L)
  expect_true(all(d >= 0))
  m <- as.matrix(d)
  # a sample's reconstruction duplicated is at distance zero from it
  fit2 <- fit
  fit2$H <- cbind(fit$H, fit$H[, 1])
  m2 <- as.matrix(nmf_distance(fit2))
  expect_lt(m2[1, 71], 1e-8)
  expect_equal(m2[1:70, 1:70], m, tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(nmf_distance(fit, space = "coef"),
               nmf_distance.nmfkit(fit), ignore_attr = "call")
})

test_that("methods: print, summary, fitted, plot", {
  fit <- wasserstein_small_fit()
  expect_s3_class(fit, c("nmfkit_wasserstein", "nmfkit"))
  expect_snapshot(print(fit), transform = scrub_numbers)
  expect_snapshot(summary(fit), transform = scrub_numbers)
  expect_equal(fitted(fit), fit$W %*% fit$H, ignore_attr = TRUE)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(fit))
  expect_invisible(plot(fit, type = "coef"))
  expect_invisible(plot(fit, type = "loss"))
  img <- suppressMessages(nmf_wasserstein(
    random_histograms(12, 10), 2, image_dim = c(3, 4),
    control = nmf_control(max_iter = 1, inner = 10)))
  expect_invisible(plot(img))
})

test_that("bad inputs give classed errors", {
  x <- random_histograms(10, 6)
  neg <- x
  neg[2, 3] <- -0.1
  zero <- x
  zero[, 4] <- 0
  expect_error(nmf_wasserstein(neg, 2), class = "nmfkit_error_negative")
  expect_error(nmf_wasserstein(zero, 2), class = "nmfkit_error_zero")
  expect_error(nmf_wasserstein(x, 2, cost = diag(3)),
               class = "nmfkit_error_cost")
  cneg <- outer(1:10, 1:10, "-")^2
  cneg[1, 2] <- -1
  expect_error(nmf_wasserstein(x, 2, cost = cneg), class = "nmfkit_error_cost")
  expect_error(nmf_wasserstein(x, 2, epsilon = 0),
               class = "nmfkit_error_epsilon")
  expect_error(nmf_wasserstein(x, 2, epsilon = -1), class = "nmfkit_error")
  expect_error(nmf_wasserstein(x, 2, rho = 0), class = "nmfkit_error_rho")
  expect_error(nmf_wasserstein(x, 2, rho = c(weights = 0.1, dictionary = -1)),
               class = "nmfkit_error_rho")
  expect_error(nmf_wasserstein(x, 2, coords = 1:9),
               class = "nmfkit_error_coords")
  expect_error(nmf_wasserstein(x, 2, coords = 1:10, image_dim = c(2, 5)),
               class = "nmfkit_error_geometry")
  expect_error(nmf_wasserstein(x, 2, coords = cbind(1:10, 1:10),
                               kernel = "separable"),
               class = "nmfkit_error_kernel")
  expect_error(ot_distance(x[, 1], x[-1, 1]), class = "nmfkit_error_dimension")
  expect_error(ot_distance(x[, 1], x[, 1], epsilon = 0),
               class = "nmfkit_error_epsilon")
  expect_snapshot(error = TRUE, {
    nmf_wasserstein(neg, 2)
    nmf_wasserstein(zero, 2)
    nmf_wasserstein(x, 2, cost = diag(3))
    nmf_wasserstein(x, 2, cost = cneg)
    nmf_wasserstein(x, 2, epsilon = 0)
    nmf_wasserstein(x, 2, rho = 0)
    nmf_wasserstein(x, 2, coords = 1:9)
    nmf_wasserstein(x, 2, coords = 1:10, image_dim = c(2, 5))
  })
})

test_that("a cost that is not symmetric or has a non-zero diagonal warns", {
  x <- random_histograms(10, 6)
  cmat <- outer(1:10, 1:10, "-")^2 / 33
  asym <- cmat
  asym[1, 2] <- asym[1, 2] + 1
  diag1 <- cmat + diag(0.5, 10)
  ctrl <- nmf_control(max_iter = 1, inner = 5)
  expect_warning(nmf_wasserstein(x, 2, cost = asym, control = ctrl),
                 class = "nmfkit_warning_cost")
  expect_warning(nmf_wasserstein(x, 2, cost = diag1,
                                 control = ctrl),
                 class = "nmfkit_warning_cost")
  expect_snapshot(invisible(nmf_wasserstein(x, 2, cost = asym,
                                            control = ctrl)))
})

test_that("ot_distance() is a divergence by default: 0 on identical inputs", {
  set.seed(2)
  t <- seq(0, 1, length.out = 30)
  a <- random_histograms(30, 6)
  b <- random_histograms(30, 6)
  ctl <- list(tol = 1e-12)
  # identical histograms: exactly zero (the entropic value is negative)
  expect_identical(ot_distance(a, a, coords = t, control = ctl), rep(0, 6))
  expect_true(all(ot_distance(a, a, coords = t, type = "entropic") < 0))
  d <- ot_distance(a, b, coords = t, control = ctl)
  expect_true(all(d > 0))
  expect_equal(ot_distance(b, a, coords = t, control = ctl), d,
               tolerance = 1e-8)
  # S(a, b) = OT(a, b) - OT(a, a) / 2 - OT(b, b) / 2
  ent <- function(p, q) ot_distance(p, q, coords = t, type = "entropic",
                                    control = ctl)
  expect_equal(d, ent(a, b) - ent(a, a) / 2 - ent(b, b) / 2,
               tolerance = 1e-10)
  # transport = <P, C> of the entropic plan, and OT = <P, C> + entropy term
  r <- ot_distance(a, b, coords = t, plan = TRUE, control = ctl)
  expect_equal(r$cost, d)
  expect_equal(ot_distance(a, b, coords = t, type = "transport",
                           control = ctl), r$transport, tolerance = 1e-12)
  for (j in 1:6) {
    p <- r$plan[[j]]
    expect_equal(r$entropic[j],
                 r$transport[j] + 0.025 * sum(p * (log(p) - 1)),
                 tolerance = 1e-9)
  }
  expect_true(all(r$transport > 0))
  # the cost from coords is scale-free
  expect_equal(ot_distance(a, b, coords = 1000 * t, control = ctl), d,
               tolerance = 1e-10)
  expect_error(ot_distance(a, b, coords = t, type = "wasserstein"),
               class = "nmfkit_error")
})

test_that("divergence self terms: symmetric iteration, no warning, exact", {
  # ordinary multimodal histograms: Sinkhorn on (b, b) took > 10000
  # iterations here and warned; the symmetric iteration takes tens
  withr::with_seed(3, d <- wasserstein_gm_data(n = 12L, bins = 15L))
  x <- sweep(d$x, 2, colSums(d$x), "/")
  expect_no_warning(s <- ot_distance(x[, 1], x[, 2], coords = d$t))
  ent <- function(p, q) ot_distance(p, q, coords = d$t, type = "entropic")
  expect_no_warning(ab <- ent(x[, 1], x[, 2]))
  expect_no_warning(bb <- ent(x[, 2], x[, 2]))
  expect_equal(s, ab - ent(x[, 1], x[, 1]) / 2 - bb / 2, tolerance = 1e-12)
  expect_gt(s, 0)
  expect_equal(ot_distance(x[, 2], x[, 1], coords = d$t), s,
               tolerance = 1e-8)
  expect_identical(ot_distance(x, x, coords = d$t), rep(0, 12))
  cmat <- outer(d$t, d$t, "-")^2
  spec <- list(type = "dense", cost = cmat / mean(cmat))
  sym <- nmfkit:::r_ot_sinkhorn_symmetric(x, spec, 0.025, 1000L, 1e-8, 1L)
  expect_identical(sym$status, "converged")
  expect_lt(sym$iterations, 100L)

  # where plain Sinkhorn converges, both give the same OT(a, a); empty bins
  # take no part (no NaN, -Inf potentials there only)
  set.seed(4)
  y <- random_histograms(15, 5)
  y[sample(length(y), 20)] <- 0
  y <- sweep(y, 2, colSums(y), "/")
  plain <- nmfkit:::r_ot_sinkhorn(y, y, spec, 0.1, 100000L, 1e-13, 1L)
  sym <- nmfkit:::r_ot_sinkhorn_symmetric(y, spec, 0.1, 1000L, 1e-13, 1L)
  expect_identical(plain$status, "converged")
  expect_identical(sym$status, "converged")
  expect_lt(sym$iterations, plain$iterations)
  expect_equal(sym$cost, plain$cost, tolerance = 1e-8)
  expect_identical(is.infinite(sym$f), y == 0)
  expect_false(anyNA(sym$f))
  r <- ot_distance(y, y, coords = d$t, epsilon = 0.1, plan = TRUE,
                   type = "entropic", control = list(tol = 1e-12))
  expect_equal(r$entropic, sym$cost, tolerance = 1e-10)
  for (j in 1:5) {
    p <- r$plan[[j]]
    expect_false(anyNA(p))
    expect_equal(rowSums(p), y[, j], tolerance = 1e-12)
    expect_equal(colSums(p), y[, j], tolerance = 1e-12)
  }
  expect_identical(ot_distance(y, y, coords = d$t, epsilon = 0.1),
                   rep(0, 5))
})

test_that("the normalising message is shown once, every time if verbose", {
  a <- c(1, 2, 3)
  b <- c(3, 2, 1)
  suppressMessages(ot_distance(a, b, epsilon = 0.5))
  expect_no_message(ot_distance(a, b, epsilon = 0.5))
  expect_message(ot_distance(a, b, epsilon = 0.5,
                             control = nmf_control(verbose = TRUE)),
                 class = "nmfkit_message_normalise")
})
