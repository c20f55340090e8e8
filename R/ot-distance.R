# Optimal transport between histograms: ot_distance() and the OT pairs
# that nmf_distance() on a Wasserstein fit uses.

#' Optimal transport distances between histograms
#'
#' By default the Sinkhorn divergence
#' \deqn{S_\epsilon(a, b) = OT_\epsilon(a, b) - \frac{1}{2} OT_\epsilon(a, a) -
#' \frac{1}{2} OT_\epsilon(b, b),}{S(a, b) = OT(a, b) - OT(a, a) / 2 - OT(b, b) / 2,}
#' which is symmetric, nonnegative (for a squared Euclidean ground cost, whose
#' Gibbs kernel is positive definite) and zero for identical histograms
#' (Feydy et al., 2019); tiny negative values left by rounding are set to 0
#' and a pair of identical columns gives exactly 0.
#' `type = "entropic"` gives the regularised cost itself,
#' \eqn{OT_\epsilon(a, b) = \min_P \langle P, C\rangle +
#' \epsilon \sum P (\log P - 1)} over plans `P` with row sums `a` and column
#' sums `b` (negative for identical or nearby histograms: the entropy term),
#' and `type = "transport"` the transport cost \eqn{\langle P, C\rangle} of
#' that entropic plan. The constant `-epsilon` (from the `- 1`) is the
#' convention of [nmf_wasserstein()]'s objective; add `epsilon` to get
#' \eqn{\langle P, C\rangle + \epsilon \sum P \log P}. It cancels in the
#' divergence.
#'
#' The ground cost `C` is `cost` when given, used as is. From `coords` it is
#' the squared Euclidean distance between the bin positions divided by its
#' mean over all pairs of bins (including each bin with itself); from
#' `image_dim` the squared Euclidean distance between pixel centres (unit
#' spacing) divided by its mean over all pairs of pixels; without any of
#' them, the bins are the points `1, 2, ..., nrow(a)` of a line, scaled the
#' same way. So `epsilon` is relative to the typical cost, and the values do
#' not change when `coords` are multiplied by a constant.
#'
#' All OT values are computed in the log domain (stable for any `epsilon`).
#' `method = "sinkhorn"` alternates exact updates of the two dual potentials
#' (log-domain Sinkhorn); the column sums of the plan are then exact and it
#' stops when the L1 error of the row sums is at most `control$tol`.
#' `method = "lbfgs"` maximises the semi-dual
#' \eqn{\max_v \langle v, b\rangle - OT^*_\epsilon(a, v)} by L-BFGS, as
#' [nmf_wasserstein()] does; the row sums are then exact and it stops when
#' the largest error of the column sums is at most `control$tol`. Sinkhorn
#' needs many iterations when `epsilon` is small; L-BFGS is then often much
#' faster, but with very thin tails (masses far below `1e-20`) it can stall
#' at a marginal error near `1e-6`, which it reports with a warning.
#'
#' Whatever the method, the self terms \eqn{OT_\epsilon(a, a)} (those of the
#' divergence, and any pair whose two columns are equal) are computed by the
#' symmetric fixed-point iteration of Feydy et al. (2019): for a symmetric
#' cost the two potentials of \eqn{OT_\epsilon(a, a)} are equal, and
#' averaging the potential with its log-domain softmin image converges in
#' tens of iterations where alternating Sinkhorn updates can oscillate for
#' thousands (multimodal histograms with near-empty bins between the modes).
#' Its stopping rule is the same L1 error of the plan's row sums (which here
#' equal its column sums); bins without mass take no part. With a
#' non-symmetric `cost` the self terms use plain Sinkhorn.
#'
#' @param a,b Histograms: vectors, or matrices with one histogram per column
#'   (a single column is recycled). Normalised to sum to one.
#' @param cost,coords,image_dim,kernel The ground cost, as in
#'   [nmf_wasserstein()] and Details.
#' @param epsilon Entropic regularisation, greater than 0.
#' @param type `"divergence"` (the Sinkhorn divergence), `"entropic"` (the
#'   regularised OT cost) or `"transport"` (\eqn{\langle P, C\rangle} of the
#'   entropic plan).
#' @param method `"sinkhorn"` or `"lbfgs"`.
#' @param plan Also return the transport plans.
#' @param control [nmf_control()]: `max_iter` iterations (default 10000) and
#'   `tol`, the marginal error at which to stop (default `1e-8`).
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return A numeric vector, one value of `type` per pair of columns. With
#'   `plan = TRUE` a list with `cost` (that vector), `entropic`, `transport`
#'   and `plan` (a list of `m` x `m` plans of the pairs `(a, b)`).
#' @references Feydy, J., Séjourné, T., Vialard, F.-X., Amari, S., Trouvé, A.
#'   and Peyré, G. (2019). Interpolating between optimal transport and MMD
#'   using Sinkhorn divergences. AISTATS 2019.
#' @examples
#' t <- seq(0, 1, length.out = 50)
#' a <- dnorm(t, 0.3, 0.05)
#' b <- dnorm(t, 0.7, 0.05)
#' ot_distance(a, cbind(a, b), coords = t, epsilon = 0.01)
#' ot_distance(a, cbind(a, b), coords = t, epsilon = 0.01, type = "entropic")
#' @export
ot_distance <- function(a, b, cost = NULL, coords = NULL, image_dim = NULL,
                        epsilon = 0.025,
                        kernel = c("auto", "dense", "separable"),
                        type = c("divergence", "entropic", "transport"),
                        method = c("sinkhorn", "lbfgs"), plan = FALSE,
                        control = nmf_control(max_iter = 10000, tol = 1e-8),
                        ...) {
  check_dots_empty()
  a <- check_data(as_column(a), arg = "a", allow_zero_matrix = TRUE)
  b <- check_data(as_column(b), arg = "b", allow_zero_matrix = TRUE)
  if (nrow(a) != nrow(b)) {
    abort_nmfkit(c("{.arg a} and {.arg b} must have the same number of bins.",
                   "x" = "{.arg a} has {nrow(a)} and {.arg b} has {nrow(b)}."),
                 "dimension")
  }
  a <- check_histograms(a, verbose = wants_verbose(control))
  b <- check_histograms(b, verbose = wants_verbose(control))
  n <- max(ncol(a), ncol(b))
  if (!ncol(a) %in% c(1L, n) || !ncol(b) %in% c(1L, n)) {
    abort_nmfkit(c("{.arg a} and {.arg b} must have the same number of columns, or one of them one column.",
                   "x" = "They have {ncol(a)} and {ncol(b)}."), "dimension")
  }
  a <- a[, rep_len(seq_len(ncol(a)), n), drop = FALSE]
  b <- b[, rep_len(seq_len(ncol(b)), n), drop = FALSE]
  epsilon <- check_number(epsilon, min = 0, strict = TRUE, what = "epsilon")
  kernel <- check_choice(kernel)
  method <- check_choice(method)
  check_flag(plan)
  control <- check_control(control, fn = "ot_distance")
  type <- check_choice(type)
  ground <- ground_cost(nrow(a), cost, coords, image_dim, kernel)
  res <- ot_pairs(a, b, ground, epsilon, control, method)
  entropic <- res$cost
  value <- entropic
  if (type == "divergence") {
    # the self terms OT(a, a) and OT(b, b) in one batch of 2n columns;
    # only rounding can take the divergence below 0
    self <- ot_self(cbind(a, b), ground, epsilon, control)$cost
    value <- pmax(entropic - (self[seq_len(n)] + self[n + seq_len(n)]) / 2, 0)
    value[res$same] <- 0  # S(a, a) = 0 exactly
  }
  if (!plan && type != "transport") return(value)
  c_full <- ground_dense(ground)
  plans <- lapply(seq_len(n), function(j) ot_plan(res, j, a, c_full,
                                                   epsilon))
  transport <- vapply(plans, function(p) sum(p * c_full), numeric(1))
  if (type == "transport") value <- transport
  if (!plan) return(value)
  list(cost = value, entropic = entropic, transport = transport, plan = plans)
}

# A numeric vector as a one-column matrix; anything else as it is (for
# check_data() to judge).
as_column <- function(x, arg = rlang::caller_arg(x),
                      call = rlang::caller_env()) {
  if (missing(x)) {
    abort_nmfkit("{.arg {arg}} is missing: give the histograms.", "missing",
                 call = call)
  }
  if (is.null(dim(x)) && is.numeric(x) && !is.object(x)) {
    x <- matrix(x, ncol = 1L)
  }
  x
}

# Entropic OT between the columns of a and b by Sinkhorn or L-BFGS, and by
# the symmetric iteration where a column of a equals that of b (plain
# Sinkhorn can take thousands of iterations on OT(a, a)); warns when it did
# not converge. Returns the costs and what ot_plan() needs.
ot_pairs <- function(a, b, ground, epsilon, control, method,
                     call = rlang::caller_env()) {
  same <- colSums(a != b) == 0
  na <- matrix(NA_real_, nrow(a), ncol(a))
  res <- list(cost = numeric(ncol(a)), f = na, g = na, v = na,
              method = method, same = same)
  if (any(!same)) {
    d <- !same
    if (method == "sinkhorn") {
      r <- r_ot_sinkhorn(a[, d, drop = FALSE], b[, d, drop = FALSE],
                         ground$spec, epsilon, control$max_iter, control$tol,
                         control$threads)
      res$f[, d] <- r$f
      res$g[, d] <- r$g
      err <- max(r$error)
    } else {
      r <- r_ot_lbfgs(a[, d, drop = FALSE], b[, d, drop = FALSE],
                      ground$spec, epsilon, control)
      res$v[, d] <- r$v
      err <- r$grad_max
    }
    res$cost[d] <- r$cost
    warn_ot(r, method, err, call)
  }
  if (any(same)) {
    r <- ot_self(a[, same, drop = FALSE], ground, epsilon, control, call)
    res$cost[same] <- r$cost
    res$f[, same] <- r$f
    res$g[, same] <- r$g
  }
  res
}

# OT of each column of a with itself by the symmetric fixed-point iteration
# (whatever the method: it converges in tens of iterations where Sinkhorn
# on (a, a) can take thousands): cost, error, f = g (as r_ot_sinkhorn()).
ot_self <- function(a, ground, epsilon, control, call = rlang::caller_env()) {
  res <- r_ot_sinkhorn_symmetric(a, ground$spec, epsilon, control$max_iter,
                                 control$tol, control$threads)
  warn_ot(res, "symmetric sinkhorn", max(res$error), call)
  res
}

warn_ot <- function(res, method, err, call) {
  if (res$status == "converged") return(invisible())
  warn_nmfkit(
    c("{.code {method}} stopped after {res$iterations} iteration{?s} ({res$status}) with a marginal error of {signif(err, 3)}.",
      "i" = "Raise {.code max_iter} or {.code tol} in {.arg control}; a larger {.arg epsilon} converges faster."),
    "convergence", call = call
  )
}

# The plan of pair j from the dual potentials of ot_pairs().
ot_plan <- function(res, j, a, c_full, epsilon) {
  if (res$method == "sinkhorn" || res$same[j]) {
    return(exp((outer(res$f[, j], res$g[, j], "+") - c_full) / epsilon))
  }
  z <- (matrix(res$v[, j], nrow(c_full), ncol(c_full), byrow = TRUE) -
          c_full) / epsilon
  mx <- apply(z, 1, max)
  ell <- mx + log(rowSums(exp(z - mx)))
  a[, j] * exp(z - ell)
}

declare_settings("ot_distance", defaults = list(max_iter = 10000, tol = 1e-8))
