# Fixtures for the bad-input table (test-contract.R): one small fit of every
# variant, made quickly.

contract_fixtures <- function() {
  withr::with_seed(1, {
    x <- matrix(runif(12 * 10), 12, 10)
    x2 <- matrix(runif(12 * 8), 12, 8)
    sim <- shifted_shapes(4, frame = c(8L, 8L))
    t <- seq(-3, 3, length.out = 15)
    hist <- sapply(1:6, function(i) dnorm(t, sample(c(-1, 1), 1)) + 0.01)
    list(
      x = x, x2 = x2, sim = sim, hist = hist,
      sets = list(a = x, b = x2),
      fit = nmf(x, 2),
      jfit = nmf_joint(x, x2, rank = 2),
      sfit = nmf_stratified(list(a = x, b = x2), rank = 2,
                            control = nmf_control(max_iter = 5)),
      shfit = nmf_shift(sim$x, rank = 2, nrun = 1,
                        control = nmf_control(max_iter = 2)),
      wfit = suppressWarnings(suppressMessages(
        nmf_wasserstein(hist, rank = 2, coords = t,
                        control = nmf_control(max_iter = 1, inner = 20)))),
      dist = nmf_distance(list(a = x, b = x2, c = x + 1), method = "chamfer"),
      mfit = nmf_manifold(x, rank = 2, method = "gnmf", k = 3,
                          control = nmf_control(max_iter = 5))
    )
  })
}

# Every exported function and registered S3 method of nmfkit, by name.
nmfkit_api <- function() {
  ns <- asNamespace("nmfkit")
  s3 <- getNamespaceInfo(ns, "S3methods")
  # (methods of internal generics, such as the data source's, are not API:
  # no user calls them)
  s3 <- s3[s3[, 1] %in% getNamespaceExports(ns) |
             !vapply(s3[, 1], exists, logical(1), envir = ns,
                     inherits = FALSE), , drop = FALSE]
  methods <- paste(s3[, 1], s3[, 2], sep = ".")
  fns <- c(getNamespaceExports(ns), methods)
  fns <- fns[vapply(fns, function(f) is.function(get0(f, envir = ns)),
                    logical(1))]
  sort(unique(fns))
}

# Arguments of `fn` whose default is a character vector of choices.
choice_args <- function(fn) {
  f <- formals(get(fn, envir = asNamespace("nmfkit")))
  is_choice <- vapply(f, function(d) {
    is.call(d) && identical(d[[1]], as.name("c")) && length(d) > 2L &&
      all(vapply(as.list(d)[-1], is.character, logical(1)))
  }, logical(1))
  names(f)[is_choice]
}

# Corrupted sparse objects of every layout: list(name = object); `x` is the
# data whose shape they take (dense, nonnegative), `kind` "d" (numeric) or
# "l" (logical). Each breaks an invariant that Matrix 1.5's validObject()
# does not check or that conversions read out of bounds.
corrupt_sparse <- function(x, kind = "d") {
  s <- Matrix::Matrix(x > stats::median(x), sparse = TRUE)
  if (kind == "d") s <- s * 1
  cs <- methods::as(s, "CsparseMatrix")
  rs <- methods::as(s, "RsparseMatrix")
  ts <- methods::as(s, "TsparseMatrix")
  c_row <- cs
  c_row@i[length(c_row@i)] <- nrow(x) + 2L
  c_p <- cs
  c_p@p[length(c_p@p)] <- c_p@p[length(c_p@p)] + 5L
  r_col <- rs
  r_col@j[1] <- ncol(x) + 1L
  t_row <- ts
  t_row@i[1] <- nrow(x) + 3L
  list(c_row = c_row, c_p = c_p, r_col = r_col, t_row = t_row)
}

# Whether the message of the error `cnd` of a contract row names an
# argument, in backticks as cli's {.arg} writes it: one given in the call
# `expr` (at any depth: a setting inside `control`, an element of `init`),
# a formal argument of the function `fn` (a missing one) or `...`.
names_an_argument <- function(cnd, fn, expr) {
  msg <- cli::ansi_strip(conditionMessage(cnd))
  given <- function(e) {
    if (!is.call(e)) return(character())
    parts <- as.list(e)
    c(names(parts)[nzchar(names(parts) %||% "")],
      unlist(lapply(parts, given)))
  }
  f <- get0(sub("\\$.*", "", fn), envir = asNamespace("nmfkit"))
  cand <- unique(c(given(expr), if (is.function(f)) names(formals(f)),
                   all.vars(expr)))
  any(vapply(cand, function(a) {
    grepl(paste0("`", a), msg, fixed = TRUE)
  }, logical(1)))
}
