# Where the time of nmf() goes on bench/nmf.R's sparse and dense problems
# (issue 35, item 5): the R steps before and after the core (checks, the
# solver rule, the start, the model object), the core call alone, and the
# whole call at 1 and at `iters` iterations (the difference is the
# iterations' cost; the rest is fixed). Medians of the CPU time of `reps`
# calls, 1 thread; run pinned (`taskset -c 1`) and say the load.
# Usage: Rscript bench/nmf-profile.R [reps] [sparse|dense|both]
# (the iterations are those of bench/nmf.R's last run to the target: sparse
# 9, dense 6; override with NMF_PROFILE_ITERS="9,6").
args <- commandArgs(TRUE)
reps <- if (length(args) && grepl("^[0-9]+$", args[1])) as.integer(args[1]) else
  21L
which <- if (length(args) > 1) args[2] else "both"
suppressPackageStartupMessages({
  library(Matrix)
  library(nmfkit)
})
src <- readLines("bench/nmf.R")
from <- grep("^make_dense <- function", src)
to <- grep("^set.seed\\(20261122\\)", src) - 1
eval(parse(text = src[from:to]))  # make_dense(), make_sparse()
iters <- as.integer(strsplit(Sys.getenv("NMF_PROFILE_ITERS", "9,6"), ",")[[1]])
cat("load:", trimws(system("uptime", intern = TRUE)), "\n")

ns <- asNamespace("nmfkit")
# median CPU seconds (user + system) of `reps` calls of f() (after one
# warm-up call): on a shared machine a process waits for the core, and the
# wall clock counts the waiting (a 0.1 s fit took 7 s at load 12), the CPU
# clock does not (other processes still cool its caches)
cpu <- function() {
  t <- proc.time()
  t[["user.self"]] + t[["sys.self"]]
}
med <- function(f, n = reps) {
  f()
  t <- vapply(seq_len(n), function(i) {
    t0 <- cpu()
    f()
    cpu() - t0
  }, numeric(1))
  stats::median(t)
}
ms <- function(s) sprintf("%8.2f ms", 1e3 * s)

profile <- function(name, x, k, it) {
  cat(sprintf("\n== %s: %d x %d, %s, rank %d, %d iterations\n", name,
              nrow(x), ncol(x), class(x)[1], k, it))
  ctl <- nmf_control(tol = 0, max_iter = it, threads = 1L)
  whole <- function(iters) {
    c1 <- nmf_control(tol = 0, max_iter = iters, threads = 1L)
    function() {
      set.seed(1)
      nmf(x, k, keep_data = FALSE, control = c1)
    }
  }
  fit <- whole(it)()
  t_all <- med(whole(it))
  t_one <- med(whole(1L))
  control <- ns$check_control(ctl, fn = "nmf")
  t_check <- med(function() ns$check_data(x, with_scan = TRUE))
  checked <- ns$check_data(x, with_scan = TRUE)
  t_share <- med(function() ns$resolve_method("auto", x))
  method <- ns$resolve_method("auto", x)
  xfit <- if (method == "hals" && is.matrix(x)) ns$dense_as_dgc(x) else x
  t_dgc <- if (method == "hals" && is.matrix(x)) {
    med(function() ns$dense_as_dgc(x))
  } else 0
  t_exp <- med(function() {
    ns$data_exponent(xfit, checked$scan)
    ns$nonzero_lines(xfit, k, checked$scan)
  })
  t_start <- med(function() {
    set.seed(1)
    ns$init_factors(xfit, k, "random", 1L)
  })
  set.seed(1)
  start <- ns$init_factors(xfit, k, "random", 1L)
  engine <- control
  if (method == "hals") engine$inner <- "auto"
  params <- ns$core_params(method, engine,
                           callback = ns$progress_callback(control))
  t_core <- med(function() ns$core_fit(xfit, start$W, start$H, params))
  params1 <- params
  params1$control$max_iter <- 1L
  t_core1 <- med(function() ns$core_fit(xfit, start$W, start$H, params1))
  core <- ns$core_fit(xfit, start$W, start$H, params)
  t_model <- med(function() {
    ns$fit_status(core$W, core$H, core$status)
    ns$new_nmfkit(core$W, core$H, core$loss, core$iterations, core$status,
                  NULL, control, dimnames = dimnames(x))
  })
  cat(sprintf("method %s, %d iterations, final loss %.7f\n", fit$method,
              fit$iterations, tail(fit$loss, 1)))
  rows <- c(
    "whole nmf()" = t_all,
    "whole nmf(), 1 iteration" = t_one,
    "  per further iteration" = (t_all - t_one) / (it - 1),
    "check_data() (scan, as_dgc)" = t_check,
    "resolve_method() (nonzero share)" = t_share,
    "dense_as_dgc()" = t_dgc,
    "data_exponent() + nonzero_lines()" = t_exp,
    "init_factors(\"random\")" = t_start,
    "core_fit()" = t_core,
    "core_fit(), 1 iteration" = t_core1,
    "  core per further iteration" = (t_core - t_core1) / (it - 1),
    "fit_status() + new_nmfkit()" = t_model
  )
  rows[["R outside the core (whole - core - start)"]] <- t_all - t_core -
    t_start
  for (r in names(rows)) cat(sprintf("%-44s %s\n", r, ms(rows[[r]])))
  invisible(rows)
}

if (which %in% c("sparse", "both")) {
  set.seed(7)
  profile("sparse", make_sparse(), 20L, iters[1])
}
if (which %in% c("dense", "both")) {
  set.seed(20261122)
  profile("dense", make_dense(), 20L, iters[2])
}
cat("\nload:", trimws(system("uptime", intern = TRUE)), "\n")
