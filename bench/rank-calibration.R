# Calibration of the chosen rank (issue 38): the share of planted problems
# whose rank is recovered by nmf(rank = "auto") (the adaptive held-out
# search), by ARD-NMF (nmf(rank = K_max, ard = "l1")) and by the full-grid
# nmf_rank() one-standard-error rule, with the time each takes.
#
# Planted W0 (m x k), H0 (k x n): entries Exp(1), 40 % zero at random, the
# diagonal set to 1 (every component used), W0 H0 scaled to mean 10.
# Frobenius: x = W0 H0 + Gaussian noise of sd `noise` x mean, clipped at 0.
# KL: x ~ Poisson(W0 H0 * scale) with scale 10 / `noise`^2 (the same
# coefficient of variation at the mean entry). "correlated": the columns of
# W0 share a common profile (W0 = 0.5 * shared + 0.5 * own), cosine about
# 0.8 between components. "sparse": 75 % of the entries of W0 and H0 zero
# (W0 H0 is then zero at about 60 % of the entries, still of rank k), the
# noise only where W0 H0 > 0, the data a dgCMatrix.
#
# ARD starts at K = min(2k + 2, k + 10) components (ard_prior("l1",
# max_iter = 20000)). Each row is saved to bench/rank-calibration.rds as it
# finishes, so a run cut short leaves its rows.
#
# The search and the grid draw the same folds (the same seed before each:
# the folds are the first draw of both), so "auto = grid" compares the
# search with the full grid's one-SE rule on the same folds.
#
# Run: Rscript bench/rank-calibration.R [reps] [grid] [first seed] [i/n]
#   grid "small" (rank 3, two noise levels), "issue38" (ranks 3, 10 and
#   30, noise 0.1 / 0.3 / 0.5 at rank 3, both losses, storages and designs
#   at rank 3), "big" (ranks 3, 8, 20, every cell), "seeds" (the default:
#   rank 3 at noise 0.1 and 0.3 in every loss, storage and design, rank 8
#   dense at noise 0.1 both designs and losses; for several seeds per
#   cell), "ranks" (ranks 10, 20, 30, both losses, storages and noise
#   0.1 / 0.3, and correlated ranks 10 and 20, with RcppML 1.0's
#   k = "auto"; 300 x 200 from rank 20, range 1-40), "ranks10" and
#   "ranks30" (its rank-10 cells; ranks 20 and 30 dense at noise 0.1);
#   seeds first .. first + reps - 1 (two processes can split them).
#   Rscript bench/rank-calibration.R recheck [grid] runs the search alone
#   on every saved problem of the grid, against its saved grid choice.
#   Rscript bench/rank-calibration.R table [grid] prints the table of the
#   rows saved so far by every run of that grid.
# RcppML 1.0 (bench/build-rcppml.sh; RCPPML_LIB names another checkout's
# bench/lib-rcppml): for grid "large" its nmf(k = "auto", cv_k_range =
# c(2, hi)) is a fourth column (mean squared error whatever the data: its
# search takes no loss).
rcppml_lib <- Sys.getenv("RCPPML_LIB", "bench/lib-rcppml")
if (dir.exists(file.path(rcppml_lib, "RcppML"))) {
  .libPaths(c(normalizePath(rcppml_lib), .libPaths()))
}
suppressPackageStartupMessages({
  library(nmfkit)
  library(Matrix)
})
args <- commandArgs(TRUE)
# "table": only the table of the rows saved so far; "recheck": the search
# alone again on every saved problem of the grid (after a change to it),
# against the saved grid choice (the same folds: same seed)
only_table <- length(args) && args[1] == "table"
recheck <- length(args) && args[1] == "recheck"
reps <- if (length(args) && !only_table && !recheck) as.integer(args[1]) else 5L
grid <- if (length(args) > 1) args[2] else "seeds"
first <- if (length(args) > 2) as.integer(args[3]) else 1L

source("bench/rank-calibration-problems.R")

# CPU (user) seconds of an expression, which a shared machine inflates
# less than elapsed ones
cpu <- function(expr) system.time(expr)[["user.self"]]
one <- function(k, m, n, noise, loss, design, sparse, seed, hi,
                rcppml = FALSE) {
  set.seed(seed)
  x <- planted(k, m, n, noise, loss, design, sparse)
  ctl <- nmf_control(max_iter = 100)
  q <- function(e) suppressWarnings(e)
  set.seed(seed + 10000)
  t_auto <- cpu(fa <- q(nmf(x, rank = c(1, hi), loss = loss, control = ctl)))
  t_ard <- cpu(fd <- q(nmf(x, rank = min(2 * k + 2, k + 10, hi),
                           loss = loss,
                           ard = ard_prior("l1", max_iter = 20000),
                           control = ctl)))
  set.seed(seed + 10000)
  t_grid <- cpu(g <- q(nmf_rank(x, 1:hi, loss = loss, control = ctl)))
  r_rank <- t_r <- NA
  if (rcppml && requireNamespace("RcppML", quietly = TRUE)) {
    xr <- if (sparse) x else as.matrix(x)
    t_r <- cpu(fr <- q(RcppML::nmf(xr, k = "auto", cv_k_range = c(2, hi),
                                   seed = seed, threads = 1,
                                   verbose = FALSE)))
    r_rank <- ncol(fr@w)
  }
  data.frame(k = k, m = m, n = n, noise = noise, loss = loss,
             design = design, sparse = sparse, seed = seed,
             auto = fa$rank, ard = fd$rank, grid = g$best[["one_se"]],
             rcppml = r_rank,
             auto_tried = nrow(fa$rank_search$summary), grid_size = hi,
             t_auto = t_auto, t_ard = t_ard, t_grid = t_grid,
             t_rcppml = t_r)
}

# The search alone on a saved problem: its choice, ranks tried and time.
one_search <- function(row) {
  set.seed(row$seed)
  x <- planted(row$k, row$m, row$n, row$noise, row$loss, row$design,
               row$sparse)
  set.seed(row$seed + 10000)
  t <- cpu(fa <- suppressWarnings(nmf(x, rank = c(1, row$grid_size),
                                      loss = row$loss,
                                      control = nmf_control(max_iter = 100))))
  data.frame(auto2 = fa$rank, tried2 = nrow(fa$rank_search$summary),
             t_auto2 = t)
}

# the modest grid (the machine was shared): rank 3, two noise levels,
# both losses and storages, and the correlated design at the lower noise
small <- rbind(
  expand.grid(k = 3, noise = c(0.1, 0.5), loss = c("frobenius", "kl"),
              design = "independent", sparse = c(FALSE, TRUE),
              stringsAsFactors = FALSE),
  expand.grid(k = 3, noise = 0.1, loss = c("frobenius", "kl"),
              design = "correlated", sparse = FALSE,
              stringsAsFactors = FALSE))
cells <- switch(grid,
  small = small,
  issue38 = rbind(
    expand.grid(k = 3, noise = c(0.1, 0.3, 0.5), loss = c("frobenius", "kl"),
                design = c("independent", "correlated"),
                sparse = c(FALSE, TRUE), stringsAsFactors = FALSE),
    expand.grid(k = 10, noise = c(0.1, 0.5), loss = c("frobenius", "kl"),
                design = "independent", sparse = c(FALSE, TRUE),
                stringsAsFactors = FALSE),
    expand.grid(k = 30, noise = 0.1, loss = c("frobenius", "kl"),
                design = "independent", sparse = FALSE,
                stringsAsFactors = FALSE)),
  # the ranks 10 and 30 of "issue38" alone (a second process on a shared
  # machine)
  large = rbind(
    expand.grid(k = 30, noise = 0.1, loss = c("frobenius", "kl"),
                design = "independent", sparse = FALSE,
                stringsAsFactors = FALSE),
    expand.grid(k = 10, noise = c(0.1, 0.5), loss = c("frobenius", "kl"),
                design = "independent", sparse = c(FALSE, TRUE),
                stringsAsFactors = FALSE)),
  # ranks 10-30, both losses and storages, two noise levels, independent
  # and (noise 0.1) correlated components, with RcppML's k = "auto"
  ranks = rbind(
    expand.grid(k = c(10, 20, 30), noise = c(0.1, 0.3),
                loss = c("frobenius", "kl"), design = "independent",
                sparse = c(FALSE, TRUE), stringsAsFactors = FALSE),
    expand.grid(k = c(10, 20), noise = 0.1, loss = c("frobenius", "kl"),
                design = "correlated", sparse = FALSE,
                stringsAsFactors = FALSE)),
  # the same, as run on a shared machine: rank 10 in every loss, storage
  # and noise; ranks 20 and 30 dense at noise 0.1
  ranks10 = expand.grid(k = 10, noise = c(0.1, 0.3),
                        loss = c("frobenius", "kl"), design = "independent",
                        sparse = c(FALSE, TRUE), stringsAsFactors = FALSE),
  ranks30 = expand.grid(k = c(20, 30), noise = 0.1,
                        loss = c("frobenius", "kl"), design = "independent",
                        sparse = FALSE, stringsAsFactors = FALSE),
  big = unique(rbind(small, expand.grid(
    k = c(3, 8, 20), noise = c(0.1, 0.3, 0.5), loss = c("frobenius", "kl"),
    design = c("independent", "correlated"), sparse = c(FALSE, TRUE),
    stringsAsFactors = FALSE))),
  seeds = rbind(
    expand.grid(k = 3, noise = c(0.1, 0.3), loss = c("frobenius", "kl"),
                design = c("independent", "correlated"),
                sparse = c(FALSE, TRUE), stringsAsFactors = FALSE),
    expand.grid(k = 8, noise = 0.1, loss = c("frobenius", "kl"),
                design = c("independent", "correlated"), sparse = FALSE,
                stringsAsFactors = FALSE)))
# a 4th argument "i/n": every n-th cell from the i-th (n processes)
if (length(args) > 3 && !only_table) {
  part <- as.integer(strsplit(args[4], "/")[[1]])
  cells <- cells[seq(part[1], nrow(cells), by = part[2]), ]
  first_part <- part[1]
} else {
  first_part <- 1L
}
if (only_table) grid <- if (length(args) > 1) args[2] else "seeds"
if (!only_table) cat(sprintf("rank calibration (%s, %d replicate%s): %s; load average %s\n",
            grid, reps, if (reps == 1) "" else "s", format(Sys.time()),
            paste(readLines("/proc/loadavg"), collapse = " ")))
out <- NULL
rds <- sprintf("bench/rank-calibration-%s-%d%s.rds", grid, first,
               if (first_part > 1L) paste0("p", first_part) else "")
if (recheck) {
  grid <- if (length(args) > 1) args[2] else "seeds"
  files <- Sys.glob(sprintf("bench/rank-calibration-%s-[0-9]*.rds", grid))
  saved <- do.call(rbind, lapply(files, readRDS))
  saved <- saved[!duplicated(saved[c("k", "noise", "loss", "design",
                                     "sparse", "seed")]), ]
  out <- NULL
  for (i in seq_len(nrow(saved))) {
    r <- cbind(saved[i, ], one_search(saved[i, ]))
    message(paste(format(r), collapse = " "))
    out <- rbind(out, r)
    saveRDS(out, sprintf("bench/rank-calibration-recheck-%s.rds", grid))
  }
  cat(sprintf("%d problems: planted rank recovered by the search %d (before %d), by the grid %d; search = grid %d (before %d); ranks tried %.2f (before %.2f); search CPU s %.1f in all (before, elapsed: %.1f), grid (elapsed) %.1f\n",
              nrow(out), sum(out$auto2 == out$k), sum(out$auto == out$k),
              sum(out$grid == out$k), sum(out$auto2 == out$grid),
              sum(out$auto == out$grid), mean(out$tried2),
              mean(out$auto_tried), sum(out$t_auto2), sum(out$t_auto),
              sum(out$t_grid)))
  print(out[out$auto2 != out$grid | out$auto != out$grid,
            c("k", "loss", "sparse", "design", "noise", "seed", "grid",
              "auto", "auto2")], row.names = FALSE)
  quit(save = "no")
}
if (only_table) {
  # every run's rows of the grid (a problem run twice counts once)
  files <- Sys.glob(sprintf("bench/rank-calibration-%s-*.rds", grid))
  out <- do.call(rbind, lapply(files, readRDS))
  out <- out[!duplicated(out[c("k", "noise", "loss", "design", "sparse",
                               "seed")]), ]
  cells <- cells[0, ]
}
for (i in seq_len(nrow(cells))) {
  cl <- cells[i, ]
  d <- dims(cl$k)
  for (s in first - 1L + seq_len(reps)) {
    r <- one(cl$k, d$m, d$n, cl$noise, cl$loss, cl$design, cl$sparse, s,
             d$hi, rcppml = grepl("^ranks", grid))
    message(paste(format(r), collapse = " "))
    out <- rbind(out, r)
    saveRDS(out, rds)
  }
}
# rows saved before the RcppML column have none
if (is.null(out$rcppml)) out$rcppml <- out$t_rcppml <- NA
with_r <- any(!is.na(out$rcppml))
agg <- aggregate(cbind(auto = auto == k, ard = ard == k, grid = grid == k,
                       rcppml = rcppml == k, same = auto == grid,
                       tried = auto_tried, size = grid_size, t_auto = t_auto,
                       t_ard = t_ard, t_grid = t_grid, t_rcppml = t_rcppml) ~
                   k + loss + sparse + design + noise,
                 data = out, FUN = mean, na.action = na.pass)
agg$problems <- aggregate(seed ~ k + loss + sparse + design + noise,
                          data = out, FUN = length)$seed
agg <- agg[order(agg$k, agg$loss, agg$sparse, agg$design, agg$noise), ]
fmt <- function(v, d = 2) formatC(v, format = "f", digits = d)
cat("| k | loss | storage | design | noise | problems | auto | ARD | grid |",
    if (with_r) "RcppML |", "auto = grid | ranks tried / grid | time auto / ARD / grid",
    if (with_r) "/ RcppML", "(s) |\n")
cat("|---|---|---|---|---|---|---|---|---|", if (with_r) "---|", "---|---|---|\n",
    sep = "")
for (i in seq_len(nrow(agg))) {
  a <- agg[i, ]
  cat(sprintf("| %d | %s | %s | %s | %s | %d | %s | %s | %s |%s %s | %s / %d | %s / %s / %s%s |\n",
              a$k, a$loss, if (a$sparse) "sparse" else "dense", a$design,
              a$noise, as.integer(a$problems), fmt(a$auto), fmt(a$ard),
              fmt(a$grid), if (with_r) paste0(" ", fmt(a$rcppml), " |") else "",
              fmt(a$same), fmt(a$tried, 1), as.integer(a$size),
              fmt(a$t_auto), fmt(a$t_ard), fmt(a$t_grid),
              if (with_r) paste0(" / ", fmt(a$t_rcppml)) else ""))
}
cat(sprintf("\nTotals: %d problems; planted rank recovered by the search %d, ARD %d, grid %d%s; search = grid %d\n",
            nrow(out), sum(out$auto == out$k), sum(out$ard == out$k),
            sum(out$grid == out$k),
            if (with_r) sprintf(", RcppML %d", sum(out$rcppml == out$k,
                                                    na.rm = TRUE)) else "",
            sum(out$auto == out$grid)))
cat(sprintf("\nfinished %s; load average %s\n", format(Sys.time()),
            paste(readLines("/proc/loadavg"), collapse = " ")))
