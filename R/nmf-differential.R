#' Feature-level differential tests for joint and stratified fits
#'
#' Asks, feature by feature, where two data sets (a [nmf_joint()] fit) or
#' the strata of a [nmf_stratified()] fit differ, with a permutation test
#' for every feature and component (or stratum) and the Benjamini-Hochberg
#' adjustment over all of them.
#'
#' **Joint fits.** Component `i` is used more by the first set when its
#' p-bar `p_i` is positive (Friedman et al., 2023). Feature `f`'s share of
#' that difference is
#' \deqn{d_{fi} = p_i W_{fi} / \sum_{f'} W_{f'i},}{d_fi = p_i W[f, i] / sum(W[, i]),}
#' so `d` sums over features to `p` and `sum(abs(d))` is the dataset
#' distance. The null hypothesis is that the columns of the two sets are
#' exchangeable: the set labels of the pooled columns are permuted (set
#' sizes kept) and the joint NMF is refitted, warm-started from the fit
#' (`W`, and `H` with its columns following their columns), with the fit's
#' rank, `normalize`, `pbar` and control.
#'
#' Normalisation depends on the labels only through the per-set threshold
#' (a column below 5% of its set's average norm becomes zero). With
#' `x = list(x1, x2)`, the raw sets, every permuted pair is normalised
#' afresh, exactly as [nmf_joint()] would. Without `x` the fit's kept data
#' are used: the pooled, already normalised columns. Normalising those again
#' changes nothing (unit columns stay, zero columns stay zero), so the
#' columns that the observed sets' thresholds zeroed stay zero in every
#' permutation; this differs from the exact procedure only when a column's
#' norm is near 5% of a set's average.
#'
#' Because the pooled columns do not change under a permutation, the
#' refitted basis is (up to the refit's few further iterations) the fit's,
#' and the null of `d_fi` is essentially that of `p_i` times the feature's
#' weight: the p-values of the features of one component are nearly equal,
#' those with `W[f, i] = 0` are 1. The test says which components differ and
#' carries the difference to the features that make them; the statistic
#' ranks the features within a component. A feature with a small weight in
#' a component that differs is flagged with the component's main features
#' (on planted data, `bench/README.md`, these made about half of the
#' discoveries at a threefold difference): read the statistic for the size
#' of a feature's share.
#'
#' With `normalize = TRUE` the sets are compared as unit-norm columns: a
#' component that gains mass in one set makes the other components
#' relatively smaller in that set, and they differ too (a real difference
#' of the normalised data). Fit with `normalize = FALSE` to compare raw
#' amounts.
#'
#' **Stratified fits.** The shifts `V` (features x strata) are identifiable
#' only up to a part common to all strata: a constant shift of a feature can
#' move between `V` and `W H` (see the specification of [nmf_stratified()]).
#' The statistic is therefore the stratum-specific part, the centred shift
#' \deqn{T_{fs} = V_{fs} - \frac{1}{S}\sum_{s'} V_{fs'}.}{T_fs = V[f, s] - mean(V[f, ]).}
#' The null hypothesis is that the strata are exchangeable: the stratum
#' labels of the columns are permuted (stratum sizes kept) and the fit is
#' refitted, warm-started from `W` and `H` (each column keeps its
#' coefficients) and with every stratum's shift started at the feature's
#' mean shift `rowMeans(V)`, with the fit's rank, updates and control. A
#' shift planted in one stratum also shows, with the opposite sign and
#' `1/S` of its size, in the centred shifts of the other strata at the same
#' features: read the sign of the statistic.
#'
#' **p-values.** Two-sided, `(1 + #{|T*| >= |T| - 1e-12}) / (B + 1)` over
#' the `B` permutations, with `T` the statistic of the fit itself and `T*`
#' those of the refits (which start from it and converge within a few
#' iterations); then adjusted by Benjamini-Hochberg ([stats::p.adjust()],
#' `"BH"`) over all features and components (or strata). The smallest
#' p-value is `1 / (B + 1)` and BH needs p-values below `alpha` times the
#' share of true differences among the tests: with hundreds of tests and a
#' few differences, use `B` of several hundred.
#'
#' The refits go through [future.apply::future_lapply()] with
#' `future.seed = TRUE` and report progress through `progressr`: the result
#' is the same under any [future::plan()] and any number of threads, and
#' [set.seed()] reproduces it.
#'
#' @param fit A fit from [nmf_joint()] or [nmf_stratified()].
#' @param B Number of permutations, a whole number, at least 1.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @param x The data, when the fit does not keep them (`keep_data = FALSE`)
#'   or, for a joint fit, to renormalise every permuted pair exactly:
#'   `list(x1, x2)`, the two raw sets. For a stratified fit the data as
#'   [nmf_stratified()] took them (a list of strata, or the matrix).
#' @return An object of class `nmfkit_differential`, a list with `table`
#'   (a data frame: `feature`, `component` (joint) or `stratum`
#'   (stratified), `statistic`, `p_value`, `p_adjusted`; features named by
#'   the fit's row names, else `f1`, `f2`, ...), `B`, `type` (`"joint"` or
#'   `"stratified"`), `fit`, `null` (the mean and standard deviation of the
#'   permuted statistics, matrices like the statistic) and `call`.
#' @references Friedman, H., Maina-Kilaas, A., Schalkwyk, J., Ahmed, H. and
#'   Haddock, J. (2023). Joint nonnegative matrix factorization for
#'   identifying and visualizing dataset differences. CISS 2023,
#'   arXiv:2207.05112.
#'
#'   Chapman, J., Yaniv, Y. and Needell, D. (2023). Stratified-NMF for
#'   heterogeneous data. 57th Asilomar Conference on Signals, Systems, and
#'   Computers. \doi{10.48550/arXiv.2311.10789}
#' @seealso [nmf_joint_test()] for one test of the whole data sets,
#'   [print.nmfkit_differential()] for the methods of the result.
#' @examples
#' # two sets over three blocks of 10 features; set 2 uses the first
#' # block's component three times as much
#' set.seed(1)
#' W <- matrix(0, 30, 3)
#' W[cbind(1:30, rep(1:3, each = 10))] <- 1
#' h1 <- matrix(runif(90), 3)
#' h2 <- matrix(runif(90), 3) * c(3, 1, 1)
#' x1 <- matrix(rpois(900, 5 * W %*% h1), 30)
#' x2 <- matrix(rpois(900, 5 * W %*% h2), 30)
#' fit <- nmf_joint(x1, x2, rank = 3, normalize = FALSE)
#' dt <- nmf_differential(fit, B = 199)
#' dt
#' summary(dt)
#'
#' # three strata; the third adds a shift of its own to features 1 to 4
#' s <- lapply(1:3, function(i) {
#'   W[1:12, 1:2] %*% matrix(runif(2 * 20), 2, 20) + 1 +
#'     2 * (i == 3) * (1:12 <= 4) + matrix(runif(240, 0, 0.5), 12)
#' })
#' sfit <- nmf_stratified(setNames(s, c("a", "b", "c")), rank = 2,
#'                        control = nmf_control(update = "hals"))
#' sdt <- nmf_differential(sfit, B = 199)
#' summary(sdt)
#' plot(sdt)
#' @export
nmf_differential <- function(fit, B = 199, ..., x = NULL) {
  if (missing(fit)) {
    abort_nmfkit(c("{.arg fit} is missing: give a fit from {.fn nmf_joint} or {.fn nmf_stratified}."),
                 "missing")
  }
  UseMethod("nmf_differential")
}

#' @rdname nmf_differential
#' @export
nmf_differential.default <- function(fit, B = 199, ..., x = NULL) {
  cls <- class(fit)
  found <- if (is.object(fit)) "{.arg fit} has class {.cls {cls}}."
           else "{.arg fit} is {.obj_type_friendly {fit}}."
  abort_nmfkit(c("{.fn nmf_differential} needs a fit from {.fn nmf_joint} or {.fn nmf_stratified}.",
                 "x" = found,
                 "i" = "Supported classes: {.cls nmfkit_joint}, {.cls nmfkit_stratified}."),
               "type", value = fit)
}

#' @rdname nmf_differential
#' @export
nmf_differential.nmfkit_joint <- function(fit, B = 199, ..., x = NULL) {
  call <- sys.call()
  check_dots_empty()
  B <- check_count(B, min = 1)
  pooled <- differential_joint_data(fit, x)
  n1 <- sum(fit$set == levels(fit$set)[1])
  settings <- pair_settings(rank = fit$rank, pbar = fit$pbar,
                            samples = fit$samples,
                            normalize = fit$normalize, init = NULL,
                            control = fit$control)
  observed <- joint_contributions(fit$W, fit$p)
  perm <- permutation_counts(B, observed, joint_replicate, pooled = pooled,
                             n1 = n1, W = unname(fit$W), H = unname(fit$H),
                             settings = settings)
  new_differential(observed, perm, B, "joint", "component", fit, call)
}

#' @rdname nmf_differential
#' @export
nmf_differential.nmfkit_stratified <- function(fit, B = 199, ...,
                                               x = NULL) {
  call <- sys.call()
  check_dots_empty()
  B <- check_count(B, min = 1)
  data <- differential_data(fit, x)
  V <- unname(fit$V)
  start_v <- matrix(rowMeans(V), nrow(V), ncol(V))
  settings <- list(rank = fit$rank, update_order = fit$update_order,
                   v_updates = fit$v_updates, control = fit$control,
                   start = list(W = unname(fit$W), H = unname(fit$H),
                                V = start_v))
  observed <- centred_shifts(fit$V)
  perm <- permutation_counts(B, observed, stratified_replicate, x = data,
                             strata = fit$strata, settings = settings)
  new_differential(observed, perm, B, "stratified", "stratum", fit, call)
}

# The statistics ------------------------------------------------------------

# d = p_i W[f, i] / sum_f W[f, i]: feature f's share of component i's
# p-bar (zero for a component with an all-zero basis vector).
joint_contributions <- function(W, p) {
  tot <- colSums(W)
  share <- sweep(W, 2L, ifelse(tot > 0, tot, 1), "/")
  sweep(share, 2L, p, "*")
}

# V[f, s] - mean_s' V[f, s']: the part of each stratum's shift that the
# model identifies (a shift common to all strata can move into W H).
centred_shifts <- function(V) V - rowMeans(V)

# The permutations ------------------------------------------------------------

# Runs the B permutation replicates `replicate(b, ...)` (each returns the
# permuted statistic, a matrix like `observed`) through future.apply with
# future.seed = TRUE, in batches whose size depends on the problem only (so
# any plan gives the same streams), keeping per entry the exceedance count
# and the running sum and sum of squares instead of all B matrices.
permutation_counts <- function(B, observed, replicate, ...) {
  size <- max(1L, min(B, floor(1e7 / length(observed))))
  starts <- seq(1L, B, by = size)
  a <- abs(observed) - 1e-12
  count <- sum1 <- sum2 <- array(0, dim(observed))
  seed_session()
  prog <- progressr::progressor(steps = B)
  for (s in starts) {
    idx <- seq.int(s, min(B, s + size - 1L))
    res <- future.apply::future_lapply(idx, replicate, ..., prog = prog,
                                       future.seed = TRUE)
    for (r in res) {
      count <- count + (abs(r) >= a)
      sum1 <- sum1 + r
      sum2 <- sum2 + r^2
    }
  }
  mean <- sum1 / B
  sd <- if (B > 1L) sqrt(pmax(sum2 - B * mean^2, 0) / (B - 1L))
        else array(NA_real_, dim(observed))
  list(count = count, mean = mean, sd = sd)
}

# One permutation of the joint fit: the pooled columns split at random into
# sets of the fit's sizes, refitted from the fit's W and H (columns
# following their columns). Top level, so futures carry only what it needs.
joint_replicate <- function(b, pooled, n1, W, H, settings, prog = NULL) {
  s <- settings
  perm <- sample.int(ncol(pooled))
  first <- perm[seq_len(n1)]
  second <- perm[-seq_len(n1)]
  refit <- jnmf_fit(pooled[, first, drop = FALSE],
                    pooled[, second, drop = FALSE], s$rank, s$pbar,
                    s$samples, s$normalize,
                    list(W = W, H = H[, c(first, second), drop = FALSE]),
                    s$control)
  if (is.function(prog)) prog()
  joint_contributions(refit$W, refit$p)
}

# One permutation of the stratified fit: the stratum labels permuted over
# the columns (sizes kept), refitted from W, H and the mean shifts.
stratified_replicate <- function(b, x, strata, settings, prog = NULL) {
  s <- settings
  g <- strata[sample.int(length(strata))]
  spec <- list(strata = g, group = as.integer(g) - 1L,
               update_order = s$update_order, v_updates = s$v_updates)
  refit <- run_pipeline(variant_of("stratified"), x, s$rank, s$start,
                        s$control, spec = spec)
  if (is.function(prog)) prog()
  centred_shifts(refit$V)
}

# The data -------------------------------------------------------------------

# The pooled columns a joint fit's permutations split: the raw sets from
# `x = list(x1, x2)`, else the fit's kept (normalised) data.
differential_joint_data <- function(fit, x, call = rlang::caller_env()) {
  if (is.null(x)) return(differential_data(fit, NULL, call))
  sizes <- as.integer(table(fit$set))
  if (!is.list(x) || is.data.frame(x) || length(x) != 2L) {
    abort_nmfkit(c("{.arg x} must be {.code list(x1, x2)}, the two data sets of the fit.",
                   "x" = "It is {.obj_type_friendly {x}}{if (is.list(x) && !is.data.frame(x)) paste0(' of length ', length(x))}."),
                 "data", call = call, value = x)
  }
  x1 <- check_data(x[[1]], arg = "x[[1]]", call = call)
  x2 <- check_data(x[[2]], arg = "x[[2]]", call = call)
  m <- nrow(fit$W)
  if (nrow(x1) != m || nrow(x2) != m || ncol(x1) != sizes[1] ||
      ncol(x2) != sizes[2]) {
    abort_nmfkit(c("{.arg x} must hold the data of the fit: {m} x {sizes[1]} and {m} x {sizes[2]}.",
                   "x" = "They are {nrow(x1)} x {ncol(x1)} and {nrow(x2)} x {ncol(x2)}."),
                 "dimension", call = call)
  }
  pool_columns(x1, x2)
}

# The data a stratified (or joint, normalised) fit was fitted to: kept, or
# given as `x` (model_data() checks them and says what to do without).
differential_data <- function(fit, x, call = rlang::caller_env()) {
  if (is.null(x) && is.null(fit$data)) {
    abort_nmfkit(c("This fit does not keep its data, which the permutations refit.",
                   "i" = "Pass the data as {.arg x}, or fit with {.code keep_data = TRUE}."),
                 "data", call = call)
  }
  model_data(fit, x, arg = "x", call = call)
}

# The result -----------------------------------------------------------------

new_differential <- function(observed, perm, B, type, by, fit, call) {
  features <- rownames(fit$W)
  if (is.null(features)) features <- paste0("f", seq_len(nrow(observed)))
  levels <- if (type == "joint") colnames(fit$W) else levels(fit$strata)
  dimnames(observed) <- list(features, levels)
  p <- (1 + perm$count) / (B + 1)
  table <- data.frame(
    feature = rep(features, ncol(observed)),
    by = factor(rep(levels, each = nrow(observed)), levels = levels),
    statistic = as.vector(observed), p_value = as.vector(p),
    p_adjusted = stats::p.adjust(as.vector(p), "BH"),
    stringsAsFactors = FALSE
  )
  names(table)[2] <- by
  null <- lapply(perm[c("mean", "sd")], function(m) {
    dimnames(m) <- dimnames(observed)
    m
  })
  structure(list(table = table, B = B, type = type, fit = fit, null = null,
                 call = call),
            class = "nmfkit_differential")
}

# Methods ---------------------------------------------------------------------

#' Inspect feature-level differential tests
#'
#' Methods for the result of [nmf_differential()]. `print()` shows a short
#' header and the rows with the smallest p-values; `summary()` returns a
#' `summary.nmfkit_differential` object: the number of tests and of
#' discoveries at Benjamini-Hochberg level `alpha` (overall and per
#' component or stratum) and the discoveries, ordered by p-value; `tidy()`
#' gives the table (one row per feature and component or stratum, a plain
#' data frame); `plot()` draws a volcano plot: the statistic against
#' `-log10(p_value)`, the discoveries at `alpha` in colour (by the sign of
#' the statistic), the `top` of them labelled with their feature and
#' component or stratum.
#'
#' @param x,object An `nmfkit_differential` object (for `print()` also its
#'   summary).
#' @param n Number of rows to print.
#' @param alpha Level of the Benjamini-Hochberg adjusted p-values at which a
#'   test is a discovery, in `(0, 1)`.
#' @param top Number of discoveries to label, at least 0.
#' @param ... Unused; an argument given here is an error (a misspelling);
#'   `plot()` passes them to [graphics::plot()].
#' @return `print()` and `plot()` return `x` invisibly; `summary()` a list
#'   of class `summary.nmfkit_differential` (`type`, `B`, `alpha`, `tests`,
#'   `discoveries`, `by` (a data frame of counts per component or
#'   stratum) and `table` (the discoveries)); `tidy()` a data frame.
#' @examples
#' set.seed(1)
#' W <- matrix(runif(12 * 2), 12, 2)
#' s <- lapply(1:2, function(i) W %*% matrix(runif(2 * 15), 2, 15) +
#'   (i == 2) * (1:12 <= 3))
#' sfit <- nmf_stratified(setNames(s, c("a", "b")), rank = 2,
#'                        control = nmf_control(update = "hals",
#'                                              max_iter = 50))
#' dt <- nmf_differential(sfit, B = 19)
#' print(dt, n = 3)
#' summary(dt, alpha = 0.1)
#' head(tidy(dt))
#' plot(dt, top = 3)
#' @name print.nmfkit_differential
NULL

#' @rdname print.nmfkit_differential
#' @export
print.nmfkit_differential <- function(x, n = 6L, ...) {
  check_dots_empty()
  n <- check_count(n, min = 0)
  tab <- x$table
  by <- names(tab)[2]
  cat(sprintf("Feature-level differential test (%s NMF, %d permutation%s)\n",
              x$type, x$B, if (x$B == 1L) "" else "s"))
  cat(sprintf("%d tests (%d features x %d %s); %d with BH-adjusted p < 0.05\n",
              nrow(tab), length(unique(tab$feature)), nlevels(tab[[2]]),
              if (by == "component") "components" else "strata",
              sum(tab$p_adjusted < 0.05)))
  if (n > 0L) {
    top <- tab[order(tab$p_value, -abs(tab$statistic)), , drop = FALSE]
    top <- utils::head(top, n)
    top$statistic <- signif(top$statistic, 3)
    top$p_value <- signif(top$p_value, 3)
    top$p_adjusted <- signif(top$p_adjusted, 3)
    print(top, row.names = FALSE)
  }
  invisible(x)
}

#' @rdname print.nmfkit_differential
#' @export
summary.nmfkit_differential <- function(object, alpha = 0.05, ...) {
  check_dots_empty()
  alpha <- check_level(alpha)
  tab <- object$table
  hit <- tab$p_adjusted < alpha
  by <- names(tab)[2]
  counts <- data.frame(
    by = levels(tab[[2]]),
    tests = as.integer(table(tab[[2]])),
    discoveries = as.integer(tapply(hit, tab[[2]], sum)),
    up = as.integer(tapply(hit & tab$statistic > 0, tab[[2]], sum)),
    down = as.integer(tapply(hit & tab$statistic < 0, tab[[2]], sum)),
    stringsAsFactors = FALSE
  )
  names(counts)[1] <- by
  found <- tab[hit, , drop = FALSE]
  found <- found[order(found$p_value, -abs(found$statistic)), , drop = FALSE]
  rownames(found) <- NULL
  structure(list(type = object$type, B = object$B, alpha = alpha,
                 tests = nrow(tab), discoveries = sum(hit), by = counts,
                 table = found),
            class = "summary.nmfkit_differential")
}

#' @rdname print.nmfkit_differential
#' @export
print.summary.nmfkit_differential <- function(x, n = 10L, ...) {
  check_dots_empty()
  n <- check_count(n, min = 0)
  cat(sprintf("Feature-level differential test (%s NMF, %d permutation%s)\n",
              x$type, x$B, if (x$B == 1L) "" else "s"))
  cat(sprintf("%d of %d tests with BH-adjusted p < %s\n", x$discoveries,
              x$tests, format(x$alpha)))
  print(x$by, row.names = FALSE)
  if (n > 0L && nrow(x$table)) {
    cat("Discoveries:\n")
    top <- utils::head(x$table, n)
    num <- vapply(top, is.numeric, logical(1))
    top[num] <- lapply(top[num], signif, digits = 3)
    print(top, row.names = FALSE)
    if (nrow(x$table) > n) cat(sprintf("... %d more\n", nrow(x$table) - n))
  }
  invisible(x)
}

#' @rdname print.nmfkit_differential
#' @method tidy nmfkit_differential
#' @export
tidy.nmfkit_differential <- function(x, ...) {
  check_dots_empty()
  out <- x$table
  rownames(out) <- NULL
  out
}

#' @rdname print.nmfkit_differential
#' @export
plot.nmfkit_differential <- function(x, alpha = 0.05, top = 10L, ...) {
  alpha <- check_level(alpha)
  top <- check_count(top, min = 0)
  tab <- x$table
  y <- -log10(tab$p_value)
  hit <- tab$p_adjusted < alpha
  col <- ifelse(!hit, "grey60",
                ifelse(tab$statistic >= 0, "#D55E00", "#0072B2"))
  by <- names(tab)[2]
  what <- if (x$type == "joint") "share of p-bar d" else "centred shift T"
  graphics::plot(tab$statistic, y, col = col, pch = ifelse(hit, 19, 1),
                 cex = 0.8, xlab = sprintf("statistic (%s)", what),
                 ylab = "-log10(p-value)",
                 main = sprintf("Differential features (%s, BH %s)", x$type,
                                format(alpha)),
                 ylim = c(0, log10(x$B + 1) * 1.3), ...)
  graphics::abline(v = 0, col = "grey80")
  if (any(hit)) {
    # the least significant discovery's p-value: where BH draws the line
    graphics::abline(h = -log10(max(tab$p_value[hit])), lty = 2,
                     col = "grey40")
  }
  lab <- which(hit)
  lab <- utils::head(lab[order(tab$p_value[lab], -abs(tab$statistic[lab]))],
                     top)
  if (length(lab)) {
    # permutation p-values tie at 1 / (B + 1): labels slanted upwards stay
    # apart where the points share a height
    graphics::text(tab$statistic[lab], y[lab] + 0.02 * log10(x$B + 1),
                   paste(tab$feature[lab], tab[[by]][lab], sep = ":"),
                   srt = 60, adj = c(0, 0.5), cex = 0.65, xpd = TRUE)
  }
  invisible(x)
}

