#' Simulated signatures and catalogues with known exposures
#'
#' Planted data for trying and checking the signature workflows.
#' `simulate_signatures()` draws `k` signatures over the contexts, each a
#' Dirichlet draw with parameter `concentration` for every context (small
#' values give peaked spectra, as real signatures are).
#' `simulate_catalogue()` draws `n` samples from given signatures in the
#' way of SigFitTest (Medo, Ng and Medová 2024): each sample has `active`
#' signatures chosen at random (without replacement, with probabilities
#' `prob`), their relative weights a Dirichlet draw with parameter 1 for
#' each, and `mutations` mutations spread over the contexts by a
#' multinomial with probabilities `W w`. The true exposures are the
#' weights times `mutations` (in counts, as [refit_signatures()] reports
#' them).
#'
#' @param k Number of signatures.
#' @param contexts The context names (rows); the SBS96 contexts by default.
#' @param concentration The Dirichlet parameter of each context, > 0.
#' @param signatures Signatures to draw from, contexts x signatures,
#'   columns summing to 1 (e.g. [cosmic_signatures()]).
#' @param n Number of samples.
#' @param mutations Mutations per sample: one number, or one per sample.
#' @param active Signatures active in each sample, from 1 to
#'   `ncol(signatures)`.
#' @param prob Probabilities of the signatures being chosen (by default
#'   equal), nonnegative with at least `active` positive.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return `simulate_signatures()`: a matrix, contexts x `k`, columns
#'   named `sig1`, ... and summing to 1. `simulate_catalogue()`: a list
#'   with `counts` (contexts x samples), `exposures` (signatures x
#'   samples, the truth in counts) and `signatures`.
#' @references Medo, M., Ng, C. K. Y. and Medová, M. (2024). A
#'   comprehensive comparison of tools for fitting mutational signatures.
#'   *Nature Communications* 15, 9467.
#' @examples
#' set.seed(1)
#' W <- simulate_signatures(5)
#' sim <- simulate_catalogue(W, n = 20, mutations = 2000, active = 2)
#' dim(sim$counts)
#' colSums(sim$exposures)[1:3]
#' @export
simulate_signatures <- function(k, contexts = sbs96_contexts(),
                                concentration = 0.2, ...) {
  check_dots_empty()
  k <- check_count(k, min = 1)
  if (!is.character(contexts) || length(contexts) < 2L || anyNA(contexts) ||
      anyDuplicated(contexts)) {
    abort_nmfkit(c("{.arg contexts} must be at least two distinct names.",
                   "x" = "It is {describe_value(contexts)}."),
                 "context", value = contexts)
  }
  concentration <- check_number(concentration, min = 0, strict = TRUE)
  m <- length(contexts)
  g <- matrix(stats::rgamma(m * k, concentration), m, k)
  # a draw can underflow to all zeros at tiny concentrations: one context
  zero <- colSums(g) == 0
  g[1, zero] <- 1
  W <- sweep(g, 2, colSums(g), "/")
  dimnames(W) <- list(contexts, paste0("sig", seq_len(k)))
  W
}

#' @rdname simulate_signatures
#' @export
simulate_catalogue <- function(signatures, n, mutations = 2000, active = 3L,
                               prob = NULL, ...) {
  check_dots_empty()
  W <- check_signatures(signatures)
  n <- check_count(n, min = 1)
  k <- ncol(W)
  active <- check_count(active, min = 1, max = k)
  if (!is.numeric(mutations) || !length(mutations) %in% c(1L, n) ||
      anyNA(mutations) || any(!is.finite(mutations)) || any(mutations < 0) ||
      any(mutations != round(mutations)) ||
      any(mutations > .Machine$integer.max)) {
    abort_nmfkit(c("{.arg mutations} must be one whole number or {n} (one per sample), nonnegative.",
                   "x" = "It is {describe_value(mutations)}."),
                 "count", value = mutations)
  }
  mutations <- rep_len(mutations, n)
  if (is.null(prob)) prob <- rep(1, k)
  if (!is.numeric(prob) || length(prob) != k || anyNA(prob) ||
      any(!is.finite(prob)) || any(prob < 0) || sum(prob > 0) < active) {
    abort_nmfkit(c("{.arg prob} must be {k} nonnegative numbers (one per signature), at least {active} positive.",
                   "x" = "It is {describe_value(prob)}."),
                 "value", value = prob)
  }
  E <- matrix(0, k, n,
              dimnames = list(colnames(W), paste0("sample", seq_len(n))))
  counts <- matrix(0, nrow(W), n, dimnames = list(rownames(W), colnames(E)))
  for (j in seq_len(n)) {
    s <- sample.int(k, active, prob = prob)
    w <- stats::rgamma(active, 1)
    w <- w / sum(w)
    E[s, j] <- w * mutations[j]
    p <- W[, s, drop = FALSE] %*% w
    counts[, j] <- stats::rmultinom(1L, mutations[j], p)
  }
  list(counts = counts, exposures = E, signatures = W)
}
