# rank = "auto": the adaptive held-out search (R/rank-search.R).

# Planted rank-k data: W, H uniform with half their entries zero, plus
# Gaussian noise of relative sd `noise` where W H > 0 (clipped at 0);
# `sparse`: as a dgCMatrix (W H is 0 at about a third of the entries).
# Under "kl", Poisson counts of mean 20 W H / mean(W H).
planted_rank <- function(k, m = 60, n = 50, noise = 0.01, loss = "frobenius",
                         sparse = FALSE, seed = 1) {
  withr::with_seed(seed, {
    W <- matrix(runif(m * k), m) * (runif(m * k) > 0.5)
    H <- matrix(runif(k * n), k) * (runif(k * n) > 0.5)
    W[cbind(seq_len(k), seq_len(k))] <- 1
    H[cbind(seq_len(k), seq_len(k))] <- 1
    mu <- W %*% H
    x <- if (loss == "kl") {
      matrix(rpois(m * n, 20 * mu / mean(mu)), m)
    } else {
      # noise where W H > 0 (clipped Gaussian noise at its zeros would
      # add structure)
      pmax(mu + noise * mean(mu) * matrix(rnorm(m * n), m) * (mu > 0), 0)
    }
  })
  if (sparse) Matrix::Matrix(x, sparse = TRUE) else x
}

test_that("rank = 'auto' recovers planted ranks (Frobenius, KL; dense, sparse)", {
  skip_on_cran()
  ctl <- nmf_control(max_iter = 200)
  for (k in c(3, 6)) {
    for (loss in c("frobenius", "kl")) {
      for (sparse in c(FALSE, TRUE)) {
        x <- planted_rank(k, loss = loss, sparse = sparse, seed = k)
        set.seed(k)
        fit <- nmf(x, rank = c(1, 15), loss = loss, control = ctl)
        info <- paste(k, loss, sparse)
        expect_identical(fit$rank, as.integer(k), info = info)
        expect_s3_class(fit$rank_search, "nmfkit_rank_search")
        # far fewer ranks than the range holds, and fewer than half the
        # full grid's fits (15 ranks x 3 folds)
        expect_lt(nrow(fit$rank_search$summary), 12)
        expect_lt(nrow(fit$rank_search$results), 15 * 3 / 2)
      }
    }
  }
})

test_that("the search picks what the full grid's one-SE rule picks", {
  skip_on_cran()
  x <- planted_rank(5, m = 50, n = 40, noise = 0.2, seed = 3)
  ctl <- nmf_control(max_iter = 100)
  # the full grid on the same folds: the search over a range of one step
  # at a time is the grid (every rank tried); the same seed draws the
  # same folds
  set.seed(7)
  path <- nmf(x, rank = c(1, 12), control = ctl)$rank_search
  set.seed(7)
  grid <- nmf_rank(x, 1:12, nfolds = 3, control = ctl)
  expect_lt(nrow(path$summary), 12)
  # and far fewer fits: the bracket and the ranks above the lowest are
  # fitted on the first fold alone unless the rule needs them
  expect_lte(nrow(path$results), 3 * 12 / 2)
  expect_identical(path$rank, grid$best[["one_se"]])
  # the search's errors at the ranks it fitted on every fold are those of
  # the grid's folds: each within the grid's spread
  s <- summary(grid)
  p <- path$summary[path$summary$folds == 3L, ]
  expect_gte(nrow(p), 1L)
  m <- match(p$rank, s$rank)
  expect_true(all(abs(p$mean - s$mean[m]) <= 3 * (p$se + s$se[m]) + 1e-3))
  # and on the first fold, up to the planted rank (where the fits do not
  # depend on their random starts), the grid's first fold's
  f1 <- path$results[path$results$fold == 1L & path$results$rank <= 5, ]
  g1 <- grid$results[grid$results$fold == 1L, ]
  e <- g1$error[match(f1$rank, g1$rank)]
  expect_gte(nrow(f1), 3L)
  expect_true(all(abs(f1$error - e) <= 1e-2 * e))
})

test_that("the path records ranks, errors, SEs, rounds and the reason", {
  x <- planted_rank(3, m = 40, n = 30, seed = 4)
  set.seed(1)
  fit <- nmf(x, rank = "auto", control = nmf_control(max_iter = 100))
  p <- fit$rank_search
  expect_named(p$summary, c("rank", "folds", "mean", "se", "round"))
  expect_identical(p$range, c(1L, 30L))
  expect_true(p$rank %in% p$summary$rank)
  # the one-SE rule on the ranks fitted on every fold
  s <- p$summary[p$summary$folds == p$nfolds, ]
  lo <- which.min(s$mean)
  ok <- s$mean <= s$mean[lo] + s$se[lo]
  expect_identical(p$rank, min(s$rank[ok]))
  # the others were fitted on the first fold alone
  expect_true(all(p$summary$folds %in% c(1L, p$nfolds)))
  expect_identical(as.vector(table(p$results$rank)[as.character(
    p$summary$rank)]), p$summary$folds)
  # bracketing tried 1, 2, 4, ... first
  first <- p$summary$rank[p$summary$round <= 3]
  expect_true(all(c(1L, 2L, 4L) %in% first))
  expect_output(print(fit), "chosen by held-out search")
  expect_output(print(p), "Tried \\d+ of the 30 ranks")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(p))
  # the final fit is nmf() at the chosen rank
  expect_identical(fit$rank, p$rank)
  expect_identical(ncol(fit$W), p$rank)
})

test_that("rank = 'auto' is the same under sequential and multisession", {
  skip_on_cran()
  skip_if_not_installed("future")
  x <- planted_rank(3, m = 30, n = 25, seed = 5)
  run <- function() {
    set.seed(3)
    fit <- nmf(x, rank = c(1, 8), control = nmf_control(max_iter = 50))
    list(fit$rank_search$results, fit$W)
  }
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  a <- run()
  future::plan("multisession", workers = 2)
  expect_identical(run(), a)
})

test_that("nmf_consensus(rank = 'auto') fits the searched rank", {
  skip_on_cran()
  x <- planted_rank(3, m = 40, n = 30, seed = 6)
  set.seed(2)
  cons <- nmf_consensus(x, rank = auto_rank(1, 8), nrun = 4,
                        control = nmf_control(max_iter = 50))
  expect_identical(cons$ranks, 3L)
  expect_s3_class(cons$rank_search, "nmfkit_rank_search")
  expect_output(print(cons), "chosen by held-out search")
})

test_that("scaling the data changes neither the path nor the rank", {
  x <- planted_rank(3, m = 30, n = 25, seed = 8)
  a <- withr::with_seed(1, nmf(x, c(1, 6)))$rank_search
  b <- withr::with_seed(1, nmf(x * 2^40, c(1, 6)))$rank_search
  expect_identical(a$rank, b$rank)
  expect_equal(a$summary, b$summary, tolerance = 1e-6)
})
