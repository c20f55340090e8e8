// Deterministic parallel loops: work is cut into chunks whose boundaries
// depend only on the problem size, never on the thread count, and every
// reduction is summed in chunk order. So 1 and N threads give the same bits.
#pragma once

#include <algorithm>
#include <vector>

#include "types.hpp"

namespace nmfkit {
namespace detail {

/// Chunk length for n items: at most 64 chunks, at least 16 items each.
inline Index chunk_length(Index n) {
  return std::max<Index>(16, (n + 63) / 64);
}

/// Below this many flops a parallel region costs more than it saves: waking
/// threads, and on an oversubscribed machine OpenMP's spin-waiting, which
/// made short regions 10-40x slower with 2 threads. Such loops run serially
/// over the same chunks, so the result does not change.
constexpr double kMinParallelWork = 4.0e6;

/// Calls f(begin, length) for every chunk of [0, n), in parallel when built
/// with OpenMP, threads > 1 and the loop's estimated `work` (flops) is worth
/// it. f must write only to its own chunk.
template <class F>
void for_chunks(Index n, int threads, F&& f, double work = 1e300) {
  const Index len = chunk_length(n);
  const Index chunks = (n + len - 1) / len;
  const bool parallel = threads > 1 && chunks > 1 && work >= kMinParallelWork;
#ifdef _OPENMP
#pragma omp parallel for num_threads(threads) schedule(dynamic) if (parallel)
#endif
  for (Index c = 0; c < chunks; ++c) {
    const Index b = c * len;
    f(b, std::min(len, n - b));
  }
  (void)parallel;
}

/// Sum over i in [0, n) of f(i), computed in parallel chunks and added in a
/// fixed order.
template <class F>
double sum_chunks(Index n, int threads, F&& f, double work = 1e300) {
  const Index len = chunk_length(n);
  const Index chunks = (n + len - 1) / len;
  std::vector<double> part(static_cast<size_t>(chunks), 0.0);
  for_chunks(n, threads, [&](Index b, Index l) {
    double s = 0.0;
    for (Index i = b; i < b + l; ++i) s += f(i);
    part[static_cast<size_t>(b / len)] = s;
  }, work);
  double s = 0.0;
  for (double v : part) s += v;
  return s;
}

}  // namespace detail
}  // namespace nmfkit
