# Losses of nmf(): the Frobenius norm and the beta-divergences (KL,
# Itakura-Saito, any beta), their penalties and fixed components. The
# Frobenius fits run the engine of nmf.hpp; every other beta the one of
# divergence.hpp (ARCHITECTURE.md, "Checklist: adding a loss").

# nmf()'s `loss` as list(name, beta): "frobenius" (beta 2), "kl" (1),
# "is" (0) or "beta" (any other finite number).
check_loss <- function(loss, arg = rlang::caller_arg(loss),
                       call = rlang::caller_env()) {
  names <- c(frobenius = 2, kl = 1, is = 0)
  if (is.character(loss) && length(loss) == 1L && !is.na(loss)) {
    alias <- c("kullback-leibler" = "kl", poisson = "kl",
               "itakura-saito" = "is", euclidean = "frobenius")
    key <- tolower(loss)
    if (key %in% names(alias)) key <- alias[[key]]
    if (key %in% names(names)) return(list(name = key, beta = names[[key]]))
  }
  if (is.numeric(loss) && length(loss) == 1L && !is.na(loss)) {
    if (!is.finite(loss)) {
      abort_nmfkit(c("{.arg {arg}} must be a finite number (the beta of the beta-divergence) or a loss name.",
                     "x" = "It is {describe_value(loss)}."),
                   "loss", call = call, value = loss)
    }
    hit <- names[names == loss]
    if (length(hit)) return(list(name = names(hit), beta = loss))
    return(list(name = "beta", beta = as.double(loss)))
  }
  check_choice(loss, c("frobenius", "kl", "is"), arg = arg, call = call,
               what = "loss")
}

# The loss's name as print() and summary() say it.
loss_label <- function(name, beta = NULL) {
  switch(name %||% "frobenius",
         frobenius = "Frobenius",
         kl = "Kullback-Leibler (Poisson)",
         is = "Itakura-Saito",
         beta = sprintf("beta-divergence (beta = %s)", format(beta)))
}

# nmf()'s method under a loss: "cd" (coordinate descent: HALS for
# Frobenius, Newton coordinate descent for KL) and "mu" work for the losses
# they can; "auto" picks the fastest measured (bench/README.md).
resolve_loss_method <- function(method, loss, call = rlang::caller_env()) {
  if (loss$beta == 2) return(if (method == "cd") "hals" else method)
  valid <- if (loss$beta == 1) c("auto", "cd", "mu") else c("auto", "mu")
  if (!method %in% valid) {
    abort_nmfkit(c("{.arg method} {.val {method}} does not fit the {loss_label(loss$name, loss$beta)} loss.",
                   "i" = "Under this loss use {.or {.val {valid}}}."),
                 "method", call = call, value = method)
  }
  if (method != "auto") return(method)
  if (loss$beta == 1) "cd" else "mu"
}

# nmf()'s `penalty` as c(l1_W, l1_H, l2_W, l2_H): a named numeric vector
# or list with names among those four, or l1 / l2 for both factors.
check_penalty <- function(penalty, arg = rlang::caller_arg(penalty),
                          call = rlang::caller_env()) {
  out <- c(l1_W = 0, l1_H = 0, l2_W = 0, l2_H = 0)
  if (is.null(penalty)) return(out)
  if (is.list(penalty)) {
    ok <- all(vapply(penalty, function(v) is.numeric(v) && length(v) == 1L,
                     logical(1)))
    if (!ok) {
      abort_nmfkit(c("{.arg {arg}} must hold single numbers.",
                     "x" = "It is {describe_value(penalty)}."),
                   "penalty", call = call, value = penalty)
    }
    penalty <- unlist(penalty)
  }
  nm <- names(penalty)
  valid <- c(names(out), "l1", "l2")
  if (!is.numeric(penalty) || !length(penalty) || is.null(nm) ||
      any(!nzchar(nm))) {
    abort_nmfkit(c("{.arg {arg}} must be a named numeric vector with names among {.val {valid}}.",
                   "x" = "It is {describe_value(penalty)}.",
                   "i" = "For example {.code penalty = c(l1_W = 0.1)}."),
                 "penalty", call = call, value = penalty)
  }
  bad <- setdiff(nm, valid)
  if (length(bad)) {
    hint <- nearest_name(bad[1], valid)
    abort_nmfkit(c("{.arg {arg}} has unknown name{?s} {.val {bad}}.",
                   "i" = "Names are {.or {.val {valid}}}.",
                   "i" = if (!is.null(hint)) "Did you mean {.val {hint}}?"),
                 "penalty", call = call, value = penalty)
  }
  if (anyDuplicated(nm)) {
    abort_nmfkit(c("{.arg {arg}} names {.val {nm[duplicated(nm)][1]}} twice."),
                 "penalty", call = call, value = penalty)
  }
  if (any(!is.finite(penalty)) || any(penalty < 0)) {
    abort_nmfkit(c("{.arg {arg}} must be finite and nonnegative.",
                   "x" = "It is {.code {deparse(penalty)}}."),
                 "penalty", call = call, value = penalty)
  }
  for (n in nm) {
    if (n %in% c("l1", "l2")) {
      out[paste0(n, c("_W", "_H"))] <- penalty[[n]]
    } else {
      out[[n]] <- penalty[[n]]
    }
  }
  both <- intersect(nm, c("l1", "l2"))
  if (length(both) && any(paste0(rep(both, each = 2), c("_W", "_H")) %in% nm)) {
    abort_nmfkit(c("{.arg {arg}} gives {.val {both[1]}} and one of its factors' own weights.",
                   "i" = "Give {.val {both[1]}} for both factors or {.val {paste0(both[1], c('_W', '_H'))}} separately."),
                 "penalty", call = call, value = penalty)
  }
  out
}

# Penalising one factor only shrinks it while the other grows to keep W H
# (scikit-learn #30524): a classed warning, unless that factor's partner is
# held fixed (then the scale is pinned).
warn_one_sided <- function(pen, fixed, call = rlang::caller_env()) {
  on_w <- pen[["l1_W"]] > 0 || pen[["l2_W"]] > 0
  on_h <- pen[["l1_H"]] > 0 || pen[["l2_H"]] > 0
  if (on_w == on_h) return(invisible())
  side <- if (on_w) "W" else "H"
  other <- if (on_w) "H" else "W"
  if (!is.null(fixed[[other]])) return(invisible())
  warn_nmfkit(c("Only {.field {side}} is penalised: the fit can shrink {.field {side}} and grow {.field {other}} to keep {.code W H}, so the penalty mostly rescales.",
                "i" = "Penalise both factors (e.g. {.code penalty = c(l1 = 0.1)}) or add an L2 penalty on {.field {other}} to pin the scale."),
              "penalty", call = call)
}

# nmf()'s `fixed`: list(W = m x a matrix, H = b x n matrix), either or both;
# the first a columns of W (rows of H) are those matrices and never change.
check_fixed <- function(fixed, m, n, rank, arg = rlang::caller_arg(fixed),
                        call = rlang::caller_env()) {
  if (is.null(fixed)) return(NULL)
  nm <- names(fixed)
  if (!is.list(fixed) || !length(fixed) || is.null(nm) ||
      !all(nm %in% c("W", "H")) || anyDuplicated(nm)) {
    abort_nmfkit(c("{.arg {arg}} must be a list with elements {.field W} and/or {.field H}.",
                   "x" = "It is {describe_value(fixed)}.",
                   "i" = "For example {.code fixed = list(W = signatures)}."),
                 "fixed", call = call, value = fixed)
  }
  out <- list()
  for (f in nm) {
    v <- fixed[[f]]
    if (inherits(v, "Matrix")) {
      # validated before it is converted, as every sparse argument
      check_sparse_structure(v, paste0(arg, "$", f), call)
      check_sparse_valid(v, paste0(arg, "$", f), call)
      v <- as.matrix(v)
    }
    if (f == "H" && is.numeric(v) && is.null(dim(v))) v <- matrix(v, 1L)
    if (f == "W" && is.numeric(v) && is.null(dim(v))) v <- matrix(v, ncol = 1L)
    len <- if (f == "W") m else n
    ok_shape <- is.matrix(v) && is.numeric(v) &&
      (if (f == "W") nrow(v) == m else ncol(v) == n)
    if (!ok_shape) {
      want <- if (f == "W") sprintf("%d rows (one per feature)", m) else
        sprintf("%d columns (one per sample)", n)
      abort_nmfkit(c("{.arg {arg}${f}} must be a numeric matrix with {want}.",
                     "x" = "It is {describe_value(v)}{if (is.matrix(v)) paste0(', ', nrow(v), ' x ', ncol(v))}."),
                   "fixed", call = call, value = v)
    }
    count <- if (f == "W") ncol(v) else nrow(v)
    if (count < 1 || count > rank) {
      abort_nmfkit(c("{.arg {arg}${f}} must hold from 1 to {.arg rank} = {rank} component{?s}.",
                     "x" = "It holds {count}."),
                   "fixed", call = call, value = v)
    }
    if (any(!is.finite(v)) || any(v < 0)) {
      abort_nmfkit(c("{.arg {arg}${f}} must be nonnegative and finite.",
                     "x" = "It has {sum(!is.finite(v))} non-finite and {sum(v < 0, na.rm = TRUE)} negative entr{?y/ies}."),
                   "fixed", call = call, value = v)
    }
    storage.mode(v) <- "double"
    out[[f]] <- v
  }
  out
}

# The number of fixed components c(W, H) of a checked `fixed`.
fixed_counts <- function(fixed) {
  c(if (is.null(fixed$W)) 0L else ncol(fixed$W),
    if (is.null(fixed$H)) 0L else nrow(fixed$H))
}

# A start with the fixed components in place: the first columns of W and
# rows of H replaced by those of `fixed`, times `s` (the start's scale).
apply_fixed <- function(start, fixed, s = 1) {
  if (!is.null(fixed$W)) start$W[, seq_len(ncol(fixed$W))] <- fixed$W * s
  if (!is.null(fixed$H)) start$H[seq_len(nrow(fixed$H)), ] <- fixed$H * s
  start
}

# IS and beta <= 0 need x > 0 wherever it counts; KL and beta > 0 take
# zeros. Entries of weight 0 (masked, missing) do not count.
check_positive_for_loss <- function(x, loss, masked, call) {
  if (loss$beta > 0) return(invisible())
  vals <- if (inherits(x, "dgCMatrix")) x@x else x
  zeros <- if (inherits(x, "nmfkit_blocks")) {
    prod(dim(x)) - x$nnz  # the scan's count
  } else if (inherits(x, "dgCMatrix")) {
    length(x) - sum(vals > 0, na.rm = TRUE)
  } else {
    sum(vals == 0, na.rm = TRUE)
  }
  if (!is.null(masked)) {
    # zeros that weigh nothing are fine: count those the weights leave in
    zeros <- zeros_counted(x, masked)
  }
  if (zeros > 0) {
    abort_nmfkit(c("The {loss_label(loss$name, loss$beta)} loss needs positive data: {.arg x} has {zeros} zero entr{?y/ies}.",
                   "i" = "Use {.code loss = \"kl\"} (or a beta above 0) for data with zeros, or leave the zeros out with {.code mask = \"zeros\"}."),
                 "loss", call = call, value = zeros)
  }
}

# The zero entries of x whose weight is positive under `masked`.
zeros_counted <- function(x, masked) {
  xv <- masked$x
  if (masked$base == 0) return(sum(masked$value[masked$delta > 0] == 0))
  zero_total <- if (inherits(xv, "dgCMatrix")) length(xv) - sum(xv@x != 0)
                else sum(xv == 0)
  dropped <- sum(masked$value[masked$delta == -1] == 0)
  zero_total - dropped
}

# One run of the divergence engine from `start` (W, H on the lines of x):
# its trace is D(x | WH) / D(x | r c' / T).
run_divergence <- function(x, start, spec, control, update_w = TRUE) {
  m <- spec$masked
  e <- spec$exponent %||% 0
  engine <- violation_at_core(spec$engine, e, spec$loss$beta)
  fit <- if (inherits(x, "nmfkit_blocks")) {
    # read in blocks (no masks: nmf() refuses them there)
    run_streamed(x, start, spec$method, engine, spec$penalty,
                 fixed_counts(spec$fixed), x$nnz, spec$loss$beta)
  } else r_nmf_divergence(
    x, start$W, start$H, spec$loss$beta, spec$method, engine,
    progress_callback(control), spec$penalty, fixed_counts(spec$fixed),
    update_w, if (is.null(m)) 1 else m$base,
    if (is.null(m)) integer() else m$i, if (is.null(m)) integer() else m$j,
    if (is.null(m)) numeric() else m$delta,
    if (is.null(m)) numeric() else scale_data(m$value, e))
  # the divergences scale as (2^e)^beta
  s <- 2^(e * spec$loss$beta)
  for (f in c("divergence", "objective", "baseline")) fit[[f]] <- fit[[f]] * s
  fit <- with_violation(fit, e, spec$loss$beta)
  fit$loss_name <- "relative divergence"
  fit
}

# The divergence sum d_beta(x | W H) over the entries `masked` weighs
# (NULL: every entry), for summaries and held-out errors.
divergence_value <- function(x, W, H, beta, masked = NULL, threads = 1L) {
  m <- masked
  r_divergence(x, W, H, beta, threads, if (is.null(m)) 1 else m$base,
               if (is.null(m)) integer() else m$i,
               if (is.null(m)) integer() else m$j,
               if (is.null(m)) numeric() else m$delta,
               if (is.null(m)) numeric() else m$value)
}

# argmin_{H >= 0} D_beta(newdata | W H) with W fixed, by the fit's solver:
# the columns' problems are convex for beta in [1, 2] (KL: strictly, where
# W has full column rank).
divergence_coef <- function(newdata, W, loss, tol, max_passes, threads) {
  # features the basis leaves at zero cannot be fitted at all (their
  # divergence does not depend on H): they are left out
  live <- rowSums(W) > 0
  if (!all(live)) {
    W <- W[live, , drop = FALSE]
    newdata <- newdata[live, , drop = FALSE]
  }
  k <- ncol(W)
  n <- ncol(newdata)
  # start: the columns' shares of the basis' mean (positive wherever W is)
  scale <- if (inherits(newdata, "dgCMatrix")) Matrix::colSums(newdata) else
    colSums(newdata)
  wsum <- sum(W)
  h0 <- matrix(if (wsum > 0) rep(scale / wsum, each = k) else 0, k, n)
  h0[!is.finite(h0)] <- 0
  method <- if (loss$beta == 1) "cd" else "mu"
  control <- list(max_iter = max_passes, tol = tol, threads = threads,
                  extrapolate = FALSE, inner = 1L)
  fit <- r_nmf_divergence(newdata, W, h0, loss$beta, method, control, NULL,
                          c(0, 0, 0, 0), c(k, 0L), FALSE, 1, integer(),
                          integer(), numeric(), numeric())
  fit$H
}
