# NMF under the KL divergence and the beta family: monotone losses, KKT,
# planted Poisson recovery, storage and thread invariance, equivariance,
# masks and weights, penalties, fixed components, predict(), nmf_rank().

kl_direct <- function(x, mu) sum(ifelse(x > 0, x * log(x / mu), 0) - x + mu)

# 1 - x / mu, the KL gradient's factor, with 0 / 0 = 0
kl_ratio <- function(x, mu) 1 - ifelse(x > 0, x / mu, 0)

planted_counts <- function(m = 60, n = 50, k = 3, seed = 1, scale = 4) {
  withr::with_seed(seed, {
    W0 <- matrix(stats::rgamma(m * k, 0.5), m, k)
    H0 <- matrix(stats::rgamma(k * n, 0.5), k, n) * scale
    mu <- W0 %*% H0
    x <- matrix(stats::rpois(m * n, mu), m, n)
    list(x = x, W0 = W0, H0 = H0, mu = mu)
  })
}

tight <- function(...) nmf_control(tol = 1e-10, max_iter = 3000, ...)

test_that("the KL loss never rises, for cd and mu, with and without extrapolation", {
  p <- planted_counts()
  for (method in c("cd", "mu")) for (ex in c(FALSE, TRUE)) {
    set.seed(2)
    fit <- nmf(p$x, 3, loss = "kl", method = method,
               control = nmf_control(max_iter = 150, tol = 0, extrapolate = ex))
    expect_equal(fit$iterations, 150L)
    expect_true(all(diff(fit$loss) <= 1e-12 * fit$loss[-1]),
                label = paste(method, ex))
    expect_identical(fit$loss_function, "kl")
  }
})

test_that("beta-divergence MU never raises its loss (beta = 0, 0.5, 1.5, 3)", {
  p <- planted_counts()
  x <- p$x + 1  # positive for IS
  for (b in c(0, 0.5, 1.5, 3)) {
    set.seed(3)
    fit <- nmf(x, 3, loss = b, control = nmf_control(max_iter = 100, tol = 0))
    expect_identical(fit$method, "mu")
    expect_true(all(diff(fit$loss) <= 1e-12 * fit$loss[-1]), label = b)
    mu <- fit$W %*% fit$H
    d <- sum(nmfkit:::check_loss(b)$divergence(x, mu))
    expect_equal(fit$divergence, d, tolerance = 1e-10)
  }
})

test_that("beta MU on counts with zeros survives fitted values that underflow", {
  # sparse planted counts: fitted values at zero entries fall below the
  # smallest double; 0 * 0^(beta - 2) and 0^(beta - 1) once made the update
  # NaN (beta = 1.5 after ~500 iterations, beta = 0.5 after 20)
  x <- withr::with_seed(1, {
    W0 <- matrix(rexp(30 * 3), 30, 3) * (runif(90) < 0.6)
    W0[cbind(1:3, 1:3)] <- 3
    H0 <- matrix(rexp(3 * 40), 3, 40) * (runif(120) < 0.6)
    H0[cbind(1:3, 1:3)] <- 3
    matrix(rpois(1200, 10 * W0 %*% H0), 30) / 10
  })
  for (b in c(0.5, 1.5)) {
    fit <- withr::with_seed(1, nmf(x, 3, loss = b,
                                   control = nmf_control(max_iter = 1500)))
    expect_false(fit$status %in% c("numerical_error", "degenerate"),
                 label = paste("beta", b, fit$status))
    expect_true(all(is.finite(fit$W)) && all(is.finite(fit$H)))
    expect_true(all(diff(fit$loss) <= 1e-12 * fit$loss[-1]), label = b)
  }
})

test_that("the divergence and the trace agree with a direct R formula", {
  p <- planted_counts()
  set.seed(4)
  fit <- nmf(p$x, 3, loss = "kl", control = nmf_control(max_iter = 40))
  mu <- fit$W %*% fit$H
  expect_equal(fit$divergence, kl_direct(p$x, mu), tolerance = 1e-10)
  base <- outer(rowSums(p$x), colSums(p$x)) / sum(p$x)
  expect_equal(fit$baseline, kl_direct(p$x, base), tolerance = 1e-10)
  expect_equal(utils::tail(fit$loss, 1), fit$divergence / fit$baseline,
               tolerance = 1e-10)
  # deviance residuals: their squares sum to the deviance, 2 D
  r <- residuals(fit)
  expect_equal(sum(r^2), 2 * fit$divergence, tolerance = 1e-8)
  expect_equal(residuals(fit, type = "response"), p$x - mu,
               ignore_attr = TRUE)
})

test_that("KKT conditions of the KL problem hold at convergence", {
  p <- planted_counts()
  set.seed(5)
  fit <- nmf(p$x, 3, loss = "kl", control = tight())
  expect_identical(fit$status, "converged")
  W <- fit$W
  H <- fit$H
  R <- kl_ratio(p$x, W %*% H)
  gH <- crossprod(W, R)
  gW <- R %*% t(H)
  sc <- max(abs(gH)) + max(abs(gW)) + 1
  expect_gt(min(gH), -1e-6 * sc)
  expect_gt(min(gW), -1e-6 * sc)
  expect_lt(max(abs(H * gH)), 1e-6 * max(H) * sc)
  expect_lt(max(abs(W * gW)), 1e-6 * max(W) * sc)
})

test_that("planted Poisson factors are recovered", {
  p <- planted_counts(m = 200, n = 150, k = 3, scale = 40)
  set.seed(6)
  fit <- nmf(p$x, 3, loss = "kl", nrun = 2,
             control = nmf_control(tol = 1e-6, max_iter = 1000))
  # relative error of the mean W H against the truth: Poisson noise on a
  # mean mu is sqrt(mu), so the fit of 350 parameters per component to
  # 30000 counts comes within a few per cent
  err <- sqrt(sum((fit$W %*% fit$H - p$mu)^2) / sum(p$mu^2))
  expect_lt(err, 0.1)
  cosine <- crossprod(scale(fit$W, FALSE, sqrt(colSums(fit$W^2))),
                      scale(p$W0, FALSE, sqrt(colSums(p$W0^2))))
  expect_gt(min(apply(cosine, 2, max)), 0.95)
})

test_that("dense and sparse storage give the same KL fit, as do 1 and 2 threads", {
  p <- planted_counts()
  xs <- methods::as(p$x, "CsparseMatrix")
  for (method in c("cd", "mu")) {
    set.seed(7)
    a <- nmf(p$x, 3, loss = "kl", method = method,
             control = nmf_control(max_iter = 60, extrapolate = TRUE))
    set.seed(7)
    b <- nmf(xs, 3, loss = "kl", method = method,
             control = nmf_control(max_iter = 60, extrapolate = TRUE))
    set.seed(7)
    c2 <- nmf(xs, 3, loss = "kl", method = method,
              control = nmf_control(max_iter = 60, extrapolate = TRUE,
                                    threads = 2))
    expect_identical(a$W, b$W)
    expect_identical(a$H, b$H)
    expect_identical(b$W, c2$W)
    expect_identical(b$H, c2$H)
  }
})

test_that("KL and beta fits are scale-equivariant", {
  p <- planted_counts()
  for (loss in list("kl", 0.5, 1.5)) {
    for (c in c(1e-3, 37)) {
      set.seed(8)
      a <- nmf(p$x, 3, loss = loss, control = nmf_control(max_iter = 300))
      set.seed(8)
      b <- nmf(c * p$x, 3, loss = loss, control = nmf_control(max_iter = 300))
      expect_identical(a$iterations, b$iterations)
      expect_equal(b$W %*% b$H, c * a$W %*% a$H, tolerance = 1e-9)
      expect_equal(b$loss, a$loss, tolerance = 1e-9)
      expect_equal(b$divergence, c^(nmfkit:::check_loss(loss)$beta) *
                     a$divergence, tolerance = 1e-9)
    }
  }
})

test_that("masked entries do not enter a KL fit; weights are the divergence's", {
  p <- planted_counts()
  mask <- matrix(FALSE, nrow(p$x), ncol(p$x))
  withr::with_seed(9, mask[sample(length(mask), 200)] <- TRUE)
  y <- p$x
  y[mask] <- y[mask] + 50
  start <- list(W = p$W0 + 0.1, H = p$H0 + 0.1)
  a <- nmf(p$x, 3, loss = "kl", mask = mask, init = start,
           control = nmf_control(max_iter = 50))
  b <- nmf(y, 3, loss = "kl", mask = mask, init = start,
           control = nmf_control(max_iter = 50))
  expect_identical(a$W, b$W)
  expect_identical(a$H, b$H)
  # sparse data, the same mask: the same fit
  s <- nmf(methods::as(p$x, "CsparseMatrix"), 3, loss = "kl", mask = mask,
           init = start, control = nmf_control(max_iter = 50))
  expect_identical(a$W, s$W)
  # KKT of the weighted problem
  wts <- matrix(1, nrow(p$x), ncol(p$x))
  withr::with_seed(11, wts[sample(length(wts), 300)] <- 3)
  set.seed(12)
  f <- nmf(p$x, 3, loss = "kl", weights = wts, control = tight())
  R <- wts * kl_ratio(p$x, f$W %*% f$H)
  gH <- crossprod(f$W, R)
  sc <- max(abs(gH)) + 1
  expect_gt(min(gH), -1e-6 * sc)
  expect_lt(max(abs(f$H * gH)), 1e-6 * max(f$H) * sc)
  expect_equal(f$divergence,
               sum(wts * nmfkit:::check_loss(1)$divergence(p$x, f$W %*% f$H)),
               tolerance = 1e-10)
})

test_that("predict() under KL solves the Poisson NNLS of new columns", {
  p <- planted_counts()
  set.seed(13)
  fit <- nmf(p$x, 3, loss = "kl", control = tight())
  h <- predict(fit, p$x[, 1:6])
  expect_equal(h, fit$H[, 1:6], tolerance = 1e-5, ignore_attr = TRUE)
  hs <- predict(fit, methods::as(p$x[, 1:6], "CsparseMatrix"))
  expect_identical(h, hs)
  # the projection is KL's: the gradient vanishes on the support
  R <- kl_ratio(p$x[, 1:6], fit$W %*% h)
  g <- crossprod(fit$W, R)
  expect_lt(max(abs(h * g)), 1e-6 * max(h) * (max(abs(g)) + 1))
})

test_that("nmf_rank() under KL measures held-out divergence and finds the planted rank", {
  p <- planted_counts(m = 120, n = 100, k = 3, scale = 30)
  set.seed(14)
  r <- nmf_rank(p$x, rank = 1:5, nfolds = 3, fraction = 0.1, loss = "kl",
                control = nmf_control(max_iter = 500, tol = 1e-6))
  s <- nmfkit:::cv_summary(r$results)
  expect_identical(r$best[["min"]], 3L)
  # relative to predicting the mean: rank one (the independence model)
  # already beats it; rank 3 removes most of what is left
  expect_true(all(s$mean > 0))
  expect_lt(s$mean[s$rank == 1], 1)
  expect_lt(s$mean[s$rank == 3], 0.25 * s$mean[s$rank == 1])
})

test_that("an L1 penalty on H shrinks its mass monotonically under KL", {
  # KL's gradient in H_tj is sum_i W_it (1 - x_ij / (WH)_ij): an L1 weight
  # adds to sum_i W_it, like a heavier basis, so it shrinks H rather than
  # zeroing it (exact zeros need W H > 0 without the entry). Sparsity by
  # L1 is the Frobenius loss's (test-penalty-frobenius.R).
  p <- planted_counts()
  mass <- vapply(c(0, 0.01, 0.03, 0.1), function(a) {
    f <- nmf(p$x, 3, loss = "kl", penalty = c(l1_H = a),
             fixed = list(W = p$W0),
             control = nmf_control(max_iter = 2000, tol = 1e-8))
    sum(f$H)
  }, numeric(1))
  expect_true(all(diff(mass) < 0))
})

test_that("a growing L2 penalty drives the KL factors to zero and the fit says so", {
  # under KL, W H cannot reach 0 where x > 0 (the divergence is infinite
  # there), so the factors shrink toward 0 without reaching it
  p <- planted_counts()
  top <- vapply(c(1, 1e2, 1e4), function(a) {
    set.seed(16)
    f <- suppressWarnings(nmf(p$x, 3, loss = "kl", penalty = c(l2 = a),
                              control = nmf_control(max_iter = 300)))
    max(f$H)
  }, numeric(1))
  expect_true(all(diff(top) < 0))
  expect_lt(top[3], 0.05 * top[1])
  set.seed(16)
  expect_warning(nmf(p$x, 3, loss = "kl", penalty = c(l2 = 1e4),
                     control = nmf_control(max_iter = 300)),
                 "penalty", class = "nmfkit_warning_penalty")
})

test_that("one-sided penalties warn", {
  p <- planted_counts()
  expect_warning(nmf(p$x, 3, loss = "kl", penalty = c(l1_W = 0.1),
                     control = nmf_control(max_iter = 5)),
                 class = "nmfkit_warning_penalty")
})

test_that("fixed components stay bit-identical, for KL and MU and every storage", {
  p <- planted_counts()
  M <- p$W0[, 1:2]
  for (x in list(p$x, methods::as(p$x, "CsparseMatrix"))) {
    for (method in c("cd", "mu")) {
      set.seed(17)
      f <- nmf(x, 3, loss = "kl", method = method, fixed = list(W = M),
               control = nmf_control(max_iter = 50, extrapolate = TRUE))
      expect_identical(unname(f$W[, 1:2]), M)
      expect_identical(f$fixed, c(2L, 0L))
    }
  }
  # every column fixed: the fit is predict()
  set.seed(18)
  f <- nmf(p$x, 3, loss = "kl", fixed = list(W = p$W0), control = tight())
  expect_identical(unname(f$W), p$W0)
  Hfixed <- p$H0[1, , drop = FALSE]
  f <- nmf(p$x, 3, loss = "kl", fixed = list(H = Hfixed),
           control = nmf_control(max_iter = 30))
  expect_identical(unname(f$H[1, , drop = FALSE]), Hfixed)
})

test_that("bad loss, penalty and fixed arguments are classed errors naming them", {
  p <- planted_counts()
  x <- p$x
  expect_error(nmf(x, 3, loss = "poison"), class = "nmfkit_error_loss")
  expect_error(nmf(x, 3, loss = Inf), class = "nmfkit_error_loss")
  expect_error(nmf(x, 3, loss = NA_real_), class = "nmfkit_error")
  expect_error(nmf(x, 3, loss = "is"), "positive data",
               class = "nmfkit_error_loss")
  expect_error(nmf(x, 3, loss = -1), class = "nmfkit_error_loss")
  expect_error(nmf(x, 3, loss = "kl", method = "anls"),
               class = "nmfkit_error_method")
  expect_error(nmf(x + 1, 3, loss = 0.5, method = "cd"),
               class = "nmfkit_error_method")
  expect_error(nmf(x, 3, penalty = c(l1 = -1)), class = "nmfkit_error_penalty")
  expect_error(nmf(x, 3, penalty = c(l3 = 1)), "l3",
               class = "nmfkit_error_penalty")
  expect_error(nmf(x, 3, penalty = c(1, 2)), class = "nmfkit_error_penalty")
  expect_error(nmf(x, 3, penalty = c(l1 = 1, l1_W = 2)),
               class = "nmfkit_error_penalty")
  expect_error(nmf(x, 3, fixed = list(W = p$W0[-1, ])), "fixed\\$W",
               class = "nmfkit_error_fixed")
  expect_error(nmf(x, 2, fixed = list(W = p$W0)), class = "nmfkit_error_fixed")
  expect_error(nmf(x, 3, fixed = list(W = -p$W0)), class = "nmfkit_error_fixed")
  expect_error(nmf(x, 3, fixed = p$W0), class = "nmfkit_error_fixed")
  expect_error(nmf(x, 3, fixed = list(V = p$W0)), class = "nmfkit_error_fixed")
  # a start whose product vanishes at a positive count
  W <- p$W0
  W[1, ] <- 0
  expect_error(nmf(x, 3, loss = "kl", init = list(W = W, H = p$H0)),
               "init", class = "nmfkit_error_init")
  # non-integer data are fine for KL
  expect_no_error(nmf(x + 0.5, 3, loss = "kl",
                      control = nmf_control(max_iter = 5)))
})

test_that("a KL fit prints, summarises and plots in its own terms", {
  p <- planted_counts()
  set.seed(19)
  fit <- nmf(p$x, 3, loss = "kl", control = nmf_control(max_iter = 30))
  out <- capture.output(print(fit))
  expect_match(out[2], "^relative divergence")
  expect_true(any(grepl("Kullback-Leibler", out)))
  s <- capture.output(print(summary(fit)))
  expect_true(any(grepl("deviance", s)))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_no_error(plot(fit, type = "loss"))
})
