# Benchmark data for out-of-core NMF (issue 26): a planted rank-k sparse
# count matrix written to HDF5 in the 10x layout with nmfkit::tenx_writer(),
# generated block by block so it is never whole in memory.
#
#   Rscript bench/ooc-data.R                          # 30,000 x 1,000,000
#   Rscript bench/ooc-data.R --cols 100000            # the 100,000-column slice
#   Rscript bench/ooc-data.R --rows 30000 --cols 1e6 --rank 20 --density 0.01 \
#     --seed 1 --out bench/data/ooc.h5 --level 0 --chunk 65536 --force
#
# The output path is --out, else $NMFKIT_OOC_DATA, else
# bench/data/ooc-<rows>x<cols>.h5 (bench/data/ is ignored by git). An
# existing file of the same dimensions is kept (`make bench` runs every
# script: the 10^6-column file is written once); --force rewrites it.
#
# The model. Features 1..m, samples (cells) 1..n, k programs:
#   * program 1 is broad (5 % of the features), in every cell, with 30 % of
#     its weight; programs 2..k are specific (2 % of the features each,
#     overlapping at random), 1 to 3 of them per cell sharing the rest
#     (Dirichlet(1) weights);
#   * W0[i, c] ~ Gamma(0.7) on the program's features, 0 elsewhere;
#     H0[, j] = library size (lognormal, sdlog 0.5) x the weights above;
#   * X[i, j] ~ Poisson(s * (W0 H0)[i, j]), drawn only where the mean is
#     nonzero (as a sum of one Poisson per program, which has the same law),
#     with the scale s set once, on a pilot of 1,000 cells, so the expected
#     density is --density.
# So E[X] = s W0 H0 has rank k exactly, and X is Poisson counts around it.
#
# Reproducible and independent of the block size: W0 and the pilot come
# from the seed's first L'Ecuyer-CMRG streams, and each unit of 1,000
# columns from its own stream. The first c columns of any file are the same
# (for equal rows, rank, density and seed), so the 100,000-column file is a
# slice of the 10^6-column one. Memory: O(one write block) plus the writer.

ooc_args <- function(args = commandArgs(trailingOnly = TRUE)) {
  opt <- list(rows = 30000, cols = 1e6, rank = 20, density = 0.01, seed = 1,
              out = NA_character_, level = 0, chunk = 65536,
              block = 10000, force = FALSE)
  i <- 1
  while (i <= length(args)) {
    key <- sub("^--", "", args[i])
    if (!key %in% names(opt)) stop("unknown option ", args[i], call. = FALSE)
    if (is.logical(opt[[key]])) {
      opt[[key]] <- TRUE
      i <- i + 1
      next
    }
    val <- args[i + 1]
    opt[[key]] <- if (is.character(opt[[key]])) val else as.numeric(val)
    i <- i + 2
  }
  if (is.na(opt$out)) {
    env <- Sys.getenv("NMFKIT_OOC_DATA")
    opt$out <- if (nzchar(env)) env else
      file.path("bench", "data", sprintf("ooc-%dx%d.h5", as.integer(opt$rows),
                                         as.integer(opt$cols)))
  }
  opt
}

# The planted basis: a list with the features of each program (S, an
# integer matrix per program size) and their weights.
ooc_basis <- function(m, k) {
  broad <- max(1, round(0.05 * m))
  spec <- max(1, round(0.02 * m))
  list(
    broad_i = sort(sample.int(m, broad)),
    broad_w = rgamma(broad, 0.7),
    spec_i = vapply(seq_len(k - 1), function(c) sort(sample.int(m, spec)),
                    integer(spec)),
    spec_w = matrix(rgamma(spec * (k - 1), 0.7), spec, k - 1)
  )
}

# The coefficients of `n` cells: a list of (cell, program, weight) triples,
# program 1 the broad one.
ooc_coef <- function(n, k) {
  lib <- rlnorm(n, 0, 0.5)
  n_spec <- 1L + rbinom(n, 2, 0.3)
  cell <- rep(seq_len(n), n_spec)
  prog <- unlist(lapply(n_spec, function(a) 1L + sample.int(k - 1, a)))
  g <- rgamma(length(cell), 1)
  g <- g / rowsum(g, cell, reorder = FALSE)[cell]
  list(lib = lib, cell = cell, prog = prog, w = 0.7 * g * lib[cell])
}

# Every (row, cell, mean) with a nonzero mean, one per program and cell.
ooc_means <- function(basis, coef) {
  n <- length(coef$lib)
  nb <- length(basis$broad_i)
  ns <- nrow(basis$spec_i)
  list(
    i = c(rep(basis$broad_i, n), basis$spec_i[, coef$prog - 1L]),
    j = c(rep(seq_len(n), each = nb), rep(coef$cell, each = ns)),
    mu = c(outer(basis$broad_w, 0.3 * coef$lib),
           basis$spec_w[, coef$prog - 1L] * rep(coef$w, each = ns))
  )
}

# The scale s whose expected density on the pilot is `density`: the mean of
# an entry is the sum of its programs' means, P(X > 0) = 1 - exp(-s mean).
ooc_scale <- function(basis, k, m, density, pilot = 1000) {
  mu <- ooc_means(basis, ooc_coef(pilot, k))
  tot <- Matrix::sparseMatrix(mu$i, mu$j, x = mu$mu, dims = c(m, pilot))@x
  f <- function(s) sum(-expm1(-s * tot)) / (m * pilot) - density
  if (f(1e6) < 0) {
    stop("density ", density, " is out of reach: the means are nonzero on ",
         "only ", round(length(tot) / (m * pilot), 4), " of the entries",
         call. = FALSE)
  }
  uniroot(f, c(1e-8, 1e6), tol = 1e-10)$root
}

# One unit of columns as a dgCMatrix of counts.
ooc_unit <- function(basis, k, m, n, s) {
  mu <- ooc_means(basis, ooc_coef(n, k))
  x <- rpois(length(mu$mu), s * mu$mu)
  keep <- x > 0
  Matrix::sparseMatrix(mu$i[keep], mu$j[keep], x = as.double(x[keep]),
                       dims = c(m, n))
}

vm_hwm <- function() {
  st <- readLines("/proc/self/status")
  sub("^VmHWM:\\s*", "", grep("^VmHWM", st, value = TRUE))
}

ooc_generate <- function(opt) {
  suppressPackageStartupMessages(library(nmfkit))
  m <- as.integer(opt$rows)
  n <- as.integer(opt$cols)
  k <- as.integer(opt$rank)
  unit <- 1000L
  per_block <- max(1L, as.integer(opt$block) %/% unit)
  dir.create(dirname(opt$out), recursive = TRUE, showWarnings = FALSE)
  if (file.exists(opt$out) && !opt$force) {
    d <- tryCatch(dim(read_tenx(opt$out)), error = function(e) NULL)
    if (identical(d, c(m, n))) {
      cat(sprintf("%s exists (%d x %d); --force rewrites it\n", opt$out, m, n))
      return(invisible(opt$out))
    }
  }
  cat(sprintf("ooc-data: %d x %d, rank %d, density %g, seed %g -> %s\n",
              m, n, k, opt$density, opt$seed, opt$out))
  cat(sprintf("disk before: %s\n",
              system2("df", c("-h", shQuote(dirname(opt$out))), stdout = TRUE)[2]))

  RNGkind("L'Ecuyer-CMRG")
  set.seed(opt$seed)
  stream <- .Random.seed
  next_stream <- function() {
    stream <<- parallel::nextRNGStream(stream)
    assign(".Random.seed", stream, envir = globalenv())
  }
  next_stream()
  basis <- ooc_basis(m, k)
  next_stream()
  s <- ooc_scale(basis, k, m, opt$density)
  cat(sprintf("scale %.6g for density %g\n", s, opt$density))

  w <- tenx_writer(opt$out, nrow = m, type = "integer", chunk = opt$chunk,
                   level = opt$level, overwrite = TRUE)
  t_gen <- t_write <- 0
  t0 <- proc.time()[["elapsed"]]
  done <- 0L
  last <- t0
  while (done < n) {
    units <- list()
    while (length(units) < per_block && done < n) {
      width <- min(unit, n - done)
      next_stream()
      t1 <- proc.time()[["elapsed"]]
      units[[length(units) + 1L]] <- ooc_unit(basis, k, m, width, s)
      t_gen <- t_gen + proc.time()[["elapsed"]] - t1
      done <- done + width
    }
    t1 <- proc.time()[["elapsed"]]
    w$append(do.call(cbind, units))
    t_write <- t_write + proc.time()[["elapsed"]] - t1
    rm(units)
    now <- proc.time()[["elapsed"]]
    if (now - last > 30 || done == n) {
      i <- w$info()
      cat(sprintf("  %d / %d columns, %.3g nonzeros, %.0f s, VmHWM %s\n",
                  done, n, i$nnz, now - t0, vm_hwm()))
      last <- now
    }
  }
  x <- w$close()
  total <- proc.time()[["elapsed"]] - t0
  i <- w$info()
  size <- file.size(opt$out)
  cat(sprintf("done: %d x %d, %.0f nonzeros (density %.4f %%)\n", m, n,
              i$nnz, 100 * i$nnz / (as.double(m) * n)))
  cat(sprintf("time: %.1f s (generate %.1f s, write %.1f s)\n", total, t_gen,
              t_write))
  cat(sprintf("file: %.3f GB (%.2f bytes per nonzero)\n", size / 1e9,
              size / i$nnz))
  cat(sprintf("peak RSS (VmHWM): %s\n", vm_hwm()))
  # check: the first unit read back equals the first unit regenerated
  set.seed(opt$seed)
  stream <- .Random.seed
  next_stream()
  next_stream()
  next_stream()
  first <- ooc_unit(basis, k, m, min(unit, n), s)
  back <- as(x[, seq_len(min(unit, n))], "dgCMatrix")
  cat(sprintf("first %d columns read back equal to regenerated: %s\n",
              min(unit, n), isTRUE(all.equal(back, first, tolerance = 0))))
  invisible(opt$out)
}

if (!exists("ooc_data_no_main")) ooc_generate(ooc_args())
