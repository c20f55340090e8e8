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
#'   features is returned); `Inf` for all.
#' @param score How to rank the features of each component: `"weight"` (the
#'   entries of `W`), `"specificity"` (weight times the share of the
#'   feature's weight that the component holds, see [feature_score()]) or
#'   `"kim"` (Kim and Park's 2007 selection, as the NMF package's
#'   `extractFeatures()`: only the features whose Kim score exceeds the
#'   median plus 3 median absolute deviations of all scores, each under the
#'   component of its largest weight, ordered by that weight; a component
#'   may get fewer than `n`, or none).
#' @param ... Passed to methods; the methods here read nothing from it, so an
#'   argument given here is an error (a misspelling).
#' @return A data frame with one row per (vector, rank): `component` (or
#'   `stratum`), `rank`, `feature` (the row name, or the row index as text)
#'   and `value` (the weight); with `score = "specificity"` or `"kim"` also
#'   `score`, the score of the feature (per component for
#'   `"specificity"`).
#' @examples
#' fit <- nmf(swimmer(), rank = 17)
#' head(top_features(fit, n = 3))
#' head(top_features(fit, n = 3, score = "specificity"))
#' top_features(fit, n = 2, score = "kim")[1:4, ]
#' @export
top_features <- function(object, ...) UseMethod("top_features")

#' @rdname top_features
#' @export
top_features.default <- function(object, ...) {
  abort_not_fit(object, "top_features")
}

#' @rdname top_features
#' @export
top_features.nmfkit <- function(object, n = 10,
                                score = c("weight", "specificity", "kim"),
                                ...) {
  check_dots_empty()
  score <- check_choice(score)
  top_feature_scores(object$W, check_top_n(n), score, "component")
}

# n features per vector: a count, or Inf for all.
check_top_n <- function(n, arg = rlang::caller_arg(n),
                        call = rlang::caller_env()) {
  if (identical(n, Inf)) return(Inf)
  check_count(n, min = 1, arg = arg, call = call)
}

# The top table of the columns of m under a score (see top_features()).
top_feature_scores <- function(m, n, score, group_name) {
  switch(score,
    weight = top_feature_table(m, n, group_name),
    specificity = top_feature_table(m, n, group_name,
                                    scores = specificity_score(m)),
    kim = kim_feature_table(m, n, group_name)
  )
}

# Kim and Park's selection as a top table: up to n selected features per
# component, by weight.
kim_feature_table <- function(m, n, group_name) {
  sel <- kim_select(m)
  features <- rownames(m)
  if (is.null(features)) features <- as.character(seq_len(nrow(m)))
  sel <- do.call(rbind, lapply(split(sel, factor(sel$q, seq_len(ncol(m)))),
                               function(d) d[seq_len(min(n, nrow(d))), ,
                                             drop = FALSE]))
  rank <- stats::ave(sel$q, sel$q, FUN = seq_along)
  out <- data.frame(group = factor(colnames(m)[sel$q], levels = colnames(m)),
                    rank = as.integer(rank), feature = features[sel$i],
                    value = sel$weight, score = sel$score)
  names(out)[1] <- group_name
  rownames(out) <- NULL
  out
}

# Long table of the n largest entries of each column of m (or of `scores`,
# a matrix the shape of m, reported as `score` beside m's `value`).
top_feature_table <- function(m, n, group_name, scores = NULL) {
  n <- min(n, nrow(m))
  features <- rownames(m)
  if (is.null(features)) features <- as.character(seq_len(nrow(m)))
  rows <- lapply(seq_len(ncol(m)), function(j) {
    by <- if (is.null(scores)) m[, j] else scores[, j]
    idx <- order(by, decreasing = TRUE)[seq_len(n)]
    out <- data.frame(group = colnames(m)[j], rank = seq_len(n),
                      feature = features[idx], value = unname(m[idx, j]))
    if (!is.null(scores)) out$score <- unname(scores[idx, j])
    out
  })
  out <- do.call(rbind, rows)
  out$group <- factor(out$group, levels = colnames(m))
  names(out)[1] <- group_name
  out
}
