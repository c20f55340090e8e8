# Joint-NMF distance: the paper's Table I pipeline (trials x 6 comparisons
# on the 11 x 20 Swimmer, jNMF distance and the reference code's Chamfer
# distance) with nmfkit against the same pipeline written with scikit-learn
# (bench/joint_sklearn.py: CD solver with sklearn's defaults, Monte Carlo
# p-bar with K = 1000 Python draws, as the paper's code ran it).
# Usage: Rscript bench/joint.R [trials]   (default 50)
suppressPackageStartupMessages(library(nmfkit))
args <- commandArgs(trailingOnly = TRUE)
trials <- if (length(args)) as.integer(args[1]) else 50L
python <- "/usr/bin/python3"
here <- if (file.exists("bench/joint_sklearn.py")) "bench" else "."

x <- swimmer()
table_one <- function(pbar = "exact", threads = 1L) {
  ctl <- nmf_control(threads = threads)
  res <- replicate(trials, {
    lam <- sample(c(0.1, 1, 10, 100), 1)
    sub <- x[, -sample(256, 26)]
    n <- matrix(runif(length(x)), nrow(x))
    others <- list(x, x[, sample(256)], lam * x, sub, x + n, n)
    c(vapply(others, function(o) {
      nmf_joint(x, o, rank = 10, pbar = pbar, control = ctl)$distance
    }, numeric(1)),
      vapply(others, function(o) {
        chamfer_distance(x, o, variant = "reference_code")
      }, numeric(1)))
  })
  rowMeans(res)
}

cols <- c("X1", "X1P", "lamX1", "subset", "X1+N", "N")
paper <- c(0, 0, 0, 0.052, 1.509, 2.297, 0, 0, 0, 0, 0.741, 1.560)
set.seed(1)
t_exact <- system.time(m_exact <- table_one("exact"))[["elapsed"]]
set.seed(1)
t_mc <- system.time(m_mc <- table_one("montecarlo"))[["elapsed"]]

csv <- tempfile(fileext = ".csv")
utils::write.table(x, csv, sep = ",", row.names = FALSE, col.names = FALSE)
out <- system2(python, c(file.path(here, "joint_sklearn.py"), csv, trials, 1),
               stdout = TRUE)
t_sk <- as.numeric(out[1])
m_sk <- as.numeric(strsplit(out[2], " ")[[1]])

tab <- rbind(paper = paper, nmfkit_exact = m_exact, nmfkit_mc = m_mc,
             sklearn = m_sk)
colnames(tab) <- c(paste0("d:", cols), paste0("cham:", cols))
cat(sprintf("Table I, %d trials x 6 comparisons (jNMF rank 10 + Chamfer)\n",
            trials))
print(round(tab, 3))
cat(sprintf("\nseconds: nmfkit exact p-bar %.1f, nmfkit Monte Carlo %.1f, scikit-learn %.1f\n",
            t_exact, t_mc, t_sk))
cat(sprintf("speed-up over scikit-learn: %.1fx (exact), %.1fx (Monte Carlo)\n",
            t_sk / t_exact, t_sk / t_mc))

# One jNMF fit alone (the NMF is most of the work): nmfkit vs sklearn.
set.seed(2)
n <- matrix(runif(length(x)), nrow(x))
reps <- 20L
t_fit <- system.time(for (i in seq_len(reps)) nmf_joint(x, x + n, rank = 10))[["elapsed"]] / reps
utils::write.table(cbind(x, x + n), csv, sep = ",", row.names = FALSE,
                   col.names = FALSE)
py <- sprintf(paste0(
  "import numpy as np, time, warnings; warnings.filterwarnings('ignore');",
  "from sklearn.decomposition import NMF;",
  "y = np.loadtxt('%s', delimiter=',');",
  "y = y / np.linalg.norm(y, axis=0);",
  "t = time.time();",
  "[NMF(n_components=10).fit_transform(y) for _ in range(%d)];",
  "print((time.time() - t) / %d)"), csv, reps, reps)
t_skfit <- as.numeric(system2(python, c("-c", shQuote(py)), stdout = TRUE))
cat(sprintf("one joint fit (220 x 512, rank 10): nmfkit %.3f s, sklearn %.3f s, ratio %.1fx\n",
            t_fit, t_skfit, t_skfit / t_fit))
