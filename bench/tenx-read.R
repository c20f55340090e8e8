# Read speed of TENxMatrix files written by nmfkit::write_tenx() for the
# chunk sizes and gzip levels it offers: what its defaults rest on
# (bench/ooc-data.md records the figures).
#
#   Rscript bench/tenx-read.R [max_cols]       # default 400000
#
# Data: the planted counts of bench/ooc-data.R (30,000 rows, 1 % dense) at
# 10,000, 100,000 and max_cols columns, written to a temporary directory
# (removed at the end; about 3 GB at the largest). Every file is read
# whole by column blocks of 10,000 columns, the way a streamed fit reads
# it, in two ways:
#   * sparse: DelayedArray::read_block(x, viewport, as.sparse = TRUE), then
#     as a dgCMatrix (what a fit hands its core);
#   * extract: DelayedArray::extract_sparse_array(x, list(NULL, cols)), the
#     seed-level read without the conversion;
#   * raw: the block's ranges of data and indices read with rhdf5::h5read()
#     and put in a dgCMatrix: the HDF5 cost alone, the floor under the
#     other two (what the chunk size and compression change).
# "warm": best of three passes with the file in the page cache; "cold": one
# pass after the file's pages are dropped from the cache
# (posix_fadvise(DONTNEED) through python3, no root needed).

suppressPackageStartupMessages({
  library(nmfkit)
  library(HDF5Array)
})
ooc_data_no_main <- TRUE
source("bench/ooc-data.R")  # run from the repository's top directory

args <- commandArgs(trailingOnly = TRUE)
max_cols <- if (length(args)) as.integer(args[1]) else 400000L
m <- 30000L
k <- 20L
width <- 10000L
dir <- tempfile("tenx-read-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)

drop_cache <- function(path) {
  system2("python3", c("-c", shQuote(paste0(
    "import os; fd = os.open('", path, "', os.O_RDONLY); ",
    "os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)"))))
}

read_pass <- function(x, how) {
  n <- ncol(x)
  starts <- seq(1L, n, by = width)
  t0 <- proc.time()[["elapsed"]]
  nnz <- 0
  for (s in starts) {
    cols <- s:min(s + width - 1L, n)
    if (how == "sparse") {
      vp <- DelayedArray::ArrayViewport(dim(x), IRanges::IRanges(
        c(1L, s), c(m, max(cols))))
      b <- as(DelayedArray::read_block(x, vp, as.sparse = TRUE), "dgCMatrix")
      nnz <- nnz + length(b@x)
    } else {
      b <- DelayedArray::extract_sparse_array(x, list(NULL, cols))
      nnz <- nnz + length(DelayedArray::nzdata(b))
    }
  }
  c(time = proc.time()[["elapsed"]] - t0, nnz = nnz)
}

raw_pass <- function(path) {
  t0 <- proc.time()[["elapsed"]]
  fid <- rhdf5::H5Fopen(path, flags = "H5F_ACC_RDONLY")
  on.exit(rhdf5::H5Fclose(fid))
  p <- as.vector(rhdf5::h5read(fid, "matrix/indptr",
                               bit64conversion = "double"))
  n <- length(p) - 1L
  for (s in seq(1L, n, by = width)) {
    e <- min(s + width - 1L, n)
    cnt <- p[e + 1L] - p[s]
    x <- as.vector(rhdf5::h5read(fid, "matrix/data", start = p[s] + 1,
                                 count = cnt))
    i <- as.vector(rhdf5::h5read(fid, "matrix/indices", start = p[s] + 1,
                                 count = cnt))
    b <- new("dgCMatrix", i = i, p = as.integer(p[s:(e + 1L)] - p[s]),
             x = as.double(x), Dim = c(m, e - s + 1L))
  }
  proc.time()[["elapsed"]] - t0
}

measure <- function(path, label, chunk, level, write_time) {
  x <- read_tenx(path)  # HDF5Array::TENxMatrix() fails after reads on Debian 12
  warm_s <- min(replicate(3, read_pass(x, "sparse")[["time"]]))
  warm_e <- min(replicate(3, read_pass(x, "extract")[["time"]]))
  warm_r <- min(replicate(3, raw_pass(path)))
  drop_cache(path)
  cold_s <- read_pass(x, "sparse")[["time"]]
  drop_cache(path)
  cold_r <- raw_pass(path)
  r <- data.frame(data = label, chunk = chunk, level = level,
                  type = type(x), write_s = round(write_time, 1),
                  size_MB = round(file.size(path) / 1e6, 1),
                  warm_sparse_s = round(warm_s, 2),
                  warm_extract_s = round(warm_e, 2),
                  warm_raw_s = round(warm_r, 2),
                  cold_sparse_s = round(cold_s, 2),
                  cold_raw_s = round(cold_r, 2))
  print(r, row.names = FALSE)
  flush.console()
  r
}

# the planted data, units of 1,000 columns (as bench/ooc-data.R makes them)
RNGkind("L'Ecuyer-CMRG")
set.seed(1)
stream <- .Random.seed
next_stream <- function() {
  stream <<- parallel::nextRNGStream(stream)
  assign(".Random.seed", stream, envir = globalenv())
}
next_stream()
basis <- ooc_basis(m, k)
next_stream()
s <- ooc_scale(basis, k, m, 0.01)
make <- function(n) {
  do.call(cbind, lapply(seq_len(n %/% 1000L), function(u) {
    next_stream()
    ooc_unit(basis, k, m, 1000L, s)
  }))
}

cat(sprintf("tenx-read: %s, load %s\n", format(Sys.time()),
            paste(readLines("/proc/loadavg"), collapse = "")))
res <- list()
# 10,000 and 100,000 columns: from memory, every chunk size and level
for (n in c(10000L, 100000L)) {
  set.seed(1)  # same data for both sizes: restart the streams
  stream <- .Random.seed
  next_stream(); next_stream()
  x <- make(n)
  cat(sprintf("\n%d x %d, %d nonzeros\n", m, n, length(x@x)))
  grid <- if (n == 100000L) {
    expand.grid(chunk = c(16384L, 65536L, 262144L), level = c(0L, 1L, 6L))
  } else {
    data.frame(chunk = 65536L, level = c(0L, 1L, 6L))
  }
  for (g in seq_len(nrow(grid))) {
    path <- file.path(dir, sprintf("x%d-c%d-l%d.h5", n, grid$chunk[g],
                                   grid$level[g]))
    t <- system.time(write_tenx(x, path, chunk = grid$chunk[g],
                                level = grid$level[g]))[["elapsed"]]
    res[[length(res) + 1]] <- measure(path, paste0(n / 1000, "k"),
                                      grid$chunk[g], grid$level[g], t)
    unlink(path)
  }
  # doubles instead of integers, no compression
  path <- file.path(dir, sprintf("x%d-double.h5", n))
  t <- system.time(write_tenx(x, path, type = "double"))[["elapsed"]]
  res[[length(res) + 1]] <- measure(path, paste0(n / 1000, "k"), 65536L, 0L, t)
  unlink(path)
  rm(x)
  gc()
}

# max_cols columns: generated by blocks with tenx_writer() at level 0, then
# re-written from that TENxMatrix (write_tenx() on a DelayedMatrix) at level 6
if (max_cols > 100000L) {
  set.seed(1)
  stream <- .Random.seed
  next_stream(); next_stream()
  path0 <- file.path(dir, "big-l0.h5")
  t <- system.time({
    w <- tenx_writer(path0, m, type = "integer")
    for (b in seq_len(max_cols %/% 10000L)) w$append(make(10000L))
    big <- w$close()
  })[["elapsed"]]
  cat(sprintf("\n%d x %d, %.0f nonzeros\n", m, max_cols, w$info()$nnz))
  res[[length(res) + 1]] <- measure(path0, paste0(max_cols / 1000, "k"),
                                    65536L, 0L, t)
  path6 <- file.path(dir, "big-l6.h5")
  t <- system.time(write_tenx(big, path6, level = 6L))[["elapsed"]]
  res[[length(res) + 1]] <- measure(path6, paste0(max_cols / 1000, "k"),
                                    65536L, 6L, t)
}
cat("\nall results\n")
options(width = 200)
print(do.call(rbind, res), row.names = FALSE)
cat(sprintf("load at the end: %s\n", paste(readLines("/proc/loadavg"),
                                           collapse = "")))
