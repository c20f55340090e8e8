#' Automatic relevance determination for nmf()
#'
#' The settings of `nmf(x, rank = K, ard = )`: Tan and Févotte's (2013)
#' automatic relevance determination, which fits `K` components and lets
#' those the data do not need fall to zero, so the rank is found by the fit.
#'
#' Each component `k` (column `k` of `W` and row `k` of `H`) has a relevance
#' `lambda_k`, the scale of its entries' prior: exponential with mean
#' `lambda_k` (`prior = "l1"`) or half-normal with variance `lambda_k`
#' (`"l2"`), and `lambda_k` has an inverse-gamma prior of shape `a` and
#' scale `b`. The fit minimises the negative log posterior (MAP)
#' `D(x | W H) / phi + sum_k ((f(w_k) + f(h_k) + b) / lambda_k + c log
#' lambda_k)` under the fit's beta-divergence `D` (`loss`), with `f` the L1
#' norm and `c = m + n + a + 1` (`"l1"`) or half the squared L2 norm and
#' `c = (m + n) / 2 + a + 1` (`"l2"`). An iteration updates `W` and then
#' `H` by the paper's multiplicative majorisation-minimisation steps (the
#' exponent `gamma(beta)` of Févotte and Idier for L1, `1 / (3 - beta)`
#' below 2 and `1 / (beta - 1)` from 2 for L2) and then every `lambda_k` in
#' closed form, so the objective never rises. The relevance of a component
#' the fit does not use falls to the floor `b / c`.
#'
#' The multiplicative steps stop at a local minimum, and from a random
#' start at `K` above the data's rank that is often one where a component
#' of the data is split between two of the fit's (the same row of `H`, two
#' columns of `W`): both halves carry signal, so neither falls to the
#' floor, and the fit keeps one component too many. So every 500
#' iterations, and when they stop, every merge of two active components
#' (their sum replaced by its best rank-one approximation) and every
#' removal of one is scored by the MAP objective; the best is made if it
#' lowers the objective, and the iterations resume from there, until they
#' converge with no move that lowers it. When none lowers it at once, each
#' removal is refitted for 200 iterations and the best is kept if it ends
#' lower: a component of the fit's own can carry a profile the planted
#' components share (correlated components), which the others take over
#' when it is removed, but not in one step (these refits are counted in
#' `max_iter` and reported as `refit_iterations`, not in the trace). When
#' that fails too, or when a run of 500 iterations lowers the objective by
#' less than 1 % of itself without converging (the steps crawl: Poisson
#' counts of mean 1,000 with components sharing a profile kept 4-5 of 3
#' after 20,000 iterations), the relevance iterations restart from an
#' ordinary fit at one active component fewer (the others zero) and keep
#' it if the objective ends lower after 500 iterations (once per active
#' count while crawling). The
#' objective never rises over the whole trace, moves included. Components
#' whose
#' relevance above the floor is at most `prune` times the largest are
#' pruned: the returned model keeps the others, and its `rank` is the
#' effective rank.
#'
#' Every scale is relative to the data, so `nmf(c * x, ard = )` runs the
#' same iterations: `b` is the authors' choice, which makes the prior's
#' mean of `W H` the mean of `x`: `sqrt((a - 1) (a - 2) mean(x) / K)` for
#' L1, `pi (a - 1) mean(x) / (2 K)` for L2; the dispersion `phi` (the
#' noise variance under Frobenius, 1 for Poisson counts under KL) is by
#' default estimated from an ordinary fit at rank `K` (the first stage of
#' `nmf(ard = )`) as its deviance per residual degree of freedom,
#' `2 D / (m n - K (m + n))`. The relevance iterations then start from
#' random factors (uniform on `[0, sqrt(mean(x) / K))`, from R's RNG, as
#' `init = "random"`).
#' Give `dispersion = 1` for raw counts under KL to use the Poisson
#' likelihood itself (which is not scale-free: counts have a unit).
#'
#' @param prior `"l1"` (exponential) or `"l2"` (half-normal).
#' @param shape The shape `a` of the relevances' inverse-gamma prior;
#'   `NULL` for `log(m + n)` (at least 3), the authors' advice. Smaller
#'   values prune harder. Above 2 for `"l1"`, above 1 for `"l2"`.
#' @param dispersion `NULL` (estimated) or a positive number `phi`.
#' @param max_iter Maximum relevance iterations in all (moves included), at
#'   least 1.
#' @param tol Stop once no relevance changes by more than `tol` times
#'   itself in an iteration.
#' @param prune Relative relevance below which a component is pruned, in
#'   `[0, 1)`.
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return An object of class `nmfkit_ard_prior`, for [nmf()]'s `ard`.
#' @references Tan, V. Y. F. and Févotte, C. (2013). Automatic relevance
#'   determination in nonnegative matrix factorization with the
#'   beta-divergence. *IEEE Transactions on Pattern Analysis and Machine
#'   Intelligence* 35(7), 1592-1605.
#' @examples
#' set.seed(1)
#' x <- matrix(runif(60 * 3), 60) %*% matrix(runif(3 * 40), 3) +
#'   matrix(runif(60 * 40), 60) * 0.05
#' fit <- nmf(x, rank = 8, ard = ard_prior("l1"))
#' fit$rank
#' fit$ard
#' plot(fit$ard)
#' @export
ard_prior <- function(prior = c("l1", "l2"), shape = NULL, dispersion = NULL,
                      max_iter = 20000L, tol = 1e-5, prune = 1e-3, ...) {
  check_dots_empty()
  prior <- check_choice(prior)
  if (!is.null(shape)) {
    shape <- check_number(shape, min = if (prior == "l1") 2 else 1,
                          strict = TRUE, what = "ard")
  }
  if (!is.null(dispersion)) {
    dispersion <- check_number(dispersion, min = 0, strict = TRUE,
                               what = "ard")
  }
  structure(list(prior = prior, shape = shape, dispersion = dispersion,
                 max_iter = check_count(max_iter, min = 1),
                 tol = check_number(tol, min = 0, what = "ard"),
                 prune = check_number(prune, min = 0, max = 1 - 1e-12,
                                      what = "ard")),
            class = "nmfkit_ard_prior")
}

# nmf()'s `ard`: NULL, "l1", "l2" or ard_prior().
check_ard <- function(ard, call = rlang::caller_env()) {
  if (is.null(ard) || inherits(ard, "nmfkit_ard_prior")) return(ard)
  if (is.character(ard) && length(ard) == 1L && ard %in% c("l1", "l2")) {
    return(ard_prior(ard))
  }
  abort_nmfkit(c("{.arg ard} must be {.code NULL}, {.val l1}, {.val l2} or {.fn ard_prior}.",
                 "x" = "It is {describe_value(ard)}."),
               "ard", call = call, value = ard)
}

# What ARD cannot combine with (it has no entry weights, penalties of its
# own kind or fixed components, and reads the data in memory).
check_ard_use <- function(ard, masked, penalty, fixed, streamed, method,
                          call = rlang::caller_env()) {
  if (is.null(ard)) return(invisible(NULL))
  bad <- c(na_weights_mask = !is.null(masked),
           penalty = !is.null(penalty) && any(penalty > 0),
           fixed = !is.null(fixed), blocks = streamed,
           online = identical(method, "online"))
  if (any(bad)) {
    what <- c(na_weights_mask = "missing entries, weights or a mask",
              penalty = "a penalty (the prior is ARD's penalty)",
              fixed = "fixed components",
              blocks = "data read in blocks",
              online = "method \"online\"")[bad]
    abort_nmfkit(c("{.arg ard} fits complete data in memory without other penalties.",
                   "x" = "This call has {what}."),
                 "ard", call = call)
  }
  invisible(NULL)
}

# The relevance iterations from a fitted model (the first stage, which also
# estimates the dispersion), on x / 2^e as the pipeline fits; the pruned
# model with its `ard` record.
ard_refine <- function(model, x, ard, loss, control, call) {
  m <- nrow(x)
  n <- ncol(x)
  k <- model$rank
  beta <- loss$beta
  e <- data_exponent(if (inherits(x, "dgCMatrix")) x@x else x)
  xs <- scale_data(x, e)
  W0 <- scale_data(unname(model$W), e %/% 2)
  H0 <- scale_data(unname(model$H), e - e %/% 2)
  threads <- control$threads %||% 1L
  none <- integer()
  div0 <- r_divergence(xs, W0, H0, beta, threads, 1, none, none, double(),
                       double())
  a <- ard$shape %||% max(log(m + n), 3)
  mean_x <- (if (inherits(xs, "dgCMatrix")) sum(xs@x) else sum(xs)) /
    (m * as.double(n))
  b <- if (ard$prior == "l1") sqrt((a - 1) * (a - 2) * mean_x / k) else
    pi * (a - 1) * mean_x / (2 * k)
  dof <- m * as.double(n) - k * as.double(m + n)
  phi <- if (is.null(ard$dispersion)) {
    2 * div0 / if (dof > 0) dof else m * as.double(n)
  } else {
    ard$dispersion / 2^(beta * e)
  }
  if (!(phi > 0) || !(b > 0)) {
    abort_nmfkit(c("{.arg ard} needs data the rank-{k} fit does not reproduce exactly.",
                   "x" = "The first-stage fit's divergence is {format(div0)}, so the dispersion estimate is 0.",
                   "i" = "Give {.code ard_prior(dispersion = )}, or a larger rank."),
                 "ard", call = call)
  }
  # the relevance iterations start from random factors (the first stage's
  # components all carry signal, and the multiplicative steps that move
  # signal out of a component are slow), drawn as init = "random" draws
  s0 <- sqrt(mean_x / k)
  W0 <- matrix(stats::runif(m * k, 0, s0), m, k)
  H0 <- matrix(stats::runif(k * n, 0, s0), k, n)
  r <- ard_search(xs, W0, H0, ard, beta, a, b, phi, threads, control)
  lambda <- r$lambda
  active <- ard_active(lambda, r$floor, ard$prune)
  frobenius <- identical(loss$core, "frobenius")
  baseline <- if (frobenius) sum(xs^2) / 2 else model$baseline / 2^(beta * e)
  rel <- if (frobenius) sqrt(r$divergence / baseline) else
    r$divergence / baseline
  W <- scale_data(r$W, -(e %/% 2))[, active, drop = FALSE]
  H <- scale_data(r$H, -(e - e %/% 2))[active, , drop = FALSE]
  comp <- paste0("nmf", seq_len(sum(active)))
  dimnames(W) <- list(model$dimnames[[1]], comp)
  dimnames(H) <- list(comp, model$dimnames[[2]])
  trace <- scale_data(r$lambda_trace, -ard_lambda_power(ard$prior) * e)
  rownames(trace) <- seq_len(k)
  model$ard <- structure(list(
    prior = ard$prior, shape = a,
    scale = scale_data(b, -ard_lambda_power(ard$prior) * e),
    dispersion = phi * 2^(beta * e),
    relevance = trace[, ncol(trace)], floor = scale_data(r$floor,
      -ard_lambda_power(ard$prior) * e),
    active = active, trace = trace, objective = r$loss, stage = r$stage,
    moves = r$moves, iterations = r$iterations,
    refit_iterations = r$trial_iterations, status = r$status,
    first_stage = list(iterations = model$iterations, status = model$status),
    rank_max = k
  ), class = "nmfkit_ard")
  model$W <- W
  model$H <- H
  model$rank <- sum(active)
  model$loss <- rel
  model$iterations <- r$iterations
  model$status <- r$status
  if (!frobenius) {
    model$divergence <- r$divergence[length(r$divergence)] * 2^(beta * e)
    model$objective <- model$divergence
  }
  if (r$status == "max_iter") {
    warn_nmfkit(c("The relevance iterations did not reach {.code tol = {ard$tol}} in {r$iterations} iteration{?s}.",
                  "i" = "Raise {.code max_iter} in {.fn ard_prior}: pruning may be unfinished."),
                "convergence", call = call)
  }
  model
}

# The components kept: relevance above the floor by more than `prune`
# times the largest's (at least one).
ard_active <- function(lambda, floor, prune) {
  active <- (lambda - floor) > prune * (max(lambda) - floor)
  if (!any(active)) active[which.max(lambda)] <- TRUE
  active
}

# Relevances scale as c^(1/2) (L1: norms of factors) or c (L2: squares)
# when the data scale by c.
ard_lambda_power <- function(prior) if (prior == "l1") 0.5 else 1

#' @export
print.nmfkit_ard <- function(x, ...) {
  check_dots_empty()
  cat(sprintf("ARD-NMF (Tan and Fevotte 2013), %s prior: %d of %d components relevant\n",
              toupper(x$prior), sum(x$active), x$rank_max))
  cat(sprintf("shape %s, scale %s, dispersion %s; relevance floor %s\n",
              format(x$shape, digits = 3), format(x$scale, digits = 3),
              format(x$dispersion, digits = 3), format(x$floor, digits = 3)))
  cat(sprintf("%d iteration%s (%s)", x$iterations,
              if (x$iterations == 1L) "" else "s", x$status))
  if (isTRUE(x$refit_iterations > 0L)) {
    cat(sprintf(", %d more refitting removals", x$refit_iterations))
  }
  if (length(x$moves)) {
    cat(sprintf(" in %d runs, between them: %s", length(x$moves) + 1L,
                paste(x$moves, collapse = "; ")))
  }
  cat("; final relevances:\n")
  print(data.frame(component = seq_along(x$relevance),
                   relevance = signif(x$relevance, 3),
                   kept = ifelse(x$active, paste0("nmf", cumsum(x$active)),
                                 "pruned")),
        row.names = FALSE)
  invisible(x)
}

#' @export
plot.nmfkit_ard <- function(x, ...) {
  check_dots_empty()
  tr <- x$trace
  it <- seq_len(ncol(tr))
  cols <- ifelse(x$active, "black", "grey60")
  graphics::matplot(it, t(tr), type = "l", lty = 1, col = cols, log = "xy",
                    xlab = "iteration", ylab = "relevance (lambda)",
                    main = sprintf("ARD relevance: %d of %d components kept",
                                   sum(x$active), x$rank_max))
  graphics::abline(h = x$floor, lty = 2, col = "grey40")
  starts <- which(diff(x$stage %||% rep(1L, ncol(tr))) != 0) + 1
  if (length(starts)) graphics::abline(v = starts, lty = 3, col = "grey50")
  graphics::legend("bottomleft", bty = "n", cex = 0.8,
                   legend = c("kept", "pruned", "floor b / c",
                              if (length(starts)) "merge or removal"),
                   lty = c(1, 1, 2, if (length(starts)) 3),
                   col = c("black", "grey60", "grey40",
                           if (length(starts)) "grey50"))
  invisible(x)
}
