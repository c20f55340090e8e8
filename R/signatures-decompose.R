#' Decompose de novo signatures into a reference set
#'
#' Relates extracted signatures to known ones (COSMIC): for each de novo
#' signature, the reference signature of largest cosine similarity, and a
#' sparse nonnegative combination of reference signatures that
#' reconstructs it. The combination is the least squares fit of the
#' signature on the reference (nonnegative), thinned by the backward
#' elimination of [refit_signatures()] with `select = "cosine"`:
#' the reference signature of smallest weight is removed while the cosine
#' similarity of the combination to the signature falls by at most
#' `max_delta`. The weights are scaled to sum to 1; `cosine` is the
#' combination's cosine similarity to the signature.
#'
#' @param signatures De novo signatures: a matrix, contexts x signatures
#'   (columns summing to 1), an [nmf_signatures()] result (its chosen
#'   rank) or an nmfkit fit (its basis, each column scaled to sum 1).
#' @param reference The known signatures, contexts x signatures, columns
#'   summing to 1 (e.g. [cosmic_signatures()]). Contexts are matched by
#'   name.
#' @param max_delta The largest drop of cosine similarity one removal may
#'   cause, in `[0, 1)`.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return An object of class `nmfkit_decomposition`: a list with `table`
#'   (one row per de novo signature: `signature`, `best_match`,
#'   `best_cosine`, `decomposition` (as text, weights in parentheses),
#'   `cosine`, `n_components`), `weights` (reference x de novo, columns
#'   summing to 1), `signatures`, `reference`. `print()` shows the table;
#'   `plot()` draws each signature's weights as a stacked bar, labelled
#'   with the reference names and the cosine.
#' @examples
#' set.seed(1)
#' ref <- simulate_signatures(6)
#' mix <- cbind(a = 0.7 * ref[, 1] + 0.3 * ref[, 4], b = ref[, 2])
#' d <- decompose_signatures(mix, ref)
#' d
#' plot(d)
#' @export
decompose_signatures <- function(signatures, reference, max_delta = 0.01, ...) {
  check_dots_empty()
  call <- match.call()
  S <- as_signature_matrix(signatures)
  R <- check_signatures(reference)
  R <- align_contexts(S, R, x_arg = "signatures", w_arg = "reference")
  max_delta <- check_number(max_delta, min = 0, max = 1)
  spec <- list(loss = "frobenius", select = "cosine", max_delta = max_delta)
  Wt <- refit_all(S, R, spec)
  Wt <- sweep(Wt, 2, pmax(colSums(Wt), .Machine$double.xmin), "/")
  cos <- cosine_similarity(S, R)
  best <- max.col(cos, ties.method = "first")
  text <- vapply(seq_len(ncol(S)), function(j) {
    w <- Wt[, j]
    on <- order(-w)[seq_len(sum(w > 0))]
    paste(sprintf("%s (%.2f)", rownames(Wt)[on], w[on]), collapse = " + ")
  }, character(1))
  table <- data.frame(
    signature = colnames(S),
    best_match = colnames(R)[best],
    best_cosine = cos[cbind(seq_len(ncol(S)), best)],
    decomposition = text,
    cosine = column_cosine(S, R %*% Wt),
    n_components = colSums(Wt > 0),
    row.names = NULL, stringsAsFactors = FALSE
  )
  structure(list(table = table, weights = Wt, signatures = S, reference = R,
                 max_delta = max_delta, call = call),
            class = "nmfkit_decomposition")
}

# De novo signatures as a matrix with columns summing to 1: a matrix, the
# chosen rank of nmf_signatures(), or the basis of an nmfkit fit.
as_signature_matrix <- function(signatures,
                                arg = rlang::caller_arg(signatures),
                                call = rlang::caller_env()) {
  if (inherits(signatures, "nmfkit_signatures")) {
    return(signatures$fits[[as.character(signatures$rank)]]$W)
  }
  if (inherits(signatures, "nmfkit")) {
    W <- signatures$W
    if (any(colSums(W) == 0)) {
      abort_nmfkit(c("The basis of {.arg {arg}} has all-zero components, which are no signatures.",
                     "x" = "Component{?s} {.val {colnames(W)[colSums(W) == 0]}} {?is/are} zero."),
                   "signatures", call = call)
    }
    return(sweep(W, 2, colSums(W), "/"))
  }
  check_signatures(signatures, arg = arg, call = call)
}

#' @rdname decompose_signatures
#' @param x An `nmfkit_decomposition` object.
#' @export
print.nmfkit_decomposition <- function(x, ...) {
  check_dots_empty()
  cat(sprintf("Decomposition of %d signature%s into %d reference signatures (max_delta %s)\n",
              ncol(x$signatures), if (ncol(x$signatures) == 1L) "" else "s",
              ncol(x$reference), format(x$max_delta)))
  tab <- x$table
  tab$best_cosine <- round(tab$best_cosine, 3)
  tab$cosine <- round(tab$cosine, 3)
  print(tab[c("signature", "best_match", "best_cosine", "decomposition",
              "cosine")], row.names = FALSE, right = FALSE)
  invisible(x)
}

#' @rdname decompose_signatures
#' @export
plot.nmfkit_decomposition <- function(x, ...) {
  check_dots_empty()
  Wt <- x$weights
  used <- rownames(Wt)[rowSums(Wt) > 0]
  cols <- grDevices::hcl.colors(max(length(used), 2L), "Set 2")[seq_along(used)]
  w <- Wt[used, , drop = FALSE]
  old <- graphics::par(mar = c(4, 8, 3, 2))
  on.exit(graphics::par(old))
  mids <- graphics::barplot(w, horiz = TRUE, col = cols, border = "white",
                            las = 1, xlim = c(0, 1.25),
                            xlab = "weight in the decomposition",
                            main = "De novo signatures in the reference")
  for (j in seq_len(ncol(w))) {
    on <- which(w[, j] > 0)
    at <- cumsum(w[, j]) - w[, j] / 2
    graphics::text(at[on], mids[j], used[on], cex = 0.7)
    graphics::text(1.02, mids[j], sprintf("cos %.3f", x$table$cosine[j]),
                   adj = 0, cex = 0.75)
  }
  invisible(x)
}
