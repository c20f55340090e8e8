# One grammar for every fitting function (ARCHITECTURE.md, "Conventions"):
# nrun everywhere, max_iter the outer iterations, rank second and required,
# the same predict() types and nmf_distance() shape for every variant, and
# the old names working for one release with a deprecation warning.

grammar_fits <- function(nrun = 1L) {
  x <- swimmer()[, 1:40]
  sim <- withr::with_seed(1, shifted_shapes(6))
  hist <- withr::with_seed(1, random_histograms(12, 10))
  strata <- list(a = x[, 1:20], b = x[, 21:40] + 0.5)
  # each fit from the same seed, so that its first run does not depend on
  # how many random numbers the fits before it drew
  seeded <- function(expr) withr::with_seed(7, expr)
  list(
    nmf = seeded(nmf(x, 3, nrun = nrun, control = nmf_control(max_iter = 30))),
    joint = seeded(nmf_joint(x[, 1:20], x[, 21:40], rank = 3, nrun = nrun,
                             control = nmf_control(max_iter = 30))),
    stratified = seeded(nmf_stratified(strata, 3, nrun = nrun,
                                       control = nmf_control(max_iter = 20))),
    shift = seeded(nmf_shift(sim$x, 2, nrun = nrun,
                             control = nmf_control(max_iter = 5))),
    wasserstein = seeded(nmf_wasserstein(
      hist, 2, image_dim = c(3, 4), nrun = nrun,
      control = nmf_control(max_iter = 2, inner = 20)))
  )
}

test_that("every fitting function takes nrun and keeps the best run", {
  fits <- suppressMessages(grammar_fits(nrun = 3L))
  for (nm in names(fits)) expect_s3_class(fits[[nm]], paste0("nmfkit_", nm))
  for (fn in list(nmf, nmf_joint, nmf_stratified, nmf_shift, nmf_wasserstein,
                  nmf_manifold)) {
    expect_true(all(c("rank", "nrun", "keep_data", "control") %in%
                      names(formals(fn))))
    # rank right after the data
    args <- names(formals(fn))
    expect_true(all(args[seq_len(match("rank", args) - 1L)] %in%
                      c("x", "x1", "x2")))
  }
  # the kept run is the one of lowest final loss: refitting with nrun = 1
  # from the same seed gives the first run, never a better one
  one <- suppressMessages(grammar_fits(nrun = 1L))
  for (nm in names(fits)) {
    expect_lte(utils::tail(fits[[nm]]$loss, 1),
               utils::tail(one[[nm]]$loss, 1) + 1e-12)
  }
  expect_length(fits$shift$restart_loss, 3L)
  expect_equal(min(fits$shift$restart_loss), utils::tail(fits$shift$loss, 1))
})

test_that("runs beyond the first are the same under any future plan", {
  skip_on_cran()
  x <- swimmer()[, 1:40]
  fit_seq <- withr::with_seed(3, nmf(x, 4, nrun = 3,
                                     control = nmf_control(max_iter = 20)))
  old <- future::plan(future::multisession, workers = 2)
  on.exit(future::plan(old), add = TRUE)
  fit_par <- withr::with_seed(3, nmf(x, 4, nrun = 3,
                                     control = nmf_control(max_iter = 20)))
  expect_identical(fit_par$W, fit_seq$W)
  expect_identical(fit_par$H, fit_seq$H)
})

test_that("predict() has the types coef and class for every variant", {
  fits <- suppressMessages(grammar_fits())
  x <- swimmer()[, 1:40]
  newdata <- list(nmf = x[, 1:4], joint = x[, 1:4],
                  stratified = list(a = x[, 1:4]),
                  shift = shifted_shapes(6)$x[, 1:4],
                  wasserstein = random_histograms(12, 4))
  for (nm in names(fits)) {
    h <- suppressMessages(predict(fits[[nm]], newdata[[nm]]))
    cl <- suppressMessages(predict(fits[[nm]], newdata[[nm]],
                                   type = "class"))
    expect_identical(dim(unclass(h)), c(fits[[nm]]$rank, 4L), label = nm)
    expect_identical(unname(cl), max.col(t(unclass(h)), "first"), label = nm)
    expect_identical(predict(fits[[nm]], type = "class"),
                     clusters(fits[[nm]]), label = nm)
    expect_error(predict(fits[[nm]], newdata[[nm]], type = "classes"),
                 class = "nmfkit_error_choice")
  }
})

test_that("nmf_distance() has one shape for every kind of input", {
  fits <- suppressMessages(grammar_fits())
  x <- swimmer()
  sets <- list(a = x[, 1:30], b = x[, 31:60], c = x[, 61:90])
  # (the small Wasserstein fit's Sinkhorn pairs stop at max_iter: only the
  # shape matters here)
  ds <- c(suppressWarnings(lapply(fits, nmf_distance)),
          list(list = nmf_distance(sets, rank = 3,
                                   control = nmf_control(max_iter = 20)),
               chamfer = nmf_distance(sets, method = "chamfer")))
  for (nm in names(ds)) {
    expect_s3_class(ds[[nm]], c("nmfkit_dist", "dist"), exact = TRUE)
    expect_true(is.character(attr(ds[[nm]], "method")), label = nm)
    expect_true(is.call(attr(ds[[nm]], "call")), label = nm)
  }
})

test_that("old names and orders work for one release, with a warning", {
  withr::local_options(rlib_warning_verbosity = "verbose")
  sim <- withr::with_seed(1, shifted_shapes(6))
  ref <- withr::with_seed(2, nmf_shift(sim$x, 2, nrun = 2,
                                       control = nmf_control(max_iter = 5)))
  expect_warning(
    old <- withr::with_seed(2, nmf_shift(sim$x, 2, restarts = 2,
                                         control = nmf_control(max_iter = 5))),
    class = "nmfkit_warning_deprecated")
  expect_identical(old$W, ref$W)

  hist <- random_histograms(12, 10)
  ref <- withr::with_seed(2, suppressMessages(nmf_wasserstein(
    hist, 2, image_dim = c(3, 4),
    control = nmf_control(max_iter = 2, inner = 30))))
  expect_warning(old <- withr::with_seed(2, suppressMessages(nmf_wasserstein(
    hist, 2, image_dim = c(3, 4), outer = 2,
    control = nmf_control(max_iter = 30)))),
    class = "nmfkit_warning_deprecated")
  expect_identical(old$W, ref$W)
  expect_identical(old$iterations, 2L)

  x <- swimmer()[, 1:40]
  g <- rep(c("a", "b"), each = 20)
  ref <- withr::with_seed(2, nmf_stratified(x, 3, strata = g,
                                            control = nmf_control(max_iter = 5)))
  expect_warning(old <- withr::with_seed(2, nmf_stratified(
    x, g, 3, control = nmf_control(max_iter = 5))),
    class = "nmfkit_warning_deprecated")
  expect_identical(old$V, ref$V)

  ref <- withr::with_seed(2, nmf_joint(x[, 1:20], x[, 21:40], rank = 10))
  expect_warning(old <- withr::with_seed(2, nmf_joint(x[, 1:20], x[, 21:40])),
                 class = "nmfkit_warning_deprecated")
  expect_identical(old$p, ref$p)

  sets <- list(a = x[, 1:20], b = x[, 21:40])
  expect_warning(d <- nmf_distance(sets, "chamfer"),
                 class = "nmfkit_warning_deprecated")
  ref <- nmf_distance(sets, method = "chamfer")
  attr(d, "call") <- attr(ref, "call") <- NULL
  expect_identical(d, ref)
})

test_that("every variant is declared with its settings and label", {
  for (nm in c("nmf", "joint", "stratified", "shift", "wasserstein",
               "manifold")) {
    v <- variant_of(nm)
    expect_false(is.null(v), label = nm)
    expect_true(is.character(v$label) && nzchar(v$label))
    expect_true(all(c("start", "run", "model") %in% names(v)))
  }
  # a setting one function reads is refused by another, naming the reader
  expect_error(nmf(swimmer(), 3, control = list(eps = 1)),
               class = "nmfkit_error_control")
  expect_snapshot(nmf(swimmer(), 3, control = list(eps = 1)), error = TRUE)
})

test_that("errors carry the offending value as a field", {
  cnd <- rlang::catch_cnd(nmf(swimmer(), rank = 2.5), "nmfkit_error")
  expect_s3_class(cnd, "nmfkit_error_rank")
  expect_identical(cnd$value, 2.5)
  cnd <- rlang::catch_cnd(nmf(swimmer(), 3, method = "hal"), "nmfkit_error")
  expect_identical(cnd$value, "hal")
  cnd <- rlang::catch_cnd(nmf_control(max_iter = -1), "nmfkit_error")
  expect_identical(cnd$value, -1)
  cnd <- rlang::catch_cnd(basis(1:3), "nmfkit_error")
  expect_identical(cnd$value, 1:3)
})

test_that("keep_data = FALSE keeps no data, for every variant", {
  fits <- suppressMessages(grammar_fits())
  x <- swimmer()[, 1:40]
  for (nm in names(fits)) expect_false(is.null(fits[[nm]]$data), label = nm)
  lean <- nmf(x, 3, keep_data = FALSE, control = nmf_control(max_iter = 10))
  expect_null(lean$data)
  expect_error(residuals(lean), class = "nmfkit_error_data")
  set.seed(1)
  pts <- two_moons(60)
  m <- nmf_manifold(pts, 2, preprocess = "minmax", keep_data = FALSE,
                    control = nmf_control(max_iter = 50))
  expect_null(m$data)
  expect_true(is.na(summary(m)$relative_error))
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  expect_error(plot(m, type = "graph"), class = "nmfkit_error_data")
  expect_identical(length(clusters(m)), 60L)
})

test_that("every fitter orders data, rank, its own arguments, init, control, nrun, keep_data", {
  tail_args <- c("init", "control", "nrun", "keep_data")
  for (fn in c("nmf", "nmf_joint", "nmf_stratified", "nmf_wasserstein",
               "nmf_manifold", "nmf_shift")) {
    args <- names(formals(get(fn, asNamespace("nmfkit"))))
    # every fitter takes all four
    expect_true(all(tail_args %in% args), label = fn)
    present <- tail_args[tail_args %in% args]
    pos <- match(present, args)
    # in this order, together, with nothing but deprecated names, `assay`
    # and `...` after them
    expect_identical(pos, seq(pos[1], length.out = length(pos)), label = fn)
    after <- args[-seq_len(max(pos))]
    expect_true(all(after %in% c("assay", "...", "outer", "restarts")),
                label = fn)
    expect_identical(args[2 + (fn == "nmf_joint")], "rank", label = fn)
  }
})

test_that("arguments given by their old positions work, with a warning", {
  withr::local_options(rlib_warning_verbosity = "verbose")
  x <- swimmer()[, 1:40]
  ctl <- nmf_control(max_iter = 5)
  ref <- withr::with_seed(1, nmf(x, 3, "hals", init = "random",
                                 control = ctl, nrun = 2))
  expect_warning(old <- withr::with_seed(1, nmf(x, 3, "hals", "random", ctl,
                                                 2)),
                 class = "nmfkit_warning_deprecated")
  expect_identical(old$W, ref$W)
  # positions that did not move give no warning
  expect_no_warning(withr::with_seed(1, nmf(x, 3, "hals", control = ctl)))
  ref <- withr::with_seed(1, nmf_joint(x[, 1:20], x[, 21:40], 3, "exact",
                                       1000, TRUE, labels = c("a", "b"),
                                       control = ctl))
  expect_warning(old <- withr::with_seed(1, nmf_joint(
    x[, 1:20], x[, 21:40], 3, "exact", 1000, TRUE, "nndsvda", ctl,
    c("a", "b"))), class = "nmfkit_warning_deprecated")
  expect_identical(old$p, ref$p)
  expect_identical(levels(old$set), c("a", "b"))
  hist <- random_histograms(12, 10)
  wctl <- nmf_control(max_iter = 2, inner = 20)
  ref <- withr::with_seed(2, suppressMessages(nmf_wasserstein(
    hist, 2, NULL, c(3, 4), control = wctl)))
  expect_warning(old <- withr::with_seed(2, suppressMessages(nmf_wasserstein(
    hist, 2, NULL, c(3, 4), NULL, 0.025, c(weights = 0.05, dictionary = 0.05),
    "auto", wctl))), class = "nmfkit_warning_deprecated")
  expect_identical(old$W, ref$W)
  d <- withr::with_seed(1, matrix(rpois(30 * 40, 5), 30))
  fit <- withr::with_seed(1, nmf(d, 2, loss = "kl"))
  ref <- withr::with_seed(3, nmf_bootstrap(fit, 3, type = "parametric"))
  expect_warning(old <- withr::with_seed(3, nmf_bootstrap(fit, 3,
                                                          "parametric")),
                 class = "nmfkit_warning_deprecated")
  expect_identical(old$W, ref$W)
})

test_that("the inference verbs say rank and variant one way", {
  withr::local_options(rlib_warning_verbosity = "verbose")
  x <- swimmer()[, 1:40]
  ctl <- nmf_control(max_iter = 10)
  ref <- withr::with_seed(1, nmf_rank(x, rank = 2:3, method = "consensus",
                                      nrun = 2, control = ctl))
  expect_identical(withr::with_seed(1, nmf_rank(
    x, 2:3, method = "consensus", variant = "nmf", nrun = 2,
    control = ctl))$results, ref$results)
  expect_warning(old <- withr::with_seed(1, nmf_rank(
    x, ranks = 2:3, method = "consensus", nrun = 2, control = ctl)),
    class = "nmfkit_warning_deprecated")
  expect_identical(old$results, ref$results)
  expect_warning(old <- withr::with_seed(1, nmf_rank(
    x, 2:3, method = "consensus", fit = nmf, nrun = 2, control = ctl)),
    class = "nmfkit_warning_deprecated")
  expect_identical(old$results, ref$results)
  expect_error(nmf_rank(x, 2:3, variant = "nmff"), class = "nmfkit_error_choice")
  expect_error(nmf_rank(x, 2:3, variant = 1), class = "nmfkit_error_variant")
  # "rank is missing" is one error class everywhere
  strata <- list(a = x[, 1:20], b = x[, 21:40])
  for (f in list(function() nmf(x), function() nmf_rank(x),
                 function() nmf_tune(x), function() nmf_consensus(x),
                 function() nmf_stratified(strata),
                 function() nmf_shift(x, image_dim = c(20, 11)),
                 function() nmf_wasserstein(random_histograms(12, 10)),
                 function() nmf_manifold(x))) {
    expect_error(f(), class = "nmfkit_error_missing")
  }
})

test_that("nmf_shift() takes init: a user start draws no random numbers", {
  withr::local_options(rlib_warning_verbosity = "verbose")
  sim <- withr::with_seed(1, shifted_shapes(6))
  ctl <- nmf_control(max_iter = 3)
  # "random" is the default start
  expect_identical(
    withr::with_seed(2, nmf_shift(sim$x, 2, nrun = 1, control = ctl))$W,
    withr::with_seed(2, nmf_shift(sim$x, 2, init = "random", nrun = 1,
                                  control = ctl))$W)
  # a user's atoms and coefficients: the same fit under any seed, and a
  # fit that starts there (its first error is that of the start, shifts 0)
  start <- list(W = sim$x[, 1:2] + 0.01,
                H = matrix(1, 2, ncol(sim$x)))
  a <- withr::with_seed(3, nmf_shift(sim$x, 2, init = start, nrun = 1,
                                     control = ctl))
  b <- withr::with_seed(4, nmf_shift(sim$x, 2, init = start, nrun = 1,
                                     control = ctl))
  expect_identical(a$W, b$W)
  expect_false(identical(
    a$W, withr::with_seed(3, nmf_shift(sim$x, 2, nrun = 1, control = ctl))$W))
  # at 2^600 the same start (H scaled with the data) gives the same atoms
  big <- withr::with_seed(3, nmf_shift(sim$x * 2^600, 2, nrun = 1,
                                       control = ctl,
                                       init = list(W = start$W,
                                                   H = start$H * 2^600)))
  expect_equal(big$W, a$W, tolerance = 1e-10)
  expect_error(nmf_shift(sim$x, 2, init = "nndsvd"),
               class = "nmfkit_error_init")
  # the old positions (control, nrun after inner and instances) still work
  dims <- attr(sim$x, "image_dim")
  ref <- withr::with_seed(2, nmf_shift(sim$x, 2, dims, "torus2d", "hals", 10L,
                                       nrun = 1, instances = NULL,
                                       control = ctl))
  expect_warning(old <- withr::with_seed(2, nmf_shift(
    sim$x, 2, dims, "torus2d", "hals", 10L, 1L, NULL, ctl)),
    class = "nmfkit_warning_deprecated")
  expect_identical(old$W, ref$W)
})

test_that("?nmf_control documents only settings that exist", {
  rd <- tools::Rd_db("nmfkit")[["nmf_control.Rd"]]
  skip_if(is.null(rd), "no installed help")
  text <- paste(as.character(rd), collapse = "")
  # the settings read by one function only: each item opens with its name
  items <- regmatches(text, gregexpr("\\\\item \\\\code\\{[a-z_0-9]+\\}",
                                     text))[[1]]
  named <- sub(".*\\{", "", sub("\\}$", "", items))
  reg <- asNamespace("nmfkit")$registry$settings
  declared <- unique(unlist(lapply(reg, function(e) names(e$settings))))
  expect_gt(length(named), 5L)
  expect_setequal(setdiff(named, declared), character())
  expect_false(grepl("code{outer}", text, fixed = TRUE))
})
