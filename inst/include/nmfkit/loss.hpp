// Frobenius losses, computed without forming the residual where possible.
#pragma once

#include <algorithm>
#include <cmath>

#include "types.hpp"

namespace nmfkit {

/// The loss of nmf(): the Frobenius norm 1/2 ||X - WH||^2 (nmf.hpp,
/// masked.hpp, stream.hpp) or a beta-divergence (divergence.hpp,
/// stream_divergence.hpp; its exponent beta beside it).
enum class LossKind { frobenius, divergence };

/// ||X - W H||_F^2 from pieces the solvers already hold:
/// ||X||^2 - 2 <H, W^T X> + <W^T W, H H^T>, clamped at 0 against rounding.
inline double sq_error_gram(double x_sq_norm, const Mat& h, const Mat& wtx,
                            const Mat& wtw, const Mat& hht) {
  const double e =
      x_sq_norm - 2.0 * h.cwiseProduct(wtx).sum() + wtw.cwiseProduct(hht).sum();
  return std::max(e, 0.0);
}

/// Relative error ||X - W H||_F / ||X||_F from the squared error.
inline double relative_error(double sq_error, double x_sq_norm) {
  return x_sq_norm > 0.0 ? std::sqrt(sq_error / x_sq_norm) : 0.0;
}

/// ||X - W H||_F^2 computed directly (dense X; for tests and small data).
inline double sq_error_dense(const Eigen::Ref<const Mat>& x, const Mat& w,
                             const Mat& h) {
  return (x - w * h).squaredNorm();
}

}  // namespace nmfkit
