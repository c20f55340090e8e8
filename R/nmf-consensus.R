#' Consensus programs over many NMF runs (cNMF)
#'
#' Runs [nmf()] `nrun` times from random starts and combines the runs into
#' consensus programs, the method of Kotliar et al. (eLife 2019, cNMF):
#'
#' 1. every run's basis vectors (columns of `W`, the "programs") are scaled
#'    to unit Euclidean norm, `nrun * rank` vectors per rank;
#' 2. outliers are dropped: a vector whose *local density*, its mean
#'    Euclidean distance to its `neighbors * nrun` nearest neighbours among
#'    all the vectors, is not below `density_threshold` (distances between
#'    unit vectors lie in `[0, 2]`, so `density_threshold = 2` keeps all, as
#'    cNMF's own rank-selection plot does);
#' 3. the kept vectors are clustered into `rank` clusters by k-means
#'    ([stats::kmeans()], 10 starts), and each cluster's element-wise median
#'    is a consensus program, scaled to sum to 1;
#' 4. the coefficients `H` are refitted with the programs held fixed, by the
#'    nonnegative least squares of [predict()][predict.nmfkit()].
#'
#' Each rank is scored by its *stability*, the mean silhouette width of the
#' k-means clustering (Euclidean distances of the kept vectors; [cluster::silhouette()]),
#' near 1 when every run finds the same programs, and by its *error*, the
#' relative error `||x - W H||_F / ||x||_F` of the consensus fit. cNMF
#' chooses the rank where stability is high before the error levels off:
#' `plot()` draws both against rank, as cNMF's k-selection plot. Also
#' reported: `agreement`, the mean over runs of the mean cosine similarity
#' between a run's components and the programs, matched one to one by
#' [match_components()]. The programs are ordered by their share of the
#' fit (`rowSums(H)`, as they sum to 1), largest first.
#'
#' The runs go through [future.apply::future_lapply()] with
#' `future.seed = TRUE`: `future::plan()` chooses where they run, and
#' `set.seed()` gives the same programs on every plan (k-means draws its
#' starts from the session's RNG after the runs). Progress is reported
#' through `progressr`. Each run keeps only its `W`; the model at each rank
#' keeps them all (`nrun * rank` columns of the data's length).
#'
#' @param x A nonnegative matrix, numeric data frame or `dgCMatrix` (samples
#'   as columns), or data in a container, as for [nmf()] (see
#'   [nmfkit-containers]). A `DelayedMatrix` is read in blocks: its runs are
#'   streamed fits and the programs' coefficients are solved a block at a
#'   time.
#' @param rank The number of programs: one rank, or several to compare
#'   (whole numbers from 1 to `min(dim(x))`); or `"auto"` (or
#'   [auto_rank()] for a range): the rank chosen by the adaptive held-out
#'   search of [nmf()]'s `rank = "auto"` under the `method` and `control`
#'   given, its path kept as `$rank_search`.
#' @param nrun Runs per rank, at least 2.
#' @param density_threshold Vectors of local density at or above this are
#'   outliers: a number greater than 0 (cNMF's default 0.5).
#' @param neighbors The neighbours of the local density, as a fraction of
#'   `nrun` (cNMF's `local_neighborhood_size`, default 0.3), in `(0, 1]`.
#' @param keep_data Keep a reference to `x` in the models.
#' @param ... Arguments of [nmf()] for every run: `method` and `control`.
#'   Every run starts from `init = "random"`.
#' @param assay The assay (or Seurat layer) of a container `x`, as in
#'   [nmf()].
#' @return An object of class `nmfkit_consensus`: a list with `ranks`;
#'   `results`, a data frame with one row per rank: `rank`, `stability`
#'   (mean silhouette width; `NA` at rank 1), `error`, `kept` (share of the
#'   vectors kept by the density filter), `agreement`; `fits`, a list named
#'   by rank of models of class `c("nmfkit_programs", "nmfkit")`, each with
#'   the consensus programs as `W` and the refitted `H` (so [predict()],
#'   [clusters()], [top_features()], [feature_score()], [tidy()] work on
#'   them) and the fields `components` (every run's unit vectors, features x
#'   `nrun * rank`), `run` and `cluster` (per vector: its run, its program
#'   or `NA` when filtered out), `density`, `kept`, `silhouette`,
#'   `agreement` (per run) and `run_loss` (each run's final loss);
#'   `nrun`, `density_threshold`, `neighbors` (the neighbour count) and
#'   `call`. See [print.nmfkit_consensus()] for its methods.
#' @references Kotliar, D., Veres, A., Nagy, M. A., Tabrizi, S., Hodis, E.,
#'   Melton, D. A. and Sabeti, P. C. (2019). Identifying gene expression
#'   programs of cell-type identity and cellular activity with single-cell
#'   RNA-Seq. *eLife* 8, e43803.
#' @examples
#' x <- swimmer()[, 1:96]
#' set.seed(1)
#' cons <- nmf_consensus(x, rank = c(4, 8, 12), nrun = 6,
#'                       control = nmf_control(max_iter = 50))
#' cons
#' plot(cons)
#' fit <- cons$fits[["8"]]
#' plot(fit, type = "basis")
#' @export
nmf_consensus <- function(x, rank, nrun = 50L, density_threshold = 0.5,
                          neighbors = 0.3, keep_data = TRUE, ...,
                          assay = "counts") {
  call <- match.call()
  original <- if (!missing(x)) x  # input_matrix() reports a missing x
  x <- input_matrix(x, assay)
  search <- if (!missing(rank)) as_auto_rank(rank, pair = FALSE)
  if (!is.null(search)) abort_streamed_holdout(x, "nmf_consensus", call = call)
  x <- check_data(x)
  why <- rank_bound(x, original, assay)
  if (missing(rank)) check_rank(rank, min(dim(x)), why = why)
  if (!is.null(search)) {
    check_dots_named(c("method", "control"), "nmf_consensus")
    path <- rank_search(x, search, nmf, list(...))
    rank <- path$rank
  }
  ranks <- check_ranks(rank, min(dim(x)), arg = "rank", why = why)
  nrun <- check_count(nrun, min = 2)
  density_threshold <- check_number(density_threshold, min = 0,
                                    strict = TRUE)
  neighbors <- check_number(neighbors, min = 0, max = 1, strict = TRUE)
  check_flag(keep_data)
  check_dots_named(c("method", "control"), "nmf_consensus")
  args <- list(...)
  if (!is.null(args$method)) {
    args$method <- check_choice(args$method, c("auto", "hals", "mu", "anls"),
                                arg = "method")
  }
  control <- check_control(args$control %||% nmf_control(), fn = "nmf")
  args$control <- control
  args$init <- "random"
  # the runs read the user's data (a DelayedMatrix streams); the programs'
  # coefficients and error read the checked source
  runs <- consensus_runs(source_data(x), ranks, nrun, args)
  n_neighbors <- max(1L, as.integer(neighbors * nrun))
  fits <- lapply(ranks, function(k) {
    consensus_programs(x, k, runs[[as.character(k)]], density_threshold,
                       n_neighbors, control, call,
                       data = if (keep_data) source_data(x))
  })
  names(fits) <- as.character(ranks)
  results <- data.frame(
    rank = ranks,
    stability = vapply(fits, `[[`, numeric(1), "silhouette"),
    error = vapply(fits, function(f) f$loss, numeric(1)),
    kept = vapply(fits, function(f) mean(f$kept), numeric(1)),
    agreement = vapply(fits, function(f) mean(f$agreement), numeric(1)),
    row.names = NULL
  )
  structure(
    list(ranks = ranks, results = results, fits = fits, nrun = nrun,
         density_threshold = density_threshold, neighbors = n_neighbors,
         rank_search = if (!is.null(search)) path, call = call),
    class = "nmfkit_consensus"
  )
}

# nrun fits of nmf() per rank, each from its own future.seed stream; per
# rank (a list named by rank) the runs' W and final losses. With
# `resample` ("poisson", "multinomial": resample_counts()), each run fits
# its own resampled copy of x, drawn in its stream (nmf_signatures()).
consensus_runs <- function(x, ranks, nrun, args, call = rlang::caller_env(),
                           resample = NULL) {
  tasks <- expand.grid(run = seq_len(nrun), rank = ranks)
  prog <- progressr::progressor(steps = nrow(tasks))
  seed_session()
  out <- future.apply::future_lapply(seq_len(nrow(tasks)), function(t) {
    xt <- if (is.null(resample)) x else resample_counts(x, resample)
    run <- quiet_fit(nmf, c(list(xt, rank = tasks$rank[t], keep_data = FALSE),
                            args), x, tasks$rank[t], call)
    prog()
    list(W = run$model$W, loss = final_loss(run$model$loss),
         capped = run$capped)
  }, future.seed = TRUE,
  future.scheduling = structure(1, ordering = balanced_order(nrow(tasks))))
  warn_capped(vapply(out, `[[`, numeric(1), "capped"))
  split(out, tasks$rank)
}

# The consensus model at rank k from its runs (see nmf_consensus()).
consensus_programs <- function(x, k, runs, density_threshold, n_neighbors,
                               control, call, data) {
  nrun <- length(runs)
  U <- unit_columns(do.call(cbind, lapply(runs, `[[`, "W")))
  colnames(U) <- paste0("run", rep(seq_len(nrun), each = k), ".",
                        colnames(U))
  D <- unit_distances(U)
  n_neighbors <- min(n_neighbors, ncol(U) - 1L)
  density <- vapply(seq_len(ncol(U)), function(i) {
    mean(sort(D[i, -i], partial = seq_len(n_neighbors))[seq_len(n_neighbors)])
  }, numeric(1))
  kept <- density < density_threshold
  if (sum(kept) < k || n_distinct_cols(U[, kept, drop = FALSE]) < k) {
    warn_nmfkit(
      c("At rank {k}, {sum(kept)} of {ncol(U)} run components have local density below {.arg density_threshold} ({density_threshold}), too few for {k} program{?s}.",
        "i" = "All components are clustered at this rank; raise {.arg density_threshold} to silence this."),
      "density", call = call
    )
    kept[] <- TRUE
  }
  if (n_distinct_cols(U[, kept, drop = FALSE]) < k) {
    abort_nmfkit(c("At rank {k} the runs found fewer than {k} distinct components.",
                   "i" = "Try a smaller {.arg rank}."),
                 "rank", call = call)
  }
  Uk <- U[, kept, drop = FALSE]
  km <- stats::kmeans(t(Uk), centers = k, nstart = 10L, iter.max = 100L)
  med <- vapply(seq_len(k), function(j) {
    apply(Uk[, km$cluster == j, drop = FALSE], 1, stats::median)
  }, numeric(nrow(U)))
  med <- matrix(med, nrow(U), k)
  # unit columns are at most 1: their sums are finite at any data scale
  sums <- colSums(med)
  W <- sweep(med, 2, ifelse(sums > 0, sums, 1), "/")
  H <- solve_columns(x, function(b) {
    nnls_coef(b, W, 1e-12, 2000L, control$threads)
  }, control$block_size)
  ord <- order(-rowSums(H), seq_len(k))
  W <- W[, ord, drop = FALSE]
  H <- H[ord, , drop = FALSE]
  cluster <- rep(NA_integer_, ncol(U))
  cluster[kept] <- match(km$cluster, ord)
  sil <- if (k > 1L) {
    mean(cluster::silhouette(cluster[kept],
                             dmatrix = D[kept, kept, drop = FALSE])[, 3])
  } else {
    NA_real_
  }
  agreement <- vapply(seq_len(nrun), function(r) {
    cos <- cosine_similarity(W, U[, (r - 1L) * k + seq_len(k), drop = FALSE])
    mean(cos[cbind(seq_len(k), assign_max(cos))])
  }, numeric(1))
  new_nmfkit(
    W = W, H = H, loss = frobenius_rel_error(x, W, H), iterations = 1L,
    status = fit_status(W, H, "converged"), call = call, control = control,
    variant = "programs", x = data, dimnames = dimnames(x),
    image_dim = attr(x, "image_dim"), label = "Consensus NMF programs",
    components = U, run = rep(seq_len(nrun), each = k), cluster = cluster,
    density = density, kept = kept, silhouette = sil, agreement = agreement,
    run_loss = vapply(runs, `[[`, numeric(1), "loss"),
    density_threshold = density_threshold, neighbors = n_neighbors
  )
}

# Euclidean distances between the columns of U (unit or zero vectors):
# ||a - b||^2 = ||a||^2 + ||b||^2 - 2 a'b, clamped at 0.
unit_distances <- function(U) {
  n2 <- colSums(U^2)
  D <- sqrt(pmax(outer(n2, n2, "+") - 2 * crossprod(U), 0))
  diag(D) <- 0
  D
}

n_distinct_cols <- function(U) {
  if (!ncol(U)) return(0L)
  nrow(unique(t(U)))
}
