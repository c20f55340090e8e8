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
// rule, as in nmf.hpp.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "data.hpp"
#include "driver.hpp"
#include "hooks.hpp"
#include "masked.hpp"
#include "nmf.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// cd: coordinate descent with Newton steps (beta = 1 only); mu:
/// multiplicative updates (every beta).
enum class DivMethod { cd, mu };

/// L1 and L2 weights on one factor, relative to the data (see DivParams).
struct FactorPenalty {
  double l1 = 0.0, l2 = 0.0;
};

/// Settings of nmf_divergence().
struct DivParams {
  double beta = 1.0;
  DivMethod method = DivMethod::cd;
  int max_iter = 200;
  double tol = 1e-4;  // projected-gradient violation / first <= tol
  int threads = 1;
  /// coordinate passes per factor update (cd); multiplicative passes (mu)
  int inner = 1;
  bool extrapolate = false;
  /// Penalties s1 * l1 * ||Z||_1 + s2 * l2 * ||Z||_F^2 / 2 on each factor,
  /// s1 = len r^(beta - 1/2), s2 = len r^(beta - 1) (see
  /// absolute_penalties()): relative weights, so fitting c X runs the same
  /// iterations (the loss scales as c^beta and each factor as c^(1/2)).
  FactorPenalty pen_w, pen_h;
  /// The first fixed_w columns of W (rows of H) are never changed.
  Index fixed_w = 0, fixed_h = 0;
  /// false: W is not updated at all (projection of the columns of X on a
  /// fixed basis: predict()).
  bool update_w = true;
};

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
/// dropped) and the weights `a` (null: every entry weighs 1).
template <class SpT>
void fill_count_data(CountData& c, const SpT& x, const EntryWeights* a,
                     int threads) {
  c.m = x.rows();
  c.n = x.cols();
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
    c.by_col.resize(c.m, c.n);
    c.by_col.setFromTriplets(keep.begin(), keep.end());
    if (a != nullptr) {
      c.w_col = Eigen::Map<const Vec>(wv.data(), static_cast<Index>(wv.size()));
      // the same weights in the row-compressed order
      SpMat wm(c.m, c.n);
      for (size_t t = 0; t < keep.size(); ++t)
        keep[t] = Eigen::Triplet<double, int>(keep[t].row(), keep[t].col(),
                                              wv[t]);
      wm.setFromTriplets(keep.begin(), keep.end());
      const SpMat wt = transpose_sparse(wm, threads);
      c.w_row = Eigen::Map<const Vec>(wt.valuePtr(), wt.nonZeros());
      c.base = a->base;
      c.ex_col = a->by_col;
      c.ex_row = a->by_row;
    }
  }
  c.by_col.makeCompressed();
  c.by_row = transpose_sparse(c.by_col, threads);
  c.sq_norm = c.by_col.squaredNorm();
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

namespace detail {

/// The exponent of Fevotte & Idier's multiplicative update under which the
/// beta-divergence never rises (their Table / Theorem: 1 / (2 - beta) below
/// 1, 1 on [1, 2], 1 / (beta - 1) above 2).
inline double mu_exponent(double beta) {
  if (beta < 1.0) return 1.0 / (2.0 - beta);
  if (beta > 2.0) return 1.0 / (beta - 1.0);
  return 1.0;
}

/// d_beta(x | y) for one entry (x >= 0, y > 0; x > 0 when beta <= 0).
inline double beta_div(double x, double y, double beta) {
  if (beta == 1.0) return (x > 0.0 ? x * std::log(x / y) : 0.0) - x + y;
  if (beta == 0.0) return x / y - std::log(x / y) - 1.0;
  // d(0 | y) = y^beta / beta, also at a y that underflowed to 0 (where the
  // general form's 0 * 0^(beta-1) is NaN for beta < 1)
  if (x == 0.0) return std::pow(y, beta) / beta;
  return (std::pow(x, beta) + (beta - 1.0) * std::pow(y, beta) -
          beta * x * std::pow(y, beta - 1.0)) /
         (beta * (beta - 1.0));
}

/// The two factors from the side of one update: z (k x n_outer) is updated
/// against f (n_inner x k, the other factor with its k columns contiguous),
/// the data compressed by the outer index (view, weights) and the weight
/// exceptions listed by outer index.
struct Side {
  const SpMat* view;
  const Vec* weight;  // empty: all 1
  const Exceptions* ex;
  double base;
  Index fixed;
  double l1, l2;  // absolute penalties of z
};

/// Linear coefficients of column o: sum_i a_io f_i (k-vector), i.e. base *
/// the row sums of ft plus delta_e ft(:, inner e) over the exceptions of o.
inline void linear_terms(const Side& s, const Mat& ft, const Vec& fsum,
                         Index o, Vec& lin) {
  lin = s.base * fsum;
  if (s.ex == nullptr || s.ex->start.empty()) return;
  for (Index e = s.ex->start[o]; e < s.ex->start[o + 1]; ++e)
    lin.noalias() += s.ex->delta[e] * ft.col(s.ex->inner[e]);
}

/// The minimiser of the MM surrogate of a coordinate's KL problem,
/// a z + l2 z^2 / 2 - s z0 log z (Jensen's bound on the log term at z0):
/// z0 s / a without L2, else the positive root of l2 z^2 + a z - s z0,
/// written without cancellation. Never raises the coordinate's loss.
inline double mm_step(double z0, double a, double l2, double s) {
  if (l2 == 0.0) return a > 0.0 ? z0 * s / a : z0;
  return 2.0 * s * z0 / (a + std::sqrt(a * a + 4.0 * l2 * s * z0));
}

/// One coordinate of a column's KL problem,
///   phi(z) = lin z + l1 z + l2 z^2 / 2 - sum_p ax_p log(y_p + fl_p (z - z0)),
/// from z0 with y_p > 0 where ax_p > 0: one step. phi' is concave, so
/// Newton's step from below the optimum never passes it, and from above
/// lands below it, possibly outside the domain; the multiplicative (MM)
/// step never raises phi but crawls near the optimum, and Newton's step
/// alone crawls near the barrier (from z near 0 it only doubles z). So:
/// from below, the larger of Newton and MM; from above, Newton when it
/// stays positive (or MM if larger), else Newton's step in log z (always
/// positive, quadratic near the optimum) kept between the MM point and z0.
/// Both rules keep phi no higher: phi is convex, every point between the
/// MM point and z0 is no worse than z0, and points between z0 and the
/// optimum are better. z = 0 is taken when Newton asks for it and
/// phi'(0) >= 0 with every y_p still positive there, so components can
/// vanish exactly. Returns the new z; `grad` gets phi'(z0).
/// s = sum_p r_p fl_p and h = sum_p r_p fl_p^2 / yp_p with yp_p = y_p + fl_p
/// dz and r_p = ax_p / yp_p: one division per entry, four independent
/// sums (a fixed order, so the same bits on any storage and thread count).
inline void kl_sums(const double* ax, const double* fl, const double* y,
                    double dz, Index len, double& s, double& h) {
  double s4[4] = {0.0, 0.0, 0.0, 0.0}, h4[4] = {0.0, 0.0, 0.0, 0.0};
  Index p = 0;
  auto term = [&](Index q, int lane) {
    const double yp = dz == 0.0 ? y[q] : y[q] + fl[q] * dz;
    const double inv = 1.0 / yp;
    const double rf = ax[q] * inv * fl[q];
    s4[lane] += rf;
    h4[lane] += rf * fl[q] * inv;
  };
  for (; p + 4 <= len; p += 4) {
    term(p, 0);
    term(p + 1, 1);
    term(p + 2, 2);
    term(p + 3, 3);
  }
  for (int lane = 0; p < len; ++p, ++lane) term(p, lane);
  s = (s4[0] + s4[1]) + (s4[2] + s4[3]);
  h = (h4[0] + h4[1]) + (h4[2] + h4[3]);
}

inline double kl_coordinate(double z0, double lin, double l1, double l2,
                            const double* ax, const double* fl,
                            const double* y, Index len, double& grad) {
  double s, h;
  kl_sums(ax, fl, y, 0.0, len, s, h);
  grad = lin + l1 + l2 * z0 - s;
  h += l2;
  if (grad == 0.0) return z0;
  const double newton = h > 0.0 ? z0 - grad / h : (grad > 0.0 ? 0.0 : z0);
  const double mm = mm_step(z0, lin + l1, l2, s);
  if (grad < 0.0 || newton > 0.0 || z0 == 0.0)
    return std::max(std::max(newton, mm), 0.0);
  // from above, Newton asks for 0 or less: 0 when it is the optimum and
  // keeps y positive
  double d0 = lin + l1;
  bool inside = true;
  for (Index p = 0; p < len; ++p) {
    if (fl[p] == 0.0) continue;
    const double y0 = y[p] - fl[p] * z0;
    if (!(y0 > 0.0)) {
      inside = false;
      break;
    }
    d0 -= ax[p] * fl[p] / y0;
  }
  if (inside && d0 >= 0.0) return 0.0;
  // Newton in u = log z: phi_u' = z phi', phi_u'' = z^2 phi'' + z phi'
  const double logstep = z0 * std::exp(-grad / (h * z0 + grad));
  return std::min(z0, std::max(logstep, mm));
}

/// Chunked loop over the outer indices with a per-chunk partial sum written
/// to `part`, in chunk order; returns false when interrupted.
template <class Hooks, class F>
bool chunk_sums(Index n, const Parallel& par, Hooks* hooks, double work,
                std::vector<double>& part, F&& f) {
  const Index len = chunk_length(n);
  part.assign(static_cast<size_t>((n + len - 1) / len), 0.0);
  return par.for_chunks(n, hooks, [&](Index c0, Index l) {
    part[static_cast<size_t>(c0 / len)] = f(c0, l);
  }, work);
}

/// Kahan-free ordered sum of the parts.
inline double ordered_sum(const std::vector<double>& part) {
  double s = 0.0;
  for (double v : part) s += v;
  return s;
}

/// One KL update of every free entry of z (k x n_outer) given the other
/// factor ft (k x n_inner, one column per inner index): `passes` coordinate passes (cd) or multiplicative passes (mu) per
/// column. Returns the projected-gradient violation at the entry point in
/// `viol` and, in `div`, the divergence's log part sum_p a_p (x_p log(x_p
/// / y_p) - x_p) + lin . z at the end (the column's share of the loss), when
/// `want_div` (its logs cost a third of a pass).
template <class Hooks>
bool kl_update(Mat& z, const Mat& ft, const Side& s, DivMethod method,
               int passes, const Parallel& par, Hooks* hooks, double& viol,
               double& div, bool want_div = true) {
  const Index k = z.rows(), n = z.cols();
  const Vec fsum = ft.rowwise().sum();
  const SpMat& v = *s.view;
  const auto* outer = v.outerIndexPtr();
  const auto* inner = v.innerIndexPtr();
  const double* val = v.valuePtr();
  const bool weighted = s.weight->size() > 0;
  std::vector<double> vpart, dpart;
  const double work =
      (4.0 * passes + 2.0) * static_cast<double>(k) * v.nonZeros();
  const Index len = chunk_length(n);
  dpart.assign(static_cast<size_t>((n + len - 1) / len), 0.0);
  const bool done = chunk_sums(n, par, hooks, work, vpart,
                               [&](Index c0, Index l) {
    Mat fl;        // the column's rows of f, entry-major: fl(p, t)
    Vec ax, y, lin, sv;
    double chunk_viol = 0.0, chunk_div = 0.0;
    for (Index o = c0; o < c0 + l; ++o) {
      const Index p0 = outer[o], np = outer[o + 1] - p0;
      auto zo = z.col(o);
      linear_terms(s, ft, fsum, o, lin);
      fl.resize(np, k);
      ax.resize(np);
      y.resize(np);
      for (Index p = 0; p < np; ++p) {
        fl.row(p) = ft.col(inner[p0 + p]).transpose();
        ax[p] = weighted ? (*s.weight)[p0 + p] * val[p0 + p] : val[p0 + p];
      }
      // a line with no counts: products of empty matrices would hand BLAS
      // null pointers; its problem is linear (every coordinate goes to 0)
      auto fit_y = [&]() {
        if (np > 0) y.noalias() = fl * zo;
      };
      fit_y();
      for (int pass = 1; pass <= passes; ++pass) {
        double pv = 0.0;
        if (method == DivMethod::cd) {
          for (Index t = s.fixed; t < k; ++t) {
            double grad;
            const double next = kl_coordinate(
                zo[t], lin[t], s.l1, s.l2, ax.data(), fl.col(t).data(),
                y.data(), np, grad);
            pv += std::abs(zo[t] == 0.0 ? std::min(0.0, grad) : grad);
            const double d = next - zo[t];
            if (d != 0.0) {
              y.noalias() += d * fl.col(t);
              zo[t] = next;
            }
          }
        } else {
          if (np > 0) {
            sv.noalias() = fl.transpose() * ax.cwiseQuotient(y);
          } else {
            sv.setZero(k);
          }
          for (Index t = s.fixed; t < k; ++t) {
            const double grad = lin[t] + s.l1 + s.l2 * zo[t] - sv[t];
            pv += std::abs(zo[t] == 0.0 ? std::min(0.0, grad) : grad);
            zo[t] = mm_step(zo[t], lin[t] + s.l1, s.l2, sv[t]);
          }
          fit_y();
        }
        if (pass == 1) chunk_viol += pv;
      }
      if (!want_div) continue;
      double d = lin.dot(zo);
      for (Index p = 0; p < np; ++p)
        d += ax[p] * (std::log(val[p0 + p] / y[p]) - 1.0);
      chunk_div += d;
    }
    dpart[static_cast<size_t>(c0 / len)] = chunk_div;
    return chunk_viol;
  });
  viol = ordered_sum(vpart);
  div = ordered_sum(dpart);
  return done;
}

/// One multiplicative update under beta != 1 of every free entry of z
/// given f, column by column with the column of f z in memory (every
/// entry, zeros included: d_beta(0 | y) = y^beta / beta). Returns the
/// violation at the entry point in `viol` and the column's divergence
/// after the update in `div`.
template <class Hooks>
bool beta_update(Mat& z, const Mat& ft, const Side& s, double beta,
                 int passes, const Parallel& par, Hooks* hooks, double& viol,
                 double& div) {
  const Index k = z.rows(), n = z.cols(), mi = ft.cols();
  const SpMat& v = *s.view;
  const double gamma = mu_exponent(beta);
  std::vector<double> vpart, dpart;
  const Index len = chunk_length(n);
  dpart.assign(static_cast<size_t>((n + len - 1) / len), 0.0);
  const double work = (2.0 * passes + 2.0) * static_cast<double>(k) * mi * n;
  const bool done = chunk_sums(n, par, hooks, work, vpart,
                               [&](Index c0, Index l) {
    Vec x(mi), a(mi), y(mi), num(k), den(k), tmp(mi);
    Eigen::ArrayXd ys(mi);
    double chunk_viol = 0.0, chunk_div = 0.0;
    for (Index o = c0; o < c0 + l; ++o) {
      x.setZero();
      a.setConstant(s.base);
      for (SpMat::InnerIterator it(v, o); it; ++it) x[it.index()] = it.value();
      if (s.ex != nullptr && !s.ex->start.empty())
        for (Index e = s.ex->start[o]; e < s.ex->start[o + 1]; ++e)
          a[s.ex->inner[e]] += s.ex->delta[e];
      auto zo = z.col(o);
      y.noalias() = ft.transpose() * zo;
      for (int pass = 1; pass <= passes; ++pass) {
        // numerator f' (a x y^(beta-2)), denominator f' (a y^(beta-1));
        // a zero x adds nothing to the numerator, also where its y has
        // underflowed to 0 (for beta < 2, 0 * 0^(beta-2) would be NaN),
        // and a y that underflowed below 1e-300 counts as 1e-300 (for
        // beta < 1, 0^(beta-1) is infinite): far below any fitted value
        // of data in the core's range (x / 2^e, largest entry at least
        // 2^-200), so it only ever acts after an underflow
        ys = y.array().max(1e-300);
        tmp = (x.array() == 0.0)
                  .select(0.0, a.array() * x.array() * ys.pow(beta - 2.0));
        num.noalias() = ft * tmp;
        tmp = a.array() * ys.pow(beta - 1.0);
        den.noalias() = ft * tmp;
        double pv = 0.0;
        for (Index t = s.fixed; t < k; ++t) {
          const double dt = den[t] + s.l1 + s.l2 * zo[t];
          const double grad = dt - num[t];
          pv += std::abs(zo[t] == 0.0 ? std::min(0.0, grad) : grad);
          if (dt > 0.0) zo[t] *= std::pow(num[t] / dt, gamma);
        }
        y.noalias() = ft.transpose() * zo;
        if (pass == 1) chunk_viol += pv;
      }
      double d = 0.0;
      for (Index i = 0; i < mi; ++i)
        if (a[i] != 0.0) d += a[i] * beta_div(x[i], y[i], beta);
      chunk_div += d;
    }
    dpart[static_cast<size_t>(c0 / len)] = chunk_div;
    return chunk_viol;
  });
  viol = ordered_sum(vpart);
  div = ordered_sum(dpart);
  return done;
}

/// The divergence sum a d_beta(x | ft' z) of the outer columns, with ft' z
/// formed per column (for the start, the baseline and prediction errors).
inline double divergence_of(const Mat& z, const Mat& ft, const Side& s,
                            double beta, const Parallel& par) {
  Mat zc = z;
  Side t = s;
  t.fixed = z.rows();  // nothing moves: one pass only measures
  double viol, div;
  NullHooks* none = nullptr;
  if (beta == 1.0)
    kl_update(zc, ft, t, DivMethod::mu, 1, par, none, viol, div);
  else
    beta_update(zc, ft, t, beta, 1, par, none, viol, div);
  return div;
}

}  // namespace detail

/// The penalties' scale: s1 = len r^(beta - 1/2) and s2 = len r^(beta - 1)
/// for the rms r of the data (over all m n entries) and len the length of
/// the lines the penalised factor's entries are fitted on (m for H, n for
/// W, as scikit-learn scales its alphas): an entry's gradient sums len
/// terms of size r^(beta - 1/2), so weight 1 weighs like the data.
inline void absolute_penalties(const CountData& c, double beta, Index len,
                               const FactorPenalty& rel, double& l1,
                               double& l2) {
  const double mn = static_cast<double>(c.m) * static_cast<double>(c.n);
  const double r = mn > 0.0 ? std::sqrt(c.sq_norm / mn) : 0.0;
  const double l = static_cast<double>(len);
  l1 = rel.l1 == 0.0 ? 0.0 : rel.l1 * l * std::pow(r, beta - 0.5);
  l2 = rel.l2 == 0.0 ? 0.0 : rel.l2 * l * std::pow(r, beta - 1.0);
}

/// Sides of the H update (columns against W) and the W update (rows
/// against H').
inline detail::Side side_h(const CountData& c, const DivParams& p) {
  detail::Side s{&c.by_col, &c.w_col, &c.ex_col, c.base, p.fixed_h, 0, 0};
  absolute_penalties(c, p.beta, c.m, p.pen_h, s.l1, s.l2);
  return s;
}
inline detail::Side side_w(const CountData& c, const DivParams& p) {
  detail::Side s{&c.by_row, &c.w_row, &c.ex_row, c.base, p.fixed_w, 0, 0};
  absolute_penalties(c, p.beta, c.n, p.pen_w, s.l1, s.l2);
  return s;
}

/// sum a d_beta(x | W H) (no penalties).
inline double divergence(const CountData& c, const Mat& w, const Mat& h,
                         double beta, int threads) {
  DivParams p;
  const Mat wt = w.transpose();
  return detail::divergence_of(h, wt, side_h(c, p), beta, Parallel(threads));
}

/// The number of entries with x > 0 (and weight > 0) where W H is not
/// positive: a start there has infinite KL divergence.
inline Index zero_fits(const CountData& c, const Mat& w, const Mat& h) {
  Index bad = 0;
  for (Index j = 0; j < c.n; ++j)
    for (SpMat::InnerIterator it(c.by_col, j); it; ++it)
      if (!(w.row(it.index()).dot(h.col(j)) > 0.0)) ++bad;
  return bad;
}

/// Fits X ~ W H under d_beta from w (m x k) and h (k x n). An outer
/// iteration updates W, then H; loss[i] is D(X | WH) / D(X | r c'/T) after
/// iteration i + 1.
template <class Hooks = NullHooks>
DivResult nmf_divergence(const CountData& c, const Mat& w, const Mat& h,
                         const DivParams& p, Hooks& hooks) {
  const Index m = c.m, n = c.n, k = w.cols();
  require(w.rows() == m && h.rows() == k && h.cols() == n,
          "nmf_divergence: W must be m x k and H k x n");
  require(p.max_iter >= 0 && p.tol >= 0 && p.threads >= 1 && p.inner >= 1,
          "nmf_divergence: params");
  require(p.method == DivMethod::mu || p.beta == 1.0,
          "nmf_divergence: cd needs beta = 1");
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
  Mat wt_prev, h_prev, wt_plain, h_plain, wt_next, h_next;
  if (p.extrapolate) {
    wt_plain = wt;
    h_plain = r.H;
  }
  detail::Extrapolation ex;
  bool pushed = false, pushing = p.extrapolate;
  double first_viol = -1.0;
  RelativeTest test(p.tol);
  double last_div = 0.0;
  // A pushed entry never falls below a tenth of its plain value: where the
  // plain iterate fits every positive entry (W H > 0), the pushed one does
  // too, at any scale of the data.
  auto push = [&](const Mat& z, const Mat& old, Mat& out) {
    out.resize(z.rows(), z.cols());
    par.for_chunks(z.cols(), [&](Index c0, Index len) {
      out.middleCols(c0, len) =
          (z.middleCols(c0, len) +
           ex.beta * (z.middleCols(c0, len) - old.middleCols(c0, len)))
              .cwiseMax(0.1 * z.middleCols(c0, len));
    }, 10.0 * static_cast<double>(z.size()));
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
    if (!ex.accept(obj, pushed)) {
      wt = wt_plain;
      r.H = h_plain;
      pushed = false;
      o.loss = rel(r.divergence);
      return o;
    }
    r.divergence = div;
    r.objective = obj;
    o.converged = test(viol);
    if (first_viol < 0.0) first_viol = viol;
    if (pushing && viol <= std::sqrt(p.tol) * first_viol) pushing = false;
    if (!pushing) {
      detail::copy_chunks(wt, wt_plain, p.threads);
      detail::copy_chunks(r.H, h_plain, p.threads);
      pushed = false;
      return o;
    }
    push(wt, wt_plain, wt_next);
    push(r.H, h_plain, h_next);
    wt_plain.swap(wt);
    wt.swap(wt_next);
    h_plain.swap(r.H);
    r.H.swap(h_next);
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
  } else {
    r.divergence = last_div;
  }
  detail::transpose_chunks(wt, r.W, p.threads);
  if (r.iterations == 0 || r.status == Status::interrupted ||
      r.status == Status::numerical_error) {
    // the trace's last value may not be the returned iterate's
    r.divergence = divergence(c, r.W, r.H, p.beta, p.threads);
    r.objective = r.divergence + penalty(wt, r.H);
  }
  return r;
}

}  // namespace nmfkit
