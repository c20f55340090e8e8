#' Permutation test: do two data sets come from the same distribution?
#'
#' Tests the null hypothesis that the columns of `x1` and `x2` are
#' exchangeable (drawn from one distribution) with the joint-NMF distance
#' as the statistic. The pooled columns are split at random into sets of
#' the original sizes `B` times; each split is refitted exactly as the
#' observed pair (same normalisation, rank and solver) and the p-value is
#' `(1 + #{d_b >= d_observed}) / (B + 1)`, which is exact (valid in finite
#' samples) under exchangeability.
#'
#' The refits go through [future.apply::future_lapply()] with
#' `future.seed = TRUE`, so they run in parallel under [future::plan()] and
#' [set.seed()] makes the p-value reproducible under any plan.
#'
#' @inheritParams nmf_joint
#' @param B Number of random splits, at least 1.
#' @param ... Further arguments to [nmf_joint()]: `pbar`, `samples`,
#'   `normalize`, `init`, `control`.
#' @return An object of class `"htest"` with the observed distance as
#'   `statistic`, `B` as `parameter`, the `p.value`, and the distances of
#'   the random splits in `null_distribution`.
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' noisy <- x + matrix(runif(length(x), 0, 0.5), nrow(x))
#' idx <- sample(256)
#' # two random halves of one set: no evidence of a difference
#' nmf_joint_test(x[, idx[1:60]], x[, idx[61:120]], rank = 5, B = 19)
#' # a half against a noisy other half
#' nmf_joint_test(x[, idx[1:60]], noisy[, idx[61:120]], rank = 5, B = 19)
#' @export
nmf_joint_test <- function(x1, x2, rank, B = 199, ...) {
  dname <- paste(deparse1(substitute(x1)), "and", deparse1(substitute(x2)))
  if (missing(rank)) rank <- deprecated_rank_default("nmf_joint_test")
  B <- check_count(B, min = 1)
  check_dots_named(setdiff(names(formals(nmf_joint)),
                           c("x1", "x2", "rank")), "nmf_joint")
  observed <- nmf_joint(x1, x2, rank = rank, ...)
  settings <- pair_settings(rank = observed$rank, pbar = observed$pbar,
                            samples = observed$samples,
                            normalize = observed$normalize,
                            init = list(...)$init %||% "nndsvda",
                            control = observed$control)
  pooled <- pool_columns(check_data(x1), check_data(x2))
  n1 <- NCOL(x1)
  prog <- progressr::progressor(steps = B)
  seed_session()
  null <- future.apply::future_vapply(seq_len(B), split_distance,
                                      numeric(1), pooled = pooled, n1 = n1,
                                      settings = settings, prog = prog,
                                      future.seed = TRUE)
  d <- observed$distance
  structure(
    list(statistic = c(distance = d), parameter = c(B = B),
         p.value = (1 + sum(null >= d - 1e-12)) / (B + 1),
         method = sprintf("Joint-NMF permutation test (rank %d)",
                          observed$rank),
         data.name = dname,
         alternative = "the two sets differ in distribution",
         null_distribution = null),
    class = "htest"
  )
}

# The jNMF distance after one random split of the pooled columns.
split_distance <- function(b, pooled, n1, settings, prog = NULL) {
  perm <- sample.int(ncol(pooled))
  pair <- list(a = pooled[, perm[seq_len(n1)], drop = FALSE],
               b = pooled[, perm[-seq_len(n1)], drop = FALSE])
  pair_distance(pair, settings, prog)[1]
}
