#' Wasserstein nonnegative matrix factorisation
#'
#' Factorises histograms (the columns of `x`) as `x ~ W H` where the columns
#' of `W` (atoms) and of `H` (weights) lie on the simplex, measuring the fit
#' with entropy-regularised optimal transport over a ground cost between bins
#' (Rolet, Cuturi and Peyré, 2016). Unlike a pointwise loss, OT knows that
#' neighbouring bins are close, so the atoms are whole bumps or strokes
#' rather than smeared mixtures.
#'
#' The objective is
#' \deqn{\sum_i OT_\epsilon(x_i, W h_i) + \rho_1 \sum_i E(h_i) +
#'   \rho_2 \sum_t E(w_t),}
#' with \eqn{E(a) = \sum a \log a} and
#' \eqn{OT_\epsilon(\mu, \nu) = \min_P \langle P, C\rangle +
#' \epsilon \sum P (\log P - 1)} over plans with marginals \eqn{\mu, \nu}.
#' Each outer iteration solves the dictionary step (with `H` fixed), then the
#' weights step (with `W` fixed); both are convex and are solved in their
#' smooth duals by L-BFGS (LBFGS++), warm-started from the previous outer
#' iteration, and the factors are recovered by a softmax. All OT
#' computations run in the log domain, so small `epsilon` neither overflows
#' nor underflows.
#'
#' The ground cost is `cost` when given (used as is); otherwise the squared
#' Euclidean distance between `coords` (a vector of 1-D bin positions or a
#' matrix with one point per row), or between the pixel centres of an image of
#' size `image_dim`, divided by its mean, so that `epsilon` is relative to the
#' typical cost. Without any of them the bins are taken as equally spaced
#' points on a line. On an image grid the kernel factorises over the two axes
#' (`kernel = "separable"`, the default for `image_dim`), which costs
#' `O(m^1.5)` per column instead of `O(m^2)`.
#'
#' @param x Histograms: a nonnegative numeric matrix (or data frame or
#'   `dgCMatrix`) with one histogram per column. Columns are normalised to sum
#'   to one (with a message if they did not).
#' @param rank Number of atoms, from 1 to `min(dim(x))`.
#' @param coords Bin positions: a numeric vector of length `nrow(x)` or a
#'   matrix with `nrow(x)` rows.
#' @param image_dim Image size `c(rows, columns)` when the bins are the
#'   pixels of an image (column-major order). Not together with `coords`.
#' @param cost A `nrow(x)` x `nrow(x)` ground cost matrix: finite and
#'   nonnegative; a warning is given when it is not symmetric or has a
#'   non-zero diagonal.
#' @param epsilon Entropic regularisation, greater than 0.
#' @param rho Entropy penalties, greater than 0: one number for both, or
#'   `c(weights = , dictionary = )` (\eqn{\rho_1} on `H`, \eqn{\rho_2} on `W`).
#' @param outer Number of outer iterations.
#' @param kernel `"auto"` (separable on an image grid, dense otherwise),
#'   `"dense"` or `"separable"` (needs `image_dim` or 1-D `coords`).
#' @param control [nmf_control()]: `max_iter` (L-BFGS iterations per
#'   subproblem, 250) and `tol` (stop a subproblem when the largest absolute
#'   dual gradient entry is at most `tol`, default `1e-4`), `threads`,
#'   `verbose`.
#' @param init `"random"` (uniform draws from R's RNG, columns normalised, as
#'   in the reference implementation) or `list(W = , H = )`.
#' @param keep_data Keep `x` (normalised) in the fit for `fitted()` and
#'   `residuals()`.
#' @return An object of class `c("nmfkit_wasserstein", "nmfkit")` with `W`
#'   (atoms, columns on the simplex), `H` (weights, columns on the simplex),
#'   `loss` (the objective above after each outer iteration), `iterations`
#'   (outer iterations), `status`, `epsilon`, `rho`, `ground` (the cost and
#'   its kernel type), `coords`, `image_dim` and `steps`, a data frame with
#'   the L-BFGS iterations, objective evaluations and final largest gradient
#'   entry of every dictionary and weights step.
#' @references Rolet, A., Cuturi, M. and Peyré, G. (2016). Fast dictionary
#'   learning with a smoothed Wasserstein loss. AISTATS, PMLR 51, 630-638.
#' @seealso [ot_distance()], [predict.nmfkit_wasserstein()],
#'   [plot.nmfkit_wasserstein()].
#' @examples
#' set.seed(1)
#' t <- seq(-12, 12, length.out = 60)
#' x <- sapply(1:30, function(i) {
#'   runif(1) * exp(-(t - 6 - rnorm(1))^2) + runif(1) * exp(-(t - rnorm(1))^2) +
#'     runif(1) * exp(-(t + 6 - rnorm(1))^2)
#' })
#' fit <- nmf_wasserstein(x, rank = 3, coords = t, outer = 3)
#' fit
#' plot(fit)
#' @export
nmf_wasserstein <- function(x, rank, coords = NULL, image_dim = NULL,
                            cost = NULL, epsilon = 0.025,
                            rho = c(weights = 0.05, dictionary = 0.05),
                            outer = 10,
                            kernel = c("auto", "dense", "separable"),
                            control = nmf_control(max_iter = 250),
                            init = "random", keep_data = TRUE) {
  call <- match.call()
  x <- check_histograms(x, verbose = wants_verbose(control))
  rank <- check_rank(rank, min(dim(x)))
  epsilon <- check_number(epsilon, min = 0, strict = TRUE, what = "epsilon")
  rho <- check_rho(rho)
  outer <- check_count(outer, min = 1)
  kernel <- check_choice(kernel)
  control <- check_control(control, default = nmf_control(max_iter = 250),
                           fn = "nmf_wasserstein")
  check_flag(keep_data)
  if (is.null(image_dim) && is.null(coords) && is.null(cost)) {
    image_dim <- attr(x, "image_dim")
  }
  ground <- ground_cost(nrow(x), cost, coords, image_dim, kernel)
  start <- wasserstein_init(x, rank, init)

  fit <- r_nmf_wasserstein(x, start$W, start$H, ground$spec, epsilon,
                           rho[["weights"]], rho[["dictionary"]], outer,
                           control, progress_callback(control, total = outer))
  fit$status <- fit_status(fit$W, fit$H, fit$status)
  warn_status(fit$status, control, fit$iterations, call)
  steps <- rbind(
    steps_frame(fit$dict_steps, "dictionary"),
    steps_frame(fit$weight_steps, "weights")
  )
  steps <- steps[order(steps$outer, steps$step), , drop = FALSE]
  rownames(steps) <- NULL
  new_nmfkit(fit$W, fit$H, fit$loss, fit$iterations, fit$status, call,
             control, variant = "wasserstein", x = if (keep_data) x,
             dimnames = dimnames(x), loss_name = "W-NMF objective",
             epsilon = epsilon, rho = rho, ground = ground,
             coords = ground$coords, image_dim = ground$image_dim,
             steps = steps)
}

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
                        control = nmf_control(max_iter = 10000, tol = 1e-8)) {
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
  control <- check_control(control,
                           default = nmf_control(max_iter = 10000, tol = 1e-8),
                           fn = "ot_distance")
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

# Helpers ---------------------------------------------------------------------

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

# Histograms: nonnegative, finite, every column with positive mass; returns a
# dense matrix whose columns sum to one. `verbose`: the user's (unchecked)
# control$verbose.
check_histograms <- function(x, verbose = FALSE,
                             arg = rlang::caller_arg(x),
                             call = rlang::caller_env()) {
  force(arg)
  x <- check_data(x, arg = arg, call = call, allow_zero_matrix = TRUE)
  if (inherits(x, "dgCMatrix")) x <- as.matrix(x)
  mass <- colSums(x)
  if (any(mass <= 0)) {
    bad <- which(mass <= 0)
    abort_nmfkit(c("Every column of {.arg {arg}} must have positive mass.",
                   "x" = "{cli::qty(length(bad))}Column{?s} {paste(bad, collapse = ', ')} {cli::qty(length(bad))}{?is/are} all zero."),
                 "zero", call = call)
  }
  if (any(abs(mass - 1) > 1e-12)) {
    # normalising is the documented behaviour: say so once per session
    # (every time with `verbose`)
    cli::cli_inform(c("i" = "Normalising the columns of {.arg {arg}} to sum to one."),
                    class = "nmfkit_message_normalise",
                    .frequency = if (verbose) "always" else "once",
                    .frequency_id = "nmfkit_message_normalise")
  }
  image_dim <- attr(x, "image_dim")
  x <- unit_mass(x)
  attr(x, "image_dim") <- image_dim
  x
}

# Whether an unchecked control asks for verbose output (it is validated
# later, with the other arguments).
wants_verbose <- function(control) {
  is.list(control) && isTRUE(control[["verbose"]])
}

# Columns scaled to sum to one, through the column maxima first so that
# masses near .Machine$double.xmax (whose sums overflow) or subnormal ones
# normalise as well as unit-scale ones. Zero columns stay zero.
unit_mass <- function(x) {
  x <- as.matrix(x)
  mass <- colSums(x)
  if (all(is.finite(mass)) && all(mass == 0 | mass > 2^-900)) {
    mass[mass == 0] <- 1
    return(x / rep(mass, each = nrow(x)))  # the usual case, one division
  }
  mx <- apply(x, 2, max)
  mx[mx == 0] <- 1
  y <- x / rep(mx, each = nrow(x))
  mass <- colSums(y)
  mass[mass == 0] <- 1
  y / rep(mass, each = nrow(y))
}

check_rho <- function(rho, arg = rlang::caller_arg(rho),
                      call = rlang::caller_env()) {
  ok <- is.numeric(rho) && length(rho) %in% 1:2 && all(is.finite(rho)) &&
    all(rho > 0)
  if (!ok) {
    abort_nmfkit(c("{.arg {arg}} must be one or two finite numbers greater than 0, {.code c(weights = , dictionary = )}.",
                   "x" = "It is {.code {deparse(rho)}}."),
                 "rho", call = call)
  }
  if (length(rho) == 1L && !is.null(names(rho))) {
    abort_nmfkit(c("{.arg {arg}} must be one unnamed number (for both penalties) or {.code c(weights = , dictionary = )}.",
                   "x" = "It is {.code {deparse(rho)}}, which names one penalty only."),
                 "rho", call = call)
  }
  if (length(rho) == 1L) return(c(weights = rho, dictionary = rho))
  if (is.null(names(rho))) names(rho) <- c("weights", "dictionary")
  if (!setequal(names(rho), c("weights", "dictionary"))) {
    abort_nmfkit(c("{.arg {arg}} must be named {.code weights} and {.code dictionary}.",
                   "x" = "Its names are {.val {names(rho)}}."),
                 "rho", call = call)
  }
  out <- as.double(rho[c("weights", "dictionary")])
  names(out) <- c("weights", "dictionary")
  out
}

# Random simplex-normalised starting factors, or the user's (normalised).
wasserstein_init <- function(x, rank, init, call = rlang::caller_env()) {
  if (is.list(init)) {
    start <- init_factors(x, rank, init, call = call)
  } else if (identical(init, "random")) {
    start <- list(W = matrix(stats::runif(nrow(x) * rank), nrow(x), rank),
                  H = matrix(stats::runif(rank * ncol(x)), rank, ncol(x)))
  } else {
    abort_nmfkit(c("{.arg init} must be {.val random} or a list(W = , H = ).",
                   "x" = "It is {.code {deparse(init)}}."), "init", call = call)
  }
  for (nm in c("W", "H")) {
    s <- colSums(start[[nm]])
    if (any(s <= 0)) {
      abort_nmfkit("Every column of {.arg init${nm}} must have positive mass.",
                   "init", call = call)
    }
    start[[nm]] <- sweep(start[[nm]], 2, s, "/")
  }
  start
}

steps_frame <- function(s, step) {
  if (!length(s$iterations)) {
    return(data.frame(outer = integer(), step = character(),
                      iterations = integer(), evaluations = integer(),
                      grad_max = numeric(), status = character()))
  }
  data.frame(outer = seq_along(s$iterations), step = step,
             iterations = s$iterations, evaluations = s$evaluations,
             grad_max = s$grad_max, status = s$status)
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
  cli::cli_warn(
    c("{.code {method}} stopped after {res$iterations} iteration{?s} ({res$status}) with a marginal error of {signif(err, 3)}.",
      "i" = "Raise {.code max_iter} or {.code tol} in {.arg control}; a larger {.arg epsilon} converges faster."),
    class = c("nmfkit_warning_convergence", "nmfkit_warning"), call = call
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
