# Standard NMF benchmark (issue 2, specs/nmf.md "Speed targets"):
# nmfkit::nmf against RcppML::nmf, NMF::nmf ("lee", "brunet") and
# scikit-learn's NMF(solver = "cd", init = "nndsvda"), each run to the same
# relative error ||X - WH||_F / ||X||_F on
#   dense:  2000 x 1000, rank 20, X = W0 H0 + U[0, 0.1), W0 and H0 uniform;
#   sparse: 20000 x 5000 at 0.5 % density (tf-idf of topic-model counts).
# Target error per problem: 1.001 x the error RcppML reaches with its own
# defaults (tol = 1e-4, maxit = 100). For every tool the smallest iteration
# count reaching it is found (loss trace for nmfkit and scikit-learn,
# bisection on maxit for RcppML), then a run of exactly that many iterations
# (from the tool's default start, start-up included) is timed: median of 3
# when a run takes under 12 s, else one run. NMF::nmf (multiplicative updates,
# R-level loop) is run for a fixed time budget and reported as not reaching
# the target. Also: GFLOP/s of the HALS iteration against Eigen GEMM, and
# the peak memory of nmfkit on the sparse problem (child process).
# Usage: Rscript bench/nmf.R   (about 11 minutes on 2 busy cores, less idle)
suppressPackageStartupMessages({
  library(Matrix)
  library(nmfkit)
})

args_file <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE),
                                      value = TRUE))
bench_dir <- if (length(args_file)) dirname(normalizePath(args_file)) else
  "bench"
rank <- 20L
inners <- c(5L, 10L, 20L)
work <- tempfile("nmf-bench-")
dir.create(work)
uptime <- function() trimws(system("uptime", intern = TRUE))
cat("start:", uptime(), "\n")
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

set.seed(20261122)
problems <- list(dense = make_dense())
set.seed(7)
problems$sparse <- make_sparse()
xs <- problems$sparse
cat(sprintf("sparse: %d x %d, nnz %d (density %.3f %%)\n", nrow(xs),
            ncol(xs), length(xs@x), 100 * length(xs@x) / prod(dim(xs))))

rel_error <- function(x, w, h) {
  if (inherits(x, "sparseMatrix")) {
    x2 <- sum(x@x^2)
    e2 <- x2 - 2 * sum(w * as.matrix(x %*% t(h))) +
      sum(crossprod(w) * tcrossprod(h))
    return(sqrt(max(e2, 0) / x2))
  }
  sqrt(sum((x - w %*% h)^2) / sum(x^2))
}

elapsed <- function(expr) system.time(expr)[["elapsed"]]
# Median time of f(): three runs when one takes under `cheap` seconds.
time_median <- function(f, cheap = 12) {
  t <- elapsed(f())
  if (t < cheap) t <- c(t, elapsed(f()), elapsed(f()))
  stats::median(t)
}

# ---- tools ------------------------------------------------------------------
fit_nmfkit <- function(x, method, inner, iters, threads = 1L, init =
                         "nndsvda") {
  set.seed(1)
  nmf(x, rank, method = method, init = init, keep_data = FALSE,
      control = nmf_control(tol = 0, max_iter = iters, threads = threads,
                            inner = inner))
}
# Loss trace until the target is reached, in chunks continued from the last
# factors (the solvers carry no state across iterations, so this is the same
# trajectory as one long run).
trace_nmfkit <- function(x, method, inner, target, chunk, cap) {
  trace <- numeric()
  init <- "nndsvda"
  while (length(trace) < cap) {
    fit <- fit_nmfkit(x, method, inner, chunk, init = init)
    trace <- c(trace, fit$loss)
    if (min(trace) <= target) break
    init <- list(W = fit$W, H = fit$H)
  }
  which(trace <= target)[1]
}

fit_rcppml <- function(x, iters, threads = 1L, tol = 0) {
  options(RcppML.threads = threads)
  RcppML::nmf(x, rank, tol = tol, maxit = iters, verbose = FALSE, seed = 42)
}
rcppml_error <- function(x, r) rel_error(x, r$w %*% diag(r$d), r$h)
# Smallest maxit reaching the target (ALS error decreases with maxit).
bisect_rcppml <- function(x, target, hi) {
  lo <- 0L
  while (hi - lo > 1L) {
    mid <- (lo + hi) %/% 2L
    if (rcppml_error(x, fit_rcppml(x, mid)) <= target) hi <- mid else lo <- mid
  }
  hi
}

run_sklearn <- function(x, name, target, cap, threads = 1L) {
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
                 c(file.path(bench_dir, "nmf-sklearn.py"), prefix, rank,
                   format(target, digits = 17), cap), stdout = TRUE)
  jsonlite::fromJSON(paste(out, collapse = ""))
}

# NMF::nmf for about `budget` seconds (iterations from a short probe).
run_nmf_pkg <- function(x, method, budget, probe) {
  xd <- as.matrix(x)
  one <- function(iters) {
    t <- elapsed(f <- NMF::nmf(xd, rank, method, seed = 42, .stop = iters))
    list(t = t, err = rel_error(x, NMF::basis(f), NMF::coef(f)),
         iters = iters)
  }
  p <- one(probe)
  iters <- max(probe, min(5000L, as.integer(budget * probe / p$t)))
  if (iters > probe) one(iters) else p
}

# ---- main table -------------------------------------------------------------
rows <- list()
add_row <- function(problem, tool, iters, seconds, err, note = "") {
  rows[[length(rows) + 1L]] <<- data.frame(
    problem = problem, tool = tool, iters = iters, seconds = seconds,
    error = err, note = note)
}
targets <- c()
needed <- list()
suppressPackageStartupMessages(requireNamespace("NMF"))
for (p in names(problems)) {
  x <- problems[[p]]
  cat("\n==", p, "==", uptime(), "\n")
  # Target: RcppML with its defaults.
  r <- fit_rcppml(x, 100L, tol = 1e-4)
  # RcppML reports one iteration fewer than it ran when its tol stops it.
  default_iter <- r$iter + (r$iter < 100L)
  targets[[p]] <- 1.001 * rcppml_error(x, r)
  target <- targets[[p]]
  cat(sprintf("RcppML default: %d iterations, error %.7f; target %.7f\n",
              default_iter, target / 1.001, target))
  n_r <- bisect_rcppml(x, target, default_iter)
  t_r <- time_median(function() fit_rcppml(x, n_r))
  e_r <- rcppml_error(x, fit_rcppml(x, n_r))
  add_row(p, "RcppML::nmf (ANLS)", n_r, t_r, e_r,
          if (e_r > target) "NOT reached" else "")

  solvers <- c(
    list(list("hals", NULL, "nmfkit hals")),
    lapply(inners, function(i) {
      list("hals", i, paste0("nmfkit hals inner=", i))
    }),
    list(list("anls", NULL, "nmfkit anls"))
  )
  for (s in solvers) {
    cap <- if (s[[1]] == "anls") 400L else 3000L
    n_k <- trace_nmfkit(x, s[[1]], s[[2]], target, 50L, cap)
    needed[[p]][[s[[3]]]] <- list(method = s[[1]], inner = s[[2]], n = n_k)
    if (is.na(n_k)) {
      add_row(p, s[[3]], NA, NA, NA, paste("not reached in", cap, "its"))
      next
    }
    t_k <- time_median(function() fit_nmfkit(x, s[[1]], s[[2]], n_k))
    add_row(p, s[[3]], n_k, t_k,
            utils::tail(fit_nmfkit(x, s[[1]], s[[2]], n_k)$loss, 1))
    cat(s[[3]], ":", n_k, "iterations,", t_k, "s\n")
  }

  sk <- run_sklearn(x, p, target, 3000L)
  if (is.null(sk$iter)) {
    add_row(p, "sklearn NMF cd", NA, NA, NA, "not reached in 3000 its")
  } else {
    add_row(p, "sklearn NMF cd", sk$iter, stats::median(sk$seconds),
            sk$error)
  }

  # NMF::nmf: the dense problem for ~20 s per method; the sparse one needs a
  # dense copy (763 MiB) and ~10-30 s per iteration, so one iteration only.
  for (meth in c("lee", "brunet")) {
    o <- if (p == "dense") run_nmf_pkg(x, meth, 20, 5L) else
      run_nmf_pkg(x, meth, 0, 1L)
    note <- if (o$err <= target) "reached" else "NOT reached (capped)"
    add_row(p, paste0("NMF::nmf ", meth), o$iters, o$t, o$err, note)
  }
}
tab <- do.call(rbind, rows)
for (p in names(problems)) {
  ref <- tab$seconds[tab$problem == p & tab$tool == "nmfkit hals"]
  best <- min(tab$seconds[tab$problem == p & startsWith(tab$tool, "nmfkit")],
              na.rm = TRUE)
  i <- tab$problem == p
  tab$vs_hals[i] <- tab$seconds[i] / ref
  tab$vs_best[i] <- tab$seconds[i] / best
}
cat("\n### 1 thread (targets:",
    paste(sprintf("%s %.7f", names(targets), unlist(targets)),
          collapse = ", "), ")\n")
print(tab, digits = 4, row.names = FALSE)

# ---- 2 threads: nmfkit vs RcppML --------------------------------------------
rows2 <- list()
for (p in names(problems)) {
  x <- problems[[p]]
  n_r <- tab$iters[tab$problem == p & tab$tool == "RcppML::nmf (ANLS)"]
  t_r <- time_median(function() fit_rcppml(x, n_r, threads = 2L))
  rows2[[length(rows2) + 1L]] <- data.frame(problem = p, tool = "RcppML",
                                            iters = n_r, seconds = t_r)
  # hals, anls and the fastest inner setting at 1 thread
  inner_rows <- tab[tab$problem == p & grepl("inner", tab$tool), ]
  keep <- c("nmfkit hals", inner_rows$tool[which.min(inner_rows$seconds)],
            "nmfkit anls")
  for (nm in keep) {
    s <- needed[[p]][[nm]]
    if (is.na(s$n)) next
    t_k <- time_median(function() fit_nmfkit(x, s$method, s$inner, s$n, 2L))
    rows2[[length(rows2) + 1L]] <- data.frame(problem = p, tool = nm,
                                              iters = s$n, seconds = t_k)
  }
}
tab2 <- do.call(rbind, rows2)
for (p in names(problems)) {
  i <- tab2$problem == p
  tab2$rcppml_over_this[i] <- tab2$seconds[i & tab2$tool == "RcppML"] /
    tab2$seconds[i]
}
cat("\n### 2 threads\n")
print(tab2, digits = 4, row.names = FALSE)

# ---- HALS GFLOP/s against Eigen GEMM (dense, 1 thread) ----------------------
xd <- problems$dense
m <- nrow(xd)
n <- ncol(xd)
start <- fit_nmfkit(xd, "hals", NULL, 1L)
start <- list(W = start$W, H = start$H)
per_iter <- stats::median(replicate(3, {
  t_long <- elapsed(fit_nmfkit(xd, "hals", NULL, 110L, init = start))
  t_short <- elapsed(fit_nmfkit(xd, "hals", NULL, 10L, init = start))
  (t_long - t_short) / 100
}))
# Products H X^T and W^T X: 4mnk; Grams HH^T, W^TW: 2(m + n)k^2; one cd
# pass over W and one over H: 2(m + n)k^2 (a length-k dot per coordinate).
hals_flops <- 4 * m * n * rank + 4 * (m + n) * rank^2
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
gemm <- function(trans, chunk) {
  a <- if (trans) start$H else t(start$W)
  2 * m * n * rank / stats::median(gemm_seconds(a, xd, trans, chunk, 21L)) /
    1e9
}
chunk <- function(len) max(16, (len + 63) %/% 64)  # parallel.hpp
gf <- c(hals_iteration = hals_flops / per_iter / 1e9,
        gemm_WtX = gemm(FALSE, 0L), gemm_HXt = gemm(TRUE, 0L),
        gemm_WtX_chunked = gemm(FALSE, chunk(n)),
        gemm_HXt_chunked = gemm(TRUE, chunk(m)))
cat(sprintf("\n### HALS iteration: %.2f ms, %.4g flops\n", 1e3 * per_iter,
            hals_flops))
print(round(gf, 2))
cat(sprintf("HALS / mean full GEMM = %.2f\n",
            gf[[1]] / mean(gf[c("gemm_WtX", "gemm_HXt")])))

# ---- peak memory on the sparse problem (child process) ----------------------
rds <- file.path(work, "sparse.rds")
saveRDS(problems$sparse, rds)
child <- file.path(work, "memory.R")
writeLines(c(
  "suppressPackageStartupMessages({library(Matrix); library(nmfkit)})",
  "hwm <- function() as.numeric(gsub('[^0-9]', '', grep('^VmHWM',",
  "  readLines('/proc/self/status'), value = TRUE))) / 1024",
  "x <- readRDS(commandArgs(TRUE)[1]); base <- hwm()",
  "set.seed(1); fit <- nmf(x, 20, keep_data = FALSE,",
  "  control = nmf_control(tol = 0, max_iter = 50))",
  "cat(base, hwm(), as.numeric(object.size(x)) / 2^20)"), child)
mem <- as.numeric(strsplit(system2(
  file.path(R.home("bin"), "Rscript"), c(child, rds), stdout = TRUE,
  env = paste0("R_LIBS=", paste(.libPaths(), collapse = ":"))), " ")[[1]])
cat(sprintf(paste0("\n### sparse peak memory (VmHWM): %.0f MiB after ",
                   "loading X (%.1f MiB), %.0f MiB after 50 iterations: ",
                   "+%.0f MiB; a dense copy is %.0f MiB\n"),
            mem[1], mem[3], mem[2], mem[2] - mem[1],
            prod(dim(problems$sparse)) * 8 / 2^20))
cat("\nend:", uptime(), "\ntotal", format(Sys.time() - t_script), "\n")
