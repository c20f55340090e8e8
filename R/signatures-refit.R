#' Refit known signatures to catalogues: exposures, sparse selection, intervals
#'
#' Finds how many mutations (or reads) of each sample each known signature
#' explains: the columns of `x` (samples) are fitted as nonnegative
#' combinations `W h` of the signatures `W` (columns summing to 1), so each
#' exposure `h[k, j]` is in counts and `sum(h[, j])` is about the sample's
#' total.
#'
#' **Loss.** `loss = "kl"` maximises the Poisson likelihood of the counts
#' (`argmin_{h >= 0} KL(x_j | W h)`, the KL coordinate descent of
#' [predict()] under `loss = "kl"`); `loss = "frobenius"` is nonnegative
#' least squares (`argmin ||x_j - W h||`), which is what
#' MutationalPatterns' `fit_to_signatures()` computes (by `lsqnonneg`).
#'
#' **Selection.** With many signatures a sample is fitted with some of
#' every kind; `select` removes those that do not improve the fit:
#' * `"cosine"`, backward elimination as MutationalPatterns'
#'   `fit_to_signatures_strict(method = "backwards")`: signatures with zero
#'   exposure are dropped; then repeatedly the signature with the smallest
#'   exposure is removed and the sample refitted, and the removal is kept
#'   while the cosine similarity of the reconstruction `W h` to the sample
#'   falls by at most `max_delta` (0.004 there); the first removal that
#'   lowers it more is undone and selection stops. One signature always
#'   stays.
#' * `"lrt"` (counts, `loss = "kl"`), backward elimination by likelihood
#'   ratios: one pass over the signatures in order of increasing exposure,
#'   each removed (and the sample refitted) when the rise of the Poisson
#'   deviance its removal causes is below the critical value of a
#'   one-sided test at level `alpha`. An exposure of 0 lies on the
#'   boundary of its range, so the rise follows the mixture
#'   `0.5 chisq_0 + 0.5 chisq_1` under the null (Self and Liang 1987) and
#'   the critical value is `qchisq(1 - 2 alpha, 1)`.
#'
#' **Intervals.** With `B > 0`, each sample's counts are resampled `B`
#' times (a multinomial with the sample's total and proportions, as
#' MutationalPatterns' `fit_to_signatures_bootstrapped()`), each replicate
#' is refitted with the same loss and selection, and the exposures get
#' percentile intervals at `level` and the share of replicates in which
#' each signature is present (exposure above 0). The ends of an interval
#' are the replicates' order statistics at `(B + 1) (1 - level) / 2` and
#' `(B + 1) (1 + level) / 2` (interpolated; Davison and Hinkley 1997,
#' section 2.4), which cover at `level` whatever `B`; R's default quantile
#' (type 7, used by MutationalPatterns) covers only
#' `level (B - 1) / (B + 1)`, 0.88 for a 90 % interval from 100
#' replicates. Below `B = 2 / (1 - level) - 1` (39 at 95 %) the ends are
#' the smallest and largest replicates and cover less than `level`.
#' Replicates run through [future.apply::future_lapply()] with
#' `future.seed = TRUE`: `set.seed()` gives the same intervals under every
#' [future::plan()]. Their coverage
#' on planted catalogues (`bench/signatures-results.md`): 0.94-0.95 at
#' 95 % and 0.86-0.90 at 90 % from 2,000 mutations per sample on; at 100
#' mutations 0.84-0.89 at 90 %, as absent signatures take some of the few
#' mutations.
#'
#' @param x A catalogue: a nonnegative matrix, numeric data frame or
#'   `dgCMatrix` of counts, contexts (features) x samples, or data in a
#'   container (see [nmfkit-containers]). Contexts are matched to the
#'   signatures' by row name.
#' @param signatures The known signatures, contexts x signatures, each
#'   column summing to 1 (e.g. [cosmic_signatures()], or the `W` of a fit
#'   scaled to column sums 1).
#' @param loss `"kl"` (Poisson) or `"frobenius"` (least squares).
#' @param select `"none"`, `"cosine"` or `"lrt"` (see Selection).
#' @param max_delta The largest drop of cosine similarity a removal may
#'   cause under `select = "cosine"`, in `[0, 1)`.
#' @param alpha The level of the likelihood-ratio test of
#'   `select = "lrt"`, in `(0, 0.5)`.
#' @param B Bootstrap replicates per sample (0: none).
#' @param level Confidence level of the intervals, in `(0, 1)`.
#' @param assay The assay (or Seurat layer) of a container `x`.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return An object of class `nmfkit_refit`: a list with `exposures`
#'   (signatures x samples), `signatures` (in the rows' order of `x`),
#'   `cosine` (per sample, of `W h` to the sample), `loss`, `select`,
#'   `max_delta`, `alpha`, `B`, `level`, `call`; with `B > 0` also
#'   `replicates` (signatures x samples x `B`), `lower`, `upper` and
#'   `present` (the share of replicates with a positive exposure). Methods:
#'   `print()`, `summary()`, `coef()` (the exposures), `fitted()`,
#'   `tidy()`, `plot()`, and [entry_assignments()].
#' @references Davison, A. C. and Hinkley, D. V. (1997). *Bootstrap
#'   Methods and their Application*. Cambridge University Press.
#'   Blokzijl, F., Janssen, R., van Boxtel, R. and Cuppen, E. (2018).
#'   MutationalPatterns: comprehensive genome-wide analysis of mutational
#'   processes. *Genome Medicine* 10, 33. Manders, F. et al.
#'   (2022). MutationalPatterns: the one stop shop for the analysis of
#'   mutational processes. *BMC Genomics* 23, 134. Self, S. G. and Liang,
#'   K.-Y. (1987). Asymptotic properties of maximum likelihood estimators
#'   and likelihood ratio tests under nonstandard conditions. *JASA* 82,
#'   605-610.
#' @examples
#' set.seed(1)
#' W <- simulate_signatures(4)
#' h <- matrix(c(300, 0, 200, 0, 100, 400, 0, 0), 4, 2)
#' x <- matrix(rpois(96 * 2, W %*% h), 96, 2,
#'             dimnames = list(rownames(W), c("a", "b")))
#' fit <- refit_signatures(x, W, select = "lrt", B = 50)
#' fit
#' head(tidy(fit))
#' @export
refit_signatures <- function(x, signatures, loss = c("kl", "frobenius"),
                             select = c("none", "cosine", "lrt"),
                             max_delta = 0.004, alpha = 0.01, B = 0L,
                             level = 0.9, assay = "counts", ...) {
  check_dots_empty()
  call <- match.call()
  x <- input_matrix(x, assay)
  x <- check_data(x, allow_zero_matrix = TRUE)
  W <- check_signatures(signatures)
  W <- align_contexts(x, W)
  loss <- check_choice(loss)
  select <- check_choice(select)
  max_delta <- check_number(max_delta, min = 0, max = 1)
  alpha <- check_number(alpha, min = 0, max = 0.5, strict = TRUE)
  B <- check_count(B, min = 0)
  level <- check_level(level)
  if (select == "lrt" && loss != "kl") {
    abort_nmfkit(c("{.code select = \"lrt\"} tests Poisson likelihoods: it needs {.code loss = \"kl\"}.",
                   "x" = "{.arg loss} is {.val {loss}}."),
                 "choice", value = loss)
  }
  if (select == "lrt") check_counts(x, why = "likelihood ratios are Poisson")
  if (B > 0) check_counts(x)
  if (is.null(colnames(x))) colnames(x) <- paste0("sample", seq_len(ncol(x)))
  spec <- list(loss = loss, select = select, max_delta = max_delta,
               crit = stats::qchisq(1 - 2 * alpha, 1))
  h <- refit_all(x, W, spec)
  out <- list(exposures = h, signatures = W,
              cosine = column_cosine(x, W %*% h), loss = loss,
              select = select, max_delta = max_delta, alpha = alpha, B = B,
              level = level, call = call, data = x)
  if (B > 0) out <- c(out, refit_bootstrap(x, W, spec, B, level))
  structure(out, class = "nmfkit_refit")
}

# Exposures of every column of x under spec: one solve for all columns,
# then the selection sample by sample.
refit_all <- function(x, W, spec) {
  h <- solve_exposures(x, W, spec$loss)
  if (spec$select == "none") return(h)
  for (j in seq_len(ncol(x))) {
    xj <- as.numeric(x[, j])
    h[, j] <- if (spec$select == "cosine") {
      select_cosine(xj, W, h[, j], spec)
    } else {
      select_lrt(xj, W, h[, j], spec)
    }
  }
  h
}

# One sample's exposures on the signatures `keep` (the others 0).
solve_subset <- function(xj, W, keep, loss) {
  h <- numeric(ncol(W))
  h[keep] <- solve_exposures(matrix(xj), W[, keep, drop = FALSE], loss)
  h
}

# Backward elimination on cosine similarity (see refit_signatures()).
select_cosine <- function(xj, W, h, spec) {
  act <- which(h > 0)
  if (length(act) <= 1L) return(h)
  h[-act] <- 0
  sim <- cosine1(xj, W %*% h)
  while (length(act) > 1L) {
    weakest <- act[which.min(h[act])]
    keep <- act[act != weakest]
    h_new <- solve_subset(xj, W, keep, spec$loss)
    sim_new <- cosine1(xj, W %*% h_new)
    if (sim - sim_new > spec$max_delta) break
    h <- h_new
    sim <- sim_new
    act <- keep[h[keep] > 0]
    if (!length(act)) act <- keep[1]
  }
  h
}

# Backward elimination by Poisson likelihood ratios (see refit_signatures()):
# one pass over the signatures in order of increasing exposure, each
# removed when the deviance rise is below the critical value.
select_lrt <- function(xj, W, h, spec) {
  act <- which(h > 0)
  if (length(act) <= 1L) return(h)
  h[-act] <- 0
  dev <- poisson_deviance(xj, W %*% h)
  for (s in act[order(h[act])]) {
    if (h[s] == 0) next
    keep <- which(h > 0 & seq_along(h) != s)
    if (!length(keep)) break
    h_new <- solve_subset(xj, W, keep, spec$loss)
    dev_new <- poisson_deviance(xj, W %*% h_new)
    if (dev_new - dev < spec$crit) {
      h <- h_new
      dev <- dev_new
    }
  }
  h
}

cosine1 <- function(a, b) {
  den <- sqrt(sum(a^2) * sum(b^2))
  if (den > 0) sum(a * b) / den else 0
}

# 2 sum(x log(x / mu) - x + mu), Inf where mu = 0 < x.
poisson_deviance <- function(x, mu) {
  mu <- as.numeric(mu)
  pos <- x > 0
  if (any(mu[pos] <= 0)) return(Inf)
  2 * (sum(x[pos] * log(x[pos] / mu[pos])) - sum(x) + sum(mu))
}

# B multinomial replicates of every sample, refitted; intervals at level.
refit_bootstrap <- function(x, W, spec, B, level) {
  prog <- progressr::progressor(steps = B)
  seed_session()
  reps <- future.apply::future_lapply(seq_len(B), function(b) {
    h <- refit_all(resample_counts(x, "multinomial"), W, spec)
    prog()
    h
  }, future.seed = TRUE)
  k <- ncol(W)
  n <- ncol(x)
  arr <- array(unlist(reps, use.names = FALSE), c(k, n, B),
               dimnames = list(colnames(W), colnames(x), NULL))
  c(list(replicates = arr), refit_intervals(arr, level))
}

# Percentile intervals from the order statistics at (B + 1) p (quantile
# type 6, interpolated between neighbours): with the truth's error and the
# B replicates' errors exchangeable, [q(a), q(1 - a)] then covers at level
# for any B (Davison and Hinkley 1997, section 2.4). Type 7 (R's default,
# and MutationalPatterns') puts the ends at 1 + (B - 1) p and covers
# level (B - 1) / (B + 1): 0.88 for a 90 % interval at B = 100, 0.81 at
# B = 20 (bench/signatures-results.md).
refit_intervals <- function(arr, level) {
  q <- replicate_quantiles(arr, c((1 - level) / 2, (1 + level) / 2),
                           type = 6L)
  list(lower = q[[1]], upper = q[[2]],
       present = apply(arr > 0, c(1, 2), mean))
}
