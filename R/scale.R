# Scale of the data: every fit is equivariant (c * x gives the same
# iterations and factors scaled by the model's power of c), so data whose
# entries are too small or too large for sums of squares (near 1e-200 or
# .Machine$double.xmax) can be fitted exactly as well after dividing by a
# power of two (an exact operation) and multiplying the factors back.

# Exponent e such that x / 2^e has its largest entry in [1/2, 1], or 0 when
# the largest entry is already between 2^-200 and 2^200 (then sums of squares
# of up to 2^400 entries neither overflow nor underflow).
# `scan`: check_data()'s read of x, if at hand.
data_exponent <- function(x, scan = NULL) {
  if (is.null(scan) && is.matrix(x) && is.double(x)) {
    scan <- r_dense_scan(x)  # one read for both ends
  }
  mx <- if (!is.null(scan)) {
    if (!scan$finite) return(0)
    max(-min(scan$min, 0), max(scan$max, 0))
  } else {
    v <- if (inherits(x, "dgCMatrix")) x@x else x
    max(-min(v, 0), max(v, 0))  # max(abs(v), 0) without a copy of v
  }
  if (!is.finite(mx) || mx == 0 || (mx >= 2^-200 && mx <= 2^200)) return(0)
  ceiling(log2(mx))
}

# The status of a finished fit: "numerical_error" when a factor is not
# finite, "degenerate" when W H is zero (every component has an all-zero
# column of W or row of H: the relative error is 1), else the solver's.
fit_status <- function(W, H, status) {
  # the factors are nonnegative, so their column (row) sums are NaN or Inf
  # exactly when an entry is, and positive exactly for the components in
  # use: one pass over each factor, without m x k temporaries
  cw <- colSums(W)
  rh <- rowSums(H)
  if (!all(is.finite(cw)) || !all(is.finite(rh))) return("numerical_error")
  used <- cw > 0 & rh > 0
  if (!any(used)) return("degenerate")
  status
}

# sqrt(sum(r^2) / sum(x^2)) for a residual r of data x, on r / 2^e and
# x / 2^e, so that data near .Machine$double.xmax or 1e-300 give the
# relative error of any other scale (NA entries of x weigh 0).
relative_norm <- function(r, x) {
  x <- as.matrix(x)
  e <- data_exponent(x[!is.na(x)])
  r <- scale_data(r, e)
  x <- scale_data(x, e)
  den <- sum(x^2, na.rm = TRUE)
  if (den > 0) sqrt(sum(r^2, na.rm = TRUE) / den) else 0
}

# Coefficients solved on data / 2^e, back at the scale of the data: h * 2^e
# in exact steps (2^e itself overflows beyond e = 1023). Coefficients beyond
# the double range are a classed error naming the data, never Inf or NaN
# (the fit is scale-equivariant: the user can rescale the data instead).
unscale_coef <- function(h, e, arg = "newdata", call = rlang::caller_env()) {
  h0 <- h
  if (e != 0) h <- scale_data(h, -e)
  if (all(is.finite(h))) return(h)
  big <- suppressWarnings(max(log2(h0[is.finite(h0) & h0 > 0]))) + e
  abort_nmfkit(c("The coefficients of {.arg {arg}} are too large for double precision.",
                 "x" = "The largest is about 2^{round(big)}; doubles end at 2^1024 ({format(.Machine$double.xmax, digits = 3)}).",
                 "i" = "Divide {.arg {arg}} by a constant first: coefficients scale with the data."),
               "overflow", call = call)
}
