// NMF under the beta-divergences (Fevotte & Idier, Neural Computation 2011):
// X ~ W H minimising sum_ij a_ij d_beta(x_ij | (WH)_ij), beta = 1 the
// generalised Kullback-Leibler divergence (Poisson likelihood), 0
// Itakura-Saito, with entry weights a (1, or a base weight plus exceptions as
// in masked.hpp), L1/L2 penalties and fixed components.
//
// Under KL the zero entries of X enter only through the linear term
// sum_ij a_ij (WH)_ij, which is base * colsum(W) . rowsum(H) plus the
// exceptions: a pass costs O(nnz k), never O(m n k), and no m x n buffer is
// made. Two solvers:
//  - cd: coordinate descent (Hsieh & Dhillon, KDD 2011; Lin & Boutros 2020's
//    sequential coordinate descent), each coordinate one safeguarded Newton
//    step (see detail::kl_coordinate), `inner` passes per factor update;
//  - mu: multiplicative updates with the exponent gamma(beta) of Fevotte &
//    Idier, under which the loss never rises, for every beta.
// Other betas than 1 need (WH)_ij at every entry: they run column by column
// with one column of WH in memory at a time (O(m n k) flops per pass).
// Ang & Gillis (2019) extrapolation between iterations, with its restart
// rule (extrapolate.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "data.hpp"
#include "divergence_kernels.hpp"
#include "driver.hpp"
#include "extrapolate.hpp"
#include "hooks.hpp"
#include "loss.hpp"
#include "parallel.hpp"
#include "params.hpp"
#include "types.hpp"
#include "weights.hpp"

namespace nmfkit {

/// What nmf_divergence() returns: the Result with loss the trace of
/// D(X | WH) / D(X | baseline), the baseline the rank-one independence
/// model r c' / T (the KL fit of rank one), and the divergence itself.
struct DivResult : Result {
  double divergence = 0.0;  // sum a d(x | WH), penalties excluded
  double objective = 0.0;   // divergence + penalties
  double baseline = 0.0;    // sum a d(x | r c' / T)
};

/// The nonzero entries of X compressed twice: by column (for the H update)
/// and by row (for the W update), with their entry weights. Built the same
/// way from dense and from sparse storage, so both give the same bits.
/// Entries of weight 0 are left out.
struct CountData {
  Index m = 0, n = 0;
  SpMat by_col;       // m x n, the x values
  SpMat by_row;       // n x m, its transpose
  Vec w_col, w_row;   // weights of the stored entries (empty: all 1)
  double base = 1.0;  // weight of the unlisted entries (linear term)
  Exceptions ex_col, ex_row;  // weight exceptions (a - base), listed entries
  double sq_norm = 0.0;       // sum x^2 of the stored entries
  bool weighted() const { return w_col.size() > 0; }
};

namespace detail {

/// Fills the views of `c` from a compressed-column SpT (stored zeros
/// dropped) and the weights `a` (null: every entry weighs 1). With
/// `hooks`, the host may interrupt between groups of 64 columns of the
/// weighted copy and between its stages (the set-up of a masked fit of
/// millions of entries takes seconds): then returns false and `c` is
/// incomplete.
template <class SpT, class Hooks = NullHooks>
bool fill_count_data(CountData& c, const SpT& x, const EntryWeights* a,
                     int threads, Hooks* hooks = nullptr) {
  c.m = x.rows();
  c.n = x.cols();
  auto stop = [&]() { return hooks != nullptr && hooks->check_interrupt(); };
  std::vector<Eigen::Triplet<double, int>> keep;
  const bool has_zeros = [&] {
    const double* v = x.valuePtr();
    for (Index p = 0; p < x.nonZeros(); ++p)
      if (v[p] == 0.0) return true;
    return false;
  }();
  if (a == nullptr && !has_zeros) {
    c.by_col = x;
  } else {
    // weights of the stored entries: base, or base + delta where listed
    std::vector<double> wv;
    keep.reserve(static_cast<size_t>(x.nonZeros()));
    std::vector<std::pair<Index, double>> listed;
    for (Index j = 0; j < x.outerSize(); ++j) {
      if (hooks != nullptr && j % 64 == 0 && hooks->check_interrupt())
        return false;
      listed.clear();
      if (a != nullptr)
        for (Index e = a->by_col.start[j]; e < a->by_col.start[j + 1]; ++e)
          listed.emplace_back(a->by_col.inner[e], a->by_col.delta[e]);
      std::sort(listed.begin(), listed.end());
      size_t q = 0;
      for (typename SpT::InnerIterator it(x, j); it; ++it) {
        if (it.value() == 0.0) continue;
        double w = a == nullptr ? 1.0 : a->base;
        while (q < listed.size() && listed[q].first < it.row()) ++q;
        if (q < listed.size() && listed[q].first == it.row())
          w += listed[q].second;
        if (w <= 0.0) continue;
        keep.emplace_back(static_cast<int>(it.row()), static_cast<int>(j),
                          it.value());
        wv.push_back(w);
      }
    }
    if (stop()) return false;
    c.by_col.resize(c.m, c.n);
    c.by_col.setFromTriplets(keep.begin(), keep.end());
    if (stop()) return false;
    if (a != nullptr) {
      c.w_col = Eigen::Map<const Vec>(wv.data(), static_cast<Index>(wv.size()));
      // the same weights in the row-compressed order
      SpMat wm(c.m, c.n);
      for (size_t t = 0; t < keep.size(); ++t)
        keep[t] = Eigen::Triplet<double, int>(keep[t].row(), keep[t].col(),
                                              wv[t]);
      wm.setFromTriplets(keep.begin(), keep.end());
      if (stop()) return false;
      const SpMat wt = transpose_sparse(wm, threads);
      c.w_row = Eigen::Map<const Vec>(wt.valuePtr(), wt.nonZeros());
      c.base = a->base;
      c.ex_col = a->by_col;
      c.ex_row = a->by_row;
    }
  }
  c.by_col.makeCompressed();
  if (stop()) return false;
  c.by_row = transpose_sparse(c.by_col, threads);
  c.sq_norm = c.by_col.squaredNorm();
  return !stop();
}

}  // namespace detail

/// CountData of dense data: its nonzero entries (the same arrays the
/// sparse copy of the matrix gives).
inline CountData count_data(const DenseData& x, const EntryWeights* a,
                            int threads) {
  const SpMat s = x.dense().sparseView(0.0, 0.0);
  CountData c;
  detail::fill_count_data(c, s, a, threads);
  return c;
}

/// CountData of sparse data.
template <class SpT>
CountData count_data(const SparseData<SpT>& x, const EntryWeights* a,
                     int threads) {
  CountData c;
  detail::fill_count_data(c, x.sparse(), a, threads);
  return c;
}

/// Sides of the H update (columns against W) and the W update (rows
/// against H'), with the loss's absolute penalties (absolute_penalty()).
inline detail::Side side_h(const CountData& c, const NmfParams& p) {
  const Penalty a =
      absolute_penalty(p.pen_h, p.beta, data_rms(c.sq_norm, c.m, c.n), c.m);
  return detail::Side{&c.by_col, &c.w_col, &c.ex_col, c.base, p.fixed_h,
                      a.l1, a.l2};
}
inline detail::Side side_w(const CountData& c, const NmfParams& p) {
  const Penalty a =
      absolute_penalty(p.pen_w, p.beta, data_rms(c.sq_norm, c.m, c.n), c.n);
  return detail::Side{&c.by_row, &c.w_row, &c.ex_row, c.base, p.fixed_w,
                      a.l1, a.l2};
}

/// sum a d_beta(x | W H) (no penalties).
inline double divergence(const CountData& c, const Mat& w, const Mat& h,
                         double beta, int threads) {
  NmfParams p;
  p.beta = beta;
  const Mat wt = w.transpose();
  return detail::divergence_of(h, wt, side_h(c, p), beta, Parallel(threads));
}

/// The number of entries x != 0 of X (stored zeros do not count) where W H
/// is not positive: a start there has infinite KL divergence. Read from
/// the data as they are (the count layout's copies take longer than the
/// check); with `hooks`, the host may interrupt between groups of 64
/// columns: then returns -1.
template <class Hooks = NullHooks>
Index zero_fits(const DenseData& x, const Mat& w, const Mat& h,
                Hooks* hooks = nullptr) {
  const auto& d = x.dense();
  Index bad = 0;
  for (Index j = 0; j < d.cols(); ++j) {
    if (hooks != nullptr && j % 64 == 0 && hooks->check_interrupt())
      return -1;
    for (Index i = 0; i < d.rows(); ++i)
      if (d(i, j) != 0.0 && !(w.row(i).dot(h.col(j)) > 0.0)) ++bad;
  }
  return bad;
}
template <class SpT, class Hooks = NullHooks>
Index zero_fits(const SparseData<SpT>& x, const Mat& w, const Mat& h,
                Hooks* hooks = nullptr) {
  const SpT& s = x.sparse();
  Index bad = 0;
  for (Index j = 0; j < s.outerSize(); ++j) {
    if (hooks != nullptr && j % 64 == 0 && hooks->check_interrupt())
      return -1;
    for (typename SpT::InnerIterator it(s, j); it; ++it)
      if (it.value() != 0.0 && !(w.row(it.index()).dot(h.col(j)) > 0.0))
        ++bad;
  }
  return bad;
}

/// Fits X ~ W H under d_beta from w (m x k) and h (k x n). An outer
/// iteration updates W, then H; loss[i] is D(X | WH) / D(X | r c'/T) after
/// iteration i + 1.
template <class Hooks = NullHooks>
DivResult nmf_divergence(const CountData& c, const Mat& w, const Mat& h,
                         const NmfParams& p, Hooks& hooks) {
  const Index m = c.m, n = c.n, k = w.cols();
  require(w.rows() == m && h.rows() == k && h.cols() == n,
          "nmf_divergence: W must be m x k and H k x n");
  require(p.max_iter >= 0 && p.tol >= 0 && p.threads >= 1 && p.inner >= 1,
          "nmf_divergence: params");
  require(p.method == Method::mu || (p.method == Method::cd && p.beta == 1.0),
          "nmf_divergence: method mu, or cd at beta = 1");
  require(p.fixed_w >= 0 && p.fixed_w <= k && p.fixed_h >= 0 &&
              p.fixed_h <= k,
          "nmf_divergence: fixed components");
  const Parallel par(p.threads);
  const detail::Side sh = side_h(c, p), sw = side_w(c, p);
  DivResult r;
  // the baseline: the rank-one independence model r c' / T
  {
    const Vec rs = [&] {
      Vec s = Vec::Zero(m);
      for (Index j = 0; j < n; ++j)
        for (SpMat::InnerIterator it(c.by_col, j); it; ++it)
          s[it.index()] += it.value();
      return s;
    }();
    const double total = rs.sum();
    Mat h1(1, n);
    for (Index j = 0; j < n; ++j) h1(0, j) = c.by_col.col(j).sum();
    if (total > 0.0) h1 /= total;
    const Mat w1t = rs.transpose();
    r.baseline = detail::divergence_of(h1, w1t, sh, p.beta, par);
  }
  const double pw_l1 = sw.l1, pw_l2 = sw.l2, ph_l1 = sh.l1, ph_l2 = sh.l2;
  auto penalty = [&](const Mat& wt, const Mat& hh) {
    double s = 0.0;
    if (pw_l1 != 0.0) s += pw_l1 * wt.bottomRows(k - p.fixed_w).sum();
    if (pw_l2 != 0.0)
      s += 0.5 * pw_l2 * wt.bottomRows(k - p.fixed_w).squaredNorm();
    if (ph_l1 != 0.0) s += ph_l1 * hh.bottomRows(k - p.fixed_h).sum();
    if (ph_l2 != 0.0)
      s += 0.5 * ph_l2 * hh.bottomRows(k - p.fixed_h).squaredNorm();
    return s;
  };
  auto rel = [&](double d) { return r.baseline > 0.0 ? d / r.baseline : d; };

  Mat wt = w.transpose();  // k x m: each column a row of W
  r.H = h;
  Mat wt_prev, h_prev;
  detail::PlainIterate plain;
  if (p.extrapolate) plain.start(wt, r.H);
  detail::Extrapolator ex(p.tol,
                          detail::divergence_extrapolation(p.beta, p.method));
  RelativeTest test(p.tol, p.reference_violation);
  double last_div = 0.0;
  auto push = [&](const Mat& z, const Mat& old, Mat& out) {
    detail::push_positive(z, old, ex.beta(), p.threads, out);
  };
  // z updated against ft (the other factor, one column per line of z's
  // problems); the W half needs no divergence
  auto half = [&](Mat& z, const Mat& ft, const detail::Side& s, double& viol,
                  double& div, bool want_div) {
    if (p.beta == 1.0)
      return detail::kl_update(z, ft, s, p.method, p.inner, par, &hooks, viol,
                               div, want_div);
    return detail::beta_update(z, ft, s, p.beta, p.inner, par, &hooks, viol,
                               div);
  };
  auto step = [&](int) {
    StepOutcome o;
    detail::copy_chunks(wt, wt_prev, p.threads);
    detail::copy_chunks(r.H, h_prev, p.threads);
    double viol = 0.0, vw = 0.0, vh = 0.0, div = 0.0;
    if (p.update_w && !half(wt, r.H, sw, vw, div, false)) {
      o.interrupted = true;
      return o;
    }
    if (!half(r.H, wt, sh, vh, div, true)) {
      o.interrupted = true;
      return o;
    }
    viol = vw + vh;
    last_div = div;
    const double obj = div + penalty(wt, r.H);
    o.loss = rel(div);
    o.finite = std::isfinite(viol) && std::isfinite(obj);
    if (!p.extrapolate || !o.finite) {
      r.objective = obj;
      o.converged = o.finite && test(viol);
      return o;
    }
    const detail::Verdict v = ex.judge(obj, viol);
    if (v == detail::Verdict::restart) {
      plain.restore(wt, r.H);
      o.loss = rel(r.divergence);
      return o;
    }
    r.divergence = div;
    r.objective = obj;
    o.converged = test(viol);
    if (v == detail::Verdict::keep) {
      plain.keep(wt, r.H, p.threads);
      return o;
    }
    plain.push(wt, r.H, push, push);
    return o;
  };
  detail::drive_fit(p.max_iter, p.extrapolate, hooks, r, test, step, wt,
                    wt_prev, h_prev, plain.wt, plain.h);
  if (!p.extrapolate) r.divergence = last_div;
  detail::transpose_chunks(wt, r.W, p.threads);
  if (r.status == Status::interrupted) {
    // the host stopped the fit and discards it: no further pass over the
    // data (seconds on large data, with no interrupt to poll)
    r.divergence = r.objective = NAN;
  } else if (r.iterations == 0 || r.status == Status::numerical_error) {
    // the trace's last value may not be the returned iterate's
    r.divergence = divergence(c, r.W, r.H, p.beta, p.threads);
    r.objective = r.divergence + penalty(wt, r.H);
  }
  return r;
}

}  // namespace nmfkit
