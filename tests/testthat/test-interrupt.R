# Ctrl-C reaches every long loop: each case starts a computation that would
# run for minutes in a separate R process, sends SIGINT once it has begun,
# and checks that the process caught the interrupt and returned promptly
# (before the fix, NNLS prediction, the Chamfer distance and the randomized
# SVD of the NNDSVD start ran to the end, ignoring it).

# Runs f() in a background R process that prints "go" just before the long
# call; interrupts it 0.5 s later. Returns what it printed and whether it
# finished within `wait` seconds of the interrupt.
interrupt_after_start <- function(f, wait = 5) {
  p <- callr::r_bg(f, libpath = .libPaths(), stdout = "|", stderr = "|")
  on.exit(p$kill(), add = TRUE)
  out <- ""
  deadline <- Sys.time() + 60
  while (!grepl("go", out) && p$is_alive() && Sys.time() < deadline) {
    p$poll_io(200)
    out <- paste0(out, p$read_output())
  }
  Sys.sleep(0.5)
  p$interrupt()
  p$wait(wait * 1000)
  finished <- !p$is_alive()
  out <- paste0(out, p$read_output())
  list(finished = finished, output = out)
}

expect_interrupted <- function(res) {
  expect_true(res$finished)
  expect_match(res$output, "caught interrupt", fixed = TRUE)
}

test_that("predict() for standard and joint NMF stops on Ctrl-C", {
  skip_on_cran()
  skip_if_not_installed("callr")
  res <- interrupt_after_start(function() {
    library(nmfkit)
    set.seed(1)
    x <- matrix(runif(40 * 30), 40, 30)
    fit <- nmf(x, 3)
    # nearly collinear basis: coordinate descent crawls; tol = 0 never stops
    base <- runif(200)
    fit$W <- outer(base, rep(1, 30)) + matrix(runif(200 * 30, 0, 1e-3), 200)
    newdata <- matrix(runif(200 * 20000), 200)
    cat("go\n")
    tryCatch({
      predict(fit, newdata, tol = 0, max_passes = 1e6)
      cat("finished\n")
    }, interrupt = function(e) cat("caught interrupt\n"))
  })
  expect_interrupted(res)
})

test_that("predict() for stratified NMF stops on Ctrl-C", {
  skip_on_cran()
  skip_if_not_installed("callr")
  res <- interrupt_after_start(function() {
    library(nmfkit)
    set.seed(1)
    base <- runif(200)
    w <- outer(base, rep(1, 30)) + matrix(runif(200 * 30, 0, 1e-3), 200)
    v <- matrix(runif(400), 200, 2)
    newdata <- matrix(runif(200 * 20000), 200)
    group <- rep(0:1, 10000)
    cat("go\n")
    tryCatch({
      nmfkit:::r_stratified_coef(newdata, group, w, v, 0, 1e6L, 1L)
      cat("finished\n")
    }, interrupt = function(e) cat("caught interrupt\n"))
  })
  expect_interrupted(res)
})

test_that("chamfer_distance() stops on Ctrl-C", {
  skip_on_cran()
  skip_if_not_installed("callr")
  res <- interrupt_after_start(function() {
    library(nmfkit)
    set.seed(1)
    x1 <- matrix(runif(100 * 40000), 100)
    x2 <- matrix(runif(100 * 40000), 100)
    # the core call of chamfer_distance(), so that the interrupt lands in
    # the nearest-column search rather than in the input checks
    cat("go\n")
    tryCatch({
      nmfkit:::r_chamfer(x1, x2, "paper", 1L)
      cat("finished\n")
    }, interrupt = function(e) cat("caught interrupt\n"))
  })
  expect_interrupted(res)
})

test_that("the randomized SVD of the NNDSVD start stops on Ctrl-C", {
  skip_on_cran()
  skip_if_not_installed("callr")
  res <- interrupt_after_start(function() {
    library(nmfkit)
    set.seed(1)
    x <- matrix(runif(500 * 2000), 500)
    omega <- matrix(rnorm(2000 * 20), 2000)
    cat("go\n")
    tryCatch({
      nmfkit:::r_nndsvd(x, 10L, omega, "mean", mean(x), NULL, NULL, 100000L,
                        1L)
      cat("finished\n")
    }, interrupt = function(e) cat("caught interrupt\n"))
  })
  expect_interrupted(res)
})
