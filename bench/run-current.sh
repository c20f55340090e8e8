#!/bin/sh
# The runs behind the "Current figures" table of bench/README.md (issues
# 35-38), in two phases for a 2-core machine:
#   bench/run-current.sh two    2-thread figures, nothing pinned (the
#                               machine must be otherwise idle)
#   bench/run-current.sh one    1-thread figures, pinned to core 1
#                               (taskset -c 1; core 0 may be busy)
# Logs go to $OUT (default /tmp/bench-current), one file per step; each
# script also writes its own bench/*-results.md. nmfkit comes from R_LIBS;
# the peers from bench/lib (make deps-bench) and bench/lib-rcppml
# (bench/build-rcppml.sh).
set -u
phase="${1:?usage: bench/run-current.sh two|one}"
out="${OUT:-/tmp/bench-current}"
mkdir -p "$out"
step() {
  name="$1"
  shift
  echo "== $name $(date -u +%H:%M:%S) $(uptime)" | tee -a "$out/steps.log"
  "$@" > "$out/$name.log" 2>&1
  echo "   exit $? $(date -u +%H:%M:%S)" | tee -a "$out/steps.log"
}
case "$phase" in
  two)
    step nmf-2 Rscript bench/nmf.R 3 nosklearn rcppml1 threads=2
    # KL iterations cost about 20 times Frobenius ones on the slice: fewer
    step ooc-frob-2 Rscript bench/ooc.R --parts pairs --threads 2 --reps 1 \
      --iters 3,8 --loss frobenius
    cp bench/ooc-results.md "$out/ooc-frob-2.md"
    step ooc-kl-2 Rscript bench/ooc.R --parts pairs --threads 2 --reps 1 \
      --iters 1,3 --loss kl
    cp bench/ooc-results.md "$out/ooc-kl-2.md"
    step boot-kl-2 Rscript bench/inference.R "${BOOT_B:-20}" target
    if [ -f bench/data/ooc-30000x1000000.h5 ]; then
      step ooc-full Rscript bench/ooc.R --parts full --loss kl,frobenius \
        --full-iters 2
      cp bench/ooc-results.md "$out/ooc-full.md"
    fi
    ;;
  one)
    g++ -O2 -mavx2 -mfma -o "$out/fma_peak" bench/fma_peak.cpp
    step fma taskset -c 1 "$out/fma_peak" 0.5 7
    step nmf-1 taskset -c 1 Rscript bench/nmf.R 3 nosklearn rcppml1 threads=1
    step kl-1 env KL_BENCH_PROBLEMS=planted-10,pbmc-10 KL_BENCH_PAIRS=2 \
      KL_BENCH_BUDGET=200 \
      "KL_BENCH_TOOLS=fastTopics scd+extrap;RcppML 1.0 gp, dispersion none" \
      taskset -c 1 Rscript bench/kl.R
    step ooc-frob-1 taskset -c 1 Rscript bench/ooc.R --parts pairs \
      --threads 1 --reps 1 --iters 3,8 --loss frobenius
    cp bench/ooc-results.md "$out/ooc-frob-1.md"
    step ooc-kl-1 taskset -c 1 Rscript bench/ooc.R --parts pairs \
      --threads 1 --reps 1 --iters 1,3 --loss kl
    cp bench/ooc-results.md "$out/ooc-kl-1.md"
    [ -n "${WITH_SIGNATURES:-}" ] &&
      step signatures-1 taskset -c 1 Rscript bench/signatures.R 2 20 1,2
    ;;
  *) echo "usage: $0 two|one" >&2; exit 2 ;;
esac
