# Starting factors for nmf() and the variants that start like it. All random
# draws come from R's RNG, so set.seed() reproduces them.

init_choices <- c("nndsvda", "nndsvd", "nndsvdar", "random")

# Returns list(W = m x k, H = k x n) for a character method or a user list.
# `column_v = TRUE` forms the SVD's V one sample at a time, so identical
# samples start bitwise identically wherever they sit (nmf_joint() needs it).
# `fill_value`: the value NNDSVD's near-zero entries are measured against
# and NNDSVDa fills them with; NULL for the typical factor entry of x.
init_factors <- function(x, rank, init, threads = 1L, arg = "init",
                         call = rlang::caller_env(), column_v = FALSE,
                         fill_value = NULL) {
  if (is.list(init)) {
    return(check_init_list(init, list(W = c(nrow(x), rank),
                                      H = c(rank, ncol(x))), arg, call))
  }
  if (!is.character(init) || length(init) != 1L || !init %in% init_choices) {
    hint <- if (is.character(init) && length(init) == 1L && !is.na(init))
      nearest_name(init, init_choices)
    abort_nmfkit(c("{.arg {arg}} must be one of {.or {.val {init_choices}}}, or a list(W = , H = ).",
                   "x" = "It is {describe_value(init)}.",
                   "i" = if (!is.null(hint)) "Did you mean {.val {hint}}?"),
                 "init", call = call)
  }
  total <- data_total(x, init, arg, call)
  x_mean <- total / (as.double(nrow(x)) * ncol(x))
  if (init == "random") {
    high <- sqrt(x_mean / rank)
    # dim<- on a fresh vector: no copy, as matrix() would make
    W <- stats::runif(nrow(x) * rank, 0, high)
    dim(W) <- c(nrow(x), rank)
    H <- stats::runif(rank * ncol(x), 0, high)
    dim(H) <- c(rank, ncol(x))
    return(list(W = W, H = H))
  }
  l <- min(rank + 10L, nrow(x), ncol(x))
  omega <- matrix(stats::rnorm(ncol(x) * l), ncol(x), l)
  fill <- switch(init, nndsvd = "none", nndsvda = "mean", nndsvdar = "random")
  # the typical factor entry: k products of it make mean(x), and it scales
  # like the factors (sqrt(x)), so c * x starts from sqrt(c) times the start
  scale <- if (is.null(fill_value)) sqrt(x_mean / rank) else fill_value
  rw <- rh <- NULL
  if (fill == "random") {
    rw <- matrix(stats::runif(nrow(x) * rank), nrow(x), rank)
    rh <- matrix(stats::runif(rank * ncol(x)), rank, ncol(x))
  }
  r_nndsvd(x, rank, omega, fill, scale, rw, rh, 7L, threads, column_v)
}

# A user's starting factors: a list with (at least) the elements named in
# `shapes`, each a finite nonnegative matrix of the given c(rows, columns).
check_init_list <- function(init, shapes, arg = "init",
                            call = rlang::caller_env()) {
  if (!all(names(shapes) %in% names(init))) {
    found <- if (is.null(names(init))) "no names" else
      cli::format_inline("names {.val {names(init)}}")
    abort_nmfkit(c("A user {.arg {arg}} must be a list with elements {.field {names(shapes)}}.",
                   "x" = "It has {found}."),
                 "init", call = call)
  }
  out <- lapply(names(shapes), function(nm) {
    check_factor_matrix(init[[nm]], shapes[[nm]][1], shapes[[nm]][2],
                        paste0(arg, "$", nm), call)
  })
  stats::setNames(out, names(shapes))
}
