// The machine's double-precision FMA peak on one core, the denominator of
// the "share of peak" figure of bench/nmf.R (issue 35: the dense Frobenius
// fit at >= 50 % of it). Twelve independent AVX2 FMA chains (enough to hide
// the FMA latency on two FMA pipes), no memory traffic; flops counted as 2
// per lane per FMA, 4 lanes. Prints the best of `reps` timings.
//   g++ -O2 -mavx2 -mfma -o /tmp/fma_peak bench/fma_peak.cpp
//   taskset -c 1 /tmp/fma_peak [seconds-per-rep] [reps]
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const double secs = argc > 1 ? std::atof(argv[1]) : 0.5;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 7;
  const __m256d a = _mm256_set1_pd(0.999999), b = _mm256_set1_pd(1e-7);
  double best = 0, sink = 0;
  for (int r = 0; r < reps; ++r) {
    __m256d c[12];
    for (int i = 0; i < 12; ++i) c[i] = _mm256_set1_pd(1.0 + i);
    long long iters = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double el = 0;
    do {
      for (int it = 0; it < 100000; ++it) {
        for (int i = 0; i < 12; ++i) c[i] = _mm256_fmadd_pd(c[i], a, b);
      }
      iters += 100000;
      el = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         t0).count();
    } while (el < secs);
    const double gf = iters * 12.0 * 4 * 2 / el / 1e9;
    if (gf > best) best = gf;
    double out[4];
    for (int i = 0; i < 12; ++i) {
      _mm256_storeu_pd(out, c[i]);
      sink += out[0];
    }
  }
  std::printf("FMA peak, 1 thread: %.1f GFLOP/s (best of %d; checksum %g)\n",
              best, reps, sink);
  return 0;
}
