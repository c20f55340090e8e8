test_that("shapes that cannot fit without overlap are a classed error", {
  expect_error(
    shifted_shapes(1, frame = c(5, 5), shapes = "square", copies = 4,
                   overlap = FALSE),
    class = "nmfkit_error_copies"
  )
  expect_snapshot(error = TRUE, {
    shifted_shapes(1, frame = c(5, 5), shapes = "square", copies = 4,
                   overlap = FALSE)
  })
  expect_error(shifted_shapes(2, copies = 1e6, overlap = FALSE),
               class = "nmfkit_error_copies")
  # the area bound passes (3 * 4 * 4 <= 5 * 11) but three 3 x 3 squares a
  # pixel apart need 11 columns: bounded redraws, then the same error
  expect_error(
    withr::with_seed(1, shifted_shapes(1, frame = c(4, 10), shapes = "square",
                                       copies = 3, overlap = FALSE)),
    class = "nmfkit_error_copies"
  )
})

test_that("non-overlapping shapes keep their margin and tight fits work", {
  sim <- withr::with_seed(3, shifted_shapes(5, frame = c(8, 8),
                                             shapes = "square", copies = 4,
                                             overlap = FALSE, noise = 0))
  expect_equal(unname(sim$counts[1, ]), rep(4L, 5))
  for (j in 1:5) {
    p <- sim$positions[sim$positions$image == j, ]
    for (a in 1:3) for (b in (a + 1):4) {
      gap <- max(abs(p$row[a] - p$row[b]), abs(p$col[a] - p$col[b]))
      expect_gte(gap, 4) # 3 pixels of shape + 1 of margin
    }
    expect_equal(sum(sim$x[, j]), 4 * 9)
  }
  sim2 <- withr::with_seed(4, shifted_shapes(
    4, frame = c(30, 30), shapes = c("plane", "tank", "ship"),
    copies = c(0, 2), overlap = FALSE, noise = 0))
  mass <- vapply(sim2$shapes, sum, numeric(1))
  expect_equal(colSums(sim2$x), colSums(sim2$counts * mass))
})

test_that("many overlapping copies take linear time, not quadratic", {
  sim <- withr::with_seed(1, shifted_shapes(1, copies = 2e5, noise = 0))
  expect_equal(nrow(sim$positions), 4e5)
  # so many copies of the 3 x 3 square cover every pixel
  expect_true(all(sim$x == 1))
  expect_true(all(sim$positions$row >= 0 & sim$positions$row <= 17))
})
