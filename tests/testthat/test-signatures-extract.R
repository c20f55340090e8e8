# nmf_signatures(): resampled replicates, matched clustering, stability,
# the rank rule (R/signatures-extract.R).

test_that("extraction recovers planted signatures and the planted rank", {
  p <- planted_catalogue(k = 3, n = 40, mutations = 2000, active = 2,
                         seed = 21)
  set.seed(1)
  sig <- nmf_signatures(p$counts, rank = 2:5, nrun = 10)
  expect_identical(sig$rank, 3L)
  m <- match_components(p$W, basis(sig))
  expect_gt(min(m$similarity), 0.95)
  r <- sig$results
  expect_identical(r$rank, 2:5)
  # the planted rank is stable, the rank above it is not
  expect_gt(r$stability[r$rank == 3], 0.8)
  expect_lt(r$min_stability[r$rank == 5], r$min_stability[r$rank == 3])
  # cosine of the reconstruction grows with rank and is high at 3
  expect_gt(r$cosine[r$rank == 3], r$cosine[r$rank == 2])
  # the consensus: columns sum to 1, spread holds the consensus
  f <- sig$fits[["3"]]
  expect_equal(unname(colSums(f$W)), rep(1, 3), tolerance = 1e-12)
  expect_true(all(f$lower <= f$upper))
  expect_identical(dim(f$replicates), c(96L, 10L, 3L))
  # refined: (W, H) is a stationary point of the catalogue's deviance, so
  # the exposures are the Poisson NNLS of the data on W to the fit's
  # tolerance
  expect_equal(coef(sig),
               refit_signatures(p$counts, basis(sig))$exposures,
               tolerance = 1e-3)
})

test_that("refining the consensus lowers the catalogue's deviance", {
  p <- planted_catalogue(k = 4, n = 30, mutations = 500, active = 2,
                         seed = 5)
  fits <- lapply(c(FALSE, TRUE), function(r) {
    set.seed(2)
    nmf_signatures(p$counts, rank = 4, nrun = 6, refine = r)
  })
  dev <- vapply(fits, function(f) {
    mu <- basis(f) %*% coef(f)
    sum(ifelse(p$counts > 0, p$counts * log(p$counts / mu), 0) -
          p$counts + mu)
  }, numeric(1))
  expect_lt(dev[2], dev[1])
  # the unrefined exposures are the Poisson NNLS of the data on the
  # consensus (solved before the signatures are sorted: the solver's
  # stopping point depends on the columns' order at about 1e-8)
  expect_equal(coef(fits[[1]]),
               refit_signatures(p$counts, basis(fits[[1]]))$exposures,
               tolerance = 1e-6)
  # the spread and stability are the replicates', the same either way
  expect_identical(fits[[1]]$results$stability, fits[[2]]$results$stability)
  expect_setequal(c(fits[[1]]$fits[[1]]$replicates),
                  c(fits[[2]]$fits[[1]]$replicates))
  expect_false(fits[[1]]$refine)
})

test_that("matched clustering puts one signature of each replicate per cluster", {
  withr::local_seed(2)
  W <- simulate_signatures(4)
  Ws <- lapply(1:6, function(r) {
    Wr <- W[, sample(4)] + matrix(stats::runif(96 * 4, 0, 1e-3), 96, 4)
    sweep(Wr, 2, colSums(Wr), "/")
  })
  perm <- nmfkit:::matched_clusters(Ws, 1L)
  expect_true(all(apply(perm, 1, function(p) setequal(p, 1:4))))
  # each cluster holds the same planted signature in every replicate
  truth <- vapply(Ws, function(Wr) {
    max.col(nmfkit:::cosine_similarity(W, Wr))
  }, integer(4))
  lab <- vapply(1:6, function(r) match(perm[r, ], truth[, r]), integer(4))
  expect_true(all(apply(lab, 1, function(v) length(unique(v)) == 1L)))
})

test_that("the rank rule: stable ranks, then the smallest near the top cosine", {
  res <- data.frame(rank = 2:6, stability = c(1, 0.95, 0.9, 0.5, 0.3),
                    min_stability = c(1, 0.9, 0.8, 0.1, -0.2),
                    cosine = c(0.90, 0.97, 0.973, 0.98, 0.985))
  res$stable <- res$stability >= 0.8 & res$min_stability >= 0.2
  expect_identical(nmfkit:::choose_signature_rank(res, 0.005), 3L)
  expect_identical(nmfkit:::choose_signature_rank(res, 0.001), 4L)
  res$stable <- FALSE
  expect_warning(r <- nmfkit:::choose_signature_rank(res, 0.005),
                 class = "nmfkit_warning_stability")
  expect_identical(r, 2L)
})

test_that("extraction is identical under any plan, thread count and storage", {
  skip_on_cran()
  p <- planted_catalogue(k = 2, n = 12, mutations = 500, seed = 22)
  run <- function(x = p$counts) {
    set.seed(3)
    nmf_signatures(x, 2:3, nrun = 3, keep_data = FALSE,
                   control = nmf_control(max_iter = 100))
  }
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  a <- run()
  b <- withr::with_options(list(nmfkit.threads = 2L), run())
  s <- run(Matrix::Matrix(p$counts, sparse = TRUE))
  future::plan("multisession", workers = 2)
  m <- run()
  for (o in list(b, m)) {
    o$call <- a$call
    expect_identical(o, a)
  }
  expect_equal(s$fits, a$fits, tolerance = 1e-10)
})

test_that("extraction prints, plots, tidies and decomposes", {
  p <- planted_catalogue(k = 2, n = 10, mutations = 500, seed = 23)
  sig <- withr::with_seed(1, nmf_signatures(p$counts, 1:3, nrun = 4))
  expect_output(print(sig), "chosen rank")
  expect_identical(sig$results$stability[1], 1)
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  for (type in c("rank", "signatures", "exposures")) {
    expect_identical(plot(sig, type = type), sig)
  }
  td <- tidy(sig)
  expect_identical(nrow(td), 96L * sig$rank)
  expect_named(tidy(sig, "H"), c("signature", "sample", "exposure"))
  d <- decompose_signatures(sig, p$W)
  expect_s3_class(d, "nmfkit_decomposition")
  a <- entry_assignments(sig)
  expect_identical(unique(a$component), colnames(basis(sig)))
})

test_that("rank = 'auto' finds the planted rank by the held-out search", {
  skip_on_cran()
  p <- planted_catalogue(k = 3, n = 40, mutations = 2000, active = 2,
                         seed = 21)
  set.seed(1)
  sig <- nmf_signatures(p$counts, rank = auto_rank(1, 8), nrun = 6)
  expect_s3_class(sig$rank_search, "nmfkit_rank_search")
  expect_identical(sig$rank, 3L)
  expect_identical(sig$ranks, 3L)
  # the search fitted fewer ranks than the range holds
  expect_lt(nrow(sig$rank_search$summary), 8)
  # scored in the replicates' loss (KL: beta 1)
  expect_identical(sig$rank_search$beta, 1)
  m <- match_components(p$W, basis(sig))
  expect_gt(min(m$similarity), 0.95)
  expect_output(print(sig), "chosen by held-out search")
  # a vector of two ranks is two ranks to compare, not a range
  set.seed(1)
  two <- nmf_signatures(p$counts, rank = c(2, 4), nrun = 4)
  expect_identical(two$ranks, c(2L, 4L))
  expect_null(two$rank_search)
  expect_error(nmf_signatures(p$counts, rank = "automatic", nrun = 4),
               class = "nmfkit_error_rank")
})
