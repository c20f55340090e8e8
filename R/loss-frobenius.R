# The Frobenius loss, 1/2 ||x - W H||_F^2: its object (new_loss()), its
# predict solver (nonnegative least squares) and its summary's relative
# error.

frobenius_loss <- function() {
  new_loss(
    "frobenius", 2, "Frobenius", core = "frobenius",
    entries = function(x, mu) (x - mu)^2 / 2, degree = 2,
    coef = nnls_coef, exact_coef = nnls_exact_coef,
    methods = c("auto", "hals", "mu", "anls", "cd", "online"),
    solver = c(cd = "hals"), residual = "response", streams = TRUE,
    # ||x - fitted|| / ||x|| over the held-out entries (weighted)
    score = function(f, pred, x_mean) {
      sqrt(sum(f$weight * (f$value - pred)^2) /
             max(sum(f$weight * f$value^2), .Machine$double.xmin))
    },
    summary = function(object) {
      list(relative_error = if (is.null(object$data)) NA_real_ else
        frobenius_rel_error(object$data, object$W, object$H,
                            object$entry_weights))
    },
    # Gaussian noise of the residuals' variance (on m n - k (m + n - k)
    # degrees of freedom), kept nonnegative
    setup = function(data, mean, W, H) {
      k <- ncol(W)
      df <- max(nrow(W) * as.double(ncol(H)) - k * (nrow(W) + ncol(H) - k),
                1)
      sqrt(sum((as.matrix(data) - mean)^2) / df)
    },
    draw = function(mean, sigma) {
      pmax(mean + stats::rnorm(length(mean), sd = sigma), 0)
    })
}

# ||x - W H||_F / ||x||_F without forming the residual (x dense or
# dgCMatrix). With the entry weights `a` of a masked fit (base, i, j, delta;
# see masked_setup()), the weighted error of the fit's own loss,
# sqrt(sum(a * (x - W H)^2) / sum(a * x^2)): missing entries weigh 0. It is
# computed on x / 2^e and W H / 2^e (exact powers of two), so data near
# .Machine$double.xmax or 1e-300 give the error of any other scale.
frobenius_rel_error <- function(x, W, H, weights = NULL) {
  t <- frobenius_terms(x, W, H)
  err <- t$err
  x2 <- t$x2
  if (!is.null(weights)) {
    # (data in memory only) base weight times the whole sums, plus each
    # exception's offset, on the scaled x, W and H
    x <- t$x
    i <- weights$i + 1L
    j <- weights$j + 1L
    value <- if (inherits(x, "dgCMatrix")) {
      sparse_values(x, i - 1L, j - 1L,
                    rep.int(seq_len(ncol(x)) - 1L, diff(x@p)))
    } else {
      x[cbind(i, j)]
    }
    pred <- rowSums(t$W[i, , drop = FALSE] * t(t$H)[j, , drop = FALSE])
    err <- weights$base * err + sum(weights$delta * (value - pred)^2)
    x2 <- weights$base * x2 + sum(weights$delta * value^2)
  }
  if (x2 > 0) sqrt(max(err, 0) / x2) else 0
}

# argmin_{H >= 0} ||newdata - W H||_F by coordinate descent. NNLS is
# scale-equivariant: it is solved with newdata and W divided by powers of
# two when their products would overflow or underflow, and h scaled back.
nnls_coef <- function(newdata, W, tol, max_passes, threads) {
  ex <- data_exponent(newdata)
  ew <- data_exponent(W)
  unscale_coef(r_nnls(scale_data(newdata, ex), scale_data(W, ew), tol,
                      max_passes, threads), ex - ew)
}

# The same minimiser exactly, by block principal pivoting (bpp.hpp): a few
# Cholesky solves per column where coordinate descent on nearly collinear
# columns of W (reference signatures) needs hundreds of passes.
nnls_exact_coef <- function(newdata, W, threads) {
  ex <- data_exponent(newdata)
  ew <- data_exponent(W)
  unscale_coef(r_nnls_exact(scale_data(newdata, ex), scale_data(W, ew),
                            threads), ex - ew)
}
