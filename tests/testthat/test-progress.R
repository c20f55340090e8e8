# Progress bars without a terminal: rlang_interactive makes the session
# count as interactive, cli's ticks are paused "due" (cli's own testing
# helper) so that every update is drawn, and cli.dynamic = FALSE makes the
# bar print one line per update.

test_that("no hook, hence no cost, unless a person watches", {
  withr::local_options(rlang_interactive = FALSE, nmfkit.progress = NULL)
  expect_null(progress_callback(nmf_control()))
  withr::local_options(rlang_interactive = TRUE, nmfkit.progress = FALSE)
  expect_null(progress_callback(nmf_control()))
  # verbose keeps its lines, bars or not
  cb <- progress_callback(nmf_control(verbose = TRUE, max_iter = 40))
  expect_message(cb(1L, 0.5), "iteration 1: loss 0.5")
  expect_silent(cb(3L, 0.25))
  expect_message(cb(4L, 0.25), "iteration 4: loss 0.25")
})

test_that("a fit drives the bar through the core's progress hook", {
  withr::local_options(rlang_interactive = TRUE, nmfkit.progress = NULL,
                       cli.progress_handlers_only = "logger")
  x <- swimmer()
  ctl <- nmf_control(max_iter = 12, tol = 0)
  out <- utils::capture.output(cli:::cli_with_ticks(
    fit <- nmf(x, rank = 5, control = ctl)
  ))
  upd <- regmatches(out, regexec("([0-9]+)/([0-9]+) updated$", out))
  upd <- do.call(rbind, lapply(upd[lengths(upd) > 0], function(m) {
    as.integer(m[2:3])
  }))
  # one update per iteration, in order, out of max_iter
  expect_identical(upd[, 1], seq_len(fit$iterations))
  expect_true(all(upd[, 2] == 12L))
  # the bar is closed when the fit returns
  expect_length(grep("terminated", out), 1L)
})

test_that("the bar shows the iteration and the current loss", {
  withr::local_options(rlang_interactive = TRUE, nmfkit.progress = NULL,
                       cli.progress_handlers_only = "cli",
                       cli.dynamic = FALSE, cli.num_colors = 1L)
  x <- swimmer()
  ctl <- nmf_control(max_iter = 5, tol = 0)
  msgs <- character()
  withCallingHandlers(
    cli:::cli_with_ticks(fit <- nmf(x, rank = 5, control = ctl)),
    message = function(m) {
      msgs <<- c(msgs, conditionMessage(m))
      invokeRestart("muffleMessage")
    }
  )
  last <- sprintf("iteration %d, loss %s", fit$iterations,
                  format(signif(fit$loss[fit$iterations], 6)))
  expect_true(any(grepl(last, msgs, fixed = TRUE)))
})

test_that("nrun restarts report through progressr", {
  withr::local_options(nmfkit.progress = FALSE, progressr.enable = TRUE)
  steps <- 0
  withCallingHandlers(
    nmf(swimmer(), rank = 4, nrun = 3,
        control = nmf_control(max_iter = 5, tol = 0)),
    progression = function(p) {
      if (identical(p$type, "update")) steps <<- steps + p$amount
    }
  )
  expect_equal(steps, 3)
})
