# Real count data (installed by tools/install-data.R, which make test runs):
# Poisson NMF of FACS-purified PBMC UMI counts and of newsgroup word counts.

test_that("Poisson NMF of PBMC counts finds the FACS populations", {
  skip_if_not(example_counts_available("pbmc"),
              "pbmc_facs not installed (tools/install-data.R)")
  pbmc <- example_counts("pbmc")
  x <- pbmc$counts
  expect_s4_class(x, "dgCMatrix")
  expect_identical(dim(x), c(16791L, 3774L))
  genes <- order(Matrix::rowSums(x), decreasing = TRUE)[1:1500]
  y <- x[genes, ]
  set.seed(1)
  fit <- nmf(y, rank = 6, loss = "kl", control = nmf_control(max_iter = 60))
  # sparse in, sparse kept: the same fit from the dense copy
  set.seed(1)
  dense <- nmf(as.matrix(y), rank = 6, loss = "kl",
               control = nmf_control(max_iter = 60))
  expect_identical(fit$W, dense$W)
  expect_identical(rownames(fit$W), rownames(y))
  expect_true(all(diff(fit$loss) <= 1e-12 * fit$loss[-1]))
  # each cell's largest program (topic proportions) against the five
  # populations: far from chance (NMI 0 for a random partition)
  h <- fit$H * colSums(fit$W)
  nmi <- cluster_nmi(as.integer(pbmc$subpop), max.col(t(h)))
  expect_gt(nmi, 0.4)
  # held-out cells projected under KL fit better than the rank-one model
  test <- pbmc$test[genes, ]
  mu <- fit$W %*% predict(fit, test)
  tm <- as.matrix(test)
  base <- outer(Matrix::rowSums(y) / sum(y), colSums(tm))
  dev <- function(mu) sum(ifelse(tm > 0, tm * log(tm / mu), 0) - tm + mu)
  expect_lt(dev(mu), 0.9 * dev(base))
})

test_that("Poisson NMF topics of 20 Newsgroups agree with the groups", {
  skip_if_not(example_counts_available("newsgroups"),
              "20 Newsgroups not installed (tools/install-data.R)")
  ng <- example_counts("newsgroups")
  y <- ng$counts
  expect_identical(ncol(y), 11269L)
  df <- Matrix::rowSums(y > 0)
  y <- y[df >= 20 & df <= 0.05 * ncol(y), ]
  docs <- Matrix::colSums(y) > 0
  y <- y[, docs]
  set.seed(2)
  fit <- nmf(y, rank = 20, loss = "kl", control = nmf_control(max_iter = 30))
  nmi <- cluster_nmi(as.integer(ng$labels[docs]), clusters(fit))
  expect_gt(nmi, 0.3)
})
