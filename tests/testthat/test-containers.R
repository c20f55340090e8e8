# Data in containers (R/input.R, R/add-nmf.R): Bioconductor, Seurat and text
# in, the same fit as the matrix they hold out, stored where each ecosystem
# looks for it.

container_counts <- function(m = 40, n = 30, seed = 3) {
  withr::with_seed(seed, {
    W <- matrix(rexp(m * 3), m, 3)
    H <- matrix(rexp(3 * n), 3, n)
    x <- matrix(rpois(m * n, 2 * W %*% H), m, n,
                dimnames = list(paste0("gene", seq_len(m)),
                                paste0("cell", seq_len(n))))
  })
  x[, colSums(x) == 0] <- 1
  x
}

seeded_kl <- function(x, ...) {
  withr::with_seed(11, nmf(x, 3, loss = "kl",
                           control = nmf_control(max_iter = 30), ...))
}

test_that("a SummarizedExperiment or SingleCellExperiment fits as its assay", {
  skip_if_not_installed("SingleCellExperiment")
  x <- container_counts()
  logs <- log1p(x)
  sce <- SingleCellExperiment::SingleCellExperiment(
    assays = list(counts = methods::as(x, "CsparseMatrix"), logcounts = logs))
  se <- SummarizedExperiment::SummarizedExperiment(assays = list(counts = x))
  plain <- seeded_kl(x)
  for (obj in list(sce, se)) {
    fit <- seeded_kl(obj)
    expect_identical(fit$W, plain$W)
    expect_identical(fit$H, plain$H)
    expect_identical(dimnames(fit$W)[[1]], rownames(x))
    expect_identical(dimnames(fit$H)[[2]], colnames(x))
  }
  # another assay, by name or index
  log_fit <- withr::with_seed(2, nmf(logs, 2))
  expect_identical(withr::with_seed(2, nmf(sce, 2, assay = "logcounts"))$W,
                   log_fit$W)
  expect_identical(withr::with_seed(2, nmf(sce, 2, assay = 2L))$W, log_fit$W)
  # predict() on new cells in a container, and nmf_rank() on one
  expect_identical(predict(plain, sce[, 1:4]), predict(plain, x[, 1:4]))
  expect_identical(predict(plain, sce[, 1:4], type = "class"),
                   predict(plain, x[, 1:4], type = "class"))
  expect_identical(predict(log_fit, sce[, 1:3], assay = "logcounts"),
                   predict(log_fit, logs[, 1:3]))
  r_sce <- withr::with_seed(4, nmf_rank(sce, 1:2, nfolds = 2,
                                        control = nmf_control(max_iter = 10)))
  r_x <- withr::with_seed(4, nmf_rank(SummarizedExperiment::assay(sce), 1:2,
                                      nfolds = 2,
                                      control = nmf_control(max_iter = 10)))
  expect_identical(r_sce$results, r_x$results)
  # other sparse layouts are converted as for a matrix
  trip <- SummarizedExperiment::SummarizedExperiment(
    assays = list(counts = methods::as(methods::as(x, "CsparseMatrix"),
                                       "TsparseMatrix")))
  expect_identical(seeded_kl(trip)$W, plain$W)
})

test_that("add_nmf() stores t(H) with W as rotation, and the fit, in an SCE", {
  skip_if_not_installed("SingleCellExperiment")
  x <- container_counts()
  sce <- SingleCellExperiment::SingleCellExperiment(assays = list(counts = x))
  out <- withr::with_seed(11, add_nmf(sce, 3, loss = "kl",
                                      control = nmf_control(max_iter = 30)))
  plain <- seeded_kl(x)
  red <- SingleCellExperiment::reducedDim(out, "NMF")
  expect_identical(dim(red), c(ncol(x), 3L))
  expect_identical(dimnames(red), list(colnames(x), colnames(plain$W)))
  expect_identical(as.vector(red), as.vector(t(plain$H)))
  expect_identical(attr(red, "rotation"), plain$W)
  expect_identical(rownames(attr(red, "rotation")), rownames(x))
  fit <- S4Vectors::metadata(out)$NMF
  expect_s3_class(fit, "nmfkit_nmf")
  expect_identical(fit$W, plain$W)
  expect_null(fit$data)  # the container holds the data
  expect_identical(fit$call[[1]], as.name("add_nmf"))
  # the rest of the container is untouched; another name adds another
  expect_identical(SummarizedExperiment::assay(out, "counts"), x)
  two <- withr::with_seed(1, add_nmf(out, 2, name = "NMF2",
                                     control = nmf_control(max_iter = 5)))
  expect_setequal(SingleCellExperiment::reducedDimNames(two),
                  c("NMF", "NMF2"))
  expect_identical(ncol(SingleCellExperiment::reducedDim(two, "NMF2")), 2L)
})

test_that("a DelayedMatrix assay is handed on unrealised", {
  skip_if_not_installed("SingleCellExperiment")
  skip_if_not_installed("DelayedArray")
  x <- container_counts()
  d <- DelayedArray::DelayedArray(x)
  sce <- SingleCellExperiment::SingleCellExperiment(assays = list(counts = d))
  got <- input_matrix(sce, "counts")
  expect_s4_class(got, "DelayedMatrix")
  expect_identical(got, SummarizedExperiment::assay(sce, "counts"))
})

test_that("add_nmf() on a Seurat object makes a DimReduc Seurat can use", {
  skip_if_not_installed("SeuratObject")
  skip_if_not_installed("Seurat")
  x <- container_counts()
  obj <- suppressWarnings(SeuratObject::CreateSeuratObject(
    methods::as(x, "CsparseMatrix")))
  plain <- seeded_kl(x)
  out <- withr::with_seed(11, add_nmf(obj, 3, loss = "kl",
                                      control = nmf_control(max_iter = 30)))
  red <- out[["nmf"]]
  expect_s4_class(red, "DimReduc")
  emb <- SeuratObject::Embeddings(red)
  load <- SeuratObject::Loadings(red)
  expect_identical(rownames(emb), colnames(x))
  expect_identical(rownames(emb), SeuratObject::Cells(out))
  expect_identical(rownames(load), rownames(x))
  expect_identical(colnames(emb), paste0("NMF_", 1:3))
  expect_identical(SeuratObject::Key(red), "NMF_")
  expect_identical(SeuratObject::DefaultAssay(red), "RNA")
  expect_identical(unname(emb), unname(t(plain$H)))
  expect_identical(unname(load), unname(plain$W))
  fit <- SeuratObject::Misc(red, "fit")
  expect_identical(fit$H, plain$H)
  # nmf() and predict() read the counts layer directly
  expect_identical(seeded_kl(obj)$W, plain$W)
  expect_identical(predict(plain, obj), predict(plain, x))
  # Seurat's own tools take the reduction
  out <- suppressMessages(Seurat::FindNeighbors(out, reduction = "nmf",
                                                dims = 1:3, verbose = FALSE))
  expect_true(all(c("RNA_nn", "RNA_snn") %in% names(out@graphs)))
  expect_s3_class(Seurat::DimPlot(out, reduction = "nmf"), "ggplot")
  # another name gets its own key
  other <- withr::with_seed(1, add_nmf(obj, 2, name = "nmf_kl",
                                       control = nmf_control(max_iter = 5)))
  expect_identical(SeuratObject::Key(other[["nmf_kl"]]), "NMFKL_")
})

test_that("a tidytext count table fits as its cast dgCMatrix", {
  skip_if_not_installed("tidytext")
  skip_if_not_installed("dplyr")
  text <- data.frame(
    document = rep(c("d1", "d2", "d3", "d4", "d5", "d6"), each = 2),
    text = c("the whale and the sea", "a ship on the sea",
             "whale ship whale sea", "the sea the sea",
             "tea and cake at the ball", "a ball with tea",
             "cake tea ball dance", "dance at the ball",
             "the sea and a ball", "tea on a ship",
             "whale tea", "ship dance"),
    stringsAsFactors = FALSE)
  counts <- dplyr::count(tidytext::unnest_tokens(text, term, text),
                         document, term)
  cast <- Matrix::t(tidytext::cast_sparse(counts, document, term, n))
  expect_identical(input_matrix(counts), cast)
  fit <- withr::with_seed(5, nmf(counts, 2, loss = "kl"))
  ref <- withr::with_seed(5, nmf(cast, 2, loss = "kl"))
  expect_identical(fit$W, ref$W)
  expect_identical(fit$H, ref$H)
  expect_identical(rownames(fit$W), rownames(cast))
  expect_identical(colnames(fit$H), colnames(cast))
  # topics out: tidy() of W, one row per term and topic
  topics <- tidy(fit, matrix = "W")
  expect_identical(nrow(topics), nrow(cast) * 2L)
  expect_setequal(topics$feature, rownames(cast))
  # factor columns keep their levels (as cast_sparse), repeats add up
  f <- data.frame(document = factor(c("b", "a", "b"), levels = c("b", "a")),
                  term = c("x", "y", "x"), n = c(1, 2, 3))
  m <- input_matrix(f)
  expect_identical(dimnames(m), list(c("x", "y"), c("b", "a")))
  expect_identical(as.matrix(m), matrix(c(4, 0, 0, 2), 2,
                                        dimnames = dimnames(m)))
})

test_that("a dfm (documents as rows) is fitted transposed", {
  m <- Matrix::Matrix(c(3, 0, 1, 2, 0, 4, 1, 1, 0, 2, 5, 0), 4, 3,
                      sparse = TRUE,
                      dimnames = list(paste0("doc", 1:4),
                                      c("sea", "ship", "tea")))
  d <- as_test_dfm(m)
  got <- input_matrix(d)
  expect_s4_class(got, "dgCMatrix")
  expect_identical(dimnames(got), list(c("sea", "ship", "tea"),
                                       paste0("doc", 1:4)))
  expect_identical(as.matrix(got), t(as.matrix(m)))
  fit <- withr::with_seed(1, nmf(d, 2))
  expect_identical(fit$W, withr::with_seed(1, nmf(Matrix::t(m), 2))$W)
  # negative weights
  neg <- m
  neg[2, 3] <- -0.5
  expect_error(nmf(as_test_dfm(neg), 2), class = "nmfkit_error_negative")
  expect_snapshot(nmf(as_test_dfm(neg), 2), error = TRUE)
})

test_that("bad containers are classed errors naming the argument", {
  expect_error(nmf(small_data(), 2, assay = NA), class = "nmfkit_error_assay")
  expect_error(nmf(small_data(), 2, assay = 0), class = "nmfkit_error_assay")
  expect_error(add_nmf(small_data(), 2), class = "nmfkit_error_type")
  # count tables
  tab <- data.frame(document = c("a", "a", "b"), term = c("x", "y", "x"),
                    n = c(1, -2, 3))
  expect_error(nmf(tab, 1), class = "nmfkit_error_negative")
  expect_snapshot(nmf(tab, 1), error = TRUE)
  tab$n <- c(1, NA, 3)
  expect_error(nmf(tab, 1), class = "nmfkit_error_nonfinite")
  tab$n <- c("1", "2", "3")
  expect_error(nmf(tab, 1), class = "nmfkit_error_type")
  tab$n <- 1:3
  tab$term[2] <- NA
  expect_error(nmf(tab, 1), class = "nmfkit_error_nonfinite")
  words <- data.frame(book = c("a", "b"), word = c("x", "y"), k = 1:2)
  expect_error(nmf(words, 1), class = "nmfkit_error_type")
  expect_snapshot(nmf(words, 1), error = TRUE)

  skip_if_not_installed("SingleCellExperiment")
  x <- container_counts()
  sce <- SingleCellExperiment::SingleCellExperiment(assays = list(counts = x))
  expect_error(nmf(sce, 2, assay = "logcounts"), class = "nmfkit_error_assay")
  expect_snapshot(nmf(sce, 2, assay = "count"), error = TRUE)
  expect_error(nmf(sce, 2, assay = 3), class = "nmfkit_error_assay")
  expect_error(add_nmf(sce, 2, assay = "logcounts"),
               class = "nmfkit_error_assay")
  expect_error(predict(seeded_kl(x), sce, assay = "logcounts"),
               class = "nmfkit_error_assay")
  expect_error(nmf_rank(sce, 1:2, assay = "logcounts"),
               class = "nmfkit_error_assay")
  expect_error(nmf_consensus(sce, 2, nrun = 2, assay = "logcounts"),
               class = "nmfkit_error_assay")
  expect_error(add_nmf(sce, 2, name = ""), class = "nmfkit_error_name")
  empty <- SingleCellExperiment::SingleCellExperiment(
    assays = list(), colData = S4Vectors::DataFrame(row.names = letters[1:3]))
  expect_error(nmf(empty, 1), class = "nmfkit_error_assay")
  se <- SummarizedExperiment::SummarizedExperiment(assays = list(counts = x))
  expect_error(add_nmf(se, 2), class = "nmfkit_error_type")
  expect_snapshot(add_nmf(se, 2), error = TRUE)
})

test_that("a Seurat object without counts is a classed error", {
  skip_if_not_installed("SeuratObject")
  x <- container_counts()
  logs <- methods::as(log1p(x), "CsparseMatrix")
  obj <- suppressWarnings(SeuratObject::CreateSeuratObject(
    SeuratObject::CreateAssayObject(data = logs)))
  expect_error(nmf(obj, 2), class = "nmfkit_error_assay")
  expect_error(add_nmf(obj, 2), class = "nmfkit_error_assay")
  expect_snapshot(add_nmf(obj, 2), error = TRUE)
  # its data layer, asked for, is read
  expect_identical(input_matrix(obj, "data"), logs)
  expect_error(add_nmf(obj, 2, assay = "data", seurat_assay = "ADT"),
               class = "nmfkit_error_assay")
  expect_error(add_nmf(obj, 2, assay = 1), class = "nmfkit_error_assay")
  # one layer's name: an empty, longer or NA one is refused by name (an
  # empty one was "argument is of length zero")
  for (bad in list(character(0), c("counts", "data"), NA_character_)) {
    expect_error(add_nmf(obj, 2, assay = bad), class = "nmfkit_error_assay")
  }
  expect_error(add_nmf(obj, 2, assay = "data", key = "nmf"),
               class = "nmfkit_error_name")
})

test_that("add_nmf(model = ) stores a fit already made, checked", {
  skip_if_not_installed("SingleCellExperiment")
  x <- container_counts()
  sce <- SingleCellExperiment::SingleCellExperiment(assays = list(counts = x))
  fit <- seeded_kl(x)
  out <- add_nmf(sce, model = fit, name = "kl")
  red <- SingleCellExperiment::reducedDim(out, "kl")
  expect_identical(attr(red, "rotation"), fit$W)
  expect_identical(S4Vectors::metadata(out)$kl, fit)
  # consensus programs too
  cons <- withr::with_seed(1, nmf_consensus(sce, 2, nrun = 3,
                                            control = nmf_control(max_iter = 20)))
  out <- add_nmf(sce, model = cons$fits[["2"]], name = "cNMF")
  expect_identical(dim(SingleCellExperiment::reducedDim(out, "cNMF")),
                   c(ncol(x), 2L))
  # a fit of other data, or with rank, is an error
  expect_error(add_nmf(sce, 3, model = fit), class = "nmfkit_error_model")
  expect_error(add_nmf(sce, model = fit, loss = "kl"),
               class = "nmfkit_error_model")
  expect_error(add_nmf(sce, model = list(W = 1)), class = "nmfkit_error_model")
  expect_error(add_nmf(sce[1:5, ], model = fit),
               class = "nmfkit_error_dimension")
  perm <- sce[c(2:1, 3:nrow(x)), ]
  expect_error(add_nmf(perm, model = fit), class = "nmfkit_error_dimension")
  expect_snapshot(add_nmf(perm, model = fit), error = TRUE)

  skip_if_not_installed("SeuratObject")
  obj <- suppressWarnings(SeuratObject::CreateSeuratObject(
    methods::as(x, "CsparseMatrix")))
  out <- add_nmf(obj, model = fit)
  expect_identical(unname(SeuratObject::Embeddings(out, "nmf")),
                   unname(t(fit$H)))
  expect_identical(SeuratObject::Misc(out[["nmf"]], "fit"), fit)
  expect_error(add_nmf(obj, 2, model = fit), class = "nmfkit_error_model")
})

test_that("predict() matches rows by feature name in every container", {
  x <- small_data(m = 12, n = 10)
  fit <- withr::with_seed(1, nmf(x, 2))
  kl <- withr::with_seed(1, nmf(x, 2, loss = "kl"))
  rev_rows <- rev(seq_len(nrow(x)))
  counts <- data.frame(document = rep(colnames(x), each = nrow(x)),
                       term = rep(rownames(x), ncol(x)), n = c(x))
  for (object in list(fit, kl)) {
    h <- predict(object, x)
    # the same data with the rows in another order: the same coefficients
    expect_equal(predict(object, x[rev_rows, ]), h)
    expect_equal(predict(object, Matrix::Matrix(x[rev_rows, ],
                                                sparse = TRUE)), h)
    expect_equal(predict(object, as.data.frame(x[rev_rows, ])), h)
    expect_equal(predict(object, counts[rev(seq_len(nrow(counts))), ]),
                 h[, rev(colnames(x))])
    # a term the table lacks is a zero count, not a refusal
    x0 <- x
    x0["f3", ] <- 0
    expect_equal(predict(object, counts[counts$term != "f3", ]),
                 predict(object, x0))
    # rows without names are matched by position
    expect_equal(unname(predict(object, unname(x))), unname(h))
  }
  # a row that is no feature of the fit: left out, with a classed warning
  extra <- rbind(x, zz = 1)
  expect_warning(h2 <- predict(fit, extra), class = "nmfkit_warning_features")
  expect_equal(h2, predict(fit, x))
  # no name in common, or repeated names: classed errors
  other <- x
  rownames(other) <- paste0("gene", seq_len(nrow(x)))
  expect_error(predict(fit, other), class = "nmfkit_error_dimnames")
  twice <- x
  rownames(twice)[2] <- rownames(twice)[1]
  expect_error(predict(fit, twice), class = "nmfkit_error_dimnames")
  expect_snapshot(predict(fit, other), error = TRUE)
  # variants go through the same scaffold
  jfit <- withr::with_seed(1, nmf_joint(x, x[, 1:6], rank = 2))
  expect_equal(predict(jfit, x[rev_rows, ]), predict(jfit, x))
})

test_that("predict() aligns SummarizedExperiment and DelayedMatrix rows", {
  skip_if_not_installed("SummarizedExperiment")
  x <- small_data(m = 12, n = 10)
  fit <- withr::with_seed(1, nmf(x, 2))
  h <- predict(fit, x)
  rev_rows <- rev(seq_len(nrow(x)))
  se <- SummarizedExperiment::SummarizedExperiment(
    assays = list(counts = x[rev_rows, ]))
  expect_equal(predict(fit, se), h)
  skip_if_not_installed("DelayedArray")
  d <- DelayedArray::DelayedArray(x[rev_rows, ])
  expect_equal(predict(fit, d), h)
  x0 <- x
  x0["f5", ] <- 0
  d0 <- DelayedArray::DelayedArray(x[-5, ])
  # outside text a missing feature is zero with a warning
  expect_warning(h0 <- predict(fit, d0), class = "nmfkit_warning_features")
  expect_equal(h0, predict(fit, x0))
})

test_that("add_nmf() names a misspelt argument of nmf() and a model given as rank", {
  skip_if_not_installed("SingleCellExperiment")
  x <- small_data(m = 12, n = 10)
  sce <- SingleCellExperiment::SingleCellExperiment(list(counts = x))
  fit <- withr::with_seed(1, nmf(x, 2))
  expect_error(add_nmf(sce, 2, contrl = nmf_control()),
               class = "nmfkit_error_dots")
  expect_error(add_nmf(sce, fit), class = "nmfkit_error_model")
  expect_snapshot({
    add_nmf(sce, 2, contrl = nmf_control())
    add_nmf(sce, fit)
  }, error = TRUE)
})
