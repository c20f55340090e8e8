# Penalties and fixed components of nmf() (every loss takes them): their
# validation and the start with the fixed components in place.

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
    check_nonnegative_matrix(v, paste0(arg, "$", f), call, "fixed")
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
