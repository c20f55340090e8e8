#' Fit an NMF and store it in a SingleCellExperiment or Seurat object
#'
#' `add_nmf()` fits [nmf()] to the counts a container holds (genes as
#' features, cells as samples) and returns the container with the fit
#' stored where its ecosystem looks for a reduction:
#' * `SingleCellExperiment`: `reducedDim(x, name)` is `t(H)` (cells x
#'   components) with `W` (genes x components) as its `"rotation"`
#'   attribute, as scater's `runPCA()` stores a PCA; the model object is
#'   `metadata(x)[[name]]`.
#' * `Seurat`: `x[[name]]` is a `DimReduc` with embeddings `t(H)`, loadings
#'   `W`, key `key` (`"NMF_"` for `name = "nmf"`) and the assay it was fitted
#'   on, so `DimPlot(x, reduction = "nmf")`, `FeaturePlot()` of its
#'   components and `FindNeighbors(x, reduction = "nmf", dims = 1:rank)`
#'   work; the model object is in its `misc` slot,
#'   `SeuratObject::Misc(x[["nmf"]], "fit")`.
#'
#' The cell and gene names of the container name the rows of the stored
#' matrices, and the fit is that of [nmf()] on the matrix
#' `SummarizedExperiment::assay(x, assay)` (or the Seurat layer): same
#' seed, same factors. The name `add_nmf()` does not clash with scater's
#' `runNMF()` when both are attached. A `SummarizedExperiment` has no
#' `reducedDim()`: convert it with `as(x, "SingleCellExperiment")` first,
#' or call [nmf()] on it directly.
#'
#' @param x A `SingleCellExperiment` or a `Seurat` object.
#' @param rank Number of components, as in [nmf()].
#' @param ... Further arguments of [nmf()]: `loss = "kl"` for counts,
#'   `method`, `init`, `control`, `nrun`, ....
#' @param name Where to store the fit: the `reducedDim()` and `metadata()`
#'   name (`"NMF"`), or the Seurat reduction's name (`"nmf"`).
#' @param assay The matrix to factorise: the assay of a
#'   `SingleCellExperiment`, by name or index; the layer (SeuratObject 5) or
#'   slot (SeuratObject 4) of the Seurat assay, by name.
#' @param seurat_assay The Seurat assay (such as `"RNA"`) whose layer is
#'   read; `NULL` for the object's default assay.
#' @param key The Seurat reduction's key, the prefix of its column names:
#'   letters or digits followed by `_`; `NULL` makes it from `name`
#'   (`"NMF_"`).
#' @param keep_data Passed to [nmf()]. `FALSE` by default: the container
#'   holds the data, and a stored fit that kept them would be saved with
#'   them twice.
#' @param model `NULL` to fit; or a fit already made of the same features
#'   and cells, in the same order (such as the consensus programs of
#'   [nmf_consensus()] or a fit of [nmf()] on the container), to store
#'   instead: then give no `rank` and no arguments of [nmf()].
#' @return `x` with the fit stored (see Details).
#' @seealso [nmf()], which also takes these containers (and quanteda `dfm`s
#'   and tidytext count tables) directly: [nmfkit-containers].
#' @examples
#' set.seed(1)
#' counts <- matrix(rpois(60 * 40, 3), 60, 40,
#'                  dimnames = list(paste0("gene", 1:60),
#'                                  paste0("cell", 1:40)))
#' if (requireNamespace("SingleCellExperiment", quietly = TRUE)) {
#'   sce <- SingleCellExperiment::SingleCellExperiment(
#'     assays = list(counts = counts))
#'   sce <- add_nmf(sce, rank = 3, loss = "kl")
#'   reduced <- SingleCellExperiment::reducedDim(sce, "NMF")
#'   print(dim(reduced))                     # cells x components
#'   print(head(attr(reduced, "rotation")))  # genes x components: W
#'   print(S4Vectors::metadata(sce)$NMF)
#'   # a fit made before (here consensus programs) is stored as it is
#'   cons <- nmf_consensus(sce, rank = 3, nrun = 4)
#'   sce <- add_nmf(sce, model = cons$fits[["3"]], name = "cNMF")
#'   SingleCellExperiment::reducedDimNames(sce)
#' }
#' if (requireNamespace("SeuratObject", quietly = TRUE)) {
#'   obj <- SeuratObject::CreateSeuratObject(
#'     methods::as(counts, "CsparseMatrix"))
#'   obj <- add_nmf(obj, rank = 3, loss = "kl")
#'   obj[["nmf"]]
#' }
#' @export
add_nmf <- function(x, rank, ...) {
  check_required("x")
  UseMethod("add_nmf")
}

#' @rdname add_nmf
#' @export
add_nmf.SingleCellExperiment <- function(x, rank, ..., name = "NMF",
                                         assay = "counts",
                                         keep_data = FALSE, model = NULL) {
  call <- match.call()
  call[[1]] <- as.name("add_nmf")  # not the method's name
  need_package("SingleCellExperiment", "SingleCellExperiment",
               rlang::current_env())
  name <- check_name(name)
  fit <- if (is.null(model)) {
    check_rank_not_model(rank)
    check_nmf_dots()
    m <- input_matrix(x, assay)
    fit <- nmf(m, rank, ..., keep_data = keep_data)
    fit$call <- call
    fit
  } else {
    check_model_only(missing(rank), ...length())
    check_stored_model(model, rownames(x), colnames(x), dim(x))
  }
  reduced <- t(fit$H)
  attr(reduced, "rotation") <- fit$W
  SingleCellExperiment::reducedDim(x, name) <- reduced
  S4Vectors::metadata(x)[[name]] <- fit
  x
}

#' @rdname add_nmf
#' @export
add_nmf.Seurat <- function(x, rank, ..., name = "nmf", assay = "counts",
                           seurat_assay = NULL, key = NULL,
                           keep_data = FALSE, model = NULL) {
  call <- match.call()
  call[[1]] <- as.name("add_nmf")  # not the method's name
  need_package("SeuratObject", "Seurat", rlang::current_env())
  name <- check_name(name)
  key <- check_key(key %||% paste0(gsub("[^[:alnum:]]", "", toupper(name)),
                                   "_"))
  here <- rlang::current_env()
  a <- seurat_assay_name(x, seurat_assay, "x", here)
  fit <- if (is.null(model)) {
    check_rank_not_model(rank)
    check_nmf_dots()
    m <- seurat_layer(x, assay, a, arg = "x", call = here)
    fit <- nmf(m, rank, ..., keep_data = keep_data)
    fit$call <- call
    fit
  } else {
    check_model_only(missing(rank), ...length())
    features <- rownames(x[[a]])
    cells <- colnames(x)
    check_stored_model(model, features, cells,
                       c(length(features), length(cells)))
  }
  labels <- paste0(key, seq_len(ncol(fit$W)))
  embeddings <- t(fit$H)
  loadings <- fit$W
  colnames(embeddings) <- colnames(loadings) <- labels
  # a fit without dimnames takes the object's (a DimReduc needs them)
  rownames(embeddings) <- colnames(x)
  if (is.null(rownames(loadings))) rownames(loadings) <- rownames(x[[a]])
  x[[name]] <- SeuratObject::CreateDimReducObject(
    embeddings = embeddings, loadings = loadings, assay = a, key = key,
    misc = list(fit = fit)
  )
  x
}

#' @rdname add_nmf
#' @export
add_nmf.default <- function(x, rank, ...) {
  hint <- if (isS4(x) && methods::is(x, "SummarizedExperiment")) {
    c("i" = "A {.cls SummarizedExperiment} has no {.fn reducedDim}: convert it with {.code as(x, \"SingleCellExperiment\")}, or call {.fn nmf} on it.")
  } else {
    c("i" = "For a matrix, call {.fn nmf}.")
  }
  abort_nmfkit(c("{.fn add_nmf} stores a fit in a {.cls SingleCellExperiment} or a {.cls Seurat} object.",
                 "x" = "{.arg x} is {.obj_type_friendly {x}}.", hint),
               "type", value = x)
}

# A fit given in the place of `rank` (add_nmf(x, fit)) is meant as `model`.
check_rank_not_model <- function(rank, call = rlang::caller_env()) {
  if (missing(rank) || !inherits(rank, "nmfkit")) return(invisible())
  abort_nmfkit(c("{.arg rank} must be the number of components; it is a fitted model.",
                 "i" = "To store a fit, name it: {.code add_nmf(x, model = fit)}."),
               "model", call = call)
}

# `...` of add_nmf() goes to nmf(): named arguments of nmf() other than
# those add_nmf() sets itself, else a classed error naming the nearest.
check_nmf_dots <- function(env = rlang::caller_env(),
                           call = rlang::caller_env()) {
  valid <- setdiff(names(formals(nmf)), c("x", "rank", "keep_data", "assay"))
  check_dots_named(valid, "nmf", env = env, call = call)
}

# add_nmf(model = ) stores a fit: it takes no rank and no arguments of nmf().
check_model_only <- function(rank_missing, n_dots,
                             call = rlang::caller_env()) {
  if (rank_missing && n_dots == 0L) return(invisible())
  given <- c(if (!rank_missing) "{.arg rank}",
             if (n_dots) "{n_dots} argument{?s} in {.arg ...}")
  abort_nmfkit(c("Give {.arg rank} (and arguments of {.fn nmf}) to fit, or {.arg model} to store a fit, not both.",
                 "x" = paste0("{.arg model} is given with ",
                              paste(given, collapse = " and "), ".")),
               "model", call = call)
}

# A fit to store in a container of `features` x `samples` (`dims`): an
# nmfkit model of those dimensions, whose dimnames, where it has them, are
# the container's.
check_stored_model <- function(model, features, samples, dims,
                               call = rlang::caller_env()) {
  if (!inherits(model, "nmfkit") || !is.matrix(model$W) ||
      !is.matrix(model$H)) {
    abort_nmfkit(c("{.arg model} must be a fitted nmfkit model.",
                   "x" = "It is {.obj_type_friendly {model}}."),
                 "model", call = call, value = model)
  }
  fitted_dims <- c(nrow(model$W), ncol(model$H))
  if (!identical(as.integer(fitted_dims), as.integer(dims))) {
    abort_nmfkit(c("{.arg model} must be a fit of {dims[1]} features x {dims[2]} samples, as {.arg x} holds.",
                   "x" = "It is a fit of {fitted_dims[1]} x {fitted_dims[2]}."),
                 "dimension", call = call)
  }
  for (side in c("features", "samples")) {
    mine <- if (side == "features") rownames(model$W) else colnames(model$H)
    theirs <- if (side == "features") features else samples
    if (is.null(mine) || is.null(theirs) || identical(mine, theirs)) next
    k <- which(mine != theirs)[1]
    abort_nmfkit(c("{.arg model} must be a fit of the {side} of {.arg x}, in their order.",
                   "x" = "Its {side} differ from them first at {k}: {.val {mine[k]}} against {.val {theirs[k]}}."),
                 "dimension", call = call)
  }
  model
}

# Where a fit is stored: one non-empty string.
check_name <- function(name, arg = rlang::caller_arg(name),
                       call = rlang::caller_env()) {
  if (!is.character(name) || length(name) != 1L || is.na(name) ||
      !nzchar(name)) {
    abort_nmfkit(c("{.arg {arg}} must be a single non-empty string.",
                   "x" = "It is {describe_value(name)}."),
                 "name", call = call, value = name)
  }
  name
}

# A Seurat key: letters or digits followed by one underscore.
check_key <- function(key, call = rlang::caller_env()) {
  if (!is.character(key) || length(key) != 1L || is.na(key) ||
      !grepl("^[[:alnum:]]+_$", key)) {
    abort_nmfkit(c("{.arg key} must be letters or digits followed by {.val _}, such as {.val NMF_}.",
                   "x" = "It is {describe_value(key)}."),
                 "name", call = call, value = key)
  }
  key
}
