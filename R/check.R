# Validation of user input, done once in the exported functions. Each helper
# returns the cleaned value (or the input, invisibly) and raises a classed
# nmfkit_error naming the argument on failure. Variants reuse these helpers.

# Data ------------------------------------------------------------------------

# A nonnegative numeric data matrix: base matrix (double/integer), numeric
# data.frame, or sparse Matrix (returned as dgCMatrix, never densified).
# Returns a double matrix or dgCMatrix with dimnames kept.
# With `with_scan`, returns list(x =, scan =): the one compiled read of the
# data (r_dense_scan() or r_dgc_scan(); NULL with `allow_na`), which
# data_exponent() and nonzero_lines() reuse instead of reading x again.
# `budget`: the bytes a DelayedMatrix's scan holds at a time (NULL:
# DelayedArray::getAutoBlockSize()).
check_data <- function(x, arg = rlang::caller_arg(x),
                       call = rlang::caller_env(), allow_zero_matrix = FALSE,
                       allow_na = FALSE, with_scan = FALSE, budget = NULL) {
  if (missing(x)) {
    abort_nmfkit("{.arg {arg}} is missing: give the data matrix.", "missing",
                 call = call)
  }
  force(arg)
  # a DelayedMatrix is read in blocks, never whole (stream.R)
  if (is_delayed(x)) {
    if (allow_na) {
      abort_nmfkit(c("Missing entries ({.code na = \"omit\"}) need {.arg {arg}} in memory.",
                     "x" = "{.arg {arg}} is a {.cls {class(x)[1]}}, read in blocks."),
                   "streamed", call = call)
    }
    checked <- as_blocks(x, arg, call, allow_zero_matrix, budget)
    return(if (with_scan) checked else checked$x)
  }
  # a dgCMatrix is read once: the structure the core relies on (checked
  # before anything else reads the slots) and the values checked below
  scan <- if (inherits(x, "dgCMatrix")) r_dgc_scan(x)
  x <- as_numeric_matrix(x, arg, call, structure_ok = isTRUE(scan$valid))
  if (nrow(x) == 0L || ncol(x) == 0L) {
    abort_nmfkit(c("{.arg {arg}} must have at least one row and one column.",
                   "x" = "It has {nrow(x)} row{?s} and {ncol(x)} column{?s}."),
                 "empty", call = call)
  }
  if (!allow_na) {
    # finiteness, signs and the largest entry in one compiled read; the
    # detailed checks run only to report what is wrong
    if (!isTRUE(scan$valid)) scan <- scan_data(x)
    vals <- if (is.matrix(x)) x else x@x
    if (!scan$finite) check_finite_values(x, vals, arg, call)
    if (scan$min < 0) check_nonnegative_values(x, vals, arg, call)
    largest <- max(scan$max, 0)  # a dgCMatrix may store no values
  } else {
    scan <- NULL
    vals <- if (is.matrix(x)) x else x@x
    vals[is.na(vals)] <- 0  # missing entries (nmf(na = "omit"))
    check_finite_values(x, vals, arg, call)
    check_nonnegative_values(x, vals, arg, call)
    # nonnegative and finite by now: max() needs no logical copy of the data
    largest <- if (length(vals)) max(vals) else 0
  }
  if (!allow_zero_matrix && largest == 0) {
    abort_nmfkit(c("{.arg {arg}} must have at least one nonzero entry.",
                   "x" = "All {nrow(x)} x {ncol(x)} entries are zero."),
                 "zero", call = call)
  }
  if (with_scan) return(list(x = x, scan = scan))
  x
}

# `structure_ok`: a dgCMatrix x whose structure the caller has checked.
as_numeric_matrix <- function(x, arg, call, structure_ok = FALSE) {
  if (is.data.frame(x)) {
    ok <- vapply(x, function(col) is.numeric(col) && !is.object(col),
                 logical(1))
    if (!all(ok)) {
      bad <- names(x)[!ok]
      cls <- vapply(x[!ok], function(col) class(col)[1], character(1))
      abort_nmfkit(c("{.arg {arg}} must have only numeric columns.",
                     "x" = "{cli::qty(length(bad))}Column{?s} {.val {bad}} {?is/are} not numeric (class {.cls {unique(cls)}})."),
                   "type", call = call, value = x)
    }
    x <- as.matrix(x)
  }
  if (inherits(x, "Matrix")) return(as_dgc(x, arg, call, structure_ok))
  if (!is.matrix(x) || !(is.double(x) || is.integer(x))) {
    abort_nmfkit(c("{.arg {arg}} must be a numeric matrix, a numeric data frame or a {.cls dgCMatrix}.",
                   "x" = "It is {.obj_type_friendly {x}}."),
                 "type", call = call, value = x)
  }
  if (!is.double(x)) storage.mode(x) <- "double"
  x
}

as_dgc <- function(x, arg, call, structure_ok = FALSE) {
  # The core reads the slots of a dgCMatrix directly: a malformed one (row
  # index past nrow, unsorted rows, bad column pointers) would be read out of
  # bounds. Check the structure before any conversion or core call.
  if (!(inherits(x, "dgCMatrix") && structure_ok)) {
    check_sparse_structure(x, arg, call)
  }
  check_sparse_valid(x, arg, call)
  if (methods::is(x, "diagonalMatrix") && methods::is(x, "dMatrix")) {
    # Matrix(diag(k), sparse = TRUE) returns a ddiMatrix
    x <- methods::as(x, "CsparseMatrix")
  }
  if (methods::is(x, "dsparseMatrix")) {
    # numeric sparse in another layout (triplet, row-compressed, symmetric,
    # diagonal): convert once, still sparse
    if (!inherits(x, "dgCMatrix")) {
      x <- methods::as(methods::as(methods::as(x, "CsparseMatrix"),
                                   "generalMatrix"), "dMatrix")
      check_dgc_structure(x, arg, call)
    }
    if (!is.double(x@x)) storage.mode(x@x) <- "double"
    return(x)
  }
  if (methods::is(x, "ddenseMatrix")) return(as.matrix(x))
  abort_nmfkit(c("{.arg {arg}} is a matrix of unsupported class {.cls {class(x)[1]}}.",
                 "i" = "nmfkit takes numeric matrices (base {.cls matrix} or sparse {.cls dgCMatrix}); pattern and logical ones have no values to factorise.",
                 "i" = "Convert it with {.code x * 1} if its entries are meant as ones."),
               "type", call = call, value = x)
}

# validObject() for any Matrix, as a classed error naming the argument.
check_sparse_valid <- function(x, arg, call) {
  msg <- tryCatch({
    methods::validObject(x, complete = FALSE)
    NULL
  }, error = function(e) conditionMessage(e))
  if (is.null(msg)) return(invisible(x))
  msg <- sub("^invalid class .*? object: ", "", msg)
  abort_nmfkit(c("{.arg {arg}} is not a valid {.cls {class(x)[1]}}.",
                 "x" = "{msg}",
                 "i" = "Rebuild it with {.fn Matrix::sparseMatrix} rather than editing its slots."),
               "sparse", call = call)
}

# The one validator of every sparse Matrix argument (data, weights, mask,
# graph, factors), called before anything converts or reads it: the
# slots of any sparse layout (compressed column or row, triplet; numeric,
# logical or pattern) must describe a matrix, else a classed error naming
# the argument. Matrix 1.5's validObject() lets a compressed matrix's p end
# before or past length(i), and as.matrix() of such a one reads out of
# bounds (R crashes). Other Matrix objects pass through to
# check_sparse_valid().
check_sparse_structure <- function(x, arg, call) {
  if (!methods::is(x, "sparseMatrix")) return(invisible(x))
  if (inherits(x, "dgCMatrix") && isTRUE(r_dgc_scan(x)$valid)) {
    return(invisible(x))
  }
  problem <- sparse_structure_problem(x)
  if (is.null(problem)) return(invisible(x))
  abort_nmfkit(c("{.arg {arg}} is not a valid {.cls {class(x)[1]}}.",
                 "x" = "{problem}",
                 "i" = "Rebuild it with {.fn Matrix::sparseMatrix} rather than editing its slots."),
               "sparse", call = call)
}

# The dgCMatrix checker the core's callers use (same checks, same error).
check_dgc_structure <- function(x, arg, call) {
  check_sparse_structure(x, arg, call)
}

# What is wrong with the slots of a sparse Matrix, as one sentence, or NULL.
# Compressed layouts: p starts at 0, never decreases and ends at length of
# the index slot (== length(x) when there is an x slot); every index lies in
# range and indices increase strictly within a column (row). Triplets: i, j
# (and x) of one length, every index in range.
sparse_structure_problem <- function(x) {
  has <- function(s) methods::.hasSlot(x, s)
  if (!has("Dim")) return(NULL)
  d <- x@Dim
  # a broken Dim is validObject()'s to report
  if (!is.integer(d) || length(d) != 2L || anyNA(d) || any(d < 0L)) {
    return(NULL)
  }
  m <- d[1]
  n <- d[2]
  nx <- if (has("x")) length(x@x) else NA_integer_
  in_range <- function(idx, size, what) {
    if (!is.integer(idx)) {
      return(sprintf("Slot %s is not an integer vector.", what))
    }
    bad <- is.na(idx) | idx < 0L | idx >= size
    if (any(bad)) {
      k <- which(bad)[1]
      return(sprintf("Index %s in slot %s (0-based) is outside 0..%d.",
                     format(idx[k]), what, size - 1L))
    }
    NULL
  }
  if (has("p") && (has("i") || has("j"))) {
    by_col <- has("i")
    idx <- if (by_col) x@i else x@j
    slot <- if (by_col) "i" else "j"
    outer <- if (by_col) n else m
    size <- if (by_col) m else n
    line <- if (by_col) "column" else "row"
    p <- x@p
    if (!is.integer(p) || anyNA(p)) return("Slot p is not an integer vector.")
    if (length(p) != outer + 1L) {
      return(sprintf("Slot p has length %d; it must have %s + 1 = %d.",
                     length(p), if (by_col) "ncol" else "nrow", outer + 1L))
    }
    if (p[1] != 0L) {
      return(sprintf("Slot p starts at %d; it must start at 0.", p[1]))
    }
    if (any(diff(p) < 0L)) {
      return(sprintf("Slot p decreases at %s %d.", line,
                     which(diff(p) < 0L)[1]))
    }
    if (p[outer + 1L] != length(idx) || (!is.na(nx) && nx != length(idx))) {
      return(if (!is.na(nx)) {
        sprintf(paste("Slot p ends at %d, slot %s has %d entries and",
                      "slot x %d; all three must agree."),
                p[outer + 1L], slot, length(idx), nx)
      } else {
        sprintf("Slot p ends at %d and slot %s has %d entries; they must agree.",
                p[outer + 1L], slot, length(idx))
      })
    }
    bad <- is.na(idx) | idx < 0L | idx >= size
    if (!is.integer(idx)) return(sprintf("Slot %s is not an integer vector.", slot))
    if (any(bad)) {
      k <- which(bad)[1]
      return(sprintf("%s index %s (0-based) in %s %d is outside 0..%d.",
                     if (by_col) "Row" else "Column", format(idx[k]), line,
                     findInterval(k - 1L, p, left.open = FALSE), size - 1L))
    }
    if (length(idx) > 1L) {
      # a step down between entries k and k + 1 is fine where a line ends
      down <- diff(idx) <= 0L
      ends <- p[-c(1L, outer + 1L)]
      down[ends[ends > 0L & ends < length(idx)]] <- FALSE
      if (any(down)) {
        k <- which(down)[1]
        return(sprintf(paste("%s indices in %s %d are not strictly",
                             "increasing (unsorted or duplicated)."),
                       if (by_col) "Row" else "Column", line,
                       findInterval(k, p, left.open = TRUE)))
      }
    }
    return(NULL)
  }
  if (has("i") && has("j")) {
    if (length(x@i) != length(x@j) || (!is.na(nx) && nx != length(x@i))) {
      return(sprintf("Slots i, j%s have lengths %s; they must agree.",
                     if (!is.na(nx)) " and x" else "",
                     paste(c(length(x@i), length(x@j),
                             if (!is.na(nx)) nx), collapse = ", ")))
    }
    bad <- in_range(x@i, m, "i")
    if (is.null(bad)) bad <- in_range(x@j, n, "j")
    return(bad)
  }
  NULL
}

# Position [i, j] of the first TRUE of `bad` over the values of x.
first_position <- function(x, bad) {
  idx <- which(bad)[1]
  if (inherits(x, "dgCMatrix")) {
    i <- x@i[idx] + 1L
    j <- findInterval(idx - 1L, x@p, left.open = FALSE)
  } else {
    i <- (idx - 1L) %% nrow(x) + 1L
    j <- (idx - 1L) %/% nrow(x) + 1L
  }
  sprintf("[%d, %d]", i, j)
}

check_finite_values <- function(x, vals, arg, call,
                                hint = "Impute or drop them before factorising.",
                                class = "nonfinite") {
  # one pass without a copy of the data: NA, NaN and +-Inf all make the sum
  # non-finite (a finite sum may still overflow: then the full check)
  if (is.double(vals) && is.finite(sum(vals))) return(invisible(x))
  bad <- !is.finite(vals)
  if (!any(bad)) return(invisible(x))
  n_na <- sum(is.na(vals) & !is.nan(vals))
  n_nan <- sum(is.nan(vals))
  n_inf <- sum(is.infinite(vals))
  found <- c(if (n_na) paste(n_na, "NA"), if (n_nan) paste(n_nan, "NaN"),
             if (n_inf) paste(n_inf, "infinite"))
  where <- first_position(x, bad)
  abort_nmfkit(c("{.arg {arg}} must not contain missing or infinite values.",
                 "x" = "{.arg {arg}} has {sum(bad)} such entr{?y/ies} ({paste(found, collapse = ', ')}); the first is at {where}.",
                 "i" = hint),
               class, call = call)
}

check_nonnegative_values <- function(x, vals, arg, call,
                                     hint = "Shift or rescale the data (e.g. min-max scaling) first.",
                                     class = "negative") {
  if (!length(vals) || isTRUE(min(vals) >= 0)) return(invisible(x))
  neg <- vals < 0
  if (!any(neg)) return(invisible(x))
  low <- which.min(vals)
  lowest <- first_position(x, seq_along(vals) == low)
  abort_nmfkit(c("{.arg {arg}} must be nonnegative.",
                 "x" = "{.arg {arg}} has {sum(neg)} negative entr{?y/ies}; the smallest is {signif(vals[low], 4)} at {lowest}.",
                 "i" = hint),
               class, call = call, value = x)
}

# A numeric matrix given by the user that must be finite and nonnegative
# (starting factors, fixed components, a basis): the data's own checks,
# which count the bad entries and say where the first is, with the class
# `what` of the argument.
check_nonnegative_matrix <- function(x, arg, call, what) {
  check_finite_values(x, x, arg, call, hint = NULL, class = what)
  check_nonnegative_values(x, x, arg, call, hint = NULL, class = what)
  invisible(x)
}

# Required arguments ----------------------------------------------------------

# The arguments `args` of the calling function, which have no default, are
# given: else a classed error naming the first one left out (R's own
# "argument is missing, with no default" is unclassed and comes wherever
# the argument is first read).
check_required <- function(args, env = rlang::caller_env(),
                           call = rlang::caller_env()) {
  for (a in args) {
    if (eval(substitute(missing(v), list(v = as.name(a))), env)) {
      abort_nmfkit("{.arg {a}} is missing, with no default.", "missing",
                   call = call)
    }
  }
  invisible(NULL)
}

# Scalars ---------------------------------------------------------------------

is_number <- function(x) {
  is.numeric(x) && length(x) == 1L && !is.na(x) && is.finite(x)
}

# An integer in [min, max]; returns it as integer. Whole numbers beyond the
# integer range are errors, never NA.
check_count <- function(x, min = 1, max = Inf, arg = rlang::caller_arg(x),
                        call = rlang::caller_env(), what = "count") {
  if (!is_number(x) || x != round(x)) {
    abort_nmfkit(c("{.arg {arg}} must be a whole number.",
                   "x" = "It is {describe_value(x)}."),
                 what, call = call, value = x)
  }
  if (x < min || x > max) {
    range <- if (is.finite(max)) sprintf("between %s and %s", min, max)
             else sprintf("at least %s", min)
    abort_nmfkit(c("{.arg {arg}} must be {range}.",
                   "x" = "It is {describe_value(x)}."),
                 what, call = call, value = x)
  }
  if (abs(x) > .Machine$integer.max) {
    abort_nmfkit(c("{.arg {arg}} must be at most {(.Machine$integer.max)} (the largest integer R has).",
                   "x" = "It is {describe_value(x)}."),
                 what, call = call, value = x)
  }
  as.integer(x)
}

# Where the largest rank comes from, as the `why` of check_rank() and
# check_ranks(): the smaller dimension of the matrix fitted, naming where
# that matrix is (`x` itself, or the assay or layer of the container
# `original` that input_matrix() read), with its size.
rank_bound <- function(x, original = x, assay = "counts", arg = "x") {
  d <- dim(x)
  where <- if (isS4(original) && methods::is(original, "SummarizedExperiment")) {
    cli::format_inline("the assay {.val {assay}} of {.arg {arg}}")
  } else if (inherits(original, "Seurat")) {
    cli::format_inline("the layer {.val {assay}} of {.arg {arg}}")
  } else if (inherits(original, "dfm")) {
    cli::format_inline("{.arg {arg}} (a {.cls dfm}, read as terms x documents)")
  } else if (is.data.frame(original) && all(c("document", "term", "n") %in%
                                            names(original))) {
    cli::format_inline("{.arg {arg}} (a count table, read as terms x documents)")
  } else {
    cli::format_inline("{.arg {arg}}")
  }
  text <- sprintf("the smaller dimension of %s, which is %d x %d", where,
                  d[1], d[2])
  # the text goes into a cli template: literal braces doubled
  gsub("}", "}}", gsub("{", "{{", text, fixed = TRUE), fixed = TRUE)
}

# The factorisation rank: a whole number in [1, max_rank].
check_rank <- function(rank, max_rank, arg = rlang::caller_arg(rank),
                       call = rlang::caller_env(),
                       why = "the smaller dimension of the data") {
  if (missing(rank)) {
    abort_nmfkit(c(paste0("{.arg {arg}} is missing: give the number of components, from 1 to {max_rank} (", why, ")."),
                   "i" = "For example {.code rank = {min(2L, max_rank)}}."),
                 "missing", call = call)
  }
  if (!is_number(rank) || rank != round(rank) || rank < 1 || rank > max_rank) {
    abort_nmfkit(c(paste0("{.arg {arg}} must be a whole number from 1 to {max_rank} (", why, ")."),
                   "x" = "It is {describe_value(rank)}."),
                 "rank", call = call, value = rank)
  }
  as.integer(rank)
}

# A number in a range; lower bound strict when `strict`.
check_number <- function(x, min = -Inf, max = Inf, strict = FALSE,
                         arg = rlang::caller_arg(x),
                         call = rlang::caller_env(), what = "value") {
  ok <- is_number(x) && (if (strict) x > min else x >= min) && x <= max
  if (!ok) {
    cmp <- if (strict) "greater than" else "at least"
    range <- if (is.finite(max)) sprintf("%s %s and at most %s", cmp, min, max)
             else sprintf("%s %s", cmp, min)
    abort_nmfkit(c("{.arg {arg}} must be a finite number {range}.",
                   "x" = "It is {describe_value(x)}."),
                 what, call = call, value = x)
  }
  as.double(x)
}

check_flag <- function(x, arg = rlang::caller_arg(x),
                       call = rlang::caller_env(), what = "flag") {
  if (!is.logical(x) || length(x) != 1L || is.na(x)) {
    abort_nmfkit(c("{.arg {arg}} must be {.code TRUE} or {.code FALSE}.",
                   "x" = "It is {describe_value(x)}."),
                 what, call = call, value = x)
  }
  x
}

# Factors ---------------------------------------------------------------------

# A nonnegative finite numeric matrix of a given shape (user-supplied factors).
check_factor_matrix <- function(x, nrow, ncol, arg, call = rlang::caller_env()) {
  if (inherits(x, "Matrix")) {
    # a factor is dense: a (valid) Matrix one is used as a base matrix
    check_sparse_structure(x, arg, call)
    check_sparse_valid(x, arg, call)
    x <- as.matrix(x)
  }
  if (!is.matrix(x) || !is.numeric(x)) {
    abort_nmfkit(c("{.arg {arg}} must be a numeric matrix.",
                   "x" = "It is {.obj_type_friendly {x}}."), "init", call = call, value = x)
  }
  if (nrow(x) != nrow || ncol(x) != ncol) {
    abort_nmfkit(c("{.arg {arg}} must be {nrow} x {ncol}.",
                   "x" = "It is {nrow(x)} x {ncol(x)}."), "init", call = call, value = x)
  }
  check_nonnegative_matrix(x, arg, call, "init")
  storage.mode(x) <- "double"
  x
}

# Image dimensions c(rows, cols) whose product is the number of pixels.
check_image_dim <- function(image_dim, n_pixels, arg = rlang::caller_arg(image_dim),
                            call = rlang::caller_env()) {
  ok <- is.numeric(image_dim) && length(image_dim) == 2L &&
    all(is.finite(image_dim)) && all(image_dim >= 1) &&
    all(image_dim == round(image_dim)) &&
    all(image_dim <= .Machine$integer.max)
  if (!ok) {
    abort_nmfkit(c("{.arg {arg}} must be two positive whole numbers c(rows, columns).",
                   "x" = "It is {.code {deparse(image_dim)}}."),
                 "image_dim", call = call, value = image_dim)
  }
  if (prod(image_dim) != n_pixels) {
    abort_nmfkit(c("{.arg {arg}} must multiply to the number of pixels, {n_pixels}.",
                   "x" = "{image_dim[1]} x {image_dim[2]} = {prod(image_dim)}."),
                 "image_dim", call = call, value = image_dim)
  }
  as.integer(image_dim)
}

# New data for predict(): same features (rows) as the fit.
check_newdata <- function(newdata, n_features, arg = rlang::caller_arg(newdata),
                          call = rlang::caller_env(), budget = NULL) {
  newdata <- check_data(newdata, arg = arg, call = call,
                        allow_zero_matrix = TRUE, budget = budget)
  if (nrow(newdata) != n_features) {
    abort_nmfkit(c("{.arg {arg}} must have {n_features} rows, one per feature of the fit.",
                   "x" = "It has {nrow(newdata)} row{?s}.",
                   "i" = "Columns are samples; transpose with {.fn t} if your samples are rows."),
                 "dimension", call = call, value = newdata)
  }
  newdata
}

# One of a set of strings. The package's only way to check a choice argument
# (it replaces match.arg() and rlang::arg_match(), whose errors are not
# nmfkit_error): the full default vector picks the first choice; no partial
# matching; a near miss gets a "did you mean" hint. Without `choices`, the
# default of the caller's argument named `arg` lists them.
check_choice <- function(x, choices, arg = rlang::caller_arg(x),
                         call = rlang::caller_env(), what = "choice") {
  if (missing(choices)) {
    # like match.arg(): the choices are the default of the caller's argument
    choices <- eval(formals(sys.function(sys.parent()))[[arg]])
  }
  if (identical(x, choices)) return(choices[1])
  if (!is.character(x) || length(x) != 1L || is.na(x) || !x %in% choices) {
    hint <- if (is.character(x) && length(x) == 1L && !is.na(x))
      nearest_name(x, choices)
    abort_nmfkit(c("{.arg {arg}} must be one of {.or {.val {choices}}}.",
                   "x" = "It is {describe_value(x)}.",
                   "i" = if (!is.null(hint)) "Did you mean {.val {hint}}?"),
                 what, call = call, value = x)
  }
  x
}

# The closest of `choices` to the string x (case-insensitive edit distance,
# or a prefix), or NULL when none is close.
nearest_name <- function(x, choices) {
  if (!length(choices) || !nzchar(x)) return(NULL)
  d <- drop(utils::adist(tolower(x), tolower(choices)))
  prefix <- startsWith(tolower(choices), tolower(x)) |
    startsWith(tolower(x), tolower(choices))
  d[prefix] <- pmin(d[prefix], 1)
  best <- which.min(d)
  if (d[best] <= max(2, nchar(x) %/% 3)) choices[best] else NULL
}

# A user's value in an error message: numbers with enough digits to show
# that 2 + 1e-12 is not whole (and Inf, NA as such), strings quoted, other
# objects by their type.
describe_value <- function(x) {
  if (is.numeric(x) && length(x) == 1L && is.null(dim(x))) {
    return(format(x, digits = 15))
  }
  if (is.character(x) && length(x) == 1L && !is.na(x)) {
    return(encodeString(x, quote = "\""))
  }
  if (is.logical(x) && length(x) == 1L) return(format(x))
  cli::format_inline("{.obj_type_friendly {x}}")
}

# A level or a rate strictly between 0 and 1 (a confidence level, a false
# discovery rate).
check_level <- function(level, arg = rlang::caller_arg(level),
                        call = rlang::caller_env()) {
  if (!is_number(level) || level <= 0 || level >= 1) {
    abort_nmfkit(c("{.arg {arg}} must be a number strictly between 0 and 1, such as 0.9 or 0.05.",
                   "x" = "It is {describe_value(level)}."),
                 "value", call = call, value = level)
  }
  as.double(level)
}
