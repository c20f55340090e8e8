# Losses of nmf() as objects, in the spirit of stats::family: one object per
# loss (Frobenius, Kullback-Leibler, Itakura-Saito, any beta-divergence),
# built by new_loss() and named in loss_registry(). Every other file asks
# the loss object (its divergence, residuals, held-out score, parametric
# draw, predict solver, methods, summary) and never branches on a loss's
# name or beta (ARCHITECTURE.md, "Losses" and "Checklist: adding a loss").
# The Frobenius fits run the engine of nmf.hpp (`core = "frobenius"`);
# every other loss the one of divergence.hpp (`core = "divergence"`).

# One loss object; the fields every caller may ask:
# - `name`, `beta` (NULL for a loss outside the beta family), `label` (as
#   print() says it), `arg` (what nmf(loss = ) takes to fit it again);
# - `core`: the engine that fits it ("frobenius": nmf.hpp; "divergence":
#   divergence.hpp), `methods` the nmf() methods it allows, `solver` their
#   aliases ("auto" and "cd" resolved), `streams` whether a fit read in
#   blocks can use it, `positive` whether zeros of the data make it
#   infinite;
# - `entries(x, mu)`: d(x | mu) entrywise at the scale given, whose
#   homogeneity `degree` (d(c x | c mu) = c^degree d(x | mu)) lets the
#   object compute `divergence(x, mu)` and `deviance_residuals(x, mu)` on
#   x / 2^e and mu / 2^e, so entries near the double range's ends give
#   finite values; `residual` the default type of residuals();
# - `coef(newdata, W, tol, max_passes, threads)`: the predict solver,
#   argmin_{H >= 0} D(newdata | W H);
# - `exact_coef(newdata, W, threads)`: the same minimiser solved exactly
#   (refit_signatures(), whose selection rules compare fits of subsets);
#   by default `coef` to a tight tolerance;
# - `score(f, pred, x_mean)`: the relative held-out error of a fold's
#   entries (nmf_rank(), nmf_tune()); `holdout_label`, `score_label` its
#   names on plots and tables;
# - `draw(mean, state)` (NULL: no parametric bootstrap) with
#   `setup(data, mean, W, H)` (NULL: the draw needs no data) giving
#   `state`;
# - `summary(object)`: summary()'s loss fields of a fit; `fit_fields` the
#   fields of the engine's run a fit keeps; `error_name`, `baseline_name`
#   the names of its trace and of the fit no better than nothing.
new_loss <- function(name, beta, label, core, entries, degree, coef,
                     methods, solver, score, summary, draw = NULL,
                     setup = NULL, exact_coef = NULL,
                     residual = "deviance", streams = FALSE,
                     positive = FALSE, arg = name, fit_fields = character(),
                     error_name = "relative error",
                     baseline_name = "W H = 0",
                     holdout_label = "held-out relative error",
                     score_label = "relative error") {
  divergence <- function(x, mu) {
    e <- pair_exponent(x, mu)
    if (e == 0) return(entries(x, mu))
    entries(scale_data(x, e), scale_data(mu, e)) * 2^(e * degree)
  }
  exact_coef <- exact_coef %||% function(newdata, W, threads) {
    coef(newdata, W, 1e-12, 2000L, threads)
  }
  deviance_residuals <- function(x, mu) {
    e <- pair_exponent(x, mu)
    d <- entries(scale_data(x, e), scale_data(mu, e))
    sign(x - mu) * sqrt(2 * pmax(d, 0)) * 2^(e * degree / 2)
  }
  structure(list(
    name = name, beta = beta, label = label, arg = arg, core = core,
    methods = methods, solver = solver, streams = streams,
    positive = positive, residual = residual, entries = entries,
    divergence = divergence, deviance_residuals = deviance_residuals,
    coef = coef, exact_coef = exact_coef, score = score, draw = draw, setup = setup,
    summary = summary, fit_fields = fit_fields, error_name = error_name,
    baseline_name = baseline_name, holdout_label = holdout_label,
    score_label = score_label
  ), class = "nmfkit_loss")
}

#' @export
print.nmfkit_loss <- function(x, ...) {
  check_dots_empty()
  cat(sprintf("<nmfkit loss: %s>\n", x$label))
  invisible(x)
}

# The exponent e putting the larger of x and mu within 2^+-200 (as
# data_exponent()), so that d(x / 2^e | mu / 2^e) is finite wherever it is
# at some scale.
pair_exponent <- function(x, mu) {
  mx <- suppressWarnings(max(x[is.finite(x)], mu[is.finite(mu)], 0))
  if (mx == 0 || (mx >= 2^-200 && mx <= 2^200)) return(0)
  ceiling(log2(mx))
}

# IS and beta <= 0 need x > 0 wherever it counts; KL and beta > 0 take
# zeros. Entries of weight 0 (masked, missing) do not count.
check_positive_for_loss <- function(x, loss, masked, call) {
  if (!loss$positive) return(invisible())
  # (any source: the share of nonzeros, NA counted as zero and excused
  # below by their weight 0)
  total <- as.double(nrow(x)) * ncol(x)
  zeros <- round((1 - nonzero_share(x)) * total)
  if (!is.null(masked)) {
    # zeros that weigh nothing are fine: count those the weights leave in
    zeros <- zeros_counted(x, masked)
  }
  if (zeros > 0) {
    abort_nmfkit(c("The {loss$label} loss needs positive data: {.arg x} has {zeros} zero entr{?y/ies}.",
                   "i" = "Use {.code loss = \"kl\"} (or a beta above 0) for data with zeros, or leave the zeros out with {.code mask = \"zeros\"}."),
                 "loss", call = call, value = zeros)
  }
}

# The zero entries of x whose weight is positive under `masked`.
zeros_counted <- function(x, masked) {
  xv <- masked$x
  if (masked$base == 0) return(sum(masked$value[masked$delta > 0] == 0))
  zero_total <- if (inherits(xv, "dgCMatrix")) length(xv) - sum(xv@x != 0)
                else sum(xv == 0)
  dropped <- sum(masked$value[masked$delta == -1] == 0)
  zero_total - dropped
}

# One run of the divergence engine from `start` (W, H on the lines of x):
# its trace is D(x | WH) / D(x | r c' / T).
run_divergence <- function(x, start, spec, control, update_w = TRUE) {
  m <- spec$masked
  e <- spec$exponent %||% 0
  engine <- violation_at_core(spec$engine, e, spec$loss$beta)
  fit <- if (is_streamed(x)) {
    # read in blocks (no masks: nmf() refuses them there)
    run_streamed(x, start, spec$method, engine, spec$penalty,
                 fixed_counts(spec$fixed), x$nnz, spec$loss$beta)
  } else {
    if (!is.null(m)) m$value <- scale_data(m$value, e)
    core_fit(x, start$W, start$H, core_params(
      spec$method, engine, beta = spec$loss$beta,
      callback = progress_callback(control), penalty = spec$penalty,
      fixed = fixed_counts(spec$fixed), update_w = update_w, masked = m))
  }
  # the divergences scale as (2^e)^beta, in exact steps (2^(e beta)
  # itself overflows beyond 1023 where the divergence need not)
  for (f in spec$loss$fit_fields) {
    fit[[f]] <- scale_data(fit[[f]], -e * spec$loss$beta)
  }
  fit <- with_violation(fit, e, spec$loss$beta)
  fit$loss_name <- "relative divergence"
  fit
}

# The divergence sum d_beta(x | W H) over the entries `masked` weighs
# (NULL: every entry), for summaries and held-out errors.
divergence_value <- function(x, W, H, beta, masked = NULL, threads = 1L) {
  m <- masked
  r_divergence(x, W, H, beta, threads, if (is.null(m)) 1 else m$base,
               if (is.null(m)) integer() else m$i,
               if (is.null(m)) integer() else m$j,
               if (is.null(m)) numeric() else m$delta,
               if (is.null(m)) numeric() else m$value)
}

# A divergence's coefficient problem on a fixed W: the features the basis
# leaves at zero cannot be fitted at all (their divergence does not depend
# on H) and are left out; the start h0 is each column's share of the
# basis' mean (positive wherever W is). Shared by the engine's solve
# (divergence_coef()) and the exact Poisson one (poisson_exact_coef()).
coef_problem <- function(newdata, W) {
  live <- rowSums(W) > 0
  if (!all(live)) {
    W <- W[live, , drop = FALSE]
    newdata <- newdata[live, , drop = FALSE]
  }
  total <- if (inherits(newdata, "dgCMatrix")) Matrix::colSums(newdata) else
    colSums(newdata)
  wsum <- sum(W)
  h0 <- matrix(if (wsum > 0) rep(total / wsum, each = ncol(W)) else 0,
               ncol(W), ncol(newdata))
  h0[!is.finite(h0)] <- 0
  list(newdata = newdata, W = W, h0 = h0)
}

# argmin_{H >= 0} D_beta(newdata | W H) with W fixed, by the fit's solver:
# the columns' problems are convex for beta in [1, 2] (KL: strictly, where
# W has full column rank).
divergence_coef <- function(newdata, W, loss, tol, max_passes, threads) {
  p <- coef_problem(newdata, W)
  k <- ncol(p$W)
  method <- loss$solver[["auto"]]
  control <- list(max_iter = max_passes, tol = tol, threads = threads,
                  extrapolate = FALSE, inner = 1L)
  fit <- core_fit(p$newdata, p$W, p$h0, core_params(
    method, control, beta = loss$beta, fixed = c(k, 0L), update_w = FALSE))
  fit$H
}
