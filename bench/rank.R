# The chosen rank against RcppML 1.0 (issue 38, "Benchmarks"): on planted
# problems, the share of problems whose planted rank is recovered and the
# time of
#   * nmfkit nmf(x, rank = c(1, hi), loss) (the adaptive held-out search of
#     rank = "auto", on the range 1..hi),
#   * RcppML 1.0 nmf(x, k = "auto", cv_k_range = c(2, hi)) (its own
#     held-out search; mean squared error whatever the data, as its rank
#     search takes no loss),
#   * nmfkit's full grid nmf_rank(x, 1:hi, loss) with its one-standard-error
#     rule (the same folds' seed as the search).
# Problems (the independent dense design of bench/rank-calibration.R):
# W0 (m x k), H0 (k x n) Exp(1) with 40 % zeros, the diagonal 1, W0 H0
# scaled to mean 10; Frobenius: Gaussian noise of sd `noise` x 10, clipped
# at 0; Poisson: counts of mean W0 H0 * (1 / noise^2) (the same coefficient
# of variation at the mean entry). 300 x 200, k in 3, 8, 15, noise 0.1 and
# 0.5, hi = max(10, 2 k). Every tool on one thread (pin with taskset).
# RcppML 1.0 comes from bench/lib-rcppml (bench/build-rcppml.sh).
#
# Run: Rscript bench/rank.R [reps] [grid|nogrid]   (default 2, grid)
# Writes bench/rank-speed-results.md.
lib1 <- file.path("bench", "lib-rcppml")
stopifnot(dir.exists(file.path(lib1, "RcppML")))
.libPaths(c(normalizePath(lib1), .libPaths()))
suppressPackageStartupMessages({
  library(nmfkit)
  library(Matrix)
})
stopifnot(utils::packageVersion("RcppML") >= "1.0.0")
args <- commandArgs(TRUE)
reps <- if (length(args)) as.integer(args[1]) else 2L
do_grid <- !(length(args) > 1 && args[2] == "nogrid")
up <- function() trimws(system("uptime", intern = TRUE))
start_up <- up()
cat("start:", start_up, "\n")

planted_rank <- function(k, m, n, noise, loss) {
  W0 <- matrix(rexp(m * k), m) * (runif(m * k) > 0.4)
  H0 <- matrix(rexp(k * n), k) * (runif(k * n) > 0.4)
  W0[cbind(seq_len(k), seq_len(k))] <- 1
  H0[cbind(seq_len(k), seq_len(k))] <- 1
  mu <- W0 %*% H0
  mu <- mu * 10 / mean(mu)
  if (loss == "kl") {
    matrix(as.numeric(rpois(m * n, mu / noise^2)), m)
  } else {
    pmax(mu + noise * 10 * matrix(rnorm(m * n), m), 0)
  }
}

elapsed <- function(expr) system.time(expr)[["elapsed"]]
one <- function(k, noise, loss, seed) {
  set.seed(seed)
  x <- planted_rank(k, 300, 200, noise, loss)
  hi <- max(10L, 2L * k)
  q <- function(e) suppressWarnings(suppressMessages(e))
  ctl <- nmf_control(threads = 1)
  set.seed(seed)
  t_auto <- elapsed(fa <- q(nmf(x, rank = c(1, hi), loss = loss,
                                control = ctl)))
  t_r <- elapsed(fr <- q(RcppML::nmf(x, k = "auto", cv_k_range = c(2, hi),
                                     seed = seed, threads = 1,
                                     verbose = FALSE)))
  r_rank <- ncol(fr@w)
  t_grid <- NA
  grid <- NA
  if (do_grid) {
    set.seed(seed)
    t_grid <- elapsed(g <- q(nmf_rank(x, 1:hi, loss = loss, control = ctl)))
    grid <- g$best[["one_se"]]
  }
  data.frame(k = k, noise = noise, loss = loss, seed = seed, hi = hi,
             auto = fa$rank, rcppml = r_rank, grid = grid,
             tried = nrow(fa$rank_search$summary), t_auto = t_auto,
             t_rcppml = t_r, t_grid = t_grid)
}

cells <- expand.grid(k = c(3L, 8L, 15L), noise = c(0.1, 0.5),
                     loss = c("frobenius", "kl"), stringsAsFactors = FALSE)
out <- do.call(rbind, lapply(seq_len(nrow(cells)), function(i) {
  cl <- cells[i, ]
  do.call(rbind, lapply(seq_len(reps), function(s) {
    r <- one(cl$k, cl$noise, cl$loss, s)
    message(paste(format(r), collapse = " "))
    r
  }))
}))
agg <- aggregate(cbind(auto = auto == k, rcppml = rcppml == k,
                       grid = grid == k, tried, t_auto, t_rcppml, t_grid) ~
                   loss + k + noise, data = out, FUN = mean, na.action = na.pass)
agg <- agg[order(agg$loss, agg$k, agg$noise), ]
f <- function(v, d = 2) ifelse(is.na(v), "-", formatC(v, format = "f", digits = d))
md <- c("# Rank search against RcppML 1.0 (bench/rank.R)", "",
        sprintf("Run %s; nmfkit %s, RcppML %s; %d problems per cell; 1 thread; `uptime` at the start: %s",
                format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                utils::packageVersion("nmfkit"), utils::packageVersion("RcppML"),
                reps, start_up), "",
        "Share of problems whose planted rank is chosen; mean seconds.", "",
        "| loss | k | noise | nmfkit auto | RcppML auto | full grid | ranks tried (auto) | s nmfkit auto | s RcppML | s grid | RcppML / auto | grid / auto |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
        sprintf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |",
                agg$loss, agg$k, agg$noise, f(agg$auto), f(agg$rcppml),
                f(agg$grid), f(agg$tried, 1), f(agg$t_auto), f(agg$t_rcppml),
                f(agg$t_grid), f(agg$t_rcppml / agg$t_auto, 1),
                f(agg$t_grid / agg$t_auto, 1)),
        "", "Chosen ranks (k: nmfkit auto / RcppML / grid per problem):", "",
        sprintf("- %s, k %d, noise %s: %s", out$loss, out$k, out$noise,
                paste(out$auto, out$rcppml, out$grid, sep = " / ")),
        "", paste("End:", up()))
writeLines(md, "bench/rank-speed-results.md")
cat(md, sep = "\n")
