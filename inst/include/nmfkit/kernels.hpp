// The two dense products every solver spends its time in, A X and A X^T
// with a short side of k (the rank, or the width of a randomized SVD's test
// matrix), as AVX2/FMA kernels chosen at run time.
//
// A portable build compiles Eigen for SSE2 only, which runs these products at
// 14-18 GFLOP/s on the bench machine; the kernels below run at about twice
// that on any x86-64 processor with AVX2 and FMA (Haswell, Zen and later).
// They are compiled for that instruction set through the target attribute,
// so the rest of the package stays portable, and they are used only when the
// processor reports both extensions (otherwise, and on other architectures,
// the products stay Eigen's). set_simd(false) keeps Eigen's everywhere (the
// R glue calls it at load time when NMFKIT_SIMD=generic is in the
// environment: the core reads no environment).
//
// Every entry of a product is one chain of fused multiply-adds over the
// shared dimension in increasing order, whatever the entry's position in
// its register block: identical columns of X get bitwise identical products
// (joint NMF's exact zeros rely on it), and the chunks a parallel loop cuts
// change no bit.
#pragma once

#include <cstring>

#include "types.hpp"

// Not on Windows: GCC there cannot align the stack to the 32 bytes that
// spilled AVX registers need (GCC bug 54412), which crashes at run time.
#if !defined(NMFKIT_NO_SIMD) && defined(__x86_64__) && !defined(_WIN32) && \
    (defined(__GNUC__) || defined(__clang__))
#define NMFKIT_SIMD_X86 1
#include <immintrin.h>
#endif

namespace nmfkit {
namespace detail {

/// -1: not decided yet; 0: Eigen's products; 1: the AVX2/FMA kernels.
inline int& simd_state() {
  static int state = -1;
  return state;
}

/// Whether the AVX2/FMA kernels can run here.
inline bool simd_available() {
#ifdef NMFKIT_SIMD_X86
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  return false;
#endif
}

}  // namespace detail

/// Whether the products use the AVX2/FMA kernels: set_simd()'s choice, or
/// else whether the processor has them (decided on first use). Called from
/// serial code before any parallel region.
inline bool simd_enabled() {
  int& s = detail::simd_state();
  if (s < 0) s = detail::simd_available() ? 1 : 0;
  return s == 1;
}

/// Use the AVX2/FMA kernels (when the processor has them) or Eigen's
/// products. Returns whether the kernels are now in use.
inline bool set_simd(bool on) {
  detail::simd_state() = (on && detail::simd_available()) ? 1 : 0;
  return detail::simd_state() == 1;
}

#ifdef NMFKIT_SIMD_X86
namespace detail {

#define NMFKIT_AVX2 __attribute__((target("avx2,fma")))

/// A (k x m, column-major) copied into rows padded to a multiple of 4 with
/// zeros, so the kernel loads whole registers: kp x m.
inline Mat pad_rows4(const Mat& a) {
  const Index k = a.rows(), kp = (k + 3) / 4 * 4;
  Mat ap = Mat::Zero(kp, a.cols());
  ap.topRows(k) = a;
  return ap;
}

/// Load mask of the first `lanes` of a register's four (all four when
/// lanes >= 4, none when lanes <= 0).
NMFKIT_AVX2 inline __m256i lane_mask(Index lanes) {
  return _mm256_setr_epi64x(lanes > 0 ? -1 : 0, lanes > 1 ? -1 : 0,
                            lanes > 2 ? -1 : 0, lanes > 3 ? -1 : 0);
}

/// The one register tile both products run on: R registers of lanes times
/// C broadcast values, sum[c][4 r + l] = sum over p < len of
/// v[p * v_step + 4 r + l] * w[c * w_stride + p * w_step], each sum one
/// chain of fused multiply-adds over p in increasing order (so no entry
/// depends on its lane or its tile). With FULL false the last register
/// loads only the first `valid` - 4 (R - 1) lanes (the rest read as 0).
/// The sums go to out (C x 4R, column c at out + 4 R c).
template <int R, int C, bool FULL>
NMFKIT_AVX2 inline void tile(const double* v, Index v_step, const double* w,
                             Index w_stride, Index w_step, Index len,
                             Index valid, double* out) {
  __m256d acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_pd();
  // 1..4 lanes in the last register
  const __m256i mask = lane_mask(FULL ? 4 : valid - 4 * (R - 1));
  for (Index p = 0; p < len; ++p) {
    const double* vp = v + p * v_step;
    __m256d vv[R];
#pragma GCC unroll 4
    for (int r = 0; r < R - 1; ++r) vv[r] = _mm256_loadu_pd(vp + 4 * r);
    vv[R - 1] = FULL ? _mm256_loadu_pd(vp + 4 * (R - 1))
                     : _mm256_maskload_pd(vp + 4 * (R - 1), mask);
    const double* wp = w + p * w_step;
#pragma GCC unroll 8
    for (int c = 0; c < C; ++c) {
      const __m256d wv = _mm256_broadcast_sd(wp + c * w_stride);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
        acc[r][c] = _mm256_fmadd_pd(vv[r], wv, acc[r][c]);
    }
  }
  // unrolled like the loops above: a loop over the sums with a variable
  // index would keep them in memory, stored on every step (half the speed)
#pragma GCC unroll 8
  for (int c = 0; c < C; ++c)
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
      _mm256_storeu_pd(out + 4 * (R * c + r), acc[r][c]);
}

/// B(:, j) = A X(:, j) for NB columns of X at once: R registers (4R rows of
/// the padded A, starting at ap) times NB columns. Only the first `rows` of
/// the 4R are written to b (leading dimension ldb).
template <int R, int NB>
NMFKIT_AVX2 inline void lm_block(const double* ap, Index kp, Index m,
                                 const double* x, Index ldx, double* b,
                                 Index ldb, Index rows) {
  alignas(32) double out[4 * R * NB];
  tile<R, NB, true>(ap, kp, x, ldx, 1, m, 4 * R, out);
  for (int c = 0; c < NB; ++c)
    std::memcpy(b + c * ldb, out + 4 * R * c,
                sizeof(double) * static_cast<size_t>(rows));
}

/// NB columns of X (or fewer, one at a time) against every row block of the
/// padded A: blocks of 12, 8 or 4 rows, while the columns stay in cache.
template <int NB>
NMFKIT_AVX2 inline void lm_columns(const double* ap, Index k, Index kp,
                                   Index m, const double* x, Index ldx,
                                   Index cols, double* b) {
  for (Index t0 = 0; t0 < k; t0 += 12) {
    const Index rows = std::min<Index>(12, k - t0);
    const double* a0 = ap + t0;
    double* b0 = b + t0;
    if (cols == NB) {
      if (rows > 8)
        lm_block<3, NB>(a0, kp, m, x, ldx, b0, k, rows);
      else if (rows > 4)
        lm_block<2, NB>(a0, kp, m, x, ldx, b0, k, rows);
      else
        lm_block<1, NB>(a0, kp, m, x, ldx, b0, k, rows);
      continue;
    }
    for (Index c = 0; c < cols; ++c) {
      if (rows > 8)
        lm_block<3, 1>(a0, kp, m, x + c * ldx, ldx, b0 + c * k, k, rows);
      else if (rows > 4)
        lm_block<2, 1>(a0, kp, m, x + c * ldx, ldx, b0 + c * k, k, rows);
      else
        lm_block<1, 1>(a0, kp, m, x + c * ldx, ldx, b0 + c * k, k, rows);
    }
  }
}

/// B (k x n) = A X with ap = pad_rows4(A) (kp x m) and X (m x n, leading
/// dimension ldx); B's leading dimension is k. Groups of 4 columns (the
/// 12-row blocks hold 12 sums in registers), the last few one at a time.
NMFKIT_AVX2 inline void avx2_left_mult(const Mat& ap, Index k, const double* x,
                                       Index ldx, Index n, double* b) {
  const Index kp = ap.rows(), m = ap.cols();
  constexpr Index NB = 4;
  Index j = 0;
  for (; j + NB <= n; j += NB)
    lm_columns<NB>(ap.data(), k, kp, m, x + j * ldx, ldx, NB, b + j * k);
  if (j < n)
    lm_columns<NB>(ap.data(), k, kp, m, x + j * ldx, ldx, n - j, b + j * k);
}

/// Rows [i0, i0 + 4 RI) of X (the last register masked to `valid` rows):
/// B(t0 + s, i) = sum_j A(t0 + s, j) X(i, j) for s < TB.
template <int RI, int TB, bool FULL>
NMFKIT_AVX2 inline void lmt_block(const double* a, Index k, Index n,
                                  const double* x, Index ldx, Index valid,
                                  double* b) {
  alignas(32) double out[4 * RI * TB];
  tile<RI, TB, FULL>(x, ldx, a, 1, k, n, valid, out);
  for (int s = 0; s < TB; ++s)
    for (Index i = 0; i < valid; ++i) b[i * k + s] = out[4 * RI * s + i];
}

/// Rows [0, valid) of X (valid <= 8) against every band of A, of at most 6
/// rows each (sizes as even as possible), while the rows stay in cache.
NMFKIT_AVX2 inline void lmt_rows(const double* a, Index k, Index n,
                                 const double* x, Index ldx, Index valid,
                                 double* b) {
  const Index bands = (k + 5) / 6;
  Index t0 = 0;
  for (Index band = 0; band < bands; ++band) {
    const Index tb = (k - t0) / (bands - band);  // even split of what is left
    const double* a0 = a + t0;
    double* b0 = b + t0;
#define NMFKIT_LMT(TB)                                      \
  if (valid == 8)                                           \
    lmt_block<2, TB, true>(a0, k, n, x, ldx, valid, b0);    \
  else if (valid > 4)                                       \
    lmt_block<2, TB, false>(a0, k, n, x, ldx, valid, b0);   \
  else                                                      \
    lmt_block<1, TB, false>(a0, k, n, x, ldx, valid, b0);   \
  break;
    switch (tb) {
      case 1: NMFKIT_LMT(1)
      case 2: NMFKIT_LMT(2)
      case 3: NMFKIT_LMT(3)
      case 4: NMFKIT_LMT(4)
      case 5: NMFKIT_LMT(5)
      default: NMFKIT_LMT(6)
    }
#undef NMFKIT_LMT
    t0 += tb;
  }
}

/// B (k x len, leading dimension k) = A X(rows, :)^T for `len` rows of X
/// starting at x (leading dimension ldx), A (k x n, column-major, leading
/// dimension k): blocks of 8 rows, then one masked block for the rest.
/// With X = A this is the Gram matrix A A^T, exactly symmetric: entries
/// (s, t) and (t, s) are the same chain of the same products.
NMFKIT_AVX2 inline void avx2_left_mult_t(const double* a, Index k, Index n,
                                         const double* x, Index ldx,
                                         Index len, double* b) {
  for (Index i = 0; i < len; i += 8)
    lmt_rows(a, k, n, x + i, ldx, std::min<Index>(8, len - i), b + i * k);
}

#undef NMFKIT_AVX2
}  // namespace detail
#endif  // NMFKIT_SIMD_X86

}  // namespace nmfkit
