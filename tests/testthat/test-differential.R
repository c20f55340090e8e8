# nmf_differential(): feature-level permutation tests for joint and
# stratified fits.

ctl1 <- function(...) nmf_control(threads = 1, ...)

test_that("joint statistics: studentised loading differences and p-bar", {
  d <- withr::with_seed(1, diff_joint_planted())
  fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3, control = ctl1()))
  dt <- withr::with_seed(2, nmf_differential(fit, B = 19))
  expect_s3_class(dt, "nmfkit_differential")
  tab <- dt$table
  expect_named(tab, c("feature", "component", "estimate", "statistic",
                      "p_value", "p_adjusted", "permutations"))
  expect_identical(tab$feature, rep(rownames(d$x1), 3))
  expect_identical(dt$type, "joint")
  expect_identical(dt$B, 19L)
  # the components' test is of p-bar, the closed form on H
  expect_named(dt$components, c("component", "p_bar", "p_value",
                                "p_adjusted", "permutations"))
  expect_equal(dt$components$p_bar, unname(fit$p), tolerance = 1e-10)
  # the statistic is the studentised difference of the two sets' own
  # least-squares loadings on H (aligned: with planted data whose sets
  # share the basis, the median ratio is near 1)
  H <- fit$H
  X <- fit$data
  s1 <- fit$set == levels(fit$set)[1]
  own <- function(cols) {
    Hs <- H[, cols]
    Xs <- as.matrix(X[, cols])
    Gi <- solve(tcrossprod(Hs))
    W <- Xs %*% t(Hs) %*% Gi
    rss <- rowSums((Xs - W %*% Hs)^2)
    list(W = W, v = outer(rss / (sum(cols) - 3), diag(Gi)))
  }
  a <- own(s1)
  b <- own(!s1)
  raw <- (a$W - b$W) / sqrt(a$v + b$v)
  # with the alignment the statistic moves little from the raw one here
  expect_gt(cor(as.vector(raw), tab$statistic), 0.95)
})

test_that("p-values are Besag-Clifford sequential, BH is p.adjust", {
  d <- withr::with_seed(1, diff_joint_planted(effect = 2))
  fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3, control = ctl1()))
  s <- withr::with_seed(1, diff_stratified_planted())
  sfit <- withr::with_seed(1, nmf_stratified(s$x, rank = 3,
                                             control = ctl1(update = "hals")))
  for (dt in list(withr::with_seed(3, nmf_differential(fit, B = 99)),
                  withr::with_seed(3, nmf_differential(sfit, B = 29)))) {
    tab <- tidy(dt)
    B <- dt$B
    expect_true(all(tab$permutations >= 1 & tab$permutations <= B))
    expect_true(all(tab$p_value >= 1 / (B + 1) & tab$p_value <= 1))
    # stopped early: 10 exceedances in L permutations, p = 10 / L
    early <- tab$permutations < B
    expect_equal(tab$p_value[early], 10 / tab$permutations[early])
    # ran to B: (1 + count) / (B + 1), a whole count below 10 (or the
    # 10th exceedance came at the last permutation: 10 / B)
    p_all <- tab$p_value[!early]
    cnt <- p_all * (B + 1) - 1
    whole <- abs(cnt - round(cnt)) < 1e-9 & cnt < 9.5
    expect_true(all(whole | abs(p_all - 10 / B) < 1e-12))
    expect_identical(tab$p_adjusted, stats::p.adjust(tab$p_value, "BH"))
    expect_true(all(tab$p_adjusted >= tab$p_value))
  }
  # the default B lets 1 / (B + 1) pass Bonferroni at 5 %
  dt <- withr::with_seed(3, nmf_differential(fit))
  expect_identical(dt$B, as.integer(ceiling(20 * 180)))
  expect_lt(1 / (dt$B + 1), 0.05 / 180)
  # an unseeded session keeps its RNG kind
  withr::with_preserve_seed({
    if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) {
      rm(".Random.seed", envir = globalenv())
    }
    kind <- RNGkind()[1]
    nmf_differential(sfit, B = 2)
    expect_identical(RNGkind()[1], kind)
  })
})

test_that("features whose loadings do not differ are not flagged", {
  # issue 36: set 2's basis differs in a tenth of one component's
  # features; the component's other features and the other components
  # must not be discoveries (the old component-level null flagged them all)
  d <- withr::with_seed(21, diff_joint_features())
  fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3,
                                       normalize = FALSE, control = ctl1()))
  comp <- which.max(colSums(fit$W[d$block, ]))
  dt <- withr::with_seed(5, nmf_differential(fit))
  tab <- dt$table
  ci <- as.integer(tab$component)
  f <- match(tab$feature, rownames(d$x1))
  planted <- ci == comp & f %in% d$planted
  hit <- tab$p_adjusted < 0.05
  expect_true(all(hit[planted]))
  expect_true(all(tab$estimate[planted] < 0))   # heavier in set 2
  expect_lte(sum(hit & !planted), 1)
  # a difference of use alone is the components' finding, not the features'
  u <- withr::with_seed(22, diff_joint_features(frac = 0, usage = 3))
  ufit <- withr::with_seed(1, nmf_joint(u$x1, u$x2, rank = 3,
                                        normalize = FALSE, control = ctl1()))
  du <- withr::with_seed(6, nmf_differential(ufit))
  ucomp <- which.max(colSums(ufit$W[u$block, ]))
  expect_lt(du$components$p_adjusted[ucomp], 0.05)
  expect_lt(du$components$p_bar[ucomp], 0)
  expect_lte(sum(du$table$p_adjusted < 0.05), 1)
})

test_that("cells of features that do not differ keep their level", {
  # bench/differential-fdr.R: over 200 data sets (no effect, or a tenth of
  # one component's features 1.5 to 3 times heavier in set 2) the share of
  # p <= 0.05 among the cells of features that do not differ was .052
  # (SE .002 per row), and BH's FDR at 5 % was within its SE of .05. Eight
  # data sets here, four null and four planted, pooled (~2,000 cells; SE of
  # the share about .005, more with dependence; .051 measured): the old
  # component-level null gave about .9
  share <- vapply(1:8, function(r) {
    d <- withr::with_seed(40 + r, diff_joint_features(
      effect = if (r > 4) 3 else 1, frac = if (r > 4) 0.1 else 0))
    fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3,
                                         normalize = FALSE,
                                         control = ctl1()))
    tab <- withr::with_seed(r, nmf_differential(fit, B = 199))$table
    f <- match(tab$feature, rownames(d$x1))
    null <- !(f %in% d$planted) & tab$statistic != 0
    c(sum(tab$p_value[null] <= 0.05), sum(null))
  }, numeric(2))
  rate <- sum(share[1, ]) / sum(share[2, ])
  expect_gte(rate, 0.03)
  expect_lte(rate, 0.075)
})

test_that("stratified statistics are centred shifts", {
  s <- withr::with_seed(1, diff_stratified_planted(strata = 3))
  sfit <- withr::with_seed(1, nmf_stratified(s$x, rank = 3,
                                             control = ctl1(update = "hals")))
  dt <- withr::with_seed(1, nmf_differential(sfit, B = 9))
  tab <- dt$table
  expect_named(tab, c("feature", "stratum", "estimate", "statistic",
                      "p_value", "p_adjusted", "permutations"))
  expect_identical(tab$feature, rep(paste0("f", 1:60), 3))
  expect_identical(levels(tab$stratum), c("a", "b", "c"))
  V <- sfit$V
  expect_equal(tab$statistic, as.vector(V - rowMeans(V)), tolerance = 1e-14)
  expect_identical(tab$estimate, tab$statistic)
  expect_equal(as.vector(tapply(tab$statistic, tab$feature, sum)),
               rep(0, 60), tolerance = 1e-12)
  # the matrix-and-factor form of the same data gives the same table
  xm <- do.call(cbind, s$x)
  g <- rep(names(s$x), each = 30)
  dt2 <- withr::with_seed(1, nmf_differential(sfit, B = 9, x = xm))
  expect_identical(dt2$table, dt$table)
})

test_that("a planted stratum shift is found at its features, not elsewhere", {
  s <- withr::with_seed(7, diff_stratified_planted(effect = 5))
  sfit <- withr::with_seed(1, nmf_stratified(s$x, rank = 3,
                                             control = ctl1(update = "hals")))
  dt <- withr::with_seed(8, nmf_differential(sfit, B = 399))
  tab <- dt$table
  f <- match(tab$feature, paste0("f", 1:60))
  planted <- tab$stratum == s$stratum & f %in% s$planted
  expect_true(all(tab$p_adjusted[planted] < 0.05))
  expect_true(all(tab$statistic[planted] > 0))
  # features without a planted shift, in every stratum
  elsewhere <- !f %in% s$planted
  expect_lt(mean(tab$p_adjusted[elsewhere] < 0.05), 0.1)
  # the other strata at the planted features: if flagged, then below the mean
  mirror <- f %in% s$planted & tab$stratum != s$stratum &
    tab$p_adjusted < 0.05
  expect_true(all(tab$statistic[mirror] < 0))
})

test_that("set.seed reproduces, and 1 or 2 threads give the same table", {
  d <- withr::with_seed(1, diff_joint_planted())
  s <- withr::with_seed(1, diff_stratified_planted())
  for (th in 1:2) {
    fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3,
                                         control = nmf_control(threads = th)))
    sfit <- withr::with_seed(1, nmf_stratified(
      s$x, rank = 3, control = nmf_control(threads = th, max_iter = 30)))
    j <- withr::with_seed(4, nmf_differential(fit, B = 9))
    st <- withr::with_seed(4, nmf_differential(sfit, B = 9))
    if (th == 1) {
      j1 <- j
      st1 <- st
      expect_identical(withr::with_seed(4, nmf_differential(fit, B = 9))$table,
                       j$table)
      expect_identical(withr::with_seed(4, nmf_differential(sfit, B = 9))$table,
                       st$table)
    }
  }
  expect_identical(j$table, j1$table)
  expect_identical(st$table, st1$table)
})

test_that("sequential and multisession plans give the same table", {
  skip_if_not_installed("future")
  skip_on_cran()
  d <- withr::with_seed(1, diff_joint_planted())
  s <- withr::with_seed(1, diff_stratified_planted())
  fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3, control = ctl1()))
  sfit <- withr::with_seed(1, nmf_stratified(s$x, rank = 3,
                                             control = ctl1(max_iter = 30)))
  old <- future::plan(future::sequential)
  on.exit(future::plan(old), add = TRUE)
  j <- withr::with_seed(6, nmf_differential(fit, B = 7))
  st <- withr::with_seed(6, nmf_differential(sfit, B = 7))
  ok <- tryCatch({
    future::plan(future::multisession, workers = 2)
    future::value(future::future(requireNamespace("nmfkit")))
  }, error = function(e) FALSE)
  if (!isTRUE(ok)) skip("multisession workers cannot start or load nmfkit")
  expect_identical(withr::with_seed(6, nmf_differential(fit, B = 7))$table,
                   j$table)
  expect_identical(withr::with_seed(6, nmf_differential(sfit, B = 7))$table,
                   st$table)
})

test_that("data come from the fit or from x", {
  d <- withr::with_seed(1, diff_joint_planted())
  # (with_seed: NNDSVDa's SVD starts from a vector drawn from R's RNG)
  fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3,
                                       normalize = FALSE, control = ctl1()))
  lean <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3,
                                        normalize = FALSE, control = ctl1(),
                                        keep_data = FALSE))
  expect_error(nmf_differential(lean, B = 3), class = "nmfkit_error_data")
  a <- withr::with_seed(2, nmf_differential(fit, B = 5))
  b <- withr::with_seed(2, nmf_differential(lean, B = 5,
                                            x = list(d$x1, d$x2)))
  expect_identical(a$table, b$table)
  # normalised fits: the raw sets are normalised as the fit did
  nfit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3, control = ctl1()))
  a <- withr::with_seed(2, nmf_differential(nfit, B = 5))
  b <- withr::with_seed(2, nmf_differential(nfit, B = 5,
                                            x = list(d$x1, d$x2)))
  expect_equal(a$table, b$table, tolerance = 1e-10)
  s <- withr::with_seed(1, diff_stratified_planted())
  slean <- withr::with_seed(1, nmf_stratified(s$x, rank = 3,
                                              control = ctl1(max_iter = 20),
                                              keep_data = FALSE))
  expect_error(nmf_differential(slean, B = 3), class = "nmfkit_error_data")
  expect_s3_class(nmf_differential(slean, B = 3, x = s$x),
                  "nmfkit_differential")
})

test_that("methods print, summarise, tidy and plot", {
  s <- withr::with_seed(7, diff_stratified_planted(effect = 5))
  sfit <- withr::with_seed(1, nmf_stratified(s$x, rank = 3,
                                             control = ctl1(update = "hals")))
  dt <- withr::with_seed(8, nmf_differential(sfit, B = 99))
  expect_output(print(dt), "stratified NMF, up to 99 permutations")
  expect_output(print(dt, n = 2), "stratum")
  sm <- summary(dt, alpha = 0.2)
  expect_s3_class(sm, "summary.nmfkit_differential")
  expect_identical(sm$discoveries, sum(dt$table$p_adjusted < 0.2))
  expect_identical(sum(sm$by$discoveries), sm$discoveries)
  expect_output(print(sm), "tests with BH-adjusted p < 0.2")
  td <- tidy(dt)
  expect_s3_class(td, "data.frame")
  expect_false(inherits(td, "tbl_df"))
  expect_identical(nrow(td), 180L)
  # glance() and augment() (issue 36)
  g <- glance(dt)
  expect_identical(nrow(g), 1L)
  expect_identical(g$discoveries, sum(td$p_adjusted < 0.05))
  expect_identical(g$tests, 180L)
  a <- augment(dt, alpha = 0.2)
  expect_identical(a$feature, paste0("f", 1:60))
  padj <- matrix(td$p_adjusted, 60)
  expect_identical(a$.discoveries, rowSums(padj < 0.2))
  expect_identical(a$.p_adjusted, apply(padj, 1, min))
  expect_identical(levels(a$.where), c("a", "b", "c"))
  ann <- data.frame(gene = paste0("f", 1:60))
  expect_identical(augment(dt, data = ann)$gene, ann$gene)
  expect_error(augment(dt, data = ann[1:3, , drop = FALSE]),
               class = "nmfkit_error_data")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(dt), dt)
  expect_identical(plot(dt, alpha = 0.5, top = 0), dt)
})

test_that("bad inputs give classed errors", {
  d <- withr::with_seed(1, diff_joint_planted())
  fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3, control = ctl1()))
  expect_error(nmf_differential(), class = "nmfkit_error_missing")
  expect_error(nmf_differential(d$x1), class = "nmfkit_error_type")
  err <- tryCatch(nmf_differential(nmf(d$x1, 2)), nmfkit_error = identity)
  expect_s3_class(err, "nmfkit_error_type")
  expect_match(conditionMessage(err), "nmfkit_nmf")
  expect_match(conditionMessage(err), "nmfkit_stratified")
  expect_error(nmf_differential(fit, B = 0), class = "nmfkit_error_count")
  expect_error(nmf_differential(fit, B = 2.5), class = "nmfkit_error_count")
  expect_error(nmf_differential(fit, B = NA), class = "nmfkit_error_count")
  expect_error(nmf_differential(fit, B = 3, bee = 2),
               class = "nmfkit_error_dots")
  expect_error(nmf_differential(fit, B = 3, x = d$x1),
               class = "nmfkit_error_data")
  expect_error(nmf_differential(fit, B = 3, x = list(d$x1, d$x2[, 1:3])),
               class = "nmfkit_error_dimension")
  expect_error(nmf_differential(fit, B = 3, x = list(d$x1, -d$x2)),
               class = "nmfkit_error_negative")
  dt <- nmf_differential(fit, B = 3)
  expect_error(summary(dt, alpha = 1), class = "nmfkit_error_value")
  expect_error(plot(dt, top = -1), class = "nmfkit_error_count")
  expect_error(print(dt, n = "a"), class = "nmfkit_error_count")
  expect_error(tidy(dt, matrix = "W"), class = "nmfkit_error_dots")
})

test_that("errors name the class and what is supported", {
  x <- withr::with_seed(1, matrix(runif(40), 8))
  fit <- withr::with_seed(1, nmf(x, 2))
  expect_snapshot(nmf_differential(fit, B = 3), error = TRUE)
  expect_snapshot(nmf_differential(list(1)), error = TRUE)
  expect_snapshot(nmf_differential(), error = TRUE)
})
