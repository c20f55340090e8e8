# The input side of write_tenx(), tenx_writer() and read_tenx(): their
# argument checks, the matrices they accept, cut into column blocks and
# validated as dgCMatrix blocks before anything is written, and the check of
# a 10x file's layout when it is read.

# Suggested packages ----------------------------------------------------------

need_packages <- function(pkgs, fn, call = rlang::caller_env()) {
  missing <- pkgs[!vapply(pkgs, requireNamespace, logical(1), quietly = TRUE)]
  if (!length(missing)) return(invisible(TRUE))
  deb <- paste(paste0("r-bioc-", tolower(missing)), collapse = " ")
  bioc <- paste(deparse(missing), collapse = "")
  abort_nmfkit(
    c("{.fn {fn}} needs the Bioconductor {cli::qty(length(missing))}package{?s} {.pkg {missing}}.",
      "i" = "Install {cli::qty(length(missing))}{?it/them} with {.code BiocManager::install({bioc})}, or on Debian and Ubuntu with {.code apt install {deb}}."),
    "package", call = call, value = missing)
}

# Argument checks -------------------------------------------------------------

# A path for a new file: one string in an existing directory; an existing
# file is an error unless `overwrite`, and is removed (with `remove`; a
# caller that writes elsewhere and renames keeps it). Returns the absolute
# path.
check_new_file <- function(filepath, overwrite, remove = TRUE,
                           arg = rlang::caller_arg(filepath),
                           call = rlang::caller_env()) {
  # the argument's name, before `filepath` is reassigned below (after that
  # caller_arg() would give the path)
  force(arg)
  if (!is.character(filepath) || length(filepath) != 1L || is.na(filepath) ||
      !nzchar(filepath)) {
    abort_nmfkit(c("{.arg {arg}} must be a file path (one string).",
                   "x" = "It is {describe_value(filepath)}."),
                 "filepath", call = call, value = filepath)
  }
  dir <- dirname(path.expand(filepath))
  if (!dir.exists(dir)) {
    abort_nmfkit(c("{.arg {arg}} must be in an existing directory.",
                   "x" = "There is no directory {.file {dir}}."),
                 "filepath", call = call, value = filepath)
  }
  filepath <- file.path(normalizePath(dir), basename(filepath))
  if (dir.exists(filepath)) {
    abort_nmfkit(c("{.arg {arg}} must name a file, not a directory.",
                   "x" = "{.file {filepath}} is a directory."),
                 "filepath", call = call, value = filepath)
  }
  if (file.exists(filepath)) {
    if (!overwrite) {
      abort_nmfkit(c("{.arg {arg}} already exists: {.file {filepath}}.",
                     "i" = "Give {.code overwrite = TRUE} to replace it."),
                   "exists", call = call, value = filepath)
    }
    if (remove && !file.remove(filepath)) {
      abort_nmfkit("{.arg {arg}} exists and could not be removed: {.file {filepath}}.",
                   "filepath", call = call, value = filepath)
    }
  }
  filepath
}

# write_tenx() of a DelayedMatrix read from `filepath` itself (recompressing
# in place with overwrite = TRUE) would delete its data before reading them.
check_not_source <- function(x, filepath, call) {
  if (!methods::is(x, "DelayedArray") || !is.character(filepath) ||
      length(filepath) != 1L || is.na(filepath)) {
    return(invisible(NULL))
  }
  paths <- tryCatch(unlist(DelayedArray::seedApply(x, DelayedArray::path)),
                    error = function(e) character())
  norm <- function(p) normalizePath(path.expand(p), mustWork = FALSE)
  if (length(paths) && norm(filepath) %in% norm(paths)) {
    abort_nmfkit(c("{.arg filepath} is the file {.arg x} is read from.",
                   "x" = "Writing {.file {filepath}} would delete the data before they are read.",
                   "i" = "Write to another file, then rename it."),
                 "filepath", call = call, value = filepath)
  }
  invisible(NULL)
}

check_group <- function(group, arg = rlang::caller_arg(group),
                        call = rlang::caller_env()) {
  ok <- is.character(group) && length(group) == 1L && !is.na(group)
  parts <- if (ok) strsplit(group, "/", fixed = TRUE)[[1]]
  parts <- parts[nzchar(parts)]
  if (!ok || !length(parts)) {
    abort_nmfkit(c("{.arg {arg}} must be the name of an HDF5 group, such as {.val matrix}.",
                   "x" = "It is {describe_value(group)}."),
                 "group", call = call, value = group)
  }
  paste(parts, collapse = "/")
}

# Row or column names: n strings, none NA.
check_names <- function(x, n, arg, call = rlang::caller_env()) {
  if (is.character(x) && length(x) == n && !anyNA(x)) return(invisible(x))
  found <- if (!is.character(x)) {
    cli::format_inline("It is {.obj_type_friendly {x}}.")
  } else if (length(x) != n) {
    cli::format_inline("It has {length(x)} name{?s}.")
  } else {
    cli::format_inline("It has {sum(is.na(x))} {.code NA} name{?s}.")
  }
  abort_nmfkit(c("{.arg {arg}} must be {n} name{?s} (strings, none {.code NA}).",
                 "x" = found),
               "dimnames", call = call, value = x)
}

# Blocks ----------------------------------------------------------------------

# What write_tenx() writes: the matrix's dimensions and dimnames, the
# storage type its values fit, and its columns cut into blocks of about
# DelayedArray's block size (getAutoBlockSize(), 100 MB by default) with a
# function that returns one block. A dgCMatrix is cut by nonzeros (12 bytes
# each); dense and DelayedMatrix input by columns of nrow doubles.
tenx_source <- function(x, call) {
  budget <- DelayedArray::getAutoBlockSize()
  if (methods::is(x, "DelayedArray")) {
    check_writable_delayed(x, "x", call)
    type <- DelayedArray::type(x)
    block <- function(cols) x[, cols, drop = FALSE]
  } else {
    x <- as_numeric_matrix(x, "x", call)
    if (inherits(x, "dgCMatrix")) {
      type <- if (int_storable(x@x)) "integer" else "double"
      block <- function(cols) x[, cols, drop = FALSE]
    } else {
      type <- if (int_storable(x[x != 0])) "integer" else "double"
      block <- function(cols) x[, cols, drop = FALSE]
    }
  }
  d <- dim(x)
  if (d[1] == 0L) {
    abort_nmfkit(c("{.arg x} must have at least one row.",
                   "x" = "It is {d[1]} x {d[2]}."),
                 "empty", call = call)
  }
  blocks <- if (inherits(x, "dgCMatrix")) {
    nnz_blocks(x@p, max(1, floor(budget / 12)))
  } else {
    width <- max(1, floor(budget / (8 * d[1])))
    starts <- seq(1, d[2], by = width)
    if (d[2] == 0L) list() else
      lapply(starts, function(s) s:min(s + width - 1, d[2]))
  }
  list(dim = d, dimnames = dimnames(x) %||% list(NULL, NULL), type = type,
       blocks = blocks, block = block)
}

# Column ranges holding at most `size` nonzeros each (a column with more is
# a block of its own), from the column pointers p.
nnz_blocks <- function(p, size) {
  n <- length(p) - 1L
  out <- list()
  j <- 1L
  while (j <= n) {
    e <- max(j, findInterval(p[j] + size, p) - 1L)
    out[[length(out) + 1L]] <- j:e
    j <- e + 1L
  }
  out
}

# Whether every value is a whole number R's integers hold (NA included:
# the integer type has no NA here).
int_storable <- function(v) {
  all(is.finite(v)) && all(v == round(v)) &&
    all(abs(v) <= .Machine$integer.max)
}

# A DelayedMatrix to write: two dimensions, numeric type, and its in-memory
# sparse seeds sound (check_delayed_seeds()). Its values are written as they
# are (negative or zero ones too), so it is not scanned as data to fit are.
check_writable_delayed <- function(x, arg, call) {
  check_delayed_seeds(x, arg, call)
  if (length(dim(x)) != 2L) {
    abort_nmfkit(c("{.arg {arg}} must be a matrix (2 dimensions).",
                   "x" = "It is a {.cls {class(x)[1]}} of {length(dim(x))} dimension{?s}."),
                 "type", call = call, value = x)
  }
  type <- DelayedArray::type(x)
  if (!type %in% c("double", "integer")) {
    abort_nmfkit(c("{.arg {arg}} must be numeric (type double or integer).",
                   "x" = "It is a {.cls {class(x)[1]}} of type {.val {type}}."),
                 "type", call = call, value = x)
  }
  invisible(x)
}

# One block as a dgCMatrix with no stored zeros, of st$nrow rows, whose
# values the writer's type can store.
tenx_block <- function(block, st, arg, call) {
  if (methods::is(block, "DelayedArray")) {
    check_writable_delayed(block, arg, call)
    block <- methods::as(block, "dgCMatrix")
  }
  b <- as_numeric_matrix(block, arg, call)
  if (is.matrix(b)) b <- methods::as(b, "CsparseMatrix")
  if (nrow(b) != st$nrow) {
    abort_nmfkit(c("{.arg {arg}} must have {st$nrow} row{?s}, as the matrix being written.",
                   "x" = "It has {nrow(b)} row{?s}."),
                 "dimension", call = call, value = block)
  }
  b <- drop0(b)
  if (st$type == "integer" && !int_storable(b@x)) {
    bad <- which(!is.finite(b@x) | b@x != round(b@x) |
                   abs(b@x) > .Machine$integer.max)
    abort_nmfkit(c("{.arg {arg}} has values the writer's type {.val integer} cannot store.",
                   "x" = "{length(bad)} entr{?y is/ies are} not whole, beyond R's integer range or {.code NA}; the first is {describe_value(b@x[bad[1]])}.",
                   "i" = "Write with {.code type = \"double\"}."),
                 "value", call = call, value = b@x[bad[1]])
  }
  b
}

# Column names go to barcodes: the first block with columns decides whether
# the matrix has them, and every later block must agree. Row names go to
# genes once; a later block's must be the same. Everything is checked
# before anything is written or decided, so a rejected block changes nothing.
tenx_block_names <- function(st, b, arg, call) {
  cn <- colnames(b)
  # a block without columns says nothing about column names
  if (ncol(b) == 0L) cn <- NULL
  if (ncol(b) > 0L && !is.na(st$barcodes) && st$barcodes != !is.null(cn)) {
    has <- if (st$barcodes) "named columns" else "no column names"
    abort_nmfkit(c("{.arg {arg}} must {if (st$barcodes) 'have' else 'not have'} column names, as the blocks before it.",
                   "x" = "The matrix being written has {has}; {.arg {arg}} {if (is.null(cn)) 'has none' else 'has some'}."),
                 "dimnames", call = call)
  }
  if (!is.null(cn)) check_names(cn, ncol(b), sprintf("colnames(%s)", arg), call)
  rn <- rownames(b)
  if (!is.null(rn)) {
    check_names(rn, st$nrow, sprintf("rownames(%s)", arg), call)
    if (!is.null(st$rownames) && !identical(rn, st$rownames)) {
      first <- which(rn != st$rownames)[1]
      abort_nmfkit(c("The row names of {.arg {arg}} must be those of the matrix being written.",
                     "x" = "Row {first} is {.val {rn[first]}}, not {.val {st$rownames[first]}}."),
                   "dimnames", call = call)
    }
  }
  if (is.na(st$barcodes) && ncol(b) > 0L) {
    if (!is.null(cn)) tenx_barcodes(st)
    st$barcodes <- !is.null(cn)
  }
  if (!is.null(rn) && is.null(st$rownames)) {
    tenx_write_names(st, "genes", rn)
    st$rownames <- rn
  }
  invisible(st)
}

# Reading --------------------------------------------------------------------

# The compressed columns of a TENxMatrix's file describe a matrix, as every
# sparse input must (check_sparse_structure()): column pointers from 0,
# never decreasing, ending at the length of `indices` and of `data`; row
# indices within 0..nrow - 1 and strictly increasing in each column. The
# indices are read in column blocks of about 10^7 entries (40 MB).
check_tenx_layout <- function(m, filepath, group, call) {
  seed <- DelayedArray::seed(m)
  ranges <- seed@indptr_ranges
  nrow <- as.integer(seed@dim[1])
  width <- as.double(ranges$width)
  p <- c(0, cumsum(width))
  fail <- function(problem) {
    abort_nmfkit(c("{.arg filepath} must hold a valid sparse matrix in the 10x layout.",
                   "x" = "{.file {filepath}}, group {.val {group}}: {problem}",
                   "i" = "The file is corrupt; write it again (for example with {.fn write_tenx})."),
                 "sparse", value = filepath, call = call)
  }
  if (length(width) && (any(width < 0) ||
                        any(as.double(ranges$start) != p[-length(p)] + 1))) {
    fail("{.field indptr} does not start at 0 or decreases.")
  }
  sizes <- tenx_dataset_lengths(filepath, group)
  total <- p[length(p)]
  if (!identical(sizes[["indices"]], total) ||
      !identical(sizes[["data"]], total)) {
    fail(sprintf("indptr ends at %.0f, but indices has %.0f entries and data %.0f.",
                 total, sizes[["indices"]], sizes[["data"]]))
  }
  for (cols in nnz_blocks(p, 1e7)) {
    lo <- cols[1]
    first <- p[lo]
    count <- p[cols[length(cols)] + 1L] - first
    if (count == 0) next
    idx <- as.vector(rhdf5::h5read(filepath, paste0(group, "/indices"),
                                   start = first + 1, count = count))
    local <- p[c(cols, cols[length(cols)] + 1L)] - first
    column <- function(k) lo - 1L + findInterval(k - 1, local)
    bad <- is.na(idx) | idx < 0 | idx >= nrow
    if (any(bad)) {
      k <- which(bad)[1]
      fail(sprintf("row index %s (0-based) in column %d is outside 0..%d.",
                   format(idx[k]), column(k), nrow - 1L))
    }
    down <- diff(idx) <= 0
    starts <- local[-c(1L, length(local))]
    down[starts[starts > 0 & starts < count]] <- FALSE
    if (any(down)) {
      fail(sprintf("row indices in column %d are not strictly increasing (unsorted or repeated).",
                   column(which(down)[1] + 1L)))
    }
  }
  invisible(m)
}

# Lengths of the `data` and `indices` datasets of a 10x group.
tenx_dataset_lengths <- function(filepath, group) {
  fid <- rhdf5::H5Fopen(filepath, flags = "H5F_ACC_RDONLY")
  on.exit(rhdf5::H5Fclose(fid), add = TRUE)
  vapply(c(data = "data", indices = "indices"), function(name) {
    did <- rhdf5::H5Dopen(fid, paste0(group, "/", name))
    on.exit(rhdf5::H5Dclose(did), add = TRUE)
    sid <- rhdf5::H5Dget_space(did)
    on.exit(rhdf5::H5Sclose(sid), add = TRUE)
    as.double(prod(rhdf5::H5Sget_simple_extent_dims(sid)$size))
  }, numeric(1))
}
