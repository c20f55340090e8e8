# Masked and weighted NMF cost, and nmf_rank() timing (issue 12).
# Run: R_LIBS=... Rscript bench/masks.R [part]   (part: dense, sparse,
# rcppml, rank; default all). Timings are paired and alternating: report
# ratios, not absolute times, when the machine is loaded.
library(nmfkit)
args <- commandArgs(TRUE)
parts <- if (length(args)) args else c("dense", "sparse", "rcppml", "rank")

time_it <- function(f) system.time(f())[["elapsed"]]
# Alternating pairs: median ratio of b over a.
paired <- function(a, b, reps = 3) {
  ta <- tb <- numeric(reps)
  for (r in seq_len(reps)) {
    ta[r] <- time_it(a)
    tb[r] <- time_it(b)
  }
  c(a = stats::median(ta), b = stats::median(tb),
    ratio = stats::median(tb / ta))
}
ctl <- nmf_control(max_iter = 30, tol = 0)

if ("dense" %in% parts) {
  set.seed(1)
  x <- matrix(runif(2000 * 20), 2000) %*% matrix(runif(20 * 1000), 20)
  mk <- matrix(runif(length(x)) < 0.05, nrow(x))
  start <- list(W = matrix(runif(2000 * 20), 2000),
                H = matrix(runif(20 * 1000), 20))
  r <- paired(function() nmf(x, 20, init = start, control = ctl),
              function() nmf(x, 20, init = start, control = ctl, mask = mk))
  cat(sprintf("dense 2000 x 1000, rank 20, 5%% masked, 30 its: unmasked %.2f s, masked %.2f s, ratio %.2f\n",
              r[1], r[2], r[3]))
}

sparse_problem <- function() {
  set.seed(2)  # the sparse benchmark problem of bench/nmf.R
  Matrix::rsparsematrix(20000, 5000, 0.005, rand.x = function(n) runif(n))
}

if ("sparse" %in% parts) {
  x <- sparse_problem()
  start <- list(W = matrix(runif(20000 * 20), 20000),
                H = matrix(runif(20 * 5000), 20))
  # 5 % of the stored entries masked
  nz <- which(x@x != 0)
  sel <- sample(length(nz), 0.05 * length(nz))
  j <- rep.int(seq_len(ncol(x)), diff(x@p))[sel]
  mk <- Matrix::sparseMatrix(i = x@i[sel] + 1L, j = j, x = TRUE,
                             dims = dim(x))
  r <- paired(function() nmf(x, 20, init = start, control = ctl),
              function() nmf(x, 20, init = start, control = ctl, mask = mk))
  cat(sprintf("sparse 20000 x 5000 (0.5%%), rank 20, 5%% of stored entries masked, 30 its: unmasked %.2f s, masked %.2f s, ratio %.2f\n",
              r[1], r[2], r[3]))
  r <- paired(function() nmf(x, 20, init = start, control = ctl),
              function() nmf(x, 20, init = start, control = ctl,
                             mask = "zeros"))
  cat(sprintf("sparse, mask = \"zeros\", 30 its: unmasked %.2f s, masked %.2f s, ratio %.2f\n",
              r[1], r[2], r[3]))
  # the mask of one of nmf_rank()'s folds (fraction 0.05, 3 folds): 5 % of
  # the stored entries and as many sampled zeros
  set.seed(4)
  fold <- nmfkit:::draw_folds(x, 0.05, 3)[[1]]
  mk_cv <- nmfkit:::fold_mask(x, fold)
  r <- paired(function() nmf(x, 20, init = start, control = ctl),
              function() nmf(x, 20, init = start, control = ctl,
                             mask = mk_cv))
  cat(sprintf("sparse, nmf_rank's fold mask (%d stored + %d zeros), 30 its: unmasked %.2f s, masked %.2f s, ratio %.2f\n",
              sum(fold$value != 0), sum(fold$value == 0), r[1], r[2], r[3]))
  # 5 % of all entries (mostly zeros) masked, as nmf_rank's held-out sets
  # were before zeros were sampled
  sel2 <- sample(length(x), 0.05 * length(x))
  mk2 <- Matrix::sparseMatrix(i = (sel2 - 1) %% nrow(x) + 1,
                              j = (sel2 - 1) %/% nrow(x) + 1, x = TRUE,
                              dims = dim(x))
  ctl3 <- nmf_control(max_iter = 3, tol = 0)
  r <- paired(function() nmf(x, 20, init = start, control = ctl3),
              function() nmf(x, 20, init = start, control = ctl3,
                             mask = mk2), reps = 1)
  cat(sprintf("sparse, 5%% of all entries masked, 3 its: unmasked %.2f s, masked %.2f s, ratio %.2f\n",
              r[1], r[2], r[3]))
}

if ("rcppml" %in% parts && requireNamespace("RcppML", quietly = TRUE)) {
  # RcppML 0.3.7's compiled code looks up the environment "package:Matrix"
  # (a string in RcppML.so), which exists only when Matrix is attached:
  # without library(Matrix), RcppML::nmf() on any dgCMatrix fails with
  # "Cannot convert object to an environment: [type=character]". Attached,
  # plain fits run, but mask_zeros = TRUE crashes the R process here (heap
  # corruption: segfault or "free(): invalid next size" from 4 iterations
  # on; std::range_error "upper value must be greater than lower value"
  # when a row has fewer than 2 stored entries). So each RcppML run is a
  # child process; a crash is reported, not fatal.
  rcppml_run <- function() {
    code <- paste(
      "suppressPackageStartupMessages(library(Matrix))",
      "Sys.setenv(RcppMLthreads = 1)",
      "set.seed(2)",
      "x <- Matrix::rsparsematrix(20000, 5000, 0.005, rand.x = function(n) runif(n))",
      "t <- system.time(RcppML::nmf(x, 20, tol = 1e-30, maxit = 30, verbose = FALSE, mask_zeros = TRUE, seed = 1))[[3]]",
      "cat('ELAPSED', t, '\\n')", sep = "; ")
    out <- suppressWarnings(system2(file.path(R.home("bin"), "Rscript"),
                                    c("-e", shQuote(code)), stdout = TRUE,
                                    stderr = TRUE))
    hit <- grep("^ELAPSED", out, value = TRUE)
    if (!length(hit)) {
      cat("RcppML mask_zeros run failed:", utils::tail(out, 2), sep = "\n  ")
      return(NA_real_)
    }
    as.numeric(strsplit(hit, " ")[[1]][2])
  }
  x <- sparse_problem()
  start <- list(W = matrix(runif(20000 * 20), 20000),
                H = matrix(runif(20 * 5000), 20))
  ta <- tb <- numeric(3)
  for (r in 1:3) {
    ta[r] <- rcppml_run()
    tb[r] <- time_it(function() nmf(x, 20, method = "anls", init = start,
                                    control = ctl, mask = "zeros"))
  }
  cat(sprintf("mask zeros, rank 20, 30 its: RcppML %.2f s, nmfkit anls %.2f s, ratio %.2f\n",
              stats::median(ta), stats::median(tb), stats::median(tb / ta)))
}

if ("rank" %in% parts) {
  x <- sparse_problem()
  future::plan("multisession", workers = 2)
  set.seed(3)
  t <- time_it(function() {
    r <<- suppressWarnings(nmf_rank(x, 2:20, nfolds = 3,
                                    control = nmf_control(max_iter = 50)))
  })
  cat(sprintf("nmf_rank(2:20, 3 folds, max_iter 50), 2 workers: %.1f s\n", t))
  print(r)
}
