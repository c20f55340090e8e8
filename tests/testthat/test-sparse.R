# Sparse input: every Matrix class a user may hand in is converted or
# rejected with a classed error, and a dgCMatrix whose slots break the
# compressed-column invariants never reaches the core (which would read
# out of bounds).

# Malformed copies of a valid 12 x 10 dgCMatrix, one defect each.
broken_sparse <- function() {
  good <- withr::with_seed(3, Matrix::rsparsematrix(12, 10, 0.5))
  good@x <- abs(good@x) + 0.1
  col2 <- (good@p[2] + 1L):good@p[3]
  list(
    good = good,
    row_past_nrow = local({ y <- good; y@i[1] <- 50L; y }),
    negative_row = local({ y <- good; y@i[1] <- -1L; y }),
    unsorted_rows = local({ y <- good; y@i[col2[1:2]] <- y@i[col2[2:1]]; y }),
    duplicate_rows = local({ y <- good; y@i[col2[2]] <- y@i[col2[1]]; y }),
    p_decreasing = local({ y <- good; y@p[3] <- y@p[2] - 1L; y }),
    x_shorter = local({ y <- good; y@x <- y@x[-1]; y }),
    p_ends_early = local({ y <- good; y@p[11] <- y@p[11] - 1L; y }),
    p_ends_late = local({ y <- good; y@p[11] <- y@p[11] + 1L; y })
  )
}

test_that("a malformed dgCMatrix is a classed error at every entry point", {
  b <- broken_sparse()
  good <- b$good
  set.seed(1)
  fit <- nmf(good, 2)
  jfit <- nmf_joint(good, good, rank = 2)
  strata <- factor(rep(c("a", "b"), 5))
  sfit <- nmf_stratified(good, strata = strata, rank = 2)
  dense <- as.matrix(good)
  for (defect in setdiff(names(b), "good")) {
    y <- b[[defect]]
    info <- paste("defect:", defect)
    expect_error(nmf(y, 2), class = "nmfkit_error_sparse", info = info)
    expect_error(nmf_joint(y, good, rank = 2), class = "nmfkit_error_sparse",
                 info = info)
    expect_error(nmf_joint(good, y, rank = 2), class = "nmfkit_error_sparse",
                 info = info)
    expect_error(nmf_stratified(y, strata = strata, rank = 2),
                 class = "nmfkit_error_sparse", info = info)
    expect_error(nmf_stratified(list(a = y, b = good), rank = 2),
                 class = "nmfkit_error_sparse", info = info)
    expect_error(nmf_shift(y, 1, image_dim = c(3, 4)),
                 class = "nmfkit_error_sparse", info = info)
    expect_error(nmf_wasserstein(y, 2), class = "nmfkit_error_sparse",
                 info = info)
    expect_error(predict(fit, y), class = "nmfkit_error_sparse", info = info)
    expect_error(predict(jfit, y), class = "nmfkit_error_sparse", info = info)
    expect_error(predict(sfit, y, strata = strata),
                 class = "nmfkit_error_sparse", info = info)
    expect_error(residuals(fit, x = y), class = "nmfkit_error_sparse",
                 info = info)
    expect_error(chamfer_distance(y, dense), class = "nmfkit_error_sparse",
                 info = info)
    expect_error(nmf_distance(list(a = good, b = y), rank = 2),
                 class = "nmfkit_error_sparse", info = info)
    expect_error(nmf_joint_test(good, y, rank = 2, B = 2),
                 class = "nmfkit_error_sparse", info = info)
    expect_error(ot_distance(y, good), class = "nmfkit_error_sparse",
                 info = info)
  }
})

test_that("the sparse error names the argument and the defect", {
  b <- broken_sparse()
  expect_snapshot(error = TRUE, {
    nmf(b$row_past_nrow, 2)
    nmf_joint(b$good, b$unsorted_rows, rank = 2)
    nmf(b$p_ends_early, 2)
  })
})

test_that("numeric Matrix classes are accepted, pattern and logical are not", {
  x <- small_data(m = 12, n = 10)
  x[x < 0.5] <- 0
  ref <- Matrix::Matrix(x, sparse = TRUE)
  d3 <- Matrix::Matrix(diag(3), sparse = TRUE)
  expect_s4_class(d3, "ddiMatrix")
  set.seed(1)
  # (a third nonzero: method "auto" is ANLS, whose random start ends in a
  # local minimum here; HALS from NNDSVDa finds the exact fit)
  fd <- nmf(d3, 3, method = "hals")
  expect_s3_class(fd, "nmfkit")
  expect_equal(fitted(fd), diag(3), tolerance = 1e-3, ignore_attr = TRUE)
  unit <- Matrix::Diagonal(4)
  expect_s3_class(withr::with_seed(1, nmf(unit, 2)), "nmfkit")
  sym <- Matrix::forceSymmetric(Matrix::Matrix(crossprod(x), sparse = TRUE))
  expect_s4_class(sym, "dsCMatrix")
  classes <- list(
    dgTMatrix = as(ref, "TsparseMatrix"),
    dgRMatrix = as(ref, "RsparseMatrix"),
    dgeMatrix = Matrix::Matrix(x, sparse = FALSE)
  )
  set.seed(2)
  # method "auto" depends on dense/sparse storage: compare one method
  want <- nmf(ref, 2, method = "hals")
  for (cl in names(classes)) {
    expect_true(is(classes[[cl]], cl), info = cl)
    set.seed(2)
    got <- nmf(classes[[cl]], 2, method = "hals")
    expect_equal(got$W, want$W, tolerance = 1e-10, info = cl)
  }
  set.seed(1)
  fs <- nmf(sym, 2)
  expect_equal(dim(fs$W), c(10L, 2L))
  fit <- withr::with_seed(1, nmf(x, 2))
  expect_equal(predict(fit, classes$dgTMatrix), predict(fit, x),
               tolerance = 1e-10)
  pattern <- as(ref, "nMatrix")
  logical <- ref > 0
  expect_s4_class(pattern, "ngCMatrix")
  expect_s4_class(logical, "lgCMatrix")
  expect_error(nmf(pattern, 2), class = "nmfkit_error_type")
  expect_error(nmf(logical, 2), class = "nmfkit_error_type")
  msg <- tryCatch(nmf(pattern, 2), nmfkit_error = conditionMessage)
  expect_match(msg, "x * 1", fixed = TRUE)
  # the advice works
  expect_s3_class(withr::with_seed(1, nmf(pattern * 1, 2)), "nmfkit")
  expect_snapshot(nmf(pattern, 2), error = TRUE)
})

test_that("the default solver depends on the data, not on its storage", {
  set.seed(1)
  xs <- Matrix::rsparsematrix(120, 80, 0.1, rand.x = runif)
  set.seed(2)
  a <- nmf(as.matrix(xs), 5)
  set.seed(2)
  b <- nmf(xs, 5)
  expect_identical(a$method, "hals")
  expect_identical(b$method, "hals")
  expect_identical(a$W, b$W)
  expect_identical(a$H, b$H)
  # dense enough: ANLS in both storages, the same fit up to rounding
  x <- matrix(runif(40 * 30), 40)
  set.seed(2)
  a <- nmf(x, 3)
  set.seed(2)
  b <- nmf(Matrix::Matrix(x, sparse = TRUE), 3)
  expect_identical(c(a$method, b$method), c("anls", "anls"))
  expect_equal(fitted(a), fitted(b), tolerance = 1e-10)
  expect_lt(nonzero_share(as.matrix(xs)), 0.25)
  expect_equal(nonzero_share(as.matrix(xs)), nonzero_share(xs))
})

test_that("sparse weights stay sparse and weigh only their stored entries", {
  set.seed(1)
  s <- Matrix::rsparsematrix(30, 20, 0.4, rand.x = runif)
  s[1, ] <- 1
  s[, 1] <- 1
  w <- s
  w@x <- runif(length(w@x)) + 0.5
  a <- masked_setup(s, w, NULL)
  expect_s4_class(a$x, "dgCMatrix")
  expect_identical(a$base, 0)
  expect_equal(a$delta, w@x)
  expect_equal(a$value, s@x)
  ctl <- nmf_control(tol = 1e-10, max_iter = 300)
  set.seed(3)
  f1 <- suppressWarnings(nmf(s, 2, weights = w, control = ctl))
  set.seed(3)
  f2 <- suppressWarnings(nmf(s, 2, weights = as.matrix(w), control = ctl))
  expect_equal(f1$W, f2$W, tolerance = 1e-12)
  # the loss is the weighted one of the stored entries
  r <- as.matrix(s) - fitted(f1)
  wd <- as.matrix(w)
  expect_equal(utils::tail(f1$loss, 1),
               sqrt(sum(wd * r^2) / sum(wd * as.matrix(s)^2)),
               tolerance = 1e-6)
  # NA and masked entries weigh 0 even where weights store a weight
  s2 <- s
  s2[2, 1] <- NA
  mk <- matrix(FALSE, 30, 20)
  mk[3, ] <- TRUE
  mk[3, 1] <- FALSE
  a2 <- masked_setup(s2, w, mk)
  expect_false(any(a2$i == 1 & a2$j == 0))
  expect_false(any(a2$i == 2 & a2$j > 0))
  expect_true(any(a2$i == 2 & a2$j == 0))
})

test_that("sparse weights are never densified (1e5 x 1e5, 2e5 stored)", {
  n <- 1e5
  set.seed(1)
  i <- c(seq_len(n), sample.int(n, n))
  j <- c(seq_len(n), sample.int(n, n))
  s <- Matrix::sparseMatrix(i, j, x = runif(2 * n) + 0.1, dims = c(n, n))
  w <- s
  w@x <- runif(length(w@x)) + 0.5
  # a dense copy of either would take 75 GB
  f <- suppressWarnings(nmf(s, 2, weights = w,
                            control = nmf_control(max_iter = 3)))
  expect_identical(f$entry_weights$base, 0)
  expect_equal(f$entry_weights$delta, w@x)
})
