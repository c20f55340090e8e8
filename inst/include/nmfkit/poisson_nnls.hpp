// Exact Poisson (KL) nonnegative regression of data columns on a fixed
// basis: min_{h >= 0} sum_i mu_i - x_i log mu_i with mu = W h, by projected
// Newton steps with an Armijo search along the projection arc (Bertsekas,
// "Projected Newton methods for optimization problems with simple
// constraints", SIAM J. Control Optim. 20(2), 1982). Coordinate descent
// (the engine's KL update with W fixed) converges linearly, and slowly when
// the basis' columns are nearly collinear, as reference signatures are; the
// Newton iteration converges quadratically once the zero pattern is found,
// in a few dozen steps at most. The objective is convex in h, so the
// minimiser's value is unique.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

namespace detail {

/// f(h) = sum_k wsum_k h_k - sum_i x_i log(mu_i / x_i) over the column's stored
/// entries (rows `ri`, values `xv`), mu = W h; +Inf when some mu_i <= 0 at
/// x_i > 0. `mu` receives W h on those rows.
inline double poisson_objective(const Mat& w, const Vec& wsum,
                                const int* ri, const double* xv, Index nnz,
                                const Vec& h, Vec& mu) {
  double f = wsum.dot(h);
  for (Index t = 0; t < nnz; ++t) {
    const double m = w.row(ri[t]).dot(h);
    mu[t] = m;
    if (xv[t] == 0.0) continue;  // a stored zero (sparse data may keep them)
    if (!(m > 0.0)) return std::numeric_limits<double>::infinity();
    // log(mu / x), not log(mu): the terms then scale with the data
    // exactly (f(c x, c h) = c f(x, h)), so the search takes the same
    // steps at any scale
    f -= xv[t] * std::log(m / xv[t]);
  }
  return f;
}

/// One column: h (k) starts positive wherever it may (mu > 0 on every
/// stored entry) and ends at the minimiser. Stops when every projected
/// gradient entry is below tol times its column sum of W (gradients are
/// free of the data's scale: d f / d h_k = wsum_k - sum_i W_ik x_i / mu_i),
/// when no step lowers f any more (rounding), or after max_iter steps.
/// Returns the steps taken.
inline int poisson_nnls_column(const Mat& w, const Vec& wsum, const int* ri,
                               const double* xv, Index nnz, Eigen::Ref<Vec> h,
                               double tol, int max_iter) {
  const Index k = w.cols();
  Vec mu(nnz), mu_new(nnz), g(k), h_new(k), d(k), r(nnz), hdiag(k);
  Eigen::Matrix<bool, Eigen::Dynamic, 1> is_free(k);
  // a column of W that is zero cannot be fitted: its coefficient is 0
  for (Index c = 0; c < k; ++c)
    if (!(wsum[c] > 0.0)) h[c] = 0.0;
  double f = poisson_objective(w, wsum, ri, xv, nnz, h, mu);
  double lambda = 1e-8;
  // the decrease that counts as rounding is relative to the column's total
  // (f's differences scale with the data; f itself gains a constant)
  double xsum = 0.0;
  for (Index t = 0; t < nnz; ++t) xsum += xv[t];
  if (!std::isfinite(f)) return 0;
  for (int it = 1; it <= max_iter; ++it) {
    for (Index t = 0; t < nnz; ++t) r[t] = xv[t] == 0.0 ? 0.0 : xv[t] / mu[t];
    g = wsum;
    for (Index t = 0; t < nnz; ++t) g.noalias() -= r[t] * w.row(ri[t]).transpose();
    // projected gradient: stop when it is small against each wsum_k
    double pg = 0.0;
    for (Index c = 0; c < k; ++c) {
      const double pgc = h[c] > 0.0 ? g[c] : std::min(g[c], 0.0);
      if (wsum[c] > 0.0) pg = std::max(pg, std::abs(pgc) / wsum[c]);
    }
    if (pg <= tol) return it - 1;
    // binding set: within eps of the bound with the gradient pushing
    // outward; every other coordinate takes the Newton step. Bertsekas'
    // eps = min(eps0, ||h - P(h - D g)||) keeps the projected arc a descent
    // path and shrinks to 0 at the solution; D is the inverse of the
    // Hessian's diagonal, so both terms are in the units of h and scaling
    // the data scales eps (eps0: 1 % of the largest coefficient)
    double gap = 0.0;
    for (Index c = 0; c < k; ++c) {
      double& hcc = hdiag[c];
      hcc = 0.0;
      for (Index t = 0; t < nnz; ++t) {
        const double wic = w(ri[t], c);
        if (r[t] > 0.0) hcc += wic * wic * r[t] / mu[t];
      }
      if (hcc > 0.0) gap += std::abs(h[c] - std::max(h[c] - g[c] / hcc, 0.0));
    }
    const double eps = std::min(1e-2 * std::max(h.maxCoeff(), 0.0), gap);
    Index nf = 0;
    for (Index c = 0; c < k; ++c) {
      is_free[c] = !(h[c] <= eps && g[c] > 0.0) && wsum[c] > 0.0;
      nf += is_free[c];
    }
    std::vector<Index> idx;
    idx.reserve(static_cast<size_t>(nf));
    for (Index c = 0; c < k; ++c)
      if (is_free[c]) idx.push_back(c);
    Mat hess = Mat::Zero(nf, nf);
    Vec gf(nf);
    for (Index a = 0; a < nf; ++a) gf[a] = g[idx[static_cast<size_t>(a)]];
    Vec wr(nf);
    for (Index t = 0; t < nnz; ++t) {
      if (!(r[t] > 0.0)) continue;  // stored zeros add no curvature
      const double s = r[t] / mu[t];
      for (Index a = 0; a < nf; ++a) wr[a] = w(ri[t], idx[static_cast<size_t>(a)]);
      hess.selfadjointView<Eigen::Lower>().rankUpdate(wr, s);
    }
    // Levenberg-Marquardt damping of the free block: lambda times its
    // diagonal (plus a floor for coordinates without curvature, whose
    // column is zero on the stored rows). A column with fewer stored
    // entries than free coefficients has a singular Hessian; the damping
    // turns its step toward the scaled gradient, and adapts: halved after
    // a full step, raised tenfold when the search had to shorten it.
    const double floor_c =
        1e-13 * std::max(nf > 0 ? hess.diagonal().maxCoeff() : 0.0,
                         std::numeric_limits<double>::min());
    bool accepted = false;
    for (int tries = 0; tries < 30 && !accepted; ++tries) {
      Mat damped = hess;
      for (Index a = 0; a < nf; ++a)
        damped(a, a) += lambda * hess(a, a) + floor_c;
      const Vec df = nf > 0 ? Vec(damped.ldlt().solve(-gf)) : Vec();
      d.setZero();
      for (Index a = 0; a < nf; ++a) d[idx[static_cast<size_t>(a)]] = df[a];
      // binding coordinates: a diagonally scaled (and damped) gradient
      // step toward the bound, which the projection stops at 0
      for (Index c = 0; c < k; ++c) {
        if (is_free[c] || !(wsum[c] > 0.0)) continue;
        d[c] = hdiag[c] > 0.0 ? -g[c] / (hdiag[c] * (1.0 + lambda)) : -h[c];
      }
      // Armijo along the projection arc h(a) = max(h + a d, 0)
      double alpha = 1.0;
      for (int ls = 0; ls < 8; ++ls, alpha *= 0.25) {
        for (Index c = 0; c < k; ++c)
          h_new[c] = std::max(h[c] + alpha * d[c], 0.0);
        const double f_new =
            poisson_objective(w, wsum, ri, xv, nnz, h_new, mu_new);
        double pred = 0.0;
        for (Index c = 0; c < k; ++c) pred += g[c] * (h[c] - h_new[c]);
        if (std::isfinite(f_new) && f_new < f && f - f_new >= 1e-4 * pred) {
          accepted = true;
          // converged at rounding level: a full, nearly undamped Newton
          // step that no longer lowers f (a short or damped step that
          // gains little says nothing about the minimum)
          const bool flat = alpha == 1.0 && lambda < 1e-3 &&
                            f - f_new <= 1e-15 * xsum;
          h = h_new;
          mu.swap(mu_new);
          f = f_new;
          lambda = alpha == 1.0 ? std::max(lambda * 0.5, 1e-12)
                                : std::min(lambda * 10.0, 1e12);
          if (flat) return it;
          break;
        }
      }
      if (!accepted) lambda = std::min(std::max(lambda, 1e-6) * 100.0, 1e16);
    }
    if (!accepted) return it;  // no decrease left at this precision
  }
  return max_iter;
}

}  // namespace detail

/// Poisson NNLS of every column of the sparse matrix x (m x n, compressed
/// columns) on W (m x k), from H (k x n, entries positive where a column may
/// be fitted). Columns are independent and run in parallel.hpp's fixed
/// chunks: 1 and N threads give the same bits. Returns the most steps any
/// column took.
template <class SpT>
int poisson_nnls(const SpT& x, const Mat& w, Mat& h, double tol,
                 int max_iter, int threads) {
  require(x.rows() == w.rows() && h.rows() == w.cols() && h.cols() == x.cols(),
          "poisson_nnls: x m x n, W m x k, H k x n");
  const Vec wsum = w.colwise().sum().transpose();
  std::vector<int> steps(static_cast<size_t>(x.cols()), 0);
  const double work = 20.0 * static_cast<double>(x.nonZeros() + x.cols()) *
                      static_cast<double>(w.cols() * w.cols());
  Parallel(threads).for_chunks(
      x.cols(),
      [&](Index c0, Index len) {
        for (Index j = c0; j < c0 + len; ++j) {
          const Index p0 = x.outerIndexPtr()[j];
          const Index nnz = x.outerIndexPtr()[j + 1] - p0;
          Vec hj = h.col(j);
          steps[static_cast<size_t>(j)] = detail::poisson_nnls_column(
              w, wsum, x.innerIndexPtr() + p0, x.valuePtr() + p0, nnz, hj,
              tol, max_iter);
          h.col(j) = hj;
        }
      },
      work);
  return steps.empty() ? 0 : *std::max_element(steps.begin(), steps.end());
}

}  // namespace nmfkit
