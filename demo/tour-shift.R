# Tour stop: shift-invariant (permutation) NMF on the paper's experiment 1.
# Sourced by demo/tour.R with `out_dir` and `summary_line()` defined.
library(nmfkit)

set.seed(1)
sim <- shifted_shapes(10)                   # a square and a plus, moving
t0 <- proc.time()[["elapsed"]]
std <- nmf(sim$x, rank = 2)                 # standard NMF: blurred mixtures
fit <- nmf_shift(sim$x, rank = 2)           # permutation NMF, best of 3
secs <- proc.time()[["elapsed"]] - t0

# Atoms of both models side by side, images upright, darker = larger.
show_atom <- function(w, title) {
  img <- matrix(w, sim$image_dim[1], sim$image_dim[2])
  image(t(img)[, nrow(img):1], col = gray.colors(64, 1, 0), axes = FALSE,
        asp = 1, main = title, font.main = 1, cex.main = 0.95)
  box(col = "grey70")
}
png(file.path(out_dir, "shift-atoms.png"), width = 880, height = 460)
par(mfrow = c(2, 4), mar = c(0.5, 0.5, 2, 0.5))
for (j in 1:4) show_atom(sim$x[, j], paste("image", j))
for (t in 1:2) show_atom(std$W[, t], paste("nmf() atom", t))
for (t in 1:2) show_atom(fit$W[, t], paste("nmf_shift() atom", t))
dev.off()

png(file.path(out_dir, "shift-placements.png"), width = 880, height = 600)
plot(fit, type = "placements", images = 1:6)
dev.off()

summary_line(sprintf(paste(
  "shift: experiment 1 (square + plus in 10 images of 20x20):",
  "nmf_shift() rel. error %.3f vs nmf() %.3f; %d placements found, %.2f s"),
  utils::tail(fit$loss, 1), utils::tail(std$loss, 1), nrow(instances(fit)),
  secs))
