// Entry weights a_ij = base + exceptions (0 for a missing entry): the data
// the masked Frobenius solver (masked.hpp) and the divergence fits
// (divergence.hpp) weigh their loss by. A bottom layer: types only.
#pragma once

#include <vector>

#include "types.hpp"

namespace nmfkit {

/// Exceptions of the entry weights compressed by one index (columns or
/// rows): for outer index o, entries start[o] .. start[o + 1] - 1 hold the
/// other index, the weight offset a_ij - base and the data value x_ij.
struct Exceptions {
  std::vector<Index> start, inner;
  std::vector<double> delta, value;
  Index size() const { return static_cast<Index>(inner.size()); }
};

/// Compresses the triplets (outer[e], inner[e], delta[e], value[e]) by outer
/// index, keeping their order within each outer index (a stable counting
/// sort), so the result does not depend on anything but the input order.
inline Exceptions compress_exceptions(Index n_outer,
                                      const std::vector<Index>& outer,
                                      const std::vector<Index>& inner,
                                      const std::vector<double>& delta,
                                      const std::vector<double>& value) {
  const size_t ne = outer.size();
  require(inner.size() == ne && delta.size() == ne && value.size() == ne,
          "masked: exception vectors differ in length");
  Exceptions e;
  e.start.assign(static_cast<size_t>(n_outer) + 1, 0);
  for (Index o : outer) {
    require(o >= 0 && o < n_outer, "masked: exception index out of range");
    ++e.start[static_cast<size_t>(o) + 1];
  }
  for (Index o = 0; o < n_outer; ++o)
    e.start[static_cast<size_t>(o) + 1] += e.start[static_cast<size_t>(o)];
  e.inner.resize(ne);
  e.delta.resize(ne);
  e.value.resize(ne);
  std::vector<Index> next(e.start.begin(), e.start.end() - 1);
  for (size_t t = 0; t < ne; ++t) {
    const size_t pos = static_cast<size_t>(next[outer[t]]++);
    e.inner[pos] = inner[t];
    e.delta[pos] = delta[t];
    e.value[pos] = value[t];
  }
  return e;
}

/// Entry weights a_ij = base + (exception offset), held both by column (for
/// the H update) and by row (for the W update).
struct EntryWeights {
  double base = 1.0;
  Exceptions by_col, by_row;
};

/// Entry weights from triplets: rows i, columns j (0-based), weight offsets
/// delta = a_ij - base and data values x_ij. base must be 0 or 1.
inline EntryWeights entry_weights(Index m, Index n, double base,
                                  const std::vector<Index>& i,
                                  const std::vector<Index>& j,
                                  const std::vector<double>& delta,
                                  const std::vector<double>& value) {
  require(base == 0.0 || base == 1.0, "masked: base weight must be 0 or 1");
  for (size_t t = 0; t < i.size(); ++t)
    require(base + delta[t] >= 0.0, "masked: negative weight");
  EntryWeights a;
  a.base = base;
  a.by_col = compress_exceptions(n, j, i, delta, value);
  a.by_row = compress_exceptions(m, i, j, delta, value);
  return a;
}

}  // namespace nmfkit
