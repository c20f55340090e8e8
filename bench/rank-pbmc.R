# The rank nmf(rank = "auto") chooses on pbmc_facs (issue 38): fastTopics'
# FACS-purified PBMC UMI counts (genes x cells, 16,791 x 3,774, genes with
# no count dropped), under KL, the held-out search over ranks lo..hi, 1
# thread. Prints the path (every rank tried, its mean held-out error
# relative to the mean's and its standard error over the 3 folds), the
# chosen rank and the time; saves the path to bench/rank-pbmc.rds.
#
# Run: Rscript bench/rank-pbmc.R [hi] [lo] [max_iter]
#   (fastTopics from bench/lib, as bench/kl.R: tools/install-deps.sh bench;
#   a worktree without it may point to another checkout's with
#   RANK_BENCH_LIB=/path/to/bench/lib)
# (bench/lib first, before any package loads the older Rcpp fastTopics
# cannot use)
source("bench/kl_data.R")
invisible(kl_use_bench_lib(Sys.getenv("RANK_BENCH_LIB", "bench/lib")))
suppressPackageStartupMessages(library(nmfkit))
args <- commandArgs(TRUE)
hi <- if (length(args)) as.integer(args[1]) else 20L
lo <- if (length(args) > 1) as.integer(args[2]) else 1L
max_iter <- if (length(args) > 2) as.integer(args[3]) else 200L
x <- kl_pbmc()$x
cat(sprintf("pbmc_facs %d x %d, %.1f %% nonzero; ranks %d to %d, max_iter %d; %s, load %s\n",
            nrow(x), ncol(x), 100 * length(x@x) / prod(dim(x)), lo, hi,
            max_iter, format(Sys.time()), readLines("/proc/loadavg")))
set.seed(1)
t <- system.time(fit <- nmf(x, rank = c(lo, hi), loss = "kl",
                            control = nmf_control(threads = 1,
                                                  max_iter = max_iter)))
p <- fit$rank_search
print(p)
cat(sprintf("chosen rank %d, held-out error %.5f (SE %.5f); CPU %.1f s, elapsed %.1f s; %s, load %s\n",
            p$rank, p$summary$mean[p$summary$rank == p$rank],
            p$summary$se[p$summary$rank == p$rank], t[["user.self"]],
            t[["elapsed"]], format(Sys.time()), readLines("/proc/loadavg")))
saveRDS(list(path = p, time = t, max_iter = max_iter), "bench/rank-pbmc.rds")
