#' Real count data: single-cell UMI counts, newsgroup word counts, mutations
#'
#' Three labelled count matrices for trying count-data NMF (`loss = "kl"`),
#' with features as rows and samples as columns:
#' * `"pbmc"`: UMI counts of 3,774 FACS-purified peripheral blood
#'   mononuclear cells (Zheng et al., Nature Communications 2017) over the
#'   genes expressed in at least one of them (of 16,791), as curated by the
#'   fastTopics package (`pbmc_facs`); `labels` is the FACS cell type (10
#'   types), `subpop` the coarser population (5); `test` holds 100 further
#'   cells (same genes) and `test_labels` their types.
#' * `"newsgroups"`: word counts of the 11,269 training documents of 20
#'   Newsgroups as the lda package 1.4.2 ships them (61,188 words, the
#'   words that occur in them kept); `labels` is the newsgroup.
#' * `"mutations"`: the single base substitution catalogue of the
#'   MutationalPatterns package's vignette (`mut_mat_data.rds`): counts of
#'   the 96 trinucleotide contexts (`A[C>A]A`, ...) in 9 samples of
#'   healthy colon, small intestine and liver stem cells (Blokzijl et al.,
#'   Nature 2016); `labels` is the tissue. From Debian's
#'   `r-bioc-mutationalpatterns` 3.8.1 (MIT licence), taken by
#'   `tools/install-signatures.R` without installing it.
#'
#' The package does not ship these files (nor download at run time): they
#' are taken from the CRAN source packages' `data/` folders by
#' `tools/install-data.R` (and `tools/install-signatures.R`) of the nmfkit source (which `make test` and `make
#' demo` run) into `Sys.getenv("NMFKIT_DATA")` or, unset,
#' `tools::R_user_dir("nmfkit", "data")`.
#'
#' @param name `"pbmc"`, `"newsgroups"` or `"mutations"`.
#' @param dir The directory holding the files (see Details).
#' @param ... Must be empty: an unknown or misspelt argument is an error
#'   naming it.
#' @return A list with `counts` (a `dgCMatrix`, features x samples, with
#'   dimnames; for `"mutations"` a dense matrix), `labels` (a factor, one
#'   per sample) and, for `"pbmc"`,
#'   `subpop`, `test` and `test_labels`.
#' @examples
#' if (example_counts_available("pbmc")) {
#'   pbmc <- example_counts("pbmc")
#'   dim(pbmc$counts)
#'   table(pbmc$labels)
#' }
#' @export
example_counts <- function(name = c("pbmc", "newsgroups", "mutations"),
                           dir = example_counts_dir(), ...) {
  check_dots_empty()
  name <- check_choice(name)
  dir <- check_data_dir(dir)
  files <- example_counts_files(name)
  if (!example_counts_available(name, dir)) {
    abort_nmfkit(c("The {name} data are not installed in {.arg dir} = {.path {dir}}.",
                   "i" = if (name == "mutations") "Run {.code Rscript tools/install-signatures.R} from the nmfkit source (or {.code make deps}); it takes them from Debian's {.pkg r-bioc-mutationalpatterns} package." else "Run {.code Rscript tools/install-data.R} from the nmfkit source (or {.code make deps}); it takes them from CRAN's {if (name == 'pbmc') 'fastTopics' else 'lda 1.4.2'} source package."),
                 "missing", value = dir)
  }
  if (name == "mutations") {
    counts <- readRDS(file.path(dir, files))
    tissue <- sub("[0-9]+$", "", colnames(counts))
    return(list(counts = counts,
                labels = factor(tissue, levels = unique(tissue))))
  }
  e <- load_counts_files(dir, files, example_counts_objects(name))
  if (name == "pbmc") {
    p <- e$pbmc_facs
    counts <- Matrix::t(p$counts)
    keep <- Matrix::rowSums(counts) > 0
    counts <- counts[keep, , drop = FALSE]
    rownames(counts) <- make.unique(p$genes$symbol[keep])
    colnames(counts) <- p$samples$barcode
    test <- Matrix::t(p$counts_test)[keep, , drop = FALSE]
    rownames(test) <- rownames(counts)
    colnames(test) <- p$samples_test$barcode
    return(list(counts = counts, labels = p$samples$celltype,
                subpop = p$samples$subpop, test = test,
                test_labels = p$samples_test$celltype))
  }
  docs <- e$newsgroup.train.documents
  len <- vapply(docs, ncol, integer(1))
  idx <- unlist(lapply(docs, function(d) d[1, ])) + 1L
  cnt <- unlist(lapply(docs, function(d) d[2, ]))
  counts <- Matrix::sparseMatrix(
    i = idx, j = rep.int(seq_along(docs), len), x = as.double(cnt),
    dims = c(length(e$newsgroup.vocab), length(docs)),
    dimnames = list(make.unique(e$newsgroup.vocab),
                    paste0("doc", seq_along(docs))))
  counts <- counts[Matrix::rowSums(counts) > 0, , drop = FALSE]
  map <- e$newsgroup.label.map
  labels <- factor(as.character(map$V1)[match(e$newsgroup.train.labels,
                                              map$V2)],
                   levels = as.character(map$V1))
  list(counts = methods::as(counts, "CsparseMatrix"), labels = labels)
}

#' @rdname example_counts
#' @export
example_counts_available <- function(name = c("pbmc", "newsgroups", "mutations"),
                                     dir = example_counts_dir(), ...) {
  check_dots_empty()
  name <- check_choice(name)
  dir <- check_data_dir(dir)
  all(file.exists(file.path(dir, example_counts_files(name))))
}

# `dir`: one directory path (a NULL or empty one would make every file
# "available", as all() of no files is TRUE).
check_data_dir <- function(dir, arg = rlang::caller_arg(dir),
                           call = rlang::caller_env()) {
  if (!is.character(dir) || length(dir) != 1L || is.na(dir) ||
      !nzchar(dir)) {
    abort_nmfkit(c("{.arg {arg}} must be the path of a directory (one string).",
                   "x" = "It is {describe_value(dir)}."),
                 "filepath", call = call, value = dir)
  }
  dir
}

# The objects `objects` loaded from `files` in `dir`; a file that does not
# load, or lacks one of them, is a classed error naming it.
load_counts_files <- function(dir, files, objects,
                              call = rlang::caller_env()) {
  e <- new.env(parent = emptyenv())
  for (f in files) {
    path <- file.path(dir, f)
    ok <- tryCatch({
      load(path, envir = e)
      TRUE
    }, error = function(err) conditionMessage(err),
    warning = function(w) conditionMessage(w))
    if (!isTRUE(ok)) {
      abort_nmfkit(c("The data file {.file {path}} in {.arg dir} cannot be read.",
                     "x" = "{ok}",
                     "i" = "It is corrupt or incomplete: delete it and run {.code Rscript tools/install-data.R} again."),
                   "filepath", call = call, value = path)
    }
  }
  lacking <- objects[!vapply(objects, exists, logical(1), envir = e,
                             inherits = FALSE)]
  if (length(lacking)) {
    abort_nmfkit(c("The data files in {.file {dir}} do not hold the expected objects.",
                   "x" = "{.val {lacking}} {?is/are} missing.",
                   "i" = "Delete them and run {.code Rscript tools/install-data.R} again."),
                 "filepath", call = call, value = dir)
  }
  e
}

example_counts_objects <- function(name) {
  if (name == "pbmc") return("pbmc_facs")
  paste0("newsgroup.", c("train.documents", "train.labels", "vocab",
                         "label.map"))
}

example_counts_dir <- function() {
  d <- Sys.getenv("NMFKIT_DATA", "")
  if (nzchar(d)) d else tools::R_user_dir("nmfkit", "data")
}

example_counts_files <- function(name) {
  if (name == "pbmc") return("pbmc_facs.RData")
  if (name == "mutations") {
    return(file.path("mutationalpatterns", "mut_mat_data.rds"))
  }
  paste0("newsgroup.", c("train.documents", "train.labels", "vocab",
                         "label.map"), ".rda")
}
