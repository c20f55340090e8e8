#' Feature scores of a basis
#'
#' Scores the features (rows) of a basis `W` by how specific they are to
#' the components.
#'
#' `method = "kim"` is the feature score of Kim and Park (2007), as the NMF
#' package's `featureScore()` computes it: with `p(i, q) = W[i, q] / sum_q
#' W[i, q]`, the share of feature `i`'s weight in component `q`,
#' `score(i) = 1 + sum_q p(i, q) log2 p(i, q) / log2(k)`, one minus the
#' entropy of the feature's distribution over the `k` components in units of
#' its largest value: 1 for a feature in one component only, 0 for a feature
#' spread evenly over all (`0 log 0 = 0`; a rank-1 basis scores 1
#' everywhere; a feature whose row of `W` is zero has no distribution and
#' scores `NA`). The score depends on the scale of each column of `W`, which
#' NMF leaves free, so compare it within one fit. Kim and Park select the
#' features that score above `median + 3 * mad` of the scores, each for the
#' component of its largest weight: [top_features()] with `score = "kim"`.
#'
#' `method = "specificity"` scores every (feature, component) pair: with the
#' columns of `W` scaled to sum to 1 (so that components are comparable),
#' `w(i, q)` times `p(i, q)`, the feature's weight in the component times the
#' share of its weight that the component holds. A feature found in one
#' component only keeps its weight; a feature spread evenly over `k`
#' components keeps `1/k` of it. [top_features()] with
#' `score = "specificity"` ranks the features of each component by it.
#'
#' @param object A fitted nmfkit model, the result of [nmf_consensus()] at
#'   one rank, or a nonnegative basis matrix (features x components).
#' @param method `"kim"` or `"specificity"`.
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return For `"kim"`, a numeric vector with one score per feature, named
#'   by the features; for `"specificity"`, a features x components matrix
#'   with the dimnames of `W`.
#' @references Kim, H. and Park, H. (2007). Sparse non-negative matrix
#'   factorizations via alternating non-negativity-constrained least squares
#'   for microarray data analysis. *Bioinformatics* 23(12), 1495-1502.
#' @seealso [top_features()], [match_components()].
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' fit <- nmf(x, rank = 17)
#' s <- feature_score(fit)
#' summary(s)
#' head(top_features(fit, n = 3, score = "kim"))
#' round(feature_score(matrix(c(1, 0, 1, 1), 2), "kim"), 3)
#' @export
feature_score <- function(object, method = c("kim", "specificity"), ...) {
  check_dots_empty()
  check_required("object")
  method <- check_choice(method)
  W <- as_basis(object)
  switch(method, kim = kim_score(W), specificity = specificity_score(W))
}

# 1 + sum_q p log2 p / log2 k per row of W (NA for a zero row, 1 at k = 1).
kim_score <- function(W) {
  W <- scale_rows_by_max(W)
  total <- rowSums(W)
  p <- W / total
  plogp <- ifelse(p > 0, p * log2(p), 0)
  k <- ncol(W)
  s <- if (k > 1L) 1 + rowSums(plogp) / log2(k) else rep(1, nrow(W))
  s[total == 0] <- NA_real_
  names(s) <- rownames(W)
  s
}

# w(i, q) p(i, q) with the columns of W scaled to unit sum.
specificity_score <- function(W) {
  W <- t(scale_rows_by_max(t(W)))
  cs <- colSums(W)
  wn <- sweep(W, 2, ifelse(cs > 0, cs, 1), "/")
  total <- rowSums(wn)
  wn * (wn / ifelse(total > 0, total, 1))
}

# W with each row divided by its largest entry (zero rows stay zero): the
# scores are ratios within a row (a column), and sums of entries near
# .Machine$double.xmax overflow.
scale_rows_by_max <- function(W) {
  big <- if (ncol(W)) apply(W, 1, max) else numeric(nrow(W))
  W / ifelse(big > 0, big, 1)
}

# Kim and Park's selection: the features scoring above median + 3 mad, each
# for the component of its largest weight (the first on ties), ordered by
# that weight (as the NMF package's extractFeatures()). A data frame with
# feature index `i`, component `q`, weight and score.
kim_select <- function(W) {
  s <- kim_score(W)
  threshold <- stats::median(s, na.rm = TRUE) + 3 * stats::mad(s, na.rm = TRUE)
  sel <- which(!is.na(s) & s > threshold)
  q <- max.col(W[sel, , drop = FALSE], ties.method = "first")
  weight <- W[cbind(sel, q)]
  out <- data.frame(i = sel, q = q, weight = weight, score = unname(s[sel]))
  out[order(-out$weight, out$i), , drop = FALSE]
}

# The basis W of a fit (or of a one-rank consensus), or a user's
# nonnegative matrix: a numeric matrix with component names.
as_basis <- function(object, arg = rlang::caller_arg(object),
                     call = rlang::caller_env()) {
  if (inherits(object, "nmfkit_consensus")) {
    if (length(object$fits) != 1L) {
      abort_nmfkit(c("{.arg {arg}} holds consensus programs at {length(object$fits)} ranks; choose one.",
                     "i" = "Use {.code {arg}$fits[[\"{object$ranks[1]}\"]]} for rank {object$ranks[1]}."),
                   "type", call = call)
    }
    object <- object$fits[[1]]
  }
  if (inherits(object, "nmfkit")) return(object$W)
  if (is.data.frame(object)) object <- as.matrix(object)
  if (!is.matrix(object) || !is.numeric(object) || !length(object)) {
    abort_nmfkit(c("{.arg {arg}} must be a fitted nmfkit model or a nonnegative basis matrix (features x components).",
                   "x" = "It is {.obj_type_friendly {object}}."),
                 "type", call = call, value = object)
  }
  check_nonnegative_matrix(object, arg, call, "value")
  storage.mode(object) <- "double"
  if (is.null(colnames(object))) {
    colnames(object) <- paste0("nmf", seq_len(ncol(object)))
  }
  object
}
