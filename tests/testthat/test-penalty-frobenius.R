# Penalties and fixed components of the Frobenius engines, through
# run_nmf() (the lead's nmf(penalty = , fixed = ) calls it with these).

penalty_data <- function(seed = 31, m = 40, n = 30) {
  withr::with_seed(seed, {
    x <- matrix(runif(m * n), m, n)
    x[x < 0.5] <- 0  # half zeros: a dgCMatrix copy stores half the entries
    list(x = x, xs = Matrix::Matrix(x, sparse = TRUE),
         start = list(W = matrix(runif(m * 4), m, 4),
                      H = matrix(runif(4 * n), 4, n)))
  })
}

# The penalised objective by its definition (run_nmf()'s comment); `a`
# weights the squared error (a masked fit: 0 at masked entries, which x
# holds as 0).
penalised_objective <- function(x, W, H, penalty, a = 1) {
  # weights relative to the data: r^1.5 (L1) and r (L2), times the length
  # of the lines each factor's entries are fitted on (n for W, m for H)
  r <- sqrt(sum(x^2) / length(x))
  m <- nrow(x)
  n <- ncol(x)
  sum(a * (x - W %*% H)^2) / 2 +
    r^1.5 * (n * penalty[1] * sum(W) + m * penalty[2] * sum(H)) +
    r * (n * penalty[3] * sum(W^2) + m * penalty[4] * sum(H^2)) / 2
}

test_that("run_nmf()'s defaults are no penalty and no fixed component", {
  d <- penalty_data()
  ctl <- list(max_iter = 25L, tol = 0, threads = 1L, extrapolate = TRUE)
  for (method in c("hals", "mu", "anls")) {
    plain <- nmfkit:::run_nmf(d$x, d$start, method, ctl)
    zero <- nmfkit:::run_nmf(d$x, d$start, method, ctl,
                             penalty = c(0, 0, 0, 0), fixed = c(0L, 0L))
    expect_identical(plain[c("W", "H", "loss")], zero[c("W", "H", "loss")])
    expect_equal(plain$objective, sum((d$x - plain$W %*% plain$H)^2) / 2,
                 tolerance = 1e-10)
  }
})

test_that("penalised fits with fixed components: dense and sparse data agree", {
  d <- penalty_data()
  penalty <- c(0.05, 0.02, 0.2, 0.1)
  fixed <- c(1L, 1L)
  for (extrapolate in c(FALSE, TRUE)) {
    ctl <- list(max_iter = 30L, tol = 0, threads = 1L,
                extrapolate = extrapolate)
    for (method in c("hals", "mu", "anls")) {
      dense <- nmfkit:::run_nmf(d$x, d$start, method, ctl,
                                penalty = penalty, fixed = fixed)
      sparse <- nmfkit:::run_nmf(d$xs, d$start, method, ctl,
                                 penalty = penalty, fixed = fixed)
      expect_equal(sparse$W, dense$W, tolerance = 1e-10)
      expect_equal(sparse$H, dense$H, tolerance = 1e-10)
      expect_equal(sparse$objective, dense$objective, tolerance = 1e-10)
      # the fixed components are the start's, bit for bit
      expect_identical(dense$W[, 1], d$start$W[, 1])
      expect_identical(dense$H[1, ], d$start$H[1, ])
      expect_identical(sparse$W[, 1], d$start$W[, 1])
      expect_equal(dense$objective,
                   penalised_objective(d$x, dense$W, dense$H, penalty),
                   tolerance = 1e-9)
    }
  }
})

test_that("the masked engine takes penalties and fixed components, dense = sparse", {
  d <- penalty_data()
  mask <- withr::with_seed(32, matrix(runif(length(d$x)) < 0.15, nrow(d$x)))
  penalty <- c(0.05, 0.02, 0.2, 0.1)
  ctl <- list(max_iter = 30L, tol = 0, threads = 1L)
  md <- nmfkit:::masked_setup(d$x, NULL, mask)
  ms <- nmfkit:::masked_setup(d$xs, NULL, mask)
  for (method in c("hals", "mu", "anls")) {
    dense <- nmfkit:::run_nmf(md$x, d$start, method, ctl, md,
                              penalty = penalty, fixed = c(2L, 1L))
    sparse <- nmfkit:::run_nmf(ms$x, d$start, method, ctl, ms,
                               penalty = penalty, fixed = c(2L, 1L))
    expect_equal(sparse$W, dense$W, tolerance = 1e-10)
    expect_equal(sparse$H, dense$H, tolerance = 1e-10)
    expect_identical(dense$W[, 1:2], d$start$W[, 1:2])
    expect_identical(dense$H[1, ], d$start$H[1, ])
    expect_equal(dense$objective,
                 penalised_objective(md$x, dense$W, dense$H, penalty, !mask),
                 tolerance = 1e-9)
  }
})

test_that("fixed = c(rank, 0) projects the data on the given W (NNLS)", {
  d <- penalty_data()
  ctl <- list(max_iter = 2000L, tol = 1e-12, threads = 1L)
  fit <- nmfkit:::run_nmf(d$xs, d$start, "anls", ctl, fixed = c(4L, 0L))
  expect_identical(fit$W, d$start$W)
  expect_equal(fit$status, "converged")
  # the projection's KKT conditions: H >= 0, gradient >= 0, complementary
  g <- crossprod(d$start$W) %*% fit$H - crossprod(d$start$W, d$x)
  expect_lt(max(abs(pmin(fit$H, g))), 1e-8 * max(abs(g)))
})

test_that("bad penalty or fixed vectors are errors, never crashes", {
  d <- penalty_data()
  ctl <- list(max_iter = 2L, tol = 0, threads = 1L)
  expect_error(nmfkit:::run_nmf(d$x, d$start, "hals", ctl, penalty = c(0, 0)),
               "length 4")
  expect_error(nmfkit:::run_nmf(d$x, d$start, "hals", ctl,
                                penalty = c(-1, 0, 0, 0)), "nonnegative")
  expect_error(nmfkit:::run_nmf(d$x, d$start, "hals", ctl, fixed = c(5L, 0L)),
               "fixed")
})
