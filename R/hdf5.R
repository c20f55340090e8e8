#' Write a sparse matrix to HDF5 in the 10x Genomics layout
#'
#' `write_tenx()` writes a matrix (features x samples, typically a
#' `dgCMatrix` of counts) to an HDF5 file in the compressed-column layout of
#' 10x Genomics and returns it as a [HDF5Array::TENxMatrix()], a
#' `DelayedMatrix` read from disk in column blocks. `tenx_writer()` writes one
#' whose columns arrive in blocks, so a matrix larger than memory is never
#' whole: each `append()` adds columns, and the file holds a valid matrix of
#' the columns written so far after every one. `write_tenx()` is that writer
#' fed with column blocks of `x`.
#'
#' The group holds `data` (the nonzero values, column by column), `indices`
#' (their 0-based rows), `indptr` (where each column starts in `data`, 64-bit
#' so files may hold more than 2^31 nonzeros), `shape` (`c(nrow, ncol)`) and,
#' when the matrix has dimnames, `genes` (row names) and `barcodes` (column
#' names), which `TENxMatrix()` returns as its dimnames. Values are stored as
#' they are: zeros are left out (the layout is sparse), while negative, `NA`,
#' `NaN` and infinite entries are kept; [nmf()] checks the values when it
#' reads the data, not here.
#'
#' `read_tenx()` opens such a file (or any file in the 10x layout) as a
#' `TENxMatrix`, like `HDF5Array::TENxMatrix()` but also where that fails
#' (below).
#'
#' @section Which writer to use:
#' `HDF5Array::writeTENxMatrix()` writes the same layout; where it works
#' (current Bioconductor), keep using it if you like. On Debian 12
#' (HDF5Array 1.26 with rhdf5 2.42) it fails on every input ("unable to
#' open dataset", then "Argument not of class H5IdComponent", after
#' warnings that chunk dimensions were set to 0). The cause is not the
#' chunks: HDF5Array's reader switches off the HDF5 error handler through
#' which rhdf5 turns a failed call into an R error, and HDF5Array's check
#' that the group is not a dataset then fails. For the same reason, once
#' any HDF5Array matrix has been read in a session, a further
#' `HDF5Array::TENxMatrix()` fails there too. `write_tenx()` and
#' `tenx_writer()` write through rhdf5 (extendible datasets, explicit chunk
#' sizes) and, with `read_tenx()`, restore rhdf5's handler before their
#' HDF5 calls: they work on that platform and on newer ones.
#' `HDF5Array::writeHDF5Array()` (dense HDF5) works everywhere but stores
#' every zero.
#'
#' @section Appending:
#' After every `append()` the file holds a valid matrix of the columns
#' written so far; an append that fails or is interrupted is undone. With
#' compression (`level > 0`) each append rewrites the last, partly filled
#' chunk of `data` and `indices`, and HDF5 does not reuse the space of the
#' old copy: append blocks of many chunks (millions of nonzeros), or the
#' file grows (200 appends of 500 nonzeros made a file 4 times the size of
#' one write). Without compression chunks are rewritten in place.
#'
#' @section Chunks and compression:
#' `data` and `indices` are cut into chunks of `chunk` entries; a block of
#' columns is one contiguous range of each. The defaults rest on reading
#' 30,000-row count matrices (1 % dense) of 10^4 to 4 x 10^5 columns in
#' blocks of 10,000 columns on a 2-core machine (`bench/tenx-read.R`,
#' figures in `bench/ooc-data.md`): chunks of 16,384 to 262,144 entries
#' read alike (`chunk = 65536`); without compression (`level = 0`) the
#' HDF5 reads are fastest, while `level = 1` makes count files about 5
#' times smaller at 3.5 times the HDF5 read time (1.2 to 1.5 times a
#' read through `DelayedArray`, whose own work dominates) and is the
#' choice when disk space is short. Higher levels gain little more: level
#' 6 is 10 % smaller than 1 and slower to read and write.
#'
#' @param x A matrix: a `dgCMatrix` or other numeric sparse `Matrix`, a base
#'   numeric matrix or numeric data frame, or a `DelayedMatrix` (read and
#'   written one column block at a time). Logical and pattern matrices are
#'   not accepted: multiply by 1 to store their entries as ones.
#' @param filepath Path of the HDF5 file to create (for `read_tenx()`, to
#'   read).
#' @param group Name of the HDF5 group that holds the matrix (`"a/b"` for a
#'   nested one).
#' @param type How values are stored: `"double"` (64-bit floating point) or
#'   `"integer"` (32-bit, for counts: half the size). `write_tenx()` chooses
#'   `"integer"` when every stored value of `x` is a whole number within
#'   R's integer range (or `x` is an integer `DelayedMatrix`), `"double"`
#'   otherwise.
#' @param chunk Entries per HDF5 chunk of `data` and `indices`.
#' @param level gzip compression level, 0 (none) to 9.
#' @param overwrite If `filepath` exists: replace it (`TRUE`) or stop with an
#'   error (`FALSE`). The file a `DelayedMatrix` `x` is read from is never
#'   replaced: write to another file.
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return `write_tenx()`, `read_tenx()`: a `TENxMatrix` of the file.
#'   `tenx_writer()`: a writer, a list of functions: `append(block)` writes
#'   `block` (a matrix of `nrow` rows, any of the types `x` may be) as the
#'   next columns and returns the writer invisibly; `close()` returns the
#'   `TENxMatrix` of the columns written (after it, `append()` is an error);
#'   `info()` returns the file, group, dimensions and nonzeros so far.
#' @seealso [nmf()], which fits a `TENxMatrix` block by block.
#' @examples
#' if (requireNamespace("rhdf5", quietly = TRUE) &&
#'     requireNamespace("HDF5Array", quietly = TRUE)) {
#'   set.seed(1)
#'   x <- Matrix::rsparsematrix(200, 50, density = 0.1,
#'                              rand.x = function(n) rpois(n, 3) + 1)
#'   dimnames(x) <- list(paste0("gene", 1:200), paste0("cell", 1:50))
#'   path <- tempfile(fileext = ".h5")
#'   m <- write_tenx(x, path)
#'   print(m)
#'   stopifnot(identical(as(m, "dgCMatrix"), x))
#'
#'   # the same matrix written in two column blocks
#'   path2 <- tempfile(fileext = ".h5")
#'   w <- tenx_writer(path2, nrow = 200, type = "integer")
#'   w$append(x[, 1:20])
#'   w$append(x[, 21:50])
#'   print(w)
#'   m2 <- w$close()
#'   stopifnot(identical(as(m2, "dgCMatrix"), x))
#'   print(dim(read_tenx(path2)))
#'   unlink(c(path, path2))
#' }
#' @export
write_tenx <- function(x, filepath, group = "matrix", type = NULL,
                       chunk = 65536L, level = 0L, overwrite = FALSE, ...) {
  check_dots_empty()
  need_packages(c("rhdf5", "HDF5Array"), "write_tenx")
  if (missing(x)) {
    abort_nmfkit("{.arg x} is missing: give the matrix to write.", "missing")
  }
  if (missing(filepath)) {
    abort_nmfkit("{.arg filepath} is missing: give the HDF5 file to create.",
                 "missing")
  }
  call <- rlang::current_env()
  src <- tenx_source(x, call)
  type <- if (is.null(type)) src$type else
    check_choice(type, c("double", "integer"))
  check_not_source(x, filepath, call)
  # the matrix is written to a new file beside `filepath` and renamed over
  # it when complete: a write that fails or is interrupted leaves no partial
  # file behind, and an existing file (overwrite = TRUE) intact
  overwrite <- check_flag(overwrite)
  target <- check_new_file(filepath, overwrite, remove = FALSE, call = call)
  temp <- tempfile(".write_tenx-", tmpdir = dirname(target), fileext = ".h5")
  st <- tenx_open(temp, src$dim[1], src$dimnames[[1]], group, type,
                  chunk, level, overwrite = FALSE, call,
                  rownames_arg = "rownames(x)")
  on.exit(unlink(temp), add = TRUE)
  for (cols in src$blocks) {
    tenx_append(st, src$block(cols), arg = "x", call = call)
  }
  if (!file.rename(temp, target)) {
    abort_nmfkit(c("Cannot write {.file {target}}.",
                   "x" = "Renaming the written file {.file {temp}} to it failed; {if (file.exists(target)) 'the file there is unchanged' else 'nothing is there'}."),
                 "filepath", call = call, value = target)
  }
  st$filepath <- target
  tenx_close(st)
}

#' @rdname write_tenx
#' @param nrow Number of rows of the matrix (every block has them all).
#' @param rownames Row names (a character vector of length `nrow`), or
#'   `NULL` to take them from the first block that has some.
#' @export
tenx_writer <- function(filepath, nrow, rownames = NULL, group = "matrix",
                        type = c("double", "integer"), chunk = 65536L,
                        level = 0L, overwrite = FALSE, ...) {
  check_dots_empty()
  need_packages(c("rhdf5", "HDF5Array"), "tenx_writer")
  if (missing(nrow)) {
    abort_nmfkit("{.arg nrow} is missing: give the number of rows.", "missing")
  }
  type <- check_choice(type)
  st <- tenx_open(filepath, nrow, rownames, group, type, chunk, level,
                  overwrite, rlang::current_env())
  writer <- structure(list(
    append = function(block) {
      tenx_append(st, block, arg = "block", call = rlang::current_env())
      invisible(writer)
    },
    close = function() tenx_close(st),
    info = function() {
      list(filepath = st$filepath, group = st$group,
           dim = c(st$nrow, st$ncol), nnz = st$nnz, type = st$type,
           chunk = st$chunk, level = st$level, closed = st$closed)
    }
  ), class = "nmfkit_tenx_writer")
  writer
}

#' @rdname write_tenx
#' @export
read_tenx <- function(filepath, group = "matrix", ...) {
  check_dots_empty()
  call <- rlang::current_env()
  need_packages(c("rhdf5", "HDF5Array"), "read_tenx")
  if (missing(filepath)) {
    abort_nmfkit("{.arg filepath} is missing: give the HDF5 file to read.",
                 "missing")
  }
  if (!is.character(filepath) || length(filepath) != 1L ||
      is.na(filepath) || !file.exists(filepath) || dir.exists(filepath)) {
    abort_nmfkit(c("{.arg filepath} must be an existing HDF5 file.",
                   "x" = "It is {describe_value(filepath)}."),
                 "filepath", value = filepath)
  }
  group <- check_group(group)
  hdf5_errors_on()
  m <- tryCatch(
    HDF5Array::TENxMatrix(filepath, group),
    error = function(e) {
      abort_nmfkit(c("{.arg filepath} must hold a sparse matrix in the 10x layout in group {.val {group}}.",
                     "x" = "{.file {filepath}}: {conditionMessage(e)}"),
                   "filepath", value = filepath, call = call)
    }
  )
  check_tenx_layout(m, filepath, group, call)
  m
}

#' @export
print.nmfkit_tenx_writer <- function(x, ...) {
  check_dots_empty()
  i <- x$info()
  cat("<nmfkit TENx writer", if (i$closed) " (closed)", ">\n", sep = "")
  cat("  file:  ", i$filepath, " (group ", i$group, ")\n", sep = "")
  cat("  so far:", i$dim[1], "x", i$dim[2], "with",
      format(i$nnz, big.mark = ","), "nonzeros\n")
  cat("  type ", i$type, ", chunk ", i$chunk, ", gzip level ", i$level,
      "\n", sep = "")
  invisible(x)
}

# The writer ------------------------------------------------------------------

# Checks the writer's arguments, creates the file and returns the writer's
# state: an environment that append() updates.
tenx_open <- function(filepath, nrow, rownames, group, type, chunk, level,
                      overwrite, call, rownames_arg = "rownames") {
  if (missing(filepath)) {
    abort_nmfkit("{.arg filepath} is missing: give the HDF5 file to create.",
                 "missing", call = call)
  }
  overwrite <- check_flag(overwrite, arg = "overwrite", call = call)
  nrow <- check_count(nrow, min = 1, arg = "nrow", call = call,
                      what = "dimension")
  if (!is.null(rownames)) check_names(rownames, nrow, rownames_arg, call)
  group <- check_group(group, arg = "group", call = call)
  # HDF5 caps a chunk at 4 GiB: 2^29 - 1 eight-byte values
  chunk <- check_count(chunk, min = 1, max = 2^29 - 1, arg = "chunk",
                       call = call, what = "chunk")
  level <- check_count(level, min = 0, max = 9, arg = "level", call = call,
                       what = "level")
  # last, as it removes an existing file when `overwrite`
  filepath <- check_new_file(filepath, overwrite, arg = "filepath",
                             call = call)
  st <- new.env(parent = emptyenv())
  st$filepath <- filepath
  st$group <- group
  st$nrow <- nrow
  st$ncol <- 0L
  st$nnz <- 0  # a double: past 2^31 nonzeros
  st$type <- type
  st$chunk <- chunk
  st$level <- level
  st$rownames <- rownames
  st$barcodes <- NA  # whether columns are named: set by the first block
  st$closed <- FALSE
  tenx_create(st, call)
  st
}

# indptr holds one entry per column (8 bytes): its chunks need not follow
# `chunk`; barcodes are variable-length strings.
tenx_indptr_chunk <- 16384L
tenx_names_chunk <- 4096L

# An empty matrix of nrow rows: shape c(nrow, 0), indptr 0, and the
# extendible (unlimited) datasets the blocks go to.
tenx_create <- function(st, call) {
  hdf5_errors_on()
  made <- tryCatch(rhdf5::h5createFile(st$filepath), error = function(e) e)
  if (!isTRUE(made)) {
    why <- if (inherits(made, "error")) conditionMessage(made) else
      "rhdf5 could not create it"
    abort_nmfkit(c("Cannot create the HDF5 file {.file {st$filepath}}.",
                   "x" = "{why}"),
                 "filepath", call = call, value = st$filepath)
  }
  done <- FALSE
  on.exit(if (!done) unlink(st$filepath), add = TRUE)
  parts <- strsplit(st$group, "/", fixed = TRUE)[[1]]
  for (i in seq_along(parts)) {
    rhdf5::h5createGroup(st$filepath, paste(parts[seq_len(i)], collapse = "/"))
  }
  h5type <- if (st$type == "integer") "H5T_STD_I32LE" else "H5T_IEEE_F64LE"
  tenx_dataset(st, "data", h5type, st$chunk, st$level)
  tenx_dataset(st, "indices", "H5T_STD_I32LE", st$chunk, st$level)
  tenx_dataset(st, "indptr", "H5T_STD_I64LE", tenx_indptr_chunk, st$level,
               dims = 1)
  rhdf5::h5write(0, st$filepath, tenx_name(st, "indptr"))
  rhdf5::h5createDataset(st$filepath, tenx_name(st, "shape"), dims = 2,
                         H5type = "H5T_STD_I32LE", chunk = NULL, level = 0)
  rhdf5::h5write(c(st$nrow, 0L), st$filepath, tenx_name(st, "shape"))
  if (!is.null(st$rownames)) tenx_write_names(st, "genes", st$rownames)
  done <- TRUE
  invisible(st)
}

tenx_name <- function(st, name) paste0(st$group, "/", name)

# An extendible 1-D dataset. Its maximum length is unlimited, so rhdf5 2.42
# keeps the chunk size it is given (with a finite maximum shorter than the
# chunk it sets the chunk to the current length, 0: Debian's
# writeTENxMatrix() failure). level 0 means no filter at all: rhdf5 would
# otherwise add shuffle and a deflate pass that stores the bytes as they are.
tenx_dataset <- function(st, name, h5type, chunk, level, dims = 0) {
  rhdf5::h5createDataset(
    st$filepath, tenx_name(st, name), dims = dims,
    maxdims = rhdf5::H5Sunlimited(), H5type = h5type, chunk = chunk,
    level = level, filter = if (level > 0) "GZIP" else "NONE",
    shuffle = level > 0
  )
}

tenx_write_names <- function(st, name, x) {
  rhdf5::h5createDataset(st$filepath, tenx_name(st, name), dims = length(x),
                         storage.mode = "character", size = NULL,
                         encoding = "UTF-8", chunk = NULL, level = 0)
  rhdf5::h5write(enc2utf8(x), st$filepath, tenx_name(st, name))
}

# Appends the columns of `block`; on any error or interrupt the datasets
# are cut back to the columns written before, so the file stays a valid
# matrix.
tenx_append <- function(st, block, arg, call) {
  if (st$closed) {
    abort_nmfkit(c("This writer is closed: it cannot append columns.",
                   "i" = "{.file {st$filepath}} holds {st$nrow} x {st$ncol}; write more with a new {.fn tenx_writer}."),
                 "closed", call = call)
  }
  if (missing(block)) {
    abort_nmfkit("{.arg {arg}} is missing: give the columns to append.",
                 "missing", call = call)
  }
  b <- tenx_block(block, st, arg, call)
  nc <- ncol(b)
  if (st$ncol + nc > .Machine$integer.max) {
    abort_nmfkit(c("The matrix would have more than {(.Machine$integer.max)} columns, R's limit.",
                   "x" = "It has {st$ncol}; {.arg {arg}} adds {nc}."),
                 "dimension", call = call)
  }
  hdf5_errors_on()
  check_tenx_target(st, call)
  # a block without columns still brings its row names
  tenx_block_names(st, b, arg, call)
  if (nc == 0L) return(invisible(st))

  fid <- rhdf5::H5Fopen(st$filepath, flags = "H5F_ACC_RDWR")
  on.exit(rhdf5::H5Fclose(fid), add = TRUE)
  old_ncol <- st$ncol
  old_nnz <- st$nnz
  done <- FALSE
  on.exit(if (!done) tenx_cut(st, fid, old_ncol, old_nnz), add = TRUE,
          after = FALSE)
  nz <- length(b@x)
  if (nz) {
    vals <- if (st$type == "integer") as.integer(b@x) else b@x
    tenx_extend(st, fid, "data", vals, old_nnz)
    tenx_extend(st, fid, "indices", b@i, old_nnz)
  }
  if (isTRUE(st$barcodes)) {
    tenx_extend(st, fid, "barcodes", enc2utf8(colnames(b)), old_ncol)
  }
  # indptr and shape last: until they are written the matrix is the old one
  tenx_extend(st, fid, "indptr", old_nnz + b@p[-1L], old_ncol + 1)
  rhdf5::h5write(c(st$nrow, old_ncol + nc), fid, tenx_name(st, "shape"))
  st$ncol <- old_ncol + nc
  st$nnz <- old_nnz + nz
  done <- TRUE
  invisible(st)
}

# The writer's file still holds its group (another program may have
# replaced or truncated the file since the writer made it).
check_tenx_target <- function(st, call) {
  listed <- if (file.exists(st$filepath)) {
    tryCatch(rhdf5::h5ls(st$filepath, recursive = TRUE),
             error = function(e) NULL)
  }
  names <- if (!is.null(listed)) {
    sub("^/+", "", paste0(listed$group, "/", listed$name))
  }
  need <- tenx_name(st, c("data", "indices", "indptr", "shape"))
  if (!is.null(listed) && all(need %in% names)) return(invisible(st))
  found <- if (is.null(listed)) "There is no readable HDF5 file" else
    cli::format_inline("There is no 10x group {.val {st$group}}")
  abort_nmfkit(c("This writer cannot append: its file {.arg filepath} no longer holds the matrix it writes.",
                 "x" = "{found} at {.file {st$filepath}}.",
                 "i" = "The file was removed or replaced after {.fn tenx_writer} made it; start a new writer."),
               "filepath", call = call, value = st$filepath)
}

tenx_extend <- function(st, fid, name, values, offset) {
  rhdf5::h5set_extent(fid, tenx_name(st, name), offset + length(values))
  rhdf5::h5write(values, fid, tenx_name(st, name), start = offset + 1,
                 count = length(values))
}

# Back to ncol columns and nnz nonzeros after a failed append.
tenx_cut <- function(st, fid, ncol, nnz) {
  name <- function(x) tenx_name(st, x)
  try(silent = TRUE, {
    rhdf5::h5set_extent(fid, name("data"), nnz)
    rhdf5::h5set_extent(fid, name("indices"), nnz)
    if (isTRUE(st$barcodes)) rhdf5::h5set_extent(fid, name("barcodes"), ncol)
    rhdf5::h5set_extent(fid, name("indptr"), ncol + 1)
    rhdf5::h5write(c(st$nrow, ncol), fid, name("shape"))
  })
  invisible(NULL)
}

tenx_close <- function(st) {
  st$closed <- TRUE
  hdf5_errors_on()
  HDF5Array::TENxMatrix(st$filepath, st$group)
}

# rhdf5 turns a failed HDF5 call into an R error through HDF5's automatic
# error handler, which it installs when it loads. HDF5Array 1.26's reader
# (h5mread(), behind every read of an HDF5Array or TENxMatrix) switches that
# handler off for the session; rhdf5 2.42's H5Dopen() then returns FALSE
# where it would stop, and HDF5Array's own h5isdataset() -- try(H5Dopen())
# then H5Dclose() -- fails with "Argument not of class H5IdComponent". So on
# Debian 12 a second TENxMatrix() in a session fails, and
# writeTENxMatrix() always does (it reads while writing). Restoring rhdf5's
# default before our HDF5 calls keeps their errors errors and lets
# TENxMatrix() open the file.
hdf5_errors_on <- function() {
  rhdf5::h5errorHandling("normal")
  invisible(NULL)
}

# barcodes: variable-length strings, extended with every block.
tenx_barcodes <- function(st) {
  rhdf5::h5createDataset(st$filepath, tenx_name(st, "barcodes"), dims = 0,
                         maxdims = rhdf5::H5Sunlimited(),
                         storage.mode = "character", size = NULL,
                         encoding = "UTF-8", chunk = tenx_names_chunk,
                         level = 0, filter = "NONE", shuffle = FALSE)
}
