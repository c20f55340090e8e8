test_that("wrong types are classed errors naming the argument", {
  x <- small_data()
  expect_error(nmf(matrix(letters[1:6], 2), 1), class = "nmfkit_error_type")
  expect_error(nmf(list(1, 2), 1), class = "nmfkit_error")
  expect_error(nmf(matrix(TRUE, 2, 2), 1), class = "nmfkit_error_type")
  df <- data.frame(a = 1:3, b = factor(c("u", "v", "w")))
  expect_error(nmf(df, 1), class = "nmfkit_error_type")
  expect_snapshot(nmf(df, 1), error = TRUE)
  expect_snapshot(nmf("a", 1), error = TRUE)
})

test_that("NA, NaN and Inf are rejected with their count and place", {
  x <- small_data()
  for (bad in list(NA, NaN, Inf, -Inf)) {
    y <- x
    y[3, 4] <- bad
    expect_error(nmf(y, 2), class = "nmfkit_error_nonfinite")
  }
  y <- x
  y[3, 4] <- NA
  y[5, 6] <- Inf
  expect_snapshot(nmf(y, 2), error = TRUE)
  ys <- Matrix::Matrix(y, sparse = TRUE)
  expect_error(nmf(ys, 2), class = "nmfkit_error_nonfinite")
})

test_that("negative entries are rejected with count and first location", {
  x <- small_data()
  x[7, 2] <- -0.2
  x[1, 9] <- -0.05
  expect_error(nmf(x, 2), class = "nmfkit_error_negative")
  expect_snapshot(nmf(x, 2), error = TRUE)
  xs <- Matrix::Matrix(x, sparse = TRUE)
  err <- tryCatch(nmf(xs, 2), nmfkit_error = function(e) conditionMessage(e))
  expect_match(err, "-0.2 at \\[7, 2\\]")
})

test_that("empty and all-zero data are rejected", {
  expect_error(nmf(matrix(numeric(0), 0, 3), 1), class = "nmfkit_error_empty")
  expect_error(nmf(matrix(numeric(0), 3, 0), 1), class = "nmfkit_error_empty")
  expect_error(nmf(matrix(0, 4, 3), 1), class = "nmfkit_error_zero")
  expect_error(nmf(Matrix::Matrix(0, 4, 3, sparse = TRUE), 1),
               class = "nmfkit_error_zero")
  expect_snapshot(nmf(matrix(0, 4, 3), 1), error = TRUE)
})

test_that("rank must be a whole number from 1 to min(dim(x))", {
  x <- small_data()
  # (a pair c(lo, hi) is a range for the rank search: test-rank-search.R)
  for (r in list(0, -1, 2.5, 21, NA, "3", c(2, 3, 4), c(3, 2), Inf)) {
    expect_error(nmf(x, r), class = "nmfkit_error_rank")
  }
  expect_snapshot(nmf(x, 21), error = TRUE)
  expect_snapshot(nmf(x, 2.5), error = TRUE)
})

test_that("user starting factors are checked for shape and sign", {
  x <- small_data()
  good <- list(W = matrix(1, 30, 2), H = matrix(1, 2, 20))
  expect_error(nmf(x, 2, init = list(W = matrix(1, 29, 2), H = good$H)),
               class = "nmfkit_error_init")
  expect_error(nmf(x, 2, init = list(W = good$W, H = matrix(1, 3, 20))),
               class = "nmfkit_error_init")
  expect_error(nmf(x, 2, init = list(W = -good$W, H = good$H)),
               class = "nmfkit_error_init")
  expect_error(nmf(x, 2, init = list(W = good$W)), class = "nmfkit_error_init")
  expect_error(nmf(x, 2, init = "svd"), class = "nmfkit_error_init")
  expect_snapshot(nmf(x, 2, init = list(W = matrix(1, 29, 2), H = good$H)),
                  error = TRUE)
})

test_that("sparse matrices of unsupported classes are rejected", {
  x <- small_data() > 0.5
  pattern <- as(Matrix::Matrix(x, sparse = TRUE), "nMatrix")
  logical <- Matrix::Matrix(x, sparse = TRUE)
  expect_error(nmf(pattern, 2), class = "nmfkit_error_type")
  expect_error(nmf(logical, 2), class = "nmfkit_error_type")
  # numeric sparse in other layouts is converted, not rejected
  trip <- as(Matrix::Matrix(small_data(), sparse = TRUE), "TsparseMatrix")
  set.seed(1)
  expect_s3_class(nmf(trip, 2), "nmfkit")
})

test_that("control settings are validated", {
  expect_error(nmf_control(threads = 0), class = "nmfkit_error")
  expect_error(nmf_control(threads = 1.5), class = "nmfkit_error")
  expect_error(nmf_control(tol = -1), class = "nmfkit_error")
  expect_error(nmf_control(max_iter = 0), class = "nmfkit_error")
  expect_error(nmf_control(verbose = NA), class = "nmfkit_error")
  expect_error(nmf_control(inner = 0), class = "nmfkit_error_control")
  expect_error(nmf_control(1e-4, 10, 1, FALSE, NULL, 99), class = "nmfkit_error_control")
  expect_error(nmf(small_data(), 2, control = 5), class = "nmfkit_error_control")
  expect_snapshot(nmf_control(threads = 0), error = TRUE)
  expect_snapshot(nmf_control(tol = -1), error = TRUE)
  ctl <- nmf_control(max_iter = 10, eps = 3)
  expect_identical(ctl$eps, 3)
  expect_s3_class(nmf(small_data(), 2, control = list(max_iter = 2)), "nmfkit")
  expect_snapshot(print(nmf_control()))
})

test_that("method, nrun and keep_data are validated", {
  x <- small_data()
  expect_error(nmf(x, 2, method = "als"), class = "nmfkit_error_choice")
  expect_error(nmf(x, 2, nrun = 0), class = "nmfkit_error")
  expect_error(nmf(x, 2, keep_data = "yes"), class = "nmfkit_error_flag")
})

test_that("user matrices are checked for finite, nonnegative entries one way", {
  # starting factors, fixed components and a basis given to feature_score()
  # go through the data's own checks: the class of their argument, the
  # count of bad entries and where the first is
  x <- small_data()
  msg <- function(expr, class) {
    cnd <- rlang::catch_cnd(expr, "nmfkit_error")
    expect_s3_class(cnd, class)
    cli::ansi_strip(conditionMessage(cnd))
  }
  w <- matrix(1, nrow(x), 2)
  w[5, 1] <- -1
  m <- msg(nmf(x, 2, init = list(W = w, H = matrix(1, 2, ncol(x)))),
           "nmfkit_error_init")
  expect_match(m, "`init$W` has 1 negative entry", fixed = TRUE)
  expect_match(m, "[5, 1]", fixed = TRUE)
  m <- msg(nmf(x, 2, fixed = list(W = replace(matrix(1, nrow(x), 1), 3, NA))),
           "nmfkit_error_fixed")
  expect_match(m, "`fixed$W` has 1 such entry (1 NA)", fixed = TRUE)
  expect_match(m, "[3, 1]", fixed = TRUE)
  m <- msg(feature_score(replace(matrix(1, 5, 2), 2, Inf)),
           "nmfkit_error_value")
  expect_match(m, "1 infinite", fixed = TRUE)
  expect_match(m, "[2, 1]", fixed = TRUE)
})
