# Writes bench/nmf.R's two problems (same seeds) for cpp/bench_kernels:
#   Rscript cpp/bench_kernels_data.R DIR   ->  DIR/dense.bin, DIR/sparse.bin
# then: bench_kernels loops DIR/dense.bin
#       bench_kernels loops sparse:DIR/sparse.bin 0.933577
suppressPackageStartupMessages(library(Matrix))
dir <- commandArgs(TRUE)[1]
src <- readLines("bench/nmf.R")
from <- grep("^make_dense <- function", src)
to <- grep("^set.seed\\(20261122\\)", src) - 1
eval(parse(text = src[from:to]))  # make_dense() and make_sparse()
set.seed(20261122)
writeBin(as.double(make_dense()), file.path(dir, "dense.bin"))
set.seed(7)
x <- make_sparse()
con <- file(file.path(dir, "sparse.bin"), "wb")
writeBin(as.integer(c(nrow(x), ncol(x), length(x@x))), con)
writeBin(as.integer(x@p), con)
writeBin(as.integer(x@i), con)
writeBin(as.double(x@x), con)
close(con)
