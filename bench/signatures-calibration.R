# Calibration of the signature workflows on planted catalogues (issue 37):
#
# 1. refit_signatures() bootstrap intervals: the share of true exposures
#    (of signatures active in a sample) inside the intervals at levels
#    0.8, 0.9, 0.95, by mutations per sample (100, 2,000, 50,000), KL loss,
#    no selection; B = 100 replicates, the ends at the order statistics
#    (B + 1) p (shipped) and at R's default 1 + (B - 1) p (before).
# 2. Selection: the share of active signatures kept and of absent ones
#    dropped, for select = "cosine" (max_delta 0.004) and "lrt"
#    (alpha 0.01), on 20 planted signatures, 3 active per sample.
# 3. nmf_signatures(): how often the chosen rank is the planted rank, and
#    the smallest matched cosine to the planted signatures, over seeds.
#
# Signatures: Dirichlet(0.2) draws over the 96 SBS contexts
# (simulate_signatures()), or the COSMIC SBS signatures when installed
# (argument "cosmic"). Exposures as simulate_catalogue() (SigFitTest-like:
# `active` signatures per sample, Dirichlet(1) weights).
# Run: Rscript bench/signatures-calibration.R [seeds] [cosmic] [coverage]
# ("coverage": part 1 only)
suppressPackageStartupMessages(library(nmfkit))
args <- commandArgs(TRUE)
n_seeds <- if (length(args) >= 1) as.integer(args[1]) else 5L
use_cosmic <- "cosmic" %in% args
cat(sprintf("signatures calibration: %d seeds, %s signatures, %s; load average %s\n",
            n_seeds, if (use_cosmic) "COSMIC" else "simulated",
            format(Sys.time()), paste(readLines("/proc/loadavg"),
                                      collapse = " ")))

pool <- function(k) {
  if (use_cosmic) {
    cs <- cosmic_signatures("SBS", artefacts = FALSE)
    cs[, sample(ncol(cs), k)]
  } else {
    simulate_signatures(k)
  }
}

# 1. coverage: the same B = 100 replicates read by the shipped rule (order
#    statistics at (B + 1) p, quantile type 6) and by R's default type 7
#    (what refit_signatures() used before, and MutationalPatterns does)
levels <- c(0.8, 0.9, 0.95)
interval <- function(arr, l, type) {
  q <- function(p) apply(arr, c(1, 2), stats::quantile, probs = p,
                         type = type, names = FALSE)
  list(lower = q((1 - l) / 2), upper = q((1 + l) / 2))
}
cov <- NULL
for (n_mut in c(100, 2000, 50000)) {
  hits <- list(type6 = NULL, type7 = NULL)
  for (seed in seq_len(n_seeds)) {
    set.seed(seed)
    W <- pool(6)
    sim <- simulate_catalogue(W, n = 20, mutations = n_mut, active = 3)
    fit <- refit_signatures(sim$counts, W, B = 100)
    on <- sim$exposures > 0
    for (type in 6:7) {
      h <- vapply(levels, function(l) {
        q <- interval(fit$replicates, l, type)
        (sim$exposures >= q$lower & sim$exposures <= q$upper)[on]
      }, logical(sum(on)))
      hits[[type - 5]] <- rbind(hits[[type - 5]], h)
    }
  }
  for (type in 6:7) {
    m <- colMeans(hits[[type - 5]])
    cov <- rbind(cov, data.frame(
      mutations = n_mut, quantile = paste0("type ", type), t(m),
      se_0.9 = sqrt(m[2] * (1 - m[2]) / nrow(hits[[type - 5]])),
      n = nrow(hits[[type - 5]])))
  }
}
names(cov)[3:5] <- paste0("level_", levels)
cat("\n1. coverage of true exposures (active signatures), B = 100\n")
print(cov, row.names = FALSE, digits = 3)
if ("coverage" %in% args) quit(save = "no")

# 2. selection
sel <- NULL
for (n_mut in c(100, 2000, 50000)) {
  res <- list(cosine = c(0, 0, 0, 0), lrt = c(0, 0, 0, 0),
              none = c(0, 0, 0, 0))
  for (seed in seq_len(n_seeds)) {
    set.seed(100 + seed)
    W <- pool(20)
    sim <- simulate_catalogue(W, n = 20, mutations = n_mut, active = 3)
    on <- sim$exposures > 0
    for (s in names(res)) {
      kept <- refit_signatures(sim$counts, W, select = s)$exposures > 0
      res[[s]] <- res[[s]] + c(sum(kept[on]), sum(on), sum(!kept[!on]),
                               sum(!on))
    }
  }
  for (s in names(res)) {
    r <- res[[s]]
    sel <- rbind(sel, data.frame(mutations = n_mut, select = s,
                                 active_kept = r[1] / r[2],
                                 absent_dropped = r[3] / r[4]))
  }
}
cat("\n2. selection: active signatures kept, absent ones dropped\n")
print(sel, row.names = FALSE, digits = 3)

# 3. rank: the stability rule (ranks 2 to k + 3) and the held-out search
#    (rank = auto_rank(1, k + 5)), 10 replicates each, at 100, 2,000 and
#    50,000 mutations per sample; the smallest matched cosine of the
#    planted signatures to the extraction at the planted rank (the rule's
#    fit at k; the search's when it chose k)
rk <- NULL
for (k in c(3, 5)) {
  for (n_mut in c(100, 2000, 50000)) {
    for (how in c("stability", "search")) {
      chosen <- integer(0)
      worst <- numeric(0)
      secs <- numeric(0)
      for (seed in seq_len(n_seeds)) {
        set.seed(200 + seed)
        W <- pool(k)
        sim <- simulate_catalogue(W, n = 50, mutations = n_mut, active = 2)
        t0 <- proc.time()[["elapsed"]]
        sig <- suppressWarnings(nmf_signatures(
          sim$counts, rank = if (how == "search") auto_rank(1, k + 5) else
            2:(k + 3), nrun = 10))
        secs <- c(secs, proc.time()[["elapsed"]] - t0)
        chosen <- c(chosen, sig$rank)
        got <- sig$fits[[as.character(k)]]$W
        worst <- c(worst, if (is.null(got)) NA else
          min(match_components(W, got)$similarity))
      }
      rk <- rbind(rk, data.frame(
        planted = k, mutations = n_mut, rule = how,
        correct = mean(chosen == k), chosen = paste(chosen, collapse = " "),
        cosine_95 = mean(!is.na(worst) & worst >= 0.95),
        min_cosine = suppressWarnings(min(worst, na.rm = TRUE)),
        seconds = mean(secs)))
      message(paste(format(rk[nrow(rk), ]), collapse = " "))
    }
  }
}
cat("\n3. rank chosen by nmf_signatures() (10 replicates; stability rule on ranks 2 to k + 3, or held-out search on 1 to k + 5)\n")
print(rk, row.names = FALSE, digits = 3)
cat(sprintf("\nfinished %s; load average %s\n", format(Sys.time()),
            paste(readLines("/proc/loadavg"), collapse = " ")))
