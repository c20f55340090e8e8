#' Feature-level differential tests for joint and stratified fits
#'
#' Asks, feature by feature, where two data sets (a [nmf_joint()] fit) or
#' the strata of a [nmf_stratified()] fit differ, with a permutation test
#' for every feature and component (or stratum) and the Benjamini-Hochberg
#' adjustment over all of them.
#'
#' **Joint fits: features.** The question for a feature is whether its
#' loading in a component differs between the sets, beyond how much each
#' set uses the component (the component's p-bar, tested apart, below).
#' With the joint fit's coefficients `H = [S1 S2]` held fixed, each set's
#' own loadings are the least-squares regression of the feature's row of
#' that set's data on that set's coefficients,
#' \eqn{W_s = X_s S_s' (S_s S_s')^{-1}}{W_s = X_s S_s' (S_s S_s')^-1}, with
#' the residual variance of the row giving their standard errors. A
#' component's overall level in a set is not identified apart from its
#' coefficients, so the two sets' loadings of component `i` are put on one
#' scale first: by the median ratio `W_2 / W_1` over the component's main
#' features (its 100 largest pooled weights, or the upper half of its
#' features), which a difference confined to a minority of features does
#' not move. The `estimate` is the aligned difference `W_1 - W_2` as a
#' share of the component's pooled weight `sum(W[, i])`; the `statistic` is
#' that difference divided by its standard error (a t statistic).
#'
#' The null hypothesis is that the columns of the two sets are exchangeable.
#' The joint fit is a fit of the pooled columns, which a relabelling does
#' not change (up to the per-set normalisation threshold, below): it is held
#' fixed, the set labels are permuted (set sizes kept) and the set-specific
#' loadings, their alignment and standard errors are computed afresh, so
#' the basis moves with the labels. The studentised statistic keeps the
#' permutation test valid at a feature whose own loadings do not differ
#' while other features' do (on planted data, `bench/README.md`,
#' "Differential tests").
#'
#' **Joint fits: components.** `components` tests each component's p-bar
#' (Friedman et al., 2023; the closed form, on `H`) against the same
#' permutations: does one set use the component more? A difference of use
#' alone, with the same loadings, is found here and not at the features.
#'
#' With `normalize = TRUE` the sets are compared as unit-norm columns, and
#' a component that gains mass in one set makes the other components
#' relatively smaller there (a real difference of the normalised data).
#' Normalisation depends on the labels only through the per-set threshold
#' (a column below 5% of its set's average norm becomes zero); the
#' permutations use the fit's pooled, normalised columns, so the columns
#' that the observed sets' thresholds zeroed stay zero in every permutation.
#'
#' **Stratified fits.** The shifts `V` (features x strata) are identifiable
#' only up to a part common to all strata: a constant shift of a feature can
#' move between `V` and `W H` (see the specification of [nmf_stratified()]).
#' The statistic (and `estimate`) is therefore the stratum-specific part,
#' the centred shift
#' \deqn{T_{fs} = V_{fs} - \frac{1}{S}\sum_{s'} V_{fs'}.}{T_fs = V[f, s] - mean(V[f, ]).}
#' The null hypothesis is that the strata are exchangeable: the stratum
#' labels of the columns are permuted (stratum sizes kept) and the fit is
#' refitted, warm-started from `W` and `H` (each column keeps its
#' coefficients) and with every stratum's shift started at the feature's
#' mean shift `rowMeans(V)`, with the fit's rank, updates and control. A
#' shift planted in one stratum also shows, with the opposite sign and
#' `1/S` of its size, in the centred shifts of the other strata at the same
#' features: read the sign of the statistic. The refits go through
#' [future.apply::future_lapply()] with `future.seed = TRUE`.
#'
#' **p-values.** Two-sided, by Besag and Clifford's sequential rule: a test
#' stops once `10` permutations have reached `|T*| >= |T|` (less `1e-12`),
#' after `L` permutations, with p-value `10 / L`; a test that never gets
#' there by the last permutation, `B`, has `(1 + #{|T*| >= |T|}) / (B + 1)`.
#' Both are valid p-values. So tests far from significance stop after a few
#' dozen permutations, and only those near or past the threshold use all
#' `B`. The default `B` lets the smallest p-value, `1 / (B + 1)`, pass the
#' Bonferroni threshold `0.05 / tests` (at most 19,999), so that BH at 5 %
#' can make any discovery; `permutations` in the table says how many each
#' test used. The p-values are adjusted by Benjamini-Hochberg
#' ([stats::p.adjust()], `"BH"`) over all features and components (or
#' strata); the components' p-values apart.
#'
#' Permutations are drawn from R's RNG in the session (joint) or in
#' `future.seed` streams (stratified refits) and report progress through
#' `progressr`: the result is the same under any [future::plan()] and any
#' number of threads, and [set.seed()] reproduces it.
#'
#' @param fit A fit from [nmf_joint()] or [nmf_stratified()].
#' @param B Largest number of permutations, a whole number, at least 1;
#'   `NULL` (the default): `ceiling(20 * tests)`, at most 19,999, where
#'   `tests` is the number of features times components (or strata).
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @param x The data, when the fit does not keep them (`keep_data = FALSE`):
#'   for a joint fit `list(x1, x2)`, the two raw sets (normalised as the fit
#'   did); for a stratified fit the data as [nmf_stratified()] took them (a
#'   list of strata, or the matrix).
#' @return An object of class `nmfkit_differential`, a list with `table`
#'   (a data frame: `feature`, `component` (joint) or `stratum`
#'   (stratified), `estimate`, `statistic`, `p_value`, `p_adjusted`,
#'   `permutations`; features named by the fit's row names, else `f1`,
#'   `f2`, ...), for a joint fit `components` (`component`, `p_bar`,
#'   `p_value`, `p_adjusted`, `permutations`), `B`, `type` (`"joint"` or
#'   `"stratified"`), `fit` and `call`.
#' @references Friedman, H., Maina-Kilaas, A., Schalkwyk, J., Ahmed, H. and
#'   Haddock, J. (2023). Joint nonnegative matrix factorization for
#'   identifying and visualizing dataset differences. CISS 2023,
#'   arXiv:2207.05112.
#'
#'   Chapman, J., Yaniv, Y. and Needell, D. (2023). Stratified-NMF for
#'   heterogeneous data. 57th Asilomar Conference on Signals, Systems, and
#'   Computers. \doi{10.48550/arXiv.2311.10789}
#'
#'   Besag, J. and Clifford, P. (1991). Sequential Monte Carlo p-values.
#'   *Biometrika* 78(2), 301-304.
#' @seealso [nmf_joint_test()] for one test of the whole data sets,
#'   [print.nmfkit_differential()] for the methods of the result.
#' @examples
#' # two sets over three blocks of 10 features; in set 2 features 1 to 3
#' # weigh three times as much in the first block's component
#' set.seed(1)
#' W <- matrix(0, 30, 3)
#' W[cbind(1:30, rep(1:3, each = 10))] <- 1
#' W2 <- W
#' W2[1:3, 1] <- 3
#' h <- function() matrix(runif(3 * 60) * (runif(3 * 60) > 0.4), 3)
#' x1 <- matrix(rpois(1800, 5 * W %*% h()), 30)
#' x2 <- matrix(rpois(1800, 5 * W2 %*% h()), 30)
#' fit <- nmf_joint(x1, x2, rank = 3, normalize = FALSE)
#' dt <- nmf_differential(fit)
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
nmf_differential <- function(fit, B = NULL, ..., x = NULL) {
  if (missing(fit)) {
    abort_nmfkit(c("{.arg fit} is missing: give a fit from {.fn nmf_joint} or {.fn nmf_stratified}."),
                 "missing")
  }
  UseMethod("nmf_differential")
}

#' @rdname nmf_differential
#' @export
nmf_differential.default <- function(fit, B = NULL, ..., x = NULL) {
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
nmf_differential.nmfkit_joint <- function(fit, B = NULL, ..., x = NULL) {
  call <- sys.call()
  check_dots_empty()
  k <- fit$rank
  B <- differential_B(B, nrow(fit$W) * k)
  pooled <- differential_joint_data(fit, x)
  n1 <- sum(fit$set == levels(fit$set)[1])
  setup <- joint_setup(pooled, unname(fit$H), unname(fit$W), n1)
  observed <- joint_statistics(setup, list(seq_len(n1)))[[1]]
  m <- nrow(fit$W)
  draw <- function(size, active) {
    rows <- which(rowSums(matrix(active[seq_len(m * k)], m)) > 0)
    firsts <- lapply(seq_len(size), function(b) {
      sample.int(ncol(pooled), n1)
    })
    lapply(joint_statistics(setup, firsts, rows), `[[`, "t")
  }
  counts <- sequential_counts(observed$t, draw, B)
  new_differential(observed, counts, B, "joint", fit, call)
}

#' @rdname nmf_differential
#' @export
nmf_differential.nmfkit_stratified <- function(fit, B = NULL, ...,
                                               x = NULL) {
  call <- sys.call()
  check_dots_empty()
  B <- differential_B(B, length(fit$V))
  data <- differential_data(fit, x)
  V <- unname(fit$V)
  start_v <- matrix(rowMeans(V), nrow(V), ncol(V))
  settings <- list(rank = fit$rank, update_order = fit$update_order,
                   v_updates = fit$v_updates, control = fit$control,
                   start = list(W = unname(fit$W), H = unname(fit$H),
                                V = start_v))
  observed <- centred_shifts(fit$V)
  draw <- function(size, active) {
    seed_session()
    future.apply::future_lapply(seq_len(size), stratified_replicate,
                                x = data, strata = fit$strata,
                                settings = settings, future.seed = TRUE)
  }
  counts <- sequential_counts(as.vector(observed), draw, B)
  new_differential(list(t = as.vector(observed),
                        estimate = as.vector(observed)),
                   counts, B, "stratified", fit, call)
}

# B, or the default: enough permutations for 1 / (B + 1) to pass the
# Bonferroni threshold 0.05 / tests, at most 19,999.
differential_B <- function(B, tests, call = rlang::caller_env()) {
  if (is.null(B)) return(as.integer(min(19999, ceiling(20 * tests))))
  check_count(B, min = 1, arg = "B", call = call)
}

# The joint statistics ---------------------------------------------------------

# What every relabelling shares: the pooled data, its square, H, the
# products with all columns (a set's are the total less the other set's),
# and the rows that align each component (its main features).
joint_setup <- function(pooled, H, W, n1) {
  X <- if (inherits(pooled, "dgCMatrix")) pooled else as.matrix(pooled)
  X2 <- X^2
  k <- nrow(H)
  main <- lapply(seq_len(k), function(i) {
    pos <- which(W[, i] > 0)
    keep <- min(100L, ceiling(length(pos) / 2))
    pos[utils::head(order(-W[pos, i]), keep)]
  })
  Ht <- t(H)
  list(X = X, X2 = X2, H = H, Ht = Ht, n = ncol(X), n1 = n1, k = k,
       total = as.matrix(X %*% Ht),
       sq = as.vector(as.matrix(X2 %*% rep(1, ncol(X)))),
       # h_j h_j' of every column, flattened: G of a set is HH' ind
       HH = Ht[, rep(seq_len(k), k), drop = FALSE] *
         Ht[, rep(seq_len(k), each = k), drop = FALSE],
       G = tcrossprod(H), hsum = rowSums(H), hmax = apply(H, 1L, max),
       main = main, all_main = sort(unique(unlist(main))),
       weight = colSums(W))
}

# The statistics of labellings (`firsts`: a list, each the columns of set
# 1) at `rows` (all by default; the others are 0), as a list: per
# labelling the aligned, studentised difference of the sets' loadings (t)
# with p-bar of each component from H appended (the components' test), the
# difference as a share of the component's pooled weight (estimate) and
# p-bar. The products of a batch of labellings are one product each.
joint_statistics <- function(s, firsts, rows = seq_len(nrow(s$X))) {
  k <- s$k
  nb <- length(firsts)
  use <- sort(unique(c(rows, s$all_main)))
  ind <- matrix(0, s$n, nb)
  for (j in seq_len(nb)) ind[firsts[[j]], j] <- 1
  sizes <- colSums(ind)
  sq1 <- as.matrix(s$X2[use, , drop = FALSE] %*% ind)
  hi <- s$Ht[, rep(seq_len(k), nb), drop = FALSE] *
    ind[, rep(seq_len(nb), each = k), drop = FALSE]
  b1 <- as.matrix(s$X[use, , drop = FALSE] %*% hi)
  g1 <- crossprod(s$HH, ind)
  h1 <- s$H %*% ind
  lapply(seq_len(nb), function(j) {
    joint_one(s, b1[, (j - 1L) * k + seq_len(k), drop = FALSE], sq1[, j],
              matrix(g1[, j], k), h1[, j], sizes[j], use, rows)
  })
}

# The statistics of one labelling from its set-1 products (see above).
joint_one <- function(s, b1, sq1, G1, h1, n1, use, rows) {
  k <- s$k
  m <- nrow(s$X)
  one <- set_loadings(b1, sq1, G1, n1, k)
  two <- set_loadings(s$total[use, , drop = FALSE] - b1, s$sq[use] - sq1,
                      s$G - G1, s$n - n1, k)
  # the scale of each component in set 2 relative to set 1, from its main
  # features (positions in `use`)
  r <- vapply(seq_len(k), function(i) {
    j <- match(s$main[[i]], use)
    w1 <- one$W[j, i]
    w2 <- two$W[j, i]
    ok <- w1 > 0 & w2 > 0
    if (!any(ok)) return(1)
    sqrt(exp(stats::median(log(w2[ok] / w1[ok]))))
  }, numeric(1))
  at <- match(rows, use)
  d <- sweep(one$W[at, , drop = FALSE], 2L, r, "*") -
    sweep(two$W[at, , drop = FALSE], 2L, r, "/")
  v <- sweep(one$v[at, , drop = FALSE], 2L, r^2, "*") +
    sweep(two$v[at, , drop = FALSE], 2L, r^2, "/")
  t <- matrix(0, m, k)
  t[rows, ] <- ifelse(v > 0, d / sqrt(pmax(v, .Machine$double.xmin)), 0)
  est <- matrix(0, m, k)
  est[rows, ] <- sweep(d, 2L, ifelse(s$weight > 0, s$weight, 1), "/")
  # p-bar (closed form) of the labelling: the maximum over all columns is
  # the same for every labelling
  means <- c(h1 / n1, (s$hsum - h1) / (s$n - n1))
  pbar <- ifelse(s$hmax > 0, (means[seq_len(k)] - means[-seq_len(k)]) /
                   s$hmax, 0)
  list(t = c(as.vector(t), pbar), estimate = est, pbar = pbar)
}

# One set's least-squares loadings from b = X_s H_s', the rows' sums of
# squares and G = H_s H_s', with the variances of the loadings (the row's
# residual variance times diag(G^-1)). A component the set does not use
# (a zero row of H_s) gets a loading 0 of unbounded variance.
set_loadings <- function(b, sq, G, n, k) {
  ridge <- 1e-10 * max(mean(diag(G)), .Machine$double.xmin)
  Gi <- solve(G + diag(ridge, k))
  W <- b %*% Gi
  rss <- pmax(sq - rowSums(W * b), 0)
  v <- outer(rss / max(n - k, 1), diag(Gi))
  list(W = W, v = v)
}

# V[f, s] - mean_s' V[f, s']: the part of each stratum's shift that the
# model identifies (a shift common to all strata can move into W H).
centred_shifts <- function(V) V - rowMeans(V)

# The permutations -------------------------------------------------------------

# Besag and Clifford's sequential p-values for every entry of `observed`:
# `draw(size, active)` returns `size` permuted statistics (vectors like
# `observed`, in order; entries outside `active` are not read). Each entry
# stops after `h` exceedances; the permutations are drawn in batches whose
# size depends on the problem only, until every entry has stopped or B are
# drawn. Returns the p-values and the permutations each entry used.
sequential_counts <- function(observed, draw, B, h = 10L) {
  a <- abs(observed) - 1e-12
  count <- used <- numeric(length(observed))
  size <- max(1L, min(B, 99L, floor(1e7 / length(observed))))
  done <- 0L
  prog <- progressr::progressor(steps = B)
  while (done < B && any(count < h)) {
    res <- draw(min(size, B - done), count < h)
    for (r in res) {
      act <- count < h
      count[act] <- count[act] + (abs(r[act]) >= a[act])
      used[act] <- used[act] + 1
    }
    done <- done + length(res)
    prog(amount = length(res))
  }
  p <- ifelse(count >= h, count / used, (count + 1) / (used + 1))
  list(p = p, permutations = as.integer(used))
}

# One permutation of the stratified fit: the stratum labels permuted over
# the columns (sizes kept), refitted from W, H and the mean shifts.
stratified_replicate <- function(b, x, strata, settings) {
  s <- settings
  g <- strata[sample.int(length(strata))]
  spec <- list(strata = g, group = as.integer(g) - 1L,
               update_order = s$update_order, v_updates = s$v_updates)
  refit <- run_pipeline(variant_of("stratified"), x, s$rank, s$start,
                        s$control, spec = spec)
  as.vector(centred_shifts(refit$V))
}

# The data -------------------------------------------------------------------

# The pooled columns a joint fit's permutations relabel: the raw sets from
# `x = list(x1, x2)` normalised as the fit did, else the fit's kept data.
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
  joint_data(x1, x2, fit$normalize)
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

# The result -------------------------------------------------------------------

new_differential <- function(observed, counts, B, type, fit, call) {
  features <- rownames(fit$W)
  m <- nrow(fit$W)
  if (is.null(features)) features <- paste0("f", seq_len(m))
  joint <- type == "joint"
  levels <- if (joint) colnames(fit$W) else levels(fit$strata)
  cells <- m * length(levels)
  p <- counts$p[seq_len(cells)]
  table <- data.frame(
    feature = rep(features, length(levels)),
    by = factor(rep(levels, each = m), levels = levels),
    estimate = as.vector(observed$estimate),
    statistic = observed$t[seq_len(cells)], p_value = p,
    p_adjusted = stats::p.adjust(p, "BH"),
    permutations = counts$permutations[seq_len(cells)],
    stringsAsFactors = FALSE
  )
  names(table)[2] <- if (joint) "component" else "stratum"
  out <- list(table = table)
  if (joint) {
    pc <- counts$p[-seq_len(cells)]
    out$components <- data.frame(
      component = factor(levels, levels = levels),
      p_bar = unname(observed$pbar), p_value = pc,
      p_adjusted = stats::p.adjust(pc, "BH"),
      permutations = counts$permutations[-seq_len(cells)],
      stringsAsFactors = FALSE
    )
  }
  structure(c(out, list(B = B, type = type, fit = fit, call = call)),
            class = "nmfkit_differential")
}
