# ARD-NMF's search (R/ard.R runs it): the relevance iterations in runs, with
# the moves between them that lower the MAP objective.

# The relevance iterations with moves between their runs. The
# multiplicative steps find a local minimum of the MAP objective, and from
# a random start at K > r components it is often one where a planted
# component is split in two (the same row of H, two columns of W; both
# halves carry signal, so neither falls to the floor): on rank-2 data
# started at K = 6 the split fit ended at objective 1974 where the
# unsplit one reaches 1349 (bench/README.md, "Rank"). So when a run
# converges, every merge of two active components (their sum replaced by
# its best rank-one approximation) and every removal of one is scored by
# the objective, and the best move is made only if it lowers the
# objective; the next run starts there. When no move lowers it at once,
# every removal is refitted for `trial` iterations and the best kept if it
# ends lower (a component carrying a profile the planted ones share is
# taken over by them only when refitted; bench/ard-correlated.R). Each
# run's steps never raise the objective, and neither does a move, so the
# whole trace never rises.
# Returns the last run with the runs' traces joined: `stage` numbers the
# run of each iteration, `moves` what was done between them.
ard_search <- function(xs, W, H, ard, beta, a, b, phi, threads, control,
                       chunk = 500L, trial = 200L) {
  m <- nrow(xs)
  n <- ncol(xs)
  k <- ncol(W)
  cst <- if (ard$prior == "l1") m + n + a + 1 else (m + n) / 2 + a + 1
  # the iterations run in chunks (a run restarted from its W, H continues
  # it exactly: lambda is the closed form of W, H), with the moves tried
  # after each, so a split is undone as soon as the merge pays
  run <- function(W, H, iters) {
    core_fit(xs, W, H, core_params(
      "mu", list(threads = threads), beta = beta,
      callback = progress_callback(control, total = ard$max_iter),
      ard = list(prior = ard$prior, a = a, b = b, phi = phi,
                 max_iter = iters, tol = ard$tol)))
  }
  objective <- function(W, H) {
    none <- integer()
    div <- r_divergence(xs, W, H, beta, threads, 1, none, none, double(),
                        double())
    div / phi + cst * sum(log(ard_norms(W, H, ard$prior) + b)) +
      k * cst * (1 - log(cst))
  }
  runs <- list()
  moves <- character()
  stage <- 1L
  used <- 0L     # iterations in the trace
  trials <- 0L   # iterations of refitted removals (not in the trace)
  left <- function() ard$max_iter - used - trials
  restarted <- NULL  # the active count of the last restart after a stall
  repeat {
    r <- run(W, H, min(chunk, left()))
    used <- used + as.integer(r$iterations)
    r$stage <- rep(stage, r$iterations)
    runs <- c(runs, list(r))
    if (r$status %in% c("interrupted", "numerical_error")) break
    W <- r$W
    H <- r$H
    act <- which(ard_active(r$lambda, r$floor, ard$prune))
    now <- r$loss[length(r$loss)]
    best <- if (length(act) >= 2L && length(r$loss)) {
      ard_best_move(r, act, objective, ard$prior)
    }
    # (the objective is in nats, so a margin of 1e-6 is scale-free)
    if (!is.null(best) && best$objective < now - 1e-6) {
      moves <- c(moves, best$what)
      W <- best$W
      H <- best$H
      stage <- stage + 1L
    } else if (r$status == "converged" && length(act) >= 2L &&
               trial > 0L && left() > 0L) {
      # converged with no move that pays at once: each removal refitted
      # for `trial` iterations, the best kept if it ends lower
      best <- ard_refit_removals(W, H, act, run, min(trial, left()))
      trials <- trials + best$iterations
      if (isTRUE(best$interrupted)) {
        r$status <- "interrupted"
        break
      }
      if (is.null(best$W) || !(best$objective < now - 1e-6)) {
        # nor when refitted: the relevance iterations from an ordinary fit
        # at one active component fewer, kept if they end lower
        best <- ard_restart_fewer(xs, length(act) - 1L, k, beta, run,
                                  min(chunk, left()), threads)
        trials <- trials + best$iterations
        if (isTRUE(best$interrupted)) {
          r$status <- "interrupted"
          break
        }
        if (is.null(best$W) || !(best$objective < now - 1e-6)) break
      }
      moves <- c(moves, best$what)
      W <- best$W
      H <- best$H
      stage <- stage + 1L
    } else if (r$status == "converged" || left() <= 0L) {
      break
    } else if (length(act) >= 2L && !identical(restarted, length(act)) &&
               ard_stalled(r$loss)) {
      # crawling, not converging, with no move that pays at once: on
      # Poisson counts at high signal with components sharing a profile the
      # steps lowered the objective by 0.1-0.7 % per 500 iterations for
      # 20,000 at 1.2-1.25 times the planted start's (bench/ard-correlated.R)
      # and the moves tried on convergence never came; the restart from an
      # ordinary fit at one active component fewer, once per active count
      restarted <- length(act)
      best <- ard_restart_fewer(xs, length(act) - 1L, k, beta, run,
                                min(chunk, left()), threads)
      trials <- trials + best$iterations
      if (isTRUE(best$interrupted)) {
        r$status <- "interrupted"
        break
      }
      if (!is.null(best$W) && best$objective < now - 1e-6) {
        moves <- c(moves, best$what)
        W <- best$W
        H <- best$H
        stage <- stage + 1L
      }
    }
    if (left() <= 0L) break
  }
  r$loss <- unlist(lapply(runs, `[[`, "loss"))
  r$divergence <- unlist(lapply(runs, `[[`, "divergence"))
  r$lambda_trace <- do.call(cbind, lapply(runs, `[[`, "lambda_trace"))
  r$stage <- unlist(lapply(runs, `[[`, "stage"))
  r$iterations <- used
  r$trial_iterations <- trials
  r$moves <- moves
  r
}

# Every removal of an active component, each followed by `iters`
# iterations of `run`: the one of lowest objective after them (its W, H,
# objective and description), and the iterations spent on all of them.
# A component the others can take over (a profile shared by the planted
# components, carried by a component of its own) costs the objective at
# once when removed, so ard_best_move() never removes it; refitted, the
# others absorb it.
ard_refit_removals <- function(W, H, act, run, iters) {
  best <- list(objective = Inf)
  spent <- 0L
  for (j in act) {
    W1 <- W
    H1 <- H
    W1[, j] <- 0
    H1[j, ] <- 0
    r <- run(W1, H1, iters)
    spent <- spent + as.integer(r$iterations)
    if (r$status == "interrupted") {
      best$interrupted <- TRUE
      break
    }
    if (r$status == "numerical_error" || !length(r$loss)) next
    obj <- r$loss[length(r$loss)]
    if (obj < best$objective) {
      best <- list(W = r$W, H = r$H, objective = obj,
                   what = sprintf("removed %d and refitted (%d iterations)",
                                  j, as.integer(r$iterations)))
    }
  }
  best$iterations <- spent
  best
}

# The relevance iterations (`iters` of `run`) from an ordinary fit of
# `rank` components under the same beta (nmf(), random start), the other
# k - rank components zero (they stay at the floor): list(W, H,
# objective, what, iterations), or no W when the fit fails. On Poisson
# counts with components sharing a profile, the multiplicative steps from a
# random start settle with a component too many that neither a removal nor
# a refitted removal undoes, where an ordinary fit at the planted rank
# finds the planted factors (bench/ard-correlated.R).
ard_restart_fewer <- function(xs, rank, k, beta, run, iters, threads) {
  start <- tryCatch(withCallingHandlers(
    nmf(xs, rank = rank, loss = beta, init = "random", keep_data = FALSE,
        control = nmf_control(threads = threads)),
    nmfkit_warning_convergence = function(w) invokeRestart("muffleWarning")),
    nmfkit_error = function(e) NULL)
  if (is.null(start)) return(list(iterations = 0L))
  W <- matrix(0, nrow(xs), k)
  H <- matrix(0, k, ncol(xs))
  W[, seq_len(rank)] <- start$W
  H[seq_len(rank), ] <- start$H
  r <- run(W, H, iters)
  out <- list(iterations = as.integer(r$iterations))
  if (r$status == "interrupted") return(c(out, interrupted = TRUE))
  if (r$status == "numerical_error" || !length(r$loss)) return(out)
  c(out, list(W = r$W, H = r$H, objective = r$loss[length(r$loss)],
              what = sprintf("restarted from an ordinary rank-%d fit (%d iterations)",
                             rank, as.integer(r$iterations))))
}

# Whether a run of relevance iterations that has not converged is
# crawling: its objective fell by less than `rel` of itself over the run.
ard_stalled <- function(loss, rel = 1e-2) {
  n <- length(loss)
  n >= 2L && is.finite(loss[1]) && is.finite(loss[n]) &&
    loss[1] - loss[n] < rel * abs(loss[n])
}

# The penalty's f of every component (ard.hpp's ard_norms()).
ard_norms <- function(W, H, prior) {
  if (prior == "l1") colSums(W) + rowSums(H) else
    (colSums(W^2) + rowSums(H^2)) / 2
}

# Every merge of two active components and every removal of one, scored
# by the objective; the lowest (NULL when none is finite).
ard_best_move <- function(r, act, objective, prior) {
  W <- r$W
  H <- r$H
  cand <- list()
  for (j in act) {
    W1 <- W
    H1 <- H
    W1[, j] <- 0
    H1[j, ] <- 0
    cand[[length(cand) + 1L]] <- list(W = W1, H = H1,
                                     what = sprintf("removed %d", j))
  }
  pairs <- utils::combn(act, 2)
  for (p in seq_len(ncol(pairs))) {
    i <- pairs[1, p]
    j <- pairs[2, p]
    one <- rank_one_sum(W[, c(i, j)], H[c(i, j), ], prior)
    W1 <- W
    H1 <- H
    W1[, i] <- one$w
    H1[i, ] <- one$h
    W1[, j] <- 0
    H1[j, ] <- 0
    cand[[length(cand) + 1L]] <- list(W = W1, H = H1,
                                     what = sprintf("merged %d and %d", i, j))
  }
  obj <- vapply(cand, function(cd) objective(cd$W, cd$H), numeric(1))
  if (!any(is.finite(obj))) return(NULL)
  best <- which.min(replace(obj, !is.finite(obj), Inf))
  c(cand[[best]], objective = obj[best])
}

# The best rank-one approximation of w1 h1' + w2 h2' (nonnegative: the
# leading singular vectors of a nonnegative matrix are, Perron-Frobenius),
# from the 2 x 2 core of the QR factors, scaled so that the prior's f is
# smallest for the product (equal L1 norms for "l1", L2 norms for "l2").
rank_one_sum <- function(W2, H2, prior) {
  qw <- qr(W2)
  qh <- qr(t(H2))
  core <- qr.R(qw)[, order(qw$pivot), drop = FALSE] %*%
    t(qr.R(qh)[, order(qh$pivot), drop = FALSE])
  sv <- svd(core, nu = 1, nv = 1)
  u <- abs(qr.Q(qw) %*% sv$u)
  v <- abs(qr.Q(qh) %*% sv$v)
  d <- sv$d[1]
  nw <- if (prior == "l1") sum(u) else sqrt(sum(u^2))
  nh <- if (prior == "l1") sum(v) else sqrt(sum(v^2))
  s <- sqrt(d * nh / nw)
  list(w = as.vector(u) * s, h = as.vector(v) * d / s)
}
