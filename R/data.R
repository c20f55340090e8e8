#' The Swimmer data sets
#'
#' Generates the 256 binary images of the Swimmer data: a torso plus four
#' limbs, each in one of four positions, every combination once. Image `k`
#' (1 to 256) puts limb `L` (0 to 3) in position `(k - 1) %/% 4^L %% 4`.
#'
#' * `"11x20"` is the version used by the joint-NMF paper (Gillis's file):
#'   220 pixels, 26 on per image (a 14-pixel torso and 3-pixel limbs).
#'   `matrix(x[, k], 20, 11)` shows image `k` upright.
#' * `"32x32"` is Donoho and Stodden's original: 1024 pixels, 37 on per image
#'   (a 17-pixel torso and 5-pixel limbs).
#'
#' @param size `"11x20"` or `"32x32"`.
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return A pixels x 256 numeric matrix of zeros and ones (columns are
#'   images, pixels in column-major order) with attribute `image_dim`
#'   (`c(20, 11)` or `c(32, 32)`), which the plot methods use.
#' @references Donoho, D. and Stodden, V. (2003). When does non-negative
#'   matrix factorization give a correct decomposition into parts? NIPS 16.
#' @examples
#' x <- swimmer()
#' dim(x)
#' image(matrix(x[, 1], 20, 11)[, 11:1], col = gray.colors(2, 1, 0))
#' @export
swimmer <- function(size = c("11x20", "32x32"), ...) {
  check_dots_empty()
  size <- check_choice(size)
  spec <- if (size == "11x20") swimmer_11x20() else swimmer_32x32()
  n_pix <- prod(spec$image_dim)
  x <- matrix(0, n_pix, 256L)
  for (k in seq_len(256L)) {
    d <- ((k - 1L) %/% 4L^(0:3)) %% 4L
    on <- c(spec$torso, unlist(lapply(0:3, function(L) spec$limbs[[L + 1L]][[d[L + 1L]  + 1L]])))
    x[on, k] <- 1
  }
  attr(x, "image_dim") <- spec$image_dim
  x
}

# Pixel (r, c), 0-based, of the 11 x 20 Swimmer sits at row 20 r + c + 1.
swimmer_11x20 <- function() {
  px <- function(...) {
    rc <- matrix(c(...), ncol = 2, byrow = TRUE)
    20L * rc[, 1] + rc[, 2] + 1L
  }
  torso <- c(px(cbind(5, 5:14) |> t() |> c()), px(4, 5, 6, 5, 4, 14, 6, 14))
  limbs <- list(
    list(px(6, 15, 6, 16, 6, 17), px(7, 15, 8, 16, 9, 17),
         px(7, 14, 8, 14, 9, 14), px(7, 13, 8, 12, 9, 11)),
    list(px(4, 15, 4, 16, 4, 17), px(3, 15, 2, 16, 1, 17),
         px(3, 14, 2, 14, 1, 14), px(3, 13, 2, 12, 1, 11)),
    list(px(6, 4, 6, 3, 6, 2), px(7, 4, 8, 3, 9, 2),
         px(7, 5, 8, 5, 9, 5), px(7, 6, 8, 7, 9, 8)),
    list(px(4, 4, 4, 3, 4, 2), px(3, 4, 2, 3, 1, 2),
         px(3, 5, 2, 5, 1, 5), px(3, 6, 2, 7, 1, 8))
  )
  list(image_dim = c(20L, 11L), torso = torso, limbs = limbs)
}

# Pixel (row, col), 0-based, of the 32 x 32 Swimmer sits at row + 32 col + 1.
swimmer_32x32 <- function() {
  px <- function(r, c) as.integer(r + 32L * c + 1L)
  torso <- c(px(9, 14:16), px(10:20, 15), px(21, 14:16))
  t <- 1:5
  limb <- function(r0, c0, dh, dv) {
    list(px(r0, c0 + dh * t), px(r0 + dv * t, c0),
         px(r0 + t, c0 + dh * t), px(r0 - t, c0 + dh * t))
  }
  limbs <- list(limb(21, 16, 1, 1), limb(21, 14, -1, 1),
                limb(9, 16, 1, -1), limb(9, 14, -1, -1))
  list(image_dim = c(32L, 32L), torso = torso, limbs = limbs)
}
