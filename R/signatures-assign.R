#' Which component each entry came from
#'
#' For a fit `x ~ W H`, the probability that an entry `x[f, j]` (a mutation
#' of context `f` in sample `j`, a count of gene `f` in cell `j`) came
#' from component `k`:
#' `p[f, j, k] = W[f, k] H[k, j] / (W H)[f, j]`, the posterior of the
#' Poisson model in which `x[f, j]` is the sum of independent counts of
#' means `W[f, k] H[k, j]` (and the E-step of the KL multiplicative
#' updates). Over `k` the probabilities sum to 1 wherever `(W H)[f, j] >
#' 0`; where the fit is 0 they are `NA`. `expected` is `x[f, j] p[f, j,
#' k]`, the entry's counts attributed to component `k`.
#'
#' Only the entries where `x` is nonzero are computed when the data are
#' known (given as `x`, or kept by the fit), so sparse data stay sparse:
#' the tidy table has one row per nonzero entry and component, and
#' `format = "array"` gives, for a `dgCMatrix`, a list of `dgCMatrix` (one
#' per component) with the data's pattern; for dense data an
#' `m x n x k` array. Without data, every entry is computed.
#'
#' @param fit A fitted model with factors `W` and `H`: an nmfkit fit, a
#'   [refit_signatures()] result (signatures and exposures) or an
#'   [nmf_signatures()] result (its chosen rank).
#' @param x The data of the fit, when it does not keep them (or to use
#'   other data with the same dimensions).
#' @param format `"tidy"` (a data frame) or `"array"`.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return For `"tidy"` a data frame with `feature`, `sample`, `component`,
#'   `count` (`x[f, j]`, `NA` without data), `probability` and `expected`.
#'   For `"array"` an array or list of sparse matrices of probabilities.
#' @examples
#' set.seed(1)
#' x <- matrix(rpois(30 * 12, 4), 30, 12)
#' fit <- nmf(x, 3, loss = "kl")
#' a <- entry_assignments(fit)
#' head(a)
#' range(tapply(a$probability, paste(a$feature, a$sample), sum))
#' @export
entry_assignments <- function(fit, x = NULL, format = c("tidy", "array"), ...) {
  check_dots_empty()
  format <- check_choice(format)
  fac <- fit_factors(fit)
  W <- fac$W
  H <- fac$H
  m <- nrow(W)
  n <- ncol(H)
  if (is.null(x)) x <- fac$data
  if (!is.null(x)) {
    x <- check_data(x, allow_zero_matrix = TRUE)
    if (nrow(x) != m || ncol(x) != n) {
      abort_nmfkit(c("{.arg x} must be the data of the fit: {m} x {n}.",
                     "x" = "It is {nrow(x)} x {ncol(x)}."),
                   "dimension")
    }
  }
  sparse <- inherits(x, "dgCMatrix")
  # the entries computed: x's nonzeros, or all
  if (is.null(x)) {
    i <- rep(seq_len(m), n)
    j <- rep(seq_len(n), each = m)
    count <- rep(NA_real_, m * n)
  } else {
    s <- if (sparse) Matrix::drop0(x) else dense_as_dgc(x)
    i <- s@i + 1L
    j <- rep(seq_len(n), diff(s@p))
    count <- s@x
  }
  P <- W[i, , drop = FALSE] * t(H)[j, , drop = FALSE]
  tot <- rowSums(P)
  P <- P / ifelse(tot > 0, tot, NA_real_)
  k <- ncol(W)
  comp <- colnames(W) %||% paste0("nmf", seq_len(k))
  if (format == "array") {
    if (sparse) {
      out <- lapply(seq_len(k), function(c) {
        Matrix::sparseMatrix(i = i, j = j, x = P[, c], dims = c(m, n),
                             dimnames = dimnames(x))
      })
      names(out) <- comp
      return(out)
    }
    arr <- array(if (is.null(x)) NA_real_ else 0, c(m, n, k),
                 dimnames = list(fac$dimnames[[1]], fac$dimnames[[2]], comp))
    for (c in seq_len(k)) arr[cbind(i, j, c)] <- P[, c]
    return(arr)
  }
  rn <- fac$dimnames[[1]] %||% as.character(seq_len(m))
  cn <- fac$dimnames[[2]] %||% as.character(seq_len(n))
  data.frame(
    feature = rep(rn[i], k), sample = rep(cn[j], k),
    component = rep(comp, each = length(i)), count = rep(count, k),
    probability = as.vector(P), expected = rep(count, k) * as.vector(P),
    stringsAsFactors = FALSE
  )
}

# W, H, data and dimnames of a fit of any kind entry_assignments() takes.
fit_factors <- function(fit, arg = rlang::caller_arg(fit),
                        call = rlang::caller_env()) {
  if (inherits(fit, "nmfkit_refit")) {
    return(list(W = fit$signatures, H = fit$exposures, data = fit$data,
                dimnames = list(rownames(fit$signatures),
                                colnames(fit$exposures))))
  }
  if (inherits(fit, "nmfkit_signatures")) {
    f <- fit$fits[[as.character(fit$rank)]]
    return(list(W = f$W, H = f$H, data = fit$data,
                dimnames = list(rownames(f$W), colnames(f$H))))
  }
  if (inherits(fit, "nmfkit") && is.matrix(fit$W) && is.matrix(fit$H)) {
    data <- fit$data
    if (is_streamed(data) || is_delayed(data)) data <- NULL
    return(list(W = fit$W, H = fit$H, data = data,
                dimnames = list(rownames(fit$W), colnames(fit$H))))
  }
  abort_nmfkit(c("{.arg {arg}} must be a fit with factors {.field W} and {.field H}: an nmfkit fit, {.fn refit_signatures} or {.fn nmf_signatures}.",
                 "x" = "It is {.obj_type_friendly {fit}}{if (inherits(fit, 'nmfkit')) paste0(' (', class(fit)[1], ')')}."),
               "type", call = call)
}
