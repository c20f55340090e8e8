# 20 Newsgroups (training part) from the archived CRAN package lda 1.4.2 as
# tf-idf matrices, one sparse terms x documents matrix per group.
# The text is already a bag of words, so e-mail residue goes through a stop
# list; terms in fewer than 2 or more than 95% of documents are dropped;
# tf-idf as scikit-learn's TfidfVectorizer: tf * (log((1 + n) / (1 + df)) + 1).
newsgroups_tfidf <- function() {
  e <- new.env()
  utils::data("newsgroup.train.documents", "newsgroup.train.labels",
              "newsgroup.vocab", "newsgroup.label.map", package = "lda",
              envir = e)
  docs <- e$newsgroup.train.documents
  vocab <- e$newsgroup.vocab
  tf <- Matrix::sparseMatrix(
    i = unlist(lapply(docs, function(d) d[1, ] + 1L)),
    j = rep(seq_along(docs), vapply(docs, ncol, integer(1))),
    x = as.numeric(unlist(lapply(docs, function(d) d[2, ]))),
    dims = c(length(vocab), length(docs)), dimnames = list(vocab, NULL))
  df <- Matrix::rowSums(tf > 0)
  keep <- df >= 2 & df <= 0.95 * ncol(tf) &
    !vocab %in% c("article", "writes", "apr", "edu", "com")
  tf <- tf[keep, ]
  idf <- log((1 + ncol(tf)) / (1 + df[keep])) + 1
  x <- methods::as(Matrix::Diagonal(x = idf) %*% tf, "CsparseMatrix")
  groups <- as.character(e$newsgroup.label.map[[1]])
  lab <- e$newsgroup.train.labels
  stats::setNames(lapply(seq_along(groups), function(g) x[, lab == g]),
                  groups)
}
