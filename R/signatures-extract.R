#' Extract mutational signatures: resampled replicates, matched clusters,
#' stability and rank
#'
#' De novo signatures from a catalogue of counts by the method of
#' SigProfilerExtractor (Islam et al. 2022), on nmfkit's engine:
#'
#' 1. **Replicates.** For every rank in `rank`, `nrun` replicates of the
#'    catalogue are drawn, `x* ~ Poisson(x)` entry by entry
#'    (`resample = "poisson"`) or each sample's total spread by a
#'    multinomial with its proportions (`"multinomial"`), and each is
#'    fitted by [nmf()] under `loss` (by default KL, the Poisson
#'    likelihood, by its coordinate descent) from a random start. Each
#'    replicate's signatures (columns of `W`) are scaled to sum to 1.
#' 2. **Matched clustering.** The `nrun * k` signatures of rank `k` are
#'    clustered into `k` clusters holding exactly one signature of every
#'    replicate: starting from the replicate of lowest loss, each
#'    replicate's signatures are assigned one to one to the cluster
#'    centroids by the Hungarian algorithm on cosine similarity
#'    ([match_components()]), the centroids become the clusters' means,
#'    and this repeats until no assignment changes.
#' 3. **Stability.** The silhouette width of every signature under the
#'    cosine distance `1 - cos`; per rank the *stability* is their mean
#'    and the *minimum stability* the smallest of the clusters' mean
#'    widths (1 when the replicates agree, near 0 or below when a cluster
#'    mixes different signatures). At rank 1 both are 1.
#' 4. **Consensus.** Each cluster's mean, scaled to sum to 1, is a
#'    consensus signature; its per-entry spread over the replicates is
#'    kept (`sd`, and the `(1 - level) / 2`, `(1 + level) / 2` quantiles).
#'    The exposures are refitted on the original catalogue by Poisson
#'    NNLS ([refit_signatures()] with `loss = "kl"`). With `refine = TRUE`
#'    (the default) the consensus and these exposures then start one fit
#'    of the original catalogue under `loss`: its signatures (scaled to sum
#'    to 1) and exposures are reported, the optimum of the catalogue's own
#'    likelihood nearest the consensus. A mean of resampled fits carries
#'    the resampling noise; on planted catalogues the refined signatures
#'    are closer to the truth (mean cosine 0.99950 against 0.99948 at rank
#'    5 over 10 catalogues, `bench/signatures-results.md`) and equal to the
#'    best of many fits of the catalogue itself. The spread (`sd`,
#'    `lower`, `upper`) and the stability stay the replicates'. With
#'    `refine = FALSE` the consensus is reported as it is
#'    (SigProfilerExtractor's centroids). The *reconstruction cosine* of
#'    each sample is the cosine similarity of `x_j` to `W h_j`.
#' 5. **Rank.** Ranks whose stability is at least `stability` and whose
#'    minimum stability is at least `min_stability` (SigProfilerExtractor's
#'    0.8 and 0.2) are *stable*. Of the stable ranks, the chosen rank is
#'    the smallest whose mean reconstruction cosine is within `cosine_tol`
#'    of the largest stable rank's: more signatures are taken only while
#'    they still improve the reconstruction. With no stable rank, the most
#'    stable rank is chosen, with a warning. The rule's success on planted
#'    catalogues is in `bench/README.md` ("Signatures").
#'
#' With `rank = "auto"` (or [auto_rank()] for a range `lo` to `hi`), the
#' rank is first found by the adaptive held-out search of [nmf()]'s
#' `rank = "auto"` on the catalogue itself (held-out entries scored in the
#' replicates' own loss, by default the Poisson deviance), and the
#' replicates are drawn at that rank only; the search's path is kept as
#' `$rank_search` and the chosen rank is the searched one (the stability
#' rule of 5. is then reported, not applied).
#'
#' Replicates go through [future.apply::future_lapply()] with
#' `future.seed = TRUE` (each draws its resample and start from its own
#' stream), so `set.seed()` gives the same signatures under every
#' [future::plan()] and thread count; progress is reported through
#' `progressr`; Ctrl-C stops between (and within) replicates.
#'
#' @param x A catalogue of counts (whole numbers), contexts x samples: a
#'   matrix, numeric data frame or `dgCMatrix`, or data in a container
#'   (see [nmfkit-containers]).
#' @param rank The ranks to try: one whole number or several (`2:8`); or
#'   `"auto"`, or [auto_rank()] for a range `lo` to `hi`
#'   (`auto_rank(2, 12)`): the rank found by the held-out search (see
#'   Details).
#' @param nrun Replicates per rank, at least 2.
#' @param resample `"poisson"` or `"multinomial"` (see 1.).
#' @param loss The loss of the replicates' fits, as in [nmf()]: `"kl"` by
#'   default.
#' @param stability,min_stability,cosine_tol The rank rule (see 5.).
#' @param level The level of the signatures' per-entry intervals.
#' @param refine Refine the consensus by a fit of the catalogue itself
#'   (see 4.): `TRUE` or `FALSE`.
#' @param keep_data Keep a reference to `x` in the result.
#' @param ... Arguments of [nmf()] for every replicate: `method` and
#'   `control` (by default `nmf_control(max_iter = 1000)`).
#' @param assay The assay (or Seurat layer) of a container `x`.
#' @return An object of class `nmfkit_signatures`: a list with `results`
#'   (one row per rank: `rank`, `stability`, `min_stability`, `cosine`
#'   (mean reconstruction cosine), `min_cosine`, `stable`), `rank` (the
#'   chosen one), `fits` (per rank, named by rank: `W` the consensus
#'   signatures, `H` the exposures, `sd`, `lower`, `upper` the spread of
#'   `W`, `silhouette` (per cluster), `cosine` (per sample), `replicates`
#'   (every replicate's signatures, contexts x `nrun` x `k`, in cluster
#'   order), `run_loss`), the arguments, `data` and `call`. Methods:
#'   `print()`, `summary()`, `plot()`, `tidy()`, `coef()`, `basis()`
#'   (of the chosen rank), and [decompose_signatures()],
#'   [refit_signatures()], [entry_assignments()] take it.
#' @references Islam, S. M. A. et al. (2022). Uncovering novel mutational
#'   signatures by de novo extraction with SigProfilerExtractor. *Cell
#'   Genomics* 2, 100179. Alexandrov, L. B., Nik-Zainal, S., Wedge, D. C.,
#'   Campbell, P. J. and Stratton, M. R. (2013). Deciphering signatures of
#'   mutational processes operative in human cancer. *Cell Reports* 3,
#'   246-259.
#' @examples
#' set.seed(1)
#' W <- simulate_signatures(3)
#' sim <- simulate_catalogue(W, n = 30, mutations = 2000, active = 2)
#' sig <- nmf_signatures(sim$counts, rank = 2:4, nrun = 10)
#' sig
#' plot(sig)
#' match_components(W, basis(sig))
#' @export
nmf_signatures <- function(x, rank, nrun = 100L,
                           resample = c("poisson", "multinomial"),
                           loss = "kl", stability = 0.8, min_stability = 0.2,
                           cosine_tol = 0.005, level = 0.9, refine = TRUE,
                           keep_data = TRUE, ..., assay = "counts") {
  call <- match.call()
  x <- input_matrix(x, assay)
  # rank = "auto": a vector c(lo, hi) would be two ranks to compare here
  search <- if (!missing(rank)) as_auto_rank(rank, pair = FALSE)
  if (!is.null(search)) abort_streamed_holdout(x, "nmf_signatures", call = call)
  x <- check_data(x)
  if (missing(rank)) check_rank(rank, min(dim(x)))
  if (is.null(search)) ranks <- check_ranks(rank, min(dim(x)), arg = "rank")
  nrun <- check_count(nrun, min = 2)
  resample <- check_choice(resample)
  check_loss(loss)
  stability <- check_number(stability, min = -1, max = 1)
  min_stability <- check_number(min_stability, min = -1, max = 1)
  cosine_tol <- check_number(cosine_tol, min = 0, max = 1)
  level <- check_level(level)
  check_flag(refine)
  check_flag(keep_data)
  check_counts(x, why = "the replicates resample them")
  check_dots_named(c("method", "control"), "nmf_signatures")
  args <- list(...)
  args$control <- check_control(args$control %||% nmf_control(max_iter = 1000L),
                                fn = "nmf")
  args$loss <- loss
  args$init <- "random"
  path <- NULL
  if (!is.null(search)) {
    # the search is the one of nmf(rank = "auto"), on the catalogue itself
    path <- rank_search(x, search, nmf, args[c("method", "control", "loss")][
      !vapply(args[c("method", "control", "loss")], is.null, logical(1))],
      call = call)
    ranks <- path$rank
  }
  if (is.null(colnames(x))) colnames(x) <- paste0("sample", seq_len(ncol(x)))
  runs <- consensus_runs(x, ranks, nrun, args, resample = resample)
  fits <- lapply(ranks, function(k) {
    signature_consensus(x, k, runs[[as.character(k)]], level,
                        if (refine) args, args$control$threads)
  })
  names(fits) <- as.character(ranks)
  results <- data.frame(
    rank = ranks,
    stability = vapply(fits, function(f) f$stability, numeric(1)),
    min_stability = vapply(fits, function(f) min(f$silhouette), numeric(1)),
    cosine = vapply(fits, function(f) mean(f$cosine), numeric(1)),
    min_cosine = vapply(fits, function(f) min(f$cosine), numeric(1)),
    row.names = NULL
  )
  results$stable <- results$stability >= stability &
    results$min_stability >= min_stability
  chosen <- if (is.null(path)) choose_signature_rank(results, cosine_tol) else
    path$rank
  structure(
    list(results = results, rank = chosen, fits = fits, ranks = ranks,
         rank_search = path,
         nrun = nrun, resample = resample, loss = loss,
         stability = stability, min_stability = min_stability,
         cosine_tol = cosine_tol, level = level, refine = refine,
         data = if (keep_data) x, call = call),
    class = "nmfkit_signatures"
  )
}

# The rank rule of nmf_signatures() (its 5.).
choose_signature_rank <- function(results, cosine_tol,
                                  call = rlang::caller_env()) {
  stable <- results[results$stable, , drop = FALSE]
  if (!nrow(stable)) {
    best <- results$rank[which.max(replace(results$stability,
                                           is.na(results$stability), -Inf))]
    warn_nmfkit(c("No rank reaches the stability thresholds; rank {best}, the most stable, is chosen.",
                  "i" = "Try more replicates ({.arg nrun}), smaller ranks, or lower {.arg stability}."),
                "stability", call = call)
    return(best)
  }
  top <- stable$cosine[which.max(stable$rank)]
  min(stable$rank[stable$cosine >= top - cosine_tol])
}

# The consensus of rank k from its runs (nmf_signatures(), 2. to 4.);
# `refine`, the replicates' nmf() arguments or NULL, refines it by a fit of
# x started from it.
signature_consensus <- function(x, k, runs, level, refine, threads) {
  Ws <- lapply(runs, function(r) {
    s <- colSums(r$W)
    sweep(r$W, 2, ifelse(s > 0, s, 1), "/")
  })
  loss <- vapply(runs, `[[`, numeric(1), "loss")
  perm <- matched_clusters(Ws, which.min(loss))
  nrun <- length(Ws)
  m <- nrow(x)
  # replicates[, r, c]: run r's signature in cluster c
  reps <- array(0, c(m, nrun, k))
  for (r in seq_len(nrun)) reps[, r, ] <- Ws[[r]][, perm[r, ]]
  W <- apply(reps, c(1, 3), mean)
  W <- matrix(W, m, k)
  W <- sweep(W, 2, pmax(colSums(W), .Machine$double.xmin), "/")
  cluster <- rep(seq_len(k), each = nrun)
  U <- matrix(reps, m, nrun * k)
  sil <- if (k > 1L) {
    d <- 1 - cosine_similarity(U, U)
    d[d < 0] <- 0
    diag(d) <- 0
    s <- cluster::silhouette(cluster, dmatrix = d)[, 3]
    list(width = mean(s), cluster = as.numeric(tapply(s, cluster, mean)))
  } else {
    list(width = 1, cluster = 1)
  }
  dimnames(W) <- list(rownames(x), paste0("sig", seq_len(k)))
  H <- solve_exposures(x, W, "kl", threads)
  if (!is.null(refine)) {
    # a context no replicate gave weight (its counts resampled to zero in
    # every replicate) starts at a tiny weight: the loss of a start with
    # W H = 0 where x > 0 is infinite (signatures sum to 1, so the floor is
    # free of the data's scale)
    lost <- Matrix::rowSums(x) > 0 & rowSums(W) == 0
    W0 <- W
    W0[lost, ] <- 1e-12
    refine$init <- list(W = W0, H = H)
    fit <- rlang::inject(nmf(x, k, !!!refine))
    s <- colSums(fit$W)
    s <- ifelse(s > 0, s, 1)
    W[] <- sweep(fit$W, 2, s, "/")
    H[] <- fit$H * s
  }
  ord <- order(-rowSums(H), seq_len(k))
  W <- W[, ord, drop = FALSE]
  reps <- reps[, , ord, drop = FALSE]
  colnames(W) <- rownames(H) <- paste0("sig", seq_len(k))
  H <- H[ord, , drop = FALSE]
  rownames(H) <- colnames(W)
  q <- function(p) {
    out <- apply(reps, c(1, 3), stats::quantile, probs = p, names = FALSE)
    matrix(out, m, k, dimnames = dimnames(W))
  }
  dimnames(reps) <- list(rownames(x), NULL, colnames(W))
  list(W = W, H = H,
       sd = matrix(apply(reps, c(1, 3), stats::sd), m, k,
                   dimnames = dimnames(W)),
       lower = q((1 - level) / 2), upper = q((1 + level) / 2),
       stability = sil$width, silhouette = sil$cluster[ord],
       cosine = column_cosine(x, W %*% H), replicates = reps,
       run_loss = loss)
}

# Matched clustering: perm[r, c] is the signature of replicate r in
# cluster c, one per replicate per cluster; centroids start at replicate
# `first` and are the clusters' means.
matched_clusters <- function(Ws, first) {
  k <- ncol(Ws[[1]])
  nrun <- length(Ws)
  centroids <- Ws[[first]]
  perm <- matrix(0L, nrun, k)
  for (iter in seq_len(100L)) {
    new <- t(vapply(Ws, function(Wr) {
      assign_max(cosine_similarity(centroids, Wr))
    }, integer(k)))
    if (k == 1L) new <- matrix(new, nrun, 1L)
    if (identical(new, perm)) break
    perm <- new
    centroids <- Reduce(`+`, lapply(seq_len(nrun), function(r) {
      Ws[[r]][, perm[r, ], drop = FALSE]
    })) / nrun
  }
  perm
}
