# Calibration of nmf_differential() (R/nmf-differential.R): the level of
# its permutation p-values under the null, the false-discovery proportion
# where few features differ, and power, for joint and stratified fits.
#
#   R_LIBS=<lib with nmfkit> Rscript bench/differential-calibration.R [out.md]
#
# Joint fits (the feature-level test of issue 36: set-specific loadings on
# the fit's H, aligned and studentised, labels permuted):
# (a) Level: NULL_RUNS null data sets (both sets from one planted model with
#     Poisson noise), default B (Besag-Clifford, capped at 20 x tests). Per
#     data set: the p-value of one fixed cell (feature 1 in the component
#     carrying its block), KS test against the uniform over data sets; the
#     share of all cells with p <= 0.05 (pooled); the smallest BH-adjusted
#     p-value (the rule "some feature differs") at 5 % and 10 %.
# (b) FDP and power: POWER_RUNS data sets per row (bench/differential-fdr.R
#     runs many data sets per row and reports standard errors); set 2's basis differs in
#     a tenth of component 1's features (weights times `effect`), or set 2
#     only uses component 1 `usage` times as much (no feature differs).
#     Planted cells found at BH 5 %, mean false-discovery proportion, the
#     null cells' KS against the uniform, and the components' test.
# Stratified fits: level and power as before (refits per permutation), with
#     B given (the refits make the adaptive default slow on a shared box).
# One thread, sequential plan.

suppressPackageStartupMessages(library(nmfkit))
out <- commandArgs(TRUE)[1]
if (is.na(out)) out <- "bench/differential-results.md"
future::plan(future::sequential)
ctl <- nmf_control(threads = 1)
set.seed(20261127)
t_start <- proc.time()[["elapsed"]]
started <- format(Sys.time(), tz = "UTC")
uptime <- tryCatch(system("uptime", intern = TRUE), error = function(e) "?")
null_runs <- as.integer(Sys.getenv("NULL_RUNS", "100"))
power_runs <- as.integer(Sys.getenv("POWER_RUNS", "10"))

here <- if (file.exists("bench/differential-problems.R")) "bench" else "."
source(file.path(here, "differential-problems.R"))
planted_rows <- which(blocks == 1)[seq_len(sum(blocks == 1) / 10)]

# Two sets of 60 columns; in set 2 a tenth of block 1's features weigh
# `effect` times as much, and component 1 is used `usage` times as much.
joint_data <- function(effect = 1, usage = 1, scale = 5) {
  W <- basis()
  W2 <- W
  W2[planted_rows, 1] <- W2[planted_rows, 1] * effect
  h2 <- coef(60)
  h2[1, ] <- h2[1, ] * usage
  x <- list(x1 = matrix(rpois(m * 60, scale * W %*% coef(60)), m),
            x2 = matrix(rpois(m * 60, scale * W2 %*% h2), m))
  x
}
# Four strata of 20 columns over a background of 1; stratum "b" gets an
# extra shift `effect` on 15 features (five per block).
planted_features <- c(1:5, 51:55, 101:105)
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
joint_fit <- function(d, normalize) {
  nmf_joint(d$x1, d$x2, rank = k, normalize = normalize, control = ctl)
}
# the component carrying block 1, and each table row's feature index
block1 <- function(fit) which.max(colSums(fit$W[blocks == 1, ]))
feature_index <- function(tab) as.integer(sub("f", "", tab$feature))

# (a) joint level ---------------------------------------------------------------
joint_level <- function(normalize) {
  t0 <- proc.time()[["elapsed"]]
  cells <- numeric()
  res <- t(vapply(seq_len(null_runs), function(r) {
    fit <- joint_fit(joint_data(), normalize)
    dt <- nmf_differential(fit)
    tab <- dt$table
    comp <- which.max(fit$W[1, ])
    cells <<- c(cells, tab$p_value[tab$statistic != 0])
    c(tab$p_value[feature_index(tab) == 1 &
                    as.integer(tab$component) == comp],
      min(tab$p_adjusted), min(dt$components$p_adjusted),
      mean(tab$permutations))
  }, numeric(4)))
  k1 <- ks(res[, 1])
  data.frame(
    fit = sprintf("joint, normalize = %s", normalize), runs = null_runs,
    cell_ks_D = fmt(k1$statistic), cell_ks_p = fmt(k1$p.value),
    cell_reject_5pc = fmt(mean(res[, 1] <= 0.05)),
    all_cells_reject_5pc = fmt(mean(cells <= 0.05)),
    min_adj_reject_5pc = fmt(mean(res[, 2] < 0.05)),
    min_adj_reject_10pc = fmt(mean(res[, 2] < 0.10)),
    components_reject_5pc = fmt(mean(res[, 3] < 0.05)),
    mean_permutations = fmt(mean(res[, 4]), 0),
    seconds = fmt(proc.time()[["elapsed"]] - t0, 1),
    stringsAsFactors = FALSE
  )
}
# NORMALIZED=0 runs the null of normalize = FALSE only
jl <- do.call(rbind, lapply(
  if (Sys.getenv("NORMALIZED", "1") != "0") c(FALSE, TRUE) else FALSE,
  joint_level))
print(jl)

# (b) joint FDP and power -----------------------------------------------------
joint_power <- function(effect, usage, normalize = FALSE) {
  t0 <- proc.time()[["elapsed"]]
  nullp <- numeric()
  res <- t(vapply(seq_len(power_runs), function(r) {
    fit <- joint_fit(joint_data(effect, usage), normalize)
    dt <- nmf_differential(fit)
    tab <- dt$table
    comp <- block1(fit)
    ci <- as.integer(tab$component)
    planted <- ci == comp & feature_index(tab) %in% planted_rows &
      effect != 1
    hit <- tab$p_adjusted < 0.05
    nullp <<- c(nullp, tab$p_value[!planted & tab$statistic != 0])
    c(found = if (any(planted)) mean(hit[planted]) else NA,
      fdp = if (any(hit)) mean(!planted[hit]) else 0,
      false = sum(hit & !planted),
      same = sum(hit & !planted & ci == comp),
      comp = dt$components$p_adjusted[comp] < 0.05,
      other_comp = sum(dt$components$p_adjusted[-comp] < 0.05),
      B = dt$B, perms = mean(tab$permutations))
  }, numeric(8)))
  data.frame(fit = sprintf("joint, normalize = %s", normalize),
             features_x = effect, usage_x = usage, runs = power_runs,
             planted_found = if (effect != 1) fmt(mean(res[, 1])) else "-",
             mean_fdp = fmt(mean(res[, 2])),
             false_per_set = fmt(mean(res[, 3]), 1),
             of_which_same_comp = fmt(mean(res[, 4]), 1),
             null_cells_ks_D = fmt(ks(nullp)$statistic),
             component_found = fmt(mean(res[, 5])),
             other_components = fmt(mean(res[, 6]), 1),
             B = res[1, 7], mean_permutations = fmt(mean(res[, 8]), 0),
             seconds = fmt(proc.time()[["elapsed"]] - t0, 1),
             stringsAsFactors = FALSE)
}
jp <- rbind(joint_power(3, 1), joint_power(1, 3), joint_power(2, 1))
print(jp)

# (c) stratified -----------------------------------------------------------------
strat_B <- as.integer(Sys.getenv("STRAT_B", "999"))
strat_level <- function() {
  t0 <- proc.time()[["elapsed"]]
  runs <- max(10L, null_runs %/% 4L)
  res <- t(vapply(seq_len(runs), function(r) {
    fit <- nmf_stratified(strat_data(), rank = k, control = ctl)
    tab <- nmf_differential(fit, B = strat_B)$table
    c(tab$p_value[tab$feature == "f1" & tab$stratum == "a"],
      min(tab$p_adjusted))
  }, numeric(2)))
  k1 <- ks(res[, 1])
  data.frame(fit = "stratified, multiplicative", runs = runs, B = strat_B,
             cell_ks_D = fmt(k1$statistic), cell_ks_p = fmt(k1$p.value),
             cell_reject_5pc = fmt(mean(res[, 1] <= 0.05)),
             min_adj_reject_5pc = fmt(mean(res[, 2] < 0.05)),
             seconds = fmt(proc.time()[["elapsed"]] - t0, 1),
             stringsAsFactors = FALSE)
}
strat_power <- function(effect) {
  t0 <- proc.time()[["elapsed"]]
  res <- t(vapply(seq_len(power_runs), function(r) {
    fit <- nmf_stratified(strat_data(effect), rank = k, control = ctl)
    tab <- nmf_differential(fit, B = strat_B)$table
    f <- feature_index(tab)
    planted <- tab$stratum == "b" & f %in% planted_features
    mirror <- tab$stratum != "b" & f %in% planted_features
    hit <- tab$p_adjusted < 0.05
    c(found = mean(hit[planted]),
      fdp = if (any(hit & !mirror)) mean(!planted[hit & !mirror]) else 0,
      fd_unplanted = sum(hit & !(f %in% planted_features)),
      mirror = sum(hit & mirror))
  }, numeric(4)))
  data.frame(fit = "stratified, multiplicative",
             effect = sprintf("+%s", effect), runs = power_runs,
             B = strat_B, planted_found = fmt(mean(res[, 1])),
             mean_fdp = fmt(mean(res[, 2])),
             fd_unplanted_features = fmt(mean(res[, 3]), 1),
             other_strata_at_planted = fmt(mean(res[, 4]), 1),
             seconds = fmt(proc.time()[["elapsed"]] - t0, 1),
             stringsAsFactors = FALSE)
}
# STRAT=0 skips the stratified part (its refits dominate the run time)
run_strat <- Sys.getenv("STRAT", "1") != "0"
sl <- if (run_strat) strat_level() else data.frame(skipped = "STRAT=0")
print(sl)
sp <- if (run_strat) do.call(rbind, lapply(c(2, 4), strat_power)) else
  data.frame(skipped = "STRAT=0")
print(sp)

total <- proc.time()[["elapsed"]] - t_start
lines <- c(
  "# Differential tests: calibration (bench/differential-calibration.R)",
  "",
  sprintf(paste("Run: started %s UTC, Debian, R %s, nmfkit %s, 1 thread,",
                "sequential plan."),
          started, getRversion(), utils::packageVersion("nmfkit")),
  "",
  sprintf("Load before the run: %s", trimws(uptime)),
  "(2 cores shared with other workers' builds and tests.)",
  "",
  sprintf("Total run time: %.0f s.", total),
  "",
  "Problems: 150 features in three blocks of 50, rank 3, Poisson noise;",
  "joint: two sets of 60 columns; stratified: four strata of 20 columns",
  "over a background of 1.",
  "",
  sprintf("## (a) Joint: level under the null (%d data sets, default B)",
          null_runs),
  "",
  "`cell`: the p-value of one fixed cell per data set (feature 1 in the",
  "component carrying its block), KS test against the uniform;",
  "`all_cells`: all cells with weight, pooled; `min_adj`: the smallest",
  "BH-adjusted p-value of a data set (\"some feature differs\");",
  "`components`: the components' p-bar test.",
  "",
  table_md(jl),
  "",
  sprintf("## (b) Joint: FDP and power (%d data sets per row, BH 5 %%)",
          power_runs),
  "",
  "`features_x`: in set 2 a tenth of block 1's features (5 of 50) weigh",
  "this many times as much; `usage_x`: set 2 uses component 1 this many",
  "times as much. Planted cells: those 5 features in the component",
  "carrying block 1. `false_per_set`: discoveries outside them per data",
  "set (`of_which_same_comp`: in that component); `null_cells_ks_D`: KS",
  "distance of the p-values of all unplanted cells with weight from the",
  "uniform; `component_found`: the components' test finds component 1.",
  "",
  table_md(jp),
  "",
  "## (c) Stratified (refits per permutation)",
  "",
  table_md(sl),
  "",
  "Stratified: stratum b has an extra shift `effect` on 15 features;",
  "planted cells are those 15 features in stratum b. `mean_fdp` counts",
  "discoveries outside the planted cells, leaving out the other strata at",
  "the planted features (the centred shift moves them by -effect/4; their",
  "discoveries are listed as `other_strata_at_planted`).",
  "",
  table_md(sp)
)
writeLines(lines, out)
cat(sprintf("total %.0f s\n", total))
