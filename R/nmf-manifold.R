#' Manifold-regularised NMF: clusters that respect the data manifold
#'
#' Factorises `x` (features x points, columns are points) as `x ~ F G'` with
#' a basis `F` (`W`, features x `rank`) and a cluster indicator `G` (points x
#' `rank`, stored transposed as `H`), penalising `tr(G' L G)` for the
#' Laplacian `L` of a k-nearest-neighbour graph of the points, so that
#' neighbours get similar codes. The cluster of point `j` is the largest
#' entry of row `j` of `G` ([clusters()]).
#'
#' * `"gnmf"` (Cai et al. 2011): `min ||X - F G'||_F^2 + lambda tr(G' L G)`
#'   with `F, G >= 0`, by Cai's multiplicative updates (`G` first, columns of
#'   `F` normalised to unit length before and after). It stops when
#'   `(m - J_t) / m <= tol` (default `1e-5`) after 30 iterations, with `J_t`
#'   the objective and `m <- 0.1 m + 0.9 J_t` from `m = 10 J_0` (Cai's
#'   rule). `x` must be nonnegative; `lambda = 0` is Lee-Seung NMF.
#' * `"rmnmf"` (Huang et al. 2014): `min ||X - F G'||_{2,1} + lambda
#'   tr(G' L G)` with `G >= 0`, `G'G = I` and `F` of any sign, by the
#'   authors' augmented-Lagrangian method (2,1-norm prox, least squares for
#'   `F`, an orthogonal Procrustes step for `G` by a thin SVD). Penalty
#'   `mu` from `mu0 = 1e-3`, times `rho = 1.05` per iteration up to
#'   `mu_max = 1e10`; stops when, after 30 iterations, both scaled residuals
#'   `||X - F G' - E|| / ||X||` and `||G - H|| / sqrt(n)` are `<= tol`
#'   (default `1e-8`). The authors' code has `+ (lambda / mu) L H` in the
#'   Procrustes step where the gradient needs `-`; the default is `-`,
#'   `sign_compat = TRUE` gives the author code.
#' * `"smrmf"` and `"fsmrmf"` (Mani, Domeniconi and Griva): RMNMF whose graph
#'   is learnt. A DS3 encoding `Z` (points x points, columns on the simplex,
#'   `z_ij` = how much point `i` represents point `j`) is fitted to kernel
#'   dissimilarities of the points and of their codes (rows of `G`); the
#'   `exemplars` rows of `Z` with the largest norms each link to their `k`
#'   largest entries, and that selective graph regularises the next
#'   iteration. `"smrmf"` bounds `Z` in the l1,inf norm through a split
#'   `C = Z` (ADMM, started by DS3 on the input dissimilarities);
#'   `"fsmrmf"` relaxes the bound to `gamma ||Z||_F^2` and solves each column
#'   in closed form. The paper's equations are lost: nmfkit follows the
#'   reconstruction in its specification, and its gains over RMNMF are not
#'   verified (see `bench/manifold.R`). These use `n x n` dense buffers.
#'
#' The ALM methods stop when, after `min_iter` iterations, the scaled
#' residual is at most `tol` or the fit has stalled: residual at most `1e-3`
#' and the objective changed by at most `1e-4` (relative) in one iteration.
#' The last value of the `loss` trace is the objective of the final factors,
#' so fits from different starts compare by it (lower is better).
#'
#' How many starts: GNMF starts at random and is non-convex, run 10 or more
#' starts (Cai et al. average 10-30) and keep the lowest objective; RMNMF,
#' SMRMF and f-SMRMF start from NNDSVD, which is deterministic up to its
#' randomized SVD, so one start usually suffices and 3-5 guard against an
#' unlucky SVD sketch; with `init = "random"` or `"kmeans"` run 10.
#'
#' The model `x ~ F G'` has no intercept: a cluster around the origin has a
#' near-zero column of `F` and any point near the origin fits it and every
#' other cluster about equally, so on signed data centred at the origin
#' (e.g. three Gaussian blobs, one at 0) the ALM methods can miss such a
#' cluster. `preprocess = "minmax"` moves the data away from the origin.
#' SMRMF's selective graph, as the paper builds it (each exemplar linked to
#' its `k` largest entries of `Z`), is a set of stars around the exemplars
#' plus points no exemplar reaches: more connected components than
#' clusters. While `lambda / mu` is large the graph term drives `G` into
#' the Laplacian's null space, whose dimension is the number of components,
#' and the codes settle on an early grouping of the stars; on three blobs
#' at `3 e_r + 1` SMRMF averaged .80 accuracy where k-means gets 1.00. By
#' default (`connect = TRUE`) each point outside the graph is linked to its
#' nearest point in it and the components are joined along the input-space
#' minimum spanning tree, shortest links first, until `rank` remain, with
#' edges of the graph's mean weight; `connect = FALSE` gives the paper's
#' graph (`bench/README.md`, "Manifold clustering").
#'
#' Scale matters for `"rmnmf"`: the prox threshold `1 / mu` is in data units,
#' so the fit of `c * x` is not `c` times the fit of `x`. Nothing is rescaled
#' silently; `preprocess = "minmax"` maps each feature to `[0, 1]` (the
#' paper's protocol) and is recorded in the fit. GNMF fits are equivariant:
#' `c * x` gives the same iterations and `c` times the coefficients.
#'
#' The graph: for each point its `k` nearest other points (Euclidean, ties
#' to the lower index; exact up to 5000 points and for sparse `x` at any
#' size, by blocks of sparse products that never densify `x`; above 5000
#' dense points, found by HNSW (package RcppHNSW) and measured exactly, with
#' the heat kernel's `t` estimated from 1000 anchor points), weighted 1
#' (`"binary"`), by the heat kernel
#' `exp(-d^2 / (2 t^2))` with `t` the mean of all pairwise distances
#' (`"heat"`, Cai's `constructW`), or `exp(-d^2 / (s_i s_j))` with `s_i` the
#' distance to the `k`-th neighbour (`"selftune"`); symmetrised by
#' `max(W, W')`, no self-loops. `graph` takes your own affinity instead.
#'
#' @param x Data, features x points: a numeric matrix, numeric data frame or
#'   `dgCMatrix`. Nonnegative for `"gnmf"` (after `preprocess`); any sign for
#'   the others, which densify it (a sparse `x` is refused with an error of
#'   class `nmfkit_error_memory` when the dense buffers would exceed the
#'   memory available; GNMF keeps it sparse).
#' @param rank Number of clusters `c`.
#' @param method `"rmnmf"`, `"gnmf"`, `"smrmf"` or `"fsmrmf"`.
#' @param lambda Weight of the graph penalty, at least 0; `NULL` means 100
#'   for `"gnmf"` (Cai's wrapper) and 1 otherwise.
#' @param k Neighbours per point, from 1 to `n - 1`; `NULL` means 5 (`"gnmf"`,
#'   `"rmnmf"`) or `round(sqrt(n))`.
#' @param weight Edge weights: `"binary"`, `"heat"` or `"selftune"`.
#' @param graph Your own affinity: an `n x n` symmetric, nonnegative matrix or
#'   `dgCMatrix` with zero diagonal; `k` and `weight` are then ignored.
#' @param init `"nndsvd"` (NNDSVD, zeros kept; the default, except for
#'   `"gnmf"`), `"random"` (uniform `[0, 1)` from R's RNG, Cai's start and the
#'   default for `"gnmf"`; the coefficients are scaled to the data so that
#'   fits are equivariant) or `"kmeans"` (the RMNMF authors' start: k-means
#'   indicators plus 0.2, for points and for features).
#' @param exemplars For `"smrmf"`/`"fsmrmf"`: the number of exemplars, as a
#'   fraction of `n` in `(0, 1]` or a count up to `n`.
#' @param preprocess `"none"` or `"minmax"` (each feature to `[0, 1]`,
#'   constant features to 0).
#' @param control [nmf_control()] settings: `max_iter` (default 1000),
#'   `tol` (default per method, see above), `threads`, `verbose`.
#' @param nrun Number of fits to run; the one with the lowest final
#'   objective is kept (as in [nmf()]: the runs after the first start from
#'   `"random"`, all starts drawn first from R's RNG). See "Starts" above
#'   for how many each method needs.
#' @param keep_data Keep a reference to the (preprocessed) data in the fit
#'   for [fitted()], [residuals()] and `plot(type = "graph")`; with `FALSE`
#'   pass them the data as `x`.
#' @param ... Variant knobs (also accepted inside `control`); a knob the
#'   method does not read is an error. All methods: `min_iter` (30) and
#'   `labels` (`"argmax"` or `"kmeans"` on `G`). GNMF: `solver` (`"mu"`,
#'   Cai's multiplicative updates, the default; or `"hals"`, exact
#'   coordinate updates of each row of `H`, swept through the graph point
#'   by point, and of each column of `W`, kept at unit length because the
#'   penalty is not invariant to rescaling `W` and `H`; both never increase
#'   the objective). The ALM methods
#'   (`"rmnmf"`, `"smrmf"`, `"fsmrmf"`): `sign_compat` (`FALSE`), `mu0`
#'   (`1e-3`), `rho` (1.05), `mu_max` (`1e10`). SMRMF and f-SMRMF: `kernel`
#'   (`"selftune"` `exp(-d^2/(s_i s_j))`, `"sigma_i2"`, `"sigma_i"`, or
#'   `"euclidean"`: squared distances over their maximum, SMRMF-Euc), `beta`
#'   (1, weight of the input dissimilarities), `w_g` (weight of the codes'
#'   dissimilarities, default `lambda / 2`), `rank_norm` (`"l2"` or
#'   `"linf"`: how rows of `Z` are ranked to pick the exemplars), `nbr` (the
#'   neighbours of an exemplar `i` in the selective graph: `"zrow"`, the `k`
#'   largest entries of row `i` of `Z` with weights `z_ij`, the default;
#'   `"knn"`, the `k` nearest points of `i` in input space with weights
#'   `z_ij`; `"knn_kernel"`, the same neighbours with weights `1 - D_X / 2`,
#'   the input kernel similarity), `connect` (`TRUE`: join the selective
#'   graph's components until `rank` remain, above; `FALSE`: the paper's
#'   graph) and `keep_z` (`FALSE`; `TRUE` keeps `Z` in the fit). SMRMF
#'   only: `split` (`TRUE`; `FALSE` is SMRMF-NS: no l1,inf split, every
#'   point may be an exemplar), `mu_z` (0.1), `ds3_max_iter` (3000, the DS3
#'   start), `rank_on` (`"z"`, or `"c"`: rank the rows of the
#'   l1,inf-projected split `C`, whose non-exemplar rows are zero) and
#'   `inner_z_iter` (1: ADMM passes of the exemplar block per iteration).
#'   f-SMRMF only: `gamma` (default the CAN rule).
#' @return An object of class `c("nmfkit_manifold", "nmfkit")` with the
#'   common fields and `method`, `lambda`, `k`, `weight`, `labels` (an integer
#'   cluster per point), `G` (points x `rank`), `graph` (the affinity,
#'   sparse), `residual` and `mu` (ALM traces), `preprocess`, `exemplars`
#'   (SMRMF: the ranked exemplar points), `Z` and, for `"smrmf"`, its
#'   l1,inf split `C` (both with `keep_z = TRUE`).
#' @references Cai, D., He, X., Han, J. and Huang, T. S. (2011). Graph
#'   regularized nonnegative matrix factorization for data representation.
#'   IEEE TPAMI 33(8), 1548-1560.
#'
#'   Huang, J., Nie, F., Huang, H. and Ding, C. (2014). Robust manifold
#'   nonnegative matrix factorization. ACM TKDD 8(3), 11.
#'
#'   Mani, P., Domeniconi, C. and Griva, I. Unsupervised selective manifold
#'   regularized matrix factorization.
#' @seealso [clusters()], [cluster_acc()], [two_moons()],
#'   [plot.nmfkit_manifold()].
#' @examples
#' set.seed(1)
#' x <- two_moons(200)
#' fit <- nmf_manifold(x, rank = 2, k = 14, weight = "heat",
#'                     preprocess = "minmax")
#' fit
#' cluster_acc(attr(x, "labels"), clusters(fit))
#' @export
nmf_manifold <- function(x, rank, method = c("rmnmf", "gnmf", "smrmf", "fsmrmf"),
                         lambda = NULL, k = NULL,
                         weight = c("binary", "heat", "selftune"), graph = NULL,
                         exemplars = 0.1, preprocess = c("none", "minmax"),
                         init = c("nndsvd", "random", "kmeans"),
                         control = nmf_control(max_iter = 1000), nrun = 1L,
                         keep_data = TRUE, ...) {
  moved <- old_positions(c("x", "rank", "method", "lambda", "k", "weight",
                           "graph", "init", "exemplars", "preprocess",
                           "control", "nrun", "keep_data", "..."), 7L,
                         "nmf_manifold")
  if (!is.null(moved)) return(eval(moved, parent.frame()))
  call <- match.call()
  check_required("x")
  method <- check_choice(method, c("rmnmf", "gnmf", "smrmf", "fsmrmf"))
  weight <- check_choice(weight, c("binary", "heat", "selftune"))
  # GNMF starts as Cai's code does: from NNDSVD one component dominates
  # every point's code and the argmax labels collapse
  if (missing(init) && method == "gnmf") init <- "random"
  init <- check_choice(init, c("nndsvd", "random", "kmeans"))
  preprocess <- check_choice(preprocess, c("none", "minmax"))
  control <- manifold_control(control, method, list(...))
  nrun <- check_count(nrun, min = 1)
  check_flag(keep_data)
  prep <- manifold_data(x, method, preprocess)
  x <- prep$x
  n <- ncol(x)
  if (n < 3L) {
    abort_nmfkit(c("{.arg x} must have at least 3 points (columns).",
                   "x" = "It has {n}."), "dimension")
  }
  max_rank <- if (init == "nndsvd") min(dim(x)) else n - 1L
  rank <- check_rank(rank, max_rank,
                     why = if (init == "nndsvd") "{.code min(dim(x))}, for NNDSVD"
                           else "the number of points - 1")
  lambda <- check_number(lambda %||% if (method == "gnmf") 100 else 1, min = 0,
                         arg = "lambda")
  k_default <- if (method %in% c("gnmf", "rmnmf")) 5L else round(sqrt(n))
  # checked also beside a user's graph, which it does not build
  k <- check_count(k %||% k_default, min = 1, max = n - 1, arg = "k",
                   what = "k")
  if (is.null(graph)) {
    if (method %in% c("gnmf", "rmnmf")) {
      graph <- knn_graph(x, k, weight, control$threads)
    }
  } else if (method %in% c("gnmf", "rmnmf")) {
    graph <- check_graph(graph, n)
    k <- NA_integer_
    weight <- "user"
  } else {
    abort_nmfkit(c("{.arg graph} must be {.code NULL} for {.val {method}}.",
                   "i" = "SMRMF learns its own selective graph; set {.arg k}."),
                 "graph")
  }
  n_exemplars <- check_exemplars(exemplars, n)
  check_dense_memory(dim(x), method)
  spec <- list(method = method, lambda = lambda, k = k, weight = weight,
               graph = graph, n_exemplars = n_exemplars,
               preprocess = prep$preprocess, image_dim = prep$image_dim,
               points = colnames(x))
  fit_variant("manifold", x, rank, init, control, nrun, keep_data, spec,
              call)
}


# Data of nmf_manifold(): finite numeric, min-max scaled on request, then
# nonnegative for GNMF. Returns list(x, preprocess, image_dim).
manifold_data <- function(x, method, preprocess, call = rlang::caller_env()) {
  image_dim <- attr(x, "image_dim")
  x <- as_numeric_matrix(x, "x", call)
  if (nrow(x) == 0L || ncol(x) == 0L) {
    abort_nmfkit(c("{.arg x} must have at least one row and one column.",
                   "x" = "It has {nrow(x)} row{?s} and {ncol(x)} column{?s}."),
                 "empty", call = call)
  }
  vals <- if (inherits(x, "dgCMatrix")) x@x else x
  check_finite_values(x, vals, "x", call)
  info <- list(method = preprocess)
  if (preprocess == "minmax") {
    x <- as.matrix(x)
    lo <- apply(x, 1, min)
    span <- apply(x, 1, max) - lo
    x <- (x - lo) / ifelse(span > 0, span, Inf)
    info$min <- lo
    info$range <- span
  }
  vals <- if (inherits(x, "dgCMatrix")) x@x else x
  if (method == "gnmf") check_nonnegative_values(x, vals, "x", call)
  if (!any(vals != 0)) {
    abort_nmfkit(c("{.arg x} must have at least one nonzero entry.",
                   "x" = "All {nrow(x)} x {ncol(x)} entries are zero."),
                 "zero", call = call)
  }
  list(x = x, preprocess = info, image_dim = image_dim)
}

# Settings: nmf_control() plus the variant's knobs from `...`, with the
# method's default tolerance unless the user set one.
manifold_control <- function(control, method, knobs,
                             call = rlang::caller_env()) {
  # knobs in `...` are settings like those in `control`: misspelt or foreign
  # names are errors, not ignored
  check_setting_names(names(knobs), length(knobs), arg = "...", call = call)
  if (length(knobs) && is.list(control)) {
    control[names(knobs)] <- knobs
  }
  control <- check_control(control, default = nmf_control(max_iter = 1000),
                           fn = "nmf_manifold", call = call)
  check_manifold_knobs(control, method, call)
  if (!isTRUE(control$tol_set) && !"tol" %in% names(knobs)) {
    control$tol <- if (method == "gnmf") 1e-5 else 1e-8
  }
  num <- function(name, def, min, strict = FALSE) {
    check_number(control[[name]] %||% def, min = min, strict = strict,
                 arg = name, call = call, what = "control")
  }
  control$mu0 <- num("mu0", 1e-3, 0, strict = TRUE)
  control$rho <- num("rho", 1.05, 1)
  control$mu_max <- num("mu_max", 1e10, control$mu0)
  control$min_iter <- check_count(control$min_iter %||% 30L, min = 0,
                                  arg = "min_iter", call = call,
                                  what = "control")
  control$sign_compat <- check_flag(control$sign_compat %||% FALSE,
                                    arg = "sign_compat", call = call)
  control$kernel <- check_choice(control$kernel %||% "selftune",
                                 c("selftune", "sigma_i2", "sigma_i",
                                   "euclidean"), arg = "kernel", call = call)
  control$split <- check_flag(control$split %||% TRUE, arg = "split",
                              call = call)
  control$beta <- num("beta", 1, 0)
  # w_g and gamma stay NULL unless set: the core derives them
  if (!is.null(control$w_g)) control$w_g <- num("w_g", NULL, 0)
  control$mu_z <- num("mu_z", 0.1, 0, strict = TRUE)
  if (!is.null(control$gamma)) {
    control$gamma <- num("gamma", NULL, 0, strict = TRUE)
  }
  control$ds3_max_iter <- check_count(control$ds3_max_iter %||% 3000L,
                                      min = 1, arg = "ds3_max_iter",
                                      call = call, what = "control")
  control$rank_norm <- check_choice(control$rank_norm %||% "l2",
                                    c("l2", "linf"), arg = "rank_norm",
                                    call = call)
  control$rank_on <- check_choice(control$rank_on %||% "z", c("z", "c"),
                                  arg = "rank_on", call = call)
  control$nbr <- check_choice(control$nbr %||% "zrow",
                              c("zrow", "knn", "knn_kernel"), arg = "nbr",
                              call = call)
  control$inner_z_iter <- check_count(control$inner_z_iter %||% 1L, min = 1,
                                      max = 1000, arg = "inner_z_iter",
                                      call = call, what = "control")
  control$keep_z <- check_flag(control$keep_z %||% FALSE, arg = "keep_z",
                               call = call)
  control$connect <- check_flag(control$connect %||% TRUE, arg = "connect",
                                call = call)
  control$labels <- check_choice(control$labels %||% "argmax",
                                 c("argmax", "kmeans"), arg = "labels",
                                 call = call)
  control$solver <- check_choice(control$solver %||% "mu", c("mu", "hals"),
                                 arg = "solver", call = call)
  control
}

# The knobs each method reads; a knob given to another method is an error
# (a misplaced setting, like those check_control() rejects), never ignored.
manifold_knobs <- local({
  alm <- c("mu0", "rho", "mu_max", "min_iter", "sign_compat", "labels")
  learnt <- c(alm, "kernel", "beta", "w_g", "rank_norm", "nbr", "keep_z",
              "connect")
  list(gnmf = c("min_iter", "labels", "solver"), rmnmf = alm,
       smrmf = c(learnt, "split", "mu_z", "ds3_max_iter", "rank_on",
                 "inner_z_iter"),
       fsmrmf = c(learnt, "gamma"))
})

check_manifold_knobs <- function(control, method, call) {
  given <- intersect(names(control)[!vapply(control, is.null, logical(1))],
                     manifold_settings)
  foreign <- setdiff(given, manifold_knobs[[method]])
  if (!length(foreign)) return(invisible(NULL))
  users <- names(manifold_knobs)[vapply(manifold_knobs, function(k)
    foreign[1] %in% k, logical(1))]
  abort_nmfkit(c("{.code {foreign[1]}} is not a setting of {.code method = \"{method}\"}.",
                 "i" = "It is read by {.or {.val {users}}}."),
               "control", call = call)
}

# Points above which the k-NN graph of dense data is found by HNSW: the
# exact search costs O(m n^2) (about 2 s at this size with 4 features), the
# approximate one O(m n log n).
knn_exact_max <- 5000L

# The k-NN affinity of the columns of x (sparse result). Exact up to
# `exact_max` points, and for sparse data at any size (products of sparse
# column blocks: x is never densified, the time is O(n^2) distances); above
# it for dense data, approximate neighbours by HNSW (RcppHNSW) with exact
# distances to them. Every part stops on Ctrl-C.
knn_graph <- function(x, k, weight, threads, exact_max = knn_exact_max) {
  if (inherits(x, "dgCMatrix") || ncol(x) <= exact_max) {
    if (!inherits(x, "dgCMatrix")) storage.mode(x) <- "double"
    return(r_knn_graph(x, k, weight, threads))
  }
  knn_graph_hnsw(x, k, weight)
}

# HNSW (Malkov and Yashunin 2020) through RcppHNSW: the index is built one
# block of points at a time on one thread (so the graph does not depend on
# the thread count) and searched block by block, R's loop polling for
# Ctrl-C between blocks. The neighbours found are re-measured exactly and
# ordered by (distance, index) as in the exact search; for heat weights the
# mean pairwise distance is that from 1000 evenly spaced anchor points to
# all points.
knn_graph_hnsw <- function(x, k, weight, block = 256L) {
  storage.mode(x) <- "double"
  n <- ncol(x)
  blocks <- split(seq_len(n), ceiling(seq_len(n) / block))
  ann <- methods::new(RcppHNSW::HnswL2, nrow(x), n, 16L, 200L)
  for (b in blocks) ann$addItems(t(x[, b, drop = FALSE]))
  ann$setEf(max(64L, 2L * (k + 1L)))
  sq <- colSums(x^2)
  idx <- matrix(0L, k, n)
  d2 <- matrix(0, k, n)
  for (b in blocks) {
    found <- ann$getAllNNsList(t(x[, b, drop = FALSE]), k + 1L, FALSE)$item
    nb <- t(vapply(seq_along(b), function(q) {
      i <- found[q, ]
      i <- i[i != b[q]]
      i[seq_len(k)]
    }, integer(k)))
    dim(nb) <- c(length(b), k)
    j <- rep(b, k)
    dd <- pmax(0, sq[j] + sq[nb] - 2 * colSums(x[, j, drop = FALSE] *
                                               x[, nb, drop = FALSE]))
    dim(dd) <- dim(nb)
    for (q in seq_along(b)) {
      o <- order(dd[q, ], nb[q, ])
      idx[, b[q]] <- nb[q, o]
      d2[, b[q]] <- dd[q, o]
    }
  }
  mean_dist <- if (weight == "heat") mean_distance_anchors(x, sq) else 0
  r_knn_affinity(idx, d2, mean_dist, weight)
}

# Mean Euclidean distance between 1000 evenly spaced anchors and all points
# (an estimate of the mean over all n^2 pairs), in blocks of anchors.
mean_distance_anchors <- function(x, sq, anchors = 1000L) {
  a <- unique(round(seq(1, ncol(x), length.out = min(anchors, ncol(x)))))
  total <- 0
  for (b in split(a, ceiling(seq_along(a) / 100L))) {
    d2 <- outer(sq[b], sq, "+") - 2 * crossprod(x[, b, drop = FALSE], x)
    total <- total + sum(sqrt(pmax(d2, 0)))
  }
  total / (length(a) * as.double(ncol(x)))
}

# A user affinity: n x n, finite, symmetric, nonnegative, zero diagonal.
check_graph <- function(graph, n, arg = "graph", call = rlang::caller_env()) {
  if (!(inherits(graph, "Matrix") || (is.matrix(graph) && is.numeric(graph)))) {
    abort_nmfkit(c("{.arg {arg}} must be a numeric matrix or a sparse {.cls dgCMatrix}.",
                   "x" = "It is {.obj_type_friendly {graph}}."),
                 "graph", call = call)
  }
  if (!identical(dim(graph), c(n, n))) {
    abort_nmfkit(c("{.arg {arg}} must be {n} x {n}, one row and column per point.",
                   "x" = "It is {nrow(graph)} x {ncol(graph)}."),
                 "graph", call = call)
  }
  # a corrupt sparse graph is rejected before anything converts it
  if (inherits(graph, "Matrix")) check_sparse_structure(graph, arg, call)
  g <- as_dgc(Matrix::Matrix(graph, sparse = TRUE), arg, call)
  if (any(!is.finite(g@x))) {
    abort_nmfkit(c("{.arg {arg}} must have finite weights.",
                   "x" = "It has {sum(!is.finite(g@x))} non-finite entr{?y/ies}."),
                 "graph", call = call)
  }
  if (any(g@x < 0)) {
    abort_nmfkit(c("{.arg {arg}} must be nonnegative.",
                   "x" = "It has {sum(g@x < 0)} negative weight{?s}; the smallest is {signif(min(g@x), 4)}."),
                 "graph", call = call)
  }
  d <- Matrix::diag(g)
  if (any(d != 0)) {
    abort_nmfkit(c("{.arg {arg}} must have a zero diagonal (no self-loops).",
                   "x" = "{sum(d != 0)} diagonal entr{?y is/ies are} nonzero; the first at [{which(d != 0)[1]}, {which(d != 0)[1]}]."),
                 "graph", call = call)
  }
  # (an affinity without edges is valid: it regularises nothing)
  asym <- if (length(g@x)) max(abs(g - Matrix::t(g))) else 0
  if (asym > 1e-12 * max(1, g@x)) {
    abort_nmfkit(c("{.arg {arg}} must be symmetric.",
                   "x" = "{.code max(abs(graph - t(graph)))} is {signif(asym, 3)}."),
                 "graph", call = call)
  }
  Matrix::drop0(g)
}

# Exemplar count from a fraction in (0, 1] or a count up to n.
check_exemplars <- function(exemplars, n, call = rlang::caller_env()) {
  ok <- is_number(exemplars) && exemplars > 0 &&
    (exemplars <= 1 || (exemplars == round(exemplars) && exemplars <= n))
  if (!ok) {
    found <- if (is_number(exemplars)) format(exemplars) else
      cli::format_inline("{.obj_type_friendly {exemplars}}")
    abort_nmfkit(c("{.arg exemplars} must be a fraction in (0, 1] or a whole number of points up to {n}.",
                   "x" = "It is {found}."),
                 "exemplars", call = call)
  }
  as.integer(if (exemplars <= 1) max(1, ceiling(exemplars * n)) else exemplars)
}

# Starting factors W (p x c) and H (c x n).
manifold_init <- function(x, rank, init, threads) {
  p <- nrow(x)
  n <- ncol(x)
  switch(init,
    nndsvd = init_factors(x, rank, "nndsvd", threads),
    random = {
      W <- matrix(stats::runif(p * rank), p, rank)
      H <- matrix(stats::runif(rank * n), rank, n)
      # scaled so that W H has the norm of x: c * x then starts at c * H
      W <- sweep(W, 2, sqrt(colSums(W^2)), "/")
      xn <- sqrt(if (inherits(x, "dgCMatrix")) sum(x@x^2) else sum(x^2))
      list(W = W, H = H * (xn / sqrt(sum((W %*% H)^2))))
    },
    kmeans = {
      xd <- as.matrix(x)
      pts <- stats::kmeans(t(xd), rank, nstart = 10)$cluster
      feat <- if (p > rank) stats::kmeans(xd, rank, nstart = 10)$cluster
              else ((seq_len(p) - 1L) %% rank) + 1L
      list(W = diag(rank)[feat, , drop = FALSE] + 0.2,
           H = t(diag(rank)[pts, , drop = FALSE] + 0.2))
    }
  )
}

# nmf_manifold()'s knobs (given in its `...` or in `control`): checked, with
# their method-dependent defaults, by manifold_control().
manifold_settings <- c("mu0", "rho", "mu_max", "min_iter", "sign_compat",
                       "kernel", "split", "beta", "w_g", "mu_z", "gamma",
                       "ds3_max_iter", "rank_norm", "rank_on", "nbr",
                       "inner_z_iter", "keep_z", "labels", "solver",
                       "connect")
manifold_knob_settings <- function() {
  stats::setNames(
    rep(list(setting(check = function(x, arg, call) x)),
        length(manifold_settings)),
    manifold_settings)
}

# Memory the solver's dense buffers need, in bytes: the ALM methods keep
# about six m x n matrices (a dense copy of x, E, the multiplier, A and
# temporaries), SMRMF and f-SMRMF eight n x n ones besides (dissimilarities,
# Z, C, its multiplier, temporaries); GNMF works on x as given (sparse stays
# sparse) and needs only k x n and k x m factors.
dense_bytes <- function(dims, method) {
  m <- as.double(dims[1])
  n <- as.double(dims[2])
  if (method == "gnmf") return(0)
  8 * (6 * m * n + if (method %in% c("smrmf", "fsmrmf")) 8 * n^2 else 0)
}

# Bytes of memory available now: MemAvailable of /proc/meminfo (Linux);
# NA where it cannot be read, and then nothing is checked.
available_memory <- function(path = "/proc/meminfo") {
  lines <- tryCatch(suppressWarnings(readLines(path)),
                    error = function(e) character())
  line <- grep("^MemAvailable:", lines, value = TRUE)
  if (length(line) != 1L) return(NA_real_)
  kb <- suppressWarnings(as.double(gsub("[^0-9]", "", line)))
  if (is.na(kb)) NA_real_ else kb * 1024
}

# Refuses, before allocating, a fit whose dense buffers exceed the memory
# available, naming the size.
check_dense_memory <- function(dims, method, available = available_memory(),
                               call = rlang::caller_env()) {
  need <- dense_bytes(dims, method)
  if (is.na(available) || need <= available) return(invisible(need))
  size <- function(b) format(structure(b, class = "object_size"),
                             units = "auto", standard = "SI", digits = 3)
  what <- if (method %in% c("smrmf", "fsmrmf")) {
    sprintf("dense %s x %s data and %s x %s exemplar matrices", dims[1],
            dims[2], dims[2], dims[2])
  } else sprintf("dense %s x %s data", dims[1], dims[2])
  abort_nmfkit(c("{.code method = \"{method}\"} needs about {size(need)} of memory ({what}).",
                 "x" = "Only {size(available)} of memory is available.",
                 "i" = "{.code method = \"gnmf\"} keeps sparse data sparse; or use fewer points."),
               "memory", call = call)
}

declare_variant(
  "manifold", fn = "nmf_manifold", label = "Manifold-regularised NMF",
  loss_name = "objective",
  settings = manifold_knob_settings(),
  defaults = list(max_iter = 1000),
  # the graph and the ALM's penalties are not scale-free: the data are
  # fitted as given
  scale = NULL,
  start = function(x, rank, init, spec, control, full) {
    manifold_init(x, rank, init, control$threads)
  },
  run = function(x, start, spec, control) {
    switch(spec$method,
      gnmf = r_gnmf(x, spec$graph, start$W, start$H, spec$lambda, control,
                    progress_callback(control)),
      rmnmf = r_rmnmf(as.matrix(x), spec$graph, start$W, t(start$H),
                      spec$lambda, control, progress_callback(control)),
      r_smrmf(as.matrix(x), start$W, t(start$H), spec$lambda,
              spec$method == "fsmrmf", spec$k, spec$n_exemplars, control,
              progress_callback(control))
    )
  },
  # cluster labels from the codes G (n x k)
  post = function(fit, x, spec, control) {
    fit$labels <- if (identical(control$labels, "kmeans")) {
      stats::kmeans(fit$G, ncol(fit$W), nstart = 10)$cluster
    } else fit$labels + 1L
    names(fit$labels) <- spec$points
    fit
  },
  # the ALM methods' basis may be signed: a component is in use when its
  # basis vector and codes are not zero
  status_factors = function(fit) list(W = abs(fit$W), H = abs(fit$H)),
  model = function(fit, spec) {
    G <- fit$G
    dimnames(G) <- list(spec$points, paste0("nmf", seq_len(ncol(G))))
    list(method = spec$method, lambda = spec$lambda, k = spec$k,
         weight = spec$weight, labels = fit$labels, G = G,
         graph = fit$graph, residual = fit$residual, mu = fit$mu,
         exemplars = fit$exemplars, Z = fit$Z, C = fit$C,
         preprocess = spec$preprocess, image_dim = spec$image_dim)
  }
)
