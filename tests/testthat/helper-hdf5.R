# Fixtures of the HDF5 writer's tests (test-hdf5.R).

skip_if_no_hdf5 <- function() {
  testthat::skip_if_not_installed("rhdf5")
  testthat::skip_if_not_installed("HDF5Array")
}

# A small count matrix with empty columns, named rows and columns.
tenx_counts <- function(m = 40, n = 25, density = 0.15, names = TRUE) {
  x <- Matrix::rsparsematrix(m, n, density,
                             rand.x = function(k) as.double(rpois(k, 4) + 1))
  x[, unique(pmin(c(3, 17), n))] <- 0
  x <- Matrix::drop0(x)
  if (names) dimnames(x) <- list(paste0("g", seq_len(m)), paste0("c", seq_len(n)))
  x
}

# The matrix of a TENxMatrix as a dgCMatrix (what a fit reads).
tenx_as_dgc <- function(m) methods::as(m, "dgCMatrix")
