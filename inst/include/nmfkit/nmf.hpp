// Standard NMF, X ~ W H minimising 1/2 ||X - W H||_F^2: HALS (cyclic
// coordinate descent, organised by component as in hals.hpp), Lee-Seung
// multiplicative updates, and ANLS with each half step solved exactly by
// block principal pivoting (bpp.hpp). Optional extrapolation between outer
// iterations (Ang & Gillis 2019). One template serves dense and sparse X.
#pragma once

#include <algorithm>
#include <cmath>

#include "bpp.hpp"
#include "data.hpp"
#include "driver.hpp"
#include "hals.hpp"
#include "hooks.hpp"
#include "loss.hpp"
#include "nnls.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// hals: cyclic coordinate descent, `inner` passes per factor update.
/// mu: Lee-Seung multiplicative updates.
/// anls: alternating nonnegative least squares, each factor solved exactly
///   (block principal pivoting, warm-started from the previous iterate).
enum class Method { hals, mu, anls };

/// How many passes each factor update makes: `inner` (fixed), or as many as
/// pay off by Gillis and Glineur's cost rule, chosen per factor from the
/// problem's shape (automatic; see detail::cost_rule_passes()).
enum class InnerPasses { fixed, automatic };

/// Settings of nmf().
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
  /// Read only when `passes` is InnerPasses::fixed.
  int inner = 1;
  InnerPasses passes = InnerPasses::fixed;
  double inner_tol = 0.1;
  /// Extrapolation between outer iterations (Ang & Gillis, Neural
  /// Computation 2019, their parameters): W and H are pushed along their last
  /// move by beta; an iteration whose error rises restarts from the plain
  /// iterate with a smaller beta, so the traced loss never rises.
  bool extrapolate = false;
};

namespace detail {

/// Multiplicative update of Z (k x cols) for min 1/2 tr(Z'GZ) - tr(B'Z):
/// Z <- Z * B / (G Z + eps). Returns the projected-gradient violation at the
/// entry point, the same measure cd_pass reports.
inline double mu_pass(Mat& z, const Mat& g, const Mat& b, double eps,
                      int threads) {
  const Index k = z.rows();
  return Parallel(threads).sum(z.cols(), [&](Index j) {
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

/// Ang & Gillis's extrapolation parameters and restart rule (their
/// Algorithm 1 with beta0 = 0.5, eta = 1.5, gamma = 1.01, gamma_bar = 1.005).
struct Extrapolation {
  double beta = 0.5, beta_max = 1.0, beta_prev = 0.5;
  double best = INFINITY;  // the loss of the current plain iterate
  /// After an iteration with error e: true accepts it (beta grows), false
  /// rejects it (beta shrinks; restart from the plain iterate). An iteration
  /// that started from a plain iterate (`pushed` false) is a descent step of
  /// the solver itself and always accepted, so rounding noise in the loss
  /// of a nearly exact fit cannot stall it.
  bool accept(double e, bool pushed) {
    if (pushed && e > best) {
      beta_max = beta_prev;
      beta /= 1.5;
      return false;
    }
    best = e;
    beta_prev = beta;
    beta = std::min(beta_max, 1.01 * beta);
    beta_max = std::min(1.0, 1.005 * beta_max);
    return true;
  }
};

/// Gillis and Glineur's rule (Neural Computation 2012, accelerated HALS,
/// alpha = 0.5) for the passes over a factor of `len` columns (z is k x len)
/// per update: a pass costs about 2 len k^2 flops, and the right-hand side
/// and Gram matrix it reuses (2 stored k for the product with the data,
/// `other` k^2 for the Gram of the other factor) cost rho - 1 passes; up to
/// 1 + rho / 2 passes pay off. On the sparse benchmark (20000 x 5000, 500k
/// stored, k = 20) that is 2 passes over W and 5 over H; on dense data it
/// is n / 2k and more.
inline int cost_rule_passes(Index len, Index other, Index k, double stored) {
  const double kk = static_cast<double>(k) * static_cast<double>(k);
  const double pass = 2.0 * static_cast<double>(len) * kk;
  if (pass <= 0.0) return 1;
  const double rho =
      1.0 + (2.0 * stored * static_cast<double>(k) +
             static_cast<double>(other) * kk) / pass;
  return static_cast<int>(std::min(100.0, std::floor(1.0 + 0.5 * rho)));
}

/// The W and H updates' settings for data m x n with `stored` entries at
/// rank k: p with each factor's pass count fixed (p.inner, or the cost
/// rule's when p.passes is automatic).
struct FactorParams {
  NmfParams w, h;
};
inline FactorParams factor_params(const NmfParams& p, Index m, Index n,
                                  Index k, double stored) {
  FactorParams f{p, p};
  if (p.passes == InnerPasses::automatic) {
    f.w.inner = cost_rule_passes(m, n, k, stored);
    f.h.inner = cost_rule_passes(n, m, k, stored);
    f.w.passes = f.h.passes = InnerPasses::fixed;
  }
  return f;
}

/// One factor update of z (k x cols) for min_{z >= 0} 1/2 tr(z'gz) -
/// tr(b'z) by p.method: exact BPP warm-started (anls), `inner` HALS passes,
/// one component across a cached block of columns at a time (hals), or
/// multiplicative passes (mu). Returns the
/// projected-gradient violation at the entry point (the stopping measure).
/// The unmasked engine's update, also used by the masked solver's
/// filled-in path.
inline double factor_update(Mat& z, const Mat& g, const Mat& b,
                            const NmfParams& p, double mu_eps) {
  switch (p.method) {
    case Method::anls: {
      const double first = violation(z, g, b, p.threads);
      nnls_bpp(z, g, b, p.threads, true);
      return first;
    }
    case Method::hals:
      return hals_update(z, g, b, p.threads, p.inner, p.inner_tol);
    default: {
      const double first = mu_pass(z, g, b, mu_eps, p.threads);
      for (int l = 2; l <= p.inner; ++l)
        if (mu_pass(z, g, b, mu_eps, p.threads) <= p.inner_tol * first)
          break;
      return first;
    }
  }
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
  // the W and H updates' passes (not a structured binding: C++17 lambdas
  // cannot capture one)
  const detail::FactorParams passes =
      detail::factor_params(p, m, n, k, x.stored());
  const NmfParams& pw = passes.w;
  const NmfParams& ph = passes.h;
  auto update = [&](Mat& z, const Mat& g, const Mat& b, const NmfParams& q) {
    return detail::factor_update(z, g, b, q, mu_eps);
  };

  Result r;
  Mat wt;  // k x m: each column a row of W, contiguous
  detail::transpose_chunks(w, wt, p.threads);
  r.H = h;
  // bw (k x m) and bh (k x n) keep their storage across iterations: one
  // buffer resized between the two shapes would reallocate (and
  // page-fault) 4 MB per iteration of the sparse benchmark
  Mat hht, wtw, bw, bh;
  detail::gram(r.H, hht, p.threads);
  // the last finite iterate, restored when an update overflows
  Mat wt_prev, h_prev;
  // With extrapolation, (wt, r.H) are the points an iteration starts from
  // and (wt_plain, h_plain) the last accepted plain iterate, which is what
  // the fit returns.
  Mat wt_plain, h_plain;
  if (p.extrapolate) {
    wt_plain = wt;
    h_plain = r.H;
  }
  detail::Extrapolation ex;
  bool pushed = false;  // (wt, r.H) is a pushed point, not a plain iterate
  // Pushes stop for good once the violation is within sqrt(tol) of the
  // first: near the optimum, pushes along the scaling ambiguity of (W, H)
  // change the loss by rounding only and keep the violation from falling,
  // so the last stretch to `tol` runs plain.
  bool pushing = p.extrapolate;
  double first_viol = -1.0;
  RelativeTest test(p.tol);
  // the pushed points are written into these and swapped in: no
  // allocation per iteration
  Mat wt_next, h_next;
  auto push = [&](const Mat& z, const Mat& old, Mat& out) {
    out.resize(z.rows(), z.cols());
    Parallel(p.threads).for_chunks(z.cols(), [&](Index c0, Index len) {
      out.middleCols(c0, len) =
          (z.middleCols(c0, len) +
           ex.beta * (z.middleCols(c0, len) - old.middleCols(c0, len)))
              .cwiseMax(0.0);
    }, 10.0 * static_cast<double>(z.size()));
  };
  auto step = [&](int) {
    detail::copy_chunks(wt, wt_prev, p.threads);
    detail::copy_chunks(r.H, h_prev, p.threads);
    x.left_mult_t(r.H, bw, p.threads);  // H X^T, k x m
    double viol = update(wt, hht, bw, pw);
    detail::gram(wt, wtw, p.threads);
    x.left_mult(wt, bh, p.threads);  // W^T X, k x n
    viol += update(r.H, wtw, bh, ph);
    detail::gram(r.H, hht, p.threads);
    StepOutcome o;
    o.loss = relative_error(sq_error_gram(x2, r.H, bh, wtw, hht), x2);
    o.finite = std::isfinite(viol) && std::isfinite(o.loss);
    if (!p.extrapolate || !o.finite) {
      o.converged = o.finite && test(viol);
      return o;
    }
    if (!ex.accept(o.loss, pushed)) {
      // the pushed point did worse than the plain iterate: start again from
      // the plain iterate (the fit stays where it was), with a smaller beta
      wt = wt_plain;
      r.H = h_plain;
      detail::gram(r.H, hht, p.threads);
      pushed = false;
      o.loss = ex.best;
      return o;
    }
    o.converged = test(viol);
    if (first_viol < 0.0) first_viol = viol;
    if (pushing && viol <= std::sqrt(p.tol) * first_viol) pushing = false;
    if (!pushing) {
      detail::copy_chunks(wt, wt_plain, p.threads);  // what the fit returns
      detail::copy_chunks(r.H, h_plain, p.threads);
      pushed = false;
      return o;
    }
    push(wt, wt_plain, wt_next);
    push(r.H, h_plain, h_next);
    wt_plain.swap(wt);  // the plain iterate; wt the pushed point
    wt.swap(wt_next);
    h_plain.swap(r.H);
    r.H.swap(h_next);
    detail::gram(r.H, hht, p.threads);
    pushed = true;
    return o;
  };
  drive(p.max_iter, hooks, r, step, [&]() {
    wt = wt_prev;
    r.H = h_prev;
  });
  if (p.extrapolate) {
    wt = std::move(wt_plain);
    r.H = std::move(h_plain);
  }
  detail::transpose_chunks(wt, r.W, p.threads);
  return r;
}

}  // namespace nmfkit
