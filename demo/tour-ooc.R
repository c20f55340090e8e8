# Data larger than memory: the PBMC counts (log1p of counts per 10,000,
# real data) written to HDF5 in the 10x layout, fitted streamed from the
# file (the same fit as in memory), online, and under a multisession plan.
library(Matrix)
if (!requireNamespace("HDF5Array", quietly = TRUE) ||
    !requireNamespace("rhdf5", quietly = TRUE)) {
  stop("HDF5Array and rhdf5 are not installed: run make deps")
}
pbmc <- example_counts("pbmc")
x <- pbmc$counts
x <- x[rowSums(x > 0) >= 10, ]
path <- tempfile(fileext = ".h5")
t_write <- system.time(xt <- write_tenx(x, path))[["elapsed"]]
summary_line(sprintf("pbmc_facs %d genes x %d cells written to a TENxMatrix in %.1f s (%.0f MB on disk, %.0f MB as a dgCMatrix)",
                     nrow(x), ncol(x), t_write, file.size(path) / 2^20,
                     as.numeric(object.size(x)) / 2^20))
ctrl <- nmf_control(max_iter = 50, block_size = 2^24)
set.seed(1)
t_mem <- system.time(fm <- nmf(x, 8, control = ctrl))[["elapsed"]]
set.seed(1)
t_str <- system.time(fs <- nmf(xt, 8, control = ctrl))[["elapsed"]]
summary_line(sprintf("  rank 8, 50 iterations: in memory %.1f s, streamed from HDF5 in blocks of 16 MB %.1f s; same iterations: %s, largest difference in W %.1e",
                     t_mem, t_str, fm$iterations == fs$iterations,
                     max(abs(fm$W - fs$W)) / max(fm$W)))
passes <- 1:5
online <- vapply(passes, function(p) {
  set.seed(1)
  f <- nmf(xt, 8, method = "online",
           control = nmf_control(max_iter = p, tol = 0))
  f$loss[length(f$loss)]
}, numeric(1))
batch <- vapply(passes, function(p) {
  set.seed(1)
  f <- nmf(xt, 8, control = nmf_control(max_iter = p, tol = 0))
  f$loss[length(f$loss)]
}, numeric(1))
summary_line(sprintf("  error after 1..5 passes: online %s; streamed batch %s",
                     paste(sprintf("%.4f", online), collapse = " "),
                     paste(sprintf("%.4f", batch), collapse = " ")))
png(file.path(out_dir, "ooc-online.png"), width = 640, height = 420)
plot(passes, batch, type = "b", log = "y", ylim = range(online, batch),
     xlab = "passes over the data", ylab = "relative error", xaxt = "n",
     main = "pbmc_facs from HDF5: error after each pass (rank 8)")
axis(1, at = passes)
lines(passes, online, type = "b", col = "firebrick", pch = 19)
legend("topright", c("streamed batch", "online"),
       col = c("black", "firebrick"), pch = c(1, 19), bty = "n")
dev.off()
future::plan("multisession", workers = 2)
set.seed(1)
fp <- nmf(xt, 8, control = nmf_control(max_iter = 10, block_size = 2^24))
future::plan("sequential")
set.seed(1)
fq <- nmf(xt, 8, control = nmf_control(max_iter = 10, block_size = 2^24))
summary_line(sprintf("  10 iterations, one future per block on 2 multisession workers: identical to sequential: %s",
                     identical(fp$W, fq$W)))
unlink(path)
