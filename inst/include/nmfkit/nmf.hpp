// Standard NMF, X ~ W H minimising 1/2 ||X - W H||_F^2, optionally with L1
// and L2 penalties on W and H and with leading components held fixed: HALS
// (cyclic coordinate descent, organised by component as in hals.hpp),
// Lee-Seung multiplicative updates, and ANLS with each half step solved
// exactly by block principal pivoting (bpp.hpp). Optional extrapolation
// between outer iterations (Ang & Gillis 2019). One template serves dense
// and sparse X.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>

#include "bpp.hpp"
#include "data.hpp"
#include "driver.hpp"
#include "extrapolate.hpp"
#include "hals.hpp"
#include "hooks.hpp"
#include "loss.hpp"
#include "nnls.hpp"
#include "parallel.hpp"
#include "params.hpp"
#include "types.hpp"

namespace nmfkit {

/// What nmf() and nmf_masked() return: the fit and its final penalised
/// objective 1/2 ||X - WH||^2 + penalties (NmfParams; the weighted error for
/// a masked fit), at the scale of the data the solver saw; NaN when no
/// iteration completed. The traced loss stays the relative error.
struct NmfResult : Result {
  double objective = NAN;
};

namespace detail {

/// What one factor's update adds to its subproblem
///   min_{z >= 0} 1/2 tr(z'gz) - tr(b'z)   (z k x cols):
/// absolute penalty weights, l1 sum(z) + l2 ||z||^2 / 2, and the number of
/// leading rows of z (components) held fixed.
struct FactorTerms {
  double l1 = 0.0, l2 = 0.0;
  Index fixed = 0;
  bool none() const { return l1 == 0.0 && l2 == 0.0 && fixed == 0; }
};

/// The terms of a factor with relative penalty `pen` and `fixed` leading
/// components, for data of root mean square `rms` whose lines the factor's
/// entries are fitted on have length `len` (m for H, n for W): the
/// Frobenius loss's absolute_penalty() (loss.hpp).
inline FactorTerms factor_terms(const Penalty& pen, Index fixed, double rms,
                                Index len) {
  const Penalty a = absolute_penalty(pen, 2.0, rms, len);
  return FactorTerms{a.l1, a.l2, fixed};
}

/// The factor terms of W and H.
struct NmfTerms {
  FactorTerms w, h;
};
inline NmfTerms nmf_terms(const NmfParams& p, Index k, double rms, Index m,
                          Index n) {
  require(p.pen_w.l1 >= 0.0 && p.pen_w.l2 >= 0.0 && p.pen_h.l1 >= 0.0 &&
              p.pen_h.l2 >= 0.0 && std::isfinite(p.pen_w.l1 + p.pen_w.l2 +
                                                 p.pen_h.l1 + p.pen_h.l2),
          "nmf: penalties must be finite and nonnegative");
  require(p.fixed_w >= 0 && p.fixed_w <= k && p.fixed_h >= 0 &&
              p.fixed_h <= k,
          "nmf: fixed components must be between 0 and k");
  require(p.beta == 2.0 && p.method != Method::cd,
          "nmf: the Frobenius engine fits beta = 2 by hals, mu or anls");
  return NmfTerms{factor_terms(p.pen_w, p.fixed_w, rms, n),
                  factor_terms(p.pen_h, p.fixed_h, rms, m)};
}

/// The free rows' system of the penalised subproblem with the first f =
/// t.fixed rows of z held: g_ff + l2 I (into gf) and, for the columns of
/// z and b given, b_f - g_fx z_x - l1 (into bf). The one place every
/// method, masked or not, gets its reduced system from (free_system() for
/// a whole factor, masked_update() per column).
inline void free_gram(const Mat& g, const FactorTerms& t, Mat& gf) {
  const Index kf = g.rows() - t.fixed;
  gf = g.bottomRightCorner(kf, kf);
  gf.diagonal().array() += t.l2;
}
template <class Z, class B, class Out>
void free_rhs(const Z& z, const Mat& g, const B& b, const FactorTerms& t,
              Out&& bf) {
  const Index f = t.fixed, kf = g.rows() - f;
  bf = b.bottomRows(kf);
  if (f > 0) bf.noalias() -= g.bottomLeftCorner(kf, f) * z.topRows(f);
  if (t.l1 != 0.0) bf.array() -= t.l1;
}

/// Work space of the free part of a factor update, kept across iterations
/// (no allocation per update).
struct FreeSystem {
  Mat g, b, z;
};

/// free_gram() and free_rhs() for every column of z, in fixed chunks; with
/// fixed rows, also the free rows of z into s.z.
inline void free_system(const Mat& z, const Mat& g, const Mat& b,
                        const FactorTerms& t, int threads, FreeSystem& s) {
  const Index kf = g.rows() - t.fixed;
  free_gram(g, t, s.g);
  s.b.resize(kf, b.cols());
  if (t.fixed > 0) s.z.resize(kf, z.cols());
  Parallel(threads).for_chunks(z.cols(), [&](Index c0, Index len) {
    free_rhs(z.middleCols(c0, len), g, b.middleCols(c0, len), t,
             s.b.middleCols(c0, len));
    if (t.fixed > 0)
      s.z.middleCols(c0, len) = z.middleCols(c0, len).bottomRows(kf);
  }, 2.0 * static_cast<double>(kf) * (t.fixed + 2) * z.cols());
}

/// The penalty l1 sum(z) + l2 ||z||^2 / 2 of z (k x cols), summed over its
/// columns in chunk order; 0 without penalties.
inline double penalty_value(const Mat& z, const FactorTerms& t, int threads) {
  if (t.l1 == 0.0 && t.l2 == 0.0) return 0.0;
  return Parallel(threads).sum(z.cols(), [&](Index j) {
    return t.l1 * z.col(j).sum() + 0.5 * t.l2 * z.col(j).squaredNorm();
  }, 3.0 * static_cast<double>(z.size()));
}

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
inline double solve_factor(Mat& z, const Mat& g, const Mat& b,
                           const NmfParams& p, double mu_eps) {
  switch (p.method) {
    case Method::anls: {
      const double first = violation(z, g, b, p.threads);
      nnls_bpp(z, g, b, p.threads, true);
      return first;
    }
    case Method::hals:
      return hals_update(z, g, b, p.threads, p.inner, p.inner_tol, p.chunk);
    default: {
      const double first = mu_pass(z, g, b, mu_eps, p.threads);
      for (int l = 2; l <= p.inner; ++l)
        if (mu_pass(z, g, b, mu_eps, p.threads) <= p.inner_tol * first)
          break;
      return first;
    }
  }
}

/// solve_factor() on the subproblem with the factor terms t: every method
/// solves the free rows' system (free_system(): L1 lowers b, L2 raises g's
/// diagonal, the fixed rows' contribution moves to the right-hand side), so
/// the violation returned is the penalised problem's over the free
/// coordinates, and the fixed rows of z are never written. Without terms
/// the system is (g, b) itself, untouched. The unmasked engine's update,
/// also used by the masked solver's filled-in path.
inline double factor_update(Mat& z, const Mat& g, const Mat& b,
                            const NmfParams& p, double mu_eps,
                            const FactorTerms& t, FreeSystem& work) {
  if (t.none()) return solve_factor(z, g, b, p, mu_eps);
  const Index kf = z.rows() - t.fixed;
  if (kf == 0) return 0.0;  // all fixed: nothing to solve
  free_system(z, g, b, t, p.threads, work);
  if (t.fixed == 0) return solve_factor(z, work.g, work.b, p, mu_eps);
  const double viol = solve_factor(work.z, work.g, work.b, p, mu_eps);
  Parallel(p.threads).for_chunks(z.cols(), [&](Index c0, Index len) {
    z.middleCols(c0, len).bottomRows(kf) = work.z.middleCols(c0, len);
  }, 10.0 * static_cast<double>(work.z.size()));
  return viol;
}

}  // namespace detail

/// Fits X ~ W H from the starting factors w (m x k) and h (k x n), read
/// where they are (a map of R's matrices is not copied first).
/// One outer iteration updates W (all of it) then H. loss[i] is the relative
/// error ||X - WH||_F / ||X||_F after iteration i + 1 (the penalties are not
/// in it; NmfResult::objective has them).
template <class DataT, class Hooks = NullHooks>
NmfResult nmf(const DataT& x, const Eigen::Ref<const Mat>& w,
              const Eigen::Ref<const Mat>& h, const NmfParams& p,
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
  // the penalties' weights (relative to rms) and fixed rows of W' and H
  const detail::NmfTerms terms = detail::nmf_terms(p, k, rms, m, n);
  // the W and H updates' passes (not a structured binding: C++17 lambdas
  // cannot capture one)
  const detail::FactorParams passes =
      detail::factor_params(p, m, n, k, x.stored());
  const NmfParams& pw = passes.w;
  const NmfParams& ph = passes.h;
  // one work space per factor, as bw and bh below
  detail::FreeSystem work_w, work_h;
  auto update = [&](Mat& z, const Mat& g, const Mat& b, const NmfParams& q,
                    const detail::FactorTerms& t, detail::FreeSystem& work) {
    return detail::factor_update(z, g, b, q, mu_eps, t, work);
  };

  NmfResult r;
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
  // and `plain` the last accepted plain iterate, which is what the fit
  // returns; plain_loss is its traced loss.
  detail::PlainIterate plain;
  double plain_loss = INFINITY;
  if (p.extrapolate) plain.start(wt, r.H);
  detail::Extrapolator ex(p.tol);
  RelativeTest test(p.tol, p.reference_violation);
  // fixed rows (components) are copied, never pushed, so they stay bit for
  // bit what they were
  auto push_w = [&](const Mat& z, const Mat& old, Mat& out) {
    detail::push_factor(z, old, ex.beta(), terms.w.fixed, p.threads, out);
  };
  auto push_h = [&](const Mat& z, const Mat& old, Mat& out) {
    detail::push_factor(z, old, ex.beta(), terms.h.fixed, p.threads, out);
  };
  // the objective of the iterate the fit would return now
  double objective = NAN;
  auto step = [&](int) {
    // the iterate a non-finite step rolls back to; with extrapolation that
    // is the plain iterate (drive_fit()), so the copies would go unused
    if (!p.extrapolate) {
      detail::copy_chunks(wt, wt_prev, p.threads);
      detail::copy_chunks(r.H, h_prev, p.threads);
    }
    double viol = 0.0;
    if (terms.w.fixed < k) {  // a fixed W needs neither H X^T nor an update
      x.left_mult_t(r.H, bw, p.threads);  // H X^T, k x m
      viol = update(wt, hht, bw, pw, terms.w, work_w);
    }
    detail::gram(wt, wtw, p.threads);
    x.left_mult(wt, bh, p.threads);  // W^T X, k x n
    viol += update(r.H, wtw, bh, ph, terms.h, work_h);
    detail::gram(r.H, hht, p.threads);
    StepOutcome o;
    const double sq = sq_error_gram(x2, r.H, bh, wtw, hht);
    const double pen = detail::penalty_value(wt, terms.w, p.threads) +
                       detail::penalty_value(r.H, terms.h, p.threads);
    o.loss = relative_error(sq, x2);
    o.finite = std::isfinite(viol) && std::isfinite(o.loss) &&
               std::isfinite(pen);
    if (!p.extrapolate || !o.finite) {
      o.converged = o.finite && test(viol);
      if (o.finite) objective = 0.5 * sq + pen;
      return o;
    }
    // the restart rule compares the penalised objective, in the traced
    // loss's units (sqrt(2 objective / ||X||^2): the loss itself without
    // penalties), so extrapolation stays a descent method on what the fit
    // minimises
    const detail::Verdict v =
        ex.judge(relative_error(sq + 2.0 * pen, x2), viol);
    if (v == detail::Verdict::restart) {
      // the pushed point did worse than the plain iterate: start again from
      // the plain iterate (the fit stays where it was), with a smaller beta
      plain.restore(wt, r.H);
      detail::gram(r.H, hht, p.threads);
      o.loss = plain_loss;
      return o;
    }
    plain_loss = o.loss;
    objective = 0.5 * sq + pen;
    o.converged = test(viol);
    if (v == detail::Verdict::keep) {
      plain.keep(wt, r.H, p.threads);  // what the fit returns
      return o;
    }
    plain.push(wt, r.H, push_w, push_h);
    detail::gram(r.H, hht, p.threads);
    return o;
  };
  detail::drive_fit(p.max_iter, p.extrapolate, hooks, r, test, step, wt,
                    wt_prev, h_prev, plain.wt, plain.h);
  // W into the storage of H X^T (k x m, no longer needed): its pages are
  // touched already, fresh ones cost a fault each (18 us a page on the
  // bench machine: a seventh of the sparse benchmark's fit)
  r.W.swap(bw);
  detail::transpose_chunks(wt, r.W, p.threads);
  r.objective = objective;
  return r;
}

}  // namespace nmfkit
