test_that("the 11 x 20 Swimmer matches Gillis's file", {
  x <- swimmer()
  expect_identical(dim(x), c(220L, 256L))
  expect_identical(attr(x, "image_dim"), c(20L, 11L))
  expect_identical(sum(x), 6656)
  expect_identical(sum(outer(seq_len(220), seq_len(256)) * x), 94023488)
  expect_true(all(colSums(x) == 26))
  usage <- table(rowSums(x))
  expect_identical(as.vector(usage), c(158L, 48L, 14L))
  expect_identical(names(usage), c("0", "64", "256"))
  expect_identical(anyDuplicated(t(x)), 0L)
})

test_that("the 32 x 32 Swimmer has 37 ink pixels per distinct image", {
  x <- swimmer("32x32")
  expect_identical(dim(x), c(1024L, 256L))
  expect_identical(attr(x, "image_dim"), c(32L, 32L))
  expect_true(all(colSums(x) == 37))
  expect_identical(sum(rowSums(x) == 256), 17L)
  expect_identical(anyDuplicated(t(x)), 0L)
  expect_error(swimmer("16x16"), class = "nmfkit_error_choice")
})

test_that("NMF of the Swimmer finds parts: torso plus limb positions", {
  x <- swimmer()
  set.seed(1)
  # rank 17 has poor local minima (relative error 0.13) that some starts
  # reach, NNDSVDa among them for some seeds: keep the best of three.
  # HALS from NNDSVDa (the default on dense data is ANLS from a random start,
  # which reaches a low error here with a less part-like basis)
  fit <- nmf(x, 17, method = "hals", nrun = 3,
             control = nmf_control(max_iter = 500))
  expect_lt(tail(fit$loss, 1), 0.05)
  # each of the 16 limb positions is matched by some basis vector
  limbs <- nmfkit:::swimmer_11x20()$limbs
  parts <- sapply(unlist(limbs, recursive = FALSE), function(px) {
    v <- numeric(220)
    v[px] <- 1
    v
  })
  expect_gt(min(best_cosine(parts, fit$W)), 0.6)
})

test_that("example_counts(): a bad dir or a corrupt file is a classed error", {
  expect_error(example_counts(dir = NULL), class = "nmfkit_error_filepath")
  expect_error(example_counts_available(dir = NULL),
               class = "nmfkit_error_filepath")
  expect_error(example_counts_available(dir = c("a", "b")),
               class = "nmfkit_error_filepath")
  dir <- withr::local_tempdir()
  writeLines("not R data", file.path(dir, "pbmc_facs.RData"))
  expect_true(example_counts_available("pbmc", dir = dir))
  cnd <- expect_error(example_counts("pbmc", dir = dir),
                      class = "nmfkit_error_filepath")
  # the message names the argument the file came from
  expect_match(cli::ansi_strip(conditionMessage(cnd)), "`dir`",
               fixed = TRUE)
  other <- 1
  save(other, file = file.path(dir, "pbmc_facs.RData"))
  expect_error(example_counts("pbmc", dir = dir),
               class = "nmfkit_error_filepath")
})
