// The data matrix X (m x n, columns are samples) behind one interface, so each
// solver is written once for dense and sparse input. Sparse X is never
// densified: products go through its nonzeros (and a transposed copy, which
// costs as much memory as X itself).
#pragma once

#include <algorithm>
#include <vector>

#include "kernels.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// An entry (row, col, value) of a matrix given by its nonzeros.
struct Entry {
  Index row, col;
  double value;
};

namespace detail {
/// Chunks of the dense products (at least 256 columns of the result, at
/// most 16 chunks): each chunk is one GEMM that packs the whole k x m (or
/// k x n) factor again: 64 narrow chunks would spend a fifth of a product
/// on packing and run the GEMM kernel on 16-column panels.
constexpr ChunkShape kDenseProductChunks{256, 16};
}  // namespace detail

/// Dense data; binds to an R matrix without copying.
class DenseData {
 public:
  explicit DenseData(const Eigen::Ref<const Mat>& x) : x_(x) {}
  Index rows() const { return x_.rows(); }
  Index cols() const { return x_.cols(); }
  double sq_norm() const { return x_.squaredNorm(); }
  /// Number of stored entries (the cost of a product is proportional to it).
  double stored() const { return static_cast<double>(x_.size()); }
  const Eigen::Ref<const Mat>& dense() const { return x_; }

  /// B = A X (A is k x m; B is k x n). With `hooks`, the host may interrupt
  /// between chunks: then returns false and B is incomplete.
  template <class Hooks = NullHooks>
  bool left_mult(const Mat& a, Mat& b, int threads,
                 Hooks* hooks = nullptr) const {
    return product<false>(a, b, threads, hooks);
  }
  /// B = A X^T (A is k x n; B is k x m); `hooks` as for left_mult.
  template <class Hooks = NullHooks>
  bool left_mult_t(const Mat& a, Mat& b, int threads,
                   Hooks* hooks = nullptr) const {
    return product<true>(a, b, threads, hooks);
  }
  /// b(e.row, i) += e.value * X(i, e.col) for every entry e (in order):
  /// A X^T for an A with a few nonzeros (streamed extrapolation).
  void add_entries_t(const std::vector<Entry>& entries, Mat& b) const {
    for (const Entry& e : entries)
      b.row(e.row).noalias() += e.value * x_.col(e.col).transpose();
  }
  /// Column sums of X.
  Vec col_sums() const { return x_.colwise().sum().transpose(); }
  /// Row sums of X.
  Vec row_sums() const { return x_.rowwise().sum(); }

  /// Row sums of X over the columns of each group: column g of the
  /// result (m x n_groups) sums the columns j with group[j] == g.
  Mat row_sums_by(const std::vector<int>& group, int n_groups,
                  int threads) const {
    require(static_cast<Index>(group.size()) == cols(), "row_sums_by: group");
    Mat s = Mat::Zero(rows(), n_groups);
    Parallel(threads).for_chunks(rows(), [&](Index r0, Index len) {
      for (Index j = 0; j < cols(); ++j)
        s.col(group[j]).segment(r0, len) += x_.col(j).segment(r0, len);
    });
    return s;
  }

 private:
  // B = A X, or A X^T when T, in the dense products' chunks of B's columns
  // (each chunk one product with a block of X's columns, or of its rows).
  template <bool T, class Hooks>
  bool product(const Mat& a, Mat& b, int threads, Hooks* hooks) const {
    const Index k = a.rows(), len = T ? rows() : cols();
    b.resize(k, len);
#ifdef NMFKIT_SIMD_X86
    const bool simd = simd_enabled();
    const Mat ap = simd && !T ? detail::pad_rows4(a) : Mat();
    const Index ld = x_.outerStride();
#endif
    return Parallel(threads).for_chunks(
        len, hooks,
        [&](Index c0, Index l) {
#ifdef NMFKIT_SIMD_X86
          if (simd) {
            if constexpr (T)
              detail::avx2_left_mult_t(a.data(), k, a.cols(), x_.data() + c0,
                                       ld, l, b.data() + c0 * k);
            else
              detail::avx2_left_mult(ap, k, x_.data() + c0 * ld, ld, l,
                                     b.data() + c0 * k);
            return;
          }
#endif
          if constexpr (T)
            b.middleCols(c0, l).noalias() =
                a * x_.middleRows(c0, l).transpose();
          else
            b.middleCols(c0, l).noalias() = a * x_.middleCols(c0, l);
        },
        2.0 * k * stored(), detail::kDenseProductChunks);
  }

  Eigen::Ref<const Mat> x_;
};

namespace detail {
/// out[t0 .. t0 + B) = sum over p in [p0, p1) of val[p] * a(t0 .. t0 + B,
/// inner[p]) for a k x m column-major a, the B sums kept in registers.
template <int B, class IndexT>
inline void gather_block(const IndexT* inner, const double* val, Index p0,
                         Index p1, const double* a, Index k, Index t0,
                         double* out) {
  using Block = Eigen::Matrix<double, B, 1>;  // unrolled, in registers
  Block c = Block::Zero();
  for (Index p = p0; p < p1; ++p)
    c.noalias() +=
        val[p] * Eigen::Map<const Block>(a + static_cast<Index>(inner[p]) * k +
                                         t0);
  Eigen::Map<Block>(out + t0) = c;
}

#ifdef NMFKIT_SIMD_X86
/// gather_block() for rows [t0, t0 + 4 R) of a at once (the last register
/// masked to its first `valid` - 4 (R - 1) rows unless FULL): R registers
/// of sums over one pass of the column's nonzeros, where the blocks of 8,
/// 4, 2 and 1 rows passed over them one after another (rank 20: three
/// passes of two, two and one chains of additions). Each sum is the same
/// chain as gather_block()'s, a product then an addition per nonzero in
/// order: compiled for AVX2 without FMA, so the compiler cannot fuse them,
/// and the bits do not change.
template <int R, bool FULL, class IndexT>
__attribute__((target("avx2"))) inline void gather_avx2(
    const IndexT* inner, const double* val, Index p0, Index p1,
    const double* a, Index k, Index t0, Index valid, double* out) {
  const Index last = valid - 4 * (R - 1);  // 1..4 lanes
  const __m256i mask =
      _mm256_setr_epi64x(-1, last > 1 ? -1 : 0, last > 2 ? -1 : 0,
                         last > 3 ? -1 : 0);
  __m256d c[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) c[r] = _mm256_setzero_pd();
  for (Index p = p0; p < p1; ++p) {
    const __m256d v = _mm256_broadcast_sd(val + p);
    const double* ap = a + static_cast<Index>(inner[p]) * k + t0;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256d x = (FULL || r < R - 1)
                            ? _mm256_loadu_pd(ap + 4 * r)
                            : _mm256_maskload_pd(ap + 4 * r, mask);
      c[r] = _mm256_add_pd(c[r], _mm256_mul_pd(v, x));
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    if (FULL || r < R - 1)
      _mm256_storeu_pd(out + t0 + 4 * r, c[r]);
    else
      _mm256_maskstore_pd(out + t0 + 4 * r, mask, c[r]);
  }
}

/// out[0 .. k) = the sums of gather_block() for all k rows of a, in groups
/// of at most 32 rows (eight registers), each one pass over the nonzeros.
template <class IndexT>
__attribute__((target("avx2"))) inline void gather_all_avx2(
    const IndexT* inner, const double* val, Index p0, Index p1,
    const double* a, Index k, double* out) {
  for (Index t0 = 0; t0 < k; t0 += 32) {
    const Index rows = std::min<Index>(32, k - t0);
    const int regs = static_cast<int>((rows + 3) / 4);
    const bool full = rows % 4 == 0;
#define NMFKIT_GATHER(R)                                                 \
  case R:                                                                \
    if (full)                                                            \
      gather_avx2<R, true>(inner, val, p0, p1, a, k, t0, rows, out);     \
    else                                                                 \
      gather_avx2<R, false>(inner, val, p0, p1, a, k, t0, rows, out);    \
    break;
    switch (regs) {
      NMFKIT_GATHER(1)
      NMFKIT_GATHER(2)
      NMFKIT_GATHER(3)
      NMFKIT_GATHER(4)
      NMFKIT_GATHER(5)
      NMFKIT_GATHER(6)
      NMFKIT_GATHER(7)
      default: NMFKIT_GATHER(8)
    }
#undef NMFKIT_GATHER
  }
}
#endif
}  // namespace detail

namespace detail {
/// The transpose of a compressed-column x (m x n) as a compressed SpMat
/// (n x m), entries of each of its columns in increasing row order, the
/// same arrays as Eigen's serial transpose. With threads > 1 the columns of
/// x are cut into `threads` blocks that count their rows, then each block
/// writes its entries at offsets from the counts: the result is a
/// permutation of x's entries that does not depend on the blocks, and the
/// transposed copy's pages are first touched by the threads that fill them
/// (a serial transpose costs a twentieth of a 2-thread sparse fit).
template <class SpT>
SpMat transpose_sparse(const SpT& x, int threads) {
  const Index m = x.rows(), n = x.cols();
  const double nnz = static_cast<double>(x.nonZeros());
  const Index blocks = std::min<Index>(std::max(threads, 1), n);
  if (blocks < 2 || 10.0 * nnz < kMinParallelWork) {
    SpMat xt(x.transpose());
    xt.makeCompressed();
    return xt;
  }
  const auto* outer = x.outerIndexPtr();
  const auto* inner = x.innerIndexPtr();
  const double* val = x.valuePtr();
  const Index len = (n + blocks - 1) / blocks;
  // count[b * (m + 1) + i + 1]: entries of block b in row i; then turned
  // into each block's write position in row i of the result
  std::vector<Index> count(static_cast<size_t>(blocks * (m + 1)), 0);
  auto block_cols = [&](Index b, Index& j0, Index& j1) {
    j0 = std::min(n, b * len);
    j1 = std::min(n, j0 + len);
  };
  Parallel(threads).for_chunks(blocks, [&](Index b0, Index bl) {
    for (Index b = b0; b < b0 + bl; ++b) {
      Index j0, j1;
      block_cols(b, j0, j1);
      Index* c = count.data() + b * (m + 1) + 1;
      for (Index p = outer[j0]; p < outer[j1]; ++p) ++c[inner[p]];
    }
  }, 1e300, ChunkShape{1, blocks});
  SpMat xt(n, m);
  xt.resizeNonZeros(static_cast<Index>(x.nonZeros()));
  auto* xo = xt.outerIndexPtr();
  Index pos = 0;
  for (Index i = 0; i < m; ++i) {
    xo[i] = static_cast<typename SpMat::StorageIndex>(pos);
    for (Index b = 0; b < blocks; ++b) {
      Index& c = count[static_cast<size_t>(b * (m + 1) + i + 1)];
      const Index here = c;
      c = pos;
      pos += here;
    }
  }
  xo[m] = static_cast<typename SpMat::StorageIndex>(pos);
  auto* xi = xt.innerIndexPtr();
  double* xv = xt.valuePtr();
  Parallel(threads).for_chunks(blocks, [&](Index b0, Index bl) {
    for (Index b = b0; b < b0 + bl; ++b) {
      Index j0, j1;
      block_cols(b, j0, j1);
      Index* c = count.data() + b * (m + 1) + 1;
      for (Index j = j0; j < j1; ++j)
        for (Index p = outer[j]; p < outer[j + 1]; ++p) {
          const Index at = c[inner[p]]++;
          xi[at] = static_cast<typename SpMat::StorageIndex>(j);
          xv[at] = val[p];
        }
    }
  }, 1e300, ChunkShape{1, blocks});
  return xt;
}
}  // namespace detail

/// Sparse data (compressed columns); SpT is SpMat or a Map of one. The
/// transposed copy is built with `threads` (the same arrays at any count).
/// Without it (`transpose` false: a block of a streamed fit, used for one
/// or two products only), A X^T scatters each nonzero into at most four
/// partial sums, added in order.
template <class SpT>
class SparseData {
 public:
  explicit SparseData(const SpT& x, int threads = 1, bool transpose = true)
      : x_(x),
        xt_(transpose ? detail::transpose_sparse(x, threads) : SpMat()),
        transposed_(transpose) {}
  Index rows() const { return x_.rows(); }
  Index cols() const { return x_.cols(); }
  double sq_norm() const {
    double s = 0.0;
    for (Index j = 0; j < x_.outerSize(); ++j)
      for (typename SpT::InnerIterator it(x_, j); it; ++it)
        s += it.value() * it.value();
    return s;
  }
  const SpT& sparse() const { return x_; }
  double stored() const { return static_cast<double>(x_.nonZeros()); }

  /// B = A X (A is k x m; B is k x n); `hooks` as for DenseData.
  template <class Hooks = NullHooks>
  bool left_mult(const Mat& a, Mat& b, int threads,
                 Hooks* hooks = nullptr) const {
    b.resize(a.rows(), cols());
    return mult(x_, a, b, threads, hooks);
  }
  /// B = A X^T (A is k x n; B is k x m); `hooks` as for DenseData.
  template <class Hooks = NullHooks>
  bool left_mult_t(const Mat& a, Mat& b, int threads,
                   Hooks* hooks = nullptr) const {
    b.resize(a.rows(), rows());
    if (!transposed_) return scatter_t(a, b, threads, hooks);
    return mult(xt_, a, b, threads, hooks);
  }
  /// As DenseData::add_entries_t().
  void add_entries_t(const std::vector<Entry>& entries, Mat& b) const {
    for (const Entry& e : entries)
      for (typename SpT::InnerIterator it(x_, e.col); it; ++it)
        b(e.row, it.row()) += e.value * it.value();
  }
  Vec col_sums() const {
    Vec s = Vec::Zero(cols());
    for (Index j = 0; j < x_.outerSize(); ++j)
      for (typename SpT::InnerIterator it(x_, j); it; ++it) s[j] += it.value();
    return s;
  }
  Vec row_sums() const {
    Vec s = Vec::Zero(rows());
    for (Index j = 0; j < x_.outerSize(); ++j)
      for (typename SpT::InnerIterator it(x_, j); it; ++it)
        s[it.row()] += it.value();
    return s;
  }

  /// Row sums of X over the columns of each group (see DenseData).
  Mat row_sums_by(const std::vector<int>& group, int n_groups,
                  int threads) const {
    require(static_cast<Index>(group.size()) == cols(), "row_sums_by: group");
    Mat s = Mat::Zero(rows(), n_groups);
    Parallel(threads).for_chunks(xt_.outerSize(), [&](Index r0, Index len) {
      for (Index r = r0; r < r0 + len; ++r)
        for (SpMat::InnerIterator it(xt_, r); it; ++it)
          s(r, group[it.index()]) += it.value();
    });
    return s;
  }

 private:
  // b.col(j) = sum over the nonzeros x(i, j) of x(i, j) * a.col(i), in
  // blocks of rows of b (8, then 4, 2, 1) whose sums stay in registers over
  // the column's nonzeros: 1.3-2x the speed of one axpy per nonzero at
  // ranks 10-20, and the same sums in the same order.
  template <class S, class Hooks>
  static bool mult(const S& s, const Mat& a, Mat& b, int threads,
                   Hooks* hooks) {
    const Index k = a.rows();
    const auto* outer = s.outerIndexPtr();
    const auto* inner = s.innerIndexPtr();
    const double* val = s.valuePtr();
    const double* ad = a.data();
#ifdef NMFKIT_SIMD_X86
    const bool simd = simd_enabled();
#endif
    return Parallel(threads).for_chunks(s.outerSize(), hooks,
        [&](Index c0, Index len) {
          for (Index j = c0; j < c0 + len; ++j) {
            double* bj = b.data() + j * k;
            const Index p0 = outer[j], p1 = outer[j + 1];
#ifdef NMFKIT_SIMD_X86
            if (simd) {
              detail::gather_all_avx2(inner, val, p0, p1, ad, k, bj);
              continue;
            }
#endif
            Index t = 0;
            for (; t + 8 <= k; t += 8)
              detail::gather_block<8>(inner, val, p0, p1, ad, k, t, bj);
            if (t + 4 <= k) {
              detail::gather_block<4>(inner, val, p0, p1, ad, k, t, bj);
              t += 4;
            }
            if (t + 2 <= k) {
              detail::gather_block<2>(inner, val, p0, p1, ad, k, t, bj);
              t += 2;
            }
            if (t < k) detail::gather_block<1>(inner, val, p0, p1, ad, k, t, bj);
          }
        },
        2.0 * k * static_cast<double>(s.nonZeros()));
  }

  // b = a X^T without the transpose: column chunks (at most 4, fixed by
  // the width) add a.col(j) x(i, j) into b.col(i) of their own partial sum
  template <class Hooks>
  bool scatter_t(const Mat& a, Mat& b, int threads, Hooks* hooks) const {
    const Index k = a.rows(), n = cols();
    constexpr detail::ChunkShape shape{1, 4};
    const Index len = detail::chunk_length(n, shape);
    std::vector<Mat> part(static_cast<size_t>((n + len - 1) / len));
    const auto* outer = x_.outerIndexPtr();
    const auto* inner = x_.innerIndexPtr();
    const double* val = x_.valuePtr();
    const bool done = Parallel(threads).for_chunks(n, hooks,
        [&](Index c0, Index l) {
          Mat& p = part[static_cast<size_t>(c0 / len)];
          p.setZero(k, rows());
          for (Index j = c0; j < c0 + l; ++j)
            for (Index q = outer[j]; q < outer[j + 1]; ++q)
              p.col(inner[q]).noalias() += val[q] * a.col(j);
        },
        2.0 * k * static_cast<double>(x_.nonZeros()), shape);
    if (!done) return false;
    b.setZero();
    for (const Mat& p : part) b += p;
    return true;
  }

  const SpT& x_;
  SpMat xt_;
  bool transposed_;
};

}  // namespace nmfkit
