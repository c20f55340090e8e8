# The data a fit reads, as a source: a double matrix or a dgCMatrix in
# memory (one block) or an "nmfkit_blocks" object (stream.R: a
# DelayedMatrix read a block of columns at a time). What depends on where
# the data live is a generic here, with the in-memory methods; the block
# methods live in stream.R. No other file asks which source it has
# (ARCHITECTURE.md, "The data interface" and "Checklist: adding a data
# source").

# Is x a DelayedArray matrix (to be read in blocks)?
is_delayed <- function(x) {
  methods::is(x, "DelayedMatrix")
}

# A DelayedMatrix as a source read in blocks, after one scan of them:
# list(x = the source, scan = the scan), as check_data() returns (the
# method is stream.R's).
as_blocks <- function(x, arg, call, allow_zero_matrix = FALSE,
                      budget = NULL) {
  UseMethod("as_blocks")
}

# One read of the data: finite, min, max and which rows and columns hold a
# nonzero (a dgCMatrix's also checks its compressed-column structure, as
# `valid`; blocks add the totals sum, x2 and nnz).
scan_data <- function(x, ...) UseMethod("scan_data")

#' @export
scan_data.default <- function(x, ...) r_dense_scan(x)

#' @export
scan_data.dgCMatrix <- function(x, ...) r_dgc_scan(x)

# Is the source read in blocks (the streamed and online drivers)?
is_streamed <- function(x) UseMethod("is_streamed")

#' @export
is_streamed.default <- function(x) FALSE

# x restricted to the lines `keep` (from nonzero_lines(); NULL keeps all).
kept_lines <- function(x, keep) {
  if (is.null(keep)) return(x)
  UseMethod("kept_lines")
}

#' @export
kept_lines.default <- function(x, keep) {
  x[keep$rows, keep$cols, drop = FALSE]
}

# The sum of the entries (the scale of the starting factors) for a start
# `init` (a named start); signed data (the manifold ALM methods) give the
# sum of magnitudes, so the scale is a real number.
data_total <- function(x, init, arg, call) UseMethod("data_total")

#' @export
data_total.default <- function(x, init, arg, call) {
  # (the stored values of a dgCMatrix directly: Matrix's sum() method
  # costs more than the sum)
  vals <- if (inherits(x, "dgCMatrix")) x@x else x
  total <- sum(vals)
  if (length(vals) && min(vals) < 0) total <- sum(abs(vals))
  total
}

# The share of nonzero entries of x (NA counts as zero), stopping once it
# reaches `stop_at`.
nonzero_share <- function(x, stop_at = 1) UseMethod("nonzero_share")

# A dense matrix is read in column blocks of about a million entries (no
# logical copy of the data).
#' @export
nonzero_share.default <- function(x, stop_at = 1) {
  total <- as.double(nrow(x)) * ncol(x)
  if (total == 0) return(0)
  step <- max(1L, as.integer(2^20 %/% max(nrow(x), 1L)))
  count <- 0
  for (start in seq(1L, ncol(x), by = step)) {
    cols <- start:min(ncol(x), start + step - 1L)
    count <- count + sum(x[, cols] != 0, na.rm = TRUE)
    if (count >= stop_at * total) break
  }
  count / total
}

#' @export
nonzero_share.dgCMatrix <- function(x, stop_at = 1) {
  total <- as.double(nrow(x)) * ncol(x)
  if (total == 0) return(0)
  sum(x@x != 0, na.rm = TRUE) / total
}

# x / 2^e, staying sparse; e = 0 returns x itself (no copy). Subnormal data
# need e below -1023, where 2^-e overflows: multiply in steps.
scale_data <- function(x, e) {
  if (e == 0) return(x)
  UseMethod("scale_data")
}

#' @export
scale_data.default <- function(x, e) {
  steps <- rep(sign(-e) * 1000, abs(e) %/% 1000)
  steps <- c(steps, -e - sum(steps))
  if (inherits(x, "dgCMatrix")) {
    for (s in steps) x@x <- x@x * 2^s
    return(x)
  }
  for (s in steps) x <- x * 2^s
  x
}

# solve(x) for a function of the columns (predict(): each column's
# coefficients depend on that column only); a source read in blocks is
# solved a block at a time and the results bound in order.
solve_columns <- function(x, solve, budget = NULL) {
  UseMethod("solve_columns")
}

#' @export
solve_columns.default <- function(x, solve, budget = NULL) solve(x)

# The data a column bootstrap resamples (nmf_bootstrap()): in memory,
# stored as its share of nonzeros says (as nmf()'s choice of solver), never
# as it came, so a matrix and its dgCMatrix copy give the same replicates.
# A DelayedMatrix stays one (its own method): its replicates are delayed
# column subsets, fitted in blocks.
resample_source <- function(x) UseMethod("resample_source")

#' @export
resample_source.default <- function(x) {
  if (nonzero_share(x, 0.25) >= 0.25) return(as.matrix(x))
  if (is.matrix(x)) dense_as_dgc(x) else x
}

# The refusal of functions that need the data in memory (`what` they do
# with it); data in memory pass.
need_memory <- function(x, what, arg = "x", call = rlang::caller_env()) {
  if (!is_delayed(x) && !is_streamed(x)) return(invisible(x))
  abort_nmfkit(c("{what} needs {.arg {arg}} in memory.",
                 "x" = "{.arg {arg}} is a {.cls {class(source_data(x))[1]}}, read in blocks."),
               "streamed", call = call)
}

# The user's data behind a source (a blocks object's DelayedMatrix).
source_data <- function(x) UseMethod("source_data")

#' @export
source_data.default <- function(x) x

# The terms of the Frobenius error of W H without forming the residual:
# list(err = ||x - W H||^2, x2 = ||x||^2) from ||x||^2 - 2 tr(W'x H') +
# tr(W'W H H'), computed on x / 2^e, W / 2^(e %/% 2) and H / 2^(e - e %/% 2)
# (exact powers of two; e from data_exponent()), so data near
# .Machine$double.xmax or 1e-300 give the error of any other scale; with
# those scaled x, W and H. NA entries (a masked fit's data) count as 0.
frobenius_terms <- function(x, W, H) UseMethod("frobenius_terms")

#' @export
frobenius_terms.default <- function(x, W, H) {
  sparse <- inherits(x, "dgCMatrix")
  vals <- if (sparse) x@x else x
  if (anyNA(vals)) {
    if (sparse) x@x[is.na(x@x)] <- 0 else x[is.na(x)] <- 0
  }
  # x / 2^e = (W / 2^ew) (H / 2^(e - ew)): W by its own exponent, as its
  # scale need not be half the data's (consensus programs sum to 1, their
  # H carries all of it; an even split overflows crossprod(W) at 2^-1060)
  e <- data_exponent(x)
  ew <- data_exponent(W)
  if (e != 0 || ew != 0) {
    x <- scale_data(x, e)
    W <- scale_data(W, ew)
    H <- scale_data(H, e - ew)
  }
  x2 <- if (sparse) sum(x@x^2) else sum(x^2)
  wtx <- as.matrix(Matrix::crossprod(W, x))
  err <- x2 - 2 * sum(H * wtx) + sum(crossprod(W) * tcrossprod(H))
  list(err = err, x2 = x2, x = x, W = W, H = H)
}

# A dense matrix as a dgCMatrix (its nonzero entries stored), attributes
# such as image_dim dropped.
dense_as_dgc <- function(x) {
  methods::as(methods::as(methods::as(x, "CsparseMatrix"), "generalMatrix"),
              "dMatrix")
}
