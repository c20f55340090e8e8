# Wasserstein NMF: nmfkit::nmf_wasserstein() against the same algorithm
# written with POT + scipy's L-BFGS-B (bench/wasserstein_pot.py, run with
# Debian's /usr/bin/python3), same machine, same run, same data and starting
# factors. Then the 14 x 14 MNIST example of the OptimalTransport.jl NMF example (nmfkit only; the peer
# would take tens of minutes). Usage: Rscript bench/wasserstein.R
suppressPackageStartupMessages(library(nmfkit))
python <- "/usr/bin/python3"
script <- file.path(dirname(sub("^--file=", "", grep("^--file=",
  commandArgs(FALSE), value = TRUE)[1])), "wasserstein_pot.py")
if (!file.exists(script)) script <- "bench/wasserstein_pot.py"
cat(sprintf("%s, %d cores, R %s\n", format(Sys.time(), "%Y-%m-%d %H:%M %Z"),
            parallel::detectCores(), getRversion()))

moments <- function(w, t) {
  mu <- colSums(w * t)
  o <- order(mu)
  c(mean = mu[o], sd = sqrt(colSums(w * outer(t, mu, "-")^2))[o])
}

# 1. Gaussian mixtures (the OptimalTransport.jl example) ---------------------
set.seed(42)
coord <- seq(-12, 12, length.out = 100)
bump <- function(mu) exp(-(coord - mu)^2)
x <- vapply(1:100, function(i) {
  runif(1) * bump(rnorm(1) + 6) + runif(1) * bump(rnorm(1)) +
    runif(1) * bump(rnorm(1) - 6)
}, numeric(100))
x <- sweep(x, 2, colSums(x), "/")
d0 <- matrix(runif(100 * 3), 100, 3)
l0 <- matrix(runif(3 * 100), 3, 100)
d0 <- sweep(d0, 2, colSums(d0), "/")
l0 <- sweep(l0, 2, colSums(l0), "/")
cost <- outer(coord, coord, "-")^2
cost <- cost / mean(cost)

run_ours <- function(threads) {
  t <- system.time(fit <- nmf_wasserstein(
    x, 3, coords = coord, epsilon = 0.025, rho = 0.05,
    init = list(W = d0, H = l0),
    control = nmf_control(max_iter = 10, inner = 250, threads = threads)))
  list(fit = fit, seconds = t[["elapsed"]],
       cpu = t[["user.self"]] + t[["sys.self"]])
}
ours1 <- run_ours(1L)
ours2 <- run_ours(2L)

dir <- tempfile("wnmf")
dir.create(dir)
wcsv <- function(m, f) utils::write.table(m, file.path(dir, f), sep = ",",
                                          row.names = FALSE, col.names = FALSE)
wcsv(x, "x.csv"); wcsv(cost, "cost.csv"); wcsv(d0, "d0.csv"); wcsv(l0, "l0.csv")
writeLines(c("epsilon,0.025", "rho1,0.05", "rho2,0.05", "outer,10",
             "gtol,1e-4", "maxiter,250"), file.path(dir, "params.csv"))
status <- system2(python, c(script, dir))
if (status != 0) stop("the POT peer failed")
peer <- utils::read.csv(file.path(dir, "result.csv"))
d_peer <- as.matrix(utils::read.csv(file.path(dir, "d.csv"), header = FALSE))

tab <- data.frame(
  implementation = c("nmfkit, 1 thread", "nmfkit, 2 threads",
                     "POT + scipy L-BFGS-B"),
  seconds = c(ours1$seconds, ours2$seconds, peer$seconds),
  cpu_seconds = c(ours1$cpu, ours2$cpu, peer$cpu),
  lbfgs_iterations = c(sum(ours1$fit$steps$iterations),
                       sum(ours2$fit$steps$iterations),
                       peer$lbfgs_iterations),
  objective = c(tail(ours1$fit$loss, 1), tail(ours2$fit$loss, 1),
                peer$objective)
)
cat("\nGaussian mixtures: 100 histograms x 100 bins, rank 3, eps 0.025,",
    "rho 0.05, 10 outer iterations\n")
print(tab, digits = 4, row.names = FALSE)
cat(sprintf("speed-up over POT + scipy, wall time: %.0fx (1 thread), %.0fx (2 threads); CPU time: %.0fx (1 thread); target >= 20x\n",
            peer$seconds / ours1$seconds, peer$seconds / ours2$seconds,
            peer$cpu / ours1$cpu))
cat("atom means and SDs (target means -6, 0, 6 +- 0.5; SDs < 2):\n")
print(rbind(nmfkit = moments(ours1$fit$W, coord),
            pot = moments(d_peer, coord)), digits = 3)

# 2. MNIST 14 x 14 (the example: 256 images, rank 25, eps 0.0025) ------------
has_mnist <- "mnist_digits" %in%
  utils::data(package = "nmfkit")$results[, "Item"]
if (!has_mnist) {
  cat("\nMNIST: data(mnist_digits) is not in this nmfkit build; skipped.\n")
} else {
  env <- new.env()
  utils::data("mnist_digits", package = "nmfkit", envir = env)
  digits <- env$mnist_digits
  if (is.list(digits) && !is.matrix(digits)) digits <- digits[[1]]
  set.seed(1)
  idx <- sample(ncol(digits), 256)
  pool <- kronecker(diag(14), matrix(1, 2, 1))  # 2 x 2 sum pooling
  x14 <- vapply(idx, function(j) {
    as.vector(t(pool) %*% matrix(as.double(digits[, j]), 28, 28) %*% pool)
  }, numeric(196))
  cat("\n")
  for (threads in 1:2) {
    set.seed(2)
    t <- system.time(mfit <- suppressMessages(nmf_wasserstein(
      x14, 25, image_dim = c(14, 14), epsilon = 0.0025, rho = 0.005,
      control = nmf_control(max_iter = 15, inner = 250,
                            threads = threads))))
    cat(sprintf("MNIST 14x14, 256 images, rank 25, eps 0.0025, 15 outer, %d thread%s: %.1f s wall, %.1f s CPU (target < 60 s); %d L-BFGS iterations\n",
                threads, if (threads > 1) "s" else "", t[["elapsed"]],
                t[["user.self"]] + t[["sys.self"]],
                sum(mfit$steps$iterations)))
  }
}
