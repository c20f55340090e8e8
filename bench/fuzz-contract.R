# Contract fuzz: every exported function (and the methods users call) over a
# grid of bad and extreme inputs, each cell in a forked worker process, each
# result classified:
#   classed            an nmfkit_error naming the argument
#   classed, unnamed   an nmfkit_error whose message does not name it
#   unclassed error    any other error
#   crash              the worker died
#   hang               no answer within the time limit
#   nonsense           an answer with non-finite numbers, lost dimnames or
#                      a failed invariant (self-similarity 1, scale
#                      equivariance, row order)
#   accepted           a bad value accepted (listed: some are valid calls)
#   ok                 an extreme-but-valid input answered soundly
# Usage (from the package root, nmfkit installed in R_LIBS):
#   R_LIBS=/work/lib/NAME nice Rscript bench/fuzz-contract.R [cells.csv [n]]
# (FUZZ_ONLY=<regex> runs the cells whose id matches)
# prints the count per class and every cell not classed or ok; with a file
# name, writes the table of cells there.

suppressPackageStartupMessages({
  library(nmfkit)
  library(Matrix)
})
options(warn = 1, nmfkit.threads = 1L)
args <- commandArgs(TRUE)
timeout <- 30

# Fixtures ---------------------------------------------------------------------

fx <- local({
  set.seed(1)
  x <- matrix(rpois(15 * 12, 4) + 0, 15, 12,
              dimnames = list(paste0("g", 1:15), paste0("c", 1:12)))
  quiet <- function(e) suppressWarnings(suppressMessages(e))
  fit <- nmf(x, 2)
  kl <- nmf(x, 2, loss = "kl", control = nmf_control(max_iter = 20))
  cons <- quiet(nmf_consensus(x, 2, nrun = 3,
                              control = nmf_control(max_iter = 20)))
  tidy_counts <- data.frame(document = rep(colnames(x), each = 15),
                            term = rep(rownames(x), 12), n = c(x))
  list(x = x, fit = fit, kl = kl, cons = cons, tidy_counts = tidy_counts,
       x2 = x[, 1:8] + 1, sets = list(a = x, b = x[, 1:8] + 1),
       hist = apply(x, 2, function(v) (v + 0.1) / sum(v + 0.1)),
       labels = rep(1:2, 6),
       sce_ok = requireNamespace("SingleCellExperiment", quietly = TRUE),
       h5_ok = requireNamespace("HDF5Array", quietly = TRUE) &&
         requireNamespace("rhdf5", quietly = TRUE))
})

# A valid call of each function: the grid replaces one argument at a time.
bases <- list(
  nmf = quote(nmf(x, rank = 2, control = nmf_control(max_iter = 5))),
  nmf_kl = quote(nmf(x, rank = 2, loss = "kl",
                     control = nmf_control(max_iter = 5))),
  nmf_control = quote(nmf_control(tol = 1e-4, max_iter = 10)),
  nmf_consensus = quote(nmf_consensus(x, rank = 2, nrun = 2,
                                      control = nmf_control(max_iter = 5))),
  nmf_rank = quote(nmf_rank(x, ranks = 1:2, nfolds = 2,
                            control = nmf_control(max_iter = 5))),
  nmf_tune = quote(nmf_tune(x, rank = 1:2, nfolds = 2,
                            control = nmf_control(max_iter = 5))),
  nmf_joint = quote(nmf_joint(x, x2, rank = 2,
                              control = nmf_control(max_iter = 5))),
  nmf_stratified = quote(nmf_stratified(sets, rank = 2,
                                        control = nmf_control(max_iter = 5))),
  nmf_manifold = quote(nmf_manifold(x, rank = 2, k = 3,
                                    control = nmf_control(max_iter = 5))),
  nmf_wasserstein = quote(nmf_wasserstein(hist, rank = 2,
                                          control = nmf_control(max_iter = 1,
                                                                inner = 10))),
  nmf_bootstrap = quote(nmf_bootstrap(kl, B = 2)),
  predict = quote(predict(fit, newdata = x)),
  predict_kl = quote(predict(kl, newdata = x)),
  residuals = quote(residuals(kl, type = "deviance")),
  fitted = quote(fitted(fit)),
  top_features = quote(top_features(fit, n = 3, score = "weight")),
  feature_score = quote(feature_score(fit, method = "kim")),
  match_components = quote(match_components(fit, fit)),
  tidy = quote(tidy(fit, matrix = "W")),
  glance = quote(glance(fit)),
  augment = quote(augment(fit, data = x)),
  summary = quote(summary(fit)),
  print = quote(print(fit, digits = 3)),
  basis = quote(basis(fit)),
  coef = quote(coef(fit)),
  clusters = quote(clusters(fit)),
  autoplot = quote(ggplot2::autoplot(fit, type = "basis", components = 1)),
  plot = quote(plot(fit, type = "basis")),
  chamfer_distance = quote(chamfer_distance(x, x2)),
  nmf_distance = quote(nmf_distance(sets, rank = 2, method = "chamfer")),
  ot_distance = quote(ot_distance(hist[, 1], hist[, 2])),
  cluster_acc = quote(cluster_acc(labels, labels)),
  cluster_nmi = quote(cluster_nmi(labels, labels)),
  swimmer = quote(swimmer()),
  two_moons = quote(two_moons(n = 20)),
  shifted_shapes = quote(shifted_shapes(n = 2, frame = c(8L, 8L))),
  example_counts = quote(example_counts("pbmc", dir = tempdir())),
  example_counts_available = quote(example_counts_available("pbmc",
                                                            dir = tempdir())),
  add_nmf = quote(add_nmf(sce, rank = 2,
                          control = nmf_control(max_iter = 5))),
  write_tenx = quote(write_tenx(x, filepath = tempfile(fileext = ".h5"))),
  tenx_writer = quote(tenx_writer(tempfile(fileext = ".h5"), nrow = 15)),
  read_tenx = quote(read_tenx(h5, group = "matrix"))
)

# Bad values: each replaces one argument of a base call.
bad_values <- list(
  NULL_ = NULL, NA_ = NA, neg = -1, zero = 0, inf = Inf, nan = NaN,
  huge = 1e300, frac = 1.5, str = "zz", empty = character(0),
  vec = c(1, 2), lgl = TRUE, lst = list(1), fun = function() 1,
  negmat = -diag(3), dfchr = data.frame(a = "x")
)

# Cells -----------------------------------------------------------------------

cells <- list()
add_cell <- function(id, fn, arg, expr, kind, check = NULL) {
  cells[[length(cells) + 1L]] <<- list(id = id, fn = fn, arg = arg,
                                       expr = expr, kind = kind,
                                       check = check)
}

for (fn in names(bases)) {
  base <- bases[[fn]]
  argn <- names(base)[-1]
  for (a in argn[nzchar(argn)]) {
    for (v in names(bad_values)) {
      e <- base
      e[a] <- list(bad_values[[v]])
      add_cell(sprintf("%s$%s=%s", fn, a, v), fn, a, e, "bad")
    }
    # a misspelt name of a given argument
    e <- base
    names(e)[names(e) == a] <- paste0(a, "x")
    add_cell(sprintf("%s$%s misspelt", fn, a), fn, paste0(a, "x"), e, "bad")
  }
  e <- base
  e$foo <- 1
  add_cell(sprintf("%s$foo", fn), fn, "foo", e, "bad")
}

# Extreme scales: the data times c, each answer finite, with dimnames, and
# equivariant where the mathematics says so.
scales <- c(denormal = 2^-1060, tiny = 1e-300, small = 2^-1000,
            big = 2^1000, huge = 1e300, largest = 2^1023)
finite_all <- function(v) {
  nums <- if (is.list(v)) unlist(lapply(v, function(e) if (is.numeric(e))
    as.vector(e))) else if (is.numeric(v)) as.vector(v)
  all(is.finite(nums))
}
for (s in names(scales)) {
  c0 <- scales[[s]]
  add_cell(sprintf("nmf x %s", s), "nmf", "x",
           bquote(nmf(x * .(c0), 2)), "extreme",
           quote(finite_all(res$W) && finite_all(res$H) &&
                   !is.null(rownames(res$W)) && res$status != "degenerate"))
  add_cell(sprintf("nmf kl x %s", s), "nmf", "x",
           bquote(nmf(x * .(c0), 2, loss = "kl",
                      control = nmf_control(max_iter = 20))), "extreme",
           quote(finite_all(res$W) && finite_all(res$H)))
  add_cell(sprintf("predict x %s", s), "predict", "newdata",
           # against the same entries at scale 1 (denormals keep fewer bits)
           bquote(list(a = predict(fit, x * .(c0)),
                       b = predict(fit, x * .(c0) / .(c0)))),
           "extreme",
           bquote(max(abs(res$a / .(c0) - res$b)) <= 1e-6 * max(res$b)))
  add_cell(sprintf("match_components self %s", s), "match_components",
           "fit1", bquote(match_components(fit$W * .(c0), fit$W * .(c0))),
           "extreme", quote(all(abs(res$similarity - 1) < 1e-12)))
  add_cell(sprintf("feature_score %s", s), "feature_score", "object",
           bquote(list(a = feature_score(fit$W * .(c0)),
                       b = feature_score(fit$W * .(c0) / .(c0)))), "extreme",
           quote(isTRUE(all.equal(res$a, res$b, tolerance = 1e-10))))
  add_cell(sprintf("feature_score specificity %s", s), "feature_score",
           "object",
           bquote(list(a = feature_score(fit$W * .(c0), "specificity"),
                       b = feature_score(fit$W * .(c0) / .(c0),
                                         "specificity"))), "extreme",
           quote(isTRUE(all.equal(res$a, res$b, tolerance = 1e-10))))
  add_cell(sprintf("nmf_consensus rank 1 %s", s), "nmf_consensus", "x",
           bquote(nmf_consensus(x * .(c0), 1, nrun = 2,
                                control = nmf_control(max_iter = 20))),
           "extreme",
           quote(finite_all(res$fits[[1]]$W) && finite_all(res$results$error) &&
                   res$fits[[1]]$status != "degenerate" &&
                   sum(res$fits[[1]]$W) > 0))
  add_cell(sprintf("nmf_consensus rank 2 %s", s), "nmf_consensus", "x",
           bquote(nmf_consensus(x * .(c0), 2, nrun = 2,
                                control = nmf_control(max_iter = 20))),
           "extreme", quote(finite_all(res$fits[[1]]$W) &&
                              finite_all(res$results$error)))
}

# Rows matched by name: a count table in reverse order, a table without a
# term, a matrix with permuted rows.
add_cell("predict tidy reversed", "predict", "newdata",
         quote(list(a = predict(kl, tidy_counts[nrow(tidy_counts):1, ]),
                    b = predict(kl, x))), "extreme",
         quote(max(abs(res$a[, colnames(res$b)] - res$b)) < 1e-8))
add_cell("predict tidy without a term", "predict", "newdata",
         quote(predict(kl, tidy_counts[tidy_counts$term != "g3", ])),
         "extreme", quote(finite_all(res)))
add_cell("predict permuted rows", "predict", "newdata",
         quote(list(a = predict(fit, x[15:1, ]), b = predict(fit, x))),
         "extreme", quote(max(abs(res$a - res$b)) < 1e-8))

# Corrupt sparse data: wrapped in a DelayedMatrix, or as given.
corrupt <- local({
  s <- as(Matrix(fx$x * (fx$x > 4), sparse = TRUE), "CsparseMatrix")
  bad_i <- s
  bad_i@i[length(bad_i@i)] <- 40L
  bad_p <- s
  bad_p@p[length(bad_p@p)] <- bad_p@p[length(bad_p@p)] + 3L
  unsorted <- s
  k <- which(diff(s@p) >= 2)[1]
  r <- s@p[k] + 1:2
  unsorted@i[r] <- rev(unsorted@i[r])
  list(bad_i = bad_i, bad_p = bad_p, unsorted = unsorted)
})
for (nm in names(corrupt)) {
  m <- corrupt[[nm]]
  add_cell(sprintf("nmf corrupt %s", nm), "nmf", "x",
           bquote(nmf(.(m), 2)), "bad")
  add_cell(sprintf("nmf DelayedMatrix over corrupt %s", nm), "nmf", "x",
           bquote(nmf(DelayedArray::DelayedArray(.(m)), 2)), "bad")
  add_cell(sprintf("predict DelayedMatrix over corrupt %s", nm), "predict",
           "newdata",
           bquote(predict(fit, DelayedArray::DelayedArray(.(m)))), "bad")
}

# Runs -------------------------------------------------------------------------

prepare_env <- function() {
  env <- list2env(fx, parent = globalenv())
  env$finite_all <- finite_all
  if (fx$sce_ok) {
    env$sce <- SingleCellExperiment::SingleCellExperiment(
      assays = list(counts = fx$x))
  }
  if (fx$h5_ok) {
    env$h5 <- tempfile(fileext = ".h5")
    write_tenx(fx$x, env$h5)
  }
  env
}

run_cell <- function(cell, env) {
  warnings <- list()
  res <- tryCatch(
    withCallingHandlers(
      eval(cell$expr, env),
      warning = function(w) {
        warnings[[length(warnings) + 1L]] <<- w
        invokeRestart("muffleWarning")
      },
      message = function(m) invokeRestart("muffleMessage")
    ),
    error = function(e) e
  )
  if (inherits(res, "error")) {
    msg <- cli::ansi_strip(conditionMessage(res))
    cls <- if (inherits(res, "nmfkit_error")) {
      if (grepl(cell$arg, msg, fixed = TRUE)) "classed" else
        "classed, unnamed"
    } else {
      "unclassed error"
    }
    return(list(class = cls, message = msg,
                error_class = class(res)[1]))
  }
  if (inherits(res, "ggplot")) {
    # a plot is checked when it is built, as print() would
    built <- tryCatch({
      ggplot2::ggplot_build(res)
      NULL
    }, error = function(e) e)
    if (!is.null(built)) {
      return(list(class = "unclassed error",
                  message = paste("at print:", conditionMessage(built))))
    }
  }
  unclassed_w <- vapply(warnings, function(w) !inherits(w, "nmfkit_warning"),
                        logical(1))
  if (cell$kind == "extreme") {
    ok <- tryCatch(isTRUE(eval(cell$check, list(res = res), env)),
                   error = function(e) FALSE)
    cls <- if (ok) "ok" else "nonsense"
    if (ok && any(unclassed_w)) cls <- "unclassed warning"
    return(list(class = cls, message = if (!ok) "invariant fails" else
      if (any(unclassed_w)) conditionMessage(warnings[[which(unclassed_w)[1]]])
      else ""))
  }
  if (is.numeric(res) && !finite_all(res)) {
    return(list(class = "nonsense", message = "non-finite result"))
  }
  list(class = "accepted", message = if (length(warnings))
    cli::ansi_strip(conditionMessage(warnings[[1]])) else "")
}

env <- prepare_env()
if (fx$h5_ok) {
  h5_garbage <- tempfile(fileext = ".h5")
  write_tenx(fx$x, h5_garbage)
  rhdf5::h5write(rev(rhdf5::h5read(h5_garbage, "matrix/indices")),
                 h5_garbage, "matrix/indices")
  h5_past <- tempfile(fileext = ".h5")
  write_tenx(fx$x, h5_past)
  idx <- rhdf5::h5read(h5_past, "matrix/indices")
  idx[1] <- 99L
  rhdf5::h5write(idx, h5_past, "matrix/indices")
  for (p in c(garbage = h5_garbage, past = h5_past)) {
    add_cell(sprintf("read_tenx %s indices", basename(p)), "read_tenx",
             "filepath", bquote(nmf(read_tenx(.(p)), 2)), "bad")
  }
  add_cell("write_tenx overwrite failing midway keeps the file",
           "write_tenx", "x",
           quote({
             f <- tempfile(fileext = ".h5")
             write_tenx(x, f)
             try(write_tenx(cbind(x, bad = c(NA, x[-1, 1])), f,
                            type = "integer", overwrite = TRUE),
                 silent = TRUE)
             dim(read_tenx(f))
           }), "extreme", quote(identical(as.integer(res), c(15L, 12L))))
  add_cell("tenx_writer zero-column block keeps row names", "tenx_writer",
           "block",
           quote({
             f <- tempfile(fileext = ".h5")
             w <- tenx_writer(f, nrow = 15)
             w$append(x[, 0, drop = FALSE])
             w$append(unname(x))
             rownames(w$close())
           }), "extreme", quote(identical(res, rownames(x))))
  add_cell("tenx_writer file replaced", "tenx_writer", "block",
           quote({
             f <- tempfile(fileext = ".h5")
             w <- tenx_writer(f, nrow = 15)
             unlink(f)
             rhdf5::h5createFile(f)
             w$append(x)
           }), "bad")
}
add_cell("example_counts dir = NULL", "example_counts", "dir",
         quote(example_counts(dir = NULL)), "bad")
add_cell("example_counts_available dir = NULL", "example_counts_available",
         "dir", quote(example_counts_available(dir = NULL)), "bad")
add_cell("example_counts corrupt file", "example_counts", "dir",
         quote({
           d <- tempfile()
           dir.create(d)
           writeLines("not R data", file.path(d, "pbmc_facs.RData"))
           example_counts("pbmc", dir = d)
         }), "bad")

# FUZZ_ONLY: a regular expression of the cells to run (all by default)
only <- Sys.getenv("FUZZ_ONLY", "")
if (nzchar(only)) {
  cells <- cells[grepl(only, vapply(cells, `[[`, "", "id"))]
}
if (length(args) > 1L) cells <- cells[seq_len(as.integer(args[2]))]
cat(sprintf("%d cells\n", length(cells)))

results <- vector("list", length(cells))
for (i in seq_along(cells)) {
  cell <- cells[[i]]
  job <- parallel::mcparallel(run_cell(cell, env), silent = TRUE)
  out <- parallel::mccollect(job, wait = FALSE, timeout = timeout)
  r <- if (is.null(out)) {
    tools::pskill(job$pid)
    parallel::mccollect(job, wait = FALSE, timeout = 1)
    list(class = "hang", message = sprintf("no answer in %d s", timeout))
  } else {
    v <- out[[1]]
    if (inherits(v, "try-error") || is.null(v$class)) {
      list(class = "crash", message = "the worker died")
    } else {
      v
    }
  }
  if (!r$class %in% c("classed", "ok")) {
    cat(sprintf("[%d] %s: %s\n", i, cell$id, r$class))
  }
  results[[i]] <- data.frame(id = cell$id, fn = cell$fn, arg = cell$arg,
                             kind = cell$kind, class = r$class,
                             message = substr(gsub("\\s+", " ", r$message),
                                              1, 160))
}
tab <- do.call(rbind, results)
counts <- table(factor(tab$class, levels = c(
  "classed", "accepted", "ok", "classed, unnamed", "unclassed error",
  "unclassed warning", "crash", "hang", "nonsense")))
print(counts)
show <- tab[!tab$class %in% c("classed", "ok"), c("id", "class", "message")]
if (nrow(show)) {
  cat("\nCells to look at:\n")
  print(show, row.names = FALSE, right = FALSE)
}
if (length(args)) utils::write.csv(tab, args[1], row.names = FALSE)
