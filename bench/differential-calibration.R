# Calibration of nmf_differential() (R/nmf-differential.R): the level of
# its permutation p-values under the null and its power on planted
# differences, for joint and stratified fits.
#
#   R_LIBS=<lib with nmfkit> Rscript bench/differential-calibration.R [out.md]
#
# (a) Level: 200 null data sets (both sets, or all strata, drawn from one
#     planted model with Poisson noise), one nmf_differential() each with
#     B = 99. Per data set: the p-value of one fixed cell (feature 1 and the
#     component carrying its block; feature 1 and stratum "a"), whose
#     distribution should be uniform (KS test against punif), and the
#     smallest BH-adjusted p-value (the rule "some feature differs"), whose
#     rejection rate at 5 % should be at most 5 %.
# (b) Power: planted differences of a few sizes, 20 data sets each,
#     B = 499 (BH over 180 or 240 cells with 15-20 planted ones needs
#     p-values below about 0.004): the fraction of planted cells found at
#     BH 5 % and the false-discovery proportion among the discoveries.
# One thread, sequential plan. Small problems: 60 features, 80 columns,
# rank 3.

suppressPackageStartupMessages(library(nmfkit))
out <- commandArgs(TRUE)[1]
if (is.na(out)) out <- "bench/differential-results.md"
future::plan(future::sequential)
ctl <- nmf_control(threads = 1)
set.seed(20261126)
t_start <- proc.time()[["elapsed"]]
started <- format(Sys.time(), tz = "UTC")
uptime <- tryCatch(system("uptime", intern = TRUE), error = function(e) "?")

m <- 60
k <- 3
blocks <- rep(seq_len(k), each = m / k)
basis <- function() {
  W <- matrix(0, m, k)
  for (i in seq_len(k)) W[blocks == i, i] <- runif(sum(blocks == i), 0.5, 1.5)
  W
}
# coefficients on [0, 2] with 40 % zeros (a unique factorisation)
coef <- function(n) matrix(runif(k * n, 0, 2) * (runif(k * n) > 0.4), k, n)

# Two sets of 40 columns; set 2 uses component 1 `effect` times more.
joint_data <- function(effect = 1, scale = 5) {
  W <- basis()
  h1 <- coef(40)
  h2 <- coef(40)
  h2[1, ] <- h2[1, ] * effect
  list(x1 = matrix(rpois(m * 40, scale * W %*% h1), m),
       x2 = matrix(rpois(m * 40, scale * W %*% h2), m))
}
# Four strata of 20 columns over a background of 1; stratum "b" gets an
# extra shift `effect` on 15 features (five per block).
planted_features <- c(1:5, 21:25, 41:45)
strat_data <- function(effect = 0) {
  W <- basis()
  x <- lapply(1:4, function(s) {
    mu <- 5 * W %*% coef(20) + 1 +
      effect * (s == 2) * (seq_len(m) %in% planted_features)
    matrix(rpois(m * 20, mu), m)
  })
  names(x) <- letters[1:4]
  x
}

fmt <- function(x, d = 3) formatC(x, digits = d, format = "f")
ks <- function(p) suppressWarnings(stats::ks.test(p, "punif"))
table_md <- function(df) {
  c(paste("|", paste(names(df), collapse = " | "), "|"),
    paste("|", paste(rep("---", ncol(df)), collapse = " | "), "|"),
    apply(df, 1, function(r) paste("|", paste(r, collapse = " | "), "|")))
}

# (a) level ------------------------------------------------------------------
level_rows <- list()
null_runs <- as.integer(Sys.getenv("NULL_RUNS", "200"))
level <- function(label, one) {
  t0 <- proc.time()[["elapsed"]]
  res <- t(vapply(seq_len(null_runs), function(r) one(), numeric(2)))
  k1 <- ks(res[, 1])
  data.frame(
    fit = label, runs = null_runs, B = 99,
    cell_ks_D = fmt(k1$statistic), cell_ks_p = fmt(k1$p.value),
    cell_reject_5pc = fmt(mean(res[, 1] <= 0.05)),
    min_adj_reject_5pc = fmt(mean(res[, 2] < 0.05)),
    min_adj_reject_10pc = fmt(mean(res[, 2] < 0.10)),
    seconds = fmt(proc.time()[["elapsed"]] - t0, 1),
    stringsAsFactors = FALSE
  )
}
joint_null <- function(normalize) function() {
  d <- joint_data()
  fit <- nmf_joint(d$x1, d$x2, rank = k, normalize = normalize,
                   control = ctl)
  dt <- nmf_differential(fit, B = 99)
  comp <- which.max(fit$W[1, ])
  tab <- dt$table
  c(tab$p_value[tab$feature == "f1" & as.integer(tab$component) == comp],
    min(tab$p_adjusted))
}
strat_null <- function(update) function() {
  x <- strat_data()
  fit <- nmf_stratified(x, rank = k, control = nmf_control(
    threads = 1, update = update))
  tab <- nmf_differential(fit, B = 99)$table
  c(tab$p_value[tab$feature == "f1" & tab$stratum == "a"],
    min(tab$p_adjusted))
}
level_rows[[1]] <- level("joint, normalize = TRUE", joint_null(TRUE))
level_rows[[2]] <- level("joint, normalize = FALSE", joint_null(FALSE))
level_rows[[3]] <- level("stratified, multiplicative (default)",
                         strat_null("multiplicative"))
level_rows[[4]] <- level("stratified, update = \"hals\"", strat_null("hals"))
level_tab <- do.call(rbind, level_rows)
print(level_tab)

# (b) power ------------------------------------------------------------------
power_runs <- as.integer(Sys.getenv("POWER_RUNS", "20"))
power_joint <- function(effect, normalize) {
  t0 <- proc.time()[["elapsed"]]
  res <- t(vapply(seq_len(power_runs), function(r) {
    d <- joint_data(effect)
    fit <- nmf_joint(d$x1, d$x2, rank = k, normalize = normalize,
                     control = ctl)
    tab <- nmf_differential(fit, B = 499)$table
    comp <- which.max(colSums(fit$W[blocks == 1, ]))
    ci <- as.integer(tab$component)
    f <- as.integer(sub("f", "", tab$feature))
    planted <- ci == comp & blocks[f] == 1
    hit <- tab$p_adjusted < 0.05
    c(found = mean(hit[planted]),
      fdp = if (any(hit)) mean(!planted[hit]) else 0,
      fd_offblock = sum(hit & ci == comp & !planted),
      fd_other = sum(hit & ci != comp))
  }, numeric(4)))
  data.frame(fit = sprintf("joint, normalize = %s", normalize),
             effect = sprintf("x%s", effect), runs = power_runs,
             planted_found = fmt(mean(res[, 1])),
             mean_fdp = fmt(mean(res[, 2])),
             fd_same_component = fmt(mean(res[, 3]), 1),
             fd_other_components = fmt(mean(res[, 4]), 1),
             seconds = fmt(proc.time()[["elapsed"]] - t0, 1),
             stringsAsFactors = FALSE)
}
power_strat <- function(effect, update) {
  t0 <- proc.time()[["elapsed"]]
  res <- t(vapply(seq_len(power_runs), function(r) {
    x <- strat_data(effect)
    fit <- nmf_stratified(x, rank = k, control = nmf_control(
      threads = 1, update = update))
    tab <- nmf_differential(fit, B = 499)$table
    f <- as.integer(sub("f", "", tab$feature))
    planted <- tab$stratum == "b" & f %in% planted_features
    mirror <- tab$stratum != "b" & f %in% planted_features
    hit <- tab$p_adjusted < 0.05
    c(found = mean(hit[planted]),
      fdp = if (any(hit & !mirror)) mean(!planted[hit & !mirror]) else 0,
      fd_unplanted = sum(hit & !(f %in% planted_features)),
      mirror = sum(hit & mirror))
  }, numeric(4)))
  data.frame(fit = sprintf("stratified, %s", update),
             effect = sprintf("+%s", effect), runs = power_runs,
             planted_found = fmt(mean(res[, 1])),
             mean_fdp = fmt(mean(res[, 2])),
             fd_unplanted_features = fmt(mean(res[, 3]), 1),
             other_strata_at_planted = fmt(mean(res[, 4]), 1),
             seconds = fmt(proc.time()[["elapsed"]] - t0, 1),
             stringsAsFactors = FALSE)
}
pj <- do.call(rbind, c(lapply(c(1.5, 2, 3), power_joint, normalize = FALSE),
                       list(power_joint(2, TRUE))))
print(pj)
ps <- do.call(rbind, c(lapply(c(1, 2, 4), power_strat,
                              update = "multiplicative"),
                       lapply(c(1, 2, 4), power_strat, update = "hals")))
print(ps)

total <- proc.time()[["elapsed"]] - t_start
lines <- c(
  "# Differential tests: calibration (bench/differential-calibration.R)",
  "",
  sprintf(paste("Run: started %s UTC, Debian, R %s, nmfkit %s, 1 thread,",
                "sequential plan."),
          started, getRversion(), utils::packageVersion("nmfkit")),
  "",
  sprintf("Load before the run: %s", trimws(uptime)),
  "(2 cores shared with two other workers' builds and tests.)",
  "",
  sprintf("Total run time: %.0f s.", total),
  "",
  "Problems: 60 features, rank 3 (three blocks of 20 features), Poisson",
  "noise; joint: two sets of 40 columns; stratified: four strata of 20",
  "columns over a background of 1.",
  "",
  "## (a) Level under the null (200 data sets, B = 99)",
  "",
  "`cell`: the p-value of one fixed cell per data set (feature 1 and the",
  "component carrying its block; feature 1 and stratum a), KS test",
  "against the uniform; `min_adj`: the smallest BH-adjusted p-value of",
  "the data set (the rule \"some feature differs\"), rejection rates.",
  "",
  table_md(level_tab),
  "",
  "## (b) Power on planted differences (20 data sets per row, B = 499, BH 5 %)",
  "",
  "Joint: set 2 uses component 1 `effect` times more; planted cells are",
  "the 20 features of block 1 in the component that carries them.",
  "`fd_same_component`: discoveries per data set at other features of that",
  "component; `fd_other_components`: at the other components.",
  "",
  table_md(pj),
  "",
  "Stratified: stratum b has an extra shift `effect` on 15 features;",
  "planted cells are those 15 features in stratum b. `mean_fdp` counts",
  "discoveries outside the planted cells, leaving out the other strata at",
  "the planted features (the centred shift moves them by -effect/4; their",
  "discoveries are listed as `other_strata_at_planted`).",
  "",
  table_md(ps)
)
writeLines(lines, out)
cat(sprintf("total %.0f s\n", total))
