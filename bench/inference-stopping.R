# How far short of its own optimum a bootstrap replicate stops, by stopping
# rule (issue 36): planted KL counts (m x n, rank 10, as bench/inference.R
# plants them), the fit cached in /tmp; for each of `nrep` column
# replicates, the replicate run 150 iterations is the reference, and each
# rule's stopping point is compared with it: its iterations, CPU seconds
# and the share of the replicate's move (the aligned, column-normalised W
# from the fit's to the reference's) left undone, in norm and for the
# median entry. Rules: "main" (the fit's tol 1e-4 of the fit's first
# violation, cap 50), "main3" (1e-3 of it), "own<tol>" (tol of the
# replicate's own first violation, nmf_bootstrap()'s rule).
#
# Run: Rscript bench/inference-stopping.R 2000 1000 2  (results quoted in
# bench/README.md, "Bootstrap under KL")
suppressPackageStartupMessages(library(nmfkit))
args <- commandArgs(TRUE)
m <- as.integer(args[1]); n <- as.integer(args[2]); k <- 10
nrep <- as.integer(args[3])
rds <- sprintf("/tmp/boot-fit-%d-%d.rds", m, n)
planted <- function(m, n, k, seed) {
  set.seed(seed)
  W0 <- matrix(rexp(m * k), m, k) * (runif(m * k) < 0.5)
  H0 <- matrix(rexp(k * n), k, n) * (runif(n * k) < 0.5)
  matrix(rpois(m * n, W0 %*% H0), m, n)
}
if (file.exists(rds)) fit <- readRDS(rds) else {
  x <- planted(m, n, k, 2)
  set.seed(1)
  fit <- suppressWarnings(nmf(x, k, loss = "kl",
    control = nmf_control(threads = 2)))
  saveRDS(fit, rds)
}
cat("fit", fit$iterations, fit$status, "first viol", fit$first_violation, "\n")
loss <- nmfkit:::fit_loss(fit)
data <- nmfkit:::bootstrap_data(fit, NULL, "columns", loss)
norm_w <- function(W) sweep(W, 2, colSums(W), "/")
rules <- list(
  ref = list(tol = 0, max_iter = 150L, ref = FALSE),
  main = list(tol = 1e-4, max_iter = 50L, ref = TRUE),
  main3 = list(tol = 1e-3, max_iter = 50L, ref = TRUE),
  own0.3 = list(tol = 0.3, max_iter = 50L, ref = FALSE),
  own0.1 = list(tol = 0.1, max_iter = 50L, ref = FALSE),
  own0.03 = list(tol = 0.03, max_iter = 50L, ref = FALSE),
  own0.01 = list(tol = 0.01, max_iter = 50L, ref = FALSE))
W0n <- norm_w(fit$W)
for (b in seq_len(nrep)) {
  res <- list()
  for (nm in names(rules)) {
    r <- rules[[nm]]
    ctl <- nmf_control(threads = 2, max_iter = r$max_iter, tol = r$tol)
    if (r$ref) ctl$tol_reference <- fit$first_violation
    s <- nmfkit:::bootstrap_setup(fit, data, "columns", loss, ctl)
    set.seed(100 + b)
    t <- system.time(out <- nmfkit:::bootstrap_replicate(s))
    res[[nm]] <- list(W = norm_w(out$W), it = out$iterations,
                      cpu = t[["user.self"]] + t[["sys.self"]])
  }
  Wr <- res$ref$W
  disp <- sqrt(sum((Wr - W0n)^2))
  dd <- abs(Wr - W0n)
  for (nm in names(rules)) {
    W <- res[[nm]]$W
    cat(sprintf("rep %d %-8s it %3d cpu %6.2f  disp err %.3f  entry median %.4f\n",
                b, nm, res[[nm]]$it, res[[nm]]$cpu, sqrt(sum((W - Wr)^2)) / disp,
                median(abs(W - Wr) / pmax(dd, 1e-12))))
  }
}
