// Standard NMF, X ~ W H minimising 1/2 ||X - W H||_F^2: HALS (cyclic
// coordinate descent on Gram systems, as scikit-learn's "cd" solver) and
// Lee-Seung multiplicative updates. One template serves dense and sparse X.
#pragma once

#include <algorithm>
#include <cmath>

#include "data.hpp"
#include "driver.hpp"
#include "hooks.hpp"
#include "loss.hpp"
#include "nnls.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// hals: cyclic coordinate descent, `inner` passes per factor update.
/// mu: Lee-Seung multiplicative updates.
/// anls: alternating nonnegative least squares, each factor solved to
///   tolerance (nnls_solve) given the other.
enum class Method { hals, mu, anls };

/// Settings of nmf(); defaults are scikit-learn's.
struct NmfParams {
  Method method = Method::hals;
  int max_iter = 200;
  double tol = 1e-4;  // stop when violation / first violation <= tol
  int threads = 1;
  /// Added to multiplicative-update denominators, relative to the data: the
  /// denominators scale like rms(X)^1.5, so the guard is mu_eps * rms^1.5
  /// and fitting c * X takes the same steps as fitting X.
  double mu_eps = 1e-10;
  /// Passes over each factor per outer iteration (Gillis & Glineur's
  /// accelerated HALS): the Gram system is built once and the cheap passes
  /// repeat while a pass still removes more than inner_tol of the first
  /// pass's violation. inner = 1 is plain HALS (scikit-learn's cd solver).
  int inner = 1;
  double inner_tol = 0.1;
  /// anls: coordinate tolerance and pass cap of each NNLS solve.
  double nnls_tol = 1e-8;
  int nnls_passes = 100;
};

/// Passes worth repeating per factor update for an m x n problem with nnz
/// stored entries at rank k: 1 + alpha * (cost of the two products) / (cost
/// of one pass), as Gillis & Glineur suggest with alpha = 0.5; capped at 20.
inline int auto_inner(Index m, Index n, double nnz, Index k) {
  const double rho = 1.0 + nnz / (static_cast<double>(m + n) * k);
  return static_cast<int>(std::min(20.0, 1.0 + 0.5 * rho));
}

namespace detail {

/// Multiplicative update of Z (k x cols) for min 1/2 tr(Z'GZ) - tr(B'Z):
/// Z <- Z * B / (G Z + eps). Returns the projected-gradient violation at the
/// entry point, the same measure cd_pass reports.
inline double mu_pass(Mat& z, const Mat& g, const Mat& b, double eps,
                      int threads) {
  const Index k = z.rows();
  return sum_chunks(z.cols(), threads, [&](Index j) {
    const Vec gz = g * z.col(j);
    double viol = 0.0;
    for (Index t = 0; t < k; ++t) {
      const double grad = gz[t] - b(t, j);
      viol += std::abs(z(t, j) == 0.0 ? std::min(0.0, grad) : grad);
      z(t, j) *= std::max(b(t, j), 0.0) / (gz[t] + eps);
    }
    return viol;
  }, 2.0 * static_cast<double>(k * k) * z.cols());
}

}  // namespace detail

/// Fits X ~ W H from the starting factors w (m x k) and h (k x n).
/// One outer iteration updates W (all of it) then H. loss[i] is the relative
/// error ||X - WH||_F / ||X||_F after iteration i + 1.
template <class DataT, class Hooks = NullHooks>
Result nmf(const DataT& x, const Mat& w, const Mat& h, const NmfParams& p,
           Hooks& hooks) {
  const Index m = x.rows(), n = x.cols(), k = w.cols();
  require(w.rows() == m && h.rows() == k && h.cols() == n,
          "nmf: W must be m x k and H k x n");
  require(p.max_iter >= 1 && p.tol >= 0 && p.threads >= 1, "nmf: params");

  require(p.inner >= 1 && p.inner_tol >= 0, "nmf: inner passes");
  const double x2 = x.sq_norm();
  const double rms =
      std::sqrt(x2 / (static_cast<double>(m) * static_cast<double>(n)));
  const double mu_eps = p.mu_eps * rms * std::sqrt(rms);
  // One factor update: the first pass's violation is the stopping measure;
  // further passes on the same Gram system only polish the factor.
  auto update = [&](Mat& z, const Mat& g, const Mat& b) {
    if (p.method == Method::anls) {
      const double first = violation(z, g, b, p.threads);
      nnls_solve(z, g, b, p.nnls_tol, p.nnls_passes, p.threads);
      return first;
    }
    auto pass = [&]() {
      return p.method == Method::hals
                 ? cd_pass(z, g, b, p.threads)
                 : detail::mu_pass(z, g, b, mu_eps, p.threads);
    };
    const double first = pass();
    for (int l = 2; l <= p.inner; ++l)
      if (pass() <= p.inner_tol * first) break;
    return first;
  };

  Result r;
  Mat wt = w.transpose();  // k x m: each column a row of W, contiguous
  r.H = h;
  Mat hht = r.H * r.H.transpose(), wtw, b;
  // the last finite iterate, restored when an update overflows
  Mat wt_prev, h_prev;
  RelativeTest test(p.tol);
  auto step = [&](int) {
    wt_prev = wt;
    h_prev = r.H;
    x.left_mult_t(r.H, b, p.threads);  // H X^T, k x m
    double viol = update(wt, hht, b);
    wtw = wt * wt.transpose();
    x.left_mult(wt, b, p.threads);  // W^T X, k x n
    viol += update(r.H, wtw, b);
    hht = r.H * r.H.transpose();
    StepOutcome o;
    o.loss = relative_error(sq_error_gram(x2, r.H, b, wtw, hht), x2);
    o.finite = std::isfinite(viol);
    o.converged = o.finite && test(viol);
    return o;
  };
  drive(p.max_iter, hooks, r, step, [&]() {
    wt = wt_prev;
    r.H = h_prev;
  });
  r.W = wt.transpose();
  return r;
}

}  // namespace nmfkit
