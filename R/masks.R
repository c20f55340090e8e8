# Missing entries, masks and weights of nmf(): validation and the entry
# weights the core's masked solver reads (inst/include/nmfkit/masked.hpp).
#
# The weights reach the core as a base weight (1: every entry counts; 0:
# only listed entries count) plus exceptions (row, column, weight - base,
# data value). masked_setup() returns NULL when nothing is missing or
# weighted, so such fits run the unmasked solver, bit for bit.

masked_setup <- function(x, weights, mask, call = rlang::caller_env()) {
  if (is.null(weights) && is.null(mask) && is_streamed(x)) return(NULL)
  need_memory(x, if (is.null(weights)) "`mask`" else "`weights`",
              call = call)
  sparse <- inherits(x, "dgCMatrix")
  vals <- if (sparse) x@x else x
  if (!is.null(weights)) weights <- check_weights(weights, x, call)
  if (!is.null(mask)) mask <- check_mask(mask, x, call)
  # anyNA() stops at the first NA and makes no logical copy of the data
  if (is.null(weights) && is.null(mask) && !anyNA(vals)) return(NULL)
  na <- is.na(vals)
  x0 <- x
  if (sparse) x0@x[na] <- 0 else x0[na] <- 0
  out <- if (inherits(weights, "dgCMatrix")) {
    weighted_exceptions(x0, na, weights, mask)
  } else if (sparse && is.null(weights)) {
    sparse_exceptions(x0, na, mask)
  } else {
    dense_exceptions(as.matrix(x0), is.na(as.matrix(x)), weights, mask)
  }
  if (is.null(out)) return(NULL)
  check_coverage(out, dim(x), dimnames(x), call)
  out$x <- x0
  out
}

# The share of entries of an m x n fit that `masked` (masked_setup()) gives
# a positive weight; NULL without one.
observed_share <- function(masked, dims) {
  if (is.null(masked)) return(NULL)
  pos <- sum(masked$base + masked$delta > 0)
  total <- as.double(dims[1]) * dims[2]
  if (masked$base > 0) (total - length(masked$delta) + pos) / total else
    pos / total
}

# Dense data (or dense weights) in the encoding sparse_exceptions() gives
# sparse data, so that storage never changes the fit: without weights,
# base 1 with the NA and masked entries as exceptions, or (mask = "zeros")
# base 0 with the nonzero observed entries as exceptions. Dense weights:
# every entry gets its weight; the more common of 0 and 1 is the base and
# the other entries are the exceptions.
dense_exceptions <- function(x, na, weights, mask) {
  if (is.null(weights)) {
    zeros <- identical(mask, "zeros")
    out <- if (zeros) !na & x != 0 else na
    if (!zeros && !is.null(mask)) out[as.matrix(mask)] <- TRUE
    idx <- which(out)
    if (!zeros && !length(idx)) return(NULL)
    return(list(base = if (zeros) 0 else 1,
                i = as.integer((idx - 1) %% nrow(x)),
                j = as.integer((idx - 1) %/% nrow(x)),
                delta = rep(if (zeros) 1 else -1, length(idx)),
                value = x[idx]))
  }
  a <- weights
  a[na] <- 0
  if (identical(mask, "zeros")) a[x == 0] <- 0
  if (!is.null(mask) && !is.character(mask)) a[as.matrix(mask)] <- 0
  if (all(a == 1)) return(NULL)
  base <- if (sum(a == 1) >= sum(a == 0)) 1 else 0
  idx <- which(a != base)
  list(base = base, i = as.integer((idx - 1) %% nrow(x)),
       j = as.integer((idx - 1) %/% nrow(x)), delta = a[idx] - base,
       value = x[idx])
}

# Sparse data without weights: base 1 with the NA and masked entries as
# exceptions, or (mask = "zeros") base 0 with the stored entries that are
# not NA as exceptions. Nothing is densified.
sparse_exceptions <- function(x, na, mask) {
  j_all <- rep.int(seq_len(ncol(x)) - 1L, diff(x@p))
  if (identical(mask, "zeros")) {
    keep <- !na & x@x != 0  # stored zeros are zeros too
    return(list(base = 0, i = x@i[keep], j = j_all[keep],
                delta = rep(1, sum(keep)), value = x@x[keep]))
  }
  i <- x@i[na]
  j <- j_all[na]
  if (!is.null(mask)) {
    mk <- methods::as(mask, "TsparseMatrix")
    on <- if (methods::.hasSlot(mk, "x")) as.logical(mk@x) else
      rep(TRUE, length(mk@i))
    i <- c(i, mk@i[on])
    j <- c(j, mk@j[on])
    key <- j * as.double(nrow(x)) + i
    keep <- !duplicated(key)
    ord <- order(j[keep], i[keep])
    i <- i[keep][ord]
    j <- j[keep][ord]
  }
  if (!length(i)) return(NULL)
  list(base = 1, i = as.integer(i), j = as.integer(j),
       delta = rep(-1, length(i)), value = sparse_values(x, i, j, j_all))
}

# Sparse weights (a dgCMatrix; unstored entries weigh 0), for dense or
# sparse data: base 0 with the stored weights as exceptions, less those of
# NA, masked or (mask = "zeros") unstored entries of x and those of weight
# 0. Neither the data nor the weights are densified.
weighted_exceptions <- function(x, na, weights, mask) {
  m <- as.double(nrow(x))
  i <- weights@i
  j <- rep.int(seq_len(ncol(weights)) - 1L, diff(weights@p))
  a <- weights@x
  key <- j * m + i
  sparse <- inherits(x, "dgCMatrix")
  j_x <- if (sparse) rep.int(seq_len(ncol(x)) - 1L, diff(x@p))
  # keys of the entries that do not count: missing, masked
  na_key <- if (sparse) j_x[na] * m + x@i[na] else which(na) - 1
  drop <- key %in% na_key
  if (identical(mask, "zeros")) {
    # recommender data: only stored entries (nonzero ones of dense data)
    nz_key <- if (sparse) j_x * m + x@i else which(x != 0) - 1
    drop <- drop | !key %in% nz_key
  } else if (!is.null(mask)) {
    mk <- methods::as(mask, "TsparseMatrix")
    on <- if (methods::.hasSlot(mk, "x")) as.logical(mk@x) else
      rep(TRUE, length(mk@i))
    drop <- drop | key %in% (mk@j[on] * m + mk@i[on])
  }
  keep <- !drop & a > 0
  i <- i[keep]
  j <- j[keep]
  value <- if (sparse) sparse_values(x, i, j, j_x) else
    x[cbind(i + 1L, j + 1L)]
  list(base = 0, i = as.integer(i), j = as.integer(j), delta = a[keep],
       value = as.double(value))
}

# x[cbind(i + 1, j + 1)] for 0-based i, j by binary search: the stored
# entries' keys column * nrow + row increase (a valid dgCMatrix keeps rows
# sorted within columns), so no index matrix or hash table is built.
sparse_values <- function(x, i, j, j_all) {
  m <- as.double(nrow(x))
  stored <- j_all * m + x@i
  key <- j * m + i
  pos <- findInterval(key, stored)
  hit <- pos > 0L
  hit[hit] <- stored[pos[hit]] == key[hit]
  value <- numeric(length(key))
  value[hit] <- x@x[pos[hit]]
  value
}

# `weights`: the shape of x, finite, nonnegative. A dense one is returned
# as a double matrix; a sparse one (any layout, numeric) stays sparse, as a
# dgCMatrix whose unstored entries weigh 0.
check_weights <- function(weights, x, call) {
  if (!(is.matrix(weights) || inherits(weights, "Matrix") ||
        is.data.frame(weights))) {
    abort_nmfkit(c("{.arg weights} must be a numeric matrix the shape of {.arg x}.",
                   "x" = "It is {.obj_type_friendly {weights}}."),
                 "weights", call = call)
  }
  if (inherits(weights, "Matrix")) {
    # the structure first: a corrupt one would be read out of bounds
    check_sparse_structure(weights, "weights", call)
    check_sparse_valid(weights, "weights", call)
    if (methods::is(weights, "sparseMatrix") &&
        !methods::is(weights, "dsparseMatrix")) {
      abort_nmfkit(c("{.arg weights} must be numeric.",
                     "x" = "It is a {.cls {class(weights)[1]}} (logical or pattern entries)."),
                   "weights", call = call)
    }
  }
  check_shape_of_x(weights, x, "weights", call)
  if (methods::is(weights, "sparseMatrix")) {
    w <- methods::as(methods::as(methods::as(weights, "CsparseMatrix"),
                                 "generalMatrix"), "dMatrix")
    if (!is.double(w@x)) storage.mode(w@x) <- "double"
    check_finite_values(w, w@x, "weights", call,
                        hint = "Give missing entries weight 0.",
                        class = "weights")
    check_nonnegative_values(w, w@x, "weights", call, hint = NULL,
                             class = "weights")
    return(w)
  }
  w <- as.matrix(weights)
  if (!is.numeric(w)) {
    abort_nmfkit(c("{.arg weights} must be numeric.",
                   "x" = "It is a {typeof(w)} matrix."), "weights", call = call)
  }
  storage.mode(w) <- "double"
  check_finite_values(w, w, "weights", call,
                      hint = "Give missing entries weight 0.",
                      class = "weights")
  check_nonnegative_values(w, w, "weights", call, hint = NULL,
                           class = "weights")
  w
}

# `mask`: "zeros", or a logical matrix (base or sparse) the shape of x whose
# TRUE entries are left out.
check_mask <- function(mask, x, call) {
  if (is.character(mask)) {
    return(check_choice(mask, "zeros", arg = "mask", call = call))
  }
  if (inherits(mask, "Matrix")) {
    # the structure first: as.matrix() of a corrupt one reads out of bounds
    check_sparse_structure(mask, "mask", call)
    check_sparse_valid(mask, "mask", call)
    if (!methods::is(mask, "lsparseMatrix") &&
        !methods::is(mask, "nsparseMatrix")) {
      abort_nmfkit(c("{.arg mask} must be {.val zeros} or a logical matrix.",
                     "x" = "It is a {.cls {class(mask)[1]}}."),
                   "mask", call = call)
    }
  } else if (!is.matrix(mask) || !is.logical(mask)) {
    abort_nmfkit(c("{.arg mask} must be {.val zeros} or a logical matrix (base or {.cls lgCMatrix}).",
                   "x" = "It is {.obj_type_friendly {mask}}."),
                 "mask", call = call)
  }
  check_shape_of_x(mask, x, "mask", call)
  if (!inherits(mask, "Matrix")) {
    if (anyNA(mask)) {
      abort_nmfkit(c("{.arg mask} must not contain {.code NA}.",
                     "x" = "It has {sum(is.na(mask))}."), "mask", call = call)
    }
    if (inherits(x, "dgCMatrix")) mask <- methods::as(mask, "CsparseMatrix")
  } else if (methods::is(mask, "lsparseMatrix") && anyNA(mask@x)) {
    abort_nmfkit(c("{.arg mask} must not contain {.code NA}.",
                   "x" = "It has {sum(is.na(mask@x))}."), "mask", call = call)
  } else if (!inherits(x, "dgCMatrix")) {
    mask <- as.matrix(mask)
  }
  mask
}

# Every row and column must keep an entry of positive weight.
check_coverage <- function(a, dims, dn, call) {
  pos <- a$base + a$delta > 0
  if (a$base == 0) {
    rows <- tabulate(a$i[pos] + 1L, dims[1])
    cols <- tabulate(a$j[pos] + 1L, dims[2])
  } else {
    rows <- dims[2] - tabulate(a$i[!pos] + 1L, dims[1])
    cols <- dims[1] - tabulate(a$j[!pos] + 1L, dims[2])
  }
  for (side in c("row", "column")) {
    cnt <- if (side == "row") rows else cols
    if (all(cnt > 0)) next
    bad <- which(cnt == 0)
    nm <- dn[[if (side == "row") 1L else 2L]]
    shown <- if (is.null(nm)) bad else paste0(bad, " (", nm[bad], ")")
    many <- length(bad) > 1
    found <- sprintf("%s %s %s entirely missing, masked or weighted 0.",
                     if (many) paste0(side, "s") else side,
                     paste(utils::head(shown, 10), collapse = ", "),
                     if (many) "are" else "is")
    abort_nmfkit(c("Every {side} of {.arg x} needs an observed entry of positive weight.",
                   "x" = "{found}",
                   "i" = "Drop {if (many) 'them' else 'it'} from {.arg x} or observe some of {if (many) 'their' else 'its'} entries."),
                 "mask", call = call)
  }
  invisible(a)
}

# residuals(): NA at the entries the fit left out.
mask_residuals <- function(object, out) {
  a <- object$entry_weights
  if (is.null(a)) return(out)
  w <- a$base + a$delta
  if (a$base == 1) {
    out[cbind(a$i + 1L, a$j + 1L)[w == 0, , drop = FALSE]] <- NA
  } else {
    keep <- matrix(FALSE, nrow(out), ncol(out))
    keep[cbind(a$i + 1L, a$j + 1L)[w > 0, , drop = FALSE]] <- TRUE
    out[!keep] <- NA
  }
  out
}

# An entrywise argument (weights, mask) has the shape of x.
check_shape_of_x <- function(y, x, arg, call) {
  if (!identical(as.integer(dim(y)), as.integer(dim(x)))) {
    abort_nmfkit(c("{.arg {arg}} must have the shape of {.arg x} ({nrow(x)} x {ncol(x)}).",
                   "x" = "It is {nrow(y)} x {ncol(y)}."),
                 arg, call = call, value = dim(y))
  }
  invisible(y)
}
