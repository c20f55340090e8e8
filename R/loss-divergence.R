# The beta-divergences (KL, Itakura-Saito, any other finite beta): their
# objects (new_loss()), fitted by the engine of divergence.hpp. The
# entries d(x | mu) carry their limits where the general form is 0 * Inf,
# 0 / 0 or Inf - Inf: 0 at x = mu (0 included), d(0 | mu) and d(x | 0) as
# the limits (infinite where the divergence is).

# A beta-divergence's object: what every beta shares (the divergence
# engine, MU and the rank-one baseline, the held-out score relative to the
# mean's, the summary's divergence).
divergence_loss <- function(name, beta, label, entries, methods = c("auto", "mu"),
                            solver = "mu", draw = NULL, arg = name,
                            deviance = NULL, exact_coef = NULL) {
  new_loss(
    name, beta, label, core = "divergence", entries = entries,
    degree = beta, coef = divergence_solver(beta, solver), methods = methods,
    exact_coef = exact_coef, streams = TRUE,
    solver = c(auto = solver), draw = draw, positive = beta <= 0, arg = arg,
    score = divergence_score(entries),
    summary = function(object) {
      list(relative_error = NA_real_, loss_function = label,
           divergence = object$divergence, baseline = object$baseline,
           deviance = if (!is.null(deviance)) deviance(object$divergence))
    },
    fit_fields = c("divergence", "objective", "baseline"),
    error_name = "relative divergence",
    baseline_name = "the rank-one baseline",
    holdout_label = "held-out divergence / the mean's",
    score_label = sprintf("%s divergence / the mean's", label))
}

kl_loss <- function() {
  divergence_loss(
    "kl", 1, "Kullback-Leibler (Poisson)",
    entries = function(x, mu) {
      out <- x * log(x / mu) - x + mu
      at0 <- which(x == 0)
      out[at0] <- mu[at0]
      out[which(x == mu)] <- 0
      out
    },
    methods = c("auto", "cd", "mu"), solver = "cd",
    draw = function(mean, state) {
      matrix(as.double(stats::rpois(length(mean), mean)), nrow(mean))
    },
    # the Poisson deviance
    deviance = function(d) 2 * d, exact_coef = poisson_exact_coef)
}

is_loss <- function() {
  divergence_loss(
    "is", 0, "Itakura-Saito",
    entries = function(x, mu) {
      out <- x / mu - log(x / mu) - 1
      out[which((x == 0) != (mu == 0))] <- Inf
      out[which(x == mu)] <- 0
      out
    })
}

# d(x | mu) = (x^b + (b - 1) mu^b - b x mu^(b - 1)) / (b (b - 1)): mu^b / b
# at x = 0 (infinite for b <= 0), x^b / (b (b - 1)) at mu = 0 (infinite for
# b <= 1).
beta_loss <- function(beta) {
  b <- as.double(beta)
  divergence_loss(
    "beta", b, sprintf("beta-divergence (beta = %s)", format(b)),
    entries = function(x, mu) {
      out <- (x^b + (b - 1) * mu^b - b * x * mu^(b - 1)) / (b * (b - 1))
      at0 <- which(x == 0 & mu > 0)
      out[at0] <- if (b > 0) mu[at0]^b / b else Inf
      mu0 <- which(mu == 0 & x > 0)
      out[mu0] <- if (b > 1) x[mu0]^b / (b * (b - 1)) else Inf
      out[which(x == mu)] <- 0
      out
    }, arg = b)
}

# The held-out score of a divergence: the held-out divergence relative to
# that of predicting every held-out entry by the mean of x (scale-free, 1
# for a fit no better than the mean), each entry's term weighted (1, or
# for sampled zeros the zeros each stands for, which keeps the sum
# unbiased for the zero entries' terms, KL's d(0 | mu) = mu included). A
# held-out count the fit predicts as exactly 0 (exact zeros of W and H need
# only cover the entries the fit saw) would cost an infinite divergence:
# predictions are floored at 1e-8 times the mean of x, which charges such
# an entry about 18 times its value instead.
divergence_score <- function(entries) {
  function(f, pred, x_mean) {
    pred <- pmax(pred, 1e-8 * x_mean)
    d <- sum(f$weight * entries(f$value, pred))
    ref <- sum(f$weight * entries(f$value, rep(x_mean, length(pred))))
    d / max(ref, .Machine$double.xmin)
  }
}

# The predict solver of a divergence: argmin_{H >= 0} D(newdata | W H) by
# the divergence engine's `method` (divergence_coef()), on newdata / 2^e
# and W / 2^ew (the solution scales back exactly: D is homogeneous), so
# that any scale of the data gives the same coefficients up to that scale.
divergence_solver <- function(beta, method) {
  spec <- list(beta = beta, solver = c(auto = method))
  function(newdata, W, tol, max_passes, threads) {
    ex <- data_exponent(newdata)
    ew <- data_exponent(W)
    h <- divergence_coef(scale_data(newdata, ex), scale_data(W, ew), spec,
                         tol, max_passes, threads)
    unscale_coef(h, ex - ew)
  }
}

# The exact Poisson coefficients argmin_{H >= 0} KL(newdata | W H) by
# projected Newton (poisson_nnls.hpp), on newdata / 2^e and W / 2^ew as
# divergence_solver(), with coef_problem()'s features and start.
poisson_exact_coef <- function(newdata, W, threads) {
  ex <- data_exponent(newdata)
  ew <- data_exponent(W)
  p <- coef_problem(scale_data(newdata, ex), scale_data(W, ew))
  s <- if (inherits(p$newdata, "dgCMatrix")) p$newdata else
    dense_as_dgc(p$newdata)
  unscale_coef(r_poisson_nnls(s, p$W, p$h0, 1e-12, 200L, threads), ex - ew)
}

