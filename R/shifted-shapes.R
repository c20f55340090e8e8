#' Images of shapes at random positions (the permutation-NMF experiments)
#'
#' Generates the synthetic data of Barbarino's permutation-NMF experiments.
#' Each image places copies of small binary shapes at uniform random
#' positions fully inside the frame, then adds noise of mean `noise`
#' (uniform on `[0, 2 noise]`) and clips to `[0, 1]`.
#'
#' * Experiment 1 (the defaults): a 3 x 3 `"square"` and a `"plus"` in a
#'   5 x 5 box (both 9 pixels), once each in every 20 x 20 image; overlapping
#'   shapes take the maximum.
#' * Experiment 2: `shifted_shapes(20, frame = c(30, 30), shapes = c("plane",
#'   "tank", "ship"), copies = c(0, 2), overlap = FALSE)`: 0 to 2 copies of
#'   each shape per image (at least one object), placed without overlap with
#'   a `margin` of one pixel between bounding boxes.
#'
#' Built-in shapes (rows top to bottom): `square` 3 x 3; `plus` 5 x 5;
#' `plane` 6 x 7 (`0001000/0011100/1111111/0001000/0001000/0011100`);
#' `tank` 4 x 7 (`0011000/0011111/1111100/1010101`); `ship` 4 x 9
#' (`000010000/000111000/111111111/011111110`).
#'
#' @param n Number of images.
#' @param frame Image size `c(rows, columns)`.
#' @param shapes Names of built-in shapes, or a named list of 0/1 matrices.
#' @param noise Mean of the additive uniform noise (0 for none).
#' @param copies Copies of each shape per image: one number, or a range
#'   `c(min, max)` drawn uniformly per image and shape (images with no
#'   object are drawn again).
#' @param overlap `TRUE`: shapes may overlap (pixel maximum). `FALSE`: they
#'   are placed `margin` pixels apart or more.
#' @param margin Pixels between the bounding boxes of shapes when `overlap`
#'   is `FALSE`.
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return A list with `x` (pixels x `n` matrix, column-major images, with
#'   attribute `image_dim`), `image_dim`, `shapes` (the shape matrices),
#'   `positions` (a data frame with `image`, `shape`, and the 0-based `row`
#'   and `col` of each copy's top-left corner) and `counts` (shapes x images).
#' @examples
#' set.seed(1)
#' sim <- shifted_shapes(10)
#' dim(sim$x)
#' head(sim$positions)
#' image(matrix(sim$x[, 1], 20)[, 20:1], col = gray.colors(32, 1, 0))
#' @export
shifted_shapes <- function(n = 10L, frame = c(20L, 20L),
                           shapes = c("square", "plus"), noise = 0.15,
                           copies = 1L, overlap = TRUE, margin = 1L, ...) {
  check_dots_empty()
  n <- check_count(n, min = 1)
  frame <- check_image_dim(frame, prod(frame))
  shapes <- check_shapes(shapes, frame)
  noise <- check_number(noise, min = 0, max = 0.5)
  copies <- check_copies(copies)
  check_flag(overlap)
  margin <- check_count(margin, min = 0)
  ns <- length(shapes)
  x <- matrix(0, prod(frame), n)
  counts <- matrix(0L, ns, n, dimnames = list(names(shapes), NULL))
  pos <- vector("list", n)
  check_room(shapes, copies, frame, overlap, margin)
  for (j in seq_len(n)) {
    img <- NULL
    # A non-overlapping draw can paint itself into a corner; redraw a bounded
    # number of times, then say that the shapes do not fit.
    for (attempt in seq_len(100L)) {
      k <- if (length(copies) == 1L) rep(copies, ns) else
        copies[1] + sample.int(copies[2] - copies[1] + 1L, ns, TRUE) - 1L
      if (sum(k) == 0L) next
      img <- place_shapes(shapes, k, frame, overlap, margin)
      if (!is.null(img)) break
    }
    if (is.null(img)) abort_no_room(copies, frame, margin)
    x[, j] <- img$image
    counts[, j] <- as.integer(k)
    pos[[j]] <- data.frame(image = j, shape = img$shape, row = img$row,
                           col = img$col)
  }
  if (noise > 0) {
    x <- pmin(x + matrix(stats::runif(length(x), 0, 2 * noise), nrow(x)), 1)
  }
  attr(x, "image_dim") <- frame
  positions <- do.call(rbind, pos)
  positions$shape <- factor(names(shapes)[positions$shape],
                            levels = names(shapes))
  list(x = x, image_dim = frame, shapes = shapes, positions = positions,
       counts = counts)
}

# Draws one image: copies k[i] of shape i, in shape order, at uniform
# positions (0-based top-left corners). Overlapping copies are drawn at once
# (linear in the copies); non-overlapping ones one at a time among the
# corners still free, from an occupancy grid. NULL when no free corner is
# left for a copy (the caller redraws the image).
place_shapes <- function(shapes, k, frame, overlap, margin) {
  img <- matrix(0, frame[1], frame[2])
  taken <- matrix(FALSE, frame[1], frame[2])
  out <- list(shape = vector("list", length(shapes)),
              row = vector("list", length(shapes)),
              col = vector("list", length(shapes)))
  for (i in seq_along(shapes)) {
    sh <- shapes[[i]]
    h <- nrow(sh)
    w <- ncol(sh)
    nr <- frame[1] - h + 1L
    if (overlap) {
      r0 <- sample.int(nr, k[i], TRUE) - 1L
      c0 <- sample.int(frame[2] - w + 1L, k[i], TRUE) - 1L
    } else {
      r0 <- c0 <- integer(k[i])
      for (c in seq_len(k[i])) {
        free <- which(free_corners(taken, h, w, margin))
        if (!length(free)) return(NULL)
        corner <- free[sample.int(length(free), 1L)] - 1L
        r0[c] <- corner %% nr
        c0[c] <- corner %/% nr
        taken[r0[c] + seq_len(h), c0[c] + seq_len(w)] <- TRUE
      }
    }
    # paint cell by cell of the shape, all copies at once
    for (a in seq_len(h)) for (b in seq_len(w)) {
      if (sh[a, b] <= 0) next
      idx <- r0 + a + (c0 + b - 1L) * frame[1]
      img[idx] <- pmax(img[idx], sh[a, b])
    }
    out$shape[[i]] <- rep.int(i, k[i])
    out$row[[i]] <- r0
    out$col[[i]] <- c0
  }
  c(list(image = as.vector(img)), lapply(out, unlist))
}

# For every top-left corner (0-based, as a logical matrix of the corners),
# whether an h x w box there, widened by `margin` on each side, touches no
# taken pixel. One summed-area table: O(frame area) per copy.
free_corners <- function(taken, h, w, margin) {
  fr <- nrow(taken)
  fc <- ncol(taken)
  s <- matrix(0L, fr + 1L, fc + 1L)
  s[-1, -1] <- taken
  for (r in seq_len(fr) + 1L) s[r, ] <- s[r, ] + s[r - 1L, ]
  for (c in seq_len(fc) + 1L) s[, c] <- s[, c] + s[, c - 1L]
  r0 <- seq_len(fr - h + 1L) - 1L
  c0 <- seq_len(fc - w + 1L) - 1L
  r1 <- pmax(0L, r0 - margin)
  r2 <- pmin(fr, r0 + h + margin)
  c1 <- pmax(0L, c0 - margin)
  c2 <- pmin(fc, c0 + w + margin)
  n <- s[r2 + 1L, c2 + 1L, drop = FALSE] - s[r1 + 1L, c2 + 1L, drop = FALSE] -
    s[r2 + 1L, c1 + 1L, drop = FALSE] + s[r1 + 1L, c1 + 1L, drop = FALSE]
  n == 0L
}

# Non-overlapping copies at `margin` apart cannot fit when their boxes, each
# widened by the margin on one side, cover more than the frame so widened.
check_room <- function(shapes, copies, frame, overlap, margin,
                       call = rlang::caller_env()) {
  if (overlap) return(invisible())
  need <- sum(copies[1] * vapply(shapes, function(s) {
    (nrow(s) + margin) * (ncol(s) + margin)
  }, numeric(1)))
  if (need > prod(frame + margin)) abort_no_room(copies, frame, margin, call)
  invisible()
}

abort_no_room <- function(copies, frame, margin, call = rlang::caller_env()) {
  n_copies <- if (length(copies) == 1L) {
    cli::pluralize("{copies} cop{?y/ies}")
  } else {
    sprintf("%d to %d copies", copies[1], copies[2])
  }
  abort_nmfkit(c("The shapes cannot fit without overlap.",
                 "x" = "{n_copies} of each shape, {margin} pixel{?s} apart, do not fit in a {frame[1]} x {frame[2]} frame.",
                 "i" = "Use fewer {.arg copies}, a larger {.arg frame}, a smaller {.arg margin}, or {.code overlap = TRUE}."),
               "copies", call = call)
}

builtin_shapes <- function() {
  bits <- function(...) {
    rows <- c(...)
    do.call(rbind, lapply(strsplit(rows, ""), as.numeric))
  }
  plus <- matrix(0, 5, 5)
  plus[3, ] <- 1
  plus[, 3] <- 1
  list(
    square = matrix(1, 3, 3),
    plus = plus,
    plane = bits("0001000", "0011100", "1111111", "0001000", "0001000",
                 "0011100"),
    tank = bits("0011000", "0011111", "1111100", "1010101"),
    ship = bits("000010000", "000111000", "111111111", "011111110")
  )
}

check_shapes <- function(shapes, frame, arg = rlang::caller_arg(shapes),
                         call = rlang::caller_env()) {
  known <- builtin_shapes()
  if (is.character(shapes)) {
    bad <- setdiff(shapes, names(known))
    if (length(bad) || !length(shapes)) {
      abort_nmfkit(c("{.arg {arg}} must name built-in shapes ({.val {names(known)}}) or be a list of 0/1 matrices.",
                     "x" = "Unknown: {.val {bad}}."), "shapes", call = call)
    }
    shapes <- known[shapes]
  }
  # NA, NaN or Inf entries are not in [0, 1] (isTRUE: never an NA test)
  good_shape <- function(s) {
    is.matrix(s) && is.numeric(s) && length(s) > 0L && !anyNA(s) &&
      isTRUE(all(s >= 0 & s <= 1)) && isTRUE(any(s > 0))
  }
  ok <- is.list(shapes) && !is.data.frame(shapes) && length(shapes) > 0L
  if (!ok) {
    abort_nmfkit(c("{.arg {arg}} must be a list of numeric matrices with entries in [0, 1], none all zero.",
                   "x" = "It is {.obj_type_friendly {shapes}}."),
                 "shapes", call = call)
  }
  bad <- which(!vapply(shapes, good_shape, logical(1)))
  if (length(bad)) {
    s <- shapes[[bad[1]]]
    found <- if (!is.matrix(s) || !is.numeric(s)) {
      cli::format_inline("{.obj_type_friendly {s}}")
    } else if (!length(s)) {
      "an empty matrix"
    } else if (anyNA(s)) {
      sprintf("a matrix with %d missing (NA or NaN) entr%s", sum(is.na(s)),
              if (sum(is.na(s)) == 1) "y" else "ies")
    } else if (any(s < 0 | s > 1)) {
      sprintf("a matrix with entries from %s to %s", format(min(s)),
              format(max(s)))
    } else {
      "all zero"
    }
    nm <- names(shapes)[bad[1]]
    which_one <- if (!is.null(nm) && nzchar(nm)) sprintf("%d (%s)", bad[1], nm)
                 else bad[1]
    abort_nmfkit(c("{.arg {arg}} must be a list of numeric matrices with entries in [0, 1], none all zero.",
                   "x" = "Shape {which_one} is {found}."),
                 "shapes", call = call)
  }
  big <- vapply(shapes, function(s) nrow(s) > frame[1] || ncol(s) > frame[2],
                logical(1))
  if (any(big)) {
    abort_nmfkit(c("Every shape must fit in the {frame[1]} x {frame[2]} frame.",
                   "x" = "{cli::qty(sum(big))}Shape{?s} {paste(which(big), collapse = ', ')} {cli::qty(sum(big))}{?is/are} larger."),
                 "shapes", call = call)
  }
  if (is.null(names(shapes))) {
    names(shapes) <- paste0("shape", seq_along(shapes))
  }
  shapes
}

check_copies <- function(copies, arg = rlang::caller_arg(copies),
                         call = rlang::caller_env()) {
  ok <- is.numeric(copies) && length(copies) %in% 1:2 && !anyNA(copies) &&
    all(copies >= 0) && all(copies <= .Machine$integer.max) && all(copies == round(copies)) && max(copies) >= 1 &&
    (length(copies) == 1L || copies[1] <= copies[2])
  if (!ok) {
    abort_nmfkit(c("{.arg {arg}} must be a whole number or a range c(min, max) of whole numbers, with max >= 1.",
                   "x" = "It is {.code {deparse(copies)}}."),
                 "copies", call = call)
  }
  as.integer(copies)
}
