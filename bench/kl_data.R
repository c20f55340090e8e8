# The count problems of bench/kl.R (issue 25), each a list with `x` a
# dgCMatrix, features as rows and samples as columns (nmfkit's orientation),
# and `labels` (a factor over the columns, or NULL). Source this file; it
# defines functions only.
#   kl_planted()      planted sparse Poisson counts, 4000 x 1500, rank 8
#   kl_pbmc()         fastTopics' pbmc_facs UMI counts, genes x cells
#   kl_newsgroups()   20 Newsgroups word counts (lda 1.4.2), words x documents
# fastTopics lives in the private library bench/lib (tools/install-deps.sh
# bench): kl_use_bench_lib() puts it first on .libPaths().

# Puts bench/lib (found from the working directory: the repository root or
# bench/) first on .libPaths(); returns it, or NULL when there is none.
kl_use_bench_lib <- function(dirs = c("bench/lib", "lib")) {
  lib <- dirs[dir.exists(dirs)][1]
  if (is.na(lib)) return(NULL)
  lib <- normalizePath(lib)
  .libPaths(unique(c(lib, .libPaths())))
  lib
}

# (a) Planted counts x ~ Poisson(W0 H0), 4000 features x 1500 samples,
# rank 8, drawn from R's RNG under `seed` (the caller's RNG state is kept):
#  * W0 (m x k), the topics: each entry is nonzero with probability 0.2 and
#    then Gamma(shape 0.5, rate 1), and a feature in no topic gets one
#    Gamma(0.5, 1) entry in a random topic; each column is scaled to sum to
#    1, so a topic is a distribution over features concentrated on ~1000 of
#    them, with a long tail inside them (gamma shape < 1).
#  * H0 (k x n), the samples' counts per topic: sample j has a total
#    N_j ~ round(LogNormal(log 600, 0.5)) (median 600 counts) split over
#    topics by weights that are nonzero with probability 0.35 (at least one
#    topic per sample) and then Gamma(0.5, 1), normalised.
#  So E[colSums(x)] = N_j and the mean count is ~0.17 per entry: about 10 %
#  of the entries are nonzero, like real UMI or word counts. Features and
#  samples that drew no count are dropped: at the default seed 135 features
#  (whose topic weights are tiny), leaving 3865 x 1500, 9.7 % nonzero.
kl_planted <- function(m = 4000L, n = 1500L, k = 8L, seed = 25L) {
  withr::with_seed(seed, {
    W0 <- matrix(stats::rbinom(m * k, 1L, 0.2) * stats::rgamma(m * k, 0.5),
                 m, k)
    lone <- which(rowSums(W0) == 0)
    W0[cbind(lone, sample.int(k, length(lone), replace = TRUE))] <-
      stats::rgamma(length(lone), 0.5)
    W0 <- sweep(W0, 2, colSums(W0), "/")
    P <- matrix(stats::rbinom(k * n, 1L, 0.35) * stats::rgamma(k * n, 0.5),
                k, n)
    empty <- which(colSums(P) == 0)
    P[cbind(sample.int(k, length(empty), replace = TRUE), empty)] <- 1
    N <- round(stats::rlnorm(n, log(600), 0.5))
    H0 <- sweep(P, 2, colSums(P), "/") * rep(N, each = k)
    mu <- W0 %*% H0
    counts <- stats::rpois(m * n, mu)
  })
  x <- Matrix::Matrix(as.numeric(counts), m, n, sparse = TRUE)
  rows <- Matrix::rowSums(x) > 0
  cols <- Matrix::colSums(x) > 0
  dimnames(x) <- list(paste0("f", seq_len(m)), paste0("s", seq_len(n)))
  list(x = x[rows, cols, drop = FALSE], labels = NULL,
       W0 = W0[rows, , drop = FALSE], H0 = H0[, cols, drop = FALSE],
       name = "planted")
}

# (b) fastTopics' pbmc_facs (Zheng et al. 2017, FACS-purified PBMCs):
# $counts is 3774 cells x 16791 genes; transposed to genes x cells, genes
# with no count dropped. labels: the cell type ($samples$celltype).
kl_pbmc <- function() {
  kl_use_bench_lib()
  if (!requireNamespace("fastTopics", quietly = TRUE)) {
    stop("kl_pbmc(): fastTopics is not installed; run ",
         "`tools/install-deps.sh bench` (it installs into bench/lib)",
         call. = FALSE)
  }
  e <- new.env()
  utils::data("pbmc_facs", package = "fastTopics", envir = e)
  x <- Matrix::t(e$pbmc_facs$counts)
  x <- methods::as(x, "CsparseMatrix")
  x <- x[Matrix::rowSums(x) > 0, , drop = FALSE]
  list(x = x, labels = factor(e$pbmc_facs$samples$celltype), name = "pbmc")
}

# (c) 20 Newsgroups word counts from the archived CRAN package lda 1.4.2:
# each document of newsgroup.<part>.documents is a 2-row matrix (0-based
# word index into newsgroup.vocab, count); duplicated words add up. Words x
# documents, words and documents with no count dropped. labels: the
# newsgroup (newsgroup.label.map). part "train" (11,269 documents), "test"
# or "all" (train then test).
kl_newsgroups <- function(part = c("train", "test", "all")) {
  part <- match.arg(part)
  if (!requireNamespace("lda", quietly = TRUE)) {
    stop("kl_newsgroups(): lda 1.4.2 is not installed; run ",
         "`tools/install-deps.sh bench`", call. = FALSE)
  }
  parts <- if (part == "all") c("train", "test") else part
  e <- new.env()
  utils::data(list = c(paste0("newsgroup.", parts, ".documents"),
                       paste0("newsgroup.", parts, ".labels"),
                       "newsgroup.vocab", "newsgroup.label.map"),
              package = "lda", envir = e)
  docs <- unlist(lapply(parts, function(p)
    get(paste0("newsgroup.", p, ".documents"), e)), recursive = FALSE)
  lab <- unlist(lapply(parts, function(p)
    get(paste0("newsgroup.", p, ".labels"), e)))
  vocab <- e$newsgroup.vocab
  x <- Matrix::sparseMatrix(
    i = unlist(lapply(docs, function(d) d[1, ] + 1L)),
    j = rep(seq_along(docs), vapply(docs, ncol, integer(1))),
    x = as.numeric(unlist(lapply(docs, function(d) d[2, ]))),
    dims = c(length(vocab), length(docs)), dimnames = list(vocab, NULL))
  groups <- as.character(e$newsgroup.label.map[[1]])
  labels <- factor(groups[lab], levels = groups)
  rows <- Matrix::rowSums(x) > 0
  cols <- Matrix::colSums(x) > 0
  list(x = x[rows, cols, drop = FALSE], labels = labels[cols],
       name = paste0("newsgroups-", part))
}

# The generalised KL divergence sum x log(x / WH) - x + WH of counts x
# (dgCMatrix, m x n) and factors W (m x k), H (k x n); half the Poisson
# deviance. (WH) is formed at the stored entries only, in column chunks.
kl_divergence <- function(x, W, H, chunk = 2e6) {
  x <- methods::as(x, "CsparseMatrix")
  p <- x@p
  total <- sum(colSums(W) * rowSums(H)) - sum(x@x)
  n <- ncol(x)
  j0 <- 1L
  while (j0 <= n) {
    j1 <- j0
    while (j1 < n && p[j1 + 1L] - p[j0] < chunk) j1 <- j1 + 1L
    idx <- seq.int(p[j0] + 1L, length.out = p[j1 + 1L] - p[j0])
    if (length(idx)) {
      i <- x@i[idx] + 1L
      j <- rep.int(j0:j1, diff(p[j0:(j1 + 1L)]))
      mu <- rowSums(W[i, , drop = FALSE] * t(H[, j, drop = FALSE]))
      v <- x@x[idx]
      total <- total + sum(v * log(v / mu))
    }
    j0 <- j1 + 1L
  }
  total
}
