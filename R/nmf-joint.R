#' Joint-NMF similarity of two data sets
#'
#' Compares two data sets (point clouds, columns are points) by fitting one
#' NMF to both side by side, `[x1 x2] ~ W [S1 S2]`, and asking, component by
#' component, which set uses it more (Friedman et al., 2023). For component
#' `i` with `s_i` the largest coefficient in row `i` of `[S1 S2]`,
#' `p_i = (mean(S1[i, ]) - mean(S2[i, ])) / s_i`, which is the expected
#' difference between the fractions of `S1[i, ]` and `S2[i, ]` above a
#' threshold `T` drawn uniformly from `[0, s_i]` (Algorithm 1 of the paper
#' with the draws integrated out). The distance is `sum(abs(p))`, between 0
#' and `rank`.
#'
#' With `normalize = TRUE` each column of each set is scaled to unit
#' Euclidean norm first, and columns whose norm is below 5% of their set's
#' average norm are set to zero (the paper's reference code). The
#' factorisation is [nmf()] with HALS (scikit-learn's coordinate descent, as
#' the paper used): identical columns then get identical coefficients, so an
#' identical, permuted or rescaled copy of `x1` gives distance 0 (up to
#' rounding, below `1e-12`).
#'
#' The default start is the reference code's: NNDSVDa (scikit-learn's
#' `init = "nndsvda"`) on the pooled data, its near-zero entries filled with
#' the mean of the pooled data (zero rows included). With the same
#' coordinate descent and stopping rule, a fit then takes scikit-learn's
#' iterations and reaches its distances. (The fill is divided by the square
#' root of the mean norm of the nonzero columns, which is 1 for normalised
#' data, so that with `normalize = FALSE` a rescaled `c * x1`, `c * x2`
#' starts from `sqrt(c)` times the start and gives the same distance.)
#'
#' `pbar = "montecarlo"` runs Algorithm 1 as published, with `samples`
#' thresholds per component drawn from R's RNG; it converges to the exact
#' value, and its standard errors are kept in the fit (`pbar_se`).
#'
#' @param x1,x2 Nonnegative numeric matrices (or numeric data frames, or
#'   `dgCMatrix`) with the same rows (features); columns are points.
#' @param rank Number of components, from 1 to
#'   `min(nrow(x1), ncol(x1) + ncol(x2))`.
#' @param pbar `"exact"` (closed form) or `"montecarlo"` (Algorithm 1).
#' @param samples Number of Monte Carlo thresholds per component (`K` in the
#'   paper), at least 1.
#' @param normalize Scale columns to unit norm as described above.
#' @param init Starting point of the factorisation, as in [nmf()].
#' @param control Solver settings from [nmf_control()].
#' @param labels Names of the two sets, used for `set` and in printing.
#' @param nrun Number of fits to run; the one with the lowest final loss is
#'   kept (as in [nmf()]: the runs after the first start from `"random"`,
#'   all starts drawn first from R's RNG).
#' @param keep_data Keep the pooled (normalised) data in the model for
#'   [fitted()] and [residuals()]; with `FALSE` pass `cbind(x1, x2)` to them
#'   as `x` (normalised there as here).
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return An object of class `c("nmfkit_joint", "nmfkit")`: the fields of
#'   [nmf()] (`W`, `H` for the pooled, normalised data) plus `set` (a factor
#'   telling which columns of `H` came from which set), `p` (p-bar, named by
#'   component; positive means used more by `x1`), `pbar_se` (Monte Carlo
#'   standard errors, zero for the exact form), `distance` (`sum(abs(p))`),
#'   `pbar` and `normalize`.
#' @references Friedman, H., Maina-Kilaas, A., Schalkwyk, J., Ahmed, H. and
#'   Haddock, J. (2023). Joint nonnegative matrix factorization for
#'   identifying and visualizing dataset differences. CISS 2023,
#'   arXiv:2207.05112.
#' @seealso [nmf_distance()] for many data sets, [nmf_joint_test()] for a
#'   permutation test, [chamfer_distance()].
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' noisy <- x + matrix(runif(length(x)), nrow(x))
#' fit <- nmf_joint(x, noisy, rank = 10)
#' fit
#' plot(fit, type = "p")
#' plot(fit, type = "basis")
#' nmf_joint(x, x[, sample(ncol(x))], rank = 10)$distance
#' @export
nmf_joint <- function(x1, x2, rank, pbar = c("exact", "montecarlo"),
                      samples = 1000, normalize = TRUE,
                      labels = c("x1", "x2"), init = "nndsvda",
                      control = nmf_control(max_iter = 200), nrun = 1L,
                      keep_data = TRUE, ...) {
  moved <- old_positions(c("x1", "x2", "rank", "pbar", "samples",
                           "normalize", "init", "control", "labels", "nrun",
                           "keep_data"), 6L, "nmf_joint")
  if (!is.null(moved)) return(eval(moved, parent.frame()))
  check_dots_empty()
  call <- match.call()
  x1 <- check_data(x1)
  x2 <- check_data(x2)
  check_same_rows(x1, x2)
  if (missing(rank)) rank <- deprecated_rank_default("nmf_joint")
  rank <- check_rank(rank, min(nrow(x1), ncol(x1) + ncol(x2)),
                     why = "{.code min(nrow(x1), ncol(x1) + ncol(x2))}")
  pbar <- check_choice(pbar)
  samples <- check_count(samples, min = 1)
  check_flag(normalize)
  control <- check_control(control, fn = "nmf_joint")
  labels <- check_labels(labels)
  nrun <- check_count(nrun, min = 1)
  check_flag(keep_data)
  spec <- list(n1 = ncol(x1), pbar = pbar, samples = samples,
               normalize = normalize, labels = labels,
               image_dim = attr(x1, "image_dim") %||% attr(x2, "image_dim"))
  fit_variant("joint", joint_data(x1, x2, normalize), rank, init, control,
              nrun, keep_data, spec, call)
}

# The pooled data of a joint fit: [x1 x2], each set's columns normalised
# first when `normalize`.
joint_data <- function(x1, x2, normalize) {
  if (normalize) {
    x1 <- normalize_columns(x1)
    x2 <- normalize_columns(x2)
  }
  pool_columns(x1, x2)
}

# The joint fit of validated sets without a model (dataset distances,
# permutation tests): the pipeline's fit with p and se.
jnmf_fit <- function(x1, x2, rank, pbar, samples, normalize, init, control) {
  spec <- list(n1 = ncol(x1), pbar = pbar, samples = samples)
  run_pipeline(variant_of("joint"), joint_data(x1, x2, normalize), rank,
               init, control, spec = spec)
}

declare_variant(
  "joint", fn = "nmf_joint", label = "Joint NMF",
  settings = list(inner = setting_inner),
  # terms absent from both sets are dropped and come back as zeros: a pair
  # of 100-document samples of a 42,000-term corpus uses a few thousand
  drop_lines = TRUE,
  start = function(x, rank, init, spec, control, full) {
    init_factors(x, rank, init, control$threads, call = spec$call,
                 column_v = TRUE, fill_value = joint_fill(full))
  },
  # plain HALS, as the paper (scikit-learn's coordinate descent)
  run = function(x, start, spec, control) {
    run_nmf(x, start, "hals", control)
  },
  # p-bar is scale-free: computed on the unscaled coefficients
  post = function(fit, x, spec, control) {
    rank <- ncol(fit$W)
    u <- if (spec$pbar == "montecarlo") {
      matrix(stats::runif(spec$samples * rank), spec$samples, rank)
    }
    pb <- r_pbar(fit$H, spec$n1, spec$pbar, u)
    fit$p <- as.double(pb$p)
    fit$se <- as.double(pb$se)
    fit
  },
  model = function(fit, spec) {
    comp <- paste0("nmf", seq_along(fit$p))
    n <- ncol(fit$H)
    list(set = factor(rep(spec$labels, c(spec$n1, n - spec$n1)),
                      levels = spec$labels),
         p = stats::setNames(fit$p, comp),
         pbar_se = stats::setNames(fit$se, comp),
         distance = sum(abs(fit$p)), pbar = spec$pbar,
         samples = spec$samples, normalize = spec$normalize,
         image_dim = spec$image_dim)
  }
)

# What NNDSVDa fills the pooled data's start with: the reference code's
# (scikit-learn's) mean of all entries, zero rows included, divided by the
# square root of the mean norm of the nonzero columns. On unit-norm columns
# (normalize = TRUE) that divisor is 1 and the start is the reference
# code's, which reaches its distances (N: 2.29, not 2.19 with nmf()'s
# sqrt(mean / rank)); the division makes c * y start from sqrt(c) times the
# start, as the factors scale, when normalize = FALSE.
joint_fill <- function(y) {
  sparse <- inherits(y, "dgCMatrix")
  total <- if (sparse) sum(y@x) else sum(y)
  nu <- sqrt(if (sparse) Matrix::colSums(y^2) else colSums(y^2))
  nu <- nu[nu > 0]
  if (!length(nu)) return(NULL)
  total / (as.double(nrow(y)) * ncol(y)) / sqrt(mean(nu))
}

# Unit-norm columns; columns below 5% of the average norm become zero.
# Works on dense matrices and dgCMatrix (staying sparse). Each column is
# divided by its maximum before its norm, which changes nothing in exact
# arithmetic but makes lambda * x normalise to bitwise the same columns as x
# whenever lambda * x is exact (so scaling gives distance exactly 0).
normalize_columns <- function(x) {
  if (inherits(x, "dgCMatrix")) {
    col <- rep.int(seq_len(ncol(x)), diff(x@p))
    # column maxima: the last entry of each column after ordering by
    # (column, value); empty columns keep 0
    mx <- numeric(ncol(x))
    if (length(col)) {
      o <- order(col, x@x)
      last <- x@p[-1L][diff(x@p) > 0L]
      mx[col[o[last]]] <- x@x[o[last]]
    }
    mx[mx == 0] <- 1
    v <- x@x / mx[col]
    sq <- x
    sq@x <- v^2
    nu <- sqrt(Matrix::colSums(sq))
    norm <- nu * mx
    keep <- norm >= 0.05 * mean(norm) & norm > 0
    out <- v / nu[col]
    out[!keep[col]] <- 0
    x@x <- out
    return(Matrix::drop0(x))
  }
  if (!is.double(x)) storage.mode(x) <- "double"
  out <- r_normalize_columns(x)
  dimnames(out) <- dimnames(x)
  out
}

# [x1 x2]: sparse when both are sparse, or when the rows the fit keeps (those
# not all zero) are mostly zeros (then the solver's products cost less
# through the nonzeros; the answer changes only by rounding). The 11 x 20
# Swimmer pair is 12% nonzero but 42% in its 62 used rows, where the dense
# products are as fast and the sparse copy costs a millisecond per fit.
pool_columns <- function(x1, x2, sparse_below = 0.25) {
  s1 <- inherits(x1, "dgCMatrix")
  s2 <- inherits(x2, "dgCMatrix")
  if (s1 && s2) return(cbind(x1, x2))
  y <- cbind(as.matrix(x1), as.matrix(x2))
  if (is.null(rownames(y))) rownames(y) <- rownames(x2)
  used <- sum(rowSums(y) > 0)
  if (sum(y != 0) < sparse_below * max(used, 1) * ncol(y)) {
    y <- as_dgc(Matrix::Matrix(y, sparse = TRUE), "y", NULL)
  }
  y
}

check_same_rows <- function(x1, x2, arg1 = rlang::caller_arg(x1),
                            arg2 = rlang::caller_arg(x2),
                            call = rlang::caller_env()) {
  if (nrow(x1) != nrow(x2)) {
    abort_nmfkit(c("{.arg {arg1}} and {.arg {arg2}} must have the same number of rows (features).",
                   "x" = "{.arg {arg1}} has {nrow(x1)} row{?s}; {.arg {arg2}} has {nrow(x2)}.",
                   "i" = "Columns are points; transpose with {.fn t} if your points are rows."),
                 "dimension", call = call)
  }
  invisible(x1)
}

check_labels <- function(labels, arg = rlang::caller_arg(labels),
                         call = rlang::caller_env()) {
  if (!is.character(labels) || length(labels) != 2L || anyNA(labels) ||
      any(labels == "") || labels[1] == labels[2]) {
    abort_nmfkit(c("{.arg {arg}} must be two different non-empty strings.",
                   "x" = "It is {.code {deparse(labels)}}."),
                 "labels", call = call)
  }
  labels
}
