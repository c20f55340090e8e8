# nmf_differential(): feature-level permutation tests for joint and
# stratified fits.

ctl1 <- function(...) nmf_control(threads = 1, ...)

test_that("joint statistics share out p-bar and the distance", {
  d <- withr::with_seed(1, diff_joint_planted())
  fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3, control = ctl1()))
  dt <- withr::with_seed(2, nmf_differential(fit, B = 19))
  expect_s3_class(dt, "nmfkit_differential")
  tab <- dt$table
  expect_named(tab, c("feature", "component", "statistic", "p_value",
                      "p_adjusted"))
  expect_identical(tab$feature, rep(rownames(d$x1), 3))
  expect_equal(as.vector(tapply(tab$statistic, tab$component, sum)),
               unname(fit$p), tolerance = 1e-12)
  expect_equal(sum(abs(tab$statistic)), fit$distance, tolerance = 1e-12)
  expect_identical(dt$type, "joint")
  expect_identical(dt$B, 19L)
  expect_identical(dim(dt$null$mean), c(60L, 3L))
})

test_that("p-values lie in [0, 1] and BH is p.adjust and monotone in p", {
  d <- withr::with_seed(1, diff_joint_planted(effect = 2))
  fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3, control = ctl1()))
  s <- withr::with_seed(1, diff_stratified_planted())
  sfit <- withr::with_seed(1, nmf_stratified(s$x, rank = 3,
                                             control = ctl1(update = "hals")))
  for (dt in list(withr::with_seed(3, nmf_differential(fit, B = 29)),
                  withr::with_seed(3, nmf_differential(sfit, B = 29)))) {
    tab <- tidy(dt)
    expect_true(all(tab$p_value >= 1 / 30 & tab$p_value <= 1))
    # (1 + count) / (B + 1): whole counts
    cnt <- tab$p_value * 30 - 1
    expect_equal(cnt, round(cnt), tolerance = 1e-9)
    expect_identical(tab$p_adjusted, stats::p.adjust(tab$p_value, "BH"))
    o <- order(tab$p_value)
    expect_false(is.unsorted(tab$p_adjusted[o]))
    expect_true(all(tab$p_adjusted >= tab$p_value))
  }
  # a feature with zero weight in a component has statistic 0 and p = 1
  tab <- tidy(withr::with_seed(3, nmf_differential(fit, B = 5)))
  expect_true(any(tab$statistic == 0))
  expect_true(all(tab$p_value[tab$statistic == 0] == 1))
  # an unseeded session keeps its RNG kind
  withr::with_preserve_seed({
    if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) {
      rm(".Random.seed", envir = globalenv())
    }
    kind <- RNGkind()[1]
    nmf_differential(fit, B = 2)
    expect_identical(RNGkind()[1], kind)
  })
})

test_that("stratified statistics are centred shifts", {
  s <- withr::with_seed(1, diff_stratified_planted(strata = 3))
  sfit <- withr::with_seed(1, nmf_stratified(s$x, rank = 3,
                                             control = ctl1(update = "hals")))
  dt <- withr::with_seed(1, nmf_differential(sfit, B = 9))
  tab <- dt$table
  expect_named(tab, c("feature", "stratum", "statistic", "p_value",
                      "p_adjusted"))
  expect_identical(tab$feature, rep(paste0("f", 1:60), 3))
  expect_identical(levels(tab$stratum), c("a", "b", "c"))
  V <- sfit$V
  expect_equal(tab$statistic, as.vector(V - rowMeans(V)), tolerance = 1e-14)
  expect_equal(as.vector(tapply(tab$statistic, tab$feature, sum)),
               rep(0, 60), tolerance = 1e-12)
  # the matrix-and-factor form of the same data gives the same table
  xm <- do.call(cbind, s$x)
  g <- rep(names(s$x), each = 30)
  dt2 <- withr::with_seed(1, nmf_differential(sfit, B = 9, x = xm))
  expect_identical(dt2$table, dt$table)
})

test_that("a planted set difference is found at its features", {
  d <- withr::with_seed(11, diff_joint_planted(effect = 3))
  # normalize = FALSE: normalised columns would make the other components
  # relatively smaller in set 2, a real (compositional) difference
  fit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3,
                                       normalize = FALSE, control = ctl1()))
  # the component carrying block 1
  comp <- which.max(colSums(fit$W[d$planted, ]))
  dt <- withr::with_seed(5, nmf_differential(fit, B = 199))
  tab <- dt$table
  ci <- as.integer(tab$component)
  f <- match(tab$feature, rownames(d$x1))
  planted <- ci == comp & f %in% d$planted
  expect_true(all(tab$p_adjusted[planted] < 0.05))
  expect_true(all(tab$statistic[planted] < 0))   # used more by set 2
  # the components whose usage does not differ: no discoveries but by luck
  other <- ci != comp
  expect_lt(mean(tab$p_adjusted[other] < 0.05), 0.1)
  # in the planted component, features outside the block are flagged when
  # they carry some weight (the null of d is that of p-bar times the
  # weight), but the statistic ranks all of them below the block
  off <- ci == comp & !f %in% d$planted
  expect_lt(max(abs(tab$statistic[off])), min(abs(tab$statistic[planted])))
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
  expect_identical(j$null, j1$null)
  expect_identical(st$table, st1$table)
  expect_identical(st$null, st1$null)
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
  # normalised fits: the raw sets are renormalised per permutation; unit
  # columns far from the 5% threshold give the kept data's answer, up to
  # rounding (which can move a refit's weight between 0 and 1e-8, so
  # features with next to no weight are left out)
  nfit <- withr::with_seed(1, nmf_joint(d$x1, d$x2, rank = 3, control = ctl1()))
  a <- withr::with_seed(2, nmf_differential(nfit, B = 5))
  b <- withr::with_seed(2, nmf_differential(nfit, B = 5,
                                            x = list(d$x1, d$x2)))
  expect_identical(a$table$statistic, b$table$statistic)
  big <- abs(a$table$statistic) > 0.01 * max(abs(a$table$statistic))
  expect_gt(sum(big), 60)
  expect_identical(a$table$p_value[big], b$table$p_value[big])
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
  expect_output(print(dt), "stratified NMF, 99 permutations")
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
