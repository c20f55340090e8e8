test_that("Kim's score is 1 for a one-hot row and 0 for a uniform row", {
  W <- rbind(one_hot = c(0, 3, 0, 0), uniform = c(2, 2, 2, 2),
             half = c(1, 1, 0, 0), zero = c(0, 0, 0, 0))
  s <- feature_score(W)
  expect_identical(names(s), rownames(W))
  expect_identical(s[["one_hot"]], 1)
  expect_equal(s[["uniform"]], 0, tolerance = 1e-14)
  # two of four components: entropy 1 bit of log2(4) = 2
  expect_equal(s[["half"]], 0.5, tolerance = 1e-14)
  expect_true(is.na(s[["zero"]]))
  # the definition, on a random basis
  W <- withr::with_seed(1, matrix(runif(40) + 0.01, 10, 4))
  p <- W / rowSums(W)
  expect_equal(unname(feature_score(W)),
               1 + rowSums(p * log2(p)) / log2(4), tolerance = 1e-14)
  # a rank-1 basis: every feature is in its only component
  expect_identical(unname(feature_score(W[, 1, drop = FALSE])), rep(1, 10))
})

test_that("Kim's score and selection equal the NMF package's", {
  # computed once with NMF 0.25 (Debian r-cran-nmf), not at test time:
  #   W <- matrix(c(1, 2, 3, 4, 0.5, 0.1, 5, 1, 2, 7, 0.2, 3), 4)
  #   print(NMF::featureScore(W), digits = 15)
  W <- matrix(c(1, 2, 3, 4, 0.5, 0.1, 5, 1, 2, 7, 0.2, 3), 4)
  nmf_scores <- c(0.130084470226374, 0.468071173110547, 0.308133688776758,
                  0.113140492857085)
  expect_equal(unname(feature_score(W)), nmf_scores, tolerance = 1e-13)
  # NMF::extractFeatures(W2) on the basis of the next test gave
  #   list(c(3, 25), c(11, 7), c(33, 20))
  W2 <- withr::with_seed(2, matrix(runif(120, 0.5, 1), 40, 3))
  spec <- c(3, 7, 11, 20, 25, 33)
  W2[spec, ] <- 0.01
  W2[cbind(spec, c(1, 2, 2, 3, 1, 3))] <- c(5, 4, 6, 3, 2, 7)
  sel <- nmfkit:::kim_select(W2)
  expect_identical(unname(split(sel$i, sel$q)),
                   list(c(3L, 25L), c(11L, 7L), c(33L, 20L)))
})

test_that("Kim's selection: median + 3 MAD, each feature under its max component", {
  # 40 features spread over three components, 6 specific ones
  W <- withr::with_seed(2, matrix(runif(120, 0.5, 1), 40, 3))
  spec <- c(3, 7, 11, 20, 25, 33)
  comp <- c(1, 2, 2, 3, 1, 3)
  W[spec, ] <- 0.01
  W[cbind(spec, comp)] <- c(5, 4, 6, 3, 2, 7)
  rownames(W) <- paste0("g", 1:40)
  fit <- structure(list(W = W, rank = 3L), class = c("nmfkit_nmf", "nmfkit"))
  colnames(fit$W) <- paste0("nmf", 1:3)
  tf <- top_features(fit, n = Inf, score = "kim")
  expect_setequal(tf$feature, paste0("g", spec))
  expect_identical(as.integer(tf$component[match(paste0("g", spec),
                                                  tf$feature)]),
                   as.integer(comp))
  # within a component, by weight (as extractFeatures())
  expect_identical(tf$feature[tf$component == "nmf1"], c("g3", "g25"))
  expect_identical(tf$rank[tf$component == "nmf1"], 1:2)
  s <- feature_score(W)
  expect_identical(tf$score, unname(s[tf$feature]))
  expect_true(all(s[tf$feature] > median(s) + 3 * mad(s)))
  expect_identical(nrow(top_features(fit, n = 1, score = "kim")), 3L)
})

test_that("specificity ranks features heavy in a component and only there", {
  W <- rbind(only = c(1, 0), both = c(1, 1), small = c(0.1, 0))
  colnames(W) <- c("nmf1", "nmf2")
  s <- feature_score(W, "specificity")
  expect_identical(dim(s), dim(W))
  expect_identical(dimnames(s), dimnames(W))
  wn <- sweep(W, 2, colSums(W), "/")
  expect_equal(s, wn * wn / rowSums(wn))
  # a feature in one component keeps its (normalised) weight
  expect_equal(s["only", 1], wn["only", 1])
  x <- small_data()
  set.seed(1)
  fit <- nmf(x, 3)
  tf <- top_features(fit, n = 4, score = "specificity")
  expect_identical(names(tf), c("component", "rank", "feature", "value",
                                "score"))
  sc <- feature_score(fit, "specificity")
  for (q in colnames(sc)) {
    top <- names(sort(sc[, q], decreasing = TRUE))[1:4]
    expect_identical(tf$feature[tf$component == q], top)
  }
  expect_identical(tf$value, basis(fit)[cbind(tf$feature,
                                              as.character(tf$component))])
  # the weight ranking is unchanged
  expect_identical(names(top_features(fit, n = 2)),
                   c("component", "rank", "feature", "value"))
  # stratified fits: the strata's shifts and the basis
  f <- contract_fixtures()
  expect_true("score" %in% names(top_features(f$sfit, score = "specificity")))
  expect_identical(levels(top_features(f$sfit, score = "kim",
                                       which = "basis")$component),
                   colnames(basis(f$sfit)))
})

test_that("feature scores reject what is not a basis", {
  expect_error(feature_score("a"), class = "nmfkit_error_type")
  expect_error(feature_score(matrix(-1, 2, 2)), class = "nmfkit_error_value")
  expect_error(feature_score(matrix(NA_real_, 2, 2)),
               class = "nmfkit_error_value")
  expect_error(feature_score(diag(2), method = "entropy"),
               class = "nmfkit_error_choice")
  fit <- nmf(small_data(), 2)
  expect_error(top_features(fit, score = "kimm"),
               class = "nmfkit_error_choice")
  expect_error(top_features(fit, n = -1), class = "nmfkit_error_count")
})

test_that("feature scores do not depend on the scale of W, to the largest doubles", {
  W <- withr::with_seed(1, nmf(small_data(), 3))$W
  for (s in c(2^-1060, 1e-300, 1e300, .Machine$double.xmax / max(W))) {
    # against the same entries at scale 1 (denormals keep fewer bits)
    kim <- feature_score(W * s / s, "kim")
    spec <- feature_score(W * s / s, "specificity")
    expect_equal(feature_score(W * s, "kim"), kim, tolerance = 1e-10,
                 info = format(s))
    expect_equal(feature_score(W * s, "specificity"), spec,
                 tolerance = 1e-10, info = format(s))
  }
})
