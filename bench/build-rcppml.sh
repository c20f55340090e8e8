#!/bin/sh
# Builds RcppML 1.0 (GitHub only; not on CRAN or in Debian, whose
# r-cran-rcppml is 0.3.7) from a git snapshot into the private library
# bench/lib-rcppml (gitignored), which only the bench scripts that compare
# against RcppML 1.0 put first on .libPaths(). Its code is never copied into
# this repository.
#
# Usage: bench/build-rcppml.sh GIT_DIR [COMMIT]
#   GIT_DIR  a clone or mirror of https://github.com/zdebruine/RcppML
#            (e.g. git clone --bare https://github.com/zdebruine/RcppML)
#   COMMIT   default df69ddd (the commit the issues quote; 1.0.0)
# The tree is exported with `git archive`; `CXX_STD = CXX17` is added to
# src/Makevars.in (its configure writes src/Makevars from it) because the
# sources use C++17 and R 4.2 defaults to C++14. Built niced, with the
# compiler flags of ~/.R/Makevars like every other package here.
set -eu
git_dir="${1:?usage: bench/build-rcppml.sh GIT_DIR [COMMIT]}"
commit="${2:-df69ddd}"
here=$(cd "$(dirname "$0")" && pwd)
lib="$here/lib-rcppml"
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
git --git-dir="$git_dir" archive "$commit" | tar -x -C "$src"
chmod +x "$src/configure"  # stored without the executable bit
for f in "$src/src/Makevars.in" "$src/src/Makevars"; do
  [ -f "$f" ] && printf '\nCXX_STD = CXX17\n' >> "$f"
done
mkdir -p "$lib"
nice R CMD INSTALL --no-test-load --no-docs --no-html -l "$lib" "$src"
git --git-dir="$git_dir" rev-parse "$commit" > "$lib/RcppML.commit"
Rscript -e "library(RcppML, lib.loc = '$lib'); cat('RcppML', format(packageVersion('RcppML', lib.loc = '$lib')), 'in $lib\n')"
