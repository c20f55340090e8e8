# Planted programs with disjoint supports (well separated), mixed with
# random usages plus a little noise.
planted_programs <- function(m = 60, n = 50, k = 4, seed = 11) {
  withr::with_seed(seed, {
    W0 <- matrix(0, m, k)
    block <- rep(seq_len(k), length.out = m)
    W0[cbind(seq_len(m), block)] <- runif(m, 0.5, 1.5)
    H0 <- matrix(runif(k * n), k, n) * (runif(k * n) > 0.3)
    x <- W0 %*% H0 + matrix(runif(m * n, 0, 0.01), m, n)
  })
  dimnames(x) <- list(paste0("g", seq_len(m)), paste0("c", seq_len(n)))
  list(W0 = W0, H0 = H0, x = x)
}

test_that("consensus recovers planted programs; stable at the planted rank", {
  p <- planted_programs()
  set.seed(1)
  cons <- nmf_consensus(p$x, rank = 3:5, nrun = 8)
  expect_s3_class(cons, "nmfkit_consensus")
  expect_identical(cons$ranks, 3:5)
  expect_identical(names(cons$results),
                   c("rank", "stability", "error", "kept", "agreement"))
  fit <- cons$fits[["4"]]
  expect_s3_class(fit, c("nmfkit_programs", "nmfkit"), exact = TRUE)
  m <- match_components(p$W0, fit)
  expect_true(all(m$similarity > 0.99))
  r <- cons$results
  # stable at the planted rank (and below it, where runs merge the same
  # programs), less so above it, where runs split them differently
  expect_gt(r$stability[r$rank == 4], 0.99)
  expect_gt(r$stability[r$rank == 4], r$stability[r$rank == 5])
  expect_gt(r$agreement[r$rank == 4], 0.99)
  # the error falls to the noise at the planted rank
  expect_lt(r$error[r$rank == 4], 0.02)
  expect_lt(10 * r$error[r$rank == 4], r$error[r$rank == 3])
})

test_that("consensus programs: median of clusters, refit by NNLS, ordered", {
  p <- planted_programs()
  set.seed(2)
  cons <- nmf_consensus(p$x, rank = 4, nrun = 6, density_threshold = 0.5)
  fit <- cons$fits[[1]]
  # dimnames carried through
  expect_identical(rownames(basis(fit)), rownames(p$x))
  expect_identical(colnames(coef(fit)), colnames(p$x))
  expect_identical(colnames(basis(fit)), paste0("nmf", 1:4))
  # every run's components kept, at unit norm, with their runs
  expect_identical(dim(fit$components), c(60L, 24L))
  expect_equal(unname(colSums(fit$components^2)), rep(1, 24))
  expect_identical(fit$run, rep(1:6, each = 4))
  expect_length(fit$run_loss, 6)
  # local density: mean distance to the as.integer(0.3 * 6) = 1 nearest
  D <- as.matrix(dist(t(fit$components)))
  dens <- vapply(1:24, function(i) min(D[i, -i]), numeric(1))
  expect_equal(fit$density, dens, tolerance = 1e-7)
  expect_identical(fit$kept, fit$density < 0.5)
  # programs: the median of each cluster's unit vectors, scaled to sum 1
  for (j in 1:4) {
    med <- apply(fit$components[, which(fit$cluster == j), drop = FALSE], 1,
                 median)
    expect_equal(unname(basis(fit)[, j]), unname(med / sum(med)))
  }
  expect_equal(unname(colSums(basis(fit))), rep(1, 4))
  # H refitted with the programs fixed: predict() of the data
  expect_equal(coef(fit), predict(fit, p$x))
  expect_true(all(diff(rowSums(coef(fit))) <= 0))
  expect_equal(fit$loss, summary(fit)$relative_error)
  # the methods of a fit work on the programs
  expect_output(print(fit), "Consensus of 6 runs")
  expect_identical(length(clusters(fit)), 50L)
  expect_identical(names(feature_score(cons)), rownames(p$x))
  expect_s3_class(match_components(cons, fit), "nmfkit_match")
})

test_that("identical under sequential and multisession plans", {
  skip_on_cran()
  skip_if_not_installed("future")
  p <- planted_programs(40, 30, 3, seed = 12)
  run <- function() {
    set.seed(5)
    nmf_consensus(p$x, 2:3, nrun = 4, control = nmf_control(max_iter = 50))
  }
  old <- future::plan("sequential")
  on.exit(future::plan(old), add = TRUE)
  a <- run()
  future::plan("multisession", workers = 2)
  b <- run()
  a$call <- b$call <- NULL
  for (k in names(a$fits)) a$fits[[k]]$call <- b$fits[[k]]$call <- NULL
  expect_identical(a, b)
})

test_that("the density filter drops outliers, or keeps all with a warning", {
  p <- planted_programs(40, 30, 3, seed = 13)
  set.seed(3)
  expect_warning(cons <- nmf_consensus(p$x, 3, nrun = 3,
                                       density_threshold = 1e-12),
                 class = "nmfkit_warning_density")
  expect_true(all(cons$fits[[1]]$kept))
  # runs that agree but for one stray component: it alone is dropped, and
  # the programs are the planted ones
  runs <- withr::with_seed(4, lapply(1:6, function(r) {
    W <- p$W0 * (1 + matrix(runif(length(p$W0), 0, 0.01), nrow(p$W0)))
    if (r == 2) W[, 3] <- runif(nrow(W))
    list(W = W, loss = 0)
  }))
  control <- nmfkit:::check_control(nmf_control(), fn = "nmf")
  f <- nmfkit:::consensus_programs(p$x, 3L, runs, 0.5, 2L, control, NULL,
                                   NULL)
  expect_identical(which(!f$kept), 6L)
  expect_gt(f$density[6], 0.5)
  expect_true(all(f$density[-6] < 0.1))
  expect_true(is.na(f$cluster[6]))
  expect_true(all(match_components(p$W0, f)$similarity > 0.999))
})

test_that("methods of a consensus: print, summary, plot, tidy, glance", {
  p <- planted_programs(40, 30, 3, seed = 12)
  set.seed(4)
  cons <- nmf_consensus(p$x, 2:3, nrun = 3)
  expect_output(print(cons), "cNMF")
  s <- summary(cons)
  expect_s3_class(s, c("summary.nmfkit_consensus", "data.frame"))
  expect_equal(as.data.frame(s), cons$results, ignore_attr = "title")
  expect_output(print(s), "Consensus programs by rank")
  expect_identical(glance(cons), cons$results)
  td <- tidy(cons)
  expect_identical(names(td), c("rank", "feature", "component", "value"))
  expect_identical(nrow(td), 40L * (2L + 3L))
  th <- tidy(cons, matrix = "H")
  expect_identical(nrow(th), 30L * (2L + 3L))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(cons))
  expect_invisible(plot(cons, type = "density"))
  expect_invisible(plot(cons, type = "density", rank = 2))
  expect_invisible(plot(cons, type = "basis", rank = 3))
  # rank 1: no silhouette
  one <- nmf_consensus(p$x, 1, nrun = 2)
  expect_true(is.na(one$results$stability))
  expect_invisible(plot(one))
  # basis() and coef() of one rank, or of a chosen rank (issue 36)
  expect_identical(basis(one), one$fits[["1"]]$W)
  expect_identical(coef(one), one$fits[["1"]]$H)
  expect_identical(basis(cons, rank = 3), cons$fits[["3"]]$W)
  expect_identical(coef(cons, rank = 2), cons$fits[["2"]]$H)
  expect_error(basis(cons), class = "nmfkit_error_rank")
  expect_error(coef(cons, rank = 5), class = "nmfkit_error_rank")
})

test_that("bad input to nmf_consensus() gives classed errors", {
  x <- small_data()
  expect_error(nmf_consensus(x), class = "nmfkit_error_missing")
  expect_error(nmf_consensus(x, 0), class = "nmfkit_error_rank")
  expect_error(nmf_consensus(x, c(2, 99)), class = "nmfkit_error_rank")
  expect_error(nmf_consensus(-x, 2), class = "nmfkit_error")
  expect_error(nmf_consensus(x, 2, nrun = 1), class = "nmfkit_error_count")
  expect_error(nmf_consensus(x, 2, density_threshold = 0),
               class = "nmfkit_error_value")
  expect_error(nmf_consensus(x, 2, neighbors = 1.5),
               class = "nmfkit_error_value")
  expect_error(nmf_consensus(x, 2, keep_data = NA),
               class = "nmfkit_error_flag")
  expect_error(nmf_consensus(x, 2, init = "nndsvd"),
               class = "nmfkit_error_dots")
  expect_error(nmf_consensus(x, 2, method = "hal"),
               class = "nmfkit_error_choice")
  expect_error(nmf_consensus(x, 2, control = list(maxiter = 3)),
               class = "nmfkit_error_control")
  set.seed(1)
  cons <- nmf_consensus(x, 2:3, nrun = 2, control = nmf_control(max_iter = 20))
  expect_error(feature_score(cons), class = "nmfkit_error_type")
  expect_error(plot(cons, type = "basis"), class = "nmfkit_error_rank")
  expect_error(plot(cons, type = "density", rank = 9),
               class = "nmfkit_error_rank")
  expect_error(plot(cons, type = "dens"), class = "nmfkit_error_choice")
  expect_error(tidy(cons, matrix = "V"), class = "nmfkit_error_choice")
  expect_error(print(cons, 1), class = "nmfkit_error_dots")
  expect_error(summary(cons, 1), class = "nmfkit_error_dots")
})

test_that("sparse data give the programs of dense data", {
  p <- planted_programs(40, 30, 3, seed = 12)
  xs <- Matrix::Matrix(p$x * (p$x > 0.3), sparse = TRUE)
  run <- function(x) {
    set.seed(6)
    nmf_consensus(x, 3, nrun = 3, method = "hals",
                  control = nmf_control(max_iter = 50))
  }
  a <- run(as.matrix(xs))
  b <- run(xs)
  expect_equal(b$results, a$results)
  expect_equal(basis(b$fits[[1]]), basis(a$fits[[1]]))
})

test_that("consensus programs at tiny, denormal and huge scales are those of x", {
  x <- small_data(m = 15, n = 12)
  ctl <- nmf_control(max_iter = 30)
  for (k in 1:2) {
    for (s in c(2^-1060, 1e-300, 1e300)) {
      # against the same entries at scale 1 (denormals keep fewer bits)
      ref <- withr::with_seed(1, nmf_consensus(x * s / s, k, nrun = 3,
                                               control = ctl))
      r <- withr::with_seed(1, nmf_consensus(x * s, k, nrun = 3,
                                             control = ctl))
      p <- r$fits[[1]]
      expect_true(all(is.finite(p$W)) && all(is.finite(p$H)),
                  info = paste(k, s))
      expect_identical(p$status, "converged")
      expect_equal(p$W, ref$fits[[1]]$W, tolerance = 1e-6,
                   info = paste(k, s))
      expect_equal(r$results$error, ref$results$error, tolerance = 1e-6)
    }
  }
})
