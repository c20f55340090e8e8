# Issue 25's benchmark: Poisson (KL) NMF of counts, nmfkit against fastTopics,
# NMF (brunet), scikit-learn, each timed to the same divergence from the same
# start.
#
# Problems (bench/kl_data.R): planted sparse Poisson counts (3865 x 1500 kept
# of 4000 x 1500) and PBMC UMI counts (16791 genes x 3774 cells) at ranks 6
# and 10, 20 Newsgroups word counts (53975 words x 11269 training documents)
# at rank 10.
# Start: fastTopics' init_poisson_nmf() (its default, Topic SCORE), set.seed(1)
# before it; F (features x k) is our W and t(L) (k x samples) our H.
# Target: fastTopics' scd with extrapolation, 100 iterations, gives D100 =
# KL(x | WH) (sum x log(x/WH) - x + WH, half the Poisson deviance, computed
# here in R for every tool from its final factors); the target is
# D100 * (1 + 1e-4).
# Iterations: each tool's trace (nmfkit's $loss, fastTopics' $progress$dev,
# brunet's and sklearn's divergence after every iteration, evaluated outside
# the timed work) gives the first iteration at or below the target; the trace
# is put on the scale of D by its final value. nmfkit and fastTopics are
# traced with max_iter 50, 200, 800, then the cap (deterministic runs, so the
# first that reaches gives the count). A tool that does not reach the target
# within its cap or the time budget is reported as "> N" iterations and
# "> s" seconds (its trace's own time, evaluations excluded).
# Timing: every run is a child Rscript (or python3) on data saved once; time
# is the fit call only. A tool that reached the target is timed at that
# iteration count in alternating pairs with the reference, nmfkit cd at one
# thread; "ratio" is the median over the pairs of tool / reference. Peak RSS
# is the largest VmHWM (ru_maxrss for Python) of the tool's child processes:
# the process with its data, not the fit alone.
# Tools: nmfkit nmf(loss = "kl") cd with extrapolation and mu (plain), at 1
# and 2 threads; fastTopics fit_poisson_nmf() scd + extrapolation and its
# default (scd, no extrapolation), both at its default nc = 1 thread;
# NMF::nmf(method = "brunet") on the dense matrix, only where the dense
# matrix has at most KL_BENCH_DENSE_MAX entries (default 2e7: the planted
# problem; PBMC would be 63e6 doubles and about 2 s a brunet iteration, 20
# Newsgroups 6e8); scikit-learn NMF(solver = "mu", beta_loss =
# "kullback-leibler") via bench/kl_sklearn_run.py on t(x) (samples as rows),
# reading the matrix with scipy.io.mmread. BLAS and OpenMP threads of the
# peers are set to 1 (Debian's reference BLAS is single-threaded anyway).
#
# Usage: Rscript bench/kl.R             the benchmark (an hour or more)
#        KL_BENCH_QUICK=1 Rscript bench/kl.R   a tiny version (~1 minute)
# RcppML 1.0 (bench/lib-rcppml, bench/build-rcppml.sh): nmf(loss = "gp",
# dispersion = "none") from W0 and H0, KL_BENCH_CAP_GP iterations (default
# 100, tol 0): it gives no divergence trace, so its row is that run, reached
# or not.
# Environment: KL_BENCH_TOOLS (tool names separated by ";", e.g.
# "fastTopics scd+extrap;RcppML 1.0 gp, dispersion none"; the reference,
# nmfkit cd at 1 thread, always runs), KL_BENCH_PROBLEMS (e.g.
# "planted-6,pbmc-10"), KL_BENCH_PAIRS
# (default 3), KL_BENCH_BUDGET (seconds of one trace run, default 600),
# KL_BENCH_CAP_MU (default 2000), KL_BENCH_CAP_CD (default 1000),
# KL_BENCH_OUT (default bench/kl-results.md; quick mode writes none).
# Needs tools/install-deps.sh bench (fastTopics in bench/lib, NMF, lda,
# python3-sklearn) and nmfkit installed.

here <- if (file.exists("bench/kl_data.R")) "bench" else "."
source(file.path(here, "kl_data.R"))
invisible(kl_use_bench_lib(file.path(here, "lib")))
python <- "/usr/bin/python3"

env_num <- function(name, default) {
  v <- Sys.getenv(name)
  if (nzchar(v)) as.numeric(v) else default
}

vm_hwm <- function() {
  st <- readLines("/proc/self/status")
  as.numeric(gsub("[^0-9]", "", st[grepl("^VmHWM", st)])) / 1024
}

# ---- one tool run, in a child process ------------------------------------

# The first iteration whose divergence is at or below target (NA if none).
first_below <- function(trace, target) {
  hit <- which(trace <= target)
  if (length(hit)) hit[1] else NA_integer_
}

# Runs `tool` on problem p for `iters` iterations; returns the final factors
# (our orientation), the trace on its own scale, the fit's seconds and the
# per-iteration cumulative seconds where the tool gives them.
run_tool <- function(tool, p, iters, trace = FALSE, budget = Inf) {
  k <- p$k
  switch(tool$engine,
    nmfkit = {
      ctrl <- nmfkit::nmf_control(max_iter = iters, tol = 0,
                                  threads = tool$threads,
                                  extrapolate = tool$extrapolate)
      t <- system.time(
        fit <- nmfkit::nmf(p$x, k, method = tool$method, loss = "kl",
                           init = list(W = p$W0, H = p$H0), control = ctrl)
      )[["elapsed"]]
      list(W = fit$W, H = fit$H, trace = fit$loss, seconds = t,
           iterations = fit$iterations)
    },
    fastTopics = {
      ctrl <- list(extrapolate = tool$extrapolate, nc = 1)
      t <- system.time(
        fit <- fastTopics::fit_poisson_nmf(p$X, fit0 = p$fit0, numiter = iters,
                                           method = tool$method,
                                           control = ctrl, verbose = "none")
      )[["elapsed"]]
      list(W = fit$F, H = t(fit$L), trace = fit$progress$dev, seconds = t,
           cum = cumsum(fit$progress$timing), iterations = nrow(fit$progress))
    },
    rcppml1 = {
      # RcppML 1.0's Poisson loss: the generalised Poisson with its
      # dispersion off, by IRLS coordinate descent; W0 as its seed matrix,
      # H0 as h_init, tol = 0 so it runs `iters` iterations.
      t <- system.time(
        fit <- RcppML::nmf(p$x, k, tol = 0, maxit = iters, seed = p$W0,
                           h_init = p$H0, loss = "gp", dispersion = "none",
                           threads = 1L, verbose = FALSE)
      )[["elapsed"]]
      list(W = fit@w %*% diag(fit@d, length(fit@d)), H = fit@h,
           trace = numeric(), seconds = t, iterations = fit@misc$iter)
    },
    brunet = {
      y <- as.matrix(p$x)
      nz <- y > 0
      ylogy <- sum(y[nz] * log(y[nz])) - sum(y)
      spent <- 0  # seconds inside the trace's evaluations
      tr <- numeric()
      start <- proc.time()[["elapsed"]]
      cum <- numeric()
      stop_fn <- if (!trace) NMF::nmf.stop.iteration(iters) else
        function(object, i, y, x, ...) {
          if (i == 0) return(FALSE)
          t0 <- proc.time()[["elapsed"]]
          cum[i] <<- t0 - start - spent
          wh <- NMF::basis(x) %*% NMF::coef(x)
          d <- ylogy - sum(y[nz] * log(wh[nz])) + sum(wh)
          tr[i] <<- d
          spent <<- spent + proc.time()[["elapsed"]] - t0
          i >= iters || d <= p$target || cum[i] > budget
        }
      t <- system.time(
        fit <- NMF::nmf(y, k, method = "brunet",
                        seed = NMF::nmfModel(W = p$W0, H = p$H0),
                        .stop = stop_fn, maxIter = iters + 1L)
      )[["elapsed"]]
      list(W = NMF::basis(fit), H = NMF::coef(fit), trace = tr,
           seconds = t - spent, cum = cum, iterations = NMF::niter(fit))
    })
}

# Child entry: Rscript kl.R --child spec.rds out.rds
child_main <- function(spec_file, out_file) {
  s <- readRDS(spec_file)
  p <- readRDS(s$problem)
  if (s$tool$engine == "fastTopics") {
    suppressPackageStartupMessages(requireNamespace("fastTopics"))
    p$X <- Matrix::t(p$x)
  }
  if (s$tool$engine == "rcppml1") {
    .libPaths(c(s$rcppml_lib, .libPaths()))
    suppressPackageStartupMessages(requireNamespace("RcppML"))
    stopifnot(utils::packageVersion("RcppML") >= "1.0.0")
  }
  if (s$tool$engine == "brunet") {
    suppressPackageStartupMessages(requireNamespace("NMF"))
  }
  out <- tryCatch({
    r <- run_tool(s$tool, p, s$iters, s$trace, s$budget)
    r$divergence <- kl_divergence(p$x, r$W, r$H)
    if (!s$keep_factors) r$W <- r$H <- NULL
    r
  }, error = function(e) list(error = conditionMessage(e)))
  out$rss <- vm_hwm()
  saveRDS(out, out_file)
}

# ---- the parent: children, traces, pairs ---------------------------------

script_file <- function() {
  a <- grep("^--file=", commandArgs(FALSE), value = TRUE)
  normalizePath(sub("^--file=", "", a[1]))
}

child_env <- c("OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1",
               "MKL_NUM_THREADS=1", "RCPP_PARALLEL_NUM_THREADS=1",
               paste0("R_LIBS=", paste(.libPaths(), collapse = ":")))

run_child <- function(tool, pf, iters, trace = FALSE, budget = Inf,
                      keep_factors = FALSE) {
  if (tool$engine == "sklearn") return(run_sklearn(tool, pf, iters, trace,
                                                   budget))
  spec <- tempfile(fileext = ".rds")
  out <- tempfile(fileext = ".rds")
  saveRDS(list(tool = tool, problem = pf$rds, iters = iters, trace = trace,
               budget = budget, keep_factors = keep_factors,
               rcppml_lib = normalizePath(file.path(here, "lib-rcppml"),
                                          mustWork = FALSE)), spec)
  log <- system2("Rscript", c(shQuote(script_file()), "--child", spec, out),
                 env = child_env, stdout = TRUE, stderr = TRUE)
  if (!file.exists(out)) {
    return(list(error = paste(c("child failed:", tail(log, 5)),
                              collapse = "\n")))
  }
  readRDS(out)
}

run_sklearn <- function(tool, pf, iters, trace, budget) {
  args <- c(file.path(here, "kl_sklearn_run.py"), pf$mtx, pf$w_sk, pf$h_sk,
            iters, if (trace) c("--trace", format(pf$target, digits = 17),
                                budget))
  out <- system2(python, args, env = child_env, stdout = TRUE, stderr = TRUE)
  line <- grep("^RESULT ", out, value = TRUE)
  if (!length(line)) {
    return(list(error = paste(c("sklearn failed:", tail(out, 5)),
                              collapse = "\n")))
  }
  v <- strsplit(sub("^RESULT ", "", line), " ")[[1]]
  tr <- grep("^TRACE ", out, value = TRUE)
  tr <- do.call(rbind, lapply(strsplit(sub("^TRACE ", "", tr), " "),
                              as.numeric))
  list(seconds = as.numeric(v[1]), iterations = as.integer(v[2]),
       divergence = as.numeric(v[3]), rss = as.numeric(v[4]),
       trace = if (length(tr)) tr[, 2] else numeric(),
       cum = if (length(tr)) tr[, 3] else numeric())
}

# Iterations to the target: list(iters, reached, seconds_lower, rss, note).
find_iterations <- function(tool, pf, cap, budget) {
  if (tool$engine == "rcppml1") {
    # no divergence trace: one run of `cap` iterations; reached or not
    r <- run_child(tool, pf, cap)
    if (!is.null(r$error)) return(list(error = r$error, rss = r$rss))
    return(list(iters = cap, reached = r$divergence <= pf$target,
                seconds_trace = r$seconds, rss = r$rss,
                final = r$divergence))
  }
  if (tool$engine %in% c("sklearn", "brunet")) {
    r <- run_child(tool, pf, cap, trace = TRUE, budget = budget)
    if (!is.null(r$error)) return(list(error = r$error, rss = r$rss))
    tr <- r$trace * r$divergence / tail(r$trace, 1)
    n <- first_below(tr, pf$target)
    return(list(iters = if (is.na(n)) length(tr) else n, reached = !is.na(n),
                seconds_trace = tail(r$cum, 1), rss = r$rss,
                final = r$divergence))
  }
  steps <- unique(pmin(c(50, 200, 800, cap), cap))
  rss <- 0
  for (n_try in steps) {
    t0 <- proc.time()[["elapsed"]]
    r <- run_child(tool, pf, n_try, trace = TRUE)
    wall <- proc.time()[["elapsed"]] - t0
    if (!is.null(r$error)) return(list(error = r$error, rss = r$rss))
    rss <- max(rss, r$rss)
    tr <- r$trace * r$divergence / tail(r$trace, 1)
    n <- first_below(tr, pf$target)
    if (!is.na(n)) return(list(iters = n, reached = TRUE, rss = rss))
    if (wall > budget) break
  }
  list(iters = length(tr), reached = FALSE, seconds_trace = r$seconds,
       rss = rss, final = r$divergence)
}

write_csv17 <- function(a, file) {
  writeLines(apply(a, 1, function(r) paste(sprintf("%.17g", r),
                                           collapse = ",")), file)
}

fmt <- function(x, d = 2) ifelse(is.na(x), "NA", formatC(x, digits = d,
                                                         format = "f"))

bench_problem <- function(prob, k, tools, settings) {
  label <- sprintf("%s, rank %d", prob$name, k)
  message("== ", label, ": ", nrow(prob$x), " x ", ncol(prob$x), ", ",
          Matrix::nnzero(prob$x), " nonzeros")
  X <- Matrix::t(prob$x)
  set.seed(1)
  fit0 <- tryCatch(
    fastTopics::init_poisson_nmf(X, k = k, verbose = "none"),
    error = function(e) {
      message("Topic SCORE start failed (", conditionMessage(e),
              "); random start")
      set.seed(1)
      fastTopics::init_poisson_nmf(X, k = k, init.method = "random",
                                   verbose = "none")
    })
  p <- list(x = prob$x, k = k, fit0 = fit0, W0 = fit0$F, H0 = t(fit0$L))
  dir <- tempfile("klbench")
  dir.create(dir)
  pf <- list(rds = file.path(dir, "problem.rds"),
             mtx = file.path(dir, "xt.mtx"), w_sk = file.path(dir, "w.csv"),
             h_sk = file.path(dir, "h.csv"))
  # sklearn's orientation: samples as rows, X = t(x), its W = t(H0), its
  # H = t(W0)
  Matrix::writeMM(X, pf$mtx)
  write_csv17(t(p$H0), pf$w_sk)
  write_csv17(t(p$W0), pf$h_sk)
  saveRDS(p, pf$rds)
  ref_tool <- tools[[1]]
  t100 <- run_child(list(engine = "fastTopics", method = "scd",
                         extrapolate = TRUE), pf, settings$target_iters)
  if (!is.null(t100$error)) stop("fastTopics target run: ", t100$error)
  pf$target <- t100$divergence * (1 + 1e-4)
  p$target <- pf$target
  saveRDS(p, pf$rds)
  message(sprintf("target: D = %.8g (fastTopics scd+extrapolation, %d its: %.8g)",
                  pf$target, settings$target_iters, t100$divergence))

  rows <- list()
  ref_iters <- NA
  for (name in names(tools)) {
    tool <- tools[[name]]
    if (tool$engine == "brunet" &&
        prod(dim(prob$x)) > settings$dense_max) {
      rows[[name]] <- data.frame(problem = label, tool = name,
        iterations = "-", seconds = "-", ratio = "-", rss = "-",
        note = sprintf("not run: dense x has %.2g entries > %.2g",
                       prod(dim(prob$x)), settings$dense_max))
      next
    }
    cap <- if (tool$engine == "rcppml1") settings$cap_gp else
      if (tool$engine %in% c("sklearn", "brunet") ||
               identical(tool$method, "mu")) settings$cap_mu else
                 settings$cap_cd
    message("-- ", name, ": tracing (cap ", cap, ")")
    f <- find_iterations(tool, pf, cap, settings$budget)
    if (!is.null(f$error)) {
      message("   failed: ", f$error)
      rows[[name]] <- data.frame(problem = label, tool = name,
        iterations = "-", seconds = "-", ratio = "-", rss = "-",
        note = paste("failed:", gsub("\n", " ", substr(f$error, 1, 120))))
      next
    }
    if (!f$reached) {
      message(sprintf("   not reached: %d iterations, D %.8g", f$iters,
                      f$final))
      rows[[name]] <- data.frame(problem = label, tool = name,
        iterations = paste(">", f$iters), seconds =
          paste(">", fmt(f$seconds_trace)), ratio = "-",
        rss = fmt(f$rss, 0),
        note = sprintf("target not reached: D %.4g above it (relative)",
                       f$final / pf$target - 1))
      next
    }
    # alternating pairs with the reference (nmfkit cd, 1 thread)
    secs <- ratios <- numeric()
    above <- FALSE
    rss <- f$rss
    for (i in seq_len(settings$pairs)) {
      if (!identical(tool, ref_tool) && !is.na(ref_iters)) {
        a <- run_child(ref_tool, pf, ref_iters)
      } else {
        a <- NULL
      }
      b <- run_child(tool, pf, f$iters)
      if (!is.null(b$error)) break
      rss <- max(rss, b$rss)
      above <- above || b$divergence > pf$target
      secs[i] <- b$seconds
      ratios[i] <- if (identical(tool, ref_tool)) 1 else
        if (!is.null(a) && is.null(a$error)) b$seconds / a$seconds else NA
    }
    if (identical(tool, ref_tool)) ref_iters <- f$iters
    message(sprintf("   %d iterations, %s s, ratio %s", f$iters,
                    fmt(stats::median(secs)), fmt(stats::median(ratios))))
    rows[[name]] <- data.frame(problem = label, tool = name,
      iterations = as.character(f$iters), seconds = fmt(stats::median(secs)),
      ratio = fmt(stats::median(ratios)), rss = fmt(rss, 0),
      note = if (above) "a timed run ended above the target" else "")
  }
  unlink(dir, recursive = TRUE)
  do.call(rbind, rows)
}

all_tools <- function() list(
  "nmfkit cd+extrap, 1 thread" = list(engine = "nmfkit", method = "cd",
                                      extrapolate = TRUE, threads = 1L),
  "nmfkit cd+extrap, 2 threads" = list(engine = "nmfkit", method = "cd",
                                       extrapolate = TRUE, threads = 2L),
  "nmfkit mu, 1 thread" = list(engine = "nmfkit", method = "mu",
                               extrapolate = FALSE, threads = 1L),
  "nmfkit mu, 2 threads" = list(engine = "nmfkit", method = "mu",
                                extrapolate = FALSE, threads = 2L),
  "fastTopics scd+extrap" = list(engine = "fastTopics", method = "scd",
                                 extrapolate = TRUE),
  "fastTopics default (scd)" = list(engine = "fastTopics", method = "scd",
                                    extrapolate = FALSE),
  "RcppML 1.0 gp, dispersion none" = list(engine = "rcppml1"),
  "NMF brunet (dense)" = list(engine = "brunet"),
  "sklearn mu" = list(engine = "sklearn"))

main <- function() {
  quick <- nzchar(Sys.getenv("KL_BENCH_QUICK"))
  settings <- list(
    pairs = env_num("KL_BENCH_PAIRS", if (quick) 1 else 3),
    budget = env_num("KL_BENCH_BUDGET", if (quick) 15 else 600),
    cap_mu = env_num("KL_BENCH_CAP_MU", if (quick) 300 else 2000),
    cap_cd = env_num("KL_BENCH_CAP_CD", if (quick) 300 else 1000),
    dense_max = env_num("KL_BENCH_DENSE_MAX", 2e7),
    cap_gp = env_num("KL_BENCH_CAP_GP", if (quick) 10 else 100),
    target_iters = if (quick) 30L else 100L)
  out_file <- Sys.getenv("KL_BENCH_OUT",
                         if (quick) "" else file.path(here, "kl-results.md"))
  problems <- if (quick) {
    list("planted-small-4" = function() kl_planted(400L, 200L, 4L))
  } else list(
    "planted-6" = kl_planted, "planted-10" = kl_planted,
    "pbmc-6" = kl_pbmc, "pbmc-10" = kl_pbmc,
    "newsgroups-10" = kl_newsgroups)
  pick <- Sys.getenv("KL_BENCH_PROBLEMS")
  if (nzchar(pick)) problems <- problems[strsplit(pick, ",")[[1]]]
  up <- system2("uptime", stdout = TRUE)
  header <- c(sprintf("# KL benchmark (issue 25), %s", format(Sys.time(),
                                                                "%Y-%m-%d %H:%M %Z")),
              "", paste0("`uptime`: ", trimws(up)), "",
              sprintf("%s; %d cores; R %s; nmfkit %s; fastTopics %s; NMF %s; scikit-learn %s",
                      utils::sessionInfo()$running, parallel::detectCores(),
                      getRversion(), tryCatch(format(utils::packageVersion("nmfkit")),
                                              error = function(e) "-"),
                      format(utils::packageVersion("fastTopics")),
                      format(utils::packageVersion("NMF")),
                      paste(system2(python, c("-c", shQuote(
                        "import sklearn; print(sklearn.__version__)")),
                        stdout = TRUE), collapse = "")),
              sprintf("Target: fastTopics scd+extrapolation's KL after %d iterations x (1 + 1e-4); start: init_poisson_nmf(); %g timed pairs (median); caps %g (MU, brunet, sklearn) / %g (cd, scd); trace budget %g s.",
                      settings$target_iters, settings$pairs, settings$cap_mu,
                      settings$cap_cd, settings$budget), "")
  cat(header, sep = "\n")
  cached <- list()
  res <- list()
  for (nm in names(problems)) {
    k <- as.integer(sub(".*-", "", nm))
    base <- sub("-[0-9]+$", "", nm)
    if (is.null(cached[[base]])) cached <- list2(cached, base, problems[[nm]]())
    tools <- all_tools()
    pick_tools <- Sys.getenv("KL_BENCH_TOOLS")
    if (nzchar(pick_tools)) {
      keep <- strsplit(pick_tools, ";")[[1]]
      stopifnot(all(keep %in% names(tools)))
      tools <- tools[union(names(tools)[1], keep)]  # the reference first
    }
    res[[nm]] <- bench_problem(cached[[base]], k, tools, settings)
    tab <- do.call(rbind, res)
    table_md <- c("| problem | tool | iterations | seconds | ratio to nmfkit cd (1 thread) | peak RSS (MB) | note |",
                  "|---|---|---|---|---|---|---|",
                  sprintf("| %s | %s | %s | %s | %s | %s | %s |", tab$problem,
                          tab$tool, tab$iterations, tab$seconds, tab$ratio,
                          tab$rss, tab$note))
    if (nzchar(out_file)) writeLines(c(header, table_md), out_file)
  }
  cat(table_md, sep = "\n")
  invisible(tab)
}

list2 <- function(l, name, value) {
  l[[name]] <- value
  l
}

args <- commandArgs(trailingOnly = TRUE)
if (length(args) >= 3 && args[1] == "--child") {
  child_main(args[2], args[3])
} else if (sys.nframe() == 0L) {
  suppressPackageStartupMessages({
    requireNamespace("fastTopics")
    requireNamespace("Matrix")
  })
  main()
}
