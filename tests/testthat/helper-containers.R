# A quanteda dfm of the sparse matrix `m` (documents as rows): quanteda's own
# when it is installed. quanteda is not in Debian, so otherwise a stand-in: an
# S4 class named "dfm" that, like quanteda's, extends dgCMatrix, which is all
# nmfkit reads of a dfm (its class and its slots).
as_test_dfm <- function(m) {
  m <- methods::as(methods::as(m, "CsparseMatrix"), "generalMatrix")
  if (requireNamespace("quanteda", quietly = TRUE)) {
    return(quanteda::as.dfm(m))
  }
  test_dfm_class()(m)
}

test_dfm_env <- new.env(parent = emptyenv())

test_dfm_class <- function() {
  if (is.null(test_dfm_env$gen)) {
    where <- new.env(parent = asNamespace("Matrix"))
    test_dfm_env$gen <- methods::setClass("dfm", contains = "dgCMatrix",
                                          where = where)
  }
  test_dfm_env$gen
}
