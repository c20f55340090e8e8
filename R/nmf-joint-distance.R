#' Chamfer distance between two point clouds
#'
#' The baseline of the joint-NMF paper. With `variant = "paper"` (eq. (1) of
#' the paper) columns are points:
#' `mean_j min_l ||x1_j - x2_l||^2 + mean_l min_j ||x2_l - x1_j||^2`.
#' Nearest neighbours come from blocks of inner products, so no
#' `n1 x n2 x m` array (nor even the full `n1 x n2` distance matrix) is
#' formed, and the winning distances are recomputed directly (an identical
#' column gives exactly 0).
#'
#' `variant = "reference_code"` is what the paper's code computed for its
#' Table I: each row (pixel, feature) is treated as a pair of
#' one-dimensional point sets, and
#' `(1 / m) sum_rows [sum_j min_l (x1[r, j] - x2[r, l])^2 + sum_l min_j (...)^2]`,
#' computed by sorting each row and binary searching.
#'
#' @param x1,x2 Nonnegative numeric matrices (or numeric data frames, or
#'   `dgCMatrix`, densified here) with the same rows; columns are points.
#' @param variant `"paper"` or `"reference_code"`.
#' @param normalize Scale columns as [nmf_joint()] does first.
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return The distance, a number.
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' noise <- matrix(runif(length(x)), nrow(x))
#' chamfer_distance(x, x + noise, variant = "reference_code")
#' chamfer_distance(x, x[, 256:1])
#' @export
chamfer_distance <- function(x1, x2, variant = c("paper", "reference_code"),
                             normalize = TRUE, ...) {
  check_dots_empty()
  x1 <- check_data(x1)
  x2 <- check_data(x2)
  check_same_rows(x1, x2)
  variant <- check_choice(variant)
  check_flag(normalize)
  chamfer_fit(x1, x2, variant, normalize)
}

chamfer_fit <- function(x1, x2, variant, normalize,
                        threads = nmf_control()$threads) {
  if (normalize) {
    x1 <- normalize_columns(x1)
    x2 <- normalize_columns(x2)
  }
  r_chamfer(as.matrix(x1), as.matrix(x2), variant, as.integer(threads))
}

#' Distances between many data sets
#'
#' The jNMF distance ([nmf_joint()]) or the Chamfer distance
#' ([chamfer_distance()]) between every pair of a named list of data sets,
#' as a `"dist"` object ready for [stats::hclust()] or [stats::cmdscale()].
#'
#' Pairs run through [future.apply::future_lapply()], so [future::plan()]
#' decides where (sequentially, on local workers, on a cluster). The pairs
#' are cut into one chunk per worker, and each chunk carries the list of
#' data sets once (so every worker holds a copy of `x`). Random
#' draws use parallel-safe streams (`future.seed = TRUE`): with the same
#' [set.seed()] the result is the same under every plan. Progress is
#' reported through `progressr` (wrap the call in
#' [progressr::with_progress()] to see it).
#'
#' With `trials > 1` each pair is computed `trials` times and the distances
#' averaged; the per-pair standard deviation is kept as attribute `"sd"`.
#' Trials differ through the random parts of the pipeline: the randomized
#' SVD of the starting point, `init = "random"`, Monte Carlo p-bar, and above
#' all `resample`, which draws that many columns of each set with
#' replacement in every trial (the paper's 20 Newsgroups experiment draws
#' 100 documents per group).
#'
#' @param x A named list of at least two nonnegative matrices (dense,
#'   data frames or `dgCMatrix`) with the same number of rows.
#' @param rank Rank of each joint factorisation (not used by
#'   `method = "chamfer"`).
#' @param method `"jnmf"` or `"chamfer"`.
#' @param trials Number of repetitions to average, at least 1.
#' @param resample `NULL` (use every column) or the number of columns to
#'   draw with replacement from each set in every trial.
#' @param pbar,samples,init,control Passed to [nmf_joint()].
#' @param variant Passed to [chamfer_distance()].
#' @param normalize Normalise columns as [nmf_joint()] does.
#' @inheritParams nmf_distance
#' @return An object of class `c("nmfkit_dist", "dist")` labelled with the
#'   names of `x`, with attributes `sd` (a `"dist"` of per-pair standard
#'   deviations, zero when `trials = 1`), `method` and `trials`.
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' sets <- list(swimmer = x, half = x[, 1:128],
#'              noisy = x + matrix(runif(length(x)), nrow(x)),
#'              inverted = 1 - x)
#' d <- nmf_distance(sets, rank = 10)
#' d
#' plot(d)
#' nmf_distance(sets, method = "chamfer")
#' @importFrom Matrix drop0
#' @export
nmf_distance.list <- function(x, rank, method = c("jnmf", "chamfer"),
                              trials = 1, resample = NULL,
                              pbar = c("exact", "montecarlo"),
                              samples = 1000, variant = c("paper",
                                                          "reference_code"),
                              normalize = TRUE, init = "nndsvda",
                              control = nmf_control(), ...) {
  call <- match.call()
  check_dots_empty()
  if (missing(rank)) rank <- NULL
  # rank came after method: nmf_distance(sets, "chamfer") still works
  if (is.character(rank) && missing(method)) {
    deprecate_nmfkit("giving {.arg method} second", "{.code method = }",
                     "nmf_distance")
    method <- rank
    rank <- NULL
  }
  method <- check_choice(method)
  if (method == "jnmf" && is.null(rank)) {
    rank <- deprecated_rank_default("nmf_distance")
  }
  x <- check_data_list(x)
  trials <- check_count(trials, min = 1)
  if (!is.null(resample)) resample <- check_count(resample, min = 1)
  pbar <- check_choice(pbar)
  samples <- check_count(samples, min = 1)
  variant <- check_choice(variant)
  check_flag(normalize)
  control <- check_control(control, fn = "nmf_distance")
  # rank and init are checked whatever the method (Chamfer reads neither)
  if (!is.null(rank)) {
    n <- vapply(x, ncol, integer(1))
    pooled <- if (is.null(resample)) min(outer(n, n, "+")[upper.tri(diag(n))])
              else 2L * resample
    rank <- check_rank(rank, min(nrow(x[[1]]), pooled),
                       why = "the rows, or the columns of the smallest pair")
  }
  check_init_name(init)

  idx <- which(upper.tri(diag(length(x))), arr.ind = TRUE)
  idx <- idx[order(idx[, 1], idx[, 2]), , drop = FALSE]
  settings <- pair_settings(method, trials, resample, rank, pbar, samples,
                            variant, normalize, init, control)
  prog <- progressr::progressor(steps = nrow(idx))
  # one chunk of pairs per worker, the sets travelling once with each chunk:
  # a future per pair costs more than its fit on 20 Newsgroups (190 pairs of
  # 0.1 s fits), and a copy of the sets per pair is 19 times the data.
  # future.seed gives every pair its own stream, whatever the chunking.
  seed_session()
  res <- future.apply::future_lapply(seq_len(nrow(idx)), indexed_pair_distance,
                                     sets = x, idx = idx,
                                     settings = settings, prog = prog,
                                     future.seed = TRUE,
                                     future.scheduling = 1)
  res <- do.call(rbind, res)
  make_dist <- function(v) {
    m <- matrix(0, length(x), length(x), dimnames = list(names(x), names(x)))
    m[idx] <- v
    m[idx[, 2:1, drop = FALSE]] <- v
    stats::as.dist(m)
  }
  new_nmfkit_dist(make_dist(res[, 1]), method, call,
                  sd = make_dist(res[, 2]), trials = trials)
}

# What pair_distance() needs to know: one list, the same for
# nmf_distance() on a list and nmf_joint_test().
pair_settings <- function(method = "jnmf", trials = 1L, resample = NULL,
                          rank, pbar, samples, variant = "paper", normalize,
                          init, control) {
  list(method = method, trials = trials, resample = resample, rank = rank,
       pbar = pbar, samples = samples, variant = variant,
       normalize = normalize, init = init, control = control)
}

# pair_distance() for pair r of the rows of idx (indices into sets).
indexed_pair_distance <- function(r, sets, idx, settings, prog = NULL) {
  pair_distance(list(a = sets[[idx[r, 1]]], b = sets[[idx[r, 2]]]), settings,
                prog)
}

# Mean and standard deviation over trials of the distance between one pair
# of data sets. A top-level function, so that futures do not carry the
# caller's frame (which holds every data set) to the workers.
pair_distance <- function(pair, settings, prog = NULL) {
  s <- settings
  d <- vapply(seq_len(s$trials), function(t) {
    a <- pair$a
    b <- pair$b
    if (!is.null(s$resample)) {
      a <- a[, sample.int(ncol(a), s$resample, replace = TRUE), drop = FALSE]
      b <- b[, sample.int(ncol(b), s$resample, replace = TRUE), drop = FALSE]
    }
    if (s$method == "chamfer") {
      return(chamfer_fit(a, b, s$variant, s$normalize, s$control$threads))
    }
    fit <- jnmf_fit(a, b, s$rank, s$pbar, s$samples, s$normalize, s$init,
                    s$control)
    sum(abs(fit$p))
  }, numeric(1))
  if (is.function(prog)) prog()
  c(mean(d), if (s$trials > 1L) stats::sd(d) else 0)
}

check_init_name <- function(init, arg = rlang::caller_arg(init),
                            call = rlang::caller_env()) {
  check_choice(init, init_choices, arg = arg, call = call, what = "init")
}

# A named list of at least two data sets with the same rows.
check_data_list <- function(x, arg = rlang::caller_arg(x),
                            call = rlang::caller_env()) {
  if (!is.list(x) || is.data.frame(x) || length(x) < 2L) {
    abort_nmfkit(c("{.arg {arg}} must be a list of at least two data sets.",
                   "x" = "It is {.obj_type_friendly {x}}{if (is.list(x)) paste0(' of length ', length(x))}."),
                 "list", call = call)
  }
  nm <- names(x)
  if (is.null(nm) || anyNA(nm) || any(nm == "") || anyDuplicated(nm)) {
    bad <- if (is.null(nm)) "It has no names." else
      "Its names are {.val {nm}}; some are empty or repeated."
    abort_nmfkit(c("Every data set in {.arg {arg}} must have a distinct name.",
                   "x" = bad), "names", call = call)
  }
  for (i in seq_along(x)) {
    x[[i]] <- check_data(x[[i]], arg = sprintf("%s[[\"%s\"]]", arg, nm[i]),
                         call = call)
  }
  rows <- vapply(x, nrow, integer(1))
  if (any(rows != rows[1])) {
    abort_nmfkit(c("Every data set in {.arg {arg}} must have the same number of rows.",
                   "x" = "{.val {nm[rows != rows[1]][1]}} has {rows[rows != rows[1]][1]} rows; {.val {nm[1]}} has {rows[1]}."),
                 "dimension", call = call)
  }
  x
}

#' Heatmap of distances between data sets
#'
#' Draws the distance matrix with rows and columns reordered so that
#' similar sets sit together, as in the paper's Figures 7 and 8:
#' by hierarchical clustering ([stats::hclust()], default) or by
#' [stats::kmeans()] on the rows of the matrix (`centers` clusters, the
#' paper's choice with 6).
#'
#' @param x A distance object from [nmf_distance()].
#' @param order `"hclust"`, `"kmeans"` or `"none"`.
#' @param centers Number of k-means clusters.
#' @param hclust_method Linkage for [stats::hclust()].
#' @param main Title.
#' @param values Print the distances in the cells (default when there are
#'   at most 12 sets).
#' @param ... Graphical parameters (see [graphics::par()]), named; one the
#'   plot sets itself (`main`, `col`, `xlab`, ...) is replaced by the user's.
#'   Any other name is an error naming the nearest argument.
#' @return `x`, invisibly, with attribute `order` (the plotted order).
#' @examples
#' x <- swimmer()
#' sets <- list(a = x, b = x[, 1:200], c = 1 - x, d = (1 - x)[, 1:200])
#' plot(nmf_distance(sets, method = "chamfer"))
#' @export
plot.nmfkit_dist <- function(x, order = c("hclust", "kmeans", "none"),
                             centers = 6L, hclust_method = "average",
                             main = NULL, values = attr(x, "Size") <= 12,
                             ...) {
  check_graphics_dots()
  order <- check_choice(order)
  hclust_method <- check_choice(hclust_method, c(
    "average", "complete", "single", "ward.D", "ward.D2", "mcquitty",
    "median", "centroid"))
  check_flag(values)
  m <- as.matrix(x)
  n <- nrow(m)
  # a whole number whatever the order; at most n - 1 where k-means reads
  # it (the default 6 is more than a few sets have)
  centers <- check_count(centers, min = 1)
  ord <- switch(order,
    none = seq_len(n),
    hclust = stats::hclust(x, method = hclust_method)$order,
    kmeans = {
      centers <- check_count(centers, min = 1, max = n - 1L)
      km <- stats::kmeans(m, centers = centers, nstart = 10L)
      order(km$cluster, seq_len(n))
    }
  )
  m <- m[ord, ord, drop = FALSE]
  if (is.null(main)) {
    main <- sprintf("%s distance", attr(x, "method") %||% "")
  }
  lw <- min(14, 1.5 + 0.35 * max(nchar(rownames(m)), 1L))
  old <- graphics::par(mar = c(lw, lw, 2.5, 1))
  on.exit(graphics::par(old))
  draw(graphics::image, seq_len(n), seq_len(n), m[, n:1, drop = FALSE],
       col = grDevices::hcl.colors(64, "viridis"), axes = FALSE, xlab = "",
       ylab = "", main = main, user = list(...))
  graphics::axis(1, at = seq_len(n), labels = rownames(m), las = 2,
                 cex.axis = 0.7)
  graphics::axis(2, at = seq_len(n), labels = rev(rownames(m)), las = 1,
                 cex.axis = 0.7)
  if (isTRUE(values)) {
    graphics::text(rep(seq_len(n), n), rep(n:1, each = n),
                   formatC(m, digits = 2, format = "f"), cex = 0.7,
                   col = ifelse(m > mean(range(m)), "black", "white"))
  }
  graphics::box()
  attr(x, "order") <- ord
  invisible(x)
}

declare_settings("nmf_distance", settings = list(inner = setting_inner))
