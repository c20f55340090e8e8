# Contract fuzz: every exported function and every S3 method users call
# (getNamespaceExports("nmfkit"), the registered methods and the
# autoplot() methods), every argument of each, over a grid of bad and
# extreme inputs, each cell in a forked worker process, each result
# classified:
#   classed            an nmfkit_error naming the argument
#   classed, unnamed   an nmfkit_error whose message does not name it
#   unclassed error    any other error
#   classed warning    an answer with an nmfkit_warning
#   unclassed warning  an answer with another warning
#   crash              the worker died
#   hang               no answer within the time limit
#   nonsense           an answer with non-finite numbers, lost dimnames or
#                      a failed invariant (self-similarity 1, scale
#                      equivariance, row order)
#   accepted           a bad value accepted silently (listed: many are
#                      valid calls, such as NULL for an optional argument)
#   ok                 an extreme-but-valid input answered soundly
# Usage (from the package root, nmfkit installed in R_LIBS):
#   R_LIBS=/work/lib/NAME nice Rscript bench/fuzz-contract.R [cells.csv [n]]
# FUZZ_ONLY=<regex> runs the cells whose id matches; FUZZ_TIMEOUT the
# seconds a cell may take (20). Prints the count per class and every cell
# not classed or ok; with a file name, writes the table of cells there.

suppressPackageStartupMessages({
  library(nmfkit)
  library(Matrix)
  library(ggplot2)
})
options(warn = 1, nmfkit.threads = 1L)
# cells write files named by their bad values ("zz"): not in the caller's
# directory
setwd(tempdir())
args <- commandArgs(TRUE)
timeout <- as.numeric(Sys.getenv("FUZZ_TIMEOUT", "20"))
t_start <- Sys.time()

# Fixtures: one small result of every class ----------------------------------

fx <- local({
  set.seed(1)
  quiet <- function(e) suppressWarnings(suppressMessages(e))
  ctl <- nmf_control(max_iter = 5)
  x <- matrix(rpois(15 * 12, 4) + 0, 15, 12,
              dimnames = list(paste0("g", 1:15), paste0("c", 1:12)))
  x2 <- x[, 1:8] + 1
  sets <- list(a = x, b = x2)
  hist <- apply(x, 2, function(v) (v + 0.1) / sum(v + 0.1))
  sim <- shifted_shapes(4, frame = c(8L, 8L))
  fit <- nmf(x, 2)
  kl <- nmf(x, 2, loss = "kl", control = nmf_control(max_iter = 20))
  jfit <- nmf_joint(x, x2, rank = 2, control = ctl)
  sfit <- quiet(nmf_stratified(sets, rank = 2, control = ctl))
  shfit <- quiet(nmf_shift(sim$x, 2, nrun = 1, control = nmf_control(max_iter = 2)))
  wfit <- quiet(nmf_wasserstein(hist, 2, control = nmf_control(max_iter = 1,
                                                              inner = 10)))
  mfit <- quiet(nmf_manifold(x, 2, k = 3, control = ctl))
  cons <- quiet(nmf_consensus(x, 1:2, nrun = 3,
                              control = nmf_control(max_iter = 20)))
  rk <- quiet(nmf_rank(x, 1:2, nfolds = 2, control = ctl))
  tn <- quiet(nmf_tune(x, 1:2, nfolds = 2, control = ctl))
  bt <- quiet(nmf_bootstrap(kl, B = 2))
  bi <- predict(bt, x[, 1:2])
  dtf <- quiet(nmf_differential(jfit, B = 2))
  dist <- nmf_distance(sets, method = "chamfer")
  mt <- match_components(fit, fit)
  search <- quiet(nmf(x, c(1, 3), control = ctl))
  ard <- quiet(nmf(x, 3, ard = "l1"))
  sW <- simulate_signatures(3)
  scat <- simulate_catalogue(sW, n = 8, mutations = 300, active = 2)$counts
  sig <- quiet(nmf_signatures(scat, 2:3, nrun = 2,
                              control = nmf_control(max_iter = 20)))
  srf <- quiet(refit_signatures(scat, sW, B = 2))
  sdec <- decompose_signatures(sW[, 1:2], sW)
  tidy_counts <- data.frame(document = rep(colnames(x), each = 15),
                            term = rep(rownames(x), 12), n = c(x))
  list(x = x, x2 = x2, sets = sets, hist = hist, sim = sim, fit = fit,
       kl = kl, jfit = jfit, sfit = sfit, shfit = shfit, wfit = wfit,
       mfit = mfit, cons = cons, cons1 = quiet(nmf_consensus(
         x, 1, nrun = 3, control = nmf_control(max_iter = 20))),
       rk = rk, tn = tn, bt = bt, bi = bi, dtf = dtf, dist = dist, mt = mt,
       search = search$rank_search, ard = ard$ard, sig = sig, srf = srf,
       sdec = sdec, sW = sW, scat = scat, ctl = nmf_control(tol = 1e-3),
       tidy_counts = tidy_counts, labels = rep(1:2, 6),
       catfile = local({
         f <- tempfile(fileext = ".txt")
         write_catalogue(scat, f)
         f
       }),
       sce_ok = requireNamespace("SingleCellExperiment", quietly = TRUE),
       h5_ok = requireNamespace("HDF5Array", quietly = TRUE) &&
         requireNamespace("rhdf5", quietly = TRUE))
})

# The object each method's class dispatches on.
class_fixture <- c(
  nmfkit = "fit", nmfkit_nmf = "kl", nmfkit_joint = "jfit",
  nmfkit_stratified = "sfit", nmfkit_shift = "shfit",
  nmfkit_wasserstein = "wfit", nmfkit_manifold = "mfit",
  nmfkit_consensus = "cons", nmfkit_rank = "rk", nmfkit_tune = "tn",
  nmfkit_bootstrap = "bt", nmfkit_interval = "bi",
  nmfkit_differential = "dtf", nmfkit_dist = "dist", nmfkit_match = "mt",
  nmfkit_rank_search = "search", nmfkit_ard = "ard",
  nmfkit_signatures = "sig", nmfkit_refit = "srf",
  nmfkit_decomposition = "sdec", nmfkit_control = "ctl"
)

# A valid call of every exported function that is not a method (the grid
# replaces one argument at a time); methods are called through their
# generic on the fixture of their class, with the arguments in `extra`.
bases <- list(
  add_nmf = quote(add_nmf(sce, rank = 2, control = nmf_control(max_iter = 5))),
  ard_prior = quote(ard_prior("l1")),
  auto_rank = quote(auto_rank(1, 3)),
  augment = quote(augment(fit, data = x)),
  basis = quote(basis(fit)),
  chamfer_distance = quote(chamfer_distance(x, x2)),
  cluster_acc = quote(cluster_acc(labels, labels)),
  cluster_nmi = quote(cluster_nmi(labels, labels)),
  clusters = quote(clusters(fit)),
  cosmic_signatures = quote(cosmic_signatures("SBS", dir = tempdir())),
  cosmic_signatures_available = quote(cosmic_signatures_available(tempdir())),
  decompose_signatures = quote(decompose_signatures(sW[, 1:2], sW)),
  entry_assignments = quote(entry_assignments(fit, x)),
  example_counts = quote(example_counts("pbmc", dir = tempdir())),
  example_counts_available = quote(example_counts_available("pbmc",
                                                            dir = tempdir())),
  feature_score = quote(feature_score(fit, method = "kim")),
  glance = quote(glance(fit)),
  instances = quote(instances(shfit)),
  match_components = quote(match_components(fit, fit)),
  nmf = quote(nmf(x, rank = 2, control = nmf_control(max_iter = 5))),
  nmf_bootstrap = quote(nmf_bootstrap(kl, B = 2)),
  nmf_consensus = quote(nmf_consensus(x, rank = 2, nrun = 2,
                                      control = nmf_control(max_iter = 5))),
  nmf_control = quote(nmf_control(tol = 1e-4, max_iter = 10)),
  nmf_differential = quote(nmf_differential(jfit, B = 2)),
  nmf_distance = quote(nmf_distance(sets, rank = 2, method = "chamfer")),
  nmf_joint = quote(nmf_joint(x, x2, rank = 2,
                              control = nmf_control(max_iter = 5))),
  nmf_joint_test = quote(nmf_joint_test(x, x2, rank = 2, B = 2)),
  nmf_manifold = quote(nmf_manifold(x, rank = 2, k = 3,
                                    control = nmf_control(max_iter = 5))),
  nmf_rank = quote(nmf_rank(x, rank = 1:2, nfolds = 2,
                            control = nmf_control(max_iter = 5))),
  nmf_shift = quote(nmf_shift(sim$x, rank = 2, nrun = 1,
                              control = nmf_control(max_iter = 2))),
  nmf_signatures = quote(nmf_signatures(scat, rank = 2, nrun = 2,
                                        control = nmf_control(max_iter = 5))),
  nmf_stratified = quote(nmf_stratified(sets, rank = 2,
                                        control = nmf_control(max_iter = 5))),
  nmf_tune = quote(nmf_tune(x, rank = 1:2, nfolds = 2,
                            control = nmf_control(max_iter = 5))),
  nmf_wasserstein = quote(nmf_wasserstein(hist, rank = 2,
                                          control = nmf_control(max_iter = 1,
                                                                inner = 10))),
  ot_distance = quote(ot_distance(hist[, 1], hist[, 2])),
  plot_spectra = quote(plot_spectra(sW)),
  read_catalogue = quote(read_catalogue(catfile)),
  read_tenx = quote(read_tenx(h5, group = "matrix")),
  refit_signatures = quote(refit_signatures(scat, sW)),
  shifted_shapes = quote(shifted_shapes(n = 2, frame = c(8L, 8L))),
  simulate_catalogue = quote(simulate_catalogue(sW, n = 3)),
  simulate_signatures = quote(simulate_signatures(2)),
  swimmer = quote(swimmer()),
  tenx_writer = quote(tenx_writer(tempfile(fileext = ".h5"), nrow = 15)),
  tidy = quote(tidy(fit)),
  top_features = quote(top_features(fit)),
  two_moons = quote(two_moons(n = 20)),
  write_catalogue = quote(write_catalogue(scat, tempfile())),
  write_tenx = quote(write_tenx(x, filepath = tempfile(fileext = ".h5")))
)
extra <- list(
  predict.nmfkit_stratified = list(newdata = quote(x),
                                   strata = quote(rep("a", 12))),
  predict.nmfkit_shift = list(newdata = quote(sim$x)),
  predict.nmfkit_wasserstein = list(newdata = quote(hist)),
  predict.nmfkit_bootstrap = list(newdata = quote(x)),
  nmf_distance.list = list(rank = 2, method = "chamfer"),
  nmf_differential.nmfkit_joint = list(B = 2),
  nmf_differential.nmfkit_stratified = list(B = 2),
  augment.nmfkit = list(data = quote(x)),
  add_nmf.SingleCellExperiment = list(
    rank = 2, control = quote(nmf_control(max_iter = 5))),
  add_nmf.Seurat = list(
    rank = 2, control = quote(nmf_control(max_iter = 5)))
)
# Methods whose generic is another package's: the first argument is not
# fuzzed (a bad one dispatches away from nmfkit).
# (tidy(), glance() and augment() are the generics package's, re-exported:
# what they do with an object of no method is theirs)
foreign_generics <- c("print", "summary", "plot", "predict", "coef",
                      "tidy", "glance", "augment",
                      "fitted", "residuals", "as.data.frame", "dim",
                      "dimnames", "autoplot")
# Functions whose calls take seconds: fewer bad values.
slow <- c("nmf_consensus", "nmf_rank", "nmf_tune", "nmf_bootstrap",
          "nmf_differential", "nmf_differential.nmfkit_joint",
          "nmf_differential.nmfkit_stratified", "nmf_signatures",
          "refit_signatures", "nmf_joint_test", "add_nmf",
          "add_nmf.SingleCellExperiment", "add_nmf.Seurat", "nmf_wasserstein")

# Bad values: each replaces one argument of a base call.
bad_values <- list(
  NULL_ = NULL, NA_ = NA, nan = NaN, inf = Inf, neg = -1, zero = 0,
  huge = 1e300, denormal = 2^-1060, frac = 1.5, str = "zz",
  empty = character(0), vec = c(1, 2), lgl = TRUE, lst = list(1),
  fun = function() 1, negmat = -diag(3), dfchr = data.frame(a = "x")
)
slow_values <- c("NA_", "neg", "str", "vec")
# FUZZ_VALUES: the names of the bad values to use (all by default), e.g.
# "NA_,neg,str,vec,lst,negmat" for a run that fits in a busy hour
pick <- Sys.getenv("FUZZ_VALUES", "")
if (nzchar(pick)) {
  pick <- strsplit(pick, ",", fixed = TRUE)[[1]]
  bad_values <- bad_values[names(bad_values) %in% pick]
  slow_values <- intersect(slow_values, pick)
}

# Cells -----------------------------------------------------------------------

cells <- list()
# `alt`: another name the message may give instead of `arg` (a misspelt
# required argument is reported as the missing one)
add_cell <- function(id, fn, arg, expr, kind, check = NULL, alt = NULL) {
  cells[[length(cells) + 1L]] <<- list(id = id, fn = fn, arg = arg,
                                       expr = expr, kind = kind,
                                       check = check, alt = alt)
}

ns <- asNamespace("nmfkit")
s3 <- getNamespaceInfo(ns, "S3methods")
s3 <- s3[s3[, 1] %in% getNamespaceExports(ns) |
           !vapply(s3[, 1], exists, logical(1), envir = ns,
                   inherits = FALSE), , drop = FALSE]
methods <- rbind(s3[, 1:2, drop = FALSE],
                 cbind("autoplot", sub("^autoplot\\.", "",
                                       ls(ns, pattern = "^autoplot\\."))))
api <- sort(unique(c(getNamespaceExports(ns),
                     paste(methods[, 1], methods[, 2], sep = "."))))
api <- api[vapply(api, function(f) is.function(get0(f, envir = ns)),
                  logical(1))]
# the internal block source and print methods of internal objects
api <- api[!grepl("\\.nmfkit_blocks$|^print\\.nmfkit_(loss|tenx_writer|summary_table)$",
                  api)]

base_call <- function(fn) {
  if (!is.null(bases[[fn]])) return(bases[[fn]])
  m <- methods[paste(methods[, 1], methods[, 2], sep = ".") == fn, ,
               drop = FALSE]
  if (!nrow(m)) return(NULL)
  gen <- m[1, 1]
  cls <- m[1, 2]
  obj <- if (cls == "default") quote(x) else
    if (startsWith(cls, "summary.")) {
      call("summary", as.name(class_fixture[[sub("^summary\\.", "", cls)]]))
    } else if (cls %in% names(class_fixture)) {
      as.name(class_fixture[[cls]])
    } else if (cls == "SingleCellExperiment" && fx$sce_ok) {
      quote(sce)
    } else if (cls == "Seurat" && nzchar(Sys.getenv("FUZZ_SEURAT"))) {
      quote(so)
    } else if (cls == "list") quote(sets) else return(NULL)
  first <- names(formals(get(fn, envir = ns)))[1]
  cl <- as.call(c(list(as.name(gen)), stats::setNames(list(obj), first),
                  extra[[fn]]))
  cl
}

skipped <- character()
for (fn in api) {
  base <- base_call(fn)
  if (is.null(base)) {
    skipped <- c(skipped, fn)
    next
  }
  # every argument of the base call named, so that replacing one by name
  # leaves the others where they were
  if (!is.null(bases[[fn]])) {
    base <- tryCatch(match.call(get(fn, envir = ns), base),
                     error = function(e) base)
  }
  f_args <- setdiff(names(formals(get(fn, envir = ns))), "...")
  is_method <- fn %in% paste(methods[, 1], methods[, 2], sep = ".")
  gen <- if (is_method) {
    methods[paste(methods[, 1], methods[, 2], sep = ".") == fn, 1][1]
  } else fn
  if (gen %in% foreign_generics) f_args <- f_args[-1]
  values <- if (fn %in% slow) slow_values else names(bad_values)
  # a default method is called on a matrix, the object it refuses: its
  # message names that argument, whatever else the cell changes
  first <- if (endsWith(fn, ".default")) {
    names(formals(get(fn, envir = ns)))[1]
  }
  for (a in f_args) {
    for (v in values) {
      e <- base
      e[a] <- list(bad_values[[v]])
      add_cell(sprintf("%s$%s=%s", fn, a, v), fn, a, e, "bad", alt = first)
    }
    # a misspelt name of an argument
    e <- base
    if (a %in% names(e)) {
      names(e)[names(e) == a] <- paste0(a, "x")
    } else {
      e[[paste0(a, "x")]] <- 1
    }
    add_cell(sprintf("%s$%s misspelt", fn, a), fn, paste0(a, "x"), e, "bad",
             alt = c(a, first))
  }
  e <- base
  e$foo <- 1
  add_cell(sprintf("%s$foo", fn), fn, "foo", e, "bad", alt = first)
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
           # against the same entries at scale 1 (denormals keep fewer
           # bits); coefficients at the data's scale are doubles too: one
           # denormal spacing, 2^-1074, is 2^-1074 / c at scale 1 (2^-14 at
           # c = 2^-1060), which no solver can go below
           bquote(list(a = predict(fit, x * .(c0)),
                       b = predict(fit, x * .(c0) / .(c0)))),
           "extreme",
           bquote(max(abs(res$a / .(c0) - res$b)) <=
                    1e-6 * max(res$b) + 2^-1074 / .(c0)))
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
  # (Seurat objects are slow to copy into a worker: FUZZ_SEURAT=1 adds them)
  if (nzchar(Sys.getenv("FUZZ_SEURAT")) &&
      requireNamespace("SeuratObject", quietly = TRUE)) {
    env$so <- suppressWarnings(SeuratObject::CreateSeuratObject(
      methods::as(fx$x, "CsparseMatrix")))
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
      named <- any(vapply(c(cell$arg, cell$alt), grepl, logical(1), msg,
                          fixed = TRUE))
      if (named) "classed" else
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
  if (length(warnings)) {
    w <- warnings[[if (any(unclassed_w)) which(unclassed_w)[1] else 1L]]
    return(list(class = if (any(unclassed_w)) "unclassed warning" else
      "classed warning", message = cli::ansi_strip(conditionMessage(w))))
  }
  list(class = "accepted", message = "")
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
           }), "bad", alt = "filepath")
}
# Strata given as a list are matched by name; one-rank consensus programs.
add_cell("predict stratified list in another order", "predict", "newdata",
         quote(local({
           b <- x2[, 1:3]
           colnames(b) <- paste0("d", 1:3)
           list(a = predict(sfit, list(b = b, a = x[, 1:4])),
                b = predict(sfit, list(a = x[, 1:4], b = b)))
         })),
         "extreme", quote(max(abs(res$a[, colnames(res$b)] - res$b)) < 1e-8))
add_cell("predict stratified list with rows reversed", "predict", "newdata",
         quote(list(a = predict(sfit, list(a = x[15:1, 1:4])),
                    b = predict(sfit, list(a = x[, 1:4])))), "extreme",
         quote(max(abs(res$a - res$b)) < 1e-8))
add_cell("basis of a one-rank consensus", "basis", "object",
         quote(basis(cons1)), "extreme", quote(ncol(res) == 1L))
add_cell("coef of a one-rank consensus", "coef", "object",
         quote(coef(cons1)), "extreme", quote(nrow(res) == 1L))
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
cat(sprintf("%d cells in the grid\n", length(cells)))
only <- Sys.getenv("FUZZ_ONLY", "")
if (nzchar(only)) {
  cells <- cells[grepl(only, vapply(cells, `[[`, "", "id"))]
}
if (length(args) > 1L) cells <- cells[seq_len(as.integer(args[2]))]
if (nzchar(Sys.getenv("FUZZ_DRY"))) {
  print(table(vapply(cells, `[[`, "", "fn")))
  quit(save = "no")
}
cat(sprintf("%d cells\n", length(cells)))

# Cells run in batches in a forked worker: a worker runs its
# cells in turn (each under an elapsed-time limit) and writes one line per
# cell; a worker that dies or stops writing for `timeout` seconds is
# killed, its current cell counted as a crash or a hang, and a new worker
# takes the cells after it.
run_batch <- function(idx, env, out) {
  grDevices::pdf(NULL)
  for (i in idx) {
    r <- tryCatch({
      setTimeLimit(elapsed = timeout, transient = TRUE)
      on.exit(setTimeLimit(elapsed = Inf), add = TRUE)
      run_cell(cells[[i]], env)
    }, error = function(e) list(class = if (grepl("time limit",
      conditionMessage(e))) "hang" else "unclassed error",
      message = conditionMessage(e)))
    setTimeLimit(elapsed = Inf)
    msg <- gsub("[[:space:]]+", " ", cli::ansi_strip(r$message %||% ""))
    cat(i, "\t", r$class, "\t", substr(msg, 1, 200), "\n", sep = "",
        file = out, append = TRUE)
  }
  invisible(NULL)
}
`%||%` <- function(a, b) if (is.null(a)) b else a

read_batch <- function(out) {
  if (!file.exists(out)) return(list())
  lines <- readLines(out, warn = FALSE)
  parts <- strsplit(lines, "\t", fixed = TRUE)
  parts <- parts[lengths(parts) >= 2L]
  stats::setNames(lapply(parts, function(p) list(class = p[2],
                                                 message = p[3] %||% "")),
                  vapply(parts, `[`, "", 1))
}

results <- list()
# one worker for every cell (forking a worker is slow on a busy machine);
# FUZZ_SPLIT=1: one per function
groups <- if (nzchar(Sys.getenv("FUZZ_SPLIT"))) {
  split(seq_along(cells), vapply(cells, `[[`, "", "fn"))
} else {
  list(all = seq_along(cells))
}
for (g in names(groups)) {
  idx <- groups[[g]]
  while (length(idx)) {
    out <- tempfile()
    job <- parallel::mcparallel(run_batch(idx, env, out), silent = TRUE)
    last_size <- -1
    last_change <- Sys.time()
    repeat {
      done <- parallel::mccollect(job, wait = FALSE, timeout = 1)
      if (!is.null(done)) break
      size <- if (file.exists(out)) file.size(out) else 0
      if (size != last_size) {
        last_size <- size
        last_change <- Sys.time()
      } else if (difftime(Sys.time(), last_change, units = "secs") >
                 timeout + 5) {
        tools::pskill(job$pid)
        parallel::mccollect(job, wait = FALSE, timeout = 1)
        break
      }
    }
    got <- read_batch(out)
    results[names(got)] <- got
    rest <- setdiff(idx, as.integer(names(got)))
    if (!length(rest)) break
    stuck <- rest[1]
    results[[as.character(stuck)]] <- if (is.null(done)) {
      list(class = "hang", message = sprintf("no answer in %g s", timeout))
    } else {
      list(class = "crash", message = "the worker died")
    }
    idx <- rest[-1]
  }
  cat(sprintf("%s: %d cells, %.1f min\n", g, length(groups[[g]]),
              as.numeric(difftime(Sys.time(), t_start, units = "mins"))))
}
results <- lapply(seq_along(cells), function(i) {
  r <- results[[as.character(i)]] %||%
    list(class = "crash", message = "no result")
  cell <- cells[[i]]
  data.frame(id = cell$id, fn = cell$fn, arg = cell$arg, kind = cell$kind,
             class = r$class, message = substr(r$message, 1, 160))
})
tab <- do.call(rbind, results)
counts <- table(factor(tab$class, levels = c(
  "classed", "accepted", "ok", "classed warning", "classed, unnamed",
  "unclassed error", "unclassed warning", "crash", "hang", "nonsense")))
print(counts)
cat(sprintf("%d functions and methods, %d cells, %.1f minutes\n",
            length(unique(tab$fn)), nrow(tab),
            as.numeric(difftime(Sys.time(), t_start, units = "mins"))))
if (length(skipped)) cat("No base call for:", skipped, "\n")
show <- tab[!tab$class %in% c("classed", "ok"), c("id", "class", "message")]
if (nrow(show)) {
  cat("\nCells to look at:\n")
  print(show, row.names = FALSE, right = FALSE)
}
if (length(args)) utils::write.csv(tab, args[1], row.names = FALSE)
