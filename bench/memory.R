# Memory of streamed fits against the block budget (issue 35, "Memory"):
# peak RSS above the loaded-packages baseline of
#   * the first scan of the data (what nmf() does before its first pass),
#   * a streamed nmf(), rank 10, 5 iterations (tol 0), KL and Frobenius,
#   * predict() of a fit on the whole matrix,
# at block_size = the default (DelayedArray::getAutoBlockSize(), 100 MB),
# 25 MB and 10 MB, against the bound 3 x budget + O((m + n) k).
# Data (bench/data/, gitignored, written once):
#   * sparse: a 20,000 x 20,000 TENxMatrix with 4e7 nonzeros (10 %; counts
#     1 + Poisson(2) at 2,000 random rows per column; 458 MB as a
#     dgCMatrix), written with tenx_writer() in blocks of 1,000 columns;
#   * dense: a 20,000 x 10,000 HDF5Matrix of doubles (1.6 GB; rank-10
#     planted mean plus uniform noise), chunks of 20,000 x 100.
# Each measurement is a child Rscript: it loads nmfkit, HDF5Array and the
# file, runs gc(), resets the peak (echo 5 > /proc/self/clear_refs, Linux
# >= 4.0), reads VmRSS as the baseline, runs the step and reads VmHWM.
# predict(): the child first fits the first 500 columns in memory (rank 10,
# Frobenius or KL), then resets the peak and predicts the whole matrix.
#
# Run: Rscript bench/memory.R data      (writes the two files only)
#      Rscript bench/memory.R [sparse|dense|both] [steps]
#   steps: comma-separated of scan, fit-kl, fit-frobenius, predict-kl,
#   predict-frobenius (default all). Writes bench/memory-results.md.
# Environment: MEM_BENCH_ITERS (iterations of the fits, default 5),
# MEM_BENCH_BUDGETS (default "default,25,10", MB). Under load a KL fit of
# 5 iterations took 30 minutes; the peak is reached in the first pass.
args <- commandArgs(TRUE)
data_dir <- file.path("bench", "data")
# columns of the sparse file (MEM_BENCH_SPARSE_COLS; 20,000 rows), rows
# and columns of the dense one (MEM_BENCH_DENSE_ROWS, MEM_BENCH_DENSE_COLS):
# the peak depends on the budget, not on the size, once a pass reads more
# than R's heap trigger holds. A fit's block is at least one chunk of the
# H update (n / 64 columns, at least 16): the bound is 3 x the larger of
# the budget and a chunk's cost, so files whose chunk costs less than
# 10 MB show the budget (sparse 20,000 x 6,400: 7.2 MB; dense
# 10,000 x 1,024 read sparse: 7 MB).
sparse_n <- as.integer(Sys.getenv("MEM_BENCH_SPARSE_COLS", "20000"))
dense_m <- as.integer(Sys.getenv("MEM_BENCH_DENSE_ROWS", "20000"))
dense_n <- as.integer(Sys.getenv("MEM_BENCH_DENSE_COLS", "10000"))
sparse_path <- file.path(data_dir, sprintf("mem-20000x%d.h5", sparse_n))
dense_path <- file.path(data_dir,
                        sprintf("mem-dense-%dx%d.h5", dense_m, dense_n))
iters <- as.integer(Sys.getenv("MEM_BENCH_ITERS", "5"))
mb <- 1e6  # MB as DelayedArray counts them (its default budget is 1e8 bytes)
status_mb <- function(field) {  # /proc reports kB (1024 bytes)
  s <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep(paste0("^", field), s, value = TRUE))) *
    1024 / mb
}

# ---- child ------------------------------------------------------------------
if (length(args) && args[1] == "--child") {
  suppressPackageStartupMessages({
    library(nmfkit)
    library(HDF5Array)
  })
  kind <- args[2]
  step <- args[3]
  budget <- if (args[4] == "default") NULL else as.numeric(args[4]) * mb
  x <- if (kind == "sparse") read_tenx(sparse_path) else
    HDF5Array::HDF5Array(dense_path, "x")
  loss <- sub("^[a-z]+-", "", step)
  ctrl <- nmf_control(max_iter = iters, tol = 0, threads = 1,
                      block_size = budget)
  fit0 <- NULL
  if (startsWith(step, "predict")) {
    small <- as(x[, 1:500], if (kind == "sparse") "dgCMatrix" else "matrix")
    set.seed(1)
    fit0 <- nmf(small, 10, loss = loss, keep_data = FALSE,
                control = nmf_control(max_iter = 20, block_size = budget))
    rm(small)
  }
  invisible(gc(full = TRUE))
  gc.time(TRUE)
  gc0 <- gc.time()[1]
  writeLines("5", "/proc/self/clear_refs")
  base <- status_mb("VmRSS")
  t <- system.time({
    if (step == "scan") {
      s <- nmfkit:::as_blocks(x, "x", environment(), budget = budget)
    } else if (startsWith(step, "fit")) {
      set.seed(1)
      f <- nmf(x, 10, loss = loss, control = ctrl)
    } else {
      h <- predict(fit0, x)
    }
  })
  peak <- status_mb("VmHWM")
  cat("RESULT", deparse(list(base = base, peak = peak,
                             seconds = t[["elapsed"]],
                             cpu = t[["user.self"]] + t[["sys.self"]],
                             gc = gc.time()[1] - gc0)), "\n")
  quit(save = "no")
}

# ---- data -------------------------------------------------------------------
suppressPackageStartupMessages(library(nmfkit))
dir.create(data_dir, showWarnings = FALSE)
make_sparse <- function() {
  if (file.exists(sparse_path)) return(invisible())
  m <- 20000L
  n <- sparse_n
  per_col <- 2000L
  set.seed(35)
  w <- tenx_writer(sparse_path, nrow = m, type = "integer", level = 0)
  for (start in seq(0L, n - 1L, by = 1000L)) {
    len <- min(1000L, n - start)
    i <- unlist(lapply(seq_len(len), function(j)
      sort(sample.int(m, per_col))))
    block <- Matrix::sparseMatrix(i = i, j = rep(seq_len(len),
                                                 each = per_col),
                                  x = 1 + stats::rpois(length(i), 2),
                                  dims = c(m, len))
    w$append(block)
  }
  w$close()
  invisible()
}
make_dense <- function() {
  if (file.exists(dense_path)) return(invisible())
  m <- dense_m
  n <- dense_n
  set.seed(36)
  w0 <- matrix(stats::runif(m * 10), m)
  rhdf5::h5createFile(dense_path)
  rhdf5::h5createDataset(dense_path, "x", dims = c(m, n),
                         chunk = c(m, min(100L, n)), storage.mode = "double",
                         level = 0)
  for (start in seq(0L, n - 1L, by = 1000L)) {
    cols <- start + seq_len(min(1000L, n - start))
    len <- length(cols)
    block <- w0 %*% matrix(stats::runif(10 * len), 10) +
      matrix(stats::runif(m * len, 0, 0.5), m)
    rhdf5::h5write(block, dense_path, "x", index = list(NULL, cols))
  }
  rhdf5::h5closeAll()
  invisible()
}

if (length(args) && args[1] == "data") {
  make_sparse()
  make_dense()
  quit(save = "no")
}
kinds <- if (length(args) && args[1] %in% c("sparse", "dense")) args[1] else
  c("sparse", "dense")
steps <- if (length(args) >= 2) strsplit(args[2], ",")[[1]] else
  c("scan", "fit-kl", "fit-frobenius", "predict-kl", "predict-frobenius")
budgets <- strsplit(Sys.getenv("MEM_BENCH_BUDGETS", "default,25,10"), ",")[[1]]
rscript <- file.path(R.home("bin"), "Rscript")
child <- function(kind, step, budget) {
  out <- system2(rscript, c("bench/memory.R", "--child", kind, step, budget),
                 stdout = TRUE, stderr = TRUE,
                 env = c("OMP_NUM_THREADS=1", paste0("MEM_BENCH_ITERS=", iters)))
  line <- grep("^RESULT", out, value = TRUE)
  if (!length(line)) {
    return(list(base = NA, peak = NA, seconds = NA, cpu = NA, gc = NA,
                error = paste(tail(out, 3), collapse = " ")))
  }
  eval(parse(text = sub("^RESULT ", "", line)))
}
up <- trimws(system("uptime", intern = TRUE))
cat("start:", up, "\n")
rows <- list()
for (kind in kinds) {
  if (kind == "sparse") make_sparse() else make_dense()
  d <- if (kind == "sparse") c(20000, sparse_n) else c(dense_m, dense_n)
  factors_mb <- sum(d) * 10 * 8 / mb
  for (step in steps) {
    for (b in budgets) {
      r <- child(kind, step, b)
      budget_mb <- if (b == "default")
        DelayedArray::getAutoBlockSize() / mb else as.numeric(b)
      rows[[length(rows) + 1L]] <- data.frame(
        data = kind, step = step, block_size = if (b == "default")
          sprintf("default (%g MB)", budget_mb) else paste(b, "MB"),
        baseline_mb = round(r$base), above_mb = round(r$peak - r$base),
        bound_3x_budget_mb = 3 * budget_mb,
        factors_mb = round(factors_mb, 1), iterations = if (startsWith(step,
          "fit")) iters else NA, seconds = round(r$seconds, 1),
        cpu_s = round(r$cpu, 1), gc_s = round(r$gc, 2),
        note = if (is.null(r$error)) "" else r$error)
      print(rows[[length(rows)]], row.names = FALSE)
    }
  }
}
tab <- do.call(rbind, rows)
md <- c(
  "# Memory of streamed fits (bench/memory.R)", "",
  paste0("Run ", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
         "; sparse 20000 x ", sparse_n, ", dense ", dense_m, " x ", dense_n,
         "; nmfkit ", utils::packageVersion("nmfkit"), "; `uptime` at the start: ",
         up), "",
  "Peak RSS above the loaded-packages baseline (MB, 1e6 bytes); `factors_mb` is one copy of (m + n) k doubles.",
  "",
  paste("|", paste(names(tab), collapse = " | "), "|"),
  paste("|", paste(rep("---", ncol(tab)), collapse = " | "), "|"),
  apply(tab, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
writeLines(md, "bench/memory-results.md")
cat(md, sep = "\n")
