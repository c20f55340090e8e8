// Automatic relevance determination in NMF (Tan & Fevotte, IEEE TPAMI 2013,
// "Automatic relevance determination in nonnegative matrix factorization
// with the beta-divergence"): X ~ W H under d_beta with one relevance
// lambda_k per component, shared by column k of W and row k of H, whose
// priors are exponential (L1: p(w | lambda) = exp(-w / lambda) / lambda) or
// half-normal with variance lambda (L2), and lambda_k inverse-gamma (a, b).
// The MAP objective is
//   C = D(X | WH) / phi + sum_k [(f(w_k) + f(h_k) + b) / lambda_k
//                                + c log lambda_k],
// f = ||.||_1 and c = m + n + a + 1 (L1), f = ||.||^2 / 2 and
// c = (m + n) / 2 + a + 1 (L2). An iteration is three block steps, each
// never raising C: W and H by the paper's multiplicative MM updates with
// lambda fixed (exponent gamma(beta) of Fevotte & Idier for L1, zeta(beta)
// = 1 / (3 - beta) below 2 and 1 / (beta - 1) from 2 for L2), then lambda
// exactly, lambda_k = (f(w_k) + f(h_k) + b) / c. Irrelevant components fall
// to the floor b / c. The data are CountData (divergence.hpp): the nonzero
// entries by column and by row, built alike from dense and sparse storage,
// so both give the same bits; KL and Frobenius work on the nonzeros only
// (zeros through column sums and Gram matrices), other betas a column at a
// time.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "divergence.hpp"
#include "driver.hpp"
#include "parallel.hpp"
#include "params.hpp"
#include "types.hpp"

namespace nmfkit {

enum class ArdPrior { l1, l2 };

/// Settings of nmf_ard(): nmf()'s (params.hpp; it reads beta, max_iter,
/// tol, threads) and the prior's. a, b and phi are absolute (the R layer
/// sets them relative to the data, so fitting c X runs the same
/// iterations). ARD's own defaults: KL, 2000 iterations, and tol on the
/// relevances, stop when max_k |lambda_k change| / lambda_k <= tol.
struct ArdParams : NmfParams {
  ArdPrior prior = ArdPrior::l1;
  double a = 3.0;    // shape of the inverse-gamma prior of lambda
  double b = 1.0;    // its scale
  double phi = 1.0;  // dispersion of the likelihood
  ArdParams() {
    beta = 1.0;
    method = Method::mu;
    max_iter = 2000;
    tol = 1e-5;
  }
};

/// nmf_ard()'s result: loss is the trace of the MAP objective (lambda at
/// its optimum given W, H, the constants of the priors included), with the
/// divergence and every component's relevance after each iteration.
struct ArdResult : Result {
  Vec lambda;                         // final relevances
  std::vector<double> lambda_trace;   // k per iteration (k x iterations)
  std::vector<double> divergence;     // D(X | WH) per iteration
  double floor = 0.0;                 // b / c, the relevance of nothing
};

namespace detail {

/// The exponent of the MM update: gamma(beta) for L1 (mu_exponent()),
/// zeta(beta) for L2.
inline double ard_exponent(double beta, ArdPrior prior) {
  if (prior == ArdPrior::l1) return mu_exponent(beta);
  return beta <= 2.0 ? 1.0 / (3.0 - beta) : 1.0 / (beta - 1.0);
}

/// The penalty's f of each component of W (rows of wt) and H (rows of h).
inline Vec ard_norms(const Mat& wt, const Mat& h, ArdPrior prior) {
  if (prior == ArdPrior::l1)
    return wt.rowwise().sum() + h.rowwise().sum();
  return 0.5 * (wt.rowwise().squaredNorm() + h.rowwise().squaredNorm());
}

/// One multiplicative update of z (k x n_outer) against ft (k x n_inner,
/// one column per inner index), the data compressed by the outer index in
/// `v`, penalty weights phi / lambda_k in `pen`. Per outer column:
///   z <- z * (num / (den + pen [* z for L2]))^e,
/// num = ft (x y^(beta - 2)), den = ft y^(beta - 1), y = ft' z. When
/// want_div, `div` gets the divergence of the updated z. Returns false
/// when interrupted.
template <class Hooks>
bool ard_update(Mat& z, const Mat& ft, const SpMat& v, const ArdParams& p,
                const Vec& pen, const Parallel& par, Hooks* hooks,
                double& div, bool want_div) {
  const Index k = z.rows(), n = z.cols(), mi = ft.cols();
  const double beta = p.beta, e = ard_exponent(beta, p.prior);
  const bool l2 = p.prior == ArdPrior::l2;
  const Vec fsum = ft.rowwise().sum();
  Mat g;
  if (beta == 2.0) g.noalias() = ft * ft.transpose();
  const auto* outer = v.outerIndexPtr();
  const auto* inner = v.innerIndexPtr();
  const double* val = v.valuePtr();
  const double work =
      beta == 1.0 || beta == 2.0
          ? 4.0 * static_cast<double>(k) * (v.nonZeros() + k * n)
          : 4.0 * static_cast<double>(k) * mi * n;
  std::vector<double> part;
  const bool done = chunk_sums(n, par, hooks, work, part,
                               [&](Index c0, Index l) {
    Mat fl;
    Vec num(k), den(k), y, x, tmp;
    Eigen::ArrayXd ys;
    double chunk_div = 0.0;
    for (Index o = c0; o < c0 + l; ++o) {
      const Index p0 = outer[o], np = outer[o + 1] - p0;
      auto zo = z.col(o);
      if (beta == 1.0) {
        fl.resize(np, k);
        y.resize(np);
        for (Index q = 0; q < np; ++q)
          fl.row(q) = ft.col(inner[p0 + q]).transpose();
        if (np > 0) {
          y.noalias() = fl * zo;
          tmp = Eigen::Map<const Vec>(val + p0, np).array() /
                y.array().max(1e-300);
          num.noalias() = fl.transpose() * tmp;
        } else {
          num.setZero();
        }
        den = fsum;
      } else if (beta == 2.0) {
        num.setZero();
        for (Index q = 0; q < np; ++q)
          num.noalias() += val[p0 + q] * ft.col(inner[p0 + q]);
        den.noalias() = g * zo;
      } else {
        x.setZero(mi);
        for (Index q = 0; q < np; ++q) x[inner[p0 + q]] = val[p0 + q];
        y.noalias() = ft.transpose() * zo;
        // as beta_update(): a zero x adds nothing to the numerator, and a
        // y that underflowed counts as 1e-300
        ys = y.array().max(1e-300);
        tmp = (x.array() == 0.0).select(0.0, x.array() * ys.pow(beta - 2.0));
        num.noalias() = ft * tmp;
        tmp = ys.pow(beta - 1.0);
        den.noalias() = ft * tmp;
      }
      for (Index t = 0; t < k; ++t) {
        const double d = den[t] + (l2 ? pen[t] * zo[t] : pen[t]);
        if (zo[t] == 0.0 || !(d > 0.0)) continue;
        const double r = num[t] / d;
        zo[t] *= e == 1.0 ? r : (e == 0.5 ? std::sqrt(r) : std::pow(r, e));
      }
      if (!want_div) continue;
      if (beta == 1.0) {
        double s = fsum.dot(zo);
        if (np > 0) {
          y.noalias() = fl * zo;
          for (Index q = 0; q < np; ++q)
            s += val[p0 + q] *
                 (std::log(val[p0 + q] / std::max(y[q], 1e-300)) - 1.0);
        }
        chunk_div += s;
      } else if (beta == 2.0) {
        double xx = 0.0;
        for (Index q = 0; q < np; ++q) xx += val[p0 + q] * val[p0 + q];
        chunk_div += 0.5 * xx - zo.dot(num) + 0.5 * zo.dot(g * zo);
      } else {
        y.noalias() = ft.transpose() * zo;
        double s = 0.0;
        for (Index i = 0; i < mi; ++i) s += beta_div(x[i], y[i], beta);
        chunk_div += s;
      }
    }
    return chunk_div;
  });
  div = ordered_sum(part);
  return done;
}

}  // namespace detail

/// Fits X ~ W H with automatic relevance determination from w (m x k) and
/// h (k x n). An iteration updates W, then H, then lambda.
template <class Hooks = NullHooks>
ArdResult nmf_ard(const CountData& c, const Mat& w, const Mat& h,
                  const ArdParams& p, Hooks& hooks) {
  const Index m = c.m, n = c.n, k = w.cols();
  require(w.rows() == m && h.rows() == k && h.cols() == n,
          "nmf_ard: W must be m x k and H k x n");
  require(p.max_iter >= 0 && p.tol >= 0 && p.threads >= 1,
          "nmf_ard: params");
  require(p.a > (p.prior == ArdPrior::l1 ? 2.0 : 1.0) && p.b > 0.0 &&
              p.phi > 0.0 && std::isfinite(p.b) && std::isfinite(p.phi),
          "nmf_ard: prior");
  require(p.beta > 0.0 || c.by_col.nonZeros() == static_cast<Index>(m) * n,
          "nmf_ard: beta <= 0 needs positive data");
  require(!c.weighted(), "nmf_ard: no entry weights");
  const Parallel par(p.threads);
  const double md = static_cast<double>(m), nd = static_cast<double>(n);
  const double cst =
      p.prior == ArdPrior::l1 ? md + nd + p.a + 1.0 : 0.5 * (md + nd) + p.a + 1.0;
  ArdResult r;
  r.floor = p.b / cst;
  Mat wt = w.transpose();
  r.H = h;
  Vec lambda = (detail::ard_norms(wt, r.H, p.prior).array() + p.b) / cst;
  Mat wt_prev, h_prev;
  Vec lambda_prev;
  const double konst = static_cast<double>(k) * cst * (1.0 - std::log(cst));
  auto step = [&](int) {
    StepOutcome o;
    wt_prev = wt;
    h_prev = r.H;
    lambda_prev = lambda;
    const Vec pen = p.phi * lambda.cwiseInverse();
    double div = 0.0;
    if (!detail::ard_update(wt, r.H, c.by_row, p, pen, par, &hooks, div,
                            false) ||
        !detail::ard_update(r.H, wt, c.by_col, p, pen, par, &hooks, div,
                            true)) {
      o.interrupted = true;
      return o;
    }
    const Vec f = detail::ard_norms(wt, r.H, p.prior);
    lambda = (f.array() + p.b) / cst;
    double change = 0.0;
    for (Index t = 0; t < k; ++t)
      change = std::max(change, std::abs(lambda[t] - lambda_prev[t]) / lambda[t]);
    o.loss = div / p.phi + cst * (f.array() + p.b).log().sum() + konst;
    o.finite = std::isfinite(div) && lambda.allFinite();
    if (o.finite) {
      r.divergence.push_back(div);
      r.lambda_trace.insert(r.lambda_trace.end(), lambda.data(),
                            lambda.data() + k);
    }
    o.converged = change <= p.tol;
    return o;
  };
  drive(p.max_iter, hooks, r, step, [&]() {
    wt = wt_prev;
    r.H = h_prev;
    lambda = lambda_prev;
  });
  // an interrupted step traced nothing; keep the traces to its iterations
  r.divergence.resize(static_cast<size_t>(r.iterations));
  r.lambda_trace.resize(static_cast<size_t>(r.iterations * k));
  r.lambda = lambda;
  r.W = wt.transpose();
  return r;
}

}  // namespace nmfkit
