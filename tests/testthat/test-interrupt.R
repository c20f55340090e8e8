# Ctrl-C reaches every long loop. One background R process runs, in turn,
# computations that would take minutes (NNLS prediction for standard and
# joint NMF, stratified prediction, the Chamfer distance, the randomized
# SVD of the NNDSVD start); the test sends SIGINT once each has begun and
# checks that the process caught it promptly. Before the fix every one of
# them ran on, ignoring the interrupt.

# The long calls, each built by a function that prepares its data first, so
# that the interrupt lands in the core loop rather than in input checks.
interrupt_cases <- function() {
  slow_basis <- function() {
    # nearly collinear columns: coordinate descent crawls; tol = 0 never
    # stops before max_passes
    outer(stats::runif(200), rep(1, 30)) +
      matrix(stats::runif(200 * 30, 0, 1e-3), 200)
  }
  list(
    predict = function() {
      fit <- nmfkit::nmf(matrix(stats::runif(40 * 30), 40, 30), 3)
      fit$W <- slow_basis()
      newdata <- matrix(stats::runif(200 * 20000), 200)
      function() stats::predict(fit, newdata, tol = 0, max_passes = 1e6)
    },
    stratified = function() {
      w <- slow_basis()
      v <- matrix(stats::runif(400), 200, 2)
      newdata <- matrix(stats::runif(200 * 20000), 200)
      group <- rep(0:1, 10000)
      function() nmfkit:::r_stratified_coef(newdata, group, w, v, 0, 1e6L, 1L)
    },
    kl = function() {
      # a large KL fit (cd passes over 4 million counts) and its predict()
      x <- matrix(stats::rpois(2000 * 2000, 2), 2000)
      function() nmfkit::nmf(x, 20, loss = "kl",
                             control = nmfkit::nmf_control(max_iter = 1e6,
                                                           tol = 0))
    },
    chamfer = function() {
      x1 <- matrix(stats::runif(100 * 40000), 100)
      x2 <- matrix(stats::runif(100 * 40000), 100)
      function() nmfkit:::r_chamfer(x1, x2, "paper", 1L)
    },
    nndsvd = function() {
      x <- matrix(stats::runif(500 * 2000), 500)
      omega <- matrix(stats::rnorm(2000 * 20), 2000)
      function() {
        nmfkit:::r_nndsvd(x, 10L, omega, "mean", mean(x), NULL, NULL,
                          100000L, 1L)
      }
    }
  )
}

run_cases <- function(cases) {
  set.seed(1)
  for (nm in names(cases)) {
    run <- cases[[nm]]()
    cat("go", nm, "\n")
    tryCatch({
      run()
      cat("finished", nm, "\n")
    }, interrupt = function(e) cat("caught", nm, "\n"))
  }
}

# Reads the child's output until `pattern` appears or `seconds` pass.
wait_for <- function(p, state, pattern, seconds) {
  deadline <- Sys.time() + seconds
  while (!grepl(pattern, state$out) && Sys.time() < deadline) {
    p$poll_io(100)
    state$out <- paste0(state$out, p$read_output())
  }
  grepl(pattern, state$out)
}

# Runs each case in a child R process, interrupts it `settle` seconds after
# it starts and expects it to stop within `within` seconds.
expect_interruptible <- function(cases, settle, within) {
  p <- callr::r_bg(run_cases, args = list(cases = cases),
                   libpath = .libPaths(), stdout = "|", stderr = "|")
  on.exit(p$kill(), add = TRUE)
  state <- new.env()
  state$out <- ""
  for (nm in names(cases)) {
    started <- wait_for(p, state, paste("go", nm), 60)
    expect_true(started, info = nm)
    if (!started) break
    Sys.sleep(settle)
    p$interrupt()
    caught <- wait_for(p, state, paste("caught", nm), within)
    expect_true(caught, info = paste(nm, "was not interrupted"))
    if (!caught) break
  }
}

test_that("Ctrl-C stops predict(), stratified predict, Chamfer and NNDSVD", {
  skip_on_cran()
  skip_if_not_installed("callr")
  expect_interruptible(interrupt_cases(), settle = 0.5, within = 5)
})

# The manifold setups: the exact k-NN graph (O(m n^2)), the HNSW graph of
# large dense data and SMRMF's exemplar start (DS3 on n x n matrices), each
# long before a solver's first iteration.
manifold_interrupt_cases <- function() {
  list(
    knn_exact = function() {
      x <- matrix(stats::runif(20 * 30000), 20)
      function() nmfkit:::r_knn_graph(x, 10L, "binary", 1L)
    },
    knn_hnsw = function() {
      x <- matrix(stats::runif(10 * 300000), 10)
      function() nmfkit:::knn_graph(x, 10L, "binary", 1L)
    },
    smrmf_start = function() {
      x <- matrix(stats::rnorm(5 * 2000), 5)
      function() nmfkit::nmf_manifold(x, 3, method = "smrmf")
    }
  )
}

test_that("Ctrl-C stops the k-NN graphs and SMRMF's exemplar start", {
  skip_on_cran()
  skip_if_not_installed("callr")
  expect_interruptible(manifold_interrupt_cases(), settle = 1, within = 3)
})

# Data read in blocks: the scan of a DelayedMatrix, the streamed fit's
# passes (interrupts are polled between blocks and inside each block's
# products) and the online fit's mini-batches.
stream_interrupt_cases <- function() {
  big <- function() {
    DelayedArray::DelayedArray(matrix(stats::runif(2000 * 4000), 2000))
  }
  list(
    streamed = function() {
      x <- big()
      ctrl <- nmfkit::nmf_control(max_iter = 1e6, tol = 0, block_size = 2^22)
      function() nmfkit::nmf(x, 20, control = ctrl)
    },
    online = function() {
      x <- big()
      ctrl <- nmfkit::nmf_control(max_iter = 1e6, tol = 0)
      function() nmfkit::nmf(x, 20, method = "online", control = ctrl)
    }
  )
}

test_that("Ctrl-C stops streamed and online fits", {
  skip_on_cran()
  skip_if_not_installed("callr")
  skip_if_not_installed("DelayedArray")
  expect_interruptible(stream_interrupt_cases(), settle = 3, within = 3)
})

# KL fits of 3,000 x 2,000 counts, plain, masked and with NA left out: the
# start check (zero_fits()), the count layout's set-up and every pass poll
# the host between chunks, and an interrupted fit makes no further pass.
# Measured at load 18 on 2 cores: at most 1.3 s after 1.5-5 s (before: up
# to 3.7 s masked); `within` is the streamed cases' margin.
kl_interrupt_cases <- function() {
  counts <- function() matrix(stats::rpois(3000 * 2000, 2), 3000)
  ctrl <- nmfkit::nmf_control(max_iter = 1e6, tol = 0)
  list(
    kl_plain = function() {
      x <- counts()
      function() nmfkit::nmf(x, 20, loss = "kl", control = ctrl)
    },
    kl_mask = function() {
      x <- counts()
      mask <- matrix(stats::runif(length(x)) < 0.1, nrow(x))
      function() nmfkit::nmf(x, 20, loss = "kl", mask = mask, control = ctrl)
    },
    kl_na = function() {
      x <- counts()
      x[stats::runif(length(x)) < 0.1] <- NA
      function() nmfkit::nmf(x, 20, loss = "kl", na = "omit", control = ctrl)
    }
  )
}

test_that("Ctrl-C stops KL fits (plain, masked, NA omitted) promptly", {
  skip_on_cran()
  skip_if_not_installed("callr")
  for (settle in c(1.5, 3, 5)) {
    expect_interruptible(kl_interrupt_cases(), settle = settle, within = 3)
  }
})
