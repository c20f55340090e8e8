# The one call into the core's fit export: core_params() builds the one
# parameter list of r_nmf_fit() (src/r_fit.cpp), which dispatches on the
# source (data in memory, or `stream`: blocks read through R) and on the
# loss and method (beta 2: the Frobenius engine, masked or not; another
# beta: the beta-divergence engine; `ard`: the relevance iterations;
# `stream$forget`: the online fit).

# `beta` the loss's (2: Frobenius), `method` the solver the loss resolved,
# `control` the engine's settings (max_iter, tol, threads, inner,
# extrapolate, tol_reference), `penalty` c(l1_W, l1_H, l2_W, l2_H) relative
# to the data, `fixed` c(fixed_w, fixed_h); `masked` the weights of
# masked_setup() at the core's scale (their `value` already scaled),
# `stream` the block source (stream_params()), `ard` the prior's absolute
# settings; update_w FALSE holds W (predict()).
core_params <- function(method, control, beta = 2, callback = NULL,
                        penalty = c(0, 0, 0, 0), fixed = c(0L, 0L),
                        update_w = TRUE, masked = NULL, stream = NULL,
                        ard = NULL) {
  list(
    beta = as.double(beta), method = method, control = control,
    callback = callback, penalty = as.double(penalty),
    fixed = as.integer(fixed), update_w = update_w,
    masked = if (!is.null(masked)) {
      list(base = masked$base, i = masked$i, j = masked$j,
           delta = masked$delta, value = masked$value)
    },
    stream = stream, ard = ard
  )
}

# One fit by the core from the starting factors (W, H); x is NULL when
# params$stream reads the data.
core_fit <- function(x, W, H, params) r_nmf_fit(x, W, H, params)
