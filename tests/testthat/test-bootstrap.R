# nmf_bootstrap() and bootstrap intervals of predict().

boot_data <- function(m = 30, n = 40, k = 3, seed = 1, exact = FALSE) {
  withr::with_seed(seed, {
    W0 <- matrix(rexp(m * k), m, k) * (runif(m * k) < 0.6)
    W0[cbind(seq_len(k), seq_len(k))] <- 3   # every component used
    H0 <- matrix(rexp(k * n), k, n) * (runif(k * n) < 0.6)
    H0[cbind(seq_len(k), seq_len(k))] <- 3
    mu <- W0 %*% H0
    x <- if (exact) mu else matrix(rpois(m * n, 10 * mu), m) / 10
    dimnames(x) <- list(paste0("g", seq_len(m)), paste0("s", seq_len(n)))
    list(x = x, W0 = W0, H0 = H0)
  })
}

test_that("replicates are aligned to the fit: a permutation is undone exactly", {
  d <- boot_data()
  fit <- withr::with_seed(1, nmf(d$x, 3))
  perm <- c(3, 1, 2)
  scale <- c(2, 0.5, 4)
  rep <- list(W = sweep(unname(fit$W)[, perm], 2, scale, "*"),
              H = unname(fit$H)[perm, ] / scale,
              iterations = 1L, status = "converged")
  a <- nmfkit:::align_replicates(fit, list(rep, rep), "parametric")
  # column i of the replicate that matches the fit's component i
  expect_equal(unname(a$permutation[1, ]), order(perm))
  expect_equal(a$W[, , 1], fit$W, tolerance = 1e-14, ignore_attr = TRUE)
  expect_equal(a$H[, , 2], fit$H, tolerance = 1e-14, ignore_attr = TRUE)
  expect_equal(unname(a$cosine[1, ]), rep(1, 3), tolerance = 1e-14)
})

test_that("a column drawn c times is fitted once, scaled by c^(1 / beta)", {
  d <- boot_data()
  tight <- nmf_control(tol = 1e-12, max_iter = 3000)
  for (loss in c("kl", "frobenius")) {
    fit <- withr::with_seed(1, nmf(d$x, 3, loss = loss, control = tight))
    lo <- nmfkit:::fit_loss(fit)
    data <- nmfkit:::bootstrap_data(fit, NULL, "columns", lo)
    s <- nmfkit:::bootstrap_setup(fit, data, "columns", lo, tight)
    expect_true(s$collapse)
    one <- withr::with_seed(4, nmfkit:::bootstrap_replicate(s))
    s$collapse <- FALSE
    copies <- withr::with_seed(4, nmfkit:::bootstrap_replicate(s))
    expect_identical(one$cols, copies$cols)
    expect_lt(length(unique(one$cols)), 0.8 * ncol(d$x))
    # the same optimum (the same loss, in fewer columns), and the copies'
    # coefficients back
    expect_equal(one$W, copies$W, tolerance = 1e-6)
    expect_equal(one$H, copies$H, tolerance = 1e-5)
  }
  # not under a loss of degree 0, a penalty or a parametric draw
  isf <- withr::with_seed(1, nmf(d$x + 1, 3, loss = "is"))
  lo <- nmfkit:::fit_loss(isf)
  expect_false(nmfkit:::bootstrap_setup(isf, d$x + 1, "columns", lo, tight)$collapse)
  pen <- withr::with_seed(1, nmf(d$x, 3, penalty = c(l1 = 0.01)))
  lo <- nmfkit:::fit_loss(pen)
  expect_false(nmfkit:::bootstrap_setup(pen, d$x, "columns", lo, tight)$collapse)
  expect_false(nmfkit:::bootstrap_setup(pen, d$x, "parametric", lo, tight)$collapse)
})

test_that("replicates stop relative to their own first violation, before the cap", {
  # they start at the fit: relative to the fit's first violation (a random
  # start's) every KL replicate ran to the 50-iteration cap (issue 36)
  d <- boot_data()
  fit <- withr::with_seed(1, nmf(d$x, 3, loss = "kl",
                                 control = nmf_control(max_iter = 2000)))
  expect_identical(fit$status, "converged")
  ctl <- nmfkit:::bootstrap_control(fit, NULL)
  expect_equal(ctl$tol, 0.05)
  expect_null(ctl$tol_reference)
  expect_identical(ctl$max_iter, 50L)
  b <- withr::with_seed(2, nmf_bootstrap(fit, B = 10))
  expect_true(all(b$status == "converged"))
  expect_lt(max(b$iterations), 50)
  # a control given is used as nmf() uses it
  own <- nmfkit:::bootstrap_control(fit, nmf_control(tol = 0.2, max_iter = 7))
  expect_equal(own$tol, 0.2)
  expect_null(own$tol_reference)
})

test_that("an exact planted fit is stable; noise lowers the stability", {
  d <- boot_data(exact = TRUE)
  ctl <- nmf_control(tol = 1e-10, max_iter = 2000)
  fit <- withr::with_seed(2, nmf(d$x, 3, control = ctl))
  expect_lt(fit$loss[fit$iterations], 1e-5)
  b <- withr::with_seed(3, nmf_bootstrap(fit, B = 8,
                                         control = nmf_control(max_iter = 200)))
  expect_true(all(b$stability$cosine > 1 - 1e-6))
  expect_equal(b$stability$recovered, rep(1, 3))
  noisy <- d$x + withr::with_seed(4, matrix(rexp(length(d$x), 1), nrow(d$x)))
  fit2 <- withr::with_seed(2, nmf(noisy, 3, control = ctl))
  b2 <- withr::with_seed(3, nmf_bootstrap(fit2, B = 8,
                                          control = nmf_control(max_iter = 200)))
  expect_true(all(b2$stability$cosine < 1 - 1e-4))
  expect_lt(mean(b2$stability$cosine), mean(b$stability$cosine))
  # and the intervals widen
  width <- function(b) stats::median(b$W_upper - b$W_lower)
  expect_gt(width(b2), 100 * width(b))
})

test_that("intervals are ordered and hold the estimate", {
  d <- boot_data()
  for (loss in c("frobenius", "kl")) {
    fit <- withr::with_seed(1, nmf(d$x, 3, loss = loss))
    for (type in c("columns", "parametric")) {
      b <- withr::with_seed(5, nmf_bootstrap(fit, B = 30, type = type))
      expect_true(all(b$W_lower <= b$W_upper))
      expect_equal(dim(b$W), c(30, 3, 30))
      expect_true(all(fit$W >= b$W_lower & fit$W <= b$W_upper))
      # widened only where the replicates' percentiles miss the estimate
      q <- nmfkit:::replicate_quantiles(b$W, c((1 - 0.9) / 2, (1 + 0.9) / 2))
      expect_identical(b$W_lower, pmin(q[[1]], fit$W))
      expect_identical(b$W_upper, pmax(q[[2]], fit$W))
      expect_lt(b$widened[["W"]], 0.2)
      if (type == "parametric") {
        expect_true(all(b$H_lower <= b$H_upper))
        expect_true(all(fit$H >= b$H_lower & fit$H <= b$H_upper))
      } else {
        expect_null(b$H)
      }
      # a wider level gives wider intervals, from the same replicates
      t90 <- tidy(b)
      t99 <- tidy(b, level = 0.99)
      expect_true(all(t99$upper - t99$lower >= t90$upper - t90$lower - 1e-15))
      expect_identical(t90$estimate, as.vector(fit$W))
      expect_identical(t90$feature[1:2], c("g1", "g2"))
    }
  }
})

test_that("the same replicates under every plan, thread count and storage", {
  d <- boot_data()
  fit1 <- withr::with_seed(1, nmf(d$x, 3, control = nmf_control(threads = 1)))
  fit2 <- withr::with_seed(1, nmf(d$x, 3, control = nmf_control(threads = 2)))
  b1 <- withr::with_seed(7, nmf_bootstrap(fit1, B = 6))
  b2 <- withr::with_seed(7, nmf_bootstrap(fit2, B = 6))
  expect_identical(b1$W, b2$W)
  expect_identical(b1$W, withr::with_seed(7, nmf_bootstrap(fit1, B = 6))$W)
  sp <- Matrix::Matrix(d$x, sparse = TRUE)
  expect_identical(withr::with_seed(7, nmf_bootstrap(fit1, B = 6, x = sp))$W,
                   b1$W)
  # sparse data (5 % nonzero): replicates stay sparse, and equal the dense
  sx <- withr::with_seed(3, Matrix::rsparsematrix(60, 80, 0.05,
                                                  rand.x = function(n) rexp(n)))
  sx <- abs(sx)
  sf <- withr::with_seed(1, nmf(sx, 2))
  expect_identical(withr::with_seed(7, nmf_bootstrap(sf, B = 3))$W,
                   withr::with_seed(7, nmf_bootstrap(sf, B = 3,
                                                     x = as.matrix(sx)))$W)
  kl <- withr::with_seed(1, nmf(d$x, 3, loss = "kl"))
  p1 <- withr::with_seed(8, nmf_bootstrap(kl, B = 4, type = "parametric"))
  skip_on_cran()
  oplan <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(oplan), add = TRUE)
  b3 <- withr::with_seed(7, nmf_bootstrap(fit1, B = 6))
  p3 <- withr::with_seed(8, nmf_bootstrap(kl, B = 4, type = "parametric"))
  future::plan(oplan)
  expect_identical(b3$W, b1$W)
  expect_identical(p3$H, p1$H)
})

test_that("scaling the data scales the replicates and changes no iteration", {
  d <- boot_data()
  for (loss in list("frobenius", "kl", 1.5)) {
    ctl <- nmf_control(max_iter = 2000)
    f1 <- withr::with_seed(1, nmf(d$x, 3, loss = loss, control = ctl))
    f4 <- withr::with_seed(1, nmf(4 * d$x, 3, loss = loss, control = ctl))
    expect_false(f1$status %in% c("numerical_error", "degenerate"))
    # (the beta = 1.5 fit stops at max_iter: the bootstrap says so)
    quiet <- function(expr) withCallingHandlers(expr,
      nmfkit_warning_convergence = function(w) invokeRestart("muffleWarning"))
    b1 <- quiet(withr::with_seed(2, nmf_bootstrap(f1, B = 4)))
    b4 <- quiet(withr::with_seed(2, nmf_bootstrap(f4, B = 4)))
    expect_identical(b1$iterations, b4$iterations)
    # the fit's own factor of scale, whatever the loss's power
    r <- sum(f4$W) / sum(f1$W)
    expect_equal(b4$W_lower, b1$W_lower * r, tolerance = 1e-12)
    expect_identical(b1$permutation, b4$permutation)
  }
  g <- withr::with_seed(1, nmf(d$x, 3))
  g4 <- withr::with_seed(1, nmf(4 * d$x, 3))
  p1 <- withr::with_seed(2, nmf_bootstrap(g, B = 4, type = "parametric"))
  p4 <- withr::with_seed(2, nmf_bootstrap(g4, B = 4, type = "parametric"))
  expect_identical(p1$iterations, p4$iterations)
  expect_equal(p4$H_upper, 2 * p1$H_upper, tolerance = 1e-12)
})

test_that("summary, print, tidy and plot", {
  d <- boot_data()
  fit <- withr::with_seed(1, nmf(d$x, 3, loss = "kl"))
  b <- withr::with_seed(5, nmf_bootstrap(fit, B = 10, type = "parametric"))
  expect_output(print(b), "10 parametric replicates")
  s <- summary(b, top = 2)
  expect_equal(nrow(s$top), 6)
  expect_output(print(s), "Top features per component")
  st <- tidy(b, "stability")
  expect_named(st, c("component", "cosine", "recovered", "cosine_low"))
  th <- tidy(b, "H")
  expect_equal(nrow(th), 3 * 40)
  expect_named(th, c("sample", "component", "estimate", "lower", "upper"))
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_invisible(plot(b, top = 4))
  expect_invisible(plot(b, components = 2, level = 0.5))
  expect_invisible(plot(b, score = "weight"))
  # glance() and augment() (issue 36)
  g <- glance(b)
  expect_identical(nrow(g), 1L)
  expect_identical(g$B, 10L)
  expect_equal(g$stability, mean(b$stability$cosine))
  expect_equal(g$width, stats::median(b$W_upper - b$W_lower))
  a <- augment(b)
  expect_identical(a[names(augment(fit))], augment(fit))
  expect_identical(a$.nmf2_lower, unname(b$H_lower[2, ]))
  expect_true(all(a$.nmf1_lower <= a$.nmf1 & a$.nmf1 <= a$.nmf1_upper))
  bc <- withr::with_seed(5, nmf_bootstrap(fit, B = 3))
  expect_false(".nmf1_lower" %in% names(augment(bc)))
  expect_error(augment(b, data = data.frame(a = 1)), class = "nmfkit_error_data")
})

test_that("summary and plot rank features by specificity, not weight", {
  # feature 1 weighs most in every component (an abundant gene); the
  # others belong to one component each
  set.seed(3)
  W0 <- rbind(c(2, 2, 2), kronecker(diag(3), matrix(1, 8, 1)))
  H0 <- matrix(rexp(3 * 40), 3, 40)
  x <- matrix(rpois(25 * 40, 10 * W0 %*% H0), 25) / 10
  rownames(x) <- c("abundant", paste0("g", 1:24))
  fit <- withr::with_seed(1, nmf(x, 3, control = nmf_control(max_iter = 500)))
  b <- withr::with_seed(2, nmf_bootstrap(fit, B = 4))
  top <- summary(b, top = 1)$top
  expect_false("abundant" %in% top$feature)
  top_w <- summary(b, top = 1, score = "weight")$top
  expect_true(all(top_w$feature == "abundant"))
  expect_error(summary(b, score = "kim"), class = "nmfkit_error_choice")
})

test_that("predict() carries the replicates' bases to new samples", {
  d <- boot_data()
  fit <- withr::with_seed(1, nmf(d$x, 3, loss = "kl"))
  b <- withr::with_seed(5, nmf_bootstrap(fit, B = 20))
  new <- d$x[, 1:4]
  p <- predict(b, new)
  expect_s3_class(p, "nmfkit_interval")
  expect_identical(p$coef, predict(fit, new))
  expect_true(all(p$lower <= p$upper))
  expect_equal(unname(colSums(p$proportion)), rep(1, 4), tolerance = 1e-12)
  expect_identical(predict(fit, new, interval = "bootstrap", bootstrap = b), p)
  expect_identical(colnames(p$coef), colnames(new))
  tp <- tidy(p)
  expect_equal(nrow(tp), 12)
  expect_true(all(tp$proportion_lower <= tp$proportion_upper))
  expect_output(print(p), "4 new samples")
  # without a bootstrap, one is run (100 column replicates)
  fr <- withr::with_seed(1, nmf(d$x, 3))
  q <- withr::with_seed(9, predict(fr, new, interval = "bootstrap", level = 0.8))
  expect_equal(q$B, 100L)
  expect_equal(q$level, 0.8)
})

test_that("an unseeded session keeps its RNG kind through every future.seed call", {
  d <- boot_data()
  fit <- withr::with_seed(1, nmf(d$x, 3))
  calls <- list(
    function() nmf_bootstrap(fit, B = 2),
    function() nmf_rank(d$x, 1:2, nfolds = 2, fraction = 0.1),
    function() nmf_rank(d$x, 1:2, method = "consensus", nrun = 2))
  for (f in calls) {
    withr::with_preserve_seed({
      if (exists(".Random.seed", envir = globalenv(), inherits = FALSE)) {
        rm(".Random.seed", envir = globalenv())
      }
      kind <- RNGkind()[1]
      suppressWarnings(f())
      expect_identical(RNGkind()[1], kind)
    })
  }
})

test_that("a fit that did not converge is bootstrapped with a warning", {
  d <- boot_data()
  short <- withr::with_seed(1, nmf(d$x, 3, control = nmf_control(max_iter = 3)))
  expect_warning(b <- withr::with_seed(1, nmf_bootstrap(short, B = 2)),
                 class = "nmfkit_warning_convergence")
  expect_s3_class(b, "nmfkit_bootstrap")
})

test_that("bad input gives classed errors", {
  d <- boot_data()
  fit <- withr::with_seed(1, nmf(d$x, 3))
  expect_error(nmf_bootstrap(fit, B = 1), class = "nmfkit_error_count")
  expect_error(nmf_bootstrap(fit, B = 2.5), class = "nmfkit_error_count")
  expect_error(nmf_bootstrap(fit, level = 1), class = "nmfkit_error_value")
  expect_error(nmf_bootstrap(fit, level = 0), class = "nmfkit_error_value")
  expect_error(nmf_bootstrap(fit, level = NA), class = "nmfkit_error_value")
  expect_error(nmf_bootstrap(fit, type = "param"), class = "nmfkit_error_choice")
  expect_error(nmf_bootstrap(fit, min_cosine = 0), class = "nmfkit_error_value")
  expect_error(nmf_bootstrap(d$x), class = "nmfkit_error_type")
  nodata <- withr::with_seed(1, nmf(d$x, 3, keep_data = FALSE))
  expect_error(nmf_bootstrap(nodata, type = "parametric"),
               class = "nmfkit_error_data")
  expect_error(nmf_bootstrap(nodata), class = "nmfkit_error_data")
  expect_error(nmf_bootstrap(nodata, x = d$x[, -1]),
               class = "nmfkit_error_dimension")
  expect_s3_class(withr::with_seed(1, nmf_bootstrap(nodata, B = 2, x = d$x)),
                  "nmfkit_bootstrap")
  # a Poisson draw needs only W H
  kl <- withr::with_seed(1, nmf(d$x, 3, loss = "kl", keep_data = FALSE))
  expect_s3_class(withr::with_seed(1, nmf_bootstrap(kl, B = 2, type = "parametric")),
                  "nmfkit_bootstrap")
  is <- withr::with_seed(1, nmf(d$x + 1, 3, loss = "is"))
  expect_error(nmf_bootstrap(is, type = "parametric"),
               class = "nmfkit_error_bootstrap")
  masked <- withr::with_seed(1, nmf(d$x, 3, mask = d$x > 2))
  expect_error(nmf_bootstrap(masked), class = "nmfkit_error_bootstrap")
  j <- withr::with_seed(1, nmf_joint(d$x[, 1:20], d$x[, 21:40], rank = 2))
  expect_error(nmf_bootstrap(j), class = "nmfkit_error_type")
  b <- withr::with_seed(1, nmf_bootstrap(fit, B = 2))
  expect_error(tidy(b, "H"), class = "nmfkit_error_choice")
  expect_error(summary(b, level = 2), class = "nmfkit_error_value")
  expect_error(predict(b), class = "nmfkit_error_missing")
  expect_error(predict(b, unname(d$x)[-1, ]),
               class = "nmfkit_error_dimension")
  expect_error(predict(fit, d$x, interval = "boot"), class = "nmfkit_error_choice")
  expect_error(predict(fit, d$x, interval = "bootstrap", level = 1.5),
               class = "nmfkit_error_value")
  expect_error(predict(fit, d$x, interval = "bootstrap", type = "class",
                       bootstrap = b), class = "nmfkit_error_choice")
  other <- withr::with_seed(2, nmf(d$x, 3))
  expect_error(predict(other, d$x, interval = "bootstrap", bootstrap = b),
               class = "nmfkit_error_bootstrap")
})
