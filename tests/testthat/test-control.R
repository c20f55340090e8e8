# nmf_control() and check_control(): one registry of settings, checked
# wherever a control object reaches a solver.

test_that("unknown and misplaced settings are rejected", {
  x <- small_data()
  expect_error(nmf_control(maxiter = 1), class = "nmfkit_error_control")
  expect_snapshot(nmf_control(maxiter = 1), error = TRUE)
  expect_error(nmf(x, 2, control = list(maxiter = 1)),
               class = "nmfkit_error_control")
  expect_snapshot(nmf(x, 2, control = list(maxiter = 1)), error = TRUE)
  # a stratified-only setting given to nmf()
  expect_snapshot(nmf(x, 2, control = nmf_control(eps = 1e-9)), error = TRUE)
  expect_error(nmf(x, 2, control = list(1)), class = "nmfkit_error_control")
  expect_error(nmf(x, 2, control = list(tol = 1, tol = 2)),
               class = "nmfkit_error_control")
  # settings a function reads get their defaults
  set.seed(1)
  fit <- nmf_stratified(list(a = x, b = x), rank = 2,
                        control = nmf_control(max_iter = 2))
  expect_identical(fit$control$eps, 1e-9)
})

test_that("an edited control object is checked again before C++", {
  x <- small_data()
  ctl <- nmf_control()
  ctl$max_iter <- -1
  expect_error(nmf(x, 2, control = ctl), class = "nmfkit_error_control")
  ctl <- nmf_control()
  ctl$threads <- "a"
  expect_error(nmf(x, 2, control = ctl), class = "nmfkit_error_control")
  expect_snapshot(nmf(x, 2, control = ctl), error = TRUE)
  ctl <- nmf_control()
  ctl$tol <- NULL
  expect_error(nmf(x, 2, control = ctl), class = "nmfkit_error_control")
  ctl <- nmf_control()
  ctl$maxiter <- 3
  expect_error(nmf(x, 2, control = ctl), class = "nmfkit_error_control")
  ctl <- nmf_control(max_iter = 30)
  ctl$h_start <- "zeros"
  sim <- withr::with_seed(1, shifted_shapes(3, frame = c(8L, 8L)))
  expect_error(nmf_shift(sim$x, 2, control = ctl),
               class = "nmfkit_error_control")
  ctl <- nmf_control()
  ctl$eps <- "a"
  expect_error(nmf_stratified(list(a = x), rank = 2, control = ctl),
               class = "nmfkit_error_control")
})

test_that("thread counts are capped at what the machine runs", {
  cap <- nmfkit:::max_threads()
  expect_gte(cap, 1L)
  expect_warning(ctl <- nmf_control(threads = 5000),
                 class = "nmfkit_warning_threads")
  expect_identical(ctl$threads, cap)
  expect_warning(ctl <- nmf_control(threads = 1e10),
                 class = "nmfkit_warning_threads")
  expect_identical(ctl$threads, cap)
  x <- small_data()
  set.seed(1)
  expect_warning(fit <- nmf(x, 2, control = list(threads = 5000)),
                 class = "nmfkit_warning_threads")
  expect_identical(fit$control$threads, cap)
  withr::local_options(nmfkit.threads = 5000)
  expect_warning(chamfer_distance(x, x), class = "nmfkit_warning_threads")
})

test_that("?nmf_control says what tol means for every fitting function", {
  rd <- tools::Rd_db("nmfkit")[["nmf_control.Rd"]]
  txt <- paste(utils::capture.output(tools::Rd2txt(rd)), collapse = " ")
  for (fn in names(nmfkit:::registry$settings)) {
    expect_match(txt, paste0(fn, "()"), fixed = TRUE, info = fn)
  }
})
