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
#' @param kernel `"auto"` (separable on an image grid, dense otherwise),
#'   `"dense"` or `"separable"` (needs `image_dim` or 1-D `coords`).
#' @param control [nmf_control()]: `max_iter` (outer iterations, 10),
#'   `inner` (L-BFGS iterations per subproblem, 250) and `tol` (stop a
#'   subproblem when the largest absolute dual gradient entry is at most
#'   `tol`, default `1e-4`), `threads`, `verbose`.
#' @param init `"random"` (uniform draws from R's RNG, columns normalised, as
#'   in the reference implementation) or `list(W = , H = )`.
#' @param nrun Number of fits to run; the one with the lowest final
#'   objective is kept (as in [nmf()]).
#' @param keep_data Keep `x` (normalised) in the fit for `fitted()` and
#'   `residuals()`.
#' @param outer Deprecated: the number of outer iterations; give
#'   `control = nmf_control(max_iter = )` instead. When it is given,
#'   `control$max_iter` is read as the L-BFGS iterations per subproblem
#'   (`inner`), the meaning it has together with `outer`.
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
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
#' fit <- nmf_wasserstein(x, rank = 3, coords = t,
#'                        control = nmf_control(max_iter = 3))
#' fit
#' plot(fit)
#' @export
nmf_wasserstein <- function(x, rank, coords = NULL, image_dim = NULL,
                            cost = NULL, epsilon = 0.025,
                            rho = c(weights = 0.05, dictionary = 0.05),
                            kernel = c("auto", "dense", "separable"),
                            init = "random",
                            control = nmf_control(max_iter = 10, inner = 250),
                            nrun = 1L, keep_data = TRUE, outer, ...) {
  moved <- old_positions(c("x", "rank", "coords", "image_dim", "cost",
                           "epsilon", "rho", "kernel", "control", "init",
                           "nrun", "keep_data", "outer"), 8L,
                         "nmf_wasserstein")
  if (!is.null(moved)) return(eval(moved, parent.frame()))
  check_dots_empty()
  call <- match.call()
  x <- check_histograms(x, verbose = wants_verbose(control))
  rank <- check_rank(rank, min(dim(x)), why = rank_bound(x))
  epsilon <- check_number(epsilon, min = 0, strict = TRUE, what = "epsilon")
  rho <- check_rho(rho)
  kernel <- check_choice(kernel)
  control <- wasserstein_control(control, outer, !missing(control))
  nrun <- check_count(nrun, min = 1)
  check_flag(keep_data)
  if (is.null(image_dim) && is.null(coords) && is.null(cost)) {
    image_dim <- attr(x, "image_dim")
  }
  spec <- list(ground = ground_cost(nrow(x), cost, coords, image_dim, kernel),
               epsilon = epsilon, rho = rho)
  fit_variant("wasserstein", x, rank, init, control, nrun, keep_data, spec,
              call)
}

# The control of nmf_wasserstein(): max_iter outer iterations, inner L-BFGS
# iterations per subproblem. With the deprecated `outer`, control$max_iter
# keeps its old meaning (the L-BFGS iterations), so that calls written for
# `outer` fit the same.
wasserstein_control <- function(control, outer, given,
                                call = rlang::caller_env()) {
  if (missing(outer)) {
    return(check_control(control, fn = "nmf_wasserstein", call = call))
  }
  deprecate_nmfkit("{.arg outer}", "{.code control = nmf_control(max_iter = )} (and {.code inner} for the L-BFGS iterations)",
                   "nmf_wasserstein", call = call)
  outer <- check_count(outer, min = 1, call = call)
  if (given) {
    if (is.list(control) && !inherits(control, "nmfkit_control") &&
        is.null(control$max_iter)) {
      control$max_iter <- 250L
    }
    control <- check_control(control, fn = "nmf_wasserstein", call = call)
    if (is.null(control$inner) || identical(control$inner, 250L)) {
      control$inner <- control$max_iter
    }
  } else {
    control <- check_control(control, fn = "nmf_wasserstein", call = call)
  }
  control$max_iter <- outer
  control
}

# What the core reads: max_iter is the L-BFGS cap of each subproblem.
wasserstein_engine <- function(control) {
  if (!is.null(control$inner)) control$max_iter <- control$inner
  control
}

declare_variant(
  "wasserstein", fn = "nmf_wasserstein", label = "Wasserstein NMF",
  loss_name = "W-NMF objective",
  settings = list(inner = setting(250L, setting_inner$check)),
  defaults = list(max_iter = 10),
  # histograms are normalised: nothing to rescale
  scale = NULL,
  start = function(x, rank, init, spec, control, full) {
    wasserstein_init(x, rank, init, call = spec$call)
  },
  run = function(x, start, spec, control) {
    r_nmf_wasserstein(x, start$W, start$H, spec$ground$spec, spec$epsilon,
                      spec$rho[["weights"]], spec$rho[["dictionary"]],
                      control$max_iter, wasserstein_engine(control),
                      progress_callback(control))
  },
  model = function(fit, spec) {
    steps <- rbind(
      steps_frame(fit$dict_steps, "dictionary"),
      steps_frame(fit$weight_steps, "weights")
    )
    steps <- steps[order(steps$outer, steps$step), , drop = FALSE]
    rownames(steps) <- NULL
    list(epsilon = spec$epsilon, rho = spec$rho, ground = spec$ground,
         coords = spec$ground$coords, image_dim = spec$ground$image_dim,
         steps = steps)
  }
)

# Helpers ---------------------------------------------------------------------

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
