# Classed conditions. Every error the package raises on bad input has class
# c("nmfkit_error_<what>", "nmfkit_error"), is reported against the user's
# call, and names the argument and what was found.

abort_nmfkit <- function(message, what, ..., call = rlang::caller_env(),
                         .envir = parent.frame()) {
  cli::cli_abort(
    message,
    class = c(paste0("nmfkit_error_", what), "nmfkit_error"),
    call = call, ..., .envir = .envir
  )
}

# A fit that stopped on its iteration cap although the user asked for a
# tolerance, or that stopped on a numerical error.
warn_status <- function(status, control, iterations, call) {
  if (identical(status, "degenerate")) {
    cli::cli_warn(
      c("The fit is zero: every component has an all-zero basis vector or coefficient row, so {.code W %*% H} is 0 (relative error 1).",
        "i" = "The status is {.val degenerate}, not converged. A zero {.arg init} stays zero; try another {.arg init}."),
      class = c("nmfkit_warning_degenerate", "nmfkit_warning"), call = call
    )
  } else if (identical(status, "numerical_error")) {
    cli::cli_warn(
      c("The fit stopped after {iterations} iteration{?s} on a numerical error.",
        "i" = "The factors are those of the last finite iteration; try another {.arg init}."),
      class = c("nmfkit_warning_numerical", "nmfkit_warning"), call = call
    )
  } else if (identical(status, "max_iter") && isTRUE(control$tol_set) &&
             control$tol > 0) {
    cli::cli_warn(
      c("The fit did not reach {.code tol = {control$tol}} in {iterations} iteration{?s}.",
        "i" = "Raise {.code max_iter} in {.fn nmf_control}, or loosen {.code tol}."),
      class = c("nmfkit_warning_convergence", "nmfkit_warning"), call = call
    )
  }
  invisible(NULL)
}
