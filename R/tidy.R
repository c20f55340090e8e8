#' Tidy a fitted nmfkit model
#'
#' Methods of the `generics` package (the ones `broom` users know), for every
#' nmfkit fit. `tidy()` turns a factor into a long data frame, one row per
#' entry, as `tidytext` tidies a topic model: `matrix = "W"` gives `feature`,
#' `component`, `value` (the basis: which features make each component),
#' `matrix = "H"` gives `sample`, `component`, `value` (the coefficients:
#' how much of each component each sample holds). Rows go component by
#' component. `glance()` gives one row about the fit, and `augment()` adds
#' each sample's cluster and coefficients to a data frame of samples.
#'
#' Stratified fits also tidy their shifts (`matrix = "V"`: `feature`,
#' `stratum`, `value`); stratified and joint fits add the stratum (`stratum`)
#' or data set (`set`) of each sample to `tidy(matrix = "H")` and to
#' `augment()`. Consensus programs ([nmf_consensus()]) have their own
#' methods (see [print.nmfkit_consensus()]).
#'
#' @param x A fitted nmfkit model.
#' @param matrix Which factor: `"W"` (basis) or `"H"` (coefficients); `"V"`
#'   (shifts) for stratified fits.
#' @param data For `augment()`: `NULL`, or a data frame with one row per
#'   sample of the fit (or of `newdata`), in their order, to which the
#'   columns are added.
#' @param newdata For `augment()`: `NULL` (the fit's own samples), or new
#'   samples (a matrix with the fit's features as rows), whose coefficients
#'   come from [predict()][predict.nmfkit()].
#' @param ... For `augment()` with `newdata`, passed to `predict()` (such as
#'   `strata` for a stratified fit); otherwise unused: an argument given here
#'   is an error (a misspelling).
#' @return Data frames. `tidy()`: one row per entry of the factor, its
#'   feature or sample as text (the row or column name, or its index), its
#'   component a factor with levels `nmf1`, `nmf2`, .... `glance()`: one row
#'   with `variant`, `method` (the solver, where the variant has several),
#'   `rank`, `nrow` (features), `ncol` (samples), `loss` (the last value of
#'   the trace), `loss_name`, `iterations`, `status`, `converged`,
#'   `relative_error` (`NA` when the fit keeps no data), `sparsity_w` and
#'   `sparsity_h` (shares of zero entries). `augment()`: `data` (or a data
#'   frame with a `sample` column) with `.cluster` (the sample's cluster as
#'   [clusters()] gives it, or for `newdata` the component of its largest
#'   coefficient, a factor) and one column per component, `.nmf1`, `.nmf2`,
#'   ..., its coefficients.
#' @examples
#' x <- swimmer()
#' set.seed(1)
#' fit <- nmf(x, rank = 17)
#' head(tidy(fit))
#' head(tidy(fit, matrix = "H"))
#' glance(fit)
#' head(augment(fit)[, 1:4])
#' @name tidy.nmfkit
NULL

#' @importFrom generics tidy
#' @export
generics::tidy

#' @importFrom generics glance
#' @export
generics::glance

#' @importFrom generics augment
#' @export
generics::augment

#' @rdname tidy.nmfkit
#' @method tidy nmfkit
#' @export
tidy.nmfkit <- function(x, matrix = c("W", "H"), ...) {
  check_dots_empty()
  matrix <- check_choice(matrix)
  tidy_factor(x, matrix)
}

# The long table of factor `matrix` of a fit: W by features, H by samples
# (with the variant's per-sample columns).
tidy_factor <- function(x, matrix) {
  if (matrix == "W") return(tidy_long(x$W, "feature", "component"))
  tidy_long(t(x$H), "sample", "component", sample_groups(x))
}

# Long table of m (rows x columns): row, column (a factor in column order),
# value; column by column. `extra`: columns per row of m, repeated.
tidy_long <- function(m, row_name, col_name, extra = NULL) {
  rows <- rownames(m)
  if (is.null(rows)) rows <- as.character(seq_len(nrow(m)))
  cols <- colnames(m)
  out <- data.frame(row = rep(rows, ncol(m)),
                    col = factor(rep(cols, each = nrow(m)), levels = cols),
                    value = as.vector(m), stringsAsFactors = FALSE)
  names(out)[1:2] <- c(row_name, col_name)
  if (!is.null(extra)) {
    extra <- extra[rep(seq_len(nrow(m)), ncol(m)), , drop = FALSE]
    out <- cbind(out[1], extra, out[-1])
  }
  rownames(out) <- NULL
  out
}

# Columns a variant adds to each sample (its stratum, its data set), as a
# data frame with one row per sample; NULL when it adds none.
sample_groups <- function(object) UseMethod("sample_groups")
sample_groups.default <- function(object) NULL

#' @rdname tidy.nmfkit
#' @method glance nmfkit
#' @export
glance.nmfkit <- function(x, ...) {
  check_dots_empty()
  s <- summary(x)
  rel <- s$relative_error
  loss <- if (length(x$loss)) utils::tail(x$loss, 1) else NA_real_
  data.frame(
    variant = sub("^nmfkit_", "", class(x)[1]),
    method = if (is.character(x$method) && length(x$method) == 1L) x$method
             else NA_character_,
    rank = x$rank, nrow = nrow(x$W), ncol = ncol(x$H), loss = loss,
    loss_name = x$loss_name, iterations = x$iterations, status = x$status,
    converged = identical(x$status, "converged"),
    relative_error = if (is.numeric(rel) && length(rel) == 1L) rel
                     else NA_real_,
    sparsity_w = mean(x$W == 0), sparsity_h = mean(x$H == 0),
    stringsAsFactors = FALSE
  )
}

#' @rdname tidy.nmfkit
#' @method augment nmfkit
#' @export
augment.nmfkit <- function(x, data = NULL, newdata = NULL, ...) {
  if (is.null(newdata)) {
    check_dots_empty()
    h <- x$H
    cl <- clusters(x)
    groups <- sample_groups(x)
  } else {
    h <- stats::predict(x, newdata, ...)
    cl <- max.col(t(h), ties.method = "first")
    groups <- NULL
  }
  n <- ncol(h)
  if (is.null(data)) {
    samples <- colnames(h)
    if (is.null(samples)) samples <- as.character(seq_len(n))
    data <- data.frame(sample = samples, stringsAsFactors = FALSE)
    if (!is.null(groups)) data <- cbind(data, groups)
  } else if (!is.data.frame(data) || nrow(data) != n) {
    abort_nmfkit(c("{.arg data} must be a data frame with one row per sample ({n}).",
                   "x" = if (is.data.frame(data)) "It has {nrow(data)} row{?s}."
                         else "It is {.obj_type_friendly {data}}.",
                   "i" = "Samples are the columns of the data (of {.arg newdata} when given)."),
                 "data", value = data)
  }
  comp <- rownames(h)
  data[[".cluster"]] <- factor(comp[cl], levels = comp)
  for (q in seq_along(comp)) data[[paste0(".", comp[q])]] <- unname(h[q, ])
  data
}

# as.data.frame() of a result: its table, with base R's `row.names` (NULL,
# or one distinct name per row, which the rows then carry) and `optional`
# (a flag; the columns keep their names either way) checked rather than
# ignored.
results_frame <- function(table, row.names, optional,
                          call = rlang::caller_env()) {
  check_flag(optional, call = call)
  if (is.null(row.names)) return(table)
  if (!(is.character(row.names) || is.numeric(row.names)) ||
      length(row.names) != nrow(table) || anyNA(row.names) ||
      anyDuplicated(row.names)) {
    abort_nmfkit(c("{.arg row.names} must be {.code NULL} or {nrow(table)} distinct name{?s}, one per row.",
                   "x" = "It is {describe_value(row.names)}."),
                 "value", call = call, value = row.names)
  }
  rownames(table) <- row.names
  table
}

# summary() of a result whose summary is one table (rank selection, tuning,
# consensus): the data frame with class c("summary.<class>",
# "nmfkit_summary_table", "data.frame") and a title, so that every
# summary() returns a summary.<class> object that prints itself and is used
# as its table (as.data.frame() drops the classes).
new_summary_table <- function(table, cls, title) {
  rownames(table) <- NULL
  structure(table, class = c(paste0("summary.", cls), "nmfkit_summary_table",
                             "data.frame"),
            title = title)
}

#' @export
print.nmfkit_summary_table <- function(x, digits = 3L, ...) {
  check_dots_empty()
  digits <- check_count(digits, min = 1, max = 22)
  title <- attr(x, "title")
  if (length(title)) cat(title, "\n", sep = "")
  print(format(as.data.frame(x), digits = digits), row.names = FALSE)
  invisible(x)
}
