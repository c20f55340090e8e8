# Progress of long work. One fit reports through the core's progress hook
# (src/r_hooks.h calls the R function made here, on the main thread, once per
# iteration); loops over fits (restarts, pairs, permutations) report through
# progressr, so that they also report from future workers.

# An R function(iter, loss) for the core's progress hook, or NULL (no hook,
# no cost).
# * `verbose = TRUE`: a line every `max_iter / 20` iterations.
# * Otherwise, in an interactive session and unless
#   `options(nmfkit.progress = FALSE)`: a cli progress bar with the
#   iteration and the current loss. cli shows it only once the fit has run
#   for `getOption("cli.progress_show_after", 2)` seconds, so quick fits
#   stay silent. The bar belongs to the frame `.envir` (by default the
#   caller's) and closes when that frame returns.
# `total` is the number of iterations of the run.
progress_callback <- function(control, total = control$max_iter,
                              .envir = parent.frame()) {
  if (isTRUE(control$verbose)) return(verbose_callback(control$max_iter))
  if (!show_progress_bar()) return(NULL)
  id <- cli::cli_progress_bar(
    total = as.integer(total),
    # cli's pb_status ends in a space
    format = paste0("{cli::pb_bar} {cli::pb_percent} | {cli::pb_status}",
                    "| {cli::pb_elapsed}"),
    auto_terminate = FALSE, .envir = .envir
  )
  function(iter, loss) {
    status <- sprintf("iteration %d, loss %s", iter, format(signif(loss, 6)))
    cli::cli_progress_update(set = iter, status = status, id = id,
                             .envir = .envir)
  }
}

# verbose = TRUE: a message at the first iteration and every max_iter / 20.
verbose_callback <- function(max_iter) {
  every <- max(1L, max_iter %/% 20L)
  function(iter, loss) {
    if (iter == 1L || iter %% every == 0L) {
      cli::cli_inform("iteration {iter}: loss {signif(loss, 6)}")
    }
  }
}

# Progress bars are for people: interactive sessions only (rlang's test, so
# that `options(rlang_interactive = TRUE)` turns them on in tests), and
# `options(nmfkit.progress = FALSE)` turns them off.
show_progress_bar <- function() {
  isTRUE(getOption("nmfkit.progress", TRUE)) && rlang::is_interactive()
}
