# CPU seconds of one rank choice (issue 38, "search time"), one tool per
# call so each runs in a fresh process: `nmf(x, rank = c(1, hi))` (auto:
# the search, held-out fits at the control's tolerance 1e-4; auto3: at
# `auto_rank(tol = 1e-3)`), the full grid `nmf_rank(x, 1:hi)`, RcppML 1.0's `k = "auto"`. The
# planted problems of bench/rank.R (300 x 200, noise 0.1, seed 1), 1
# thread. CPU (user) seconds, which a shared machine inflates less than
# elapsed ones.
#
# Run: Rscript bench/rank-time.R k loss auto|auto3|grid|rcppml
.libPaths(c(normalizePath("bench/lib-rcppml"), .libPaths()))
suppressPackageStartupMessages(library(nmfkit))
planted_rank <- function(k, m, n, noise, loss) {
  W0 <- matrix(rexp(m * k), m) * (runif(m * k) > 0.4)
  H0 <- matrix(rexp(k * n), k) * (runif(k * n) > 0.4)
  W0[cbind(seq_len(k), seq_len(k))] <- 1
  H0[cbind(seq_len(k), seq_len(k))] <- 1
  mu <- W0 %*% H0
  mu <- mu * 10 / mean(mu)
  if (loss == "kl") {
    matrix(as.numeric(rpois(m * n, mu / noise^2)), m)
  } else {
    pmax(mu + noise * 10 * matrix(rnorm(m * n), m), 0)
  }
}
args <- commandArgs(TRUE)
k <- as.integer(args[1])
loss <- args[2]
what <- args[3]
set.seed(1)
x <- planted_rank(k, 300, 200, 0.1, loss)
hi <- max(10L, 2L * k)
ctl <- nmf_control(threads = 1)
q <- function(e) suppressWarnings(e)
set.seed(1)
t <- system.time(r <- switch(what,
  auto = q(nmf(x, rank = c(1, hi), loss = loss, control = ctl))$rank,
  auto3 = q(nmf(x, rank = auto_rank(1, hi, tol = 1e-3), loss = loss,
                control = ctl))$rank,
  grid = q(nmf_rank(x, 1:hi, loss = loss, control = ctl))$best[["one_se"]],
  rcppml = ncol(RcppML::nmf(x, k = "auto", cv_k_range = c(2, hi), seed = 1,
                            threads = 1, verbose = FALSE)@w)))
cat(sprintf("k %d %s %s: rank %d, user %.2f s, elapsed %.2f s, load %s\n",
            k, loss, what, r, t[["user.self"]], t[["elapsed"]],
            readLines("/proc/loadavg")))
