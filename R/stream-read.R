# Reading a blocks object (stream.R): the columns of a block from its
# source (read_cols(), with the direct reads of a dgCMatrix seed and a 10x
# file), the block layout of the passes, the first scan, and what a block
# costs against the memory budget (block_cost(), block_reader()).
# ARCHITECTURE.md, "Data read in blocks" and "The memory budget".

# Columns j0 + 1, ..., j0 + len of a blocks object (of its kept lines,
# `rows` and `cols` when set) as a double matrix or a dgCMatrix (as its
# `sparse` says), at the scale x / 2^e.
read_cols <- function(x, j0, len) {
  idx <- j0 + seq_len(len)
  cols <- if (is.null(x$cols)) idx else x$cols[idx]
  block <- read_source(x$src, cols, x$src_sparse)
  if (!is.null(x$rows)) block <- block[x$rows, , drop = FALSE]
  if (is.matrix(block)) {
    if (!is.double(block)) storage.mode(block) <- "double"
    dimnames(block) <- NULL
    if (x$sparse) block <- dense_as_dgc(block)
  } else {
    block@Dimnames <- list(NULL, NULL)
    if (!x$sparse) block <- as.matrix(block)
  }
  scale_data(block, x$e)
}

# Columns `cols` (increasing) of src: a matrix in memory is subset; a
# DelayedMatrix is read through DelayedArray's extract_array() /
# extract_sparse_array(), which apply delayed operations to the block only.
# Two pristine seeds are read directly, 3-4 times faster (the generic path
# builds a SparseArraySeed and converts it): a dgCMatrix seed is subset, and
# a TENxMatrix's compressed columns (its `indptr_ranges`) are read as one
# hyperslab of `data` and of `indices` with rhdf5.
read_source <- function(src, cols, sparse) {
  if (!is_delayed(src)) return(src[, cols, drop = FALSE])
  pristine <- DelayedArray::isPristine(src)
  if (pristine) {
    seed <- DelayedArray::seed(src)
    if (inherits(seed, "dgCMatrix")) return(seed[, cols, drop = FALSE])
    if (inherits(seed, "TENxMatrixSeed")) return(read_tenx_cols(seed, cols))
  }
  if (sparse) {
    return(methods::as(
      DelayedArray::extract_sparse_array(src, list(NULL, cols)), "dgCMatrix"))
  }
  DelayedArray::extract_array(src, list(NULL, cols))
}

# Columns `cols` (increasing) of a TENxMatrixSeed as a dgCMatrix: the range
# they span is one hyperslab of the 10x layout's `data` and `indices`.
read_tenx_cols <- function(seed, cols) {
  lo <- cols[1]
  hi <- cols[length(cols)]
  ranges <- seed@indptr_ranges
  widths <- ranges$width[lo:hi]
  first <- ranges$start[lo]
  total <- sum(widths)
  group <- seed@group
  # HDF5Array's own reads may have switched rhdf5's error handling off
  # (Debian's HDF5Array 1.26; see read_tenx())
  rhdf5::h5errorHandling("normal")
  # (drop = TRUE: a vector without dim, which as.vector() would copy)
  read <- function(name) {
    if (total == 0) return(numeric(0))
    rhdf5::h5read(seed@filepath, paste0(group, "/", name), start = first,
                  count = total, drop = TRUE)
  }
  # slots set one by one, without new()'s validObject(): a corrupt file's
  # block (indices past nrow, unsorted) reaches scan_blocks(), whose
  # compiled scan reports it as a classed error, instead of failing here
  # with "invalid class" (read_tenx() checks a file's layout when opening)
  block <- methods::new("dgCMatrix")
  block@Dim <- c(as.integer(seed@dim[1]), length(widths))
  block@p <- as.integer(c(0, cumsum(widths)))
  block@i <- as.integer(read("indices"))
  block@x <- as.double(read("data"))
  if (length(cols) < length(widths) && isTRUE(r_dgc_scan(block)$valid)) {
    block <- block[, cols - lo + 1L, drop = FALSE]
  }
  block
}

# The column blocks of a blocks object: 0-based starts and lengths. A
# block is a whole number of the chunks of the core's H update (the chunk
# length of n columns: at least 16, at most 64 chunks, as
# detail::chunk_length()), so a streamed HALS update stops its inner
# passes where the in-memory one does; as many chunks as fit in `budget`
# bytes (an estimate of the block, its sparse transpose and the reading's
# copies), at least one.
block_layout <- function(x, budget = NULL) {
  m <- nrow(x)
  n <- ncol(x)
  budget <- block_budget(x, budget)
  chunk <- max(16, ceiling(n / 64))
  per_col <- block_cost(x, x$nnz / n)
  chunks <- max(1, floor(budget / (per_col * chunk)))
  len <- min(n, chunk * chunks)
  start <- seq(0, n - 1, by = len)
  list(start = as.integer(start),
       len = as.integer(pmin(len, n - start)))
}

# One read of every block: finite, min, max, the rows and columns with a
# nonzero entry (as scan_data()), and the totals sum, x2 (sum of squares)
# and nnz. Interruptible between blocks. The blocks hold about `budget`
# bytes (block_cost()) before their number of nonzeros is known: a
# TENxMatrix's columns tell theirs (its index pointers); other sparse data
# start with a block of 16 columns and size each next block by the densest
# block read so far (times 2, against denser columns ahead).
scan_blocks <- function(x, budget = NULL, call = rlang::caller_env()) {
  budget <- block_budget(x, budget)
  read <- block_reader(x, budget, on_error = function(e, start, len) {
    abort_nmfkit(c("The data cannot be read.",
                   "x" = "Reading columns {start + 1} to {start + len} of the {.cls {class(x$src)[1]}} failed: {conditionMessage(e)}"),
                 "read", call = call)
  })
  m <- nrow(x)
  n <- ncol(x)
  col_nnz <- known_col_nnz(x)
  out <- list(finite = TRUE, min = Inf, max = -Inf,
              rows = logical(m), cols = logical(n), sum = 0, x2 = 0,
              nnz = 0)
  start <- 0L
  density <- NULL  # nonzeros per column, the densest block's so far
  while (start < n) {
    len <- if (!is.null(col_nnz)) {
      # as many columns as the budget holds, at least one
      cost <- cumsum(block_cost(x, col_nnz[(start + 1L):n]))
      max(1L, sum(cost <= budget))
    } else if (!x$sparse || !is.null(density)) {
      max(1L, floor(budget / block_cost(x, 2 * max(density, 1))))
    } else {
      16L
    }
    len <- as.integer(min(len, n - start))
    read$collect()
    block <- read$read(start, len)
    s <- scan_data(block)
    if (isFALSE(s$valid)) {
      abort_nmfkit(c("The data are not a valid sparse matrix.",
                     "x" = "Columns {start + 1} to {start + len} have row indices out of range or out of order."),
                   "sparse", call = call)
    }
    vals <- if (is.matrix(block)) block else block@x
    out$finite <- out$finite && s$finite
    if (!s$finite) return(out)
    nnz <- sum(vals != 0)
    density <- max(density, nnz / len)
    out$min <- min(out$min, s$min)
    out$max <- max(out$max, s$max)
    out$rows <- out$rows | s$rows
    out$cols[start + seq_len(len)] <- s$cols
    out$sum <- out$sum + sum(vals)
    out$x2 <- out$x2 + sum(vals * vals)
    out$nnz <- out$nnz + nnz
    rm(block, vals)
    start <- start + len
  }
  out
}

# The bytes a column of a blocks object costs while a pass holds it: for
# sparse blocks of `nnz` stored entries per column, 6 copies of 12 bytes
# per entry (the read and its conversion; the glue's copies of the block
# being computed and of the next one, read meanwhile, RSource in
# src/r_data.h; the computation's copy and transpose; the garbage of the
# last); for dense blocks, 3 copies of the m doubles of a column (the read,
# the copies of the block computed and of the next) and a
# divergence's sparse copy and transpose of its nonzeros. A block read in
# the other form than its source stores (read_cols(): dense_as_dgc() of a
# dense read, as.matrix() of a sparse one) also holds the read itself.
block_cost <- function(x, nnz) {
  sparse_read <- 12 * pmax(nnz, 1)
  dense_read <- rep(8 * nrow(x), length(nnz))
  if (x$sparse) {
    cost <- 6 * sparse_read
    if (!isTRUE(x$src_sparse)) cost <- cost + dense_read
  } else {
    cost <- 3 * dense_read + 2 * sparse_read
    if (isTRUE(x$src_sparse)) cost <- cost + sparse_read
  }
  cost
}

# The block budget of a read of x: the caller's, else the one x was
# scanned with (as_blocks()), else DelayedArray's (100 MB by default).
block_budget <- function(x, budget = NULL) {
  budget <- budget %||% x$budget
  if (!is.null(budget)) return(budget)
  if (requireNamespace("DelayedArray", quietly = TRUE)) {
    return(DelayedArray::getAutoBlockSize())
  }
  1e8
}

# read(j0, len): read_cols() of x, holding R's garbage under the budget
# (the block budget of x, or `budget`). R frees a block only at a garbage
# collection, which it starts when its heap reaches a trigger that grows
# with all the session holds: blocks read one after another piled up to
# 240 MB above the baseline whatever the budget (bench/README.md,
# "Memory"). The reader counts what its reads cost (block_cost() of each
# block: the read's copies, and those its caller makes, such as the scan's
# `vals * vals`) and collects once the next block would take the count
# past the budget: one collection per budget's worth of data, not per
# block. The collection is of the young generation only (`full = FALSE`,
# about 10 ms, where a full one takes a second with the Bioconductor
# packages loaded): enough where the caller drops its block before
# reading the next, so no collection sees a block alive and ages it (the
# R loops here; the fit's glue, RSource in src/r_data.h, copies each block
# out of R and drops it before the next read). Budgets below 4 MB collect
# every 4 MB.
# `on_error(e, j0, len)`, if given, handles an error of the read. Returns
# list(read = function(j0, len), collect = function()): a caller calls
# collect() before each read, when it no longer holds the last block, in a
# call of its own. Why apart: a collection ages what is alive, and an aged
# frame or promise that then receives the new block keeps it alive through
# the next young collection (a tryCatch() or an argument around the read,
# the reader's own frame).
block_reader <- function(x, budget = NULL, on_error = NULL) {
  read <- if (is.null(on_error)) read_cols else function(x, j0, len) {
    tryCatch(read_cols(x, j0, len), error = function(e) on_error(e, j0, len))
  }
  # (data in memory, the online fit's, are held whole anyway)
  if (!is_delayed(x$src)) {
    return(list(read = function(j0, len) read(x, j0, len),
                collect = function() invisible()))
  }
  limit <- max(block_budget(x, budget), 2^22)
  since <- 0  # bytes read since the last collection
  last <- 0   # what the last block cost
  per_col <- if (is.null(x$nnz)) NULL else x$nnz / ncol(x)
  list(
    read = function(j0, len) {
      # (the cost from the scan's density, or the columns' counts: no
      # binding of the block here)
      nnz <- per_col %||% (known_col_nnz(x)[j0 + seq_len(len)] %||% nrow(x))
      last <<- sum(block_cost(x, rep_len(nnz, len)))
      since <<- since + last
      read(x, j0, len)
    },
    collect = function() {
      if (since > 0 && since + last > limit) {
        gc(verbose = FALSE, full = FALSE)
        since <<- 0
      }
      invisible()
    })
}

# The stored entries of each column, when the source tells them without a
# read (a pristine TENxMatrix: its index pointers); else NULL.
known_col_nnz <- function(x) {
  src <- x$src
  if (!is_delayed(src) || !DelayedArray::isPristine(src) ||
      !is.null(x$rows)) {
    return(NULL)
  }
  seed <- DelayedArray::seed(src)
  if (!inherits(seed, "TENxMatrixSeed")) return(NULL)
  w <- as.double(seed@indptr_ranges$width)
  if (is.null(x$cols)) w else w[x$cols]
}
