# nmfkit's multiplicative updates against scikit-learn's on the same start
# (fixtures made by bench/kl_sklearn.py; no Python at test time).

test_that("the sklearn fixtures are the plain Fevotte-Idier update", {
  for (tag in c("kl", "is", "beta1.5")) {
    f <- sklearn_beta_fixture(tag)
    ref <- mu_beta_reference(f$x, f$W0, f$H0, f$beta, 50)
    expect_equal(ref$W, f$W, tolerance = 1e-10, label = tag)
    expect_equal(ref$H, f$H, tolerance = 1e-10, label = tag)
    expect_equal(beta_divergence_reference(f$x, f$W %*% f$H, f$beta),
                 f$divergence, tolerance = 1e-10, label = tag)
  }
})

test_that("MU under KL, IS and beta = 1.5 matches scikit-learn's factors", {
  losses <- list(kl = "kl", is = "is", beta1.5 = 1.5)
  for (tag in names(losses)) {
    f <- sklearn_beta_fixture(tag)
    fit <- nmf(f$x, 3, loss = losses[[tag]], method = "mu",
               init = list(W = f$W0, H = f$H0),
               control = nmf_control(max_iter = 50, tol = 0,
                                     extrapolate = FALSE))
    expect_equal(fit$iterations, 50L, label = tag)
    expect_equal(unname(fit$W), f$W, tolerance = 1e-6, label = tag)
    expect_equal(unname(fit$H), f$H, tolerance = 1e-6, label = tag)
  }
})
