# Shared pieces of the mutational signature workflows (extraction,
# refitting, decomposition): the checks of catalogues and signature
# matrices, the matching of contexts by name, resampling of counts, the
# exposure solvers and cosine similarities of samples.

# A signature matrix: nonnegative, finite, columns summing to 1 (within
# `tol`), with column names (sig1, ... when it has none). A data frame of
# numeric columns is taken as a matrix.
check_signatures <- function(signatures, arg = rlang::caller_arg(signatures),
                             call = rlang::caller_env(), tol = 1e-3) {
  if (missing(signatures)) {
    abort_nmfkit("{.arg {arg}} is missing: give the signatures (contexts x signatures).",
                 "missing", call = call)
  }
  W <- check_catalogue_matrix(signatures, arg = arg, call = call)
  if (any(W < 0)) {
    pos <- which(W < 0, arr.ind = TRUE)[1, ]
    abort_nmfkit(c("{.arg {arg}} must be nonnegative.",
                   "x" = "It has {sum(W < 0)} negative entr{?y/ies}; the first at [{pos[1]}, {pos[2]}]."),
                 "negative", call = call)
  }
  if (is.null(colnames(W))) colnames(W) <- paste0("sig", seq_len(ncol(W)))
  if (anyDuplicated(colnames(W))) {
    abort_nmfkit(c("The signatures (columns of {.arg {arg}}) must have distinct names.",
                   "x" = "{.val {colnames(W)[duplicated(colnames(W))][1]}} appears more than once."),
                 "signatures", call = call)
  }
  sums <- colSums(W)
  bad <- abs(sums - 1) > tol
  if (any(bad)) {
    abort_nmfkit(c("Every signature (column of {.arg {arg}}) must sum to 1: a distribution over the contexts.",
                   "x" = "{sum(bad)} do{?es/} not: {.val {colnames(W)[bad][seq_len(min(3, sum(bad)))]}} sum{?s/} to {format(sums[bad][seq_len(min(3, sum(bad)))], digits = 4)}.",
                   "i" = "Divide each column by its sum: {.code sweep(W, 2, colSums(W), \"/\")}."),
                 "signatures", call = call, value = colnames(W)[bad])
  }
  W
}

# The rows of `W` in the order of the rows of `x`, matched by name. Names
# on both sides must be the same set; with names on one side only (or on
# neither) the row counts must agree and rows are taken in order.
align_contexts <- function(x, W, x_arg = "x", w_arg = "signatures",
                           call = rlang::caller_env()) {
  rx <- rownames(x)
  rw <- rownames(W)
  if (is.null(rx) || is.null(rw)) {
    if (nrow(x) != nrow(W)) {
      abort_nmfkit(c("{.arg {x_arg}} and {.arg {w_arg}} must have the same contexts (rows).",
                     "x" = "{.arg {x_arg}} has {nrow(x)} row{?s} and {.arg {w_arg}} {nrow(W)}."),
                   "context", call = call)
    }
    if (is.null(rw) && !is.null(rx)) rownames(W) <- rx
    return(W)
  }
  miss_w <- setdiff(rx, rw)
  miss_x <- setdiff(rw, rx)
  if (length(miss_w) || length(miss_x) || anyDuplicated(rx)) {
    abort_nmfkit(c("The contexts (row names) of {.arg {x_arg}} and {.arg {w_arg}} must match.",
                   "x" = if (length(miss_w)) "{length(miss_w)} context{?s} of {.arg {x_arg}} {?is/are} not in {.arg {w_arg}}: {.val {utils::head(miss_w, 3)}}.",
                   "x" = if (length(miss_x)) "{length(miss_x)} context{?s} of {.arg {w_arg}} {?is/are} not in {.arg {x_arg}}: {.val {utils::head(miss_x, 3)}}.",
                   "x" = if (anyDuplicated(rx)) "{.arg {x_arg}} names {.val {rx[duplicated(rx)][1]}} twice.",
                   "i" = "Contexts are matched by name, as {.code A[C>A]A}; see {.fn read_catalogue}."),
                 "context", call = call,
                 value = c(utils::head(miss_w, 3), utils::head(miss_x, 3)))
  }
  W[rx, , drop = FALSE]
}

# Counts where counts are required (resampling, likelihood ratios):
# whole numbers; the data are already checked nonnegative and finite.
check_counts <- function(x, arg = "x", why = "counts are resampled",
                         call = rlang::caller_env()) {
  vals <- if (inherits(x, "dgCMatrix")) x@x else x
  frac <- vals != round(vals)
  if (any(frac)) {
    first <- which(frac)[1]
    abort_nmfkit(c("{.arg {arg}} must hold counts (whole numbers): {why}.",
                   "x" = "It has {sum(frac)} non-integer entr{?y/ies}, the first {format(vals[first], digits = 6)}.",
                   "i" = "Give the mutation (or read) counts, not normalised values."),
                 "counts", call = call, value = vals[first])
  }
  invisible(x)
}

# Resampled counts: each stored entry drawn from Poisson(x) ("poisson"), or
# each column's total spread over its nonzero entries by a multinomial with
# the column's proportions ("multinomial"). Only the nonzero entries are
# drawn from, in column order, so a matrix and its dgCMatrix copy give the
# same draws; the result is stored as x is.
resample_counts <- function(x, how) {
  sparse <- inherits(x, "dgCMatrix")
  s <- if (sparse) Matrix::drop0(x) else dense_as_dgc(x)
  v <- s@x
  if (how == "poisson") {
    v <- as.double(stats::rpois(length(v), v))
  } else {
    p <- s@p
    for (j in seq_len(ncol(s))) {
      idx <- seq.int(p[j] + 1L, length.out = p[j + 1L] - p[j])
      if (!length(idx)) next
      tot <- sum(v[idx])
      v[idx] <- as.double(stats::rmultinom(1L, tot, v[idx]))
    }
  }
  s@x <- v
  if (sparse) s else as.matrix(s)
}

# Exposures of the columns of x on W (each column of W a distribution):
# argmin_{h >= 0} KL(x | W h) (Poisson NNLS, "kl") or ||x - W h||
# (NNLS, "frobenius"), exactly (the loss object's `exact_coef`).
solve_exposures <- function(x, W, loss, threads = 1L) {
  h <- check_loss(loss)$exact_coef(x, W, threads)
  h <- as.matrix(h)
  dimnames(h) <- list(colnames(W), colnames(x))
  h
}

# Cosine similarity of each column of a with the same column of b (0 where
# either is zero).
column_cosine <- function(a, b) {
  a <- as.matrix(a)
  b <- as.matrix(b)
  num <- colSums(a * b)
  den <- sqrt(colSums(a^2) * colSums(b^2))
  out <- ifelse(den > 0, num / den, 0)
  names(out) <- colnames(a)
  out
}
