# Data read in column blocks: a DelayedMatrix (HDF5Array's HDF5Matrix and
# TENxMatrix, or any DelayedArray with delayed operations on top) is never
# realised whole. check_data() turns it into an "nmfkit_blocks" object after
# one scan of its blocks; the fit pipeline scales it (on read), drops its
# zero lines (a delayed subset) and starts from it like any data; nmf()'s
# run streams it (run_streamed(): the core's driver, stream.hpp, asks for one
# pass over the blocks per iteration). ARCHITECTURE.md, "Data read in
# blocks".

# The streamed form of a DelayedMatrix `x`, after one scan of its blocks:
# a list of class "nmfkit_blocks" with the matrix (`src`), the exponent `e`
# its blocks are scaled by on read (x / 2^e), whether its blocks are read as
# sparse (`sparse`), and the scan's totals: `sum`, `x2` (sum of squares),
# `nnz` (nonzero entries). Returns list(x = , scan = ) as check_data().
#' @export
as_blocks.DelayedMatrix <- function(x, arg, call, allow_zero_matrix = FALSE,
                                    budget = NULL) {
  if (!requireNamespace("DelayedArray", quietly = TRUE)) {
    abort_nmfkit("{.arg {arg}} is a {.cls {class(x)[1]}}: reading it needs the {.pkg DelayedArray} package.",
                 "dependency", call = call)
  }
  check_delayed_seeds(x, arg, call)
  type <- DelayedArray::type(x)
  if (!type %in% c("double", "integer", "logical")) {
    abort_nmfkit(c("{.arg {arg}} must hold numbers.",
                   "x" = "Its type is {.val {type}}."),
                 "type", call = call, value = type)
  }
  if (nrow(x) == 0L || ncol(x) == 0L) {
    abort_nmfkit(c("{.arg {arg}} must have at least one row and one column.",
                   "x" = "It has {nrow(x)} row{?s} and {ncol(x)} column{?s}."),
                 "empty", call = call)
  }
  blocks <- new_blocks(x)
  # every later read of the blocks (the fit's passes, its start check,
  # predict(), summary()) holds the budget the scan held
  blocks$budget <- budget
  scan <- scan_blocks(blocks, budget, call = call)
  if (!scan$finite) {
    abort_nmfkit(c("{.arg {arg}} must have finite entries.",
                   "x" = "It has NA, NaN or infinite entries.",
                   "i" = "Missing entries (`na = \"omit\"`) need the data in memory."),
                 "nonfinite", call = call)
  }
  if (scan$min < 0) {
    abort_nmfkit(c("{.arg {arg}} must be nonnegative.",
                   "x" = "Its smallest entry is {format(scan$min)}."),
                 "negative", call = call, value = scan$min)
  }
  if (!allow_zero_matrix && scan$max <= 0) {
    abort_nmfkit(c("{.arg {arg}} must have at least one nonzero entry.",
                   "x" = "All {nrow(x)} x {ncol(x)} entries are zero."),
                 "zero", call = call)
  }
  blocks[c("sum", "x2", "nnz")] <- scan[c("sum", "x2", "nnz")]
  list(x = blocks, scan = scan)
}

# The in-memory sparse seeds of a DelayedMatrix pass the checks every
# sparse argument passes (check_sparse_structure()): read_source() subsets
# a dgCMatrix seed directly, and a corrupt one (a bad `p`, unsorted or
# out-of-range `i`) would be read out of bounds or fitted as nonsense.
check_delayed_seeds <- function(x, arg, call) {
  seeds <- tryCatch(DelayedArray::seedApply(x, identity),
                    error = function(e) list())
  for (seed in seeds) {
    if (!methods::is(seed, "sparseMatrix")) next
    problem <- tryCatch({
      check_sparse_structure(seed, arg, call)
      check_sparse_valid(seed, arg, call)
      NULL
    }, nmfkit_error = function(e) e)
    if (is.null(problem)) next
    abort_nmfkit(c("{.arg {arg}} is a {.cls {class(x)[1]}} over a {.cls {class(seed)[1]}} that is not valid.",
                   "x" = "{cli::ansi_strip(conditionMessage(problem))}",
                   "i" = "Rebuild the matrix with {.fn Matrix::sparseMatrix} before wrapping it in {.fn DelayedArray::DelayedArray}."),
                 "sparse", call = call)
  }
  invisible(x)
}

#' @export
resample_source.DelayedMatrix <- function(x) x

# A DelayedMatrix as a blocks object, before its scan.
new_blocks <- function(x) {
  sparse <- isTRUE(DelayedArray::is_sparse(x))
  structure(list(src = x, e = 0, sparse = sparse, src_sparse = sparse),
            class = "nmfkit_blocks")
}

# The Frobenius error terms of a fit kept with its DelayedMatrix (summary(),
# glance()): one scan for the scale, one pass for the terms.
#' @export
frobenius_terms.DelayedMatrix <- function(x, W, H) {
  checked <- as_blocks(x, "data", rlang::caller_env(),
                       allow_zero_matrix = TRUE)
  x <- checked$x
  frobenius_terms(scale_data(x, data_exponent(x, checked$scan)), W, H)
}

# The terms summed over the blocks, each read at the scale x / 2^e.
#' @export
frobenius_terms.nmfkit_blocks <- function(x, W, H) {
  e <- x$e
  W <- scale_data(W, e %/% 2)
  H <- scale_data(H, e - e %/% 2)
  layout <- block_layout(x)
  read <- block_reader(x)
  wtx_h <- 0
  for (b in seq_along(layout$start)) {
    cols <- layout$start[b] + seq_len(layout$len[b])
    read$collect()
    block <- read$read(layout$start[b], layout$len[b])
    wtx_h <- wtx_h + sum(H[, cols, drop = FALSE] *
                           as.matrix(Matrix::crossprod(W, block)))
    rm(block)
  }
  x2 <- x$x2 * 4^(-e)
  list(err = x2 - 2 * wtx_h + sum(crossprod(W) * tcrossprod(H)), x2 = x2,
       W = W, H = H)
}

#' @export
dim.nmfkit_blocks <- function(x) {
  d <- dim(x$src)
  c(if (is.null(x$rows)) d[1] else length(x$rows),
    if (is.null(x$cols)) d[2] else length(x$cols))
}

#' @export
dimnames.nmfkit_blocks <- function(x) {
  dn <- dimnames(x$src)
  if (is.null(dn)) return(NULL)
  if (!is.null(x$rows) && !is.null(dn[[1]])) dn[[1]] <- dn[[1]][x$rows]
  if (!is.null(x$cols) && !is.null(dn[[2]])) dn[[2]] <- dn[[2]][x$cols]
  dn
}

#' @export
print.nmfkit_blocks <- function(x, ...) {
  cat(sprintf("<%d x %d %s matrix read in blocks>\n", nrow(x), ncol(x),
              class(x$src)[1]))
  invisible(x)
}

# The source methods of a blocks object (source.R's generics).

#' @export
scan_data.nmfkit_blocks <- function(x, ...) scan_blocks(x, ...)

#' @export
is_streamed.nmfkit_blocks <- function(x) TRUE

#' @export
source_data.nmfkit_blocks <- function(x) x$src

#' @export
nonzero_share.nmfkit_blocks <- function(x, stop_at = 1) {
  x$nnz / (as.double(nrow(x)) * ncol(x))
}

# Scaled as its blocks are read.
#' @export
scale_data.nmfkit_blocks <- function(x, e) {
  x$e <- x$e + e
  x
}

# The sum from the scan (at the scale of x); the other named starts read
# the data whole.
#' @export
data_total.nmfkit_blocks <- function(x, init, arg, call) {
  if (init != "random") {
    abort_nmfkit(c("{.arg {arg}} = {.val {init}} needs the data in memory.",
                   "x" = "The data are a {.cls {class(x$src)[1]}}, read in blocks.",
                   "i" = "Use {.code init = \"random\"} (the default for such data) or a list(W = , H = )."),
                 "init", call = call, value = init)
  }
  x$sum * 2^(-x$e)
}

# The kept lines, read as rows and columns of its source (zero lines
# change none of its totals).
#' @export
kept_lines.nmfkit_blocks <- function(x, keep) {
  compose <- function(old, kept) {
    if (is.null(old)) which(kept) else old[kept]
  }
  x$rows <- compose(x$rows, keep$rows)
  x$cols <- compose(x$cols, keep$cols)
  x
}

# One run of the streamed fit from `start`, under the Frobenius loss (beta
# 2) or a beta-divergence (method "cd" or "mu"): the core's driver asks for
# a pass over the blocks per iteration (plus those for the start). Under a
# sequential future plan the blocks are read here, one at a time; under any
# other plan each pass is one future per block (stream_pass()). Either way
# the blocks' terms are summed in block order, so every plan gives the same
# bits.
run_streamed <- function(x, start, method, control, penalty, fixed,
                         stored, beta = 2) {
  layout <- block_layout(x, control$block_size)
  read <- pass_reader(x, layout, control$block_size)
  pass <- if (!inherits(future::plan(), "sequential")) {
    function(plan, H, H_plain) {
      stream_pass(x, layout, plan, H, H_plain, control$threads)
    }
  }
  stream <- stream_params(x, layout, stored, read, pass = pass)
  core_fit(NULL, start$W, start$H, core_params(
    method, control, beta = beta, callback = progress_callback(control),
    penalty = penalty, fixed = fixed, stream = stream))
}

# The entries x > 0 where W H is not positive (a start with infinite
# divergence), for data in memory or read in blocks (H cut to each block).
zero_fits <- function(x, W, H) UseMethod("zero_fits")

#' @export
zero_fits.default <- function(x, W, H) r_zero_fits(x, W, H)

#' @export
zero_fits.nmfkit_blocks <- function(x, W, H) {
  layout <- block_layout(x)
  read <- block_reader(x)
  bad <- 0
  for (b in seq_along(layout$start)) {
    cols <- layout$start[b] + seq_len(layout$len[b])
    read$collect()
    block <- read$read(layout$start[b], layout$len[b])
    bad <- bad + r_zero_fits(block, W, H[, cols, drop = FALSE])
    rm(block)
  }
  bad
}

# One pass as futures: block b's columns of H (and of the plain iterate,
# when the plan pushes) travel to a worker, which reads the block itself
# (a file-backed matrix sends its path, never its data) and returns the
# block's new H and its terms (W's sums, k x m and k x k).
stream_pass <- function(x, layout, plan, H, H_plain, threads) {
  items <- lapply(seq_along(layout$start), function(b) {
    cols <- layout$start[b] + seq_len(layout$len[b])
    list(b = b, H = H[, cols, drop = FALSE],
         H_plain = if (!is.null(H_plain)) H_plain[, cols, drop = FALSE])
  })
  # (workers attach the packages of the data's classes: their startup
  # messages, relayed once per worker and pass, are noise here)
  suppressPackageStartupMessages(
    future.apply::future_lapply(items, function(item) {
      block <- read_cols(x, layout$start[item$b], layout$len[item$b])
      r_stream_block(block, plan, item$H, item$H_plain, threads)
    }, future.seed = NULL))
}

# Data in memory (a double matrix or dgCMatrix) as a blocks object, for the
# online fit's mini-batches: the totals of scan_blocks() without a read.
memory_blocks <- function(x) {
  sparse <- inherits(x, "dgCMatrix")
  vals <- if (sparse) x@x else x
  structure(list(src = x, e = 0, sparse = sparse, src_sparse = sparse,
                 sum = sum(vals), x2 = sum(vals * vals),
                 nnz = sum(vals != 0)),
            class = "nmfkit_blocks")
}

# The mini-batches of the online fit: `batch_size` columns (default: the
# H update's chunk, about n / 64 and at least 16: 64 batches per pass),
# rounded up to whole chunks.
batch_layout <- function(x, batch_size = NULL) {
  n <- ncol(x)
  chunk <- max(16, ceiling(n / 64))
  len <- min(n, chunk * max(1, ceiling((batch_size %||% chunk) / chunk)))
  start <- seq(0, n - 1, by = len)
  list(start = as.integer(start), len = as.integer(pmin(len, n - start)))
}

# One run of the online fit (Frobenius loss) from `start`: one pass over
# the mini-batches per iteration, each batch's H then W updated (HALS, the
# passes by Gillis and Glineur's cost rule unless control$inner is given),
# and a last pass solving H given the final W.
run_online <- function(x, start, control, penalty, fixed, stored) {
  layout <- batch_layout(x, control$batch_size)
  read <- pass_reader(x, layout, control$block_size)
  engine <- control
  if (is.null(engine$inner)) engine$inner <- "auto"
  stream <- stream_params(x, layout, stored, read,
                          forget = control$forget %||% 0.01)
  core_fit(NULL, start$W, start$H, core_params(
    "hals", engine, callback = progress_callback(control), penalty = penalty,
    fixed = fixed, stream = stream))
}

# read(b): block b of `layout` for the glue's block source, with all the
# rows of x's source (pass_reader()'s blocks keep every row; the glue drops
# those x leaves out, `rows` of stream_params(), as it copies the block,
# instead of Matrix's `[` on R's one thread for every block).
pass_reader <- function(x, layout, budget) {
  x$rows <- NULL
  reader <- block_reader(x, budget)
  function(b) {
    reader$collect()
    reader$read(layout$start[b], layout$len[b])
  }
}

# The block source of core_params(): the m x n data's blocks of columns
# (0-based `start`, `len` of `layout`), ||x||^2 at the core's scale and the
# `stored` entries of the passes' cost rule; `read(b)` reads block b with
# all `m_src` rows of x's source (pass_reader()), of which the glue keeps
# `rows` (NULL: all); `pass` (or NULL) runs a whole pass as futures; with
# `forget`, the online fit's forgetting factor per pass.
stream_params <- function(x, layout, stored, read, pass = NULL,
                          forget = NULL) {
  out <- list(m = nrow(x), n = ncol(x), x2 = x$x2 * 4^(-x$e),
              stored = stored, start = layout$start, len = layout$len,
              read = read, pass = pass, rows = x$rows,
              m_src = nrow(x$src))
  if (!is.null(forget)) out$forget <- forget
  out
}

# solve(block) for every block of columns (predict(): each column's
# coefficients depend on that column only), bound in order.
#' @export
solve_columns.nmfkit_blocks <- function(x, solve, budget = NULL) {
  layout <- block_layout(x, budget)
  read <- block_reader(x, budget)
  parts <- vector("list", length(layout$start))
  for (b in seq_along(layout$start)) {
    read$collect()
    block <- read$read(layout$start[b], layout$len[b])
    parts[[b]] <- solve(block)
    rm(block)
  }
  h <- do.call(cbind, parts)
  dimnames(h) <- NULL
  h
}

# Functions that hold out entries in masked fits (nmf_rank(), nmf_tune())
# need x in memory: a classed error for data read in blocks, with the
# way round.
abort_streamed_holdout <- function(x, fn, call = rlang::caller_env()) {
  if (!is_delayed(x)) return(invisible(NULL))
  abort_nmfkit(c("{.fn {fn}} scores ranks on held-out entries, and a fit that leaves entries out cannot read {.arg x} in blocks.",
                 "x" = "{.arg x} is a {.cls {class(x)[1]}}, read in blocks.",
                 "i" = "Leaving entries out makes every column's coefficients solve their own system (the Gram matrix of the basis over the rows observed in that column), where a fit read in blocks forms one Gram matrix per pass for every column; its blocks carry no per-entry weights.",
                 "i" = "Work on a random sample of columns, e.g. {.code as(x[, sort(sample(ncol(x), 5000))], \"dgCMatrix\")}, then fit the chosen setting to all of {.arg x}."),
               "streamed", call = call)
}
