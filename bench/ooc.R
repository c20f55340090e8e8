# Issue 26's benchmark: NMF of data larger than memory.
#
# Data (bench/ooc-data.R, run first): planted rank-20 Poisson counts,
# 30,000 x 1,000,000 at about 1 % density (3e8 nonzeros), in the 10x layout
# (write_tenx()'s tenx_writer()), and its first 100,000 columns ("the
# slice", 3e7 nonzeros) in a file of their own.
#
# 1. The slice, rank 20, 20 iterations from the same random start
#    (set.seed(1)), tol = 0: nmf() on the dgCMatrix in memory against nmf()
#    streamed from the TENxMatrix (page cache warm: the file was just read),
#    at 1 and 2 threads, in alternating pairs; the time of a fit is
#    marginal per iteration, (t(20) - t(5)) / 15, so the streamed fit's one
#    scan and the in-memory fit's reading of the file are both left out;
#    the ratio is the median over the pairs.
# 2. Online: nmf(method = "online") for 1, 2, 3, 4 passes, and
#    scikit-learn's MiniBatchNMF (bench/ooc_sklearn.py, on the same counts,
#    samples as rows) for 1, 2, 3, 4, 6 passes: error (relative Frobenius, of
#    the W, H each returns) against time; the batch fit's error after 20
#    iterations is the target.
# 3. The 10^6-column matrix, streamed, 20 iterations at 2 threads: seconds
#    per iteration, peak RSS (VmHWM of the child) and the error; once with
#    the page cache dropped first where /proc/sys/vm/drop_caches is
#    writable (root), else warm only.
# Every fit runs in a child Rscript (its VmHWM is its own) and prints one
# line `RESULT <dput>`. Results go to bench/ooc-results.md.
#
# Issue 35 adds the loss: parts 1 and 3 run for each of --loss (default
# "frobenius,kl"; KL is nmf(loss = "kl"), method "auto" = cd in memory and
# the streamed Newton step for W), and part 3 takes --full-iters
# iterations (default 20); its "per pass" is seconds / (iterations + 1),
# the first scan counted as a pass.
#
# Usage: Rscript bench/ooc.R [--reps 3] [--skip-full] [--loss frobenius,kl]
#          [--threads 1,2] [--parts pairs,online,full] [--full-iters 20]
#          [--iters 5,20] (part 1's two iteration counts)

args <- commandArgs(trailingOnly = TRUE)
lib <- Sys.getenv("NMFKIT_BENCH_LIB")
if (nzchar(lib)) .libPaths(c(lib, .libPaths()))
python <- "/usr/bin/python3"
data_dir <- file.path("bench", "data")
# (NMFKIT_OOC_SLICE: another slice, e.g. one of 30,000 columns written
# with --cols 30000, for runs of minutes)
slice_path <- Sys.getenv("NMFKIT_OOC_SLICE",
                         file.path(data_dir, "ooc-30000x100000.h5"))
full_path <- file.path(data_dir, "ooc-30000x1000000.h5")

vm_hwm <- function() {
  s <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", grep("^VmHWM", s, value = TRUE))) / 1024
}

# ---- child: one fit ---------------------------------------------------------
if (length(args) && args[1] == "--child") {
  suppressMessages(library(nmfkit))
  mode <- args[2]
  path <- args[3]
  threads <- as.integer(args[4])
  iters <- as.integer(args[5])
  loss <- if (length(args) >= 6) args[6] else "frobenius"
  x <- read_tenx(path)
  if (mode == "memory") {
    # the whole file, outside the timing (the streamed fit's reader on all
    # columns: DelayedArray's coercion takes 10 times as long)
    x <- nmfkit:::read_tenx_cols(DelayedArray::seed(x), seq_len(ncol(x)))
  }
  ctrl <- nmf_control(max_iter = iters, tol = 0, threads = threads)
  set.seed(1)
  t <- system.time(fit <- nmf(x, 20, method = if (mode == "online")
    "online" else "auto", loss = loss, control = ctrl))[["elapsed"]]
  cat("RESULT", deparse(list(mode = mode, loss = loss, threads = threads,
                             iters = iters,
                             seconds = t, error = fit$loss[length(fit$loss)],
                             iterations = fit$iterations, method = fit$method,
                             rss_mb = vm_hwm())), "\n")
  quit(save = "no")
}

# ---- the orchestration ------------------------------------------------------
reps <- if ("--reps" %in% args) as.integer(args[which(args == "--reps") + 1]) else 3L
skip_full <- "--skip-full" %in% args
opt <- function(name, default) {
  i <- which(args == name)
  if (length(i)) strsplit(args[i + 1], ",")[[1]] else default
}
losses <- opt("--loss", c("frobenius", "kl"))
thread_counts <- as.integer(opt("--threads", c("1", "2")))
parts <- opt("--parts", c("pairs", "online", "full"))
full_iters <- as.integer(opt("--full-iters", "20"))
pair_iters <- as.integer(opt("--iters", c("5", "20")))  # marginal between
stopifnot(file.exists(slice_path))
rscript <- file.path(R.home("bin"), "Rscript")
child <- function(mode, path, threads, iters, loss = "frobenius") {
  env <- c(paste0("OMP_NUM_THREADS=", threads),
           if (nzchar(lib)) paste0("NMFKIT_BENCH_LIB=", lib))
  out <- system2(rscript, c("bench/ooc.R", "--child", mode, path, threads,
                            iters, loss), stdout = TRUE, env = env)
  line <- grep("^RESULT", out, value = TRUE)
  if (!length(line)) stop(paste(out, collapse = "\n"))
  eval(parse(text = sub("^RESULT ", "", line)))
}

uptime <- system("uptime", intern = TRUE)
cat("load:", uptime, "\n")
rows <- list()

# 1. streamed against in memory, marginal seconds per iteration
pairs <- NULL
ratio_lines <- character()
if ("pairs" %in% parts) {
for (loss in losses) {
for (threads in thread_counts) {
  for (r in seq_len(reps)) {
    one <- list()
    modes <- c("memory", "streamed")
    if (r %% 2 == 0) modes <- rev(modes)
    for (mode in modes) {
      a <- child(mode, slice_path, threads, pair_iters[1], loss)
      b <- child(mode, slice_path, threads, pair_iters[2], loss)
      one[[mode]] <- b
      one[[mode]]$per_iter <- (b$seconds - a$seconds) / diff(pair_iters)
      rows[[length(rows) + 1]] <- c(b[c("mode", "loss", "threads", "seconds",
                                        "error", "rss_mb")],
                                    per_iter = one[[mode]]$per_iter, rep = r,
                                    load = sub(".*average: ", "", system(
                                      "uptime", intern = TRUE)))
    }
    cat(sprintf("%s threads %d rep %d: memory %.3f s/it, streamed %.3f s/it (ratio %.2f); errors %.6f %.6f\n",
                loss, threads, r, one$memory$per_iter, one$streamed$per_iter,
                one$streamed$per_iter / one$memory$per_iter,
                one$memory$error, one$streamed$error))
  }
}
}
pairs <- do.call(rbind, lapply(rows, as.data.frame))
for (loss in losses) {
  for (t in thread_counts) {
    m <- pairs[pairs$loss == loss & pairs$threads == t & pairs$mode == "memory", "per_iter"]
    s <- pairs[pairs$loss == loss & pairs$threads == t & pairs$mode == "streamed", "per_iter"]
    ratio_lines <- c(ratio_lines, sprintf(
      "Median ratio streamed / in memory of marginal seconds per iteration, %s, %d thread(s): %.2f.",
      loss, t, stats::median(s / m)))
  }
}
}

# 2. online against MiniBatchNMF; the batch fit's 20-iteration error
online <- sk <- NULL
if ("online" %in% parts) {
target <- pairs$error[pairs$mode == "memory" & pairs$loss == "frobenius"][1]
online <- do.call(rbind, lapply(1:4, function(p) {
  as.data.frame(child("online", slice_path, 2, p)[c("iters", "seconds",
                                                    "error", "rss_mb")])
}))
raw <- file.path(data_dir, "ooc-slice-raw")
if (!dir.exists(raw)) {
  suppressMessages(library(nmfkit))
  xt <- read_tenx(slice_path)
  x <- nmfkit:::read_tenx_cols(DelayedArray::seed(xt), seq_len(ncol(xt)))
  dir.create(raw)
  writeBin(as.integer(x@p), file.path(raw, "indptr.bin"), size = 4)
  writeBin(as.integer(x@i), file.path(raw, "indices.bin"), size = 4)
  writeBin(as.double(x@x), file.path(raw, "data.bin"), size = 8)
  writeLines(as.character(dim(x)), file.path(raw, "dim.txt"))
  rm(x)
}
sk <- do.call(rbind, lapply(c(1, 2, 3, 4, 6), function(p) {
  out <- system2(python, c("bench/ooc_sklearn.py", raw, p), stdout = TRUE,
                 env = c("OMP_NUM_THREADS=2", "OPENBLAS_NUM_THREADS=2"))
  line <- grep("^RESULT", out, value = TRUE)
  if (!length(line)) stop(paste(out, collapse = "\n"))
  as.data.frame(jsonlite::fromJSON(sub("^RESULT ", "", line)))
}))
}

# 3. the 10^6-column matrix
full <- NULL
if (!skip_full && "full" %in% parts && file.exists(full_path)) {
  full <- do.call(rbind, lapply(losses, function(loss) {
    r <- child("streamed", full_path, 2, full_iters, loss)
    data.frame(loss = loss, iterations = full_iters, seconds = r$seconds,
               per_pass = r$seconds / (full_iters + 1), error = r$error,
               rss_mb = r$rss_mb,
               load = sub(".*average: ", "", system("uptime", intern = TRUE)))
  }))
}

# ---- the report -------------------------------------------------------------
fmt <- function(d) {
  out <- c(paste("|", paste(names(d), collapse = " | "), "|"),
           paste("|", paste(rep("---", ncol(d)), collapse = " | "), "|"))
  for (i in seq_len(nrow(d))) {
    v <- vapply(d[i, ], function(z) {
      if (is.numeric(z)) format(signif(z, 4)) else as.character(z)
    }, character(1))
    out <- c(out, paste("|", paste(v, collapse = " | "), "|"))
  }
  out
}
report <- c(
  "# Out-of-core benchmark (bench/ooc.R)", "",
  paste("Load before the run:", uptime), "",
  if (!is.null(pairs)) c(
    "## Streamed from HDF5 against in memory: the 100,000-column slice, rank 20",
    "", fmt(pairs), "", ratio_lines, ""),
  if (!is.null(online)) c(
    "## Online: nmfkit (2 threads) and scikit-learn MiniBatchNMF", "",
    sprintf("The batch fit's error after 20 iterations: %.6f.", target), "",
    "nmfkit `method = \"online\"` (passes, seconds, error):", "", fmt(online), "",
    "scikit-learn `MiniBatchNMF` (passes, seconds, error):", "", fmt(sk), ""),
  if (!is.null(full)) c(sprintf("## The 30,000 x 1,000,000 matrix, streamed, 2 threads, %d iterations", full_iters), "",
                        fmt(full), ""))
writeLines(report, "bench/ooc-results.md")
cat(report, sep = "\n")
