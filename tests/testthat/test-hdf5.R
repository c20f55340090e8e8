test_that("need_packages() names what is missing, with a classed error", {
  expect_error(nmfkit:::need_packages("nmfkitNoSuchPackage", "write_tenx"),
               class = "nmfkit_error_package")
  expect_snapshot(nmfkit:::need_packages(c("nmfkitNoA", "nmfkitNoB"),
                                         "write_tenx"), error = TRUE)
})

test_that("write_tenx() round-trips a dgCMatrix exactly, dimnames included", {
  skip_if_no_hdf5()
  set.seed(1)
  x <- tenx_counts()
  path <- withr::local_tempfile(fileext = ".h5")
  m <- write_tenx(x, path)
  expect_s4_class(m, "TENxMatrix")
  expect_identical(dim(m), dim(x))
  expect_identical(dimnames(m), dimnames(x))
  expect_identical(tenx_as_dgc(m), x)
  # counts are stored as 32-bit integers, other values as doubles
  expect_identical(DelayedArray::type(m), "integer")
  expect_identical(as.vector(rhdf5::h5read(path, "matrix/indices")),
                   x@i)
  expect_equal(as.vector(rhdf5::h5read(path, "matrix/indptr",
                                       bit64conversion = "double")), x@p)
  expect_equal(as.vector(rhdf5::h5read(path, "matrix/shape")), dim(x))

  y <- x * 0.5
  path2 <- withr::local_tempfile(fileext = ".h5")
  m2 <- write_tenx(y, path2)
  expect_identical(DelayedArray::type(m2), "double")
  expect_identical(tenx_as_dgc(m2), y)
})

test_that("write_tenx() stores any real values, zeros left out", {
  skip_if_no_hdf5()
  x <- Matrix::sparseMatrix(i = c(1, 2, 3, 4, 1), j = c(1, 1, 2, 3, 4),
                            x = c(-2, NA, Inf, 0, 1e300), dims = c(5, 4))
  path <- withr::local_tempfile(fileext = ".h5")
  m <- write_tenx(x, path)
  expect_identical(DelayedArray::type(m), "double")
  expect_identical(tenx_as_dgc(m), Matrix::drop0(x))
  expect_equal(length(rhdf5::h5read(path, "matrix/data")), 4)
})

test_that("matrices without names, with empty columns or no nonzeros", {
  skip_if_no_hdf5()
  set.seed(2)
  x <- tenx_counts(names = FALSE)
  path <- withr::local_tempfile(fileext = ".h5")
  m <- write_tenx(x, path)
  expect_null(dimnames(m)[[1]])
  expect_null(dimnames(m)[[2]])
  expect_identical(tenx_as_dgc(m), x)
  expect_false(any(c("genes", "barcodes") %in% rhdf5::h5ls(path)$name))

  z <- Matrix::sparseMatrix(i = integer(), j = integer(), x = numeric(),
                            dims = c(6, 3))
  path2 <- withr::local_tempfile(fileext = ".h5")
  expect_identical(tenx_as_dgc(write_tenx(z, path2)), z)

  # row names only
  rownames(x) <- paste0("r", seq_len(nrow(x)))
  path3 <- withr::local_tempfile(fileext = ".h5")
  m3 <- write_tenx(x, path3)
  expect_identical(dimnames(m3), list(rownames(x), NULL))
  expect_identical(tenx_as_dgc(m3), x)
})

test_that("dense, data frame, triplet and DelayedMatrix input", {
  skip_if_no_hdf5()
  set.seed(3)
  x <- tenx_counts(20, 12)
  d <- as.matrix(x)
  expect_identical(tenx_as_dgc(write_tenx(d, withr::local_tempfile())), x)
  storage.mode(d) <- "integer"
  expect_identical(tenx_as_dgc(write_tenx(d, withr::local_tempfile())), x)
  df <- as.data.frame(as.matrix(x))
  expect_equal(tenx_as_dgc(write_tenx(df, withr::local_tempfile())), x)
  tx <- methods::as(x, "TsparseMatrix")
  expect_identical(tenx_as_dgc(write_tenx(tx, withr::local_tempfile())), x)
  # a TENxMatrix re-written (e.g. with another chunk size or level)
  m <- write_tenx(x, withr::local_tempfile())
  m2 <- write_tenx(m, withr::local_tempfile(), chunk = 7, level = 4)
  expect_identical(tenx_as_dgc(m2), x)
  expect_identical(DelayedArray::type(m2), "integer")
  h <- HDF5Array::writeHDF5Array(as.matrix(x), withr::local_tempfile(),
                                 with.dimnames = TRUE)
  expect_identical(tenx_as_dgc(write_tenx(h, withr::local_tempfile())), x)
})

test_that("write_tenx() writes in blocks of DelayedArray's block size", {
  skip_if_no_hdf5()
  set.seed(4)
  x <- tenx_counts(30, 40, density = 0.3)
  old <- DelayedArray::getAutoBlockSize()
  withr::defer(suppressMessages(DelayedArray::setAutoBlockSize(old)))
  suppressMessages(DelayedArray::setAutoBlockSize(12 * 25))  # 25 nonzeros
  blocks <- nmfkit:::nnz_blocks(x@p, 25)
  expect_gt(length(blocks), 10)
  expect_identical(unlist(blocks), seq_len(ncol(x)))
  path <- withr::local_tempfile(fileext = ".h5")
  expect_identical(tenx_as_dgc(write_tenx(x, path)), x)
  d <- as.matrix(x)
  expect_identical(tenx_as_dgc(write_tenx(d, withr::local_tempfile())), x)
  # a column with more nonzeros than a block holds is a block of its own
  expect_identical(nmfkit:::nnz_blocks(c(0L, 1L, 40L, 41L), 5),
                   list(1L, 2L, 3L))
})

test_that("appended blocks equal the whole", {
  skip_if_no_hdf5()
  set.seed(5)
  x <- tenx_counts(35, 30)
  x[, 10:14] <- 0  # a block with no nonzeros
  x <- Matrix::drop0(x)
  path <- withr::local_tempfile(fileext = ".h5")
  w <- tenx_writer(path, nrow = 35, type = "integer")
  expect_s3_class(w, "nmfkit_tenx_writer")
  cuts <- list(1, 2:9, integer(), 10:14, 15, 16:30)
  for (cols in cuts) w$append(x[, cols, drop = FALSE])
  # after every append the file holds the columns written so far
  expect_identical(w$info()$dim, c(35L, 30L))
  expect_equal(w$info()$nnz, length(x@x))
  m <- w$close()
  expect_identical(tenx_as_dgc(m), x)
  expect_true(w$info()$closed)

  # dense blocks, names from the blocks, a reader between appends
  path2 <- withr::local_tempfile(fileext = ".h5")
  w2 <- tenx_writer(path2, nrow = 35)
  w2$append(as.matrix(x[, 1:12]))
  mid <- read_tenx(path2)
  expect_identical(tenx_as_dgc(mid), x[, 1:12])
  w2$append(x[, 13:30])
  expect_identical(tenx_as_dgc(w2$close()), x)
})

test_that("the writer's chunk size and level reach the file", {
  skip_if_no_hdf5()
  set.seed(6)
  x <- tenx_counts(200, 300, density = 0.2, names = FALSE)
  p0 <- withr::local_tempfile(fileext = ".h5")
  p6 <- withr::local_tempfile(fileext = ".h5")
  write_tenx(x, p0, chunk = 1000, level = 0)
  write_tenx(x, p6, chunk = 1000, level = 6)
  expect_lt(file.size(p6), 0.8 * file.size(p0))
  fid <- rhdf5::H5Fopen(p0)
  withr::defer(rhdf5::H5Fclose(fid))
  did <- rhdf5::H5Dopen(fid, "matrix/data")
  withr::defer(rhdf5::H5Dclose(did))
  pl <- rhdf5::H5Dget_create_plist(did)
  withr::defer(rhdf5::H5Pclose(pl))
  expect_equal(rhdf5::H5Pget_chunk(pl), 1000)
  expect_equal(rhdf5::H5Pget_nfilters(pl), 0)
})

test_that("a nested group, UTF-8 names, overwrite", {
  skip_if_no_hdf5()
  set.seed(7)
  x <- tenx_counts(10, 6)
  rownames(x)[1] <- "g\u00e8ne"
  colnames(x)[2] <- "cellule_\u00e9"
  path <- withr::local_tempfile(fileext = ".h5")
  m <- write_tenx(x, path, group = "/a/b/")
  expect_identical(tenx_as_dgc(read_tenx(path, "a/b")), x)
  expect_error(write_tenx(x, path), class = "nmfkit_error_exists")
  m2 <- write_tenx(x * 2, path, overwrite = TRUE)
  expect_identical(tenx_as_dgc(m2), x * 2)
})

test_that("the writer prints and refuses to append once closed", {
  skip_if_no_hdf5()
  path <- withr::local_tempfile(fileext = ".h5")
  w <- tenx_writer(path, nrow = 4)
  expect_output(print(w), "so far: 4 x 0 with 0 nonzeros")
  w$append(matrix(1, 4, 2))
  expect_output(print(w), "4 x 2 with 8 nonzeros")
  w$close()
  expect_output(print(w), "(closed)", fixed = TRUE)
  expect_error(w$append(matrix(1, 4, 1)), class = "nmfkit_error_closed")
  expect_identical(tenx_as_dgc(w$close()),
                   methods::as(matrix(1, 4, 2), "CsparseMatrix"))
})

test_that("a failed write leaves no file; a rejected block leaves the file as it was", {
  skip_if_no_hdf5()
  x <- Matrix::sparseMatrix(i = 1:3, j = 1:3, x = c(1, 2.5, 3))
  path <- withr::local_tempfile(fileext = ".h5")
  expect_error(write_tenx(x, path, type = "integer"),
               class = "nmfkit_error_value")
  expect_false(file.exists(path))

  w <- tenx_writer(path, nrow = 3, type = "integer")
  w$append(matrix(c(1, 0, 2), 3, 1))
  expect_error(w$append(matrix(c(1, 0.5, 2), 3, 1)),
               class = "nmfkit_error_value")
  w$append(matrix(c(0, 4, 0), 3, 1))
  expect_identical(as.matrix(tenx_as_dgc(w$close())),
                   matrix(c(1, 0, 2, 0, 4, 0), 3, 2))
})

test_that("bad arguments are classed errors naming the argument", {
  skip_if_no_hdf5()
  x <- Matrix::sparseMatrix(i = 1:3, j = 1:3, x = c(1, 2, 3))
  p <- function() withr::local_tempfile(fileext = ".h5",
                                         .local_envir = parent.frame())
  expect_error(write_tenx(), class = "nmfkit_error_missing")
  expect_error(write_tenx(x), class = "nmfkit_error_missing")
  expect_error(write_tenx(matrix("a", 2, 2), p()), class = "nmfkit_error_type")
  expect_error(write_tenx(list(1, 2), p()), class = "nmfkit_error_type")
  expect_error(write_tenx(1:5, p()), class = "nmfkit_error_type")
  expect_error(write_tenx(x > 0, p()), class = "nmfkit_error_type")
  expect_error(write_tenx(matrix(0, 0, 3), p()), class = "nmfkit_error_empty")
  expect_error(write_tenx(x, NA_character_), class = "nmfkit_error_filepath")
  expect_error(write_tenx(x, c("a.h5", "b.h5")),
               class = "nmfkit_error_filepath")
  expect_error(write_tenx(x, file.path(tempfile(), "no", "x.h5")),
               class = "nmfkit_error_filepath")
  expect_error(write_tenx(x, tempdir()), class = "nmfkit_error_filepath")
  expect_error(write_tenx(x, p(), group = ""), class = "nmfkit_error_group")
  expect_error(write_tenx(x, p(), group = 1), class = "nmfkit_error_group")
  expect_error(write_tenx(x, p(), chunk = 0), class = "nmfkit_error_chunk")
  expect_error(write_tenx(x, p(), chunk = 2.5), class = "nmfkit_error_chunk")
  expect_error(write_tenx(x, p(), level = 10), class = "nmfkit_error_level")
  expect_error(write_tenx(x, p(), type = "float"),
               class = "nmfkit_error_choice")
  expect_error(write_tenx(x, p(), overwrite = NA), class = "nmfkit_error_flag")
  bad <- x
  bad@i[1] <- 7L
  expect_error(write_tenx(bad, p()), class = "nmfkit_error_sparse")
  named <- x
  rownames(named) <- c("a", NA, "c")
  expect_error(write_tenx(named, p()), class = "nmfkit_error_dimnames")

  expect_error(tenx_writer(p()), class = "nmfkit_error_missing")
  expect_error(tenx_writer(p(), nrow = 0), class = "nmfkit_error_dimension")
  expect_error(tenx_writer(p(), nrow = 3, rownames = c("a", "b")),
               class = "nmfkit_error_dimnames")
  w <- tenx_writer(p(), nrow = 3, rownames = c("a", "b", "c"))
  expect_error(w$append(), class = "nmfkit_error_missing")
  expect_error(w$append(matrix(1, 4, 1)), class = "nmfkit_error_dimension")
  expect_error(w$append("a"), class = "nmfkit_error_type")
  y <- matrix(1, 3, 2, dimnames = list(c("a", "b", "x"), NULL))
  expect_error(w$append(y), class = "nmfkit_error_dimnames")
  w$append(matrix(1, 3, 2, dimnames = list(NULL, c("c1", "c2"))))
  expect_error(w$append(matrix(1, 3, 1)), class = "nmfkit_error_dimnames")
  w2 <- tenx_writer(p(), nrow = 3)
  w2$append(matrix(1, 3, 1))
  expect_error(w2$append(matrix(1, 3, 1, dimnames = list(NULL, "c"))),
               class = "nmfkit_error_dimnames")
  w3 <- tenx_writer(p(), nrow = 3, rownames = c("a", "b", "c"),
                    type = "integer")
  expect_snapshot({
    write_tenx(matrix("a", 2, 2), "x.h5")
    write_tenx(x, "x.h5", chunk = 0)
    write_tenx(x, "x.h5", type = "integr")
    w3$append(matrix(1, 4, 1))
    w3$append(y)
    w3$append(matrix(c(1, 0.5, 2), 3, 1))
  }, error = TRUE)
})

test_that("read_tenx() opens a file again after reads; bad paths are classed", {
  skip_if_no_hdf5()
  set.seed(9)
  x <- tenx_counts(12, 8)
  path <- withr::local_tempfile(fileext = ".h5")
  m <- write_tenx(x, path)
  for (i in 1:3) {
    expect_identical(tenx_as_dgc(read_tenx(path)[, 2:5]), x[, 2:5])
  }
  expect_error(read_tenx(), class = "nmfkit_error_missing")
  expect_error(read_tenx(tempfile()), class = "nmfkit_error_filepath")
  expect_error(read_tenx(c(path, path)), class = "nmfkit_error_filepath")
  expect_error(read_tenx(path, group = NA), class = "nmfkit_error_group")
  expect_error(read_tenx(path, group = "other"),
               class = "nmfkit_error_filepath")
  text <- withr::local_tempfile(fileext = ".h5")
  writeLines("not HDF5", text)
  expect_error(read_tenx(text), class = "nmfkit_error_filepath")
  # re-writing a file from itself would delete it before reading it
  expect_error(write_tenx(m, path, level = 1, overwrite = TRUE),
               class = "nmfkit_error_filepath")
  expect_identical(tenx_as_dgc(read_tenx(path)), x)
})

test_that("HDF5Array's own TENx functions agree where they work (else their failure is noted)", {
  skip_if_no_hdf5()
  set.seed(8)
  x <- tenx_counts(30, 20)
  ours <- write_tenx(x, withr::local_tempfile(fileext = ".h5"))
  versions <- paste0("HDF5Array ", utils::packageVersion("HDF5Array"),
                     " with rhdf5 ", utils::packageVersion("rhdf5"))
  # after a read, TENxMatrix() opens a file (HDF5Array 1.26 with rhdf5 2.42
  # cannot: read_tenx() is the way there)
  invisible(tenx_as_dgc(ours))
  again <- tryCatch(suppressMessages(HDF5Array::TENxMatrix(ours@seed@filepath)),
                    error = function(e) e)
  path <- withr::local_tempfile(fileext = ".h5")
  theirs <- tryCatch(
    suppressMessages(suppressWarnings(
      HDF5Array::writeTENxMatrix(x, path, group = "matrix"))),
    error = function(e) e)
  fails <- c(
    if (inherits(again, "error"))
      paste0("TENxMatrix() after a read (", conditionMessage(again), ")"),
    if (inherits(theirs, "error"))
      paste0("writeTENxMatrix() (", conditionMessage(theirs), ")"))
  if (length(fails)) {
    skip(paste0(versions, ": ", paste(fails, collapse = " and "),
                " fail here; write_tenx() and read_tenx() are the way"))
  }
  expect_identical(tenx_as_dgc(again), x)
  expect_identical(tenx_as_dgc(theirs), tenx_as_dgc(ours))
  expect_identical(dimnames(theirs), dimnames(ours))
})

test_that("read_tenx() refuses a file whose compressed columns are corrupt", {
  skip_if_no_hdf5()
  set.seed(3)
  x <- tenx_counts(12, 8)
  corrupt <- function(edit) {
    path <- withr::local_tempfile(fileext = ".h5", .local_envir = parent.frame())
    write_tenx(x, path)
    idx <- rhdf5::h5read(path, "matrix/indices")
    rhdf5::h5write(edit(idx), path, "matrix/indices")
    path
  }
  past <- corrupt(function(i) replace(i, length(i), 40L))
  garbage <- corrupt(function(i) rev(i))
  for (path in c(past, garbage)) {
    expect_error(read_tenx(path), class = "nmfkit_error_sparse")
  }
  expect_snapshot(read_tenx(past), error = TRUE,
                  transform = function(l) gsub("/[^ ]*\\.h5", "<file>", l))
  # a TENxMatrix opened otherwise is checked block by block when fitted
  rhdf5::h5errorHandling("normal")  # see hdf5_errors_on()
  m <- HDF5Array::TENxMatrix(past)
  expect_error(nmf(m, 2), class = "nmfkit_error_sparse")
})

test_that("a DelayedMatrix over a corrupt dgCMatrix is refused", {
  skip_if_no_hdf5()
  m <- round(small_data(m = 12, n = 10) * 10)
  m[m < 5] <- 0
  x <- methods::as(m, "CsparseMatrix")
  bad_p <- x
  bad_p@p[length(bad_p@p)] <- bad_p@p[length(bad_p@p)] + 3L
  unsorted <- x
  k <- which(diff(x@p) >= 2)[1]
  r <- x@p[k] + 1:2
  unsorted@i[r] <- rev(unsorted@i[r])
  past <- x
  past@i[1] <- 40L
  fit <- withr::with_seed(1, nmf(x, 2))
  for (b in list(bad_p, unsorted, past)) {
    d <- DelayedArray::DelayedArray(b)
    expect_error(nmf(d, 2), class = "nmfkit_error_sparse")
    expect_error(predict(fit, d), class = "nmfkit_error_sparse")
    expect_error(write_tenx(d, tempfile(fileext = ".h5")),
                 class = "nmfkit_error_sparse")
  }
})

test_that("write_tenx(overwrite = TRUE) that fails keeps the existing file", {
  skip_if_no_hdf5()
  x <- tenx_counts(10, 6)
  path <- withr::local_tempfile(fileext = ".h5")
  write_tenx(x, path)
  bad <- x
  bad[2, 3] <- 0.5
  expect_error(write_tenx(bad, path, type = "integer", overwrite = TRUE),
               class = "nmfkit_error_value")
  expect_identical(tenx_as_dgc(read_tenx(path)), x)
  expect_length(list.files(dirname(path), pattern = "^\\.write_tenx-"), 0L)
  m <- write_tenx(x * 2, path, overwrite = TRUE)
  expect_identical(tenx_as_dgc(m), x * 2)
})

test_that("tenx_writer(): a zero-column block brings its row names; a lost file is classed", {
  skip_if_no_hdf5()
  x <- tenx_counts(6, 4)
  path <- withr::local_tempfile(fileext = ".h5")
  w <- tenx_writer(path, nrow = 6)
  w$append(x[, 0, drop = FALSE])
  w$append(unname(x))
  expect_identical(rownames(w$close()), rownames(x))
  path2 <- withr::local_tempfile(fileext = ".h5")
  w2 <- tenx_writer(path2, nrow = 6)
  unlink(path2)
  rhdf5::h5createFile(path2)
  expect_error(w2$append(x), class = "nmfkit_error_filepath")
  unlink(path2)
  expect_error(w2$append(x), class = "nmfkit_error_filepath")
})
