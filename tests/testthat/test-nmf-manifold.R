test_that("the k-NN graph follows constructW for all three weights", {
  set.seed(11)
  x <- matrix(runif(3 * 40), 3, 40)
  x[, 7] <- x[, 3]  # a duplicate point: a tie broken by the lower index
  for (w in c("binary", "heat", "selftune")) {
    g <- nmfkit:::knn_graph(x, 4L, w, 1L)
    expect_s4_class(g, "dgCMatrix")
    expect_equal(as.matrix(g), knn_reference(x, 4L, w), tolerance = 1e-10,
                 ignore_attr = TRUE)
    expect_equal(as.matrix(g), t(as.matrix(g)))
    expect_true(all(Matrix::diag(g) == 0))
  }
})

test_that("graphs and fits are identical for 1 and 2 threads", {
  set.seed(2)
  x <- matrix(runif(5 * 300), 5, 300)
  expect_identical(nmfkit:::knn_graph(x, 6L, "heat", 1L),
                   nmfkit:::knn_graph(x, 6L, "heat", 2L))
  for (m in c("gnmf", "rmnmf")) {
    fits <- lapply(1:2, function(th) {
      set.seed(5)
      nmf_manifold(x, 3, method = m, init = "random",
                   control = nmf_control(threads = th, max_iter = 60))
    })
    expect_identical(fits[[1]]$W, fits[[2]]$W)
    expect_identical(fits[[1]]$G, fits[[2]]$G)
  }
})

test_that("the Laplacian identity holds and L is PSD", {
  set.seed(3)
  x <- matrix(runif(2 * 30), 2, 30)
  w <- as.matrix(nmfkit:::knn_graph(x, 3L, "heat", 1L))
  lap <- diag(rowSums(w)) - w
  g <- matrix(rnorm(30 * 2), 30, 2)
  pairs <- sum(outer(seq_len(30), seq_len(30), Vectorize(function(i, j) {
    w[i, j] * sum((g[i, ] - g[j, ])^2)
  })))
  expect_equal(sum(diag(t(g) %*% lap %*% g)), pairs / 2)
  expect_gt(min(eigen(lap, symmetric = TRUE)$values), -1e-10)
})

test_that("cluster_acc matches clue's assignment and ignores relabelling", {
  skip_if_not_installed("clue")
  set.seed(4)
  for (rep in 1:5) {
    y <- sample(1:4, 60, replace = TRUE)
    yhat <- sample(1:5, 60, replace = TRUE)
    tab <- table(factor(y, 1:5), factor(yhat, 1:5))
    best <- clue::solve_LSAP(tab, maximum = TRUE)
    expect_equal(cluster_acc(y, yhat),
                 sum(tab[cbind(1:5, as.integer(best))]) / 60)
    expect_equal(cluster_acc(y, c(9, 7, 8, 5, 6)[yhat]), cluster_acc(y, yhat))
  }
  expect_equal(cluster_acc(c("a", "a", "b"), c(2, 2, 1)), 1)
})

test_that("cluster_nmi is symmetric, 1 on identical partitions", {
  set.seed(5)
  y <- sample(1:3, 50, replace = TRUE)
  yhat <- sample(1:4, 50, replace = TRUE)
  for (nz in c("max", "sqrt", "mean")) {
    expect_equal(cluster_nmi(y, yhat, nz), cluster_nmi(yhat, y, nz))
    expect_equal(cluster_nmi(y, letters[y], nz), 1)
  }
  expect_lt(cluster_nmi(y, yhat), 0.2)
  expect_equal(cluster_nmi(rep(1, 5), rep(2, 5)), 0)
})

test_that("two_moons draws scikit-learn's make_moons reproducibly", {
  set.seed(6)
  x <- two_moons(101, dim = 4, noise = 0)
  expect_equal(dim(x), c(4L, 101L))
  expect_equal(attr(x, "labels"), rep(1:2, c(50, 51)))
  expect_equal(colSums(x[1:2, 1:50]^2), rep(1, 50))
  expect_equal(colSums((x[1:2, 51:101] - c(1, 0.5))^2), rep(1, 51))
  expect_true(all(x[3:4, ] == 0))
  set.seed(6)
  expect_identical(two_moons(101, dim = 4, noise = 0), x)
})

test_that("GNMF never increases its objective", {
  set.seed(7)
  x <- matrix(runif(6 * 50), 6, 50)
  fit <- nmf_manifold(x, 3, method = "gnmf", lambda = 10, init = "random",
                      control = nmf_control(max_iter = 200))
  expect_true(all(diff(fit$loss) <= 1e-9 * fit$loss[-1]))
  # normalisation at the end changes the penalty but not W H: check the
  # traced objective where lambda = 0
  set.seed(7)
  fit0 <- nmf_manifold(x, 3, method = "gnmf", lambda = 0, init = "random",
                       control = nmf_control(max_iter = 50))
  expect_equal(tail(fit0$loss, 1), sum((x - fit0$W %*% fit0$H)^2))
  expect_true(all(diff(fit0$loss) <= 1e-9 * fit0$loss[-1]))
  expect_true(all(fit$W >= 0) && all(fit$H >= 0))
  expect_equal(unname(colSums(fit$W^2)), rep(1, 3))
})

test_that("GNMF with lambda = 0 is Lee-Seung MU from the same start", {
  set.seed(8)
  x <- matrix(runif(8 * 30), 8, 30)
  set.seed(1)
  fit <- nmf_manifold(x, 3, method = "gnmf", lambda = 0, init = "random",
                      control = nmf_control(max_iter = 40, tol = 0),
                      min_iter = 1000)
  set.seed(1)
  s <- nmfkit:::manifold_init(x, 3L, "random", 1L)
  # GNMF updates H first; nmf() updates W first: start it one H step later
  h1 <- s$H * crossprod(s$W, x) / (crossprod(s$W) %*% s$H)
  # nmf() from (W0, H1) after 40 iterations holds W40 (and H41)
  mu <- nmf(x, 3, method = "mu", init = list(W = s$W, H = h1),
            control = nmf_control(max_iter = 40, tol = 0,
                                  extrapolate = FALSE))
  w_mu <- sweep(mu$W, 2, sqrt(colSums(mu$W^2)), "/")
  expect_equal(fit$W, w_mu, tolerance = 1e-8, ignore_attr = TRUE)
})

test_that("GNMF is equivariant: c * x scales H and keeps the iterations", {
  set.seed(9)
  x <- matrix(runif(5 * 40), 5, 40)
  fits <- lapply(c(1, 4), function(cc) {
    set.seed(3)
    nmf_manifold(cc * x, 2, method = "gnmf", lambda = 1, init = "random")
  })
  expect_equal(fits[[1]]$iterations, fits[[2]]$iterations)
  expect_equal(fits[[2]]$H, 4 * fits[[1]]$H, tolerance = 1e-10)
  expect_equal(fits[[2]]$W, fits[[1]]$W, tolerance = 1e-10)
  expect_identical(fits[[1]]$labels, fits[[2]]$labels)
})

test_that("RMNMF keeps G orthonormal, H >= 0 and drives the residual down", {
  set.seed(10)
  x <- two_moons(200)
  fit <- nmf_manifold(x, 2, k = 14, weight = "heat", preprocess = "minmax")
  expect_equal(crossprod(fit$G), diag(2), tolerance = 1e-10,
               ignore_attr = TRUE)
  expect_true(all(fit$H >= 0))
  expect_lt(tail(fit$residual, 1), 1e-3)
  expect_equal(fit$mu[1], 1e-3)
  expect_length(fit$labels, 200)
  set.seed(10)
  x2 <- two_moons(200)
  fit2 <- nmf_manifold(x2, 2, k = 14, weight = "heat", preprocess = "minmax")
  expect_identical(fit$G, fit2$G)
})

test_that("RMNMF reaches the paper's two-moons accuracy (hard target)", {
  acc <- function(lambda, compat, seed) {
    set.seed(seed)
    x <- two_moons(500)
    fit <- nmf_manifold(x, 2, lambda = lambda, k = 22, weight = "heat",
                        preprocess = "minmax", sign_compat = compat)
    cluster_acc(attr(x, "labels"), clusters(fit))
  }
  a1 <- vapply(1:4, function(s) acc(1, FALSE, s), numeric(1))
  expect_true(all(a1 >= 0.78 & a1 <= 0.88))
  # lambda = 10: single draws depend on rounding, so the paper's 20 draws
  # (about 5 s). The sign gap is asserted; the mean ACC of (-) is .848
  # against the paper's .85 (two poor draws; bench/README.md), so that half
  # of the target is reported in bench/manifold.R, not asserted here
  skip_on_cran()
  minus <- vapply(1:20, function(s) acc(10, FALSE, s), numeric(1))
  plus <- vapply(1:20, function(s) acc(10, TRUE, s), numeric(1))
  expect_gte(mean(minus), mean(plus) + 0.10)
  expect_gte(mean(minus), 0.82)
})

test_that("NMF = GNMF(lambda = 0) matches the paper on Ionosphere, Sonar, Musk1", {
  skip_if_not_installed("mlbench")
  skip_if_not_installed("kernlab")
  target <- list(ionosphere = c(0.61, 0.02, 0.015),
                 sonar = c(0.54, 0.004, 0.01), musk1 = c(0.53, 0.01, 0.01))
  for (nm in names(target)) {
    d <- paper_data(nm)
    set.seed(1)
    runs <- vapply(1:30, function(r) {
      fit <- nmf_manifold(d$x, 2, method = "gnmf", lambda = 0,
                          init = "random", preprocess = "minmax")
      c(cluster_acc(d$y, clusters(fit)), cluster_nmi(d$y, clusters(fit)))
    }, numeric(2))
    tol <- if (nm == "musk1") 0.01 else 0.02
    expect_lte(abs(mean(runs[1, ]) - target[[nm]][1]), tol,
               label = paste(nm, "ACC off the paper by"))
    expect_lte(abs(mean(runs[2, ]) - target[[nm]][2]), target[[nm]][3],
               label = paste(nm, "NMI off the paper by"))
  }
})

test_that("bad input gets classed errors", {
  set.seed(12)
  x <- matrix(runif(3 * 20), 3, 20)
  neg <- x
  neg[2, 5] <- -3
  expect_error(nmf_manifold(neg, 2, method = "gnmf"),
               class = "nmfkit_error_negative")
  expect_snapshot(nmf_manifold(neg, 2, method = "gnmf"), error = TRUE)
  expect_no_error(nmf_manifold(neg, 2, method = "rmnmf",
                               control = nmf_control(max_iter = 5)))
  g <- as.matrix(nmfkit:::knn_graph(x, 3L, "binary", 1L))
  expect_error(nmf_manifold(x, 2, graph = g[-1, -1]),
               class = "nmfkit_error_graph")
  ga <- g
  ga[1, 2] <- 5
  expect_error(nmf_manifold(x, 2, graph = ga), class = "nmfkit_error_graph")
  gn <- g
  gn[gn > 0] <- -1
  expect_error(nmf_manifold(x, 2, graph = gn), class = "nmfkit_error_graph")
  gd <- g
  diag(gd) <- 1
  expect_error(nmf_manifold(x, 2, graph = gd), class = "nmfkit_error_graph")
  expect_snapshot(nmf_manifold(x, 2, graph = gd), error = TRUE)
  expect_error(nmf_manifold(x, 2, k = 20), class = "nmfkit_error_k")
  expect_error(nmf_manifold(x, 2, k = 0), class = "nmfkit_error_k")
  expect_error(nmf_manifold(x, 2, exemplars = 0),
               class = "nmfkit_error_exemplars")
  expect_error(nmf_manifold(x, 2, exemplars = 21),
               class = "nmfkit_error_exemplars")
  expect_error(nmf_manifold(x, 2, exemplars = 1.5),
               class = "nmfkit_error_exemplars")
  expect_error(nmf_manifold(x, 2, method = "lda"),
               class = "nmfkit_error_choice")
  expect_error(nmf_manifold(x, 4), class = "nmfkit_error_rank")
  expect_error(nmf_manifold(x, 2, sign_compat = NA),
               class = "nmfkit_error")
  expect_error(cluster_acc(1:3, 1:4), class = "nmfkit_error_labels")
  expect_error(cluster_nmi(c(1, NA), 1:2), class = "nmfkit_error_labels")
  expect_snapshot(cluster_acc(1:3, 1:4), error = TRUE)
})

test_that("the method set works on a manifold fit", {
  set.seed(13)
  x <- two_moons(60)
  fit <- nmf_manifold(x, 2, preprocess = "minmax")
  expect_s3_class(fit, c("nmfkit_manifold", "nmfkit"))
  expect_output(print(fit), "RMNMF, lambda = 1, sign \\(-\\)")
  expect_output(print(summary(fit)), "Cluster sizes")
  expect_equal(fitted(fit) + residuals(fit), fit$data, ignore_attr = TRUE)
  expect_identical(clusters(fit), predict(fit, type = "class"))
  cls <- predict(fit, x, type = "class")
  expect_length(cls, 60)
  expect_gt(mean(cls == clusters(fit)), 0.9)
  expect_equal(dim(predict(fit, x[, 1:4])), c(2L, 4L))
  expect_s3_class(nmf_distance(fit), "dist")
  pdf(NULL)
  on.exit(grDevices::dev.off())
  for (tp in c("graph", "basis", "coef", "loss")) {
    expect_identical(plot(fit, type = tp), fit)
  }
  g <- nmf_manifold(x + 2, 2, method = "gnmf", graph = fit$graph)
  expect_output(print(g), "user graph")
})

test_that("SMRMF and f-SMRMF: simplex columns, exemplars, threads, seeds", {
  set.seed(14)
  x <- two_moons(80)
  for (v in list(list(method = "smrmf"), list(method = "fsmrmf"),
                 list(method = "smrmf", split = FALSE),
                 list(method = "smrmf", kernel = "euclidean"))) {
    if (v$method == "smrmf") v$ds3_max_iter <- 200
    fits <- lapply(1:2, function(th) {
      set.seed(2)
      do.call(nmf_manifold, c(list(x, 2, exemplars = 0.1, k = 6,
                                   preprocess = "minmax", keep_z = TRUE,
                                   control = nmf_control(max_iter = 40,
                                                         threads = th)), v))
    })
    f <- fits[[1]]
    expect_identical(f$G, fits[[2]]$G)
    expect_identical(f$exemplars, fits[[2]]$exemplars)
    expect_equal(colSums(f$Z), rep(1, 80))
    expect_true(all(f$Z >= 0))
    expect_length(f$exemplars, 8)
    expect_true(all(f$exemplars %in% 1:80))
    expect_equal(crossprod(f$G), diag(2), tolerance = 1e-10,
                 ignore_attr = TRUE)
    g <- f$graph
    expect_equal(as.matrix(g), t(as.matrix(g)))
    expect_true(all(Matrix::diag(g) == 0))
  }
  expect_output(print(f), "exemplars")
  expect_output(print(summary(f)), "Exemplars \\(8\\)")
  pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_identical(plot(f, type = "graph"), f)
  expect_equal(dim(predict(f, x[, 1:3])), c(2L, 3L))
  expect_s3_class(nmf_distance(f), "dist")
  expect_error(nmf_manifold(x, 2, method = "smrmf", graph = fits[[1]]$graph),
               class = "nmfkit_error_graph")
})

test_that("clusters() of any fit is the argmax of H, ties to the lowest", {
  x <- matrix(c(1, 0, 0, 1, 1, 1), 2, 3, dimnames = list(NULL, c("a", "b", "c")))
  fit <- nmf(x, 2, init = list(W = diag(2), H = x),
             control = nmf_control(max_iter = 1))
  fit$H <- matrix(c(2, 1, 0, 3, 1, 1), 2, dimnames = list(NULL, c("a", "b", "c")))
  expect_identical(clusters(fit), c(a = 1L, b = 2L, c = 1L))
})

test_that("SMRMF's nbr, rank_on, inner_z_iter and connect do what they say", {
  set.seed(15)
  x <- two_moons(70)
  # connect = FALSE: the paper's selective graph, as (3.6) builds it
  fit <- function(..., connect = FALSE) {
    set.seed(3)
    nmf_manifold(x, 2, method = "smrmf", k = 5, exemplars = 7,
                 preprocess = "minmax", keep_z = TRUE, ds3_max_iter = 150,
                 connect = connect, control = nmf_control(max_iter = 25),
                 ...)
  }
  # nbr = "knn": edges join each exemplar i to its 5 nearest points j in
  # input space, weight z_ij, then (W~ + W~') / 2
  f <- fit(nbr = "knn")
  d2 <- as.matrix(stats::dist(t(f$data)))
  want <- matrix(0, 70, 70)
  for (i in f$exemplars) {
    j <- order(d2[, i], seq_len(70))
    j <- j[j != i][1:5]
    want[i, j] <- want[i, j] + f$Z[i, j] / 2
    want[j, i] <- want[j, i] + f$Z[i, j] / 2
  }
  expect_equal(as.matrix(f$graph), want, tolerance = 1e-12,
               ignore_attr = TRUE)
  # "knn_kernel": the same edges, weights from the input kernel in (0, 1]
  fk <- fit(nbr = "knn_kernel")
  wk <- as.matrix(fk$graph)
  expect_true(all(wk >= 0 & wk <= 1))
  expect_false(isTRUE(all.equal(wk, as.matrix(f$graph))))
  # "zrow" (default): each exemplar links to the (up to 5) largest positive
  # entries of its row, with at least half their weight
  fz <- fit()
  for (i in fz$exemplars) {
    z <- fz$Z[i, ]
    z[i] <- 0
    top <- order(-z)[seq_len(min(5, sum(z > 0)))]
    expect_true(all(as.matrix(fz$graph)[i, top] >= z[top] / 2 - 1e-15))
  }
  # rank_on: exemplars are the rows of largest norm of Z, or of the split C
  for (on in c("z", "c")) {
    f <- fit(rank_on = on)
    m <- if (on == "z") f$Z else f$C
    nrm <- sqrt(rowSums(m^2))
    expect_identical(f$exemplars, order(-nrm, seq_len(70))[1:7])
  }
  expect_lte(sum(apply(f$C, 1, max)), 7 + 1e-9)  # ||C||_{1,inf} <= tau
  # inner_z_iter: more ADMM passes per iteration close the gap Z - C
  gap <- function(f) mean(abs(f$Z - f$C))
  expect_lt(gap(fit(inner_z_iter = 30)), gap(fit()))
  # connect = TRUE (the default): the paper's edges from the fit's own Z,
  # plus links of their mean weight; every point has an edge and at most
  # `rank` components remain
  fc <- fit(connect = TRUE)
  g0 <- matrix(0, 70, 70)
  for (i in fc$exemplars) {
    z <- fc$Z[i, ]
    z[i] <- 0
    j <- order(-z, seq_len(70))[seq_len(min(5, sum(z > 0)))]
    g0[i, j] <- g0[i, j] + z[j] / 2
    g0[j, i] <- g0[j, i] + z[j] / 2
  }
  gc <- as.matrix(fc$graph)
  added <- gc != 0 & g0 == 0
  expect_true(any(added))
  expect_equal(gc[!added], g0[!added], tolerance = 1e-12)
  expect_equal(gc[added], rep(mean(g0[g0 != 0]), sum(added)),
               tolerance = 1e-12)
  expect_true(all(rowSums(gc) > 0))
  components <- function(a) {
    lab <- integer(nrow(a))
    for (i in seq_len(nrow(a))) {
      if (lab[i]) next
      lab[i] <- max(lab) + 1L
      todo <- i
      while (length(todo)) {
        nb <- which(a[todo[1], ] != 0 & lab == 0)
        lab[nb] <- lab[i]
        todo <- c(todo[-1], nb)
      }
    }
    max(lab)
  }
  expect_gt(components(g0), 2)
  expect_lte(components(gc), 2)
  expect_equal(gc, t(gc))
})

test_that("a knob the method does not read is an error", {
  x <- matrix(runif(3 * 20), 3, 20)
  expect_error(nmf_manifold(x, 2, kernel = "euclidean"),
               class = "nmfkit_error_control")
  expect_error(nmf_manifold(x, 2, method = "gnmf", sign_compat = TRUE),
               class = "nmfkit_error_control")
  expect_error(nmf_manifold(x, 2, method = "fsmrmf", rank_on = "c"),
               class = "nmfkit_error_control")
  expect_error(nmf_manifold(x, 2, method = "smrmf", gamma = 1),
               class = "nmfkit_error_control")
  expect_snapshot(nmf_manifold(x, 2, method = "fsmrmf", inner_z_iter = 2),
                  error = TRUE)
  expect_error(nmf_manifold(x, 2, method = "smrmf", nbr = "zcol"),
               class = "nmfkit_error_choice")
  expect_error(nmf_manifold(x, 2, method = "smrmf", inner_z_iter = 0),
               class = "nmfkit_error_control")
})

test_that("every method finds three separated blobs and stops before the cap", {
  for (m in c("gnmf", "rmnmf", "smrmf", "fsmrmf")) {
    accs <- iters <- numeric(3)
    for (s in 1:3) {
      set.seed(s)
      x <- three_blobs()
      xx <- if (m == "gnmf") x - min(x) else x
      fit <- nmf_manifold(xx, 3, method = m)
      accs[s] <- cluster_acc(attr(x, "labels"), clusters(fit))
      iters[s] <- fit$iterations
      if (m != "gnmf") expect_identical(fit$status, "converged")
    }
    expect_gte(min(accs), 0.97, label = paste(m, "accuracy"))
    if (m != "gnmf") expect_true(all(iters < 1000), info = m)
  }
})

test_that("a stalled ALM fit stops, and its last loss is its objective", {
  set.seed(21)
  x <- three_blobs()
  fit <- nmf_manifold(x, 3, method = "rmnmf")
  expect_lt(fit$iterations, 1000)
  g <- as.matrix(fit$graph)
  lap <- diag(rowSums(g)) - g
  obj <- sum(sqrt(colSums((x - fit$W %*% t(fit$G))^2))) +
    fit$lambda * sum(diag(t(fit$G) %*% lap %*% fit$G))
  expect_equal(tail(fit$loss, 1), obj, tolerance = 1e-10)
})

test_that("errors name k and lambda; signed data and empty graphs warn nothing", {
  set.seed(22)
  x <- matrix(rnorm(3 * 20), 3, 20)
  expect_error(nmf_manifold(x, 2, k = 0), "`k` must be", class = "nmfkit_error_k")
  expect_error(nmf_manifold(x, 2, k = 0.5), "`k` must be")
  expect_error(nmf_manifold(x, 2, lambda = -1), "`lambda` must be",
               class = "nmfkit_error")
  expect_error(nmf_manifold(abs(x), 2, method = "gnmf", lambda = "a"),
               "`lambda` must be")
  x <- x - 1  # a negative mean: the NNDSVD scale was sqrt(negative)
  expect_no_warning(nmf_manifold(x, 2, control = nmf_control(max_iter = 5)))
  expect_no_warning(nmf_manifold(x, 2, method = "smrmf",
                                 control = nmf_control(max_iter = 5)))
  expect_no_warning(nmf_manifold(abs(x), 2, method = "gnmf",
                                 graph = matrix(0, 20, 20),
                                 control = nmf_control(max_iter = 5)))
})

test_that("the k-NN graph of sparse data is the dense one, without densifying", {
  set.seed(23)
  x <- Matrix::rsparsematrix(30, 120, 0.2)
  x@x <- abs(x@x)
  for (w in c("binary", "heat", "selftune")) {
    gs <- nmfkit:::knn_graph(x, 5L, w, 2L)
    expect_equal(gs, nmfkit:::knn_graph(as.matrix(x), 5L, w, 1L),
                 tolerance = 1e-12)
    expect_equal(as.matrix(gs), knn_reference(as.matrix(x), 5L, w),
                 tolerance = 1e-10, ignore_attr = TRUE)
  }
  set.seed(1)
  fs <- nmf_manifold(x, 2, method = "gnmf", control = nmf_control(max_iter = 20))
  set.seed(1)
  fd <- nmf_manifold(as.matrix(x), 2, method = "gnmf",
                     control = nmf_control(max_iter = 20))
  expect_s4_class(fs$data, "dgCMatrix")
  expect_equal(fs$G, fd$G, tolerance = 1e-10)
})

test_that("above the exact size the graph comes from HNSW, nearly exact", {
  set.seed(24)
  x <- matrix(runif(3 * 600), 3, 600)
  for (w in c("binary", "heat")) {
    exact <- nmfkit:::knn_graph(x, 5L, w, 1L)
    approx <- nmfkit:::knn_graph(x, 5L, w, 1L, exact_max = 100L)
    expect_s4_class(approx, "dgCMatrix")
    expect_equal(as.matrix(approx), t(as.matrix(approx)))
    same <- (as.matrix(exact) > 0) == (as.matrix(approx) > 0)
    expect_gt(mean(same[as.matrix(exact) > 0]), 0.98)
    # weights of the shared edges: exact distances, t close to the exact mean
    both <- as.matrix(exact) > 0 & as.matrix(approx) > 0
    expect_equal(as.matrix(approx)[both], as.matrix(exact)[both],
                 tolerance = if (w == "heat") 0.02 else 0)
  }
  expect_identical(nmfkit:::knn_graph(x, 5L, "binary", 1L, exact_max = 100L),
                   nmfkit:::knn_graph(x, 5L, "binary", 2L, exact_max = 100L))
})

test_that("dense fits too large for memory are refused, naming the size", {
  expect_error(nmfkit:::check_dense_memory(c(40000, 20000), "rmnmf",
                                           available = 4e9),
               "38.4 GB", class = "nmfkit_error_memory")
  expect_error(nmfkit:::check_dense_memory(c(10, 30000), "smrmf",
                                           available = 4e9),
               class = "nmfkit_error_memory")
  expect_identical(nmfkit:::check_dense_memory(c(40000, 20000), "gnmf",
                                               available = 4e9), 0)
  expect_no_error(nmfkit:::check_dense_memory(c(40000, 20000), "rmnmf",
                                              available = NA_real_))
  expect_true(is.na(nmfkit:::available_memory(tempfile())))
  if (file.exists("/proc/meminfo")) {
    expect_gt(nmfkit:::available_memory(), 0)
  }
})

test_that("every method finds three blobs on the axes (the contract issue's blobs)", {
  # 4 features, 180 points, centres 3 e_1, 3 e_2, 3 e_3, sd 0.3: before the
  # stalled-fit rule SMRMF averaged .79 here; k-means gets 1.00
  acc <- vapply(1:4, function(s) {
    set.seed(s)
    y <- rep(1:3, each = 60)
    x <- t(3 * diag(4)[y, ] + matrix(rnorm(180 * 4, sd = 0.3), 180))
    vapply(c("gnmf", "rmnmf", "smrmf", "fsmrmf"), function(m) {
      xx <- if (m == "gnmf") x - min(x) else x
      cluster_acc(y, clusters(suppressWarnings(nmf_manifold(xx, 3,
                                                            method = m))))
    }, numeric(1))
  }, numeric(4))
  expect_true(all(rowMeans(acc) >= 0.9), info = paste(round(acc, 2),
                                                       collapse = " "))
  expect_true(all(rowSums(acc[c("rmnmf", "smrmf"), ] >= 0.97) >= 3))
})

test_that("GNMF's HALS solver never increases the objective of its factors", {
  set.seed(31)
  x <- matrix(runif(6 * 60), 6, 60)
  fits <- lapply(1:2, function(th) {
    set.seed(4)
    nmf_manifold(x, 3, method = "gnmf", lambda = 10, solver = "hals",
                 control = nmf_control(max_iter = 150, threads = th))
  })
  fit <- fits[[1]]
  expect_identical(fit$W, fits[[2]]$W)
  expect_identical(fit$H, fits[[2]]$H)
  expect_true(all(diff(fit$loss) <= 1e-12 * fit$loss[-1]))
  # W's columns stay at unit length, so the last traced value is the
  # objective of the returned factors
  expect_equal(unname(colSums(fit$W^2)), rep(1, 3))
  expect_equal(tail(fit$loss, 1),
               gnmf_objective(x, fit$W, fit$H, as.matrix(fit$graph), 10),
               tolerance = 1e-10)
  expect_true(all(fit$W >= 0) && all(fit$H >= 0))
  expect_error(nmf_manifold(x, 3, method = "rmnmf", solver = "hals"),
               class = "nmfkit_error_control")
})

test_that("GNMF's HALS solver comes near k-means on families of blobs", {
  # issue 36: clusters that share an offset, anisotropic noise, unequal
  # sizes, more features than clusters (helper-manifold.R's families). With
  # Cai's MU (the default), stopped on a plateau, draws fell to .67
  # (bench/README.md, "Manifold clustering"); HALS got 1.00 on 10 draws of
  # each of these families
  skip_on_cran()
  families <- c("shift1", "shift2", "aniso", "unequal", "wide")
  acc <- vapply(families, function(f) {
    vapply(1:2, function(s) {
      set.seed(s)
      x <- draw_blobs(f)
      y <- attr(x, "labels")
      set.seed(s)
      fit <- nmf_manifold(x - min(x), length(unique(y)), method = "gnmf",
                          solver = "hals")
      cluster_acc(y, clusters(fit))
    }, numeric(1))
  }, numeric(2))
  info <- paste(round(acc, 2), collapse = " ")
  expect_gte(mean(acc), 0.95, label = info)
  expect_true(all(acc >= 0.8), info = info)
  # a draw on which Cai's updates stop on a plateau
  set.seed(8)
  x <- draw_blobs("shift1")
  set.seed(8)
  mu <- nmf_manifold(x - min(x), 3, method = "gnmf", solver = "mu")
  expect_lt(cluster_acc(attr(x, "labels"), clusters(mu)), 0.8)
})

test_that("SMRMF's connected graph lifts it near k-means on families of blobs", {
  # issue 36: clusters that share an offset, anisotropic noise, unequal
  # sizes, more features than clusters (helper-manifold.R's families), two
  # draws each; k-means gets 1.00 on every draw. Measured (lead,
  # 2026-11-27): SMRMF with the connected graph (the default) mean .964,
  # lowest .789 (aniso); with the paper's graph (connect = FALSE) mean .749;
  # f-SMRMF mean .892 connected, .852 not, lowest .639 (wide): f-SMRMF
  # does not reach k-means yet (NEWS.md)
  skip_on_cran()
  families <- c("shift1", "shift2", "aniso", "unequal", "wide")
  runs <- list(smrmf = list("smrmf", TRUE), paper = list("smrmf", FALSE),
               fsmrmf = list("fsmrmf", TRUE))
  acc <- vapply(runs, function(r) {
    unlist(lapply(families, function(f) {
      vapply(1:2, function(s) {
        set.seed(s)
        x <- draw_blobs(f)
        y <- attr(x, "labels")
        set.seed(s)
        fit <- suppressWarnings(nmf_manifold(x, length(unique(y)),
                                             method = r[[1]],
                                             connect = r[[2]]))
        cluster_acc(y, clusters(fit))
      }, numeric(1))
    }))
  }, numeric(10))
  info <- paste(capture.output(print(round(acc, 2))), collapse = "\n")
  means <- colMeans(acc)
  expect_gte(means[["smrmf"]], 0.93, label = info)
  expect_gte(min(acc[, "smrmf"]), 0.75, label = info)
  expect_gte(means[["smrmf"]] - means[["paper"]], 0.15, label = info)
  expect_gte(means[["fsmrmf"]], 0.85, label = info)
})
