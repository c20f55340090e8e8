#!/bin/sh
# The whole suite: the core's C++ tests (plain and ASan+UBSan builds) and the
# R tests on the installed package. Ends with "N passed, N failed[, N skipped]"
# and exits non-zero on any failure.
set -u
cd "$(dirname "$0")/.."
eigen=$(Rscript -e 'cat(system.file("include", package = "RcppEigen"))')
lbfgs=$(Rscript -e 'cat(system.file("include", package = "RcppNumerical"))')
log=$(mktemp -d)
passed=0; failed=0; skipped=0; status=0

# doctest's summary: "test cases: 10 | 10 passed | 0 failed | 0 skipped"
add_doctest() {
  line=$(grep '^\[doctest\] test cases:' "$1" | tail -n 1)
  if [ -z "$line" ]; then failed=$((failed + 1)); status=1; return; fi
  p=$(echo "$line" | sed -E 's/.*\| *([0-9]+) passed.*/\1/')
  f=$(echo "$line" | sed -E 's/.*\| *([0-9]+) failed.*/\1/')
  s=$(echo "$line" | sed -E 's/.*\| *([0-9]+) skipped.*/\1/')
  passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
}

for variant in plain sanitize; do
  dir="cpp/build-$variant"
  flag=OFF; [ "$variant" = sanitize ] && flag=ON
  echo "== C++ core tests ($variant build)"
  if cmake -S cpp -B "$dir" -DEIGEN_INCLUDE="$eigen" -DLBFGS_INCLUDE="$lbfgs" \
       -DNMFKIT_SANITIZE=$flag > "$log/cmake-$variant.log" 2>&1 &&
     cmake --build "$dir" -j 2 > "$log/build-$variant.log" 2>&1; then
    ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
      OMP_NUM_THREADS=2 "$dir/core_tests" > "$log/run-$variant.log" 2>&1 ||
      status=1
    tail -n 3 "$log/run-$variant.log"
    grep -E "ERROR|runtime error|AddressSanitizer" "$log/run-$variant.log" |
      head -n 20
    add_doctest "$log/run-$variant.log"
  else
    echo "C++ $variant build failed:"; tail -n 30 "$log/build-$variant.log"
    failed=$((failed + 1)); status=1
  fi
done

echo "== R tests"
Rscript tools/run-tests.R 2>&1 | tee "$log/r.log"
[ "$(tail -n 1 "$log/r.log" | grep -c '0 failed')" = 1 ] || status=1
line=$(grep '^R tests:' "$log/r.log" | tail -n 1)
if [ -n "$line" ]; then
  passed=$((passed + $(echo "$line" | sed -E 's/.*: ([0-9]+) passed.*/\1/')))
  failed=$((failed + $(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')))
  skipped=$((skipped + $(echo "$line" | sed -E 's/.* ([0-9]+) skipped.*/\1/')))
else
  failed=$((failed + 1)); status=1
fi
[ "$failed" -gt 0 ] && status=1
rm -rf "$log"
if [ "$skipped" -gt 0 ]; then
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
exit $status
