// Nonnegative least squares by cyclic coordinate descent on Gram systems:
// the kernel of HALS and of every predict() for Frobenius variants.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "hooks.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// One cyclic pass of coordinate descent on min_{z >= 0} 1/2 z'Gz - b'z for
/// every column z of Z (k x cols), with B (k x cols) holding the b's and G
/// (k x k) symmetric. Columns are independent, so they run in parallel.
/// Sets `viol` to the sum of |projected gradient| met before each coordinate
/// update (scikit-learn's violation), summed in a fixed order. With `hooks`,
/// the host may interrupt between chunks of columns: returns false then.
template <class Hooks>
bool cd_pass_hooked(Mat& z, const Mat& g, const Mat& b, int threads,
                    Hooks* hooks, double& viol) {
  const Index k = z.rows();
  require(g.rows() == k && g.cols() == k, "cd_pass: G must be k x k");
  require(b.rows() == k && b.cols() == z.cols(), "cd_pass: B shape");
  return Parallel(threads).sum(z.cols(), hooks, [&](Index j) {
    double v = 0.0;
    auto zj = z.col(j);
    // z = 0 with b <= 0 is optimal already: every gradient -b_t >= 0 sits at
    // the bound, so the pass would leave z at 0 and add no violation. Skip
    // it (bitwise the same result): rows of W for features absent from the
    // data, or columns of H for empty samples, cost O(k) instead of O(k^2).
    if ((zj.array() == 0.0).all() && (b.col(j).array() <= 0.0).all())
      return v;
    for (Index t = 0; t < k; ++t) {
      const double grad = g.col(t).dot(zj) - b(t, j);
      const double pg = zj[t] == 0.0 ? std::min(0.0, grad) : grad;
      v += std::abs(pg);
      const double gtt = g(t, t);
      if (gtt > 0.0) zj[t] = std::max(zj[t] - grad / gtt, 0.0);
    }
    return v;
  }, viol, 2.0 * static_cast<double>(k * k) * z.cols());
}

/// cd_pass_hooked without a host; returns the violation.
inline double cd_pass(Mat& z, const Mat& g, const Mat& b, int threads) {
  double viol = 0.0;
  cd_pass_hooked(z, g, b, threads, static_cast<NullHooks*>(nullptr), viol);
  return viol;
}

/// Solves min_{Z >= 0} 1/2 tr(Z'GZ) - tr(B'Z) by repeated passes from the
/// given Z until the violation falls to tol times the first pass's (or to 0),
/// or max_passes. Returns the number of passes, or -1 when the host
/// interrupted (asked between chunks of every pass; Z is then partial).
template <class Hooks>
int nnls_cd(Mat& z, const Mat& g, const Mat& b, double tol, int max_passes,
            int threads, Hooks& hooks) {
  double viol0 = 0.0;
  for (int pass = 1; pass <= max_passes; ++pass) {
    double viol = 0.0;
    if (!cd_pass_hooked(z, g, b, threads, &hooks, viol)) return -1;
    if (pass == 1) viol0 = viol;
    if (viol0 == 0.0 || viol <= tol * viol0) return pass;
  }
  return max_passes;
}

/// nnls_cd without a host.
inline int nnls_cd(Mat& z, const Mat& g, const Mat& b, double tol,
                   int max_passes, int threads) {
  NullHooks none;
  return nnls_cd(z, g, b, tol, max_passes, threads, none);
}

/// The projected-gradient violation of Z for the system (G, B) without
/// changing Z: the same measure cd_pass reports, at the current point.
inline double violation(const Mat& z, const Mat& g, const Mat& b, int threads) {
  return Parallel(threads).sum(z.cols(), [&](Index j) {
    const Vec grad = g * z.col(j) - b.col(j);
    double v = 0.0;
    for (Index t = 0; t < z.rows(); ++t)
      v += std::abs(z(t, j) == 0.0 ? std::min(0.0, grad[t]) : grad[t]);
    return v;
  }, 2.0 * static_cast<double>(z.rows() * z.rows()) * z.cols());
}

}  // namespace nmfkit
