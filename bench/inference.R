# Time of nmf_bootstrap() (issue 29): B = 100 replicates on a planted
# 2,000 x 1,000 rank-10 count matrix (Frobenius and KL fits), on real counts
# (pbmc_facs: the 2,000 genes of highest variance-to-mean ratio x 1,000
# cells, rank 6, KL), and the target problem, 5,000 x 2,000 at rank 10
# (target: under 2 minutes). Each at 1 and 2 threads (sequential plan) and
# under plan(multisession, workers = 2) (1 thread each). Writes
# bench/inference-results.md.
#
# CoGAPS (the one NMF package with posterior uncertainty, by MCMC) is on
# Bioconductor only and not packaged in Debian bookworm: not run here; its
# published run times are quoted in bench/README.md.
#
# Run: Rscript bench/inference.R [B] [target]
#   target: only issue 36's target, the planted 5,000 x 2,000 problem at
#   rank 10 under KL, column replicates (the default type), 2 threads
#   (sequential plan); writes bench/inference-target-results.md.
suppressPackageStartupMessages({
  library(nmfkit)
  library(future)
})
args <- commandArgs(TRUE)
B <- if (length(args)) as.integer(args[1]) else 100L
target_only <- "target" %in% args

planted <- function(m, n, k, seed) {
  set.seed(seed)
  W0 <- matrix(rexp(m * k), m, k) * (runif(m * k) < 0.5)
  H0 <- matrix(rexp(k * n), k, n) * (runif(n * k) < 0.5)
  matrix(rpois(m * n, W0 %*% H0), m, n)
}

pbmc_sample <- function() {
  pbmc <- example_counts("pbmc")
  counts <- pbmc$counts
  keep <- Matrix::rowSums(counts > 0) >= 0.01 * ncol(counts)
  counts <- counts[keep, ]
  mu <- Matrix::rowMeans(counts)
  v <- Matrix::rowMeans(counts^2) - mu^2
  genes <- order(v / mu, decreasing = TRUE)[1:2000]
  set.seed(11)
  counts[genes, sort(sample(ncol(counts), 1000))]
}

time_boot <- function(fit, type, threads, plan_name) {
  fit$control$threads <- threads
  if (plan_name == "multisession") {
    plan(multisession, workers = 2)
    on.exit(plan(sequential))
    # workers started before the clock
    invisible(future.apply::future_lapply(1:2, identity))
  }
  set.seed(1)
  tt <- system.time(b <- suppressWarnings(nmf_bootstrap(fit, B = B, type = type)))
  # CPU seconds of this process (every thread; a multisession's workers
  # are not counted): under load they say more than the elapsed time
  list(seconds = tt[["elapsed"]], iterations = mean(b$iterations),
       cpu = tt[["user.self"]] + tt[["sys.self"]],
       its = b$iterations, converged = mean(b$status == "converged"),
       stability = mean(b$stability$cosine), W = b$W)
}

problems <- list(
  list(name = "planted 2000 x 1000", data = function() planted(2000, 1000, 10, 1),
       rank = 10, losses = c("frobenius", "kl")),
  list(name = "pbmc_facs 2000 x 1000", data = pbmc_sample, rank = 6,
       losses = "kl"),
  list(name = "planted 5000 x 2000", data = function() planted(5000, 2000, 10, 2),
       rank = 10, losses = "frobenius")
)

if (target_only) {
  problems <- list(list(name = "planted 5000 x 2000",
                        data = function() planted(5000, 2000, 10, 2),
                        rank = 10, losses = "kl"))
}
rows <- NULL
for (p in problems) {
  x <- p$data()
  for (loss in p$losses) {
    set.seed(1)
    tf <- system.time(fit <- suppressWarnings(
      nmf(x, p$rank, loss = loss, control = nmf_control(threads = 2))))[["elapsed"]]
    for (type in if (target_only) "columns" else c("columns", "parametric")) {
      runs <- if (target_only) list(c(2, "sequential")) else
        list(c(1, "sequential"), c(2, "sequential"), c(1, "multisession"))
      res <- lapply(runs, function(r) time_boot(fit, type, as.integer(r[1]), r[2]))
      if (target_only) {
        cat(sprintf("iterations per replicate: %s\nconverged: %.2f; CPU s: %.1f (%.2f per replicate); load: %s\n",
                    paste(res[[1]]$its, collapse = " "), res[[1]]$converged,
                    res[[1]]$cpu, res[[1]]$cpu / B,
                    trimws(system("uptime", intern = TRUE))))
        target_extra <- res[[1]]
        res <- list(list(seconds = NA, iterations = res[[1]]$iterations,
                         stability = res[[1]]$stability,
                         W = res[[1]]$W), res[[1]], list(seconds = NA))
      }
      same <- if (target_only) NA else
        identical(res[[1]]$W, res[[2]]$W) && identical(res[[1]]$W, res[[3]]$W)
      rows <- rbind(rows, data.frame(
        problem = p$name, loss = loss, type = type, fit_s = tf,
        t1 = res[[1]]$seconds, t2 = res[[2]]$seconds, multisession = res[[3]]$seconds,
        iterations = res[[1]]$iterations, stability = res[[1]]$stability,
        identical = same))
      print(utils::tail(rows, 1))
    }
  }
}
lines <- c(
  sprintf("Run %s, B = %d; uptime: %s", format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
          B, trimws(system("uptime", intern = TRUE))),
  "",
  "| problem | loss | type | fit (s, 2 threads) | 1 thread (s) | 2 threads (s) | multisession, 2 workers (s) | mean iterations | mean stability | identical |",
  "|---|---|---|---|---|---|---|---|---|---|",
  sprintf("| %s | %s | %s | %.1f | %.1f | %.1f | %.1f | %.1f | %.3f | %s |", rows$problem, rows$loss,
          rows$type, rows$fit_s, rows$t1, rows$t2, rows$multisession, rows$iterations,
          rows$stability, rows$identical))
if (target_only) {
  lines <- c(lines, "", sprintf(
    "Iterations per replicate (cap 50): %s; converged %.0f %%; CPU %.1f s (%.2f s per replicate, both threads); load at the end: %s",
    paste(target_extra$its, collapse = " "), 100 * target_extra$converged,
    target_extra$cpu, target_extra$cpu / B,
    trimws(system("uptime", intern = TRUE))))
}
writeLines(lines)
writeLines(lines, if (target_only) "bench/inference-target-results.md" else
  "bench/inference-results.md")
