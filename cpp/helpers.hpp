// Fixtures shared by the core tests: deterministic random matrices.
#pragma once

#include <nmfkit.hpp>
#include <random>

namespace nmfkit_test {

/// Uniform [lo, hi) matrix from a fixed-seed engine.
inline nmfkit::Mat runif(nmfkit::Index r, nmfkit::Index c, unsigned seed,
                         double lo = 0.0, double hi = 1.0) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  nmfkit::Mat m(r, c);
  for (nmfkit::Index j = 0; j < c; ++j)
    for (nmfkit::Index i = 0; i < r; ++i) m(i, j) = u(gen);
  return m;
}

/// Standard normal matrix from a fixed-seed engine.
inline nmfkit::Mat rnorm(nmfkit::Index r, nmfkit::Index c, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> z(0.0, 1.0);
  nmfkit::Mat m(r, c);
  for (nmfkit::Index j = 0; j < c; ++j)
    for (nmfkit::Index i = 0; i < r; ++i) m(i, j) = z(gen);
  return m;
}

/// Hooks that ask to stop after `after` checks, and count progress calls.
struct StopAfter {
  int after;
  int checks = 0;
  int progress_calls = 0;
  bool check_interrupt() { return ++checks >= after; }
  void progress(int, double) { ++progress_calls; }
};

}  // namespace nmfkit_test
