# The combination matrix of test-combinations.R (issue 35, ARCHITECTURE.md
# "The combination matrix"): loss x source x weighting x verb. Each cell
# runs the verb on the source and on the same data as a dense matrix in
# memory, from the same seed, and reports "equal" (the same answer to 1e-10
# relative, the same iterations), the class of the refusal
# ("nmfkit_error_<what>"), or what else happened (a test failure).

combo_losses <- c("frobenius", "kl", "is", "beta")
combo_sources <- c("dense", "sparse", "hdf5", "tenx", "delayed_op")
combo_weightings <- c("plain", "masked", "weighted", "na")
combo_verbs <- c("nmf", "online", "predict", "nmf_rank", "nmf_tune",
                 "nmf_bootstrap", "nmf_consensus", "add_nmf", "methods")

# The losses fitted in blocks: a cell of a streamed source under another
# loss would be refused (nmfkit_error_streamed; see combo_expected()).
combo_streamed_losses <- c("frobenius", "kl", "is", "beta")

combo_loss_arg <- function(loss) if (loss == "beta") 0.5 else loss

# The expected outcome of a cell, by the rules ARCHITECTURE.md states.
combo_expected <- function(loss, source, weighting, verb) {
  streamed <- source %in% c("hdf5", "tenx", "delayed_op")
  frob <- loss == "frobenius"
  # verbs that take no weights: predict() (new samples), add_nmf() and
  # nmf_consensus() ask nmf() for plain fits
  if (verb %in% c("predict") && weighting %in% c("masked", "weighted")) {
    return("n/a")
  }
  if (verb == "predict") {
    if (weighting == "na") return("nmfkit_error_nonfinite")
    return("equal")
  }
  if (verb == "nmf_consensus") {
    # the consensus of plain Frobenius runs (programs solved by NNLS on
    # every entry): missing entries are refused with the data's check
    if (weighting == "na") return("nmfkit_error_nonfinite")
    if (!frob || weighting != "plain") return("nmfkit_error_dots")
    return("equal")
  }
  # held-out entries are masked fits, which need the data in memory
  if (verb %in% c("nmf_rank", "nmf_tune") && streamed) {
    return("nmfkit_error_streamed")
  }
  if (verb %in% c("nmf_rank", "nmf_tune") && weighting == "masked") {
    return("nmfkit_error_dots")
  }
  # masks, weights and NA need the data in memory
  if (streamed && weighting != "plain") return("nmfkit_error_streamed")
  if (streamed && !loss %in% combo_streamed_losses) {
    return("nmfkit_error_streamed")
  }
  if (verb == "online") {
    if (!frob || weighting != "plain") return("nmfkit_error_method")
    return("equal")
  }
  if (verb == "nmf_bootstrap" && weighting != "plain") {
    return("nmfkit_error_bootstrap")
  }
  "equal"
}

# Tiny planted counts (+ 1: positive, for Itakura-Saito), a mask, weights
# and a copy with missing entries; the sources built from them (the
# HDF5 files in `dir`).
combo_data <- function(dir) {
  set.seed(11)
  m <- 12
  n <- 16
  w <- matrix(runif(m * 2), m)
  h <- matrix(runif(2 * n), 2)
  x <- matrix(as.double(rpois(m * n, 6 * w %*% h) + 1), m, n,
              dimnames = list(paste0("g", seq_len(m)), paste0("c", seq_len(n))))
  mask <- matrix(FALSE, m, n)
  mask[cbind(c(2, 5, 9), c(3, 8, 14))] <- TRUE
  weights <- matrix(0.5 + runif(m * n), m, n)
  x_na <- x
  x_na[cbind(c(1, 7), c(4, 11))] <- NA
  hdf5 <- HDF5Array::writeHDF5Array(x, file.path(dir, "x.h5"), "x",
                                    with.dimnames = TRUE)
  tenx <- write_tenx(methods::as(x, "dgCMatrix"), file.path(dir, "x10.h5"))
  list(x = x, mask = mask, weights = weights, x_na = x_na,
       sources = list(
         dense = list(data = x, ref = x, na = x_na),
         sparse = list(data = methods::as(x, "dgCMatrix"), ref = x,
                       na = methods::as(x_na, "dgCMatrix")),
         hdf5 = list(data = hdf5, ref = x,
                     na = DelayedArray::DelayedArray(x_na)),
         tenx = list(data = tenx, ref = as.matrix(tenx),
                     na = DelayedArray::DelayedArray(x_na)),
         delayed_op = list(data = log1p(DelayedArray::DelayedArray(x)),
                           ref = log1p(x),
                           na = log1p(DelayedArray::DelayedArray(x_na)))))
}

# The outcome of one cell.
combo_outcome <- function(d, loss, source, weighting, verb) {
  s <- d$sources[[source]]
  ctrl <- nmf_control(max_iter = 6, tol = 0)
  args <- list(rank = 2, control = ctrl)
  if (loss != "frobenius") args$loss <- combo_loss_arg(loss)
  # KL's coordinate descent updates W row by row, which a stream cannot:
  # a streamed KL fit takes a diagonal Newton step for W that reaches the
  # same optimum (test-stream-divergence.R), so the same-method cell of a
  # streamed source is KL's multiplicative update, on both sides
  if (loss == "kl" && source %in% c("hdf5", "tenx", "delayed_op")) {
    args$method <- "mu"
  }
  data <- s$data
  ref <- s$ref
  if (weighting == "masked") args$mask <- d$mask
  if (weighting == "weighted") args$weights <- d$weights
  if (weighting == "na") {
    data <- s$na
    ref <- d$x_na
    if (source == "delayed_op") ref <- log1p(d$x_na)
    # (nmf_rank() and nmf_tune() omit missing entries themselves)
    if (!verb %in% c("predict", "nmf_rank", "nmf_tune")) args$na <- "omit"
  }
  # predict() applies a fit of the complete data in memory
  run <- function(x) combo_run(verb, x, args, fit_on = s$ref)
  got <- tryCatch(list(value = withr::with_seed(5, run(data))),
                  nmfkit_error = function(e) {
                    cls <- grep("^nmfkit_error_", class(e), value = TRUE)
                    list(refused = cls[1])
                  },
                  error = function(e) list(other = conditionMessage(e)))
  if (!is.null(got$refused)) return(got$refused)
  if (!is.null(got$other)) return(paste("unclassed:", got$other))
  want <- withr::with_seed(5, run(ref))
  combo_compare(got$value, want)
}

# One verb on data `x` (the fits quietly: tiny problems stop early).
combo_run <- function(verb, x, args, fit_on) {
  fit_args <- args
  quiet <- function(expr) suppressWarnings(expr)
  switch(verb,
    nmf = {
      f <- quiet(do.call(nmf, c(list(x), fit_args)))
      list(W = f$W, H = f$H, iterations = f$iterations)
    },
    online = {
      fit_args$method <- NULL
      f <- quiet(do.call(nmf, c(list(x, method = "online"), fit_args)))
      list(W = f$W, H = f$H, iterations = f$iterations)
    },
    predict = {
      f <- quiet(do.call(nmf, c(list(fit_on), fit_args)))
      list(H = predict(f, x))
    },
    nmf_rank = {
      a <- fit_args
      a$rank <- NULL
      r <- quiet(do.call(nmf_rank, c(list(x, 1:2, nfolds = 2L), a)))
      list(error = r$results$error)
    },
    nmf_tune = {
      a <- fit_args
      a$rank <- NULL
      a$loss <- a$loss %||% "frobenius"
      r <- quiet(do.call(nmf_tune, c(list(x, rank = 1:2, nfolds = 2L), a)))
      list(error = r$results$error)
    },
    nmf_bootstrap = {
      f <- quiet(do.call(nmf, c(list(x), fit_args)))
      b <- quiet(nmf_bootstrap(f, B = 2))
      list(lower = b$W_lower %||% b$lower, upper = b$W_upper %||% b$upper,
           cosine = b$cosine)
    },
    nmf_consensus = {
      a <- fit_args
      a$rank <- NULL
      a$control <- NULL
      r <- quiet(do.call(nmf_consensus,
                         c(list(x, rank = 2, nrun = 3,
                                control = nmf_control(max_iter = 6)), a)))
      list(W = r$fits[["2"]]$W, H = r$fits[["2"]]$H)
    },
    add_nmf = {
      sce <- SingleCellExperiment::SingleCellExperiment(
        assays = list(counts = x))
      out <- quiet(do.call(add_nmf, c(list(sce), fit_args)))
      list(H = SingleCellExperiment::reducedDim(out, "NMF"))
    },
    methods = {
      f <- quiet(do.call(nmf, c(list(x), fit_args)))
      s <- summary(f)
      g <- glance(f)
      list(summary = unlist(s[c("relative_error", "divergence", "baseline",
                                "share")]),
           glance = unlist(g[vapply(g, is.numeric, logical(1))]),
           fitted = fitted(f), residuals = residuals(f),
           tidy = tidy(f)$value, coef = coef(f))
    })
}

# "equal" when every numeric part agrees to 1e-10 relative (and counts
# exactly), else what differs.
combo_compare <- function(got, want) {
  for (nm in names(want)) {
    a <- got[[nm]]
    b <- want[[nm]]
    if (is.null(a) && is.null(b)) next
    if (nm == "iterations") {
      if (!identical(a, b)) return(sprintf("iterations %s vs %s", a, b))
      next
    }
    a <- as.vector(as.matrix(a))
    b <- as.vector(as.matrix(b))
    if (length(a) != length(b)) return(paste("length of", nm))
    ok <- is.na(a) == is.na(b)
    if (!all(ok)) return(paste("NA in", nm))
    a <- a[!is.na(a)]
    b <- b[!is.na(b)]
    scale <- max(sqrt(sum(b^2)), .Machine$double.xmin)
    rel <- sqrt(sum((a - b)^2)) / scale
    if (!is.finite(rel) || rel > 1e-10) {
      return(sprintf("%s differs (%.2g)", nm, rel))
    }
  }
  "equal"
}
