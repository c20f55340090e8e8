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
    // named accumulators: an array indexed in a loop stays in memory at
    // -O2 (a load, FMA and store per step: store-forwarding bound)
    __m256d c0 = _mm256_set1_pd(1), c1 = _mm256_set1_pd(2),
            c2 = _mm256_set1_pd(3), c3 = _mm256_set1_pd(4),
            c4 = _mm256_set1_pd(5), c5 = _mm256_set1_pd(6),
            c6 = _mm256_set1_pd(7), c7 = _mm256_set1_pd(8),
            c8 = _mm256_set1_pd(9), c9 = _mm256_set1_pd(10),
            c10 = _mm256_set1_pd(11), c11 = _mm256_set1_pd(12);
    long long iters = 0;
    const auto t0 = std::chrono::steady_clock::now();
    double el = 0;
    do {
      for (int it = 0; it < 100000; ++it) {
        c0 = _mm256_fmadd_pd(c0, a, b);
        c1 = _mm256_fmadd_pd(c1, a, b);
        c2 = _mm256_fmadd_pd(c2, a, b);
        c3 = _mm256_fmadd_pd(c3, a, b);
        c4 = _mm256_fmadd_pd(c4, a, b);
        c5 = _mm256_fmadd_pd(c5, a, b);
        c6 = _mm256_fmadd_pd(c6, a, b);
        c7 = _mm256_fmadd_pd(c7, a, b);
        c8 = _mm256_fmadd_pd(c8, a, b);
        c9 = _mm256_fmadd_pd(c9, a, b);
        c10 = _mm256_fmadd_pd(c10, a, b);
        c11 = _mm256_fmadd_pd(c11, a, b);
      }
      iters += 100000;
      el = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         t0).count();
    } while (el < secs);
    const double gf = iters * 12.0 * 4 * 2 / el / 1e9;
    if (gf > best) best = gf;
    const __m256d c[12] = {c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11};
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
