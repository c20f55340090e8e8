test_that("match_components() recovers a random permutation exactly", {
  p <- planted_nmf(60, 50, 6, seed = 4)
  W <- p$W0
  colnames(W) <- paste0("nmf", 1:6)
  perm <- withr::with_seed(5, sample(6))
  scale <- c(2, 0.5, 3, 1, 7, 0.1)
  W2 <- sweep(W[, perm], 2, scale, "*")
  m <- match_components(W, W2)
  expect_s3_class(m, "nmfkit_match")
  # W2[, m$permutation] lines up with W
  expect_identical(unname(m$permutation), order(perm))
  expect_equal(unname(m$similarity), rep(1, 6), tolerance = 1e-14)
  expect_identical(dim(m$cosine), c(6L, 6L))
  expect_identical(m$table$component2, colnames(W2)[m$permutation])
  # the largest total similarity over all 120 pairings of random bases
  A <- withr::with_seed(7, matrix(runif(50), 10, 5))
  B <- withr::with_seed(8, matrix(runif(50), 10, 5))
  m2 <- match_components(A, B)
  perms <- as.matrix(expand.grid(rep(list(1:5), 5)))
  perms <- perms[apply(perms, 1, function(r) !anyDuplicated(r)), ]
  totals <- apply(perms, 1, function(r) sum(m2$cosine[cbind(1:5, r)]))
  expect_equal(sum(m2$similarity), max(totals), tolerance = 1e-14)
})

test_that("match_components() pairs two fits and handles unequal ranks", {
  x <- planted_nmf(40, 30, 4, seed = 6)$x
  rownames(x) <- paste0("f", 1:40)
  set.seed(2)
  f1 <- nmf(x, 4, control = nmf_control(tol = 1e-10, max_iter = 2000))
  f2 <- nmf(x, 4, control = nmf_control(tol = 1e-10, max_iter = 2000))
  m <- match_components(f1, f2)
  expect_true(all(m$similarity > 0.99))
  expect_identical(sort(unname(m$permutation)), 1:4)
  expect_identical(names(m$permutation), colnames(basis(f1)))
  # rank 3 against rank 4: three pairs; the other way round one unmatched
  f3 <- nmf(x, 3)
  m34 <- match_components(f3, f1)
  expect_false(anyNA(m34$permutation))
  expect_identical(anyDuplicated(m34$permutation), 0L)
  m43 <- match_components(f1, f3)
  expect_identical(sum(is.na(m43$permutation)), 1L)
  expect_identical(sort(unname(m43$permutation)), 1:3)
  expect_output(print(m), "4 of 4 components matched")
})

test_that("match_components() rejects fits of other features", {
  x <- small_data()
  f1 <- nmf(x, 2)
  expect_error(match_components(f1, nmf(x[-1, ], 2)),
               class = "nmfkit_error_dimension")
  y <- x
  rownames(y) <- rev(rownames(x))
  expect_error(match_components(f1, nmf(y, 2)),
               class = "nmfkit_error_dimension")
  expect_error(match_components(f1, "a"), class = "nmfkit_error_type")
  expect_error(match_components(list(), f1), class = "nmfkit_error_type")
  expect_error(match_components(f1, -basis(f1)), class = "nmfkit_error_value")
  expect_error(print(match_components(f1, f1), digits = 0),
               class = "nmfkit_error_count")
})

test_that("a fit matches itself with cosine 1 at every scale", {
  fit <- withr::with_seed(1, nmf(small_data(), 3))
  for (s in c(2^-1060, 1e-300, 1e-160, 1, 1e160, 1e300, 2^1023)) {
    W <- fit$W / max(fit$W) * s
    m <- match_components(W, W)
    expect_equal(unname(m$similarity), rep(1, 3), tolerance = 1e-12,
                 info = format(s))
    expect_identical(unname(m$permutation), 1:3)
    # against the same entries at scale 1 (denormals keep fewer bits)
    back <- W / s
    expect_equal(m$cosine, match_components(back, back)$cosine,
                 tolerance = 1e-12, info = format(s))
  }
})
