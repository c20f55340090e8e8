# Stratified NMF on the full 20 Newsgroups problem (sourced by
# bench/stratified.R when lda 1.4.2 is installed). Data: the bag-of-words
# corpus of CRAN lda 1.4.2 (train + test, 18,774 documents), with
# scikit-learn's TfidfVectorizer(max_df = 0.95, min_df = 2,
# stop_words = "english") rebuilt on the counts (scikit-learn's English stop
# list read from /usr/bin/python3, plus "article writes apr edu com" because
# the corpus keeps header words), one stratum per newsgroup, rank 20, 100
# iterations. The fit runs in a child process so that its peak memory
# (VmHWM) is its own. Prints time, memory and the top 3 words per group.
ng_env <- new.env()
utils::data(list = c("newsgroup.train.documents", "newsgroup.test.documents",
                     "newsgroup.train.labels", "newsgroup.test.labels",
                     "newsgroup.vocab", "newsgroup.label.map"),
            package = "lda", envir = ng_env)
docs <- c(ng_env$newsgroup.train.documents, ng_env$newsgroup.test.documents)
labels <- c(ng_env$newsgroup.train.labels, ng_env$newsgroup.test.labels)
vocab <- ng_env$newsgroup.vocab
groups <- as.character(ng_env$newsgroup.label.map[[1]])

stop_words <- system2(python, c("-c", shQuote(paste(
  "from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS as s;",
  "print('\\n'.join(sorted(s)))"))), stdout = TRUE)
stop_words <- c(stop_words, "article", "writes", "apr", "edu", "com")

# documents x words counts, then the vectorizer's filters and tf-idf
len <- vapply(docs, ncol, integer(1))
ij <- do.call(cbind, docs)
counts <- Matrix::sparseMatrix(i = rep(seq_along(docs), len), j = ij[1, ] + 1L,
                               x = as.double(ij[2, ]),
                               dims = c(length(docs), length(vocab)))
df <- Matrix::colSums(counts > 0)
keep <- df >= 2 & df <= 0.95 * length(docs) & !(vocab %in% stop_words)
counts <- counts[, keep]
terms <- vocab[keep]
idf <- log((1 + length(docs)) / (1 + df[keep])) + 1
tfidf <- counts %*% Matrix::Diagonal(x = idf)
norms <- sqrt(Matrix::rowSums(tfidf^2))
tfidf <- Matrix::Diagonal(x = ifelse(norms > 0, 1 / norms, 0)) %*% tfidf
x_ng <- methods::as(Matrix::t(tfidf), "CsparseMatrix")  # terms x documents
rownames(x_ng) <- terms
strata_ng <- factor(groups[labels], levels = groups)
cat(sprintf("\n20 Newsgroups: %d terms x %d documents, %d nonzeros, %d strata\n",
            nrow(x_ng), ncol(x_ng), length(x_ng@x), nlevels(strata_ng)))

input <- tempfile(fileext = ".rds")
output <- tempfile(fileext = ".rds")
saveRDS(list(x = x_ng, strata = strata_ng), input)
child <- sprintf('
  suppressPackageStartupMessages(library(nmfkit))
  d <- readRDS("%s")
  set.seed(1)
  t0 <- proc.time()[["elapsed"]]
  fit <- nmf_stratified(d$x, d$strata, rank = 20,
                        control = nmf_control(max_iter = 100, threads = %d))
  elapsed <- proc.time()[["elapsed"]] - t0
  status <- readLines("/proc/self/status")
  hwm <- as.numeric(gsub("[^0-9]", "", grep("^VmHWM", status, value = TRUE)))
  fit$data <- NULL
  saveRDS(list(fit = fit, elapsed = elapsed, peak_mb = hwm / 1024), "%s")
', input, 2L, output)
system2(file.path(R.home("bin"), "Rscript"), c("-e", shQuote(child)))
res <- readRDS(output)
unlink(c(input, output))
cat(sprintf("  nmfkit, rank 20, 100 iterations, 2 threads: %.1f s, peak memory %.0f MB (child R process), normalised loss %.4f\n",
            res$elapsed, res$peak_mb, utils::tail(res$fit$normalized_loss, 1)))
top <- top_features(res$fit, n = 3)
words <- tapply(top$feature, top$stratum, paste, collapse = ", ")
cat("  top 3 words of each stratum's shift (largest first):\n")
cat(sprintf("    %-26s %s\n", names(words), words), sep = "")
