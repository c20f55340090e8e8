// Deterministic parallel loops: work is cut into chunks whose boundaries
// depend only on the problem size, never on the thread count, and every
// reduction is summed in chunk order. So 1 and N threads give the same bits.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "hooks.hpp"
#include "kernels.hpp"
#include "types.hpp"

#ifdef _OPENMP
#include <omp.h>
#endif

namespace nmfkit {
namespace detail {

/// How a loop is cut: chunks of at least `min_len` items, at most
/// `max_chunks` of them. The default suits row and column loops; loops whose
/// chunks must amortise a setup (the OT kernels pack their kernel per chunk)
/// ask for longer ones. Depends on the problem size only, never on threads.
struct ChunkShape {
  Index min_len = 16;
  Index max_chunks = 64;
};

/// Chunk length for n items under `shape`.
inline Index chunk_length(Index n, ChunkShape shape) {
  const Index most = std::max<Index>(shape.max_chunks, 1);
  return std::max<Index>(std::max<Index>(shape.min_len, 1),
                         (n + most - 1) / most);
}

/// Chunk length for n items: at most 64 chunks, at least `min_len` (default
/// 16) items each. Depends on the problem size only, never on threads.
inline Index chunk_length(Index n, Index min_len = 16) {
  return chunk_length(n, ChunkShape{min_len, 64});
}

/// Below this many flops a parallel region costs more than it saves: waking
/// threads, and on an oversubscribed machine OpenMP's spin-waiting, which
/// makes short regions 10-40x slower with 2 threads. Such loops run serially
/// over the same chunks, so the result does not change.
constexpr double kMinParallelWork = 4.0e6;

/// Interrupt checks per loop when a host is watching: the chunks run in at
/// most this many groups, the host asked before each one.
constexpr Index kInterruptGroups = 16;

}  // namespace detail

/// The package's one parallel API, passed into every solver (as uwot passes
/// its threading): the thread count plus the single rule for when a loop
/// goes parallel. Chunk boundaries depend only on the problem size and
/// reductions are summed in chunk order, so 1 and N threads give the same
/// bits. Every parallel loop of the core goes through this object: the only
/// `omp parallel` is in for_slots(). Functions that take an `int threads`
/// build their Parallel from it.
struct Parallel {
  int threads = 1;

  Parallel() = default;
  explicit Parallel(int t) : threads(t < 1 ? 1 : t) {}

  /// Threads worth using for a loop of `work` flops (1 below the threshold).
  int threads_for(double work) const {
    return work >= detail::kMinParallelWork ? threads : 1;
  }

  /// Worker slots a slotted loop may name: per-worker scratch needs this
  /// many entries.
  int slots() const { return threads; }

  /// Calls f(begin, length, slot) for every chunk of [0, n) under `shape`,
  /// in parallel when built with OpenMP, threads > 1 and the loop's
  /// estimated `work` (flops) is worth it. `slot` in [0, slots()) names the
  /// worker running the chunk (0 when serial): a chunk may use per-worker
  /// scratch indexed by it, but its result must not depend on it (which
  /// worker gets a chunk varies between runs). f must write only to its own
  /// chunk. With a `hooks` host (may be null), the chunks run in groups (one
  /// parallel region each) and hooks->check_interrupt() is called between
  /// groups on the calling thread, never inside a region; the chunk
  /// boundaries, and so the results, do not change. Returns false when the
  /// host interrupted (the remaining chunks are not run).
  template <class Hooks, class F>
  bool for_slots(Index n, Hooks* hooks, F&& f, double work = 1e300,
                 detail::ChunkShape shape = {}) const {
    const Index len = detail::chunk_length(n, shape);
    const Index chunks = (n + len - 1) / len;
    const bool parallel =
        threads > 1 && chunks > 1 && work >= detail::kMinParallelWork;
    const Index group =
        hooks == nullptr
            ? std::max<Index>(chunks, 1)
            : std::max<Index>(threads, (chunks + detail::kInterruptGroups - 1) /
                                           detail::kInterruptGroups);
    for (Index g0 = 0; g0 < chunks; g0 += group) {
      if (hooks != nullptr && hooks->check_interrupt()) return false;
      const Index g1 = std::min(chunks, g0 + group);
      if (!parallel) {
        // serially without entering OpenMP at all: an if(false) region
        // still costs a team of one per call, which small fits pay
        // thousands of times
        for (Index c = g0; c < g1; ++c)
          f(c * len, std::min(len, n - c * len), 0);
        continue;
      }
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic)
#endif
      for (Index c = g0; c < g1; ++c) {
#ifdef _OPENMP
        const int slot = omp_get_thread_num();
#else
        const int slot = 0;
#endif
        const Index b = c * len;
        f(b, std::min(len, n - b), slot);
      }
    }
    return true;
  }

  /// f(begin, length) for every chunk of [0, n); see for_slots().
  template <class F>
  void for_chunks(Index n, F&& f, double work = 1e300,
                  detail::ChunkShape shape = {}) const {
    for_chunks(n, static_cast<NullHooks*>(nullptr), std::forward<F>(f), work,
               shape);
  }

  /// As for_chunks, asking hooks->check_interrupt() between groups of chunks
  /// on the calling thread. Returns false when the host interrupted.
  template <class Hooks, class F>
  bool for_chunks(Index n, Hooks* hooks, F&& f, double work = 1e300,
                  detail::ChunkShape shape = {}) const {
    return for_slots(
        n, hooks, [&](Index b, Index l, int) { f(b, l); }, work, shape);
  }

  /// Sum over i in [0, n) of f(i), in chunk order.
  template <class F>
  double sum(Index n, F&& f, double work = 1e300) const {
    double s = 0.0;
    sum(n, static_cast<NullHooks*>(nullptr), std::forward<F>(f), s, work);
    return s;
  }

  /// Sum over i in [0, n) of f(i), in chunk order, into `out`, asking the
  /// host between groups of chunks. Returns false when it interrupted.
  template <class Hooks, class F>
  bool sum(Index n, Hooks* hooks, F&& f, double& out, double work = 1e300,
           detail::ChunkShape shape = {}) const {
    const Index len = detail::chunk_length(n, shape);
    std::vector<double> part(static_cast<size_t>((n + len - 1) / len), 0.0);
    const bool done = for_chunks(n, hooks, [&](Index b, Index l) {
      double s = 0.0;
      for (Index i = b; i < b + l; ++i) s += f(i);
      part[static_cast<size_t>(b / len)] = s;
    }, work, shape);
    out = 0.0;
    for (double v : part) out += v;
    return done;
  }

  /// Sum over the chunks of [0, n) of f(begin, length), in chunk order.
  template <class F>
  double sum_by_chunk(Index n, F&& f, double work = 1e300,
                      detail::ChunkShape shape = {}) const {
    const Index len = detail::chunk_length(n, shape);
    std::vector<double> part(static_cast<size_t>((n + len - 1) / len), 0.0);
    for_chunks(n, [&](Index b, Index l) {
      part[static_cast<size_t>(b / len)] = f(b, l);
    }, work, shape);
    double s = 0.0;
    for (double v : part) s += v;
    return s;
  }
};

namespace detail {

/// dst = src in fixed column chunks (in parallel when large enough, as the
/// other memory-bound passes: 10 flops per entry); dst keeps its storage
/// when the shape is unchanged.
inline void copy_chunks(const Mat& src, Mat& dst, int threads) {
  dst.resize(src.rows(), src.cols());
  Parallel(threads).for_chunks(src.cols(), [&](Index c0, Index len) {
    dst.middleCols(c0, len) = src.middleCols(c0, len);
  }, 10.0 * static_cast<double>(src.size()));
}

/// dst = src^T, the rows of src in fixed chunks (in parallel when large
/// enough, 10 flops per entry as copy_chunks): on one thread, transposing a
/// fit's start and result (k x m against m x k), with the page faults of
/// the fresh copy, costs a twentieth of a 2-thread sparse fit. dst keeps
/// its storage when it holds as many entries (a spare buffer's pages,
/// touched already, instead of fresh ones). src may be a map of the
/// caller's memory (R's matrix: no copy of it first).
inline void transpose_chunks(const Eigen::Ref<const Mat>& src, Mat& dst,
                             int threads) {
  dst.resize(src.cols(), src.rows());
  Parallel(threads).for_chunks(src.rows(), [&](Index r0, Index len) {
    dst.middleCols(r0, len) = src.middleRows(r0, len).transpose();
  }, 10.0 * static_cast<double>(src.size()));
}

/// G = Z Z^T for Z k x n: the lower triangles of the partial Grams of
/// fixed column chunks (at least 256 columns, at most 16 chunks), added in
/// chunk order and mirrored, so G is exactly symmetric and 1 and N threads
/// give the same bits. (Eigen's own products run on one thread here, where
/// the two Gram products of an engine iteration cost a twentieth of a
/// sparse fit.)
inline void gram(const Mat& z, Mat& g, int threads) {
  const Index k = z.rows(), n = z.cols();
  constexpr ChunkShape shape{256, 16};
  const Index len = chunk_length(n, shape);
  std::vector<Mat> part(static_cast<size_t>((n + len - 1) / len));
#ifdef NMFKIT_SIMD_X86
  const bool simd = simd_enabled();
#endif
  Parallel(threads).for_chunks(n, [&](Index c0, Index l) {
    Mat& p = part[static_cast<size_t>(c0 / len)];
#ifdef NMFKIT_SIMD_X86
    if (simd) {
      // the whole k x k block, exactly symmetric (kernels.hpp)
      p.resize(k, k);
      const double* zc = z.data() + c0 * k;
      avx2_left_mult_t(zc, k, l, zc, k, k, p.data());
      return;
    }
#endif
    p.setZero(k, k);
    p.selfadjointView<Eigen::Lower>().rankUpdate(z.middleCols(c0, l));
  }, static_cast<double>(k) * static_cast<double>(k) * n, shape);
  g.setZero(k, k);
  for (const Mat& p : part) g += p;
  for (Index j = 1; j < k; ++j)
    for (Index i = 0; i < j; ++i) g(i, j) = g(j, i);
}

}  // namespace detail
}  // namespace nmfkit
