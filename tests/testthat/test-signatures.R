# Catalogues, refitting, decomposition and per-entry assignments
# (R/catalogue-io.R, R/signatures*.R). Extraction: test-signatures-extract.R.

test_that("catalogues round-trip through the SigProfiler layout", {
  p <- planted_catalogue(k = 2, n = 3, mutations = 100)
  f <- withr::local_tempfile(fileext = ".txt")
  write_catalogue(p$counts, f)
  expect_identical(readLines(f, 1), "MutationType\tsample1\tsample2\tsample3")
  expect_identical(read_catalogue(f), p$counts)
  # signatures keep every bit
  write_catalogue(p$W, f)
  expect_identical(read_catalogue(f), p$W)
})

test_that("the COSMIC Type/Subtype layout is joined into A[C>A]A", {
  f <- withr::local_tempfile(fileext = ".txt")
  writeLines(c("Type\tSubtype\tSBS1\tSBS2", "C>A\tACA\t0.25\t0.5",
               "T>G\tTTT\t0.75\t0.5"), f)
  x <- read_catalogue(f)
  expect_identical(rownames(x), c("A[C>A]A", "T[T>G]T"))
  expect_identical(colnames(x), c("SBS1", "SBS2"))
  expect_equal(unname(x[, 2]), c(0.5, 0.5))
  writeLines(c("MutationType\ts", "A[C>A]A\t1", "A[C>A]A\t2"), f)
  expect_error(read_catalogue(f), class = "nmfkit_error_catalogue")
})

test_that("the COSMIC signatures and the MutationalPatterns example install", {
  skip_if_not(cosmic_signatures_available(),
              "COSMIC signatures not installed (tools/install-signatures.R)")
  sbs <- cosmic_signatures("SBS")
  expect_identical(dim(sbs), c(96L, 78L))
  expect_identical(rownames(sbs), nmfkit:::sbs96_contexts())
  expect_true(all(abs(colSums(sbs) - 1) < 1e-3))
  expect_identical(ncol(cosmic_signatures("SBS", artefacts = FALSE)), 60L)
  expect_identical(dim(cosmic_signatures("DBS", "GRCh38")), c(78L, 11L))
  expect_identical(dim(cosmic_signatures("ID")), c(83L, 18L))
  mm <- example_counts("mutations")
  expect_identical(dim(mm$counts), c(96L, 9L))
  expect_identical(levels(mm$labels), c("colon", "intestine", "liver"))
})

test_that("the refit equals MutationalPatterns' fit_to_signatures()", {
  skip_if_not(cosmic_signatures_available() &&
                example_counts_available("mutations"),
              "MutationalPatterns data not installed")
  # tests/testthat/fixtures/mp-refit.rds: MutationalPatterns 3.8.1's own
  # fit_to_signatures() and fit_to_signatures_strict() of its example on
  # the 60 COSMIC v3.2 signatures (states/*.rds of the Debian package,
  # extracted by fixtures/mp-refit.R)
  ref <- readRDS(test_path("fixtures", "mp-refit.rds"))
  x <- example_counts("mutations")$counts
  W <- cosmic_signatures("SBS", artefacts = FALSE)
  fit <- refit_signatures(x, W, loss = "frobenius")
  expect_identical(rownames(fit$exposures), rownames(ref$fit))
  expect_equal(fit$exposures, ref$fit, tolerance = 1e-6)
  strict <- refit_signatures(x, W, loss = "frobenius", select = "cosine",
                             max_delta = 0.05)
  expect_identical(strict$exposures > 0, ref$strict > 0)
  expect_equal(strict$exposures, ref$strict, tolerance = 1e-6)
})

test_that("exposures satisfy the KKT conditions of their loss", {
  p <- planted_catalogue(k = 4, n = 6, mutations = 3000, seed = 3)
  for (loss in c("kl", "frobenius")) {
    fit <- refit_signatures(p$counts, p$W, loss = loss)
    h <- fit$exposures
    mu <- p$W %*% h
    grad <- if (loss == "kl") {
      crossprod(p$W, 1 - p$counts / mu)
    } else {
      sweep(crossprod(p$W, mu - p$counts), 2, colSums(p$counts), "/")
    }
    expect_true(all(h >= 0))
    expect_lt(max(abs(grad[h > 1e-8])), 1e-6)
    expect_gt(min(grad[h <= 1e-8]), -1e-6)
  }
  # KL: the fitted totals are the samples' totals (W's columns sum to 1)
  fit <- refit_signatures(p$counts, p$W)
  expect_equal(colSums(fit$exposures), colSums(p$counts), tolerance = 1e-6)
})

test_that("Frobenius refits on collinear references meet the KKT conditions", {
  skip_if_not(cosmic_signatures_available(), "COSMIC signatures not installed")
  # the 60 COSMIC SBS signatures are nearly collinear (cosines up to .97);
  # the exact solver's KKT residuals are rounding errors at any scale
  W <- cosmic_signatures("SBS", artefacts = FALSE)
  set.seed(8)
  x <- simulate_catalogue(W[, c("SBS1", "SBS5", "SBS40")], n = 8,
                          mutations = 5000, active = 3)$counts
  for (scale in c(1, 2^-30)) {
    h <- refit_signatures(x * scale, W, loss = "frobenius")$exposures
    grad <- crossprod(W, W %*% h - x * scale) /
      rep(colSums(x * scale), each = ncol(W))
    expect_true(all(h >= 0))
    expect_lt(max(abs(grad[h > 0])), 1e-12)
    expect_gt(min(grad[h == 0]), -1e-12)
  }
})

test_that("contexts are matched by name, never by position", {
  p <- planted_catalogue(k = 3, n = 4, mutations = 500, seed = 4)
  perm <- sample(nrow(p$W))
  a <- refit_signatures(p$counts, p$W)
  b <- refit_signatures(p$counts, p$W[perm, ])
  expect_equal(b$exposures, a$exposures, tolerance = 1e-12)
  bad <- p$W
  rownames(bad)[5] <- "A[C>X]A"
  err <- expect_error(refit_signatures(p$counts, bad),
                      class = "nmfkit_error_context")
  expect_match(conditionMessage(err), "A[C>X]A", fixed = TRUE)
  unsummed <- p$W
  unsummed[, 2] <- unsummed[, 2] * 2
  err <- expect_error(refit_signatures(p$counts, unsummed),
                      class = "nmfkit_error_signatures")
  expect_match(conditionMessage(err), "sig2")
  frac <- p$counts
  frac[3, 2] <- 1.5
  err <- expect_error(refit_signatures(frac, p$W, B = 10),
                      class = "nmfkit_error_counts")
  expect_match(conditionMessage(err), "1.5")
})

test_that("strict refits drop absent signatures and keep present ones", {
  # 8 signatures, 2 active per sample with at least 20 % of 5,000
  # mutations: both rules keep every active one and drop most absent ones
  withr::local_seed(7)
  W <- simulate_signatures(8)
  n <- 20
  E <- matrix(0, 8, n)
  for (j in seq_len(n)) {
    s <- sample(8, 2)
    w <- stats::runif(1, 0.2, 0.8)
    E[s, j] <- c(w, 1 - w) * 5000
  }
  x <- matrix(stats::rpois(96 * n, W %*% E), 96, n,
              dimnames = list(rownames(W), NULL))
  for (select in c("cosine", "lrt")) {
    fit <- refit_signatures(x, W, select = select)
    kept <- fit$exposures > 0
    expect_true(all(kept[E > 0]), info = select)
    expect_lt(mean(kept[E == 0]), 0.05)
    plain <- refit_signatures(x, W)
    expect_gt(mean(plain$exposures[E == 0] > 0), mean(kept[E == 0]))
  }
})

test_that("bootstrap intervals cover the truth at about their level", {
  # the full calibration is bench/signatures-calibration.R
  p <- planted_catalogue(k = 4, n = 30, mutations = 2000, active = 2,
                         seed = 8)
  set.seed(1)
  fit <- refit_signatures(p$counts, p$W, B = 60, level = 0.9)
  on <- p$exposures > 0
  cover <- p$exposures >= fit$lower & p$exposures <= fit$upper
  expect_gt(mean(cover[on]), 0.75)
  expect_lt(mean(cover[on]), 0.99)
  # present signatures are present in (nearly) every replicate
  expect_gt(mean(fit$present[on]), 0.95)
  expect_true(all(fit$lower <= fit$exposures + 1e-9 |
                    fit$upper >= fit$exposures - 1e-9))
  expect_identical(dim(fit$replicates), c(4L, 30L, 60L))
  td <- tidy(fit)
  expect_named(td, c("signature", "sample", "exposure", "lower", "upper",
                     "present"))
})

test_that("interval ends are the replicates' order statistics at (B + 1) p", {
  # with B = 19 replicates 1, ..., 19 the 90 % ends are the 1st and 19th
  # (positions 20 * 0.05 and 20 * 0.95); R's default (type 7) would give
  # 1.9 and 18.1 and cover only 0.9 * 18 / 20 = 0.81
  arr <- array(rep(1:19, each = 2), c(2, 1, 19))
  q <- nmfkit:::refit_intervals(arr, 0.9)
  expect_equal(q$lower, matrix(1, 2, 1))
  expect_equal(q$upper, matrix(19, 2, 1))
  # B = 39 at 80 %: positions 4 and 36
  q <- nmfkit:::refit_intervals(array(39:1, c(1, 1, 39)), 0.8)
  expect_equal(c(q$lower, q$upper), c(4, 36))
})

test_that("bootstrap intervals from few replicates still cover at level", {
  # 180 true exposures (60 samples x 3 active of 6 signatures, 2,000
  # mutations), B = 10, level 0.8: over 8 seeds the shipped ends covered
  # 0.79-0.85 (mean 0.815), R's default quantile 0.61-0.74 (its level
  # (B - 1) / (B + 1) = 0.65); bench/signatures-results.md has the full
  # calibration (SE of one share here about 0.03)
  p <- withr::with_seed(11, {
    W <- simulate_signatures(6)
    c(simulate_catalogue(W, n = 60, mutations = 2000, active = 3),
      list(W = W))
  })
  set.seed(1)
  fit <- refit_signatures(p$counts, p$W, B = 10, level = 0.8)
  on <- p$exposures > 0
  cover <- mean((p$exposures >= fit$lower & p$exposures <= fit$upper)[on])
  expect_gt(cover, 0.75)
  expect_lt(cover, 0.9)
})

test_that("refits are identical under any plan, thread count and storage", {
  skip_on_cran()
  p <- planted_catalogue(k = 3, n = 6, mutations = 800, seed = 9)
  run <- function(x = p$counts) {
    set.seed(5)
    refit_signatures(x, p$W, select = "lrt", B = 8)
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
  expect_identical(s$exposures, a$exposures)
  expect_identical(s$replicates, a$replicates)
})

test_that("decomposition recovers a planted mixture of reference signatures", {
  withr::local_seed(11)
  ref <- simulate_signatures(10)
  mix <- cbind(a = 0.6 * ref[, 2] + 0.4 * ref[, 7], b = ref[, 5])
  d <- decompose_signatures(mix, ref)
  expect_equal(d$weights[c("sig2", "sig7"), "a"], c(sig2 = 0.6, sig7 = 0.4),
               tolerance = 1e-6)
  expect_identical(d$table$n_components, c(2, 1))
  expect_identical(d$table$best_match, c("sig2", "sig5"))
  expect_equal(d$table$cosine, c(1, 1), tolerance = 1e-8)
  expect_equal(unname(colSums(d$weights)), c(1, 1))
})

test_that("entry assignments sum to 1 and stay sparse", {
  p <- planted_catalogue(k = 3, n = 10, mutations = 300, seed = 12)
  fit <- refit_signatures(p$counts, p$W)
  a <- entry_assignments(fit)
  expect_identical(nrow(a), 3L * sum(p$counts > 0))
  tot <- tapply(a$probability, paste(a$feature, a$sample), sum)
  expect_equal(unname(as.vector(tot)), rep(1, length(tot)), tolerance = 1e-12)
  # the expected counts add up to the data, entry by entry
  ex <- tapply(a$expected, paste(a$feature, a$sample), sum)
  cnt <- tapply(a$count, paste(a$feature, a$sample), `[`, 1)
  expect_equal(ex, cnt, tolerance = 1e-12)
  # sparse data: sparse arrays with the data's pattern
  xs <- Matrix::Matrix(p$counts, sparse = TRUE)
  arr <- entry_assignments(fit, x = xs, format = "array")
  expect_length(arr, 3L)
  expect_s4_class(arr[[1]], "dgCMatrix")
  expect_identical(arr[[1]]@i, xs@i)
  dense <- entry_assignments(fit, format = "array")
  expect_equal(as.matrix(arr[[2]]), dense[, , 2], ignore_attr = TRUE)
  # any nmfkit fit
  kl <- withr::with_seed(1, nmf(p$counts, 3, loss = "kl"))
  b <- entry_assignments(kl, format = "array")
  s <- apply(b, c(1, 2), sum)
  expect_equal(s[p$counts > 0], rep(1, sum(p$counts > 0)), tolerance = 1e-12)
  expect_true(all(b[p$counts == 0] == 0))
})

test_that("signature objects print and plot", {
  p <- planted_catalogue(k = 3, n = 5, mutations = 400, seed = 13)
  fit <- withr::with_seed(1, refit_signatures(p$counts, p$W, B = 5))
  expect_output(print(fit), "Signature refit: 5 samples on 3 signatures")
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off(), add = TRUE)
  expect_identical(plot(fit), fit)
  expect_identical(plot(fit, type = "intervals"), fit)
  expect_identical(plot_spectra(p$W), p$W)
  d <- decompose_signatures(p$W, p$W)
  expect_output(print(d), "Decomposition of 3 signatures")
  expect_identical(plot(d), d)
})
