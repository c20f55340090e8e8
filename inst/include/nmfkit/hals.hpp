// HALS organised by component: for a fixed component t, every row of the
// factor moves at once,
//   W[:, t] <- max(W[:, t] - (W G[:, t] - B[:, t]) / G(t, t), 0),
// a matrix-vector product over contiguous memory. Each row still sees its own
// latest coordinates, so this is the same cyclic coordinate descent as
// cd_pass (nnls.hpp): the same iterates up to rounding.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "kernels.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {
namespace detail {

/// Rows of the factor that one register block updates together: the
/// product W G[:, t] for them is kHalsBlock accumulators held in registers
/// over the k columns (4 SSE2 registers), so W is read once per component.
constexpr Index kHalsBlock = 8;

/// One component-wise pass over the block (len x k, column-major, rows are
/// the factor's columns) `wc` with right-hand side `bc` (len x k). Returns
/// the violation: the sum of |projected gradient| at the entry point of
/// each coordinate, as cd_pass reports.
inline double hals_block_pass(Mat& wc, const Mat& bc, const Mat& g) {
  using Block = Eigen::Matrix<double, kHalsBlock, 1>;
  const Index len = wc.rows(), k = wc.cols();
  const Index full = len - len % kHalsBlock;
  double viol = 0.0;
  for (Index t = 0; t < k; ++t) {
    const double* gt = g.col(t).data();
    const double gtt = g(t, t);
    double* wt = wc.col(t).data();
    const double* bt = bc.col(t).data();
    for (Index i0 = 0; i0 < full; i0 += kHalsBlock) {
      Block grad = -Eigen::Map<const Block>(bt + i0);
      const double* wl = wc.data() + i0;
      for (Index l = 0; l < k; ++l, wl += len)
        grad.noalias() += Eigen::Map<const Block>(wl) * gt[l];
      Eigen::Map<Block> wv(wt + i0);
      viol += (wv.array() == 0.0)
                  .select(grad.array().min(0.0), grad.array())
                  .abs()
                  .sum();
      if (gtt > 0.0) wv = (wv - grad / gtt).cwiseMax(0.0);
    }
    for (Index i = full; i < len; ++i) {
      double gr = -bt[i];
      for (Index l = 0; l < k; ++l) gr += wc(i, l) * gt[l];
      viol += std::abs(wt[i] == 0.0 ? std::min(0.0, gr) : gr);
      if (gtt > 0.0) wt[i] = std::max(wt[i] - gr / gtt, 0.0);
    }
  }
  return viol;
}

#ifdef NMFKIT_SIMD_X86
#define NMFKIT_HALS_AVX2 __attribute__((target("avx2,fma")))

/// The steps of component t for NB blocks of eight rows from row i0, the
/// last `valid` rows of the group (at most 8 NB) read and written through
/// masks unless FULL. Each register's gradient is one chain of fused
/// multiply-adds over the components in order, as a block alone ran it;
/// the NB blocks' 2 NB chains run side by side, so the chain's latency
/// (four cycles a step, on Zen) no longer bounds the pass, and no bit
/// changes: rows are independent within a component. The violation's
/// terms are added block after block, in row order, as before.
template <int NB, bool FULL>
NMFKIT_HALS_AVX2 inline __m256d hals_rows(const double* w, Index len, Index k,
                                          const double* gt, const double* bt,
                                          double* wt, Index valid,
                                          __m256d diag, bool step,
                                          __m256d viol) {
  constexpr int R = 2 * NB;
  const __m256d zero = _mm256_setzero_pd();
  const __m256d sign = _mm256_set1_pd(-0.0);
  __m256i mask[R];
  __m256d acc[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    mask[r] = lane_mask(FULL ? 4 : valid - 4 * r);
    acc[r] = _mm256_xor_pd(FULL ? _mm256_loadu_pd(bt + 4 * r)
                                : _mm256_maskload_pd(bt + 4 * r, mask[r]),
                           sign);
  }
  const double* wl = w;
  for (Index l = 0; l < k; ++l, wl += len) {
    const __m256d gl = _mm256_broadcast_sd(gt + l);
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r)
      acc[r] = _mm256_fmadd_pd(FULL ? _mm256_loadu_pd(wl + 4 * r)
                                    : _mm256_maskload_pd(wl + 4 * r, mask[r]),
                               gl, acc[r]);
  }
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) {
    const __m256d g0 = acc[2 * b], g1 = acc[2 * b + 1];
    const __m256i m0 = mask[2 * b], m1 = mask[2 * b + 1];
    double* wb = wt + 8 * b;
    const __m256d w0 = _mm256_maskload_pd(wb, m0);
    const __m256d w1 = _mm256_maskload_pd(wb + 4, m1);
    // |projected gradient|: min(grad, 0) where the coordinate is at 0
    const __m256d p0 = _mm256_blendv_pd(
        g0, _mm256_min_pd(g0, zero), _mm256_cmp_pd(w0, zero, _CMP_EQ_OQ));
    const __m256d p1 = _mm256_blendv_pd(
        g1, _mm256_min_pd(g1, zero), _mm256_cmp_pd(w1, zero, _CMP_EQ_OQ));
    viol = _mm256_add_pd(viol, _mm256_add_pd(_mm256_andnot_pd(sign, p0),
                                             _mm256_andnot_pd(sign, p1)));
    if (step) {
      _mm256_maskstore_pd(
          wb, m0,
          _mm256_max_pd(_mm256_sub_pd(w0, _mm256_div_pd(g0, diag)), zero));
      _mm256_maskstore_pd(
          wb + 4, m1,
          _mm256_max_pd(_mm256_sub_pd(w1, _mm256_div_pd(g1, diag)), zero));
    }
  }
  return viol;
}

/// hals_block_pass() on AVX2/FMA: each component over groups of four
/// blocks of eight rows (hals_rows()), the last rows of the block through
/// masked loads and stores, so every row of the factor (a column of H: a
/// sample) goes through the same lane operations wherever it sits, and
/// identical samples stay bitwise identical.
NMFKIT_HALS_AVX2 inline double hals_block_pass_avx2(Mat& wc, const Mat& bc,
                                                    const Mat& g) {
  const Index len = wc.rows(), k = wc.cols();
  constexpr Index group = 4 * kHalsBlock;
  __m256d viol = _mm256_setzero_pd();
  for (Index t = 0; t < k; ++t) {
    const double* gt = g.col(t).data();
    const double gtt = g(t, t);
    const __m256d diag = _mm256_set1_pd(gtt);
    const bool step = gtt > 0.0;
    double* wt = wc.col(t).data();
    const double* bt = bc.col(t).data();
    Index i0 = 0;
    for (; i0 + group <= len; i0 += group)
      viol = hals_rows<4, true>(wc.data() + i0, len, k, gt, bt + i0, wt + i0,
                                group, diag, step, viol);
    const Index rest = len - i0;
    const double* w0 = wc.data() + i0;
    if (rest > 3 * kHalsBlock)
      viol = hals_rows<4, false>(w0, len, k, gt, bt + i0, wt + i0, rest,
                                 diag, step, viol);
    else if (rest > 2 * kHalsBlock)
      viol = hals_rows<3, false>(w0, len, k, gt, bt + i0, wt + i0, rest,
                                 diag, step, viol);
    else if (rest > kHalsBlock)
      viol = hals_rows<2, false>(w0, len, k, gt, bt + i0, wt + i0, rest,
                                 diag, step, viol);
    else if (rest > 0)
      viol = hals_rows<1, false>(w0, len, k, gt, bt + i0, wt + i0, rest,
                                 diag, step, viol);
  }
  alignas(32) double v[4];
  _mm256_store_pd(v, viol);
  return (v[0] + v[1]) + (v[2] + v[3]);
}
#undef NMFKIT_HALS_AVX2
#endif

}  // namespace detail

/// Updates Z (k x cols) for min_{Z >= 0} 1/2 tr(Z'GZ) - tr(B'Z), with G
/// (k x k) symmetric and B k x cols (the layout of cd_pass and nnls_bpp;
/// e.g. Z = W', G = H H', B = H X'): `inner` cyclic passes over the k
/// components. Columns are cut into fixed chunks (parallel.hpp); each chunk
/// is transposed into a cache-resident block, runs all its passes there one
/// component across its rows at a time, and is written back, all inside one
/// parallel region. A chunk stops early once a pass's violation falls to
/// inner_tol times its first pass's (inner_tol = 0: only at an exact fixed
/// point), so the result never depends on the thread count. Returns the
/// first pass's projected-gradient violation (the sum of |pg| at the entry
/// point of each coordinate, as cd_pass reports), summed over the chunks in
/// order. Components with G(t, t) <= 0 are left as they are. `chunk` > 0
/// sets the chunks' length (NmfParams::chunk).
inline double hals_update(Mat& z, const Mat& g, const Mat& b, int threads,
                          int inner = 1, double inner_tol = 0.0,
                          Index chunk = 0) {
  const Index k = z.rows(), cols = z.cols();
  require(g.rows() == k && g.cols() == k, "hals_update: G must be k x k");
  require(b.rows() == k && b.cols() == cols,
          "hals_update: B must be k x cols");
  require(inner >= 1 && inner_tol >= 0.0, "hals_update: inner passes");
  const Index clen = chunk > 0 ? chunk : detail::chunk_length(cols);
  const Index chunks = (cols + clen - 1) / clen;
  std::vector<double> first(static_cast<size_t>(chunks), 0.0);
  auto one_pass = [](Mat& wc, const Mat& bc, const Mat& gm, bool simd) {
#ifdef NMFKIT_SIMD_X86
    if (simd) return detail::hals_block_pass_avx2(wc, bc, gm);
#endif
    (void)simd;
    return detail::hals_block_pass(wc, bc, gm);
  };
  const bool simd = simd_enabled();
  Parallel(threads).for_chunks(
      cols,
      [&](Index c0, Index len) {
        Mat wc = z.middleCols(c0, len).transpose();
        const Mat bc = b.middleCols(c0, len).transpose();
        double viol0 = 0.0;
        for (int pass = 1; pass <= inner; ++pass) {
          const double viol = one_pass(wc, bc, g, simd);
          if (pass == 1) viol0 = viol;
          // as nmf(): a further pass runs unless this one (after the first)
          // removed little; a zero first violation is a fixed point already
          if (viol0 == 0.0 || (pass > 1 && viol <= inner_tol * viol0)) break;
        }
        z.middleCols(c0, len) = wc.transpose();
        first[static_cast<size_t>(c0 / clen)] = viol0;
      },
      2.0 * static_cast<double>(k) * k * cols * inner,
      detail::ChunkShape{clen, std::max<Index>(cols, 1)});  // length clen
  double viol = 0.0;
  for (double v : first) viol += v;
  return viol;
}

}  // namespace nmfkit
