// What depends on the loss outside its engine's update: the penalties'
// scale, and the Frobenius losses, computed without forming the residual
// where possible.
#pragma once

#include <algorithm>
#include <cmath>

#include "params.hpp"
#include "types.hpp"

namespace nmfkit {

/// The loss of nmf(): the Frobenius norm 1/2 ||X - WH||^2 (nmf.hpp,
/// masked.hpp, stream.hpp) or a beta-divergence (divergence.hpp,
/// stream_divergence.hpp; its exponent beta beside it).
enum class LossKind { frobenius, divergence };

/// The root mean square of data m x n with ||X||^2 = sq_norm (0 when
/// empty): the scale the penalties and multiplicative guards are relative
/// to.
inline double data_rms(double sq_norm, Index m, Index n) {
  const double mn = static_cast<double>(m) * static_cast<double>(n);
  return mn > 0.0 ? std::sqrt(sq_norm / mn) : 0.0;
}

/// The absolute weights of the relative penalty `rel` on a factor whose
/// entries are fitted on lines of length `len` (m for H, n for W, as
/// scikit-learn scales its alphas), for data of root mean square r under
/// d_beta: l1 len r^(beta - 1/2) and l2 len r^(beta - 1). An entry's
/// gradient sums len terms of size r^(beta - 1/2), so weight 1 weighs like
/// the data, and fitting c X runs the same iterations (the loss scales as
/// c^beta, each factor as c^(1/2)). Frobenius (beta 2) as r sqrt(r) and r,
/// the beta-divergences through pow (each engine's bits as they were).
inline Penalty absolute_penalty(const Penalty& rel, double beta, double r,
                                Index len) {
  const double l = static_cast<double>(len);
  if (beta == 2.0)
    return Penalty{rel.l1 * l * r * std::sqrt(r), rel.l2 * l * r};
  return Penalty{rel.l1 == 0.0 ? 0.0 : rel.l1 * l * std::pow(r, beta - 0.5),
                 rel.l2 == 0.0 ? 0.0 : rel.l2 * l * std::pow(r, beta - 1.0)};
}

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
