# Standard NMF benchmark (issues 2 and 10: speed against the strongest peers):
# the default nmfkit::nmf() against RcppML::nmf() (and scikit-learn's
# NMF(solver = "cd") when python3 has it), each run to the same relative
# error ||X - WH||_F / ||X||_F, on
#   dense:   2000 x 1000, rank 20, X = W0 H0 + U[0, 0.1), W0, H0 uniform;
#   sparse:  20000 x 5000 at 0.5 % density (tf-idf of topic-model counts);
#   planted: 200 x 120, exact rank 5 (uniform W0, H0), target 1e-6.
# Target error: 1.001 x the error RcppML reaches with its own defaults
# (tol = 1e-4, maxit = 100, seed = 42); on the planted problem 1e-6.
# Iterations to the target: the loss trace for nmfkit (tol = 0), bisection on
# maxit for RcppML. Then fits of exactly that many iterations (start-up
# included) are timed in pairs, the two tools alternating which runs first,
# at 1 and at 2 threads; reported: medians and the median of the per-pair
# ratios RcppML / nmfkit. Also GFLOP/s of nmfkit's fits (`gflops`: the
# iterations' flops over the whole fit's time, start included;
# `gflops_iter`: over the time of the iterations after the first, the whole
# fit's less a 1-iteration fit's) next to Eigen GEMM throughput measured in
# the same run, and `uptime` before each problem. The core's FMA peak is
# bench/fma_peak.cpp's (51.5 GFLOP/s on the bench machine).
# Usage: Rscript bench/nmf.R [pairs] [nosklearn] [rcppml1] [threads=1] [cpu]
#   pairs: timed pairs per problem and thread count (default 5; 1 is quick);
#   nosklearn: skip scikit-learn (its dense run takes about a minute);
#   rcppml1: RcppML 1.0 from the private library bench/lib-rcppml
#     (bench/build-rcppml.sh builds it) instead of Debian's 0.3.7;
#   threads=1 (or threads=2): only that thread count (default both);
#   cpu: time by CPU seconds, not the wall clock (a loaded machine; with
#     threads=1).
args <- commandArgs(TRUE)
if ("rcppml1" %in% args) {
  lib1 <- file.path(if (dir.exists("bench")) "bench" else ".", "lib-rcppml")
  stopifnot(dir.exists(file.path(lib1, "RcppML")))
  .libPaths(c(normalizePath(lib1), .libPaths()))
}
suppressPackageStartupMessages({
  library(Matrix)
  library(nmfkit)
})

pairs <- if (length(args) && grepl("^[0-9]+$", args[1])) as.integer(args[1]) else
  5L
use_sklearn <- !"nosklearn" %in% args &&
  system2("/usr/bin/python3", c("-c", shQuote("import sklearn")),
          stdout = FALSE, stderr = FALSE) == 0
args_file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                      value = TRUE))
bench_dir <- if (length(args_file)) dirname(normalizePath(args_file)) else
  "bench"
thread_counts <- 1:2
if (any(grepl("^threads=", args))) {
  thread_counts <- as.integer(sub("^threads=", "",
                                  grep("^threads=", args, value = TRUE)[1]))
}
rank <- 20L
work <- tempfile("nmf-bench-")
dir.create(work)
uptime <- function() trimws(system("uptime", intern = TRUE))
cat("start:", uptime(), "\n")
cat(sprintf("nmfkit %s, RcppML %s, %d pairs, timed by the %s\n",
            utils::packageVersion("nmfkit"), utils::packageVersion("RcppML"),
            pairs, if ("cpu" %in% args) "CPU clock" else "wall clock"))
t_script <- Sys.time()

# ---- data -------------------------------------------------------------------
make_dense <- function(m = 2000, n = 1000, k = 20) {
  w0 <- matrix(stats::runif(m * k), m)
  h0 <- matrix(stats::runif(k * n), k)
  w0 %*% h0 + matrix(stats::runif(m * n, 0, 0.1), m)
}

# Counts from a topic model (k topics, each a shuffled Zipf law over the m
# words, documents mixing few topics), then tf-idf: log1p(count) * idf.
make_sparse <- function(m = 20000, n = 5000, k = 20, tokens = 127) {
  zipf <- 1 / seq_len(m)^1.07
  phi <- vapply(seq_len(k), function(t) sample(zipf), numeric(m))
  theta <- matrix(stats::rgamma(k * n, shape = 0.1), k)
  theta <- sweep(theta, 2, pmax(colSums(theta), 1e-12), "/")
  len <- stats::rpois(n, tokens)
  cnt <- vapply(seq_len(n), function(j) stats::rmultinom(1, len[j], theta[, j]),
                numeric(k))
  ii <- jj <- vector("list", k)
  for (t in seq_len(k)) {
    ii[[t]] <- sample.int(m, sum(cnt[t, ]), replace = TRUE, prob = phi[, t])
    jj[[t]] <- rep.int(seq_len(n), cnt[t, ])
  }
  ii <- unlist(ii)
  jj <- unlist(jj)
  empty <- setdiff(seq_len(m), ii)  # every word used at least once
  ii <- c(ii, empty)
  jj <- c(jj, sample.int(n, length(empty), replace = TRUE))
  x <- sparseMatrix(i = ii, j = jj, x = 1, dims = c(m, n))
  idf <- log((1 + n) / (1 + tabulate(x@i + 1L, m))) + 1
  x@x <- log1p(x@x) * idf[x@i + 1L]
  x
}

make_planted <- function(m = 200, n = 120, k = 5) {
  matrix(stats::runif(m * k), m) %*% matrix(stats::runif(k * n), k)
}

set.seed(20261122)
problems <- list(dense = make_dense())
set.seed(7)
problems$sparse <- make_sparse()
set.seed(5)
problems$planted <- make_planted()
ranks <- c(dense = rank, sparse = rank, planted = 5L)

rel_error <- function(x, w, h) {
  if (inherits(x, "sparseMatrix")) {
    x2 <- sum(x@x^2)
    e2 <- x2 - 2 * sum(w * as.matrix(x %*% t(h))) +
      sum(crossprod(w) * tcrossprod(h))
    return(sqrt(max(e2, 0) / x2))
  }
  sqrt(sum((x - w %*% h)^2) / sum(x^2))
}

# `cpu`: CPU seconds (user + system) instead of the wall clock, for a
# loaded machine, where the wall clock counts the waits for the core (1
# thread only: at 2 threads CPU time adds the threads' times)
use_cpu <- "cpu" %in% args
elapsed <- function(expr) {
  t <- system.time(expr)
  if (use_cpu) t[["user.self"]] + t[["sys.self"]] else t[["elapsed"]]
}
# Seconds per call of f(): one call, or, when that is under 0.1 s (the
# planted problem, nmfkit's dense and sparse fits), the mean over it and
# enough further calls to fill 0.2 s: system.time() counts milliseconds,
# and 0.010 against 0.011 s read as a 2-thread slowdown that 50 repetitions
# showed was not. The first call counts, as a lone call would.
timed <- function(f) {
  t <- elapsed(f())
  if (t >= 0.1) return(t)
  reps <- max(2L, ceiling(0.2 / max(t, 1e-3)))
  (t + elapsed(for (i in seq_len(reps)) f())) / (reps + 1L)
}

# ---- tools ------------------------------------------------------------------
# The default nmf(): method "auto", init "nndsvda".
fit_nmfkit <- function(x, k, iters, threads = 1L) {
  set.seed(1)
  nmf(x, k, keep_data = FALSE,
      control = nmf_control(tol = 0, max_iter = iters, threads = threads))
}
fit_rcppml <- function(x, k, iters, threads = 1L, tol = 0) {
  # RcppML 0.3.7 takes its thread count from the environment variable
  # RcppMLthreads (what RcppML::setRcppMLthreads() sets); unset or 0 means all
  # cores. options(RcppML.threads = ) is not read, so before 2026-11-25 its
  # "1 thread" runs here used both cores.
  # RcppML 1.0 (an S4 result) takes `threads` as an argument (0 = all).
  Sys.setenv(RcppMLthreads = threads)
  if (rcppml_v1) {
    return(RcppML::nmf(x, k, tol = tol, maxit = iters, verbose = FALSE,
                       seed = 42, threads = threads))
  }
  RcppML::nmf(x, k, tol = tol, maxit = iters, verbose = FALSE, seed = 42)
}
rcppml_v1 <- utils::packageVersion("RcppML") >= "1.0.0"
rcppml_part <- function(r, name) {
  if (isS4(r)) {
    if (name == "iter") r@misc$iter else methods::slot(r, name)
  } else r[[name]]
}
rcppml_error <- function(x, r) {
  d <- rcppml_part(r, "d")
  rel_error(x, rcppml_part(r, "w") %*% diag(d, length(d)), rcppml_part(r, "h"))
}
# Smallest maxit reaching the target (ALS error decreases with maxit), or NA.
bisect_rcppml <- function(x, k, target, hi) {
  if (rcppml_error(x, fit_rcppml(x, k, hi)) > target) return(NA_integer_)
  lo <- 0L
  while (hi - lo > 1L) {
    mid <- (lo + hi) %/% 2L
    if (rcppml_error(x, fit_rcppml(x, k, mid)) <= target) hi <- mid else
      lo <- mid
  }
  hi
}

run_sklearn <- function(x, k, name, target, cap, threads = 1L) {
  prefix <- file.path(work, name)
  if (inherits(x, "sparseMatrix")) {
    writeLines(paste("sparse", nrow(x), ncol(x)), paste0(prefix, ".meta"))
    writeBin(x@i, paste0(prefix, ".i"))
    writeBin(x@p, paste0(prefix, ".p"))
    writeBin(x@x, paste0(prefix, ".x"))
  } else {
    writeLines(paste("dense", nrow(x), ncol(x)), paste0(prefix, ".meta"))
    writeBin(as.vector(x), paste0(prefix, ".x"))
  }
  th <- as.character(threads)
  env <- c(OMP_NUM_THREADS = th, OPENBLAS_NUM_THREADS = th,
           MKL_NUM_THREADS = th)
  old <- Sys.getenv(names(env), unset = NA)
  do.call(Sys.setenv, as.list(env))
  on.exit(for (v in names(old)) {
    if (is.na(old[[v]])) Sys.unsetenv(v) else
      do.call(Sys.setenv, stats::setNames(list(old[[v]]), v))
  })
  out <- system2("/usr/bin/python3",
                 c(file.path(bench_dir, "nmf-sklearn.py"), prefix, k,
                   format(target, digits = 17), cap), stdout = TRUE)
  jsonlite::fromJSON(paste(out, collapse = ""))
}

# Flops of one nmfkit iteration: the products H X^T and W^T X (4 nnz k), the
# Grams (2 (m + n) k^2) and the factor updates, counted as one pass of
# 2 k^2 per row and column (a lower bound for ANLS and HALS with more passes).
iter_flops <- function(x, k) {
  nnz <- if (inherits(x, "sparseMatrix")) length(x@x) else length(x)
  4 * nnz * k + 4 * (nrow(x) + ncol(x)) * k^2
}

# ---- main table -------------------------------------------------------------
rows <- list()
for (p in names(problems)) {
  x <- problems[[p]]
  k <- ranks[[p]]
  cat("\n==", p, "==", uptime(), "\n")
  r <- fit_rcppml(x, k, 100L, tol = 1e-4)
  it_r <- rcppml_part(r, "iter")
  default_iter <- it_r + (it_r < 100L)
  target <- if (p == "planted") 1e-6 else 1.001 * rcppml_error(x, r)
  cat(sprintf("RcppML default: %d iterations, error %.7g; target %.7g\n",
              default_iter, rcppml_error(x, r), target))
  n_r <- bisect_rcppml(x, k, target, if (p == "planted") 2000L else
    default_iter)
  cap <- if (p == "planted") 5000L else 1000L
  tr <- fit_nmfkit(x, k, cap)
  n_k <- which(tr$loss <= target)[1]
  cat(sprintf("iterations to target: RcppML %s, nmfkit (%s) %s\n", n_r,
              tr$method, n_k))
  for (th in thread_counts) {
    t_r <- t_k <- rep(NA_real_, pairs)
    for (i in seq_len(pairs)) {
      run_r <- function() if (!is.na(n_r)) timed(function() fit_rcppml(x, k, n_r, th)) else NA
      run_k <- function() if (!is.na(n_k)) timed(function() fit_nmfkit(x, k, n_k, th)) else NA
      if (i %% 2L == 1L) {
        t_r[i] <- run_r()
        t_k[i] <- run_k()
      } else {
        t_k[i] <- run_k()
        t_r[i] <- run_r()
      }
    }
    # the iterations alone: the fit of n_k iterations less the fit of one
    # (the start, the set-up and the R steps are in both)
    t_1 <- if (!is.na(n_k) && n_k > 1L) {
      stats::median(vapply(seq_len(max(pairs, 3L)), function(i) {
        timed(function() fit_nmfkit(x, k, 1L, th))
      }, numeric(1)))
    } else NA_real_
    rows[[length(rows) + 1L]] <- data.frame(
      problem = p, threads = th, target = signif(target, 6),
      rcppml_it = n_r, rcppml_s = stats::median(t_r),
      nmfkit = tr$method, nmfkit_it = n_k, nmfkit_s = stats::median(t_k),
      ratio = stats::median(t_r / t_k),
      gflops = n_k * iter_flops(x, k) / stats::median(t_k) / 1e9,
      gflops_iter = (n_k - 1L) * iter_flops(x, k) /
        (stats::median(t_k) - t_1) / 1e9,
      load = sub(".*load average: ", "", uptime()))
    print(rows[[length(rows)]], digits = 4, row.names = FALSE)
  }
  if (use_sklearn) {
    sk <- run_sklearn(x, k, p, target, if (p == "planted") 5000L else 3000L)
    if (is.null(sk$iter)) {
      cat("sklearn cd: target not reached\n")
    } else {
      t_1 <- rows[[length(rows) - 1L]]$nmfkit_s
      cat(sprintf(paste("sklearn cd (1 thread, own timing, not paired):",
                        "%d iterations, %.3f s median, %.2fx nmfkit's time\n"),
                  sk$iter, stats::median(sk$seconds),
                  stats::median(sk$seconds) / t_1))
    }
  }
}
tab <- do.call(rbind, rows)
tab$speedup_2v1 <- NA_real_
for (p in names(problems)) {
  i <- tab$problem == p
  if (!all(1:2 %in% tab$threads)) break
  tab$speedup_2v1[i & tab$threads == 2] <-
    tab$nmfkit_s[i & tab$threads == 1] / tab$nmfkit_s[i & tab$threads == 2]
}
cat("\n### nmfkit default vs RcppML (ratio = median of RcppML / nmfkit per pair)\n")
print(tab, digits = 4, row.names = FALSE)

# ---- Eigen GEMM throughput (dense problem, 1 thread) ------------------------
# gemm_seconds(): seconds of B = A X (A k x m) or, with trans, B = A X^T
# (A k x n), done whole (chunk = 0) or in blocks of `chunk` columns of B, as
# nmfkit's products are; same flags as the package (-O2, no -march).
Sys.setenv(PKG_CPPFLAGS = paste("-DEIGEN_DONT_PARALLELIZE",
                                "-DEIGEN_PERMANENTLY_DISABLE_STUPID_WARNINGS"),
           PKG_CXXFLAGS = "-Wno-ignored-attributes")
Rcpp::cppFunction(depends = "RcppEigen", includes = "#include <chrono>", '
  Rcpp::NumericVector gemm_seconds(const Eigen::Map<Eigen::MatrixXd> a,
                                   const Eigen::Map<Eigen::MatrixXd> x,
                                   bool trans, int chunk, int reps) {
    const Eigen::Index len = trans ? x.rows() : x.cols();
    const Eigen::Index step = chunk > 0 ? chunk : len;
    Eigen::MatrixXd b(a.rows(), len);
    Rcpp::NumericVector out(reps);
    for (int r = 0; r < reps; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      for (Eigen::Index c = 0; c < len; c += step) {
        const Eigen::Index l = std::min(step, len - c);
        if (trans)
          b.middleCols(c, l).noalias() = a * x.middleRows(c, l).transpose();
        else
          b.middleCols(c, l).noalias() = a * x.middleCols(c, l);
      }
      out[r] = std::chrono::duration<double>(
                   std::chrono::steady_clock::now() - t0).count();
    }
    return out;
  }')
xd <- problems$dense
m <- nrow(xd)
n <- ncol(xd)
set.seed(2)
wt <- matrix(stats::runif(rank * m), rank)
h <- matrix(stats::runif(rank * n), rank)
gemm <- function(trans) {
  a <- if (trans) h else wt
  2 * m * n * rank / stats::median(gemm_seconds(a, xd, trans, 0L, 21L)) / 1e9
}
cat(sprintf("\n### Eigen GEMM, 1 thread: W^T X %.2f GFLOP/s, H X^T %.2f GFLOP/s\n",
            gemm(FALSE), gemm(TRUE)))
cat("\nend:", uptime(), "\ntotal", format(Sys.time() - t_script), "\n")
