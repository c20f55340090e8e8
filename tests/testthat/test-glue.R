# The glue contract (src/r_convert.h): R settings become the core's settings
# in one converter per solver, with no sentinel values and no R-only fields.

test_that("inner = \"auto\" asks for the cost rule's passes; unknown strings fail", {
  set.seed(11)
  x <- Matrix::rsparsematrix(300, 200, 0.05, rand.x = function(n) runif(n))
  w <- matrix(runif(300 * 4), 300, 4)
  h <- matrix(runif(4 * 200), 4, 200)
  ctl <- list(max_iter = 20L, tol = 0, threads = 1L)
  fit <- function(control) {
    nmfkit:::core_fit(x, w, h, nmfkit:::core_params("hals", control))
  }
  auto <- fit(c(ctl, inner = "auto"))
  plain <- fit(c(ctl, list(inner = NULL)))
  one <- fit(c(ctl, inner = 1L))
  # absent/NULL is the default (one pass); "auto" makes more passes per
  # update (2 over W and 3 over H here), each an exact block minimisation,
  # so the trace still never rises
  expect_identical(plain$W, one$W)
  expect_false(identical(auto$W, one$W))
  expect_true(all(diff(auto$loss) <= 1e-12))
  expect_error(fit(c(ctl, inner = "bogus")),
               "unknown inner")
})

test_that("extrapolate is read by the converter for the unmasked and masked engines", {
  set.seed(12)
  x <- matrix(runif(40 * 30), 40, 30)
  w <- matrix(runif(40 * 3), 40, 3)
  h <- matrix(runif(3 * 30), 3, 30)
  ctl <- list(max_iter = 30L, tol = 0, threads = 1L)
  fit <- function(control) {
    nmfkit:::core_fit(x, w, h, nmfkit:::core_params("hals", control))
  }
  on <- fit(c(ctl, extrapolate = TRUE))
  off <- fit(c(ctl, extrapolate = FALSE))
  absent <- fit(ctl)
  expect_identical(absent$W, off$W)
  expect_false(identical(on$W, off$W))
  # the extrapolated trace never rises (restarts keep the plain iterate)
  expect_true(all(diff(on$loss) <= 1e-12))
})

test_that("the stratified glue stops on the tol it is given (no tol_set)", {
  set.seed(13)
  x <- matrix(runif(30 * 40), 30, 40)
  group <- rep(0:1, each = 20)
  w <- matrix(runif(30 * 2), 30, 2)
  h <- matrix(runif(2 * 40), 2, 40)
  v <- matrix(runif(30 * 2), 30, 2)
  ctl <- list(max_iter = 200L, threads = 1L, eps = 1e-9,
              update = "multiplicative")
  fixed <- nmfkit:::r_nmf_stratified(x, group, w, h, v, "gauss_seidel", 2L,
                                     c(ctl, tol = 0), NULL)
  early <- nmfkit:::r_nmf_stratified(x, group, w, h, v, "gauss_seidel", 2L,
                                     c(ctl, tol = 1e-2), NULL)
  expect_identical(fixed$iterations, 200L)
  expect_lt(early$iterations, 200L)
  # stopped where the relative decrease first fell to tol
  n <- early$iterations
  l <- c(early$initial_loss, early$loss)
  expect_lte(l[n] - l[n + 1], 1e-2 * l[n])
  expect_true(all(l[seq_len(n - 1)] - l[seq_len(n - 1) + 1] >
                    1e-2 * l[seq_len(n - 1)]))
})

test_that("NMFKIT_SIMD=generic, read when the package loads, turns the kernels off", {
  skip_on_cran()
  rscript <- file.path(R.home("bin"), "Rscript")
  out <- system2(rscript, c("-e", shQuote("cat(nmfkit:::r_simd_enabled())")),
                 stdout = TRUE, env = "NMFKIT_SIMD=generic")
  expect_identical(out, "FALSE")
})
