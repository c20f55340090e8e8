#' Distances from NMF
#'
#' A generic with one method per kind of input. On a fitted model it returns
#' the distances between the model's samples in coefficient space (the
#' columns of `H`), as a `"dist"` object ready for [stats::hclust()] or
#' [stats::cmdscale()]. Variants add methods (for example distances between
#' whole data sets).
#'
#' @param x A fitted model, or (for other methods) data.
#' @param metric `"euclidean"`, `"manhattan"` or `"cosine"` (one minus the
#'   cosine similarity of the coefficient vectors).
#' @param normalize Scale each component (row of `H`) by its maximum first, so
#'   that components weigh equally.
#' @param ... Passed to methods; the methods here read nothing from it, so an
#'   argument given here is an error (a misspelling).
#' @return An object of class `c("nmfkit_dist", "dist")` labelled with the
#'   sample names (the same shape for every method), with attributes
#'   `method` (the distance) and `call`; `plot()` draws it as a heatmap.
#' @examples
#' fit <- nmf(swimmer(), rank = 17)
#' d <- nmf_distance(fit)
#' hc <- hclust(d)
#' @export
nmf_distance <- function(x, ...) {
  check_required("x")
  UseMethod("nmf_distance")
}

#' @rdname nmf_distance
#' @export
nmf_distance.nmfkit <- function(x, metric = c("euclidean", "manhattan",
                                              "cosine"),
                                normalize = FALSE, ...) {
  check_dots_empty()
  metric <- check_choice(metric)
  check_flag(normalize)
  h <- x$H
  if (normalize) {
    s <- apply(h, 1, max)
    h <- h / ifelse(s > 0, s, 1)
  }
  labels <- colnames(h)
  if (is.null(labels)) labels <- as.character(seq_len(ncol(h)))
  if (metric == "cosine") {
    norms <- sqrt(colSums(h^2))
    u <- sweep(h, 2, ifelse(norms > 0, norms, 1), "/")
    d <- stats::as.dist(pmax(1 - crossprod(u), 0))
    attr(d, "Labels") <- labels
    return(new_nmfkit_dist(d, "cosine", match.call()))
  }
  d <- stats::dist(t(h), method = metric)
  attr(d, "Labels") <- labels
  new_nmfkit_dist(d, metric, match.call())
}

# Every nmf_distance() method returns this shape: a "dist" (for hclust(),
# cmdscale(), as.matrix()) of class c("nmfkit_dist", "dist"), with the
# distance's name in attribute "method" and the call in "call" (plus
# method-specific attributes such as "sd").
new_nmfkit_dist <- function(d, method, call, ...) {
  attr(d, "method") <- method
  attr(d, "call") <- call
  extra <- list(...)
  for (nm in names(extra)) attr(d, nm) <- extra[[nm]]
  class(d) <- c("nmfkit_dist", "dist")
  d
}

#' @export
nmf_distance.default <- function(x, ...) {
  abort_nmfkit(c("{.fn nmf_distance} has no method for {.arg x}, {.obj_type_friendly {x}}.",
                 "i" = "Pass a fitted nmfkit model."),
               "type")
}
