#' How sure is this fit? Bootstrap replicates of an NMF
#'
#' Refits an [nmf()] fit `B` times on resampled data, each replicate started
#' from the fit itself, and reports how stable each component is and
#' percentile intervals for every entry of the basis `W` (and, for
#' `type = "parametric"`, of the coefficients `H`).
#'
#' **Replicates.** `type = "columns"` draws `ncol(x)` columns (samples) of
#' the data with replacement and refits; the start is `W` and the columns of
#' `H` that were drawn. A column drawn `c` times weighs `c` in the loss;
#' under a loss homogeneous of degree `beta > 0` (Frobenius: 2, KL: 1) that
#' is the column once scaled by `c^(1 / beta)`, so the replicate fits the
#' distinct columns only (about 63 % of them: the same optimum at less
#' cost), unless the fit is penalised or read in blocks. `type = "parametric"` draws new data from the fitted
#' model `W H` and refits all columns from `W`, `H`: Poisson counts with mean
#' `W H` for a fit under `loss = "kl"`, and for a Frobenius fit
#' `max(W H + e, 0)` with `e` Gaussian, mean 0, standard deviation the
#' residuals' `sqrt(RSS / (m n - k (m + n - k)))` (the degrees of freedom of
#' a rank-`k` fit). Every replicate uses the fit's method, loss, penalty,
#' fixed components and control settings (or `control`).
#'
#' **Alignment.** NMF components come in no particular order and with a free
#' scale. Each replicate's components are matched one to one to the fit's by
#' the Hungarian algorithm on the cosine similarity of `W`'s columns
#' ([match_components()]), and each matched column of `W` is scaled to the
#' fit's column sum (its row of `H` by the inverse, so `W H` is unchanged).
#' A component's **stability** is its mean matched cosine over replicates,
#' and it is **recovered** in a replicate whose matched cosine is at least
#' `min_cosine`.
#'
#' **Intervals** are per-entry percentile intervals of the aligned
#' replicates: the `(1 - level) / 2` and `(1 + level) / 2` quantiles (type 7
#' of [stats::quantile()]), widened to hold the fit's own value where they
#' miss it (an entry at 0 whose replicates all lie above it, or a skewed
#' spread); `widened` gives the share of entries that needed it. `summary()`, `tidy()` and `plot()` take a
#' `level` of their own, recomputed from the stored replicates. On planted
#' data their coverage is reported in `bench/README.md` ("Inference").
#'
#' **Reproducibility.** Replicates run through
#' [future.apply::future_lapply()] with `future.seed = TRUE`: every
#' replicate's random draws come from its own stream of R's RNG, so
#' `set.seed()` gives the same result under every [future::plan()] and for
#' any `threads` setting. Progress is reported through `progressr`.
#'
#' @param fit A fit of [nmf()] (any loss; not a fit with missing entries,
#'   masks or weights). A fit of a `DelayedMatrix` (read in blocks) has
#'   column replicates, each a delayed column subset fitted in blocks; its
#'   parametric draws would be dense m x n matrices and are refused.
#' @param B Number of replicates, at least 2.
#' @param ... Unused; an argument given here is an error (a misspelling).
#'   The arguments after it are named (as in [nmf_differential()]); by
#'   position they are deprecated.
#' @param type `"columns"` (resample samples) or `"parametric"` (draw data
#'   from the fitted model).
#' @param level Confidence level of the intervals, in `(0, 1)`.
#' @param x The data of the fit, when it was fitted with
#'   `keep_data = FALSE` (a Poisson parametric bootstrap needs none).
#' @param control Settings of the refits, from [nmf_control()]; by default
#'   the fit's own with at most 50 iterations and `tol = 0.05`. A replicate
#'   starts at the fit, an optimum of data close to its own: its first
#'   violation measures how far the resampling moved the optimum, and
#'   stopping at `tol` times it leaves the replicate about that share of its
#'   move short (measured on planted counts: 0.1 left 10 %, 0.03 4.5 %), so
#'   the intervals are a little narrow: on planted data they cover about 1
#'   point less than replicates run 50 iterations (`bench/calibration.md`;
#'   `tol = 0.02` about 0.5 point, in 2.5 times the iterations). A
#'   `control` given here is used as [nmf()] uses it (`tol` relative to the
#'   replicate's first violation, or to `tol_reference`).
#' @param min_cosine Matched cosine similarity from which a component
#'   counts as recovered in a replicate, in `(0, 1]`.
#' @return An object of class `nmfkit_bootstrap`: a list with
#'   * `fit`: the reference fit;
#'   * `type`, `B`, `level`, `min_cosine`;
#'   * `stability`: a data frame with one row per component: `component`,
#'     `cosine` (mean matched cosine), `recovered` (fraction of replicates),
#'     `cosine_low` (its 5 % quantile);
#'   * `cosine`: the `B x k` matched cosines; `permutation`: the `B x k`
#'     matches (column `i` holds each replicate's component matched to the
#'     fit's component `i`);
#'   * `W`: the aligned replicates of `W`, an `m x k x B` array, and
#'     `W_lower`, `W_upper`: the intervals at `level`;
#'   * for `"parametric"`, `H`, `H_lower`, `H_upper` likewise (`k x n x B`);
#'   * `widened`: the share of entries of `W` (and `H`) whose percentile
#'     interval was widened to hold the estimate;
#'   * `iterations`, `status`: of each replicate; `call`.
#' @seealso [predict.nmfkit_bootstrap()] for intervals of the coefficients
#'   of new samples; [match_components()].
#' @examples
#' set.seed(1)
#' W0 <- matrix(rexp(40 * 3), 40, 3)
#' H0 <- matrix(rexp(3 * 60), 3, 60)
#' x <- matrix(rpois(40 * 60, W0 %*% H0 * 5), 40, 60)
#' fit <- nmf(x, 3, loss = "kl")
#' boot <- nmf_bootstrap(fit, B = 20, type = "parametric")
#' boot
#' head(tidy(boot))
#' plot(boot, top = 5)
#' @export
nmf_bootstrap <- function(fit, B = 100L, ...,
                          type = c("columns", "parametric"), level = 0.9,
                          x = NULL, control = NULL, min_cosine = 0.9) {
  moved <- old_positions(c("fit", "B", "type", "level", "x", "control",
                           "min_cosine"), 2L, "nmf_bootstrap")
  if (!is.null(moved)) return(eval(moved, parent.frame()))
  check_dots_empty()
  call <- match.call()
  check_required("fit")
  if (!inherits(fit, "nmfkit_nmf")) {
    abort_nmfkit(c("{.arg fit} must be a fit of {.fn nmf}.",
                   "x" = "It is {.obj_type_friendly {fit}}{if (inherits(fit, 'nmfkit')) paste0(' (', class(fit)[1], ')')}.",
                   "i" = if (inherits(fit, c("nmfkit_joint", "nmfkit_stratified"))) "For differences between data sets or strata see {.fn nmf_differential}."),
                 "type", value = fit)
  }
  B <- check_count(B, min = 2)
  type <- check_choice(type)
  level <- check_level(level)
  min_cosine <- check_number(min_cosine, min = 0, max = 1, strict = TRUE)
  control <- bootstrap_control(fit, control)
  if (!is.null(fit$entry_weights)) {
    abort_nmfkit(c("{.fn nmf_bootstrap} refits complete data: {.arg fit} was fitted with missing entries, a mask or weights.",
                   "i" = "Fit the data without them, or impute the missing entries first."),
                 "bootstrap")
  }
  loss <- fit_loss(fit)
  if (type == "parametric" && is.null(loss$draw)) {
    abort_nmfkit(c("{.code type = \"parametric\"} draws data for Frobenius (Gaussian) and KL (Poisson) fits.",
                   "x" = "{.arg fit} has the {loss$label} loss.",
                   "i" = "Use {.code type = \"columns\"}."),
                 "bootstrap")
  }
  data <- bootstrap_data(fit, x, type, loss)
  if (!identical(fit$status, "converged")) {
    warn_nmfkit(c("{.arg fit} did not converge (status {.val {fit$status}}): its replicates start from it and keep moving in the direction its own iterations were going.",
                  "i" = "The intervals then mix that drift with the data's noise: refit with a larger {.code max_iter} first."),
                "convergence")
  }
  setup <- bootstrap_setup(fit, data, type, loss, control)
  prog <- progressr::progressor(steps = B)
  seed_session()
  reps <- future.apply::future_lapply(seq_len(B), function(b) {
    out <- bootstrap_replicate(setup)
    prog()
    out
  }, future.seed = TRUE)
  capped <- vapply(reps, function(r) r$capped, numeric(1))
  warn_capped(capped, call = call)
  out <- align_replicates(fit, reps, type)
  out[c("fit", "type", "B", "level", "min_cosine", "call")] <-
    list(fit, type, B, level, min_cosine, call)
  out$stability <- stability_table(out$cosine, min_cosine)
  out <- bootstrap_intervals(out, level)
  structure(out, class = "nmfkit_bootstrap")
}


# The replicates' settings: the fit's own with at most 50 iterations and
# `tol` = replicate_tol, relative to the replicate's own first violation
# (the gradient the resampling puts at the fit), or `control` as given.
bootstrap_control <- function(fit, control, call = rlang::caller_env()) {
  if (!is.null(control)) return(check_control(control, fn = "nmf", call = call))
  control <- fit$control
  control$max_iter <- min(control$max_iter, 50L)
  control$tol <- replicate_tol
  control$tol_reference <- NULL
  control
}

# A replicate starts at the fit, an optimum of data close to its own: the
# violation of its first iteration measures how far the resampling moved
# the optimum, and one at replicate_tol times that leaves it about that
# share of its move short of its own optimum. Measured on planted KL counts
# (2,000 x 1,000, rank 10; bench/inference-stopping.R, numbers in
# bench/README.md): stopping at 0.3 / 0.1 / 0.03 / 0.01 of the first
# violation left 16 / 10 / 4.5 / 1.9 % of the move (its norm; the median
# entry's 3.2 / 1.4 / 0.46 / 0.16 %) after 3 / 6 / 19 / 49 iterations;
# B = 100 replicates place a 90 % interval's ends to about 6 % of its
# width (Monte Carlo error). The calibration (bench/calibration.md) pays
# for the narrower intervals: on identifiable planted data 0.9-1.5 points
# of coverage at 0.05 and at 0.1, 0.4-0.8 at 0.02, against replicates run
# 50 iterations. Relative to the fit's first violation instead (a
# random start's), the rule depends on the start and on n, and at the
# fit's tol (1e-4) was not reachable in 50 iterations when the fit itself
# had stopped at max_iter.
replicate_tol <- 0.05

# The data the replicates resample: the fit's, or `x`. A Poisson parametric
# bootstrap draws from W H alone and needs none.
bootstrap_data <- function(fit, x, type, loss, call = rlang::caller_env()) {
  if (is.null(x) && is.null(fit$data)) {
    if (type == "parametric" && is.null(loss$setup)) return(NULL)
    abort_nmfkit(c("{.arg fit} does not keep its data, which {.code type = \"{type}\"} {if (type == 'columns') 'resamples' else 'needs for its residuals'}.",
                   "i" = "Pass the data as {.arg x}, or fit with {.code keep_data = TRUE}."),
                 "data", call = call)
  }
  x <- if (is.null(x)) fit$data else model_data(fit, x, call = call)
  if (type == "parametric") {
    # the draws are m x n dense matrices around the model's mean
    need_memory(x, "A parametric draw (an m x n dense matrix around W H)",
                arg = "data", call = call)
  }
  x
}

# Everything a replicate needs, shipped to the futures once: the data (or
# the model's mean), the residual scale, the refit's arguments.
bootstrap_setup <- function(fit, data, type, loss, control) {
  W <- unname(fit$W)
  H <- unname(fit$H)
  mean <- if (type == "parametric") W %*% H
  # what the loss's draw needs besides the mean (Gaussian: the noise's sd)
  state <- if (type == "parametric" && !is.null(loss$setup))
    loss$setup(data, mean, W, H)
  # the parametric draws' storage follows the data's share of nonzeros (as
  # nmf()'s choice of solver does), never their storage
  sparse <- if (is.null(data) || type == "columns") FALSE else
    nonzero_share(data, 0.25) < 0.25
  if (type == "columns") data <- resample_source(data)
  # a column drawn c times weighs c in the loss: under a loss homogeneous
  # of degree beta > 0 that is the column once, scaled by c^(1 / beta)
  # (its coefficients too), so a replicate fits the distinct columns only
  # (about 63 % of them); a penalty (relative to the data's size and
  # scale) and data read in blocks keep the copies
  collapse <- type == "columns" && isTRUE(loss$beta > 0) &&
    !any((fit$penalty %||% 0) > 0) &&
    (is.matrix(data) || inherits(data, "dgCMatrix"))
  list(type = type, draw = loss$draw, W = W, H = H, mean = mean,
       state = state, collapse = collapse, degree = loss$beta,
       x = if (type == "columns") data, sparse = sparse,
       args = list(rank = fit$rank, method = fit$method, control = control,
                   loss = loss$arg,
                   penalty = fit$penalty, keep_data = FALSE),
       fixed = fit$fixed)
}

# One replicate: resample, refit from the fit, return its factors.
bootstrap_replicate <- function(s) {
  n <- ncol(s$H)
  if (s$type == "columns") {
    cols <- sort(sample.int(n, n, replace = TRUE))
  } else {
    cols <- seq_len(n)
    xb <- s$draw(s$mean, s$state)
    if (s$sparse) xb <- dense_as_dgc(xb)
  }
  # the columns fitted: each drawn column once, scaled by its count's
  # power (see bootstrap_setup()), or every copy
  fitted <- cols
  f <- NULL
  if (isTRUE(s$collapse)) {
    fitted <- unique(cols)
    f <- tabulate(cols, n)[fitted]^(1 / s$degree)
  }
  if (s$type == "columns") xb <- scale_columns(s$x[, fitted, drop = FALSE], f)
  init <- list(W = s$W, H = scale_columns(s$H[, fitted, drop = FALSE], f))
  fixed <- NULL
  if (!is.null(s$fixed) && any(s$fixed > 0)) {
    fixed <- list(W = if (s$fixed[1] > 0) s$W[, seq_len(s$fixed[1]), drop = FALSE],
                  H = if (s$fixed[2] > 0) init$H[seq_len(s$fixed[2]), , drop = FALSE])
    fixed <- fixed[!vapply(fixed, is.null, logical(1))]
  }
  # the fit itself warned of its penalty already
  run <- withCallingHandlers(
    quiet_fit(nmf, c(list(xb, init = init, fixed = fixed), s$args), xb,
              s$args$rank),
    nmfkit_warning_penalty = function(w) invokeRestart("muffleWarning")
  )
  model <- run$model
  H <- unname(model$H)
  if (!is.null(f)) {
    at <- match(cols, fitted)
    H <- scale_columns(H[, at, drop = FALSE], 1 / f[at])
  }
  list(W = unname(model$W), H = H, cols = cols,
       iterations = model$iterations, status = model$status,
       capped = run$capped)
}

# x (a matrix or dgCMatrix) with column j multiplied by f[j]; f NULL: x.
scale_columns <- function(x, f) {
  if (is.null(f)) return(x)
  if (inherits(x, "dgCMatrix")) {
    x@x <- x@x * rep(f, diff(x@p))
    return(x)
  }
  x * rep(f, each = nrow(x))
}

# Matches each replicate's components to the fit's (Hungarian on cosine
# similarity of W's columns) and scales each matched column of W to the
# fit's column sum (its row of H by the inverse).
align_replicates <- function(fit, reps, type) {
  W0 <- fit$W
  k <- ncol(W0)
  B <- length(reps)
  ref_sum <- colSums(W0)
  Wa <- array(0, c(nrow(W0), k, B),
              dimnames = list(rownames(W0), colnames(W0), NULL))
  Ha <- if (type == "parametric")
    array(0, c(k, ncol(fit$H), B),
          dimnames = list(colnames(W0), colnames(fit$H), NULL))
  cosine <- perm <- matrix(NA_real_, B, k,
                           dimnames = list(NULL, colnames(W0)))
  for (b in seq_len(B)) {
    r <- reps[[b]]
    cos <- cosine_similarity(W0, r$W)
    p <- assign_max(cos)
    perm[b, ] <- p
    cosine[b, ] <- cos[cbind(seq_len(k), p)]
    Wb <- r$W[, p, drop = FALSE]
    s <- colSums(Wb)
    f <- ifelse(s > 0, ref_sum / s, 1)
    Wa[, , b] <- sweep(Wb, 2, f, "*")
    if (!is.null(Ha)) Ha[, , b] <- r$H[p, , drop = FALSE] / f
  }
  storage.mode(perm) <- "integer"
  list(W = Wa, H = Ha, cosine = cosine, permutation = perm,
       iterations = vapply(reps, function(r) r$iterations, integer(1)),
       status = vapply(reps, function(r) r$status, character(1)))
}

stability_table <- function(cosine, min_cosine) {
  data.frame(component = colnames(cosine),
             cosine = colMeans(cosine),
             recovered = colMeans(cosine >= min_cosine),
             cosine_low = apply(cosine, 2, stats::quantile, probs = 0.05,
                                names = FALSE),
             row.names = NULL, stringsAsFactors = FALSE)
}

# Percentile intervals of the stored replicates at `level`, widened to
# hold the estimate where they miss it; `widened` is the share of entries
# that needed it.
bootstrap_intervals <- function(object, level) {
  probs <- c((1 - level) / 2, (1 + level) / 2)
  widened <- c(W = 0, H = NA)
  for (f in c("W", "H")) {
    if (is.null(object[[f]])) next
    est <- object$fit[[f]]
    q <- replicate_quantiles(object[[f]], probs)
    object[[paste0(f, "_lower")]] <- pmin(q[[1]], est)
    object[[paste0(f, "_upper")]] <- pmax(q[[2]], est)
    widened[[f]] <- mean(q[[1]] > est | q[[2]] < est)
  }
  object$widened <- widened
  object$level <- level
  object
}

# Quantiles (type 7, R's default, or type 6) over the last dimension of an
# array, entry by entry, as matrices shaped like its first two: one sort of
# all entries, not a quantile() call per entry. The positions are
# stats::quantile()'s, its fuzz included.
replicate_quantiles <- function(a, probs, type = 7L) {
  d <- dim(a)
  B <- d[3]
  flat <- matrix(a, d[1] * d[2], B)
  sorted <- matrix(flat[order(row(flat), flat)], nrow(flat), B, byrow = TRUE)
  fuzz <- 4 * .Machine$double.eps
  lapply(probs, function(p) {
    h <- if (type == 7L) 1 + (B - 1) * p else (B + 1) * p
    j <- floor(h + fuzz)
    g <- h - j
    if (abs(g) < fuzz) g <- 0
    lo <- min(max(j, 1), B)
    hi <- min(max(j + 1, 1), B)
    v <- sorted[, lo] + g * (sorted[, hi] - sorted[, lo])
    matrix(v, d[1], d[2], dimnames = dimnames(a)[1:2])
  })
}

#' @rdname nmf_bootstrap
#' @param digits Significant digits to print.
#' @export
print.nmfkit_bootstrap <- function(x, digits = 3L, ...) {
  check_dots_empty()
  digits <- check_count(digits, min = 1, max = 22)
  f <- x$fit
  cat(sprintf("Bootstrap of an NMF (rank %d, %s loss): %d %s replicates\n",
              f$rank, fit_loss(f)$label, x$B,
              x$type))
  cat(sprintf("Percentile intervals at %s %%; a component is recovered at cosine >= %s\n",
              format(100 * x$level), format(x$min_cosine)))
  tab <- x$stability
  tab[-1] <- lapply(tab[-1], signif, digits)
  print(tab, row.names = FALSE)
  invisible(x)
}

#' @rdname nmf_bootstrap
#' @param object An `nmfkit_bootstrap` object.
#' @param top Features per component, the first by `score`.
#' @param score How `summary()` and `plot()` rank the features of each
#'   component: `"specificity"` (the default: the feature's weight in the
#'   component times the share of its weight that the component holds, as
#'   [feature_score()] computes it, so features weighing in every component,
#'   such as the most abundant genes, rank below those of this component)
#'   or `"weight"` (the entries of the fit's `W` column).
#' @export
summary.nmfkit_bootstrap <- function(object, level = object$level, top = 5L,
                                     score = c("specificity", "weight"),
                                     ...) {
  check_dots_empty()
  top <- check_count(top, min = 1)
  score <- check_choice(score)
  b <- if (check_level(level) == object$level) object else
    bootstrap_intervals(object, level)
  w <- tidy(b)
  by <- as.vector(bootstrap_ranking(object$fit$W, score))
  w <- do.call(rbind, lapply(split(seq_len(nrow(w)), w$component),
                             function(r) {
    utils::head(w[r[order(-by[r])], ], top)
  }))
  rownames(w) <- NULL
  structure(list(stability = object$stability, top = w, level = level,
                 score = score, B = object$B, type = object$type,
                 width = stats::median(b$W_upper - b$W_lower)),
            class = "summary.nmfkit_bootstrap")
}

#' @export
print.summary.nmfkit_bootstrap <- function(x, digits = 3L, ...) {
  check_dots_empty()
  digits <- check_count(digits, min = 1, max = 22)
  cat(sprintf("%d %s bootstrap replicates; %s %% percentile intervals\n\n",
              x$B, x$type, format(100 * x$level)))
  cat("Stability of the components:\n")
  tab <- x$stability
  tab[-1] <- lapply(tab[-1], signif, digits)
  print(tab, row.names = FALSE)
  cat(sprintf("\nTop features per component (by %s):\n", x$score))
  top <- x$top
  top[c("estimate", "lower", "upper")] <-
    lapply(top[c("estimate", "lower", "upper")], signif, digits)
  print(top, row.names = FALSE)
  invisible(x)
}

#' @rdname nmf_bootstrap
#' @param matrix `"W"` (per feature and component), `"H"` (per component
#'   and sample; `"parametric"` only) or `"stability"` (per component).
#' @export
tidy.nmfkit_bootstrap <- function(x, matrix = c("W", "H", "stability"),
                                  level = x$level, ...) {
  check_dots_empty()
  matrix <- check_choice(matrix)
  if (matrix == "stability") return(x$stability)
  if (matrix == "H" && is.null(x$H)) {
    abort_nmfkit(c("{.code matrix = \"H\"} needs replicates of {.field H}: a {.code type = \"parametric\"} bootstrap.",
                   "x" = "This bootstrap resampled columns, whose coefficients are not those of the fit's samples."),
                 "choice", value = matrix)
  }
  if (check_level(level) != x$level) x <- bootstrap_intervals(x, level)
  if (matrix == "W") {
    out <- tidy_long(x$fit$W, "feature", "component")
    lo <- x$W_lower
    hi <- x$W_upper
  } else {
    out <- tidy_long(t(x$fit$H), "sample", "component")
    lo <- t(x$H_lower)
    hi <- t(x$H_upper)
  }
  names(out)[3] <- "estimate"
  out$lower <- as.vector(lo)
  out$upper <- as.vector(hi)
  out
}

#' @rdname nmf_bootstrap
#' @details `glance()` gives one row: `type`, `B`, `level`, `rank`,
#'   `stability` (the mean of the components' mean matched cosines),
#'   `min_stability` (the least stable component's), `recovered` (the mean
#'   share of replicates recovering a component), `width` (the median width
#'   of the intervals of `W`), `widened` and `converged` (the share of
#'   replicates that converged). `augment()` gives the fit's samples as
#'   [augment()][augment.nmfkit()] does (`.cluster`, `.nmf1`, ...) and, for a
#'   parametric bootstrap, the intervals of their coefficients (`.nmf1_lower`,
#'   `.nmf1_upper`, ...).
#' @param data For `augment()`: `NULL`, or a data frame with one row per
#'   sample of the fit.
#' @method glance nmfkit_bootstrap
#' @export
glance.nmfkit_bootstrap <- function(x, ...) {
  check_dots_empty()
  st <- x$stability
  data.frame(type = x$type, B = x$B, level = x$level, rank = x$fit$rank,
             stability = mean(st$cosine), min_stability = min(st$cosine),
             recovered = mean(st$recovered),
             width = stats::median(x$W_upper - x$W_lower),
             widened = unname(x$widened[["W"]]),
             converged = mean(x$status == "converged"),
             stringsAsFactors = FALSE)
}

#' @rdname nmf_bootstrap
#' @method augment nmfkit_bootstrap
#' @export
augment.nmfkit_bootstrap <- function(x, data = NULL, ...) {
  check_dots_empty()
  out <- augment(x$fit, data = data)
  if (!is.null(x$H_lower)) {
    comp <- rownames(x$fit$H)
    for (q in seq_along(comp)) {
      out[[paste0(".", comp[q], "_lower")]] <- unname(x$H_lower[q, ])
      out[[paste0(".", comp[q], "_upper")]] <- unname(x$H_upper[q, ])
    }
  }
  out
}

#' @rdname nmf_bootstrap
#' @param components Components to plot (names or indices); all by default.
#' @export
plot.nmfkit_bootstrap <- function(x, top = 10L, components = NULL,
                                  level = x$level,
                                  score = c("specificity", "weight"), ...) {
  check_graphics_dots()
  top <- check_count(top, min = 1)
  score <- check_choice(score)
  comp <- select_components(x$fit, components)
  if (check_level(level) != x$level) x <- bootstrap_intervals(x, level)
  W <- x$fit$W
  feats <- rownames(W)
  if (is.null(feats)) feats <- paste0("f", seq_len(nrow(W)))
  nc <- ceiling(sqrt(length(comp)))
  old <- graphics::par(mfrow = c(ceiling(length(comp) / nc), nc),
                       mar = c(3, 6, 2.2, 0.8), mgp = c(1.8, 0.5, 0))
  on.exit(graphics::par(old))
  stab <- x$stability
  by <- bootstrap_ranking(W, score)
  for (i in comp) {
    idx <- utils::head(order(-by[, i]), min(top, nrow(W)))
    idx <- rev(idx)
    est <- W[idx, i]
    lo <- x$W_lower[idx, i]
    hi <- x$W_upper[idx, i]
    y <- seq_along(idx)
    draw(graphics::plot, range(0, lo, hi, est),
         range(0.5, length(idx) + 0.5), type = "n", yaxt = "n", ylab = "",
         xlab = sprintf("weight in W (top %d by %s)", length(idx), score),
         main = sprintf("%s: cosine %.2f, recovered %.0f%%", colnames(W)[i],
                        stab$cosine[i], 100 * stab$recovered[i]),
         cex.main = 0.9, font.main = 1, user = list(...))
    graphics::segments(lo, y, hi, y, col = "steelblue", lwd = 2)
    graphics::points(est, y, pch = 19, cex = 0.8)
    graphics::axis(2, at = y, labels = feats[idx], las = 1, cex.axis = 0.7)
  }
  invisible(x)
}

# What ranks the features of each component in summary() and plot().
bootstrap_ranking <- function(W, score) {
  if (score == "weight") W else specificity_score(W)
}

#' Coefficients of new samples with bootstrap intervals
#'
#' Projects `newdata` on the basis of every replicate of an
#' [nmf_bootstrap()] (each aligned to the fit's components and scale) under
#' the fit's loss, and reports percentile intervals of the coefficients and
#' of the proportions: each sample's coefficients weighted by the column
#' sums of `W`, divided by their total, the share of the sample's fitted
#' mass each component explains (signature exposures, cell-type
#' proportions). The point estimates are the fit's own projection; the
#' percentile intervals are widened to hold them where they miss them, as
#' in [nmf_bootstrap()].
#'
#' @param object An `nmfkit_bootstrap` object.
#' @param newdata New samples (features as rows, in the fit's order), as for
#'   [predict.nmfkit()].
#' @param level Confidence level in `(0, 1)`.
#' @param ... Further arguments of the fit's `predict()` method (`tol`,
#'   `max_passes`).
#' @param assay The assay (or Seurat layer) of a container `newdata`.
#' @return An object of class `nmfkit_interval`: a list with `coef`,
#'   `lower`, `upper` (components x samples), `proportion`,
#'   `proportion_lower`, `proportion_upper`, `level` and `B`. `tidy()` gives
#'   the long table.
#' @examples
#' set.seed(1)
#' W0 <- matrix(rexp(40 * 3), 40, 3)
#' x <- matrix(rpois(40 * 60, W0 %*% matrix(rexp(3 * 60), 3) * 5), 40)
#' fit <- nmf(x, 3, loss = "kl")
#' boot <- nmf_bootstrap(fit, B = 20)
#' new <- matrix(rpois(40 * 2, W0 %*% c(5, 0, 2)), 40)
#' predict(boot, new)
#' # the same through the fit
#' predict(fit, new, interval = "bootstrap", bootstrap = boot)
#' @export
predict.nmfkit_bootstrap <- function(object, newdata, level = object$level,
                                     ..., assay = "counts") {
  level <- check_level(level)
  fit <- object$fit
  if (missing(newdata) || is.null(newdata)) {
    abort_nmfkit(c("{.arg newdata} is missing: give the samples to project.",
                   "i" = "The fit's own coefficients have intervals in {.code tidy(object, \"H\")} of a parametric bootstrap."),
                 "missing")
  }
  newdata <- input_matrix(newdata, assay, arg = "newdata")
  est <- stats::predict(fit, newdata, ...)
  B <- object$B
  reps <- array(0, c(dim(est), B))
  props <- reps
  for (b in seq_len(B)) {
    fb <- fit
    fb$W <- object$W[, , b]
    dimnames(fb$W) <- dimnames(fit$W)
    h <- stats::predict(fb, newdata, ...)
    reps[, , b] <- h
    props[, , b] <- coef_proportion(h, fb$W)
  }
  dimnames(reps) <- dimnames(props) <- c(dimnames(est), list(NULL))
  probs <- c((1 - level) / 2, (1 + level) / 2)
  q <- replicate_quantiles(reps, probs)
  qp <- replicate_quantiles(props, probs)
  prop <- coef_proportion(est, fit$W)
  # widened to hold the estimate, as the intervals of W and H
  structure(list(coef = est, lower = pmin(q[[1]], est),
                 upper = pmax(q[[2]], est), proportion = prop,
                 proportion_lower = pmin(qp[[1]], prop),
                 proportion_upper = pmax(qp[[2]], prop),
                 level = level, B = B),
            class = "nmfkit_interval")
}

# Each sample's share of its fitted mass per component: h_i * sum(w_i),
# normalised to sum 1 (0 for a sample fitted by nothing).
coef_proportion <- function(h, W) {
  mass <- h * colSums(W)
  tot <- colSums(mass)
  out <- sweep(mass, 2, ifelse(tot > 0, tot, 1), "/")
  dimnames(out) <- dimnames(h)
  out
}

#' @rdname predict.nmfkit_bootstrap
#' @param x An `nmfkit_interval` object.
#' @param digits Significant digits to print.
#' @export
print.nmfkit_interval <- function(x, digits = 3L, ...) {
  check_dots_empty()
  digits <- check_count(digits, min = 1, max = 22)
  cat(sprintf("Coefficients of %d new sample%s with %s %% bootstrap intervals (%d replicates)\n",
              ncol(x$coef), if (ncol(x$coef) == 1) "" else "s",
              format(100 * x$level), x$B))
  tab <- tidy(x)
  num <- vapply(tab, is.numeric, logical(1))
  tab[num] <- lapply(tab[num], signif, digits)
  print(utils::head(tab, 20), row.names = FALSE)
  if (nrow(tab) > 20) cat(sprintf("# ... %d more rows: tidy() gives them all\n",
                                  nrow(tab) - 20))
  invisible(x)
}

#' @rdname predict.nmfkit_bootstrap
#' @export
tidy.nmfkit_interval <- function(x, ...) {
  check_dots_empty()
  out <- tidy_long(t(x$coef), "sample", "component")
  names(out)[3] <- "estimate"
  out$lower <- as.vector(t(x$lower))
  out$upper <- as.vector(t(x$upper))
  out$proportion <- as.vector(t(x$proportion))
  out$proportion_lower <- as.vector(t(x$proportion_lower))
  out$proportion_upper <- as.vector(t(x$proportion_upper))
  out
}
