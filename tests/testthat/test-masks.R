# Missing entries, masks and weights in nmf().

# The masked loss sum(a * (x - W H)^2) of a fit, a = entry weights.
masked_sq_loss <- function(x, a, fit) {
  r <- x - fit$W %*% fit$H
  r[a == 0] <- 0
  sum(a * r^2)
}

test_that("no mask and unit weights give the unmasked fit, bit for bit", {
  x <- small_data()
  set.seed(1)
  f0 <- nmf(x, 3)
  set.seed(1)
  f1 <- nmf(x, 3, weights = matrix(1, nrow(x), ncol(x)))
  set.seed(1)
  f2 <- nmf(x, 3, mask = matrix(FALSE, nrow(x), ncol(x)), na = "omit")
  expect_identical(f1$W, f0$W)
  expect_identical(f1$H, f0$H)
  expect_identical(f2$W, f0$W)
  expect_null(f1$entry_weights)
})

test_that("masked HALS, MU and ANLS decrease the masked loss", {
  x <- small_data()
  x[withr::with_seed(3, sample(length(x), 0.2 * length(x)))] <- NA
  a <- 1 * !is.na(x)
  x0 <- replace(x, is.na(x), 0)
  for (m in c("hals", "mu", "anls")) {
    losses <- vapply(1:6, function(it) {
      set.seed(1)
      fit <- nmf(x, 3, method = m, na = "omit",
                 control = nmf_control(max_iter = it, tol = 0))
      masked_sq_loss(x0, a, fit)
    }, numeric(1))
    expect_true(all(diff(losses) <= 1e-12 * losses[-1]), label = m)
    set.seed(1)
    fit <- nmf(x, 3, method = m, na = "omit",
               control = nmf_control(max_iter = 6, tol = 0))
    expect_equal(fit$loss[6], sqrt(losses[6] / sum(x0^2)), tolerance = 1e-8)
  }
})

test_that("KKT conditions hold on the observed entries", {
  x <- small_data()
  set.seed(1)
  x[withr::with_seed(4, sample(length(x), 0.2 * length(x)))] <- NA
  a <- 1 * !is.na(x)
  fit <- nmf(x, 3, method = "anls", na = "omit",
             control = nmf_control(tol = 1e-12, max_iter = 3000))
  r <- a * (fit$W %*% fit$H - replace(x, is.na(x), 0))
  gw <- r %*% t(fit$H)
  gh <- t(fit$W) %*% r
  scale <- max(abs(gw), abs(gh), 1)
  expect_gt(min(gw, gh), -1e-6 * scale)
  expect_lt(max(abs(fit$W * gw), abs(fit$H * gh)), 1e-6 * scale)
})

test_that("planted low rank with 30 % removed is recovered", {
  p <- planted_nmf(40, 30, 3, seed = 5)
  held <- withr::with_seed(6, sample(length(p$x), 0.3 * length(p$x)))
  x <- p$x
  x[held] <- NA
  set.seed(1)
  fit <- nmf(x, 3, method = "anls", na = "omit",
             control = nmf_control(tol = 1e-14, max_iter = 5000))
  pred <- fitted(fit)[held]
  expect_lt(sqrt(sum((pred - p$x[held])^2) / sum(p$x[held]^2)), 1e-4)
  expect_true(all(is.na(residuals(fit)[held])))
  expect_false(anyNA(residuals(fit)[-held]))
})

test_that("weight 2 is the entry counted twice", {
  x <- small_data(m = 12, n = 10)
  xd <- rbind(x, x[3, , drop = FALSE])
  w <- matrix(1, nrow(x), ncol(x))
  w[3, ] <- 2
  w[1, 1] <- 3  # both fits weighted, so both run the masked solver
  wd <- rbind(w, 1)
  wd[3, ] <- 1
  set.seed(2)
  start <- list(W = matrix(runif(12 * 2), 12), H = matrix(runif(2 * 10), 2))
  ctl <- nmf_control(max_iter = 40, tol = 0)
  f <- nmf(x, 2, init = start, weights = w, control = ctl)
  fd <- nmf(xd, 2, init = list(W = rbind(start$W, start$W[3, ]), H = start$H),
            weights = wd, control = ctl)
  expect_equal(fd$H, f$H, tolerance = 1e-10)
  expect_equal(unname(fd$W[1:12, ]), unname(f$W), tolerance = 1e-10)
})

test_that("1 and 2 threads give identical masked fits", {
  x <- withr::with_seed(7, matrix(runif(300 * 200), 300, 200))
  x[withr::with_seed(8, sample(length(x), 0.05 * length(x)))] <- NA
  fit <- function(t) {
    set.seed(3)
    nmf(x, 8, na = "omit", control = nmf_control(max_iter = 5, threads = t))
  }
  f1 <- fit(1)
  f2 <- fit(2)
  expect_identical(f1$W, f2$W)
  expect_identical(f1$H, f2$H)
})

test_that("masked fits are equivariant", {
  x <- small_data()
  x[withr::with_seed(9, sample(length(x), 0.1 * length(x)))] <- NA
  set.seed(4)
  f1 <- nmf(x, 3, na = "omit")
  set.seed(4)
  f2 <- nmf(1000 * x, 3, na = "omit")
  expect_identical(f2$iterations, f1$iterations)
  expect_equal(f2$W, sqrt(1000) * f1$W, tolerance = 1e-8)
  expect_equal(f2$loss, f1$loss, tolerance = 1e-8)
})

test_that("sparse NA, masks and mask = 'zeros' match their dense twins", {
  x <- small_data()
  x[x < 0.5] <- 0
  xs <- Matrix::Matrix(x, sparse = TRUE)
  xs@x[c(2, 7, 11)] <- NA
  xd <- as.matrix(xs)
  start <- withr::with_seed(5, list(W = matrix(runif(30 * 2), 30),
                                    H = matrix(runif(2 * 20), 2)))
  ctl <- nmf_control(max_iter = 30, tol = 0)
  # one method for both twins ("auto" picks ANLS for dense, HALS for sparse)
  nmf <- function(...) nmfkit::nmf(..., method = "hals")
  fs <- nmf(xs, 2, init = start, na = "omit", control = ctl)
  fd <- nmf(xd, 2, init = start, na = "omit", control = ctl)
  expect_equal(fs$H, fd$H, tolerance = 1e-10)
  mk <- is.na(xd)
  fm <- nmf(replace(xd, mk, 1), 2, init = start, mask = mk, control = ctl)
  fl <- nmf(replace(xd, mk, 1), 2, init = start, control = ctl,
            mask = methods::as(mk, "CsparseMatrix"))
  expect_equal(fm$H, fd$H, tolerance = 1e-10)
  expect_equal(fl$H, fd$H, tolerance = 1e-10)
  xz <- xs
  xz@x[is.na(xz@x)] <- 1
  fz <- nmf(xz, 2, init = start, mask = "zeros", control = ctl)
  fzd <- nmf(as.matrix(xz), 2, init = start, mask = "zeros", control = ctl)
  expect_equal(fz$H, fzd$H, tolerance = 1e-10)
  expect_identical(fz$entry_weights$base, 0)
  r <- residuals(fz)
  expect_identical(is.na(r), as.matrix(xz) == 0)
})

test_that("a sparse mask on sparse data reads the masked values right", {
  x <- small_data()
  x[x < 0.5] <- 0
  xs <- Matrix::Matrix(x, sparse = TRUE)
  mk <- withr::with_seed(6, matrix(runif(length(x)) < 0.2, nrow(x)))
  a <- masked_setup(xs, NULL, methods::as(mk, "CsparseMatrix"))
  expect_identical(a$value, x[cbind(a$i + 1L, a$j + 1L)])
  expect_identical(sum(a$value != 0), sum(mk & x != 0))
  start <- withr::with_seed(5, list(W = matrix(runif(30 * 2), 30),
                                    H = matrix(runif(2 * 20), 2)))
  ctl <- nmf_control(max_iter = 30, tol = 0)
  fs <- nmf(xs, 2, method = "hals", init = start, control = ctl,
            mask = methods::as(mk, "CsparseMatrix"))
  fd <- nmf(x, 2, method = "hals", init = start, control = ctl, mask = mk)
  expect_equal(fs$H, fd$H, tolerance = 1e-10)
})

test_that("bad weights and masks give classed errors naming them", {
  x <- small_data()
  expect_error(nmf(x, 2, weights = x[-1, ]), class = "nmfkit_error_weights")
  expect_error(nmf(x, 2, weights = -x), class = "nmfkit_error_weights")
  expect_error(nmf(x, 2, weights = replace(x, 3, NA)),
               class = "nmfkit_error_weights")
  expect_error(nmf(x, 2, mask = "none"), class = "nmfkit_error_choice")
  expect_error(nmf(x, 2, mask = 1 * (x > 0.5)), class = "nmfkit_error_mask")
  mk <- col(x) == 4
  expect_snapshot(nmf(x, 2, mask = mk), error = TRUE)
  expect_snapshot(nmf(x, 2, weights = replace(x, 3, -1)), error = TRUE)
  expect_error(nmf(replace(x, 1, NA), 2), class = "nmfkit_error_nonfinite")
})

test_that("many missing entries are filled in: loss decreases, recovery", {
  # 30 % of all entries of sparse planted data masked: more missing entries
  # (x rank) than 4 x stored ones, so the solver fills them in with its
  # predictions (the EM step) instead of correcting Gram matrices
  set.seed(5)
  w0 <- matrix(runif(200 * 3), 200) * (runif(600) < 0.15)
  h0 <- matrix(runif(3 * 100), 3) * (runif(300) < 0.3)
  w0[cbind(1:3, 1:3)] <- 2
  h0[cbind(1:3, 1:3)] <- 2
  x0 <- w0 %*% h0
  x <- Matrix::drop0(methods::as(x0, "CsparseMatrix"))
  held <- sample(length(x0), 0.3 * length(x0))
  mk <- matrix(FALSE, 200, 100)
  mk[held] <- TRUE
  expect_gt(sum(mk) * 3, 4 * length(x@x))
  losses <- vapply(c(1, 2, 5, 10), function(it) {
    set.seed(1)
    fit <- nmf(x, 3, mask = mk, control = nmf_control(max_iter = it, tol = 0))
    masked_sq_loss(x0, 1 * !mk, fit)
  }, numeric(1))
  expect_true(all(diff(losses) <= 1e-12 * losses[-1]))
  set.seed(1)
  fit <- nmf(x, 3, mask = mk, method = "anls",
             control = nmf_control(tol = 1e-12, max_iter = 3000))
  err <- sqrt(sum((fitted(fit)[held] - x0[held])^2) / sum(x0[held]^2))
  expect_lt(err, 1e-4)
})

test_that("a few missing entries per line are filled in: monotone, KKT, threads", {
  # at most 1 % of every row and column masked (nmf_rank()'s folds of sparse
  # data): HALS fills them in with the prediction on the unmasked engine
  set.seed(11)
  w0 <- matrix(runif(400 * 3), 400) * (runif(1200) < 0.3)
  h0 <- matrix(runif(3 * 300), 3) * (runif(900) < 0.3)
  w0[cbind(1:400, rep_len(1:3, 400))] <- 1
  h0[cbind(rep_len(1:3, 300), 1:300)] <- 1
  x0 <- w0 %*% h0 + 0.01
  x <- Matrix::drop0(methods::as(x0 * (x0 > 0.3), "CsparseMatrix"))
  mk <- matrix(FALSE, 400, 300)
  mk[cbind(1:400, (1:400 * 7) %% 300 + 1)] <- TRUE
  expect_lte(max(rowMeans(mk), colMeans(mk)), 0.01)
  a <- 1 * !mk
  xd <- as.matrix(x)
  fit <- function(it, threads = 1, tol = 0) {
    set.seed(1)
    nmf(x, 4, method = "hals", mask = mk,
        control = nmf_control(max_iter = it, tol = tol, threads = threads))
  }
  losses <- vapply(c(1, 2, 5, 10, 20), function(it) {
    masked_sq_loss(xd, a, fit(it))
  }, numeric(1))
  expect_true(all(diff(losses) <= 1e-12 * losses[-1]))
  expect_equal(fit(20)$loss[20], sqrt(losses[5] / sum(a * xd^2)),
               tolerance = 1e-8)
  expect_identical(fit(5, 2)$W, fit(5)$W)
  f <- suppressWarnings(fit(3000, tol = 1e-10))
  r <- a * (f$W %*% f$H - xd)
  gw <- r %*% t(f$H)
  gh <- t(f$W) %*% r
  scale <- max(abs(gw), abs(gh), 1)
  expect_gt(min(gw, gh), -1e-5 * scale)
  expect_lt(max(abs(f$W * gw), abs(f$H * gh)), 1e-5 * scale)
})

test_that("dense and sparse storage give one weight encoding and the same masked fit", {
  set.seed(21)
  x <- matrix(rpois(40 * 30, 2) * (runif(1200) < 0.3), 40, 30)
  x[1, 1] <- 3
  xs <- Matrix::Matrix(x, sparse = TRUE)
  xn <- x
  xn[cbind(c(2, 9, 17), c(5, 6, 20))] <- NA
  xns <- methods::as(xn, "dgCMatrix")
  mask <- matrix(FALSE, 40, 30)
  mask[cbind(c(3, 8, 30), c(1, 12, 25))] <- TRUE
  cases <- list(
    na = list(list(xn, na = "omit"), list(xns, na = "omit")),
    mask = list(list(x, mask = mask), list(xs, mask = mask)),
    zeros = list(list(x, mask = "zeros"), list(xs, mask = "zeros")))
  for (nm in names(cases)) {
    fits <- lapply(cases[[nm]], function(a) {
      set.seed(3)
      suppressWarnings(do.call(nmf, c(a, list(rank = 3,
        control = nmf_control(max_iter = 30)))))
    })
    expect_identical(fits[[1]]$entry_weights, fits[[2]]$entry_weights,
                     label = nm)
    expect_identical(fits[[1]]$iterations, fits[[2]]$iterations, label = nm)
    expect_equal(fits[[1]]$W, fits[[2]]$W, tolerance = 1e-10, label = nm)
    expect_equal(fits[[1]]$H, fits[[2]]$H, tolerance = 1e-10, label = nm)
  }
})

test_that("a masked fit's solver follows the share of entries it observes", {
  # 30 % nonzero data with a few held-out entries: observed almost whole,
  # so ANLS, as for the data without the mask (the density rule alone
  # would say HALS)
  set.seed(22)
  x <- matrix(rpois(40 * 30, 2) * (runif(1200) < 0.2), 40, 30)
  x[1, ] <- 1
  mask <- matrix(FALSE, 40, 30)
  mask[cbind(c(3, 8), c(1, 12))] <- TRUE
  expect_identical(nmf(x, 2, mask = mask)$method, "anls")
  # recommender data: only the stored entries count
  expect_identical(nmf(x, 2, mask = "zeros")$method, "hals")
})
