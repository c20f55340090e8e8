# Signatures against MutationalPatterns (issue 37, "Benchmarks"):
#
# 1. Extraction: nmfkit::nmf_signatures(x, rank = k, nrun) against
#    MutationalPatterns::extract_signatures(x, rank = k, nrun) (NMF package,
#    brunet), the same rank and replicate count, on catalogues simulated by
#    simulate_catalogue() from simulate_signatures(k) (Dirichlet(0.2) over
#    the 96 SBS contexts), 50 samples x 2,000 mutations, 2 active per
#    sample. Time (alternating pairs, median ratio) and the cosine of each
#    planted signature to its match (match_components(): mean and min).
#    Both on one thread: nmfkit threads = 1, NMF's parallel backend off
#    (nmf.options(pbackend = "seq"); MutationalPatterns' single_core = TRUE
#    still asks NMF for "p"). Target: >= 20x at equal or better cosine.
# 2. Refit with bootstrap: refit_signatures(B = 100) against
#    fit_to_signatures_bootstrapped(n_boots = 100), where the methods
#    coincide: Frobenius NNLS on all signatures ("regular" / select =
#    "none") and backward elimination by cosine, max_delta 0.004 ("strict" /
#    select = "cosine"); COSMIC v3.2 SBS signatures (artefacts dropped) when
#    installed, else 30 simulated; 30 samples x 2,000 mutations from 5 of
#    them. Target: >= 10x. The point estimates of the two (fit_to_signatures()
#    and fit_to_signatures_strict()) against refit_signatures(): the largest
#    difference relative to the sample's total (target 1e-6).
# 3. Accuracy of exposures (SigFitTest-like): 30 samples from 5 planted
#    signatures (3 active each), refitted on all of them, at 100 / 2,000 /
#    50,000 mutations: the mean over samples of the total absolute error of
#    exposure shares, for nmfkit (KL, select none / cosine / lrt) and
#    MutationalPatterns' regular and strict refits. 10 seeds.
#
# Run: Rscript bench/signatures.R [pairs] [nrun] [parts]
#   defaults 3 pairs, nrun 20, parts "1,2,3". Writes
#   bench/signatures-speed-results.md. Pin with taskset for the 1-thread figures.
suppressPackageStartupMessages({
  library(nmfkit)
  library(MutationalPatterns)
  library(NMF)
})
args <- commandArgs(TRUE)
pairs <- if (length(args) >= 1) as.integer(args[1]) else 3L
nrun <- if (length(args) >= 2) as.integer(args[2]) else 20L
parts <- if (length(args) >= 3) as.integer(strsplit(args[3], ",")[[1]]) else
  1:3
NMF::nmf.options(pbackend = "seq")
up <- function() trimws(system("uptime", intern = TRUE))
start_up <- up()
cat("start:", start_up, "\n")
elapsed <- function(expr) system.time(expr)[["elapsed"]]
fmt <- function(d) {
  c(paste("|", paste(names(d), collapse = " | "), "|"),
    paste("|", paste(rep("---", ncol(d)), collapse = " | "), "|"),
    apply(d, 1, function(r) paste("|", paste(trimws(r), collapse = " | "),
                                  "|")))
}
out <- c("# Signatures against MutationalPatterns (bench/signatures.R)", "",
         sprintf("Run %s; nmfkit %s, MutationalPatterns %s, NMF %s; %d pairs, nrun %d; `uptime` at the start: %s",
                 format(Sys.time(), "%Y-%m-%d %H:%M UTC", tz = "UTC"),
                 utils::packageVersion("nmfkit"),
                 utils::packageVersion("MutationalPatterns"),
                 utils::packageVersion("NMF"), pairs, nrun, start_up), "")

# ---- 1. extraction ----------------------------------------------------------
if (1 %in% parts) {
  rows <- list()
  for (k in c(3L, 5L)) {
    set.seed(370 + k)
    W <- simulate_signatures(k)
    sim <- simulate_catalogue(W, n = 50, mutations = 2000, active = 2)
    x <- sim$counts
    run_k <- function() {
      set.seed(1)
      t <- elapsed(f <- suppressWarnings(nmf_signatures(
        x, rank = k, nrun = nrun, control = nmf_control(threads = 1))))
      list(t = t, W = f$fits[[1]]$W)
    }
    run_mp <- function() {
      t <- elapsed(f <- extract_signatures(x, rank = k, nrun = nrun,
                                           single_core = TRUE))
      list(t = t, W = f$signatures)
    }
    tk <- tm <- numeric(pairs)
    for (i in seq_len(pairs)) {
      if (i %% 2) {
        a <- run_mp()
        b <- run_k()
      } else {
        b <- run_k()
        a <- run_mp()
      }
      tm[i] <- a$t
      tk[i] <- b$t
    }
    cos_k <- match_components(W, b$W)$similarity
    cos_m <- match_components(W, a$W)$similarity
    rows[[length(rows) + 1]] <- data.frame(
      rank = k, nrun = nrun,
      mp_s = round(stats::median(tm), 2), nmfkit_s = round(stats::median(tk), 3),
      ratio = round(stats::median(tm / tk), 1),
      mp_cosine = sprintf("%.4f (min %.4f)", mean(cos_m), min(cos_m)),
      nmfkit_cosine = sprintf("%.4f (min %.4f)", mean(cos_k), min(cos_k)),
      load = sub(".*load average: ", "", up()))
    print(rows[[length(rows)]], row.names = FALSE)
  }
  out <- c(out, "## 1. Extraction (50 samples x 2,000 mutations, 2 active; 1 thread)",
           "", fmt(do.call(rbind, rows)), "")
  writeLines(out, "bench/signatures-speed-results.md")
}

# ---- the refit problems -----------------------------------------------------
pool <- if (cosmic_signatures_available()) {
  cs <- cosmic_signatures("SBS", artefacts = FALSE)
  cs
} else {
  set.seed(30)
  simulate_signatures(30)
}
pool_name <- if (cosmic_signatures_available()) "COSMIC v3.2 SBS" else
  "30 simulated"
planted_set <- if (cosmic_signatures_available())
  intersect(c("SBS1", "SBS2", "SBS5", "SBS13", "SBS18"), colnames(pool)) else
  colnames(pool)[1:5]

# ---- 2. bootstrap refit -----------------------------------------------------
if (2 %in% parts) {
  set.seed(372)
  sim <- simulate_catalogue(pool[, planted_set], n = 30, mutations = 2000,
                            active = 3)
  x <- sim$counts
  W <- pool
  rows <- list()
  # SIG_BENCH_METHODS="regular" skips the strict refit (MutationalPatterns'
  # takes about 400 s per run of it)
  methods <- strsplit(Sys.getenv("SIG_BENCH_METHODS", "regular,strict"),
                      ",")[[1]]
  for (method in methods) {
    select <- if (method == "regular") "none" else "cosine"
    run_k <- function() {
      set.seed(1)
      elapsed(refit_signatures(x, W, loss = "frobenius", select = select,
                               max_delta = 0.004, B = 100))
    }
    run_mp <- function() {
      set.seed(1)
      elapsed(suppressMessages(fit_to_signatures_bootstrapped(
        x, W, n_boots = 100, max_delta = 0.004, method = method,
        verbose = FALSE)))
    }
    tk <- tm <- numeric(pairs)
    for (i in seq_len(pairs)) {
      if (i %% 2) {
        tm[i] <- run_mp()
        tk[i] <- run_k()
      } else {
        tk[i] <- run_k()
        tm[i] <- run_mp()
      }
    }
    # the point estimates where the methods coincide
    h_k <- refit_signatures(x, W, loss = "frobenius", select = select,
                            max_delta = 0.004)$exposures
    h_m <- if (method == "regular") fit_to_signatures(x, W)$contribution else
      fit_to_signatures_strict(x, W, max_delta = 0.004)$fit_res$contribution
    rel <- max(abs(h_k - h_m[rownames(h_k), colnames(h_k)]) /
                 rep(colSums(x), each = nrow(h_k)))
    rows[[length(rows) + 1]] <- data.frame(
      method = paste(method, "/ select =", select), B = 100,
      mp_s = round(stats::median(tm), 2), nmfkit_s = round(stats::median(tk), 3),
      ratio = round(stats::median(tm / tk), 1),
      point_estimates_max_rel_diff = signif(rel, 2),
      load = sub(".*load average: ", "", up()))
    print(rows[[length(rows)]], row.names = FALSE)
  }
  out <- c(out, sprintf("## 2. Refit with 100 bootstrap replicates (%s signatures, %d; 30 samples x 2,000 mutations; 1 thread)",
                        pool_name, ncol(pool)), "",
           fmt(do.call(rbind, rows)), "")
  writeLines(out, "bench/signatures-speed-results.md")
}

# ---- 3. accuracy ------------------------------------------------------------
if (3 %in% parts) {
  share_err <- function(h, e) {
    hs <- sweep(h, 2, pmax(colSums(h), 1e-300), "/")
    es <- sweep(e, 2, colSums(e), "/")
    mean(colSums(abs(hs - es)))
  }
  rows <- list()
  for (n_mut in c(100, 2000, 50000)) {
    err <- matrix(NA, 10, 5, dimnames = list(NULL, c(
      "nmfkit KL, all", "nmfkit KL, cosine", "nmfkit KL, lrt",
      "MutationalPatterns regular", "MutationalPatterns strict")))
    for (seed in 1:10) {
      set.seed(3700 + seed)
      sim <- simulate_catalogue(pool[, planted_set], n = 30,
                                mutations = n_mut, active = 3)
      e <- matrix(0, ncol(pool), 30, dimnames = list(colnames(pool), NULL))
      e[planted_set, ] <- sim$exposures
      x <- sim$counts
      x <- x[, colSums(x) > 0, drop = FALSE]
      e <- e[, colnames(sim$counts) %in% colnames(x), drop = FALSE]
      fk <- function(sel) refit_signatures(x, pool, select = sel)$exposures
      err[seed, ] <- c(
        share_err(fk("none"), e), share_err(fk("cosine"), e),
        share_err(fk("lrt"), e),
        share_err(fit_to_signatures(x, pool)$contribution, e),
        share_err(fit_to_signatures_strict(x, pool, max_delta = 0.004)$
                    fit_res$contribution, e))
    }
    rows[[length(rows) + 1]] <- data.frame(
      mutations = format(n_mut, big.mark = ","),
      t(round(colMeans(err), 3)), check.names = FALSE)
    print(rows[[length(rows)]], row.names = FALSE)
  }
  out <- c(out, sprintf("## 3. Total absolute error of exposure shares (%s signatures, %d; 30 samples from 5 planted, 3 active; mean of 10 seeds)",
                        pool_name, ncol(pool)), "",
           fmt(do.call(rbind, rows)), "")
}
out <- c(out, paste("End:", up()))
writeLines(out, "bench/signatures-speed-results.md")
cat(out, sep = "\n")
