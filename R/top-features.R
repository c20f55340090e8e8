#' Top features of a fitted model
#'
#' Ranks the features (rows) of a model's vectors by weight, largest first:
#' for every component the largest entries of its basis vector (a column of
#' `W`), and for stratified fits, by default, the largest entries of each
#' stratum's shift (a column of `V`; with words as features, the words that
#' make a newsgroup different). Ranks go from the largest (rank 1) down; the
#' paper behind [nmf_stratified()] printed its top words in ascending order,
#' so its figure shows ranks 30, 29 and 28, not 1 to 3.
#'
#' @param object A fitted model.
#' @param n Number of features per vector, at least 1 (at most the number of
#'   features is returned).
#' @param ... Passed to methods; the methods here read nothing from it, so an
#'   argument given here is an error (a misspelling).
#' @return A data frame with one row per (vector, rank): `component` (or
#'   `stratum`), `rank`, `feature` (the row name, or the row index as text)
#'   and `value` (the weight).
#' @examples
#' fit <- nmf(swimmer(), rank = 17)
#' head(top_features(fit, n = 3))
#' @export
top_features <- function(object, ...) UseMethod("top_features")

#' @rdname top_features
#' @export
top_features.default <- function(object, ...) {
  abort_not_fit(object, "top_features")
}

#' @rdname top_features
#' @export
top_features.nmfkit <- function(object, n = 10, ...) {
  check_dots_empty()
  top_feature_table(object$W, check_count(n, min = 1), "component")
}

# Long table of the n largest entries of each column of m.
top_feature_table <- function(m, n, group_name) {
  n <- min(n, nrow(m))
  features <- rownames(m)
  if (is.null(features)) features <- as.character(seq_len(nrow(m)))
  rows <- lapply(seq_len(ncol(m)), function(j) {
    idx <- order(m[, j], decreasing = TRUE)[seq_len(n)]
    data.frame(group = colnames(m)[j], rank = seq_len(n),
               feature = features[idx], value = unname(m[idx, j]))
  })
  out <- do.call(rbind, rows)
  out$group <- factor(out$group, levels = colnames(m))
  names(out)[1] <- group_name
  out
}
