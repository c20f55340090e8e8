#' Read and write mutational catalogues and signatures
#'
#' The text layout of COSMIC and SigProfiler: a tab-separated table whose
#' first column names the mutation context and whose other columns are
#' samples (a catalogue of counts) or signatures (probabilities over the
#' contexts, each column summing to 1). Three forms of the context columns
#' are read:
#' * a `MutationType` (SigProfiler) or `Type` column holding the full
#'   context, `A[C>A]A` for single base substitutions, `AC>CA` for doublets,
#'   `1:Del:C:0` for indels;
#' * a `Type` column with the substitution (`C>A`) and a `Subtype` column
#'   with the trinucleotide (`ACA`), as COSMIC v3.2 and MutationalPatterns
#'   ship them: they are joined into `A[C>A]A`;
#' * any other first column of text (its header is kept as the name).
#'
#' `read_catalogue()` returns a numeric matrix with the contexts as row
#' names and the samples or signatures as column names, in the file's
#' order: the orientation of every nmfkit function (features x samples).
#' `write_catalogue()` writes the SigProfiler form (`MutationType` then
#' one column per sample), which `read_catalogue()` and SigProfiler read
#' back.
#'
#' @param file A path (or connection) to read from or write to.
#' @param x A numeric matrix (or data frame of numeric columns) with the
#'   contexts as row names.
#' @param digits Significant digits written (17 keeps every double).
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return `read_catalogue()`: a numeric matrix, contexts x columns.
#'   `write_catalogue()`: `file`, invisibly.
#' @seealso [cosmic_signatures()] for the COSMIC reference in this layout.
#' @examples
#' set.seed(1)
#' x <- simulate_catalogue(simulate_signatures(3), n = 2)$counts
#' f <- tempfile(fileext = ".txt")
#' write_catalogue(x, f)
#' y <- read_catalogue(f)
#' identical(y, x * 1)
#' @export
read_catalogue <- function(file, ...) {
  check_dots_empty()
  if (!inherits(file, "connection")) {
    if (!is.character(file) || length(file) != 1L || is.na(file)) {
      abort_nmfkit(c("{.arg file} must be a path or a connection.",
                     "x" = "It is {describe_value(file)}."),
                   "type", value = file)
    }
    if (!file.exists(file)) {
      abort_nmfkit(c("{.arg file} does not exist.",
                     "x" = "No file at {.path {file}}."),
                   "file", value = file)
    }
  }
  tab <- utils::read.delim(file, check.names = FALSE, stringsAsFactors = FALSE,
                           colClasses = "character", quote = "",
                           comment.char = "")
  if (ncol(tab) < 2L || nrow(tab) < 1L) {
    abort_nmfkit(c("{.arg file} must hold a context column and at least one numeric column.",
                   "x" = "It has {ncol(tab)} column{?s} and {nrow(tab)} row{?s}."),
                 "catalogue", value = file)
  }
  keys <- tolower(gsub("[^A-Za-z]", "", names(tab)))
  two <- ncol(tab) >= 3L && keys[1] == "type" && keys[2] == "subtype"
  if (two) {
    ctx <- sbs_context(tab[[1]], tab[[2]])
    vals <- tab[-(1:2)]
  } else {
    ctx <- tab[[1]]
    vals <- tab[-1]
  }
  num <- lapply(vals, function(v) suppressWarnings(as.numeric(v)))
  bad <- vapply(seq_along(num), function(i) {
    sum(is.na(num[[i]]) & !is.na(vals[[i]]) & nzchar(vals[[i]]) &
          vals[[i]] != "NA")
  }, numeric(1))
  if (any(bad > 0)) {
    col <- names(vals)[which(bad > 0)[1]]
    abort_nmfkit(c("Every column of {.arg file} but the context must be numeric.",
                   "x" = "Column {.val {col}} has {bad[bad > 0][1]} entr{?y/ies} that {?is/are} not numbers."),
                 "catalogue", value = file)
  }
  if (anyDuplicated(ctx)) {
    abort_nmfkit(c("The contexts of {.arg file} must be distinct.",
                   "x" = "{.val {ctx[duplicated(ctx)][1]}} appears more than once."),
                 "catalogue", value = file)
  }
  out <- matrix(unlist(num, use.names = FALSE), nrow(tab), length(num),
                dimnames = list(ctx, names(vals)))
  out
}

#' @rdname read_catalogue
#' @export
write_catalogue <- function(x, file, digits = 17L, ...) {
  check_dots_empty()
  x <- check_catalogue_matrix(x)
  digits <- check_count(digits, min = 1, max = 22)
  if (missing(file)) {
    abort_nmfkit("{.arg file} is missing: give a path or a connection.",
                 "missing")
  }
  if (!inherits(file, "connection") &&
      (!is.character(file) || length(file) != 1L || is.na(file) ||
         !nzchar(file))) {
    abort_nmfkit(c("{.arg file} must be a path or a connection.",
                   "x" = "It is {describe_value(file)}."),
                 "type", value = file)
  }
  if (is.null(rownames(x))) {
    abort_nmfkit(c("{.arg x} must have the contexts as row names.",
                   "x" = "Its rows have no names."),
                 "context")
  }
  if (is.null(colnames(x))) colnames(x) <- paste0("sample", seq_len(ncol(x)))
  body <- formatC(x, digits = digits, format = "g")
  body <- gsub(" ", "", body, fixed = TRUE)
  lines <- c(paste(c("MutationType", colnames(x)), collapse = "\t"),
             paste(rownames(x), apply(body, 1, paste, collapse = "\t"),
                   sep = "\t"))
  # R's "cannot open file" warning and "cannot open the connection" error,
  # as one classed error with the warning's reason
  call <- rlang::current_env()
  why <- NULL
  tryCatch(withCallingHandlers(writeLines(lines, file), warning = function(w) {
    why <<- conditionMessage(w)
    invokeRestart("muffleWarning")
  }), error = function(e) {
    why <- why %||% conditionMessage(e)
    abort_nmfkit(c("{.arg file} cannot be written.", "x" = "{why}"),
                 "file", value = file, call = call)
  })
  invisible(file)
}

# A numeric matrix (dense) from a matrix or data frame of numeric columns,
# finite; names kept.
check_catalogue_matrix <- function(x, arg = rlang::caller_arg(x),
                                   call = rlang::caller_env()) {
  if (is.data.frame(x)) {
    ok <- vapply(x, is.numeric, logical(1))
    if (!all(ok)) {
      abort_nmfkit(c("{.arg {arg}} must have numeric columns only.",
                     "x" = "Column {.val {names(x)[!ok][1]}} is {.obj_type_friendly {x[[which(!ok)[1]]]}}."),
                   "type", call = call)
    }
    x <- as.matrix(x)
  }
  if (inherits(x, "Matrix")) x <- as.matrix(x)
  if (!is.matrix(x) || !is.numeric(x)) {
    abort_nmfkit(c("{.arg {arg}} must be a numeric matrix.",
                   "x" = "It is {.obj_type_friendly {x}}."),
                 "type", call = call, value = x)
  }
  if (!length(x)) {
    abort_nmfkit(c("{.arg {arg}} must not be empty.",
                   "x" = "It is {nrow(x)} x {ncol(x)}."),
                 "dimension", call = call)
  }
  if (any(!is.finite(x))) {
    abort_nmfkit(c("{.arg {arg}} must be finite.",
                   "x" = "It has {sum(!is.finite(x))} NA, NaN or infinite entr{?y/ies}."),
                 "nonfinite", call = call)
  }
  storage.mode(x) <- "double"
  x
}

# Substitution ("C>A") and trinucleotide ("ACA") as "A[C>A]A".
sbs_context <- function(type, subtype) {
  paste0(substr(subtype, 1, 1), "[", type, "]", substr(subtype, 3, 3))
}

# The 96 single base substitution contexts of COSMIC and SigProfiler, in
# their order: the six substitutions of the pyrimidine base (C>A, C>G, C>T,
# T>A, T>C, T>G), each with the 16 pairs of flanking bases, as A[C>A]A.
sbs96_contexts <- function() {
  subs <- c("C>A", "C>G", "C>T", "T>A", "T>C", "T>G")
  bases <- c("A", "C", "G", "T")
  flank <- expand.grid(right = bases, left = bases, stringsAsFactors = FALSE)
  unlist(lapply(subs, function(s) {
    paste0(flank$left, "[", s, "]", flank$right)
  }))
}

#' COSMIC reference mutational signatures
#'
#' The COSMIC v3.2 (March 2021) reference signatures as a matrix, contexts
#' x signatures, each column a probability distribution over the contexts:
#' single base substitutions (`"SBS"`, 96 contexts, 78 signatures), doublet
#' base substitutions (`"DBS"`, 78 contexts, 11 signatures) and small
#' insertions and deletions (`"ID"`, 83 contexts, 18 signatures), with the
#' SBS and DBS signatures for the trinucleotide (or dinucleotide)
#' frequencies of the GRCh37 or GRCh38 human genomes or the mm10 mouse
#' genome (ID: GRCh37 only). Contexts are named as by [read_catalogue()]
#' (`A[C>A]A`, `AC>CA`, `1:Del:C:0`).
#'
#' `artefacts = FALSE` leaves out the 18 SBS signatures COSMIC lists as
#' possible sequencing artefacts (SBS27, SBS43, SBS45 to SBS60, SBS95),
#' the set MutationalPatterns' `get_known_signatures()` returns by
#' default.
#'
#' The package does not ship these files: COSMIC's signatures are free for
#' non-commercial use under COSMIC's own terms. `tools/install-signatures.R`
#' of the nmfkit source (run by `make test` and `make demo`) takes them
#' from Debian's `r-bioc-mutationalpatterns` 3.8.1 package, which
#' redistributes them, into `Sys.getenv("NMFKIT_DATA")` or, unset,
#' `tools::R_user_dir("nmfkit", "data")`. Cite Alexandrov et al. (2020)
#' and COSMIC when you use them.
#'
#' @param type `"SBS"`, `"DBS"` or `"ID"`.
#' @param genome `"GRCh37"`, `"GRCh38"` or `"mm10"`.
#' @param artefacts Keep the SBS signatures of possible sequencing
#'   artefacts.
#' @param dir The directory holding the files (see Details).
#' @param ... Unused; an argument given here is an error (a misspelling).
#' @return A numeric matrix, contexts x signatures.
#' @references Alexandrov, L. B. et al. (2020). The repertoire of
#'   mutational signatures in human cancer. *Nature* 578, 94-101.
#' @examples
#' if (cosmic_signatures_available()) {
#'   sbs <- cosmic_signatures("SBS")
#'   dim(sbs)
#'   plot_spectra(sbs[, c("SBS1", "SBS5")])
#' }
#' @export
cosmic_signatures <- function(type = c("SBS", "DBS", "ID"),
                              genome = c("GRCh37", "GRCh38", "mm10"),
                              artefacts = TRUE, dir = example_counts_dir(), ...) {
  check_dots_empty()
  type <- check_choice(type)
  genome <- check_choice(genome)
  check_flag(artefacts)
  check_dir(dir)
  if (type == "ID" && genome != "GRCh37") {
    abort_nmfkit(c("The COSMIC v3.2 indel signatures are installed for {.val GRCh37} only.",
                   "x" = "{.arg genome} is {.val {genome}}.",
                   "i" = "Indel contexts do not depend on the genome's base frequencies: use {.code genome = \"GRCh37\"}."),
                 "choice", value = genome)
  }
  file <- cosmic_file(type, genome, dir)
  if (!file.exists(file)) {
    abort_nmfkit(c("The COSMIC signatures are not installed in {.arg dir} = {.path {dirname(file)}}.",
                   "i" = "Run {.code Rscript tools/install-signatures.R} from the nmfkit source (or {.code make deps}); it takes them from Debian's {.pkg r-bioc-mutationalpatterns} package."),
                 "missing", value = dir)
  }
  out <- read_catalogue(file)
  if (!artefacts && type == "SBS") {
    art <- c("SBS27", "SBS43", paste0("SBS", 45:60), "SBS95")
    out <- out[, !colnames(out) %in% art, drop = FALSE]
  }
  out
}

#' @rdname cosmic_signatures
#' @export
cosmic_signatures_available <- function(dir = example_counts_dir(), ...) {
  check_dots_empty()
  check_dir(dir)
  all(file.exists(vapply(c("SBS", "DBS", "ID"), cosmic_file, character(1),
                         genome = "GRCh37", dir = dir)))
}

cosmic_file <- function(type, genome, dir) {
  prefix <- c(SBS = "snv", DBS = "dbs", ID = "indel")[[type]]
  file.path(dir, "mutationalpatterns",
            sprintf("%s_COSMIC_v3.2_reference_%s.txt", prefix, genome))
}

# A directory argument: one path.
check_dir <- function(dir, arg = rlang::caller_arg(dir),
                      call = rlang::caller_env()) {
  if (!is.character(dir) || length(dir) != 1L || is.na(dir)) {
    abort_nmfkit(c("{.arg {arg}} must be one path.",
                   "x" = "It is {describe_value(dir)}."),
                 "type", call = call, value = dir)
  }
  invisible(dir)
}
