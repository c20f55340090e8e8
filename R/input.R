# Data where R users keep it: Bioconductor containers, Seurat objects,
# quanteda document-feature matrices and tidytext count tables, read as the
# features x samples matrix the fitting functions take (ARCHITECTURE.md,
# "Containers"). input_matrix() is the one converter: nmf(), nmf_rank(),
# nmf_consensus(), every predict() (through predict_with()) and add_nmf()
# call it before check_data(), which then checks the matrix as any other.
# None of the containers' packages is a dependency: an object of their
# class means its package is installed, and its namespace is loaded on use.

#' Data in containers: Bioconductor, Seurat and text
#'
#' [nmf()], [nmf_rank()], [nmf_consensus()] and every `predict()` method
#' take the data where R users keep it, as well as a matrix, and fit the
#' matrix it holds (features as rows, samples as columns), with its
#' dimnames:
#'
#' | object | the matrix fitted |
#' |---|---|
#' | `SummarizedExperiment`, `SingleCellExperiment` | `assay(x, assay)`: genes x cells (`assay = "counts"` by default; a name or an index) |
#' | `Seurat` | the layer (SeuratObject 5) or slot (SeuratObject 4) `assay` (`"counts"`) of the default assay |
#' | quanteda `dfm` | its transpose: terms x documents (a `dfm` holds documents as rows) |
#' | data frame with columns `document`, `term`, `n` | terms x documents, as a `dgCMatrix` |
#'
#' An assay held as a `matrix` or `dgCMatrix` is fitted as it is, without a
#' copy; another sparse class is converted once to a `dgCMatrix`. A
#' `DelayedMatrix` assay (such as an HDF5-backed one) is handed on
#' unchanged, never realised in memory here: the fitting function decides
#' how to read it, and one that cannot read it stops with a classed error
#' (realise it with `as(assay(x), "dgCMatrix")` if it fits in memory).
#'
#' The count table is the output of `dplyr::count(document, term)` on
#' tidytext's `unnest_tokens()` (rename the columns to `document` and
#' `term`); its rows and columns come in `tidytext::cast_sparse()`'s order
#' (factor levels, else first appearance), and a repeated
#' `(document, term)` pair adds up. Its topics come back tidy:
#' `tidy(fit, matrix = "W")` has one row per term and topic (`feature`,
#' `component`, `value`), as tidytext tidies a topic model's `beta`
#' (divide `value` by its topic's sum for per-topic term probabilities).
#'
#' Bad input is a classed error (`nmfkit_error_assay` for an assay or layer
#' that is not there, `nmfkit_error_negative` for negative counts or dfm
#' weights). None of these packages is needed by nmfkit itself: an object
#' of their class is read with its own package.
#'
#' [add_nmf()] fits and stores the fit in a `SingleCellExperiment`
#' (`reducedDim()`, `metadata()`) or a `Seurat` object (a `DimReduc`).
#' @name nmfkit-containers
#' @examples
#' # a tidytext count table: words (terms) by chapter (documents)
#' counts <- data.frame(
#'   document = rep(c("ch1", "ch2", "ch3", "ch4"), each = 5),
#'   term = rep(c("sea", "ship", "whale", "tea", "ball"), 4),
#'   n = c(9, 7, 8, 0, 1,  8, 9, 7, 1, 0,  0, 1, 0, 9, 8,  1, 0, 1, 8, 9)
#' )
#' set.seed(1)
#' fit <- nmf(counts, rank = 2, loss = "kl")
#' dim(fit$W)  # 5 terms x 2 topics
#' topics <- tidy(fit, matrix = "W")
#' topics$beta <- topics$value / ave(topics$value, topics$component, FUN = sum)
#' topics[order(topics$component, -topics$beta), ]
#'
#' if (requireNamespace("SummarizedExperiment", quietly = TRUE)) {
#'   se <- SummarizedExperiment::SummarizedExperiment(
#'     assays = list(counts = matrix(rpois(300, 4), 30, 10)))
#'   fit <- nmf(se, rank = 2, assay = "counts")
#'   predict(fit, se[, 1:3])
#' }
NULL

# The matrix held by `x`, with dimnames:
# * SummarizedExperiment / SingleCellExperiment: the assay `assay` (name or
#   index), genes as rows and cells as columns, as stored: a matrix or
#   dgCMatrix as is, another sparse class for check_data() to convert, a
#   DelayedMatrix unchanged (never realised here);
# * Seurat: the layer (v5) or slot (v4) `assay` of the default assay;
# * quanteda dfm (documents as rows): transposed, terms x documents;
# * a tidytext count table (columns document, term, n): terms x documents
#   as a dgCMatrix.
# Anything else is returned as given, for check_data().
input_matrix <- function(x, assay = "counts", arg = rlang::caller_arg(x),
                         call = rlang::caller_env()) {
  if (missing(x)) {
    abort_nmfkit("{.arg {arg}} is missing: give the data matrix.", "missing",
                 call = call)
  }
  force(arg)
  check_assay_arg(assay, call)
  if (isS4(x) && methods::is(x, "SummarizedExperiment")) {
    return(se_assay(x, assay, arg, call))
  }
  if (inherits(x, "Seurat")) return(seurat_layer(x, assay, NULL, arg, call))
  if (inherits(x, "dfm")) return(dfm_matrix(x, arg, call))
  if (is.data.frame(x)) return(data_frame_matrix(x, arg, call))
  x
}

# `assay`: one name or one positive whole number.
check_assay_arg <- function(assay, call) {
  ok <- length(assay) == 1L && !is.na(assay) &&
    ((is.character(assay) && nzchar(assay)) ||
       (is.numeric(assay) && assay >= 1 && assay == round(assay)))
  if (!ok) {
    abort_nmfkit(c("{.arg assay} must be the name or the index of an assay.",
                   "x" = "It is {describe_value(assay)}."),
                 "assay", call = call, value = assay)
  }
  invisible(assay)
}

# The suggested package `pkg`, needed for an object of class `cls`.
need_package <- function(pkg, cls, call) {
  if (requireNamespace(pkg, quietly = TRUE)) return(invisible(TRUE))
  abort_nmfkit(c("Reading a {.cls {cls}} needs the {.pkg {pkg}} package.",
                 "i" = "Install it (Debian: {.code r-bioc-{tolower(pkg)}} or {.code r-cran-{tolower(pkg)}})."),
               "package", call = call, value = pkg)
}

# Bioconductor ----------------------------------------------------------------

se_assay <- function(x, assay, arg, call) {
  need_package("SummarizedExperiment", class(x)[1], call)
  names <- SummarizedExperiment::assayNames(x)
  n <- length(SummarizedExperiment::assays(x, withDimnames = FALSE))
  if (n == 0L) {
    abort_nmfkit(c("{.arg {arg}} has no assay to factorise.",
                   "x" = "{.arg {arg}} is a {.cls {class(x)[1]}} with no assays."),
                 "assay", call = call, value = assay)
  }
  if (is.character(assay) && !assay %in% names) {
    near <- nearest_name(assay, names %||% character())
    abort_nmfkit(c("{.arg assay} must name an assay of {.arg {arg}}.",
                   "x" = "{.arg {arg}} has no assay {.val {assay}}; {if (length(names)) cli::format_inline('its assays are {.val {names}}') else cli::format_inline('its {n} assay{?s} {?has/have} no names')}.",
                   "i" = if (!is.null(near)) "Did you mean {.val {near}}?"),
                 "assay", call = call, value = assay)
  }
  if (is.numeric(assay) && assay > n) {
    abort_nmfkit(c("{.arg assay} must be the index of an assay of {.arg {arg}}.",
                   "x" = "It is {assay}; {.arg {arg}} has {n} assay{?s}."),
                 "assay", call = call, value = assay)
  }
  SummarizedExperiment::assay(x, assay, withDimnames = TRUE)
}

# Seurat ----------------------------------------------------------------------

# The layer (SeuratObject >= 5) or slot (SeuratObject 4: "counts", "data",
# "scale.data") `layer` of the Seurat assay `seurat_assay` (NULL: the
# object's default assay). SeuratObject 5 is recognised by its LayerData(),
# not by its version, so both work with one code path each.
seurat_layer <- function(x, layer = "counts", seurat_assay = NULL, arg,
                         call) {
  need_package("SeuratObject", "Seurat", call)
  if (!is.character(layer) || length(layer) != 1L || is.na(layer)) {
    abort_nmfkit(c("{.arg assay} of a Seurat object is the name of one layer, such as {.val counts}.",
                   "x" = "It is {describe_value(layer)}."),
                 "assay", call = call, value = layer)
  }
  a <- seurat_assay_name(x, seurat_assay, arg, call)
  ns <- asNamespace("SeuratObject")
  v5 <- exists("LayerData", envir = ns) && exists("Layers", envir = ns)
  if (v5) {
    layers <- getExportedValue("SeuratObject", "Layers")(x[[a]])
    found <- layer %in% layers
  } else {
    layers <- c("counts", "data", "scale.data")
    found <- layer %in% layers
    m <- if (found) {
      SeuratObject::GetAssayData(x, slot = layer, assay = a)
    }
    # a v4 assay made from normalised data keeps an empty counts slot
    found <- found && length(m) > 0L
    layers <- layers[vapply(layers, function(s) {
      length(SeuratObject::GetAssayData(x, slot = s, assay = a)) > 0L
    }, logical(1))]
  }
  if (!found) {
    abort_nmfkit(c("{.arg {arg}} has no {.val {layer}} layer in its assay {.val {a}}.",
                   "x" = "{if (length(layers)) cli::format_inline('Its layers are {.val {layers}}.') else 'It has no layer with data.'}",
                   "i" = "Choose one with {.arg assay}, or add counts to the object."),
                 "assay", call = call, value = layer)
  }
  if (v5) {
    getExportedValue("SeuratObject", "LayerData")(x, assay = a, layer = layer)
  } else {
    m
  }
}

# The Seurat assay `seurat_assay` of `x` (NULL: its default assay), checked.
seurat_assay_name <- function(x, seurat_assay, arg, call) {
  assays <- SeuratObject::Assays(x)
  a <- seurat_assay %||% SeuratObject::DefaultAssay(x)
  if (!is.character(a) || length(a) != 1L || is.na(a) || !a %in% assays) {
    abort_nmfkit(c("{.arg seurat_assay} must name an assay of {.arg {arg}}.",
                   "x" = "It is {describe_value(a)}; the assays are {.val {assays}}."),
                 "assay", call = call, value = a)
  }
  a
}

# Text ------------------------------------------------------------------------

# A quanteda dfm holds documents as rows: transposed to terms x documents,
# feature names kept. Negative weights (a centred or log-ratio weighting)
# have no NMF.
dfm_matrix <- function(x, arg, call) {
  check_sparse_structure(x, arg, call)
  m <- methods::as(x, "dgCMatrix")
  m <- methods::new("dgCMatrix", i = m@i, p = m@p, x = as.double(m@x),
                    Dim = m@Dim, Dimnames = unname(m@Dimnames))
  neg <- which(m@x < 0)
  if (length(neg)) {
    low <- neg[which.min(m@x[neg])]
    doc <- m@i[low] + 1L
    term <- findInterval(low - 1L, m@p, left.open = FALSE)
    label <- function(names, k) if (is.null(names)) k else names[k]
    abort_nmfkit(c("{.arg {arg}} must have nonnegative weights.",
                   "x" = "{.arg {arg}} is a {.cls dfm} with {length(neg)} negative weight{?s}; the smallest is {signif(m@x[low], 4)} (document {.val {label(rownames(m), doc)}}, feature {.val {label(colnames(m), term)}}).",
                   "i" = "Factorise counts or a nonnegative weighting (such as {.fn quanteda::dfm_tfidf}), not centred or log-ratio weights."),
                 "negative", call = call, value = m@x[low])
  }
  Matrix::t(m)
}

# A data frame: a tidytext count table (columns document, term, n, as
# dplyr::count(document, term) gives) becomes terms x documents; any other
# goes on to check_data(), but for one with text columns, whose error says
# which shape of text is read.
data_frame_matrix <- function(x, arg, call) {
  tidy_names <- c("document", "term", "n")
  if (all(tidy_names %in% names(x))) return(tidy_counts_matrix(x, arg, call))
  text <- vapply(x, function(col) is.character(col) || is.factor(col),
                 logical(1))
  if (!any(text)) return(x)
  cls <- vapply(x[text], function(col) class(col)[1], character(1))
  abort_nmfkit(c("{.arg {arg}} must have only numeric columns, or be a count table with columns {.field document}, {.field term} and {.field n}.",
                 "x" = "{cli::qty(sum(text))}Column{?s} {.val {names(x)[text]}} {?is/are} not numeric (class {.cls {unique(cls)}}).",
                 "i" = "For a tidytext count, rename its columns, e.g. {.code dplyr::rename(counts, document = book, term = word)}."),
               "type", call = call, value = x)
}

# Terms (rows) x documents (columns), in the order tidytext::cast_sparse()
# uses (factor levels, else first appearance); a repeated (document, term)
# pair adds up.
tidy_counts_matrix <- function(x, arg, call) {
  n <- x[["n"]]
  if (!is.numeric(n) || is.object(n)) {
    abort_nmfkit(c("Column {.field n} of {.arg {arg}} must hold numeric counts.",
                   "x" = "It is {.obj_type_friendly {n}}."),
                 "type", call = call, value = n)
  }
  for (col in c("document", "term")) {
    if (anyNA(x[[col]])) {
      abort_nmfkit(c("Column {.field {col}} of {.arg {arg}} must not contain missing values.",
                     "x" = "It has {sum(is.na(x[[col]]))} NA{?s}."),
                   "nonfinite", call = call)
    }
  }
  bad <- !is.finite(n)
  if (any(bad)) {
    k <- which(bad)[1]
    abort_nmfkit(c("Column {.field n} of {.arg {arg}} must hold finite counts.",
                   "x" = "It has {sum(bad)} missing or infinite value{?s}; the first is in row {k}."),
                 "nonfinite", call = call)
  }
  if (length(n) && min(n) < 0) {
    k <- which.min(n)
    abort_nmfkit(c("Column {.field n} of {.arg {arg}} must be nonnegative.",
                   "x" = "It has {sum(n < 0)} negative count{?s}; the smallest is {signif(n[k], 4)} (document {.val {as.character(x$document[k])}}, term {.val {as.character(x$term[k])}}).",
                   "i" = "Counts are nonnegative; drop or correct these rows."),
                 "negative", call = call, value = n[k])
  }
  index <- function(v) {
    if (is.factor(v)) return(list(i = as.integer(v), names = levels(v)))
    u <- unique(v)
    list(i = match(v, u), names = as.character(u))
  }
  terms <- index(x[["term"]])
  docs <- index(x[["document"]])
  Matrix::sparseMatrix(i = terms$i, j = docs$i, x = as.double(n),
                       dims = c(length(terms$names), length(docs$names)),
                       dimnames = list(terms$names, docs$names))
}
