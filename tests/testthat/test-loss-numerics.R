# The loss objects' numerics (issue 36, section 2): divergences, deviance
# residuals and predict() of every loss at every scale, with the limits of
# the beta-divergence where its general form is 0 * Inf.

numerics_counts <- function(m = 30, n = 20, seed = 1) {
  set.seed(seed)
  w <- matrix(runif(m * 3), m) * (runif(m * 3) < 0.7)
  h <- matrix(runif(3 * n), 3)
  x <- matrix(as.double(rpois(m * n, 5 * w %*% h)), m, n)
  x[4, ] <- 0  # a zero row: W[4, ] = 0, so W H = 0 where x = 0
  x
}

test_that("d(x | mu) has its limits at 0 for every beta, never NaN", {
  for (b in c(-1, 0, 0.5, 1, 1.5, 2, 3)) {
    loss <- nmfkit:::check_loss(b)
    x <- c(0, 0, 2, 2, 0)
    mu <- c(0, 1, 0, 2, 1e-300)
    d <- loss$divergence(x, mu)
    expect_false(anyNA(d), label = b)
    expect_identical(d[c(1, 4)], c(0, 0), label = b)
    # d(0 | mu) = mu^b / b for b > 0 (KL: mu), infinite for b <= 0
    if (b > 0) expect_equal(d[2], 1 / b, label = b) else
      expect_identical(d[2], Inf, label = b)
    # d(x | 0) = x^b / (b (b - 1)) for b > 1, infinite for b <= 1
    if (b > 1) expect_equal(d[3], 2^b / (b * (b - 1)), label = b) else
      expect_identical(d[3], Inf, label = b)
  }
})

test_that("residuals() of a beta < 1 fit are finite where x = 0 and W H = 0", {
  x <- numerics_counts()
  for (b in c(0.5, 0.8, 1, 1.5)) {
    set.seed(2)
    fit <- nmf(x, 3, loss = b, control = nmf_control(max_iter = 30))
    mu <- fitted(fit)
    expect_true(all(mu[4, ] == 0), label = b)
    r <- residuals(fit)
    expect_false(anyNA(r), label = b)
    expect_true(all(r[4, ] == 0), label = b)
    # the squares add up to twice the divergence
    expect_equal(sum(r^2), 2 * fit$divergence, tolerance = 1e-8, label = b)
  }
})

test_that("deviance residuals scale as c^(beta / 2) at every scale, finite", {
  x <- numerics_counts()
  for (b in c(0.5, 1, 1.5, 3)) {
    set.seed(2)
    fit <- nmf(x, 3, loss = b, control = nmf_control(max_iter = 20))
    r <- residuals(fit)
    # scales at which r * c^(beta / 2) is a double
    top <- min(1000, floor(1800 / b))
    for (e in c(-top, -600, 600, top)) {
      s <- 2^e
      set.seed(2)
      fs <- nmf(x * s, 3, loss = b, control = nmf_control(max_iter = 20))
      rs <- residuals(fs)
      expect_true(all(is.finite(rs)), label = paste(b, e))
      # r * 2^(e b / 2), in exact steps
      want <- r * 2^(e * b / 4) * 2^(e * b / 4)
      expect_equal(rs, want, tolerance = 1e-8, label = paste(b, e))
    }
  }
})

test_that("predict() is scale-equivariant under every divergence, dense and sparse", {
  x <- numerics_counts() + 1  # positive, for Itakura-Saito
  for (loss in list("kl", "is", 0.5, 1.5)) {
    set.seed(3)
    fit <- nmf(x, 3, loss = loss, control = nmf_control(max_iter = 30))
    h <- predict(fit, x)
    for (s in c(2^1000, 2^-1000, 1e300, 1e-300)) {
      for (sparse in c(FALSE, TRUE)) {
        xs <- x * s
        if (sparse) xs <- methods::as(xs, "dgCMatrix")
        hs <- predict(fit, xs)
        lab <- paste(format(loss), format(s), sparse)
        expect_true(all(is.finite(hs)), label = lab)
        expect_lt(max(abs(hs / s - h)) / max(h), 1e-6)
      }
    }
  }
})

test_that("a fit's loss object comes back from what it stores, old fits too", {
  x <- numerics_counts() + 1
  set.seed(5)
  fit <- nmf(x, 2, loss = 0.5, control = nmf_control(max_iter = 5))
  loss <- nmfkit:::fit_loss(fit)
  expect_s3_class(loss, "nmfkit_loss")
  expect_identical(loss$beta, 0.5)
  expect_identical(loss$name, "beta")
  set.seed(5)
  old <- nmf(x, 2, control = nmf_control(max_iter = 5))
  old$beta <- NULL
  old$loss_function <- NULL
  expect_identical(nmfkit:::fit_loss(old)$name, "frobenius")
  expect_equal(residuals(old), x - fitted(old))
  for (l in list("kl", "KL", "poisson", "is", "frobenius", 1, 0, 2, 0.5)) {
    expect_identical(nmfkit:::check_loss(l)$beta,
                     switch(tolower(format(l)), kl = , poisson = , "1" = 1,
                            is = , "0" = 0, frobenius = , "2" = 2, 0.5))
  }
})
