#' Match the components of two fits
#'
#' NMF components come in no particular order, so two fits of the same data
#' (other starts, other ranks, other methods) number them differently. This
#' pairs the basis vectors (columns of `W`) of two fits one to one so that
#' the total cosine similarity of the pairs is largest: the linear
#' assignment problem on the cosine similarities, solved exactly by the
#' Hungarian algorithm ([clue::solve_LSAP()]). Cosine similarity ignores
#' the scale of each component, which NMF leaves free. With ranks `k1` and
#' `k2`, `min(k1, k2)` pairs are made; the other components of the larger
#' fit stay unmatched.
#'
#' @param fit1,fit2 Fitted nmfkit models (or results of [nmf_consensus()] at
#'   one rank, or nonnegative basis matrices, features x components) with
#'   the same features (rows of `W`).
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return An object of class `nmfkit_match`: a list with
#'   * `permutation`: for each component of `fit1`, the index of its match
#'     in `fit2` (`NA` when unmatched), so `basis(fit2)[, permutation]` lines
#'     up with `basis(fit1)`;
#'   * `similarity`: the cosine similarity of each matched pair (`NA` when
#'     unmatched);
#'   * `cosine`: the `k1 x k2` matrix of all cosine similarities;
#'   * `table`: a data frame with `component1`, `component2`, `similarity`.
#' @seealso [nmf_consensus()], which orders and checks its runs with it.
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' fit1 <- nmf(x, rank = 17)
#' fit2 <- nmf(x, rank = 17)
#' m <- match_components(fit1, fit2)
#' m
#' # fit2's basis in fit1's order
#' w2 <- basis(fit2)[, m$permutation]
#' @export
match_components <- function(fit1, fit2, ...) {
  check_dots_empty()
  check_required(c("fit1", "fit2"))
  W1 <- as_basis(fit1)
  W2 <- as_basis(fit2)
  if (nrow(W1) != nrow(W2)) {
    abort_nmfkit(c("{.arg fit1} and {.arg fit2} must have the same features (rows of {.field W}).",
                   "x" = "{.arg fit1} has {nrow(W1)} and {.arg fit2} {nrow(W2)}."),
                 "dimension")
  }
  if (!is.null(rownames(W1)) && !is.null(rownames(W2)) &&
      !identical(rownames(W1), rownames(W2))) {
    abort_nmfkit(c("{.arg fit1} and {.arg fit2} must have the same features, in the same order.",
                   "x" = "Their feature names differ, first at row {which(rownames(W1) != rownames(W2))[1]}."),
                 "dimension")
  }
  cos <- cosine_similarity(W1, W2)
  perm <- assign_max(cos)
  k1 <- ncol(W1)
  sim <- cos[cbind(seq_len(k1), perm)]
  names(perm) <- names(sim) <- colnames(W1)
  structure(
    list(permutation = perm, similarity = sim, cosine = cos,
         table = data.frame(component1 = colnames(W1),
                            component2 = colnames(W2)[perm],
                            similarity = unname(sim),
                            stringsAsFactors = FALSE)),
    class = "nmfkit_match"
  )
}

#' @rdname match_components
#' @param x An `nmfkit_match` object.
#' @param digits Significant digits to print.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @export
print.nmfkit_match <- function(x, digits = 3L, ...) {
  check_dots_empty()
  digits <- check_count(digits, min = 1, max = 22)
  cat(sprintf("%d of %d components matched; mean cosine similarity %s\n",
              sum(!is.na(x$permutation)), length(x$permutation),
              format(mean(x$similarity, na.rm = TRUE), digits = digits)))
  tab <- x$table
  tab$similarity <- signif(tab$similarity, digits)
  print(tab, row.names = FALSE)
  invisible(x)
}

# Cosine similarities of the columns of a (k1) and b (k2); a zero column is
# similar to nothing (0).
cosine_similarity <- function(a, b) {
  out <- crossprod(unit_columns(a), unit_columns(b))
  dimnames(out) <- list(colnames(a), colnames(b))
  out
}

# The columns of `a` scaled to unit Euclidean norm (a zero column stays
# zero). Each is divided by its largest entry first: squares of entries near
# 1e300 overflow and those near 1e-160 underflow, which would make a
# column's norm Inf or 0 and its cosines 0 at any scale but the middle.
unit_columns <- function(a) {
  big <- if (nrow(a)) apply(abs(a), 2, max) else numeric(ncol(a))
  a <- sweep(a, 2, ifelse(big > 0, big, 1), "/")
  norms <- sqrt(colSums(a^2))
  sweep(a, 2, ifelse(norms > 0, norms, 1), "/")
}

# The assignment of rows to distinct columns (or, with more rows than
# columns, of columns to distinct rows) of largest total similarity: for each
# row its column, NA when unassigned.
assign_max <- function(s) {
  # clue needs nonnegative entries (cosines of nonnegative vectors are)
  s <- pmax(s, 0)
  if (nrow(s) <= ncol(s)) {
    return(as.integer(clue::solve_LSAP(s, maximum = TRUE)))
  }
  cols <- as.integer(clue::solve_LSAP(t(s), maximum = TRUE))
  out <- rep(NA_integer_, nrow(s))
  out[cols] <- seq_len(ncol(s))
  out
}
