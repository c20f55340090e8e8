# Sparse input: every Matrix class a user may hand in is converted or
# rejected with a classed error, and a dgCMatrix whose slots break the
# compressed-column invariants never reaches the core (it used to segfault).

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
  fd <- nmf(d3, 3)
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
