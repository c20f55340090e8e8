# The fit pipeline every variant goes through (ARCHITECTURE.md, "The fit
# pipeline"):
#
#   scale by 2^e -> drop zero lines -> start -> run (nrun times, best kept)
#   -> unscale -> restore lines -> post -> status -> model
#
# A fitting function checks its arguments, gathers the variant's resolved
# arguments in `spec`, and calls fit_variant(). What differs between variants
# is in their declarations (declare.R): how the fit scales, whether zero lines
# are dropped, the start, the core call, and the model's fields.

# The model of a variant fitted to validated data `x` (the data the core
# sees). `data`: what the model keeps for fitted() and residuals() (x by
# default); `scan`: check_data()'s read of x, if at hand; `dimnames`: those
# of the model (x's by default).
fit_variant <- function(name, x, rank, init, control, nrun = 1L,
                        keep_data = TRUE, spec = list(), call = NULL,
                        data = x, scan = NULL, dimnames = base::dimnames(x)) {
  v <- variant_of(name)
  spec$call <- call
  fit <- run_pipeline(v, x, rank, init, control, nrun, spec, scan)
  finish_fit(v, fit, spec, control, call, if (keep_data) data, dimnames)
}

# The fit of validated data up to the model: a list with W, H (full size,
# unscaled), loss, iterations, status, run_loss (the final loss of every
# run) and the variant's fields. Also used by functions that need the fit
# but no model (dataset distances, permutation tests).
run_pipeline <- function(v, x, rank, init, control, nrun = 1L,
                         spec = list(), scan = NULL) {
  # data near 1e-200 or .Machine$double.xmax: fit x / 2^e (exact) and scale
  # the factors back (every fit is equivariant)
  e <- if (is.null(v$scale)) 0 else data_exponent(x, scan)
  xs <- scale_data(x, e)
  spec$exponent <- e
  # all-zero rows and columns are left out and come back as exact zeros
  # (scaling by 2^-e may flush tiny entries to zero: then x is read again)
  drop <- if (is.function(v$drop_lines)) v$drop_lines(spec) else v$drop_lines
  keep <- if (drop) nonzero_lines(xs, rank, if (e == 0) scan)
  xr <- kept_lines(xs, keep)
  # every start is drawn before any run, in order, from the session's RNG
  # stream: the first from `init`, the others from "random". The runs draw
  # no random numbers, so any future::plan() gives the same fits (and
  # future.apply need not hand them seeds; its check for random numbers in
  # a worker would also count those that loading packages there draws).
  starts <- lapply(c(list(init), rep(list("random"), nrun - 1L)),
                   function(init) {
    start_on_lines(v, xs, xr, keep, rank, init, spec, control, e)
  })
  if (nrun == 1L) {
    fit <- v$run(xr, starts[[1]], spec, control)
    finals <- final_loss(fit$loss)
  } else {
    prog <- progressr::progressor(steps = nrun)
    runs <- future.apply::future_lapply(starts, function(start) {
      out <- v$run(xr, start, spec, control)
      prog()
      out
    }, future.seed = NULL)
    finals <- vapply(runs, function(f) final_loss(f$loss), numeric(1))
    fit <- runs[[which.min(run_score(runs, finals))]]
  }
  fit$run_loss <- finals
  fit <- unscale_fit(fit, v$scale, e)
  fit <- restore_fit(fit, keep)
  fit <- v$post(fit, x, spec, control)
  f <- v$status_factors(fit)
  fit$status <- fit_status(f$W, f$H, fit$status)
  fit
}

# The model object of a finished fit; warns when the status says so.
finish_fit <- function(v, fit, spec, control, call, data, dimnames) {
  warn_status(fit$status, control, fit$iterations, call)
  do.call(new_nmfkit, quote = TRUE, c(
    list(W = fit$W, H = fit$H, loss = fit$loss, iterations = fit$iterations,
         status = fit$status, call = call, control = control,
         variant = v$name, x = data, dimnames = dimnames,
         loss_name = fit$loss_name %||% v$loss_name),
    v$model(fit, spec)
  ))
}

# The starting factors of one run on xr = kept_lines(xs, keep): a named
# start is computed on xr; a user's list is checked against the full data xs
# (x / 2^e), scaled like the factors of a fit of xs and cut to the kept
# lines. The variant's start() sees the full data as `full`.
start_on_lines <- function(v, xs, xr, keep, rank, init, spec, control, e) {
  if (!is.list(init)) {
    return(v$start(xr, rank, init, spec, control, full = xs))
  }
  start <- v$start(xs, rank, init, spec, control, full = xs)
  for (f in intersect(names(start), names(v$scale))) {
    start[[f]] <- start[[f]] * 2^(-e * v$scale[[f]])
  }
  if (is.null(keep)) return(start)
  start$W <- start$W[keep$rows, , drop = FALSE]
  start$H <- start$H[, keep$cols, drop = FALSE]
  start
}

# The fields of a fit of x / 2^e back at the scale of x: field f times
# 2^(e * scale[f]). e = 0, the usual case, copies nothing.
unscale_fit <- function(fit, scale, e) {
  if (e == 0) return(fit)
  for (f in intersect(names(scale), names(fit))) {
    fit[[f]] <- fit[[f]] * 2^(e * scale[[f]])
  }
  fit
}

# Rows and columns of x with a nonzero entry, as list(rows =, cols =)
# logical vectors; NULL when there is nothing to drop, or when dropping
# would leave fewer than `rank` rows or columns (then the fit runs on all of
# x, whose zero lines come out zero anyway).
nonzero_lines <- function(x, rank, scan = NULL) {
  # one read (or check_data()'s, passed as `scan`), no logical copy of the
  # data; a dgCMatrix may store explicit zeros, which do not make a line
  # nonzero
  if (is.null(scan)) scan <- scan_data(x)
  rows <- scan$rows
  cols <- scan$cols
  if (all(rows) && all(cols)) return(NULL)
  if (sum(rows) < rank || sum(cols) < rank) return(NULL)
  list(rows = rows, cols = cols)
}

# A fit on kept lines with W and H back at full size (dropped lines zero).
restore_fit <- function(fit, keep) {
  if (is.null(keep)) return(fit)
  fit$W <- restore_lines(fit$W, keep$rows, TRUE)
  fit$H <- restore_lines(fit$H, keep$cols, FALSE)
  fit
}

# A factor fitted on the kept lines, back at full size with zeros elsewhere.
restore_lines <- function(f, keep, by_row) {
  if (by_row) {
    out <- matrix(0, length(keep), ncol(f))
    out[keep, ] <- f
  } else {
    out <- matrix(0, nrow(f), length(keep))
    out[, keep] <- f
  }
  out
}

# What the best of several runs minimises: the runs' objectives where the
# solver reports one (penalised fits: the penalised objective, which the
# relative error does not track), else their final losses.
run_score <- function(runs, finals) {
  obj <- vapply(runs, function(f) f$objective %||% NA_real_, numeric(1))
  if (all(is.finite(obj))) obj else finals
}

# The last loss of a run (Inf when it has none).
final_loss <- function(loss) if (length(loss)) loss[length(loss)] else Inf

# Before a future.apply call with future.seed = TRUE: a session whose RNG
# is not yet seeded is seeded now, in its own kind, as any draw would;
# future.apply would otherwise seed it itself and leave the session's RNG
# kind switched to L'Ecuyer-CMRG. A seeded session is left as it is.
seed_session <- function() {
  if (!exists(".Random.seed", envir = globalenv(), inherits = FALSE)) {
    stats::runif(1)
  }
  invisible(NULL)
}
