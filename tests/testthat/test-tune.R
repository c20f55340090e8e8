# nmf_tune(): held-out error over a grid of rank x penalty x loss x variant.

test_that("the rank grid picks the planted rank and is nmf_rank()'s", {
  x <- tune_data(noise = 0.1, seed = 1)
  set.seed(1)
  tu <- nmf_tune(x, 2:5, nfolds = 3, fraction = 0.1,
                 control = nmf_control(max_iter = 200))
  expect_s3_class(tu, "nmfkit_tune")
  expect_identical(tu$best$rank, c(3L, 3L))
  expect_identical(tu$best$choice, c("min", "one_se"))
  # with rank alone the tasks, folds and seeds are those of nmf_rank()
  set.seed(1)
  r <- nmf_rank(x, 2:5, nfolds = 3, fraction = 0.1,
                control = nmf_control(max_iter = 200))
  expect_identical(tu$results$error, r$results$error)
  expect_identical(tu$results$fold, r$results$fold)
  expect_identical(unname(r$best[["one_se"]]), tu$best$rank[2])
})

test_that("a planted sparse H gets a positive, bounded L1 penalty", {
  x <- tune_data(zero = 0.8, noise = 0.5, seed = 1)
  pen <- c(0, 0.01, 0.03, 0.1, 0.3)
  set.seed(1)
  tu <- suppressWarnings(
    nmf_tune(x, 2:5, grid = list(l1_H = pen), penalty = c(l2 = 0.01),
             nfolds = 5, fraction = 0.1,
             control = nmf_control(max_iter = 200)),
    classes = "nmfkit_warning_convergence")
  s <- summary(tu)
  pick <- tu$best[2, ]
  expect_identical(pick$rank, 3L)
  # a penalty, but not the largest (which the folds must reject: a grid
  # on which the penalty did nothing would pick it)
  expect_gt(pick$l1_H, 0)
  expect_lt(pick$l1_H, max(pen))
  zero <- s[s$rank == pick$rank & s$l1_H == 0, ]
  expect_gte(zero$mean, pick$mean - zero$se)
  top <- s[s$rank == pick$rank & s$l1_H == max(pen), ]
  expect_gt(top$mean, s$mean[which.min(s$mean)] + top$se)
  # over-parameterised (rank 5), the penalty is worth more than the folds'
  # spread: no penalty is clearly worse than the best
  r5 <- s[s$rank == 5, ]
  best5 <- r5[which.min(r5$mean), ]
  expect_gt(best5$l1_H, 0)
  expect_gt(r5$mean[r5$l1_H == 0] - best5$mean, r5$se[r5$l1_H == 0])
})

test_that("every grid row is fitted and scored on the same folds", {
  x <- tune_data(noise = 0.2, seed = 2)
  start <- withr::with_seed(3, list(W = matrix(runif(60 * 3), 60),
                                    H = matrix(runif(3 * 50), 3)))
  # a fixed start: the fits do not depend on their seeds, so the rows with
  # the same settings as nmf_rank() must give its errors fold by fold
  set.seed(4)
  tu <- nmf_tune(x, 3, grid = list(l1 = c(0.05, 0)), loss = c("frobenius",
                                                                "kl"),
                 init = start, nfolds = 2, fraction = 0.1,
                 control = nmf_control(max_iter = 30))
  expect_identical(nrow(tu$results), 8L)
  set.seed(4)
  r <- nmf_rank(x, 3, init = start, nfolds = 2, fraction = 0.1,
                control = nmf_control(max_iter = 30))
  res <- tu$results
  expect_identical(res$error[res$l1 == 0 & res$loss == "frobenius"],
                   r$results$error)
  # every row is scored by one loss (the first): the KL fits' errors are
  # relative Frobenius errors; with score = "kl" the KL rows give
  # nmf_rank()'s KL errors, scored by their own loss
  set.seed(4)
  tk <- nmf_tune(x, 3, loss = c("frobenius", "kl"), score = "kl",
                 init = start, nfolds = 2, fraction = 0.1,
                 control = nmf_control(max_iter = 30))
  set.seed(4)
  rk <- nmf_rank(x, 3, loss = "kl", init = start, nfolds = 2,
                 fraction = 0.1, control = nmf_control(max_iter = 30))
  expect_identical(tk$results$error[tk$results$loss == "kl"],
                   rk$results$error)
  expect_identical(tk$score[["name"]], "kl")
  expect_identical(tu$score[["name"]], "frobenius")
  fro_kl <- res$error[res$l1 == 0 & res$loss == "kl"]
  expect_false(isTRUE(all.equal(fro_kl, rk$results$error)))
  expect_true(all(fro_kl > 0 & fro_kl < 1))
})

test_that("set.seed() reproduces; sequential and multisession agree", {
  skip_if_not_installed("future")
  x <- tune_data(noise = 0.2, seed = 5)
  run <- function() {
    set.seed(6)
    out <- nmf_tune(x, 2:3, grid = list(l1 = c(0, 0.01)), nfolds = 2,
                    fraction = 0.1, control = nmf_control(max_iter = 30))
    out$call <- NULL
    out
  }
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  a <- run()
  expect_identical(run(), a)
  skip_on_cran()
  ok <- tryCatch({
    future::plan("multisession", workers = 2)
    future::value(future::future(TRUE))
  }, error = function(e) FALSE)
  skip_if_not(isTRUE(ok), "multisession workers cannot start")
  expect_identical(run(), a)
})

test_that("bi-cross-validation picks the planted rank for nmf and manifold", {
  x <- tune_data(noise = 0.1, seed = 1)
  set.seed(7)
  tb <- nmf_tune(x, 1:5, holdout = "blocks",
                 control = nmf_control(max_iter = 200))
  expect_identical(tb$holdout, "blocks")
  expect_identical(tb$best$rank[2], 3L)
  # "auto" takes blocks when a variant has no mask; GNMF with lambda = 0
  # is Lee and Seung's NMF
  set.seed(8)
  tm <- suppressWarnings(
    nmf_tune(x, 1:5, variant = "manifold", method = "gnmf",
             grid = list(lambda = c(0, 10)),
             control = nmf_control(max_iter = 300)),
    classes = c("nmfkit_warning_convergence", "nmfkit_warning_degenerate"))
  expect_identical(tm$holdout, "blocks")
  expect_identical(tm$best$rank[2], 3L)
  s <- summary(tm)
  expect_true(all(is.finite(s$mean)))
  # a strong graph penalty predicts the held-out block worse at rank 3
  expect_gt(s$mean[s$rank == 3 & s$lambda == 10],
            s$mean[s$rank == 3 & s$lambda == 0])
  # counts under KL: the blocks' coefficients by KL's projection; the
  # same errors for dense and sparse storage
  xc <- round(x * 5)
  run_kl <- function(data) {
    set.seed(11)
    nmf_tune(data, 2:3, loss = "kl", holdout = "blocks", nfolds = 2,
             control = nmf_control(max_iter = 50))$results$error
  }
  kl <- run_kl(xc)
  expect_true(all(is.finite(kl) & kl > 0))
  expect_equal(run_kl(Matrix::Matrix(xc, sparse = TRUE)), kl,
               tolerance = 1e-10)
  # the blocks are disjoint and span 1/nfolds of the rows and columns
  set.seed(9)
  b <- draw_blocks(x, 3)
  expect_false(any(duplicated(unlist(lapply(b, `[[`, "rows")))))
  expect_false(any(duplicated(unlist(lapply(b, `[[`, "cols")))))
  expect_equal(b[[1]]$value, as.vector(x[b[[1]]$rows, b[[1]]$cols]))
  # both variants in one grid: one scheme, nmf rows and manifold rows
  set.seed(10)
  both <- suppressWarnings(
    nmf_tune(x, 2:3, variant = c("nmf", "manifold"), nfolds = 2,
             grid = list(lambda = 1), control = nmf_control(max_iter = 50)),
    classes = c("nmfkit_warning_convergence", "nmfkit_warning_degenerate"))
  expect_setequal(both$summary$variant, c("nmf", "manifold"))
  expect_true(all(is.na(both$summary$lambda[both$summary$variant == "nmf"])))
  expect_true(all(is.na(both$summary$loss[both$summary$variant ==
                                             "manifold"])))
})

test_that("sparse data, NA entries; the methods", {
  x <- tune_data(noise = 0.2, seed = 11)
  xs <- Matrix::Matrix(x, sparse = TRUE)
  set.seed(12)
  ts <- nmf_tune(xs, 2:3, grid = list(l1 = c(0, 0.01)), nfolds = 2,
                 control = nmf_control(max_iter = 30))
  expect_true(all(is.finite(ts$results$error)))
  x[c(4, 90, 700)] <- NA
  set.seed(13)
  tn <- nmf_tune(x, 2:3, nfolds = 2, control = nmf_control(max_iter = 30))
  expect_true(all(is.finite(tn$results$error)))
  expect_error(nmf_tune(x, 2:3, holdout = "blocks"),
               class = "nmfkit_error_value")
  expect_output(print(ts), "one-standard-error choice")
  expect_named(summary(ts), c("rank", "l1", "loss", "variant", "mean", "se"))
  expect_equal(tidy(ts), as.data.frame(summary(ts)), ignore_attr = "title")
  expect_s3_class(summary(ts), "summary.nmfkit_tune")
  expect_identical(as.data.frame(ts), ts$results)
  g <- glance(ts)
  expect_identical(nrow(g), 1L)
  expect_identical(g$settings, 4L)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(ts))
  expect_invisible(plot(tn))
  skip_if_not_installed("ggplot2")
  library(ggplot2)
  expect_s3_class(ggplot2::ggplot_build(autoplot(ts)), "ggplot_built")
})

test_that("the fits' penalty and zero-fit warnings are said once", {
  x <- tune_data(noise = 0.2, seed = 15)
  seen <- list()
  set.seed(16)
  withCallingHandlers(
    nmf_tune(x, 3, grid = list(l1_H = c(0, 3)), nfolds = 2,
             control = nmf_control(max_iter = 30)),
    warning = function(w) {
      seen[[length(seen) + 1]] <<- class(w)[1]
      invokeRestart("muffleWarning")
    })
  # one-sided at every row (4 fits), zero at l1_H = 3: one warning each
  expect_identical(sort(unlist(seen)), c("nmfkit_warning_degenerate",
                                         "nmfkit_warning_penalty"))
})

test_that("bad grids, variants, losses and dots give classed errors", {
  x <- tune_data(noise = 0.2, seed = 14)
  bad <- list(
    list(quote(nmf_tune(x, 0:2)), "nmfkit_error_rank"),
    list(quote(nmf_tune(x, 2.5)), "nmfkit_error_rank"),
    list(quote(nmf_tune(x, 51)), "nmfkit_error_rank"),
    list(quote(nmf_tune(x, 40, holdout = "blocks")), "nmfkit_error_rank"),
    list(quote(nmf_tune(x)), "nmfkit_error_missing"),
    list(quote(nmf_tune(x, 2, variant = "nnmf")), "nmfkit_error_choice"),
    list(quote(nmf_tune(x, 2, variant = "wasserstein")),
         "nmfkit_error_variant"),
    list(quote(nmf_tune(x, 2, variant = "stratified")),
         "nmfkit_error_variant"),
    list(quote(nmf_tune(x, 2, loss = "poison")), "nmfkit_error_loss"),
    list(quote(nmf_tune(x, 2, loss = character())), "nmfkit_error_loss"),
    list(quote(nmf_tune(x, 2, score = "l2")), "nmfkit_error_loss"),
    list(quote(nmf_tune(x, 2, score = "is")), "nmfkit_error_loss"),
    list(quote(nmf_tune(x, 2, variant = "manifold", loss = "kl")),
         "nmfkit_error_loss"),
    list(quote(nmf_tune(x, 2, grid = list(lambda = 1))), "nmfkit_error_grid"),
    list(quote(nmf_tune(x, 2, grid = list(l1 = numeric()))),
         "nmfkit_error_grid"),
    list(quote(nmf_tune(x, 2, grid = data.frame(l1 = numeric()))),
         "nmfkit_error_grid"),
    list(quote(nmf_tune(x, 2, grid = list(l1 = -1))), "nmfkit_error_grid"),
    list(quote(nmf_tune(x, 2, grid = list(rank = 2:3))), "nmfkit_error_grid"),
    list(quote(nmf_tune(x, 2, grid = c(l1 = 1))), "nmfkit_error_grid"),
    list(quote(nmf_tune(x, 2, grid = list(l1 = 1, l1_W = 0))),
         "nmfkit_error_penalty"),
    list(quote(nmf_tune(x, 2, grid = list(l1 = 1), penalty = c(l1 = 1))),
         "nmfkit_error_dots"),
    list(quote(nmf_tune(x, 2, fraction = 0.6)), "nmfkit_error_value"),
    list(quote(nmf_tune(x, 2, fraction = 0.4, nfolds = 3)),
         "nmfkit_error_count"),
    list(quote(nmf_tune(x, 2, nfolds = 1)), "nmfkit_error_count"),
    list(quote(nmf_tune(x, 2, holdout = "rows")), "nmfkit_error_choice"),
    list(quote(nmf_tune(x, 2, variant = "manifold", holdout = "entries")),
         "nmfkit_error_holdout"),
    list(quote(nmf_tune(x, 2, mask = x > 1)), "nmfkit_error_dots"),
    list(quote(nmf_tune(x, 2, keep_data = TRUE)), "nmfkit_error_dots"),
    list(quote(nmf_tune(x, 2, lambda = 1)), "nmfkit_error_dots"),
    list(quote(nmf_tune(x, 2, variant = "manifold", preprocess = "minmax")),
         "nmfkit_error_dots"),
    list(quote(nmf_tune(x, 2, variant = "manifold", graph = diag(3))),
         "nmfkit_error_graph")
  )
  for (b in bad) {
    expect_error(eval(b[[1]]), class = b[[2]], info = deparse1(b[[1]]))
  }
  expect_snapshot(nmf_tune(x, 2, grid = list(lambda = 1)), error = TRUE)
  expect_snapshot(nmf_tune(x, 2, variant = "wasserstein"), error = TRUE)
})
