# Stop 1: standard NMF learns the parts of the Swimmer images.
x <- swimmer()
set.seed(1)
fit <- nmf(x, rank = 17, nrun = 3, control = nmf_control(max_iter = 500))
print(fit)

png(file.path(out_dir, "nmf-swimmer-data.png"), width = 900, height = 260)
plot_idx <- c(1, 2, 5, 22, 86, 171, 256, 100)
nmfkit:::plot_images(x[, plot_idx], attr(x, "image_dim"),
                     titles = paste("image", plot_idx), ncol = 8)
dev.off()

png(file.path(out_dir, "nmf-swimmer-parts.png"), width = 900, height = 560)
plot(fit, type = "basis")
dev.off()

summary_line(sprintf(
  "NMF (HALS) on Swimmer 11x20 (220 x 256), rank 17: relative error %.2e, %d iterations (%s); parts in nmf-swimmer-parts.png",
  tail(fit$loss, 1), fit$iterations, fit$status))
