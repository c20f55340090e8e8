test_that("tidy() gives W and H in long form with dimnames, for every variant", {
  f <- contract_fixtures()
  fits <- f[c("fit", "jfit", "sfit", "shfit", "wfit", "mfit")]
  for (nm in names(fits)) {
    fit <- fits[[nm]]
    W <- basis(fit)
    H <- coef(fit)
    tw <- tidy(fit)
    expect_identical(nrow(tw), length(W), info = nm)
    expect_identical(names(tw), c("feature", "component", "value"), info = nm)
    expect_identical(levels(tw$component), colnames(W), info = nm)
    expect_identical(tw$value, as.vector(W), info = nm)
    th <- tidy(fit, matrix = "H")
    expect_identical(nrow(th), length(H), info = nm)
    expect_identical(th$value, as.vector(t(H)), info = nm)
    expect_true(all(c("sample", "component", "value") %in% names(th)),
                info = nm)
    # the long form rebuilds the factor
    back <- tapply(tw$value, list(tw$feature, tw$component), sum)
    rows <- rownames(W)
    if (is.null(rows)) rows <- as.character(seq_len(nrow(W)))
    expect_equal(unname(back[rows, colnames(W)]), unname(W), info = nm)
  }
  # dimnames flow through
  x <- small_data()
  fit <- nmf(x, 3)
  expect_identical(unique(tidy(fit)$feature), rownames(x))
  expect_identical(unique(tidy(fit, "H")$sample), colnames(x))
  # variant columns: stratum and data set of each sample, the shifts V
  th <- tidy(f$sfit, matrix = "H")
  expect_identical(names(th), c("sample", "stratum", "component", "value"))
  expect_identical(th$stratum[seq_len(ncol(f$sfit$H))], f$sfit$strata)
  tv <- tidy(f$sfit, matrix = "V")
  expect_identical(names(tv), c("feature", "stratum", "value"))
  expect_identical(tv$value, as.vector(f$sfit$V))
  expect_identical(names(tidy(f$jfit, "H"))[2], "set")
})

test_that("glance() gives one row about any fit", {
  f <- contract_fixtures()
  fits <- f[c("fit", "jfit", "sfit", "shfit", "wfit", "mfit")]
  cols <- c("variant", "method", "rank", "nrow", "ncol", "loss", "loss_name",
            "iterations", "status", "converged", "relative_error",
            "sparsity_w", "sparsity_h")
  for (nm in names(fits)) {
    g <- glance(fits[[nm]])
    expect_identical(nrow(g), 1L, info = nm)
    expect_identical(names(g), cols, info = nm)
    expect_identical(g$rank, fits[[nm]]$rank, info = nm)
    expect_identical(c(g$nrow, g$ncol),
                     c(nrow(basis(fits[[nm]])), ncol(coef(fits[[nm]]))),
                     info = nm)
  }
  g <- glance(f$fit)
  expect_identical(g$variant, "nmf")
  expect_identical(g$method, f$fit$method)
  expect_equal(g$relative_error, summary(f$fit)$relative_error)
  expect_identical(g$loss, utils::tail(f$fit$loss, 1))
  expect_true(is.na(glance(nmf(f$x, 2, keep_data = FALSE))$relative_error))
})

test_that("augment() adds clusters and coefficients to samples", {
  x <- small_data()
  set.seed(3)
  fit <- nmf(x, 3)
  a <- augment(fit)
  expect_identical(names(a), c("sample", ".cluster", ".nmf1", ".nmf2",
                               ".nmf3"))
  expect_identical(a$sample, colnames(x))
  expect_identical(as.integer(a$.cluster), unname(clusters(fit)))
  expect_identical(a$.nmf2, unname(coef(fit)[2, ]))
  # onto the user's data frame
  meta <- data.frame(id = seq_len(ncol(x)), group = rep(c("a", "b"), 10))
  am <- augment(fit, data = meta)
  expect_identical(am[1:2], meta)
  expect_identical(am$.nmf1, a$.nmf1)
  # new samples through predict()
  an <- augment(fit, newdata = x[, 1:4])
  expect_identical(nrow(an), 4L)
  expect_equal(an$.nmf1, unname(predict(fit, x[, 1:4])[1, ]))
  expect_identical(as.integer(an$.cluster),
                   unname(predict(fit, x[, 1:4], type = "class")))
  # stratified: strata in, strata passed on to predict()
  f <- contract_fixtures()
  expect_true("stratum" %in% names(augment(f$sfit)))
  as <- augment(f$sfit, newdata = f$x, strata = rep("a", 10))
  expect_identical(nrow(as), 10L)
  # manifold: its own labels
  expect_identical(as.integer(augment(f$mfit)$.cluster),
                   unname(clusters(f$mfit)))
  # bad input
  expect_error(augment(fit, data = meta[1:3, ]), class = "nmfkit_error_data")
  expect_error(augment(fit, data = 1:20), class = "nmfkit_error_data")
  expect_error(augment(fit, newdata = unname(x[1:3, ])),
               class = "nmfkit_error")
  # rows named as features: the others are zero, with a warning
  expect_warning(augment(fit, newdata = x[1:3, ]),
                 class = "nmfkit_warning_features")
  expect_error(augment(fit, bogus = 1), class = "nmfkit_error_dots")
  expect_error(tidy(fit, matrix = "V"), class = "nmfkit_error_choice")
  expect_error(tidy(fit, bogus = 1), class = "nmfkit_error_dots")
  expect_error(glance(fit, 1), class = "nmfkit_error_dots")
})

test_that("autoplot() builds for fits, rank selections and consensus", {
  skip_if_not_installed("ggplot2")
  library(ggplot2)
  builds <- function(p) {
    expect_s3_class(p, "ggplot")
    expect_s3_class(ggplot2::ggplot_build(p), "ggplot_built")
  }
  x <- swimmer()[, 1:64]
  set.seed(1)
  fit <- nmf(x, 4, control = nmf_control(max_iter = 20))
  builds(autoplot(fit))
  builds(autoplot(fit, type = "basis", image_dim = NULL))
  builds(autoplot(fit, type = "coef", components = 1:2))
  builds(autoplot(fit, type = "loss"))
  f <- contract_fixtures()
  for (m in f[c("jfit", "sfit", "shfit", "wfit", "mfit")]) builds(autoplot(m))
  r <- nmf_rank(x, 2:3, nfolds = 2, control = nmf_control(max_iter = 20))
  builds(autoplot(r))
  rc <- nmf_rank(x, 2:3, method = "consensus", nrun = 2,
                 control = nmf_control(max_iter = 20))
  builds(autoplot(rc))
  builds(autoplot(rc, rank = 3))
  cons <- nmf_consensus(x, 2:3, nrun = 3, control = nmf_control(max_iter = 20))
  builds(autoplot(cons))
  builds(autoplot(cons, type = "density"))
  builds(autoplot(cons, type = "basis", rank = 3))
  expect_error(autoplot(fit, type = "bases"), class = "nmfkit_error_choice")
  expect_error(autoplot(fit, components = 9), class = "nmfkit_error_components")
  expect_error(autoplot(fit, image_dim = c(2, 2)),
               class = "nmfkit_error_image_dim")
  expect_error(autoplot(r, rank = 2), class = "nmfkit_error_rank")
  expect_error(autoplot(rc, rank = 7), class = "nmfkit_error_rank")
  expect_error(autoplot(cons, type = "basis"), class = "nmfkit_error_rank")
  expect_error(autoplot(cons, type = "density", rank = 5),
               class = "nmfkit_error_rank")
  expect_error(autoplot(fit, bogus = 1), class = "nmfkit_error_dots")
})

test_that("autoplot() draws bootstrap intervals and differential tests", {
  # issue 36: both had plot() and no autoplot()
  skip_if_not_installed("ggplot2")
  ap <- function(...) ggplot2::autoplot(...)
  set.seed(1)
  W0 <- matrix(rexp(30 * 3), 30, 3)
  x <- matrix(rpois(30 * 40, W0 %*% matrix(rexp(3 * 40), 3) * 5), 30)
  rownames(x) <- paste0("g", 1:30)
  fit <- nmf(x, 3, loss = "kl", control = nmf_control(max_iter = 500))
  b <- withr::with_seed(2, nmf_bootstrap(fit, B = 6))
  p <- ap(b, top = 4, components = 2:3)
  built <- ggplot2::ggplot_build(p)
  # one interval per top feature of each component drawn, ends the tidy()'s
  d <- p$data
  expect_identical(nrow(d), 8L)
  expect_setequal(as.character(d$component), c("nmf2", "nmf3"))
  tw <- tidy(b)
  at <- match(paste(d$feature, d$component), paste(tw$feature, tw$component))
  expect_identical(d$lower, tw$lower[at])
  expect_identical(d$upper, tw$upper[at])
  # the top features by specificity, as summary() ranks them
  top <- summary(b, top = 4)$top
  expect_setequal(d$feature[d$component == "nmf2"],
                  top$feature[top$component == "nmf2"])
  expect_s3_class(built, "ggplot_built")
  expect_s3_class(ggplot2::ggplot_build(ap(b, level = 0.5, score = "weight")),
                  "ggplot_built")
  expect_error(ap(b, top = 0), class = "nmfkit_error_count")
  expect_error(ap(b, components = 5), class = "nmfkit_error_components")
  expect_error(ap(b, level = 1), class = "nmfkit_error_value")
  expect_error(ap(b, score = "w"), class = "nmfkit_error_choice")
  expect_error(ap(b, bogus = 1), class = "nmfkit_error_dots")
  f <- contract_fixtures()
  dt <- withr::with_seed(1, nmf_differential(f$jfit, B = 2))
  pd <- ap(dt, alpha = 0.5)
  expect_s3_class(ggplot2::ggplot_build(pd), "ggplot_built")
  expect_identical(nrow(pd$data), nrow(dt$table))
  expect_equal(pd$data$y, -log10(dt$table$p_value))
  expect_identical(pd$data$call == "not found",
                   !(dt$table$p_adjusted < 0.5))
  expect_error(ap(dt, alpha = 2), class = "nmfkit_error_value")
  expect_error(ap(dt, top = -1), class = "nmfkit_error_count")
  expect_error(ap(dt, bogus = 1), class = "nmfkit_error_dots")
})

test_that("nmfkit loads without ggplot2 and registers autoplot when it loads", {
  skip_on_cran()
  skip_if_not_installed("callr")
  skip_if_not_installed("ggplot2")
  out <- callr::r(function() {
    loadNamespace("nmfkit")
    before <- isNamespaceLoaded("ggplot2")
    fit <- nmfkit::nmf(nmfkit::swimmer()[, 1:20], 2)
    loadNamespace("ggplot2")
    c(before, inherits(ggplot2::autoplot(fit), "ggplot"))
  })
  expect_identical(out, c(FALSE, TRUE))
})

test_that("autoplot() checks every argument when called, not when printed", {
  skip_if_not_installed("ggplot2")
  fit <- withr::with_seed(1, nmf(small_data(), 3))
  cons <- withr::with_seed(1, nmf_consensus(small_data(), 2:3, nrun = 2,
                                            control = nmf_control(max_iter = 5)))
  ap <- function(...) ggplot2::autoplot(...)
  for (comp in list(99, 1.5, integer(0), c(1, 1), NA, "nope")) {
    expect_error(ap(fit, components = comp),
                 class = "nmfkit_error_components")
  }
  for (type in c("basis", "coef", "loss")) {
    expect_error(ap(fit, type = type, image_dim = c(7, 7)),
                 class = "nmfkit_error_image_dim")
    expect_error(ap(fit, type = type, components = 0),
                 class = "nmfkit_error_components")
  }
  expect_error(ap(fit, type = "heat"), class = "nmfkit_error_choice")
  expect_error(ap(cons, type = "selection", rank = 9),
               class = "nmfkit_error_rank")
  expect_error(ap(cons, type = "basis"), class = "nmfkit_error_rank")
  # a valid call builds
  expect_s3_class(ggplot2::ggplot_build(ap(fit, components = 2:3)),
                  "ggplot_built")
})

test_that("tidy() and glance() cover rank selections and signature results", {
  # the results of nmf_rank() had neither; signature extractions and
  # refits had no glance(), and their summary() was a bare data frame
  x <- small_data()
  ctl <- nmf_control(max_iter = 20)
  r <- withr::with_seed(1, nmf_rank(x, 1:3, nfolds = 2, control = ctl))
  expect_identical(tidy(r), r$results)
  g <- glance(r)
  expect_identical(nrow(g), 1L)
  expect_identical(g$ranks, 3L)
  expect_identical(g$folds, 2L)
  expect_identical(g$min_rank, r$best[["min"]])
  expect_identical(g$one_se_rank, r$best[["one_se"]])
  rc <- withr::with_seed(1, nmf_rank(x, 2:3, method = "consensus", nrun = 2,
                                     control = ctl))
  expect_identical(glance(rc)$cophenetic_rank,
                   rc$results$rank[which.max(rc$results$cophenetic)])
  expect_true(is.na(glance(rc)$min_rank))

  p <- planted_catalogue(k = 2, n = 8, mutations = 300)
  sig <- suppressWarnings(withr::with_seed(1, nmf_signatures(
    p$counts, 2:3, nrun = 2, control = ctl)))
  gs <- glance(sig)
  expect_identical(gs$rank, sig$rank)
  expect_equal(gs$nrun, 2)
  expect_equal(gs$stability,
               sig$results$stability[sig$results$rank == sig$rank])
  expect_s3_class(summary(sig), "summary.nmfkit_signatures")
  expect_equal(summary(sig)$stability, sig$results$stability)
  rf <- refit_signatures(p$counts, p$W)
  gr <- glance(rf)
  expect_identical(gr$samples, ncol(p$counts))
  expect_identical(gr$signatures, ncol(p$W))
  expect_equal(gr$mean_cosine, mean(rf$cosine))
  expect_s3_class(summary(rf), "summary.nmfkit_refit")
})
