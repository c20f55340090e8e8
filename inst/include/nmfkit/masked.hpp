// Masked and weighted NMF: X ~ W H minimising
//   1/2 sum_ij a_ij (x_ij - (W H)_ij)^2
// with entry weights a_ij >= 0 (0 for a missing entry). The weights are a
// base value (1: every entry counts; 0: only the listed entries count, as for
// recommender data whose unstored entries are missing) plus sparse
// exceptions a_ij - base. Every column of H (row of W) has its own k x k
// Gram matrix: the base Gram matrix plus one rank-one term per exception in
// that column, so masking a few entries costs a few outer products per
// column, not a Gram matrix built from scratch.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "data.hpp"
#include "driver.hpp"
#include "hooks.hpp"
#include "nmf.hpp"
#include "parallel.hpp"
#include "types.hpp"
#include "weights.hpp"

namespace nmfkit {

/// method = "anls" on a masked fit: each column's own k x k system is solved
/// by coordinate descent until no coordinate moves by more than this
/// fraction of the column's largest entry, or for at most this many passes
/// (the unmasked engine's exact BPP shares one Gram matrix per chunk, which
/// a masked column does not have).
constexpr double kMaskedNnlsTol = 1e-8;
constexpr int kMaskedNnlsPasses = 100;

/// Missing entries are filled in with the prediction (the EM step) when no
/// row or column misses more than this share of its entries (see
/// nmf_masked).
constexpr double kFewMissing = 0.1;

namespace detail {

/// Updates every column z_o of Z (k x n_outer) for its own problem
///   min_{z >= 0} 1/2 z'G_o z - b_o'z,
///   G_o = base * G0 + sum_e delta_e f_e f_e',
///   b_o = base * B0[:, o] + sum_e delta_e value_e f_e,
/// the sum over the exceptions e of outer index o, f_e = F[:, inner_e].
/// HALS runs `inner` coordinate passes, ANLS solves to tolerance, MU makes
/// one multiplicative step. With `impute` (base 1 only), a missing entry
/// (weight 0) adds no Gram term: it is filled with the current prediction
/// f_e'z_o, which adds (f_e'z_o - value_e) f_e to b_o. That is the update of
/// a majorizer touching the masked loss at z_o (the EM step for missing
/// data): the loss still decreases and the violation is the loss's own, at
/// 2k instead of k^2 flops per missing entry. With factor terms, each
/// column solves its free rows' system (penalties, fixed rows held: as
/// factor_update() in nmf.hpp). Columns are cut into fixed chunks, so the
/// result does not depend on the thread count. Returns the projected-
/// gradient violation at the entry point (the penalised problem's, over the
/// free coordinates), summed in chunk order.
inline double masked_update(Mat& z, const Mat& f, const Mat& g0,
                            const Mat& b0, const Exceptions& ex, double base,
                            const NmfParams& p, double mu_eps,
                            const FactorTerms& terms, const Parallel& par,
                            bool impute = false) {
  const Index k = z.rows(), n = z.cols();
  if (terms.fixed == k) return 0.0;  // all fixed: nothing to solve
  const Index clen = chunk_length(n);
  const Index chunks = (n + clen - 1) / clen;
  std::vector<double> part(static_cast<size_t>(chunks), 0.0);
  const double work = 2.0 * static_cast<double>(k) * k *
                      (static_cast<double>(ex.size()) + n * p.inner);
  // one column's solve of min_{zo >= 0} 1/2 zo'g zo - b'zo by p.method
  // (grad: scratch); returns the violation at the entry point
  auto solve = [&](auto& zo, const Mat& g, const Vec& b, Vec& grad) {
    const Index kz = zo.size();
    // z = 0 with b <= 0 is optimal already (as in cd_pass)
    if ((zo.array() == 0.0).all() && (b.array() <= 0.0).all()) return 0.0;
    double viol0 = 0.0;
    if (p.method == Method::hals) {
      for (int pass = 1; pass <= p.inner; ++pass) {
        double viol = 0.0;
        for (Index t = 0; t < kz; ++t) {
          const double gr = g.col(t).dot(zo) - b[t];
          viol += std::abs(zo[t] == 0.0 ? std::min(0.0, gr) : gr);
          if (g(t, t) > 0.0) zo[t] = std::max(zo[t] - gr / g(t, t), 0.0);
        }
        if (pass == 1) viol0 = viol;
        if (viol0 == 0.0 || (pass > 1 && viol <= p.inner_tol * viol0))
          break;
      }
      return viol0;
    }
    grad.noalias() = g * zo - b;
    for (Index t = 0; t < kz; ++t)
      viol0 += std::abs(zo[t] == 0.0 ? std::min(0.0, grad[t]) : grad[t]);
    if (p.method == Method::mu) {
      for (Index t = 0; t < kz; ++t)
        zo[t] *= std::max(b[t], 0.0) / (grad[t] + b[t] + mu_eps);
      return viol0;
    }
    for (int pass = 0; pass < kMaskedNnlsPasses; ++pass) {
      double moved = 0.0;
      for (Index t = 0; t < kz; ++t) {
        if (g(t, t) <= 0.0) continue;
        const double gr = g.col(t).dot(zo) - b[t];
        const double next = std::max(zo[t] - gr / g(t, t), 0.0);
        moved = std::max(moved, std::abs(next - zo[t]));
        zo[t] = next;
      }
      if (moved <= kMaskedNnlsTol * std::max(zo.maxCoeff(), 1e-300)) break;
    }
    return viol0;
  };
  const Index kf = k - terms.fixed;
  par.for_chunks(n, [&](Index c0, Index len) {
    Mat g(k, k), fm, fd, gf;
    Vec b(k), grad(k), dv, bf, zf;
    double chunk_viol = 0.0;
    for (Index o = c0; o < c0 + len; ++o) {
      if (base != 0.0) {
        g = g0;
        b = b0.col(o);
      } else {
        g.setZero();
        b.setZero();
      }
      // the exceptions' outer products as one matrix product (gathered
      // columns f_e and their weighted copies), which runs at matrix-
      // product speed instead of one rank-one update at a time
      const Index ne = ex.start[o + 1] - ex.start[o];
      if (ne > 0) {
        fm.resize(k, ne);
        fd.resize(k, ne);
        dv.resize(ne);
        Index kept = 0;
        for (Index e = 0; e < ne; ++e) {
          const Index s = ex.start[o] + e;
          const auto fe = f.col(ex.inner[s]);
          if (impute && ex.delta[s] == -base) {
            // missing entry, filled with the current prediction: the
            // majorizer's right-hand side term, no Gram correction
            b.noalias() += (fe.dot(z.col(o)) - ex.value[s]) * fe;
            continue;
          }
          fm.col(kept) = fe;
          fd.col(kept) = ex.delta[s] * fe;
          dv[kept++] = ex.value[s];
        }
        if (kept > 0) {
          g.noalias() += fd.leftCols(kept) * fm.leftCols(kept).transpose();
          b.noalias() += fd.leftCols(kept) * dv.head(kept);
        }
      }
      auto zo = z.col(o);
      if (terms.none()) {
        chunk_viol += solve(zo, g, b, grad);
        continue;
      }
      // the free rows' system (nmf.hpp, free_gram/free_rhs): penalties and
      // the fixed rows' contribution, as in the unmasked engine's update
      free_gram(g, terms, gf);
      free_rhs(zo, g, b, terms, bf);
      zf = zo.tail(kf);
      chunk_viol += solve(zf, gf, bf, grad);
      zo.tail(kf) = zf;
    }
    part[static_cast<size_t>(c0 / clen)] = chunk_viol;
  }, work);
  double viol = 0.0;
  for (double v : part) viol += v;
  return viol;
}

/// The EM step of HALS or ANLS when every exception is a missing entry
/// filled with the current prediction (base 1): every column shares the
/// base Gram matrix G0, so the right-hand sides B0[:, o] + sum_e (f_e'z_o -
/// value_e) f_e go to the unmasked engine's factor_update(), which costs
/// what an unmasked update does. Same majorizer as masked_update(impute).
inline double filled_update(Mat& z, const Mat& f, const Mat& g0,
                            const Mat& b0, const Exceptions& ex,
                            const NmfParams& p, const FactorTerms& terms,
                            const Parallel& par, Mat& b, FreeSystem& work) {
  const Index k = z.rows();
  if (terms.fixed == k) return 0.0;  // all fixed: nothing to solve
  b.resize(k, z.cols());
  par.for_chunks(z.cols(), [&](Index c0, Index len) {
    for (Index o = c0; o < c0 + len; ++o) {
      auto bo = b.col(o);
      bo = b0.col(o);
      for (Index e = ex.start[o]; e < ex.start[o + 1]; ++e) {
        const auto fe = f.col(ex.inner[e]);
        bo.noalias() += (fe.dot(z.col(o)) - ex.value[e]) * fe;
      }
    }
  }, 4.0 * static_cast<double>(k) * (ex.size() + z.cols()));
  // mu never takes this path (see nmf_masked), so no mu_eps is needed
  return factor_update(z, g0, b, p, 0.0, terms, work);
}

/// Whether every column misses at most `share` of its m entries and every
/// row at most `share` of its n (base 1: exceptions of weight 0).
inline bool few_missing_per_line(const EntryWeights& a, Index m, Index n,
                                 double share) {
  auto few = [&](const Exceptions& ex, Index len) {
    const double cap = share * static_cast<double>(len);
    for (size_t o = 0; o + 1 < ex.start.size(); ++o) {
      double c = 0.0;
      for (Index e = ex.start[o]; e < ex.start[o + 1]; ++e)
        c += ex.delta[e] == -1.0 ? 1.0 : 0.0;
      if (c > cap) return false;
    }
    return true;
  };
  return few(a.by_col, m) && few(a.by_row, n);
}

/// sum over the exceptions of delta_e * value_e^2 (the weighted data norm
/// is base * ||X||^2 plus this).
inline double exception_sq_norm(const Exceptions& ex) {
  double s = 0.0;
  for (Index e = 0; e < ex.size(); ++e)
    s += ex.delta[e] * ex.value[e] * ex.value[e];
  return s;
}

/// sum over the exceptions of delta_e (value_e - f_inner' z_outer)^2, in
/// chunk order.
inline double exception_sq_error(const Exceptions& ex, const Mat& f,
                                 const Mat& z, const Parallel& par) {
  return par.sum(z.cols(), [&](Index o) {
    double s = 0.0;
    for (Index e = ex.start[o]; e < ex.start[o + 1]; ++e) {
      const double r = ex.value[e] - f.col(ex.inner[e]).dot(z.col(o));
      s += ex.delta[e] * r * r;
    }
    return s;
  }, 2.0 * static_cast<double>(z.rows()) * ex.size());
}

}  // namespace detail

/// The weighted squared error sum_ij a_ij (x_ij - (W H)_ij)^2 of the
/// factors w (m x k) and h (k x n), with X holding 0 at missing entries.
template <class DataT>
double masked_sq_error(const DataT& x, const EntryWeights& a, const Mat& w,
                       const Mat& h, int threads = 1) {
  const Parallel par(threads);
  const Mat wt = w.transpose();
  double e = 0.0;
  if (a.base != 0.0) {
    Mat b;
    x.left_mult(wt, b, threads);
    e = x.sq_norm() - 2.0 * h.cwiseProduct(b).sum() +
        (wt * w).cwiseProduct(h * h.transpose()).sum();
  }
  return std::max(e + detail::exception_sq_error(a.by_col, wt, h, par), 0.0);
}

/// Fits X ~ W H under the entry weights `a` from the starting factors w
/// (m x k) and h (k x n); X holds 0 at missing entries. One outer iteration
/// updates W (every row with its own Gram matrix) then H, as nmf() does;
/// the stopping test is nmf()'s. loss[i] is the weighted relative error
/// sqrt(sum a (x - WH)^2 / sum a x^2) after iteration i + 1. Penalties and
/// fixed components are nmf()'s, their weights relative to nmf()'s rms of
/// the data given (sqrt(||X||^2 / (m n)), missing entries 0), so a fit with
/// no exceptions is nmf()'s; the objective is 1/2 sum a (x - WH)^2 plus the
/// penalties.
template <class DataT, class Hooks = NullHooks>
NmfResult nmf_masked(const DataT& x, const EntryWeights& a, const Mat& w,
                  const Mat& h, const NmfParams& p, Hooks& hooks) {
  const Index m = x.rows(), n = x.cols(), k = w.cols();
  require(w.rows() == m && h.rows() == k && h.cols() == n,
          "nmf_masked: W must be m x k and H k x n");
  require(static_cast<Index>(a.by_col.start.size()) == n + 1 &&
              static_cast<Index>(a.by_row.start.size()) == m + 1,
          "nmf_masked: weights do not match the data");
  require(p.max_iter >= 1 && p.tol >= 0 && p.threads >= 1 && p.inner >= 1,
          "nmf_masked: params");
  // the W and H updates' passes (not a structured binding: C++17 lambdas
  // cannot capture one)
  const detail::FactorParams passes =
      detail::factor_params(p, m, n, k, x.stored());
  const NmfParams& pw = passes.w;
  const NmfParams& ph = passes.h;
  const Parallel par(p.threads);
  const bool base = a.base != 0.0;
  // Missing entries cost k^2 flops each in the Gram corrections, against
  // about k per stored entry for the unmasked products, while filling them
  // in with the prediction (see masked_update) costs 2k but slows each
  // line's convergence by about the share of its entries that are missing.
  // So fill them in when they are many (more than 4 x stored / k, e.g. 30 %
  // of a sparse matrix) or a small share of every line (at most
  // kFewMissing = 10 %, e.g. the held-out entries of nmf_rank()'s folds:
  // 5 % of a dense line, far less of a sparse one). With HALS or ANLS and
  // nothing but missing entries, the filled-in update then runs on the
  // unmasked engine (filled_update).
  double missing = 0.0;
  for (double d : a.by_col.delta) missing += (base && d == -1.0) ? 1.0 : 0.0;
  const bool impute =
      missing > 0.0 &&
      (missing * static_cast<double>(k) > 4.0 * x.stored() ||
       detail::few_missing_per_line(a, m, n, kFewMissing));
  const bool filled = impute && p.method != Method::mu &&
                      missing == static_cast<double>(a.by_col.size());
  const double x2 = base ? x.sq_norm() : 0.0;
  const double xw2 = x2 + detail::exception_sq_norm(a.by_col);
  const double n_obs =
      (base ? static_cast<double>(m) * static_cast<double>(n) : 0.0) +
      static_cast<double>(a.by_col.size());
  const double rms = n_obs > 0.0 ? std::sqrt(xw2 / n_obs) : 0.0;
  const double mu_eps = p.mu_eps * rms * std::sqrt(rms);
  // the penalties' scale: nmf()'s rms of the data as given
  const double x_rms = std::sqrt((base ? x2 : x.sq_norm()) /
                                 (static_cast<double>(m) *
                                  static_cast<double>(n)));
  const detail::NmfTerms terms = detail::nmf_terms(p, k, x_rms, m, n);
  detail::FreeSystem work;

  NmfResult r;
  Mat wt;  // k x m: each column a row of W
  detail::transpose_chunks(w, wt, p.threads);
  r.H = h;
  Mat g0, b0, wt_prev, h_prev, fb, hh;
  RelativeTest test(p.tol, p.reference_violation);
  double objective = NAN;  // of the iterate the fit would return now
  auto step = [&](int) {
    wt_prev = wt;
    h_prev = r.H;
    double viol = 0.0;
    if (terms.w.fixed < k) {  // a fixed W needs no update
      if (base) {
        detail::gram(r.H, g0, p.threads);
        x.left_mult_t(r.H, b0, p.threads);  // H X^T, k x m
      }
      viol = filled ? detail::filled_update(wt, r.H, g0, b0, a.by_row, pw,
                                            terms.w, par, fb, work)
                    : detail::masked_update(wt, r.H, g0, b0, a.by_row,
                                            a.base, pw, mu_eps, terms.w, par,
                                            impute);
    }
    if (base) {
      detail::gram(wt, g0, p.threads);
      x.left_mult(wt, b0, p.threads);  // W^T X, k x n
    }
    viol += filled ? detail::filled_update(r.H, wt, g0, b0, a.by_col, ph,
                                           terms.h, par, fb, work)
                   : detail::masked_update(r.H, wt, g0, b0, a.by_col, a.base,
                                           ph, mu_eps, terms.h, par, impute);
    double e = 0.0;
    if (base) {
      detail::gram(r.H, hh, p.threads);
      e = x2 - 2.0 * r.H.cwiseProduct(b0).sum() + g0.cwiseProduct(hh).sum();
    }
    e += detail::exception_sq_error(a.by_col, wt, r.H, par);
    e = std::max(e, 0.0);
    const double pen = detail::penalty_value(wt, terms.w, p.threads) +
                       detail::penalty_value(r.H, terms.h, p.threads);
    StepOutcome o;
    o.loss = relative_error(e, xw2);
    o.finite = std::isfinite(viol) && std::isfinite(pen);
    o.converged = o.finite && test(viol);
    if (o.finite && std::isfinite(o.loss)) objective = 0.5 * e + pen;
    return o;
  };
  drive(p.max_iter, hooks, r, step, [&]() {
    wt = wt_prev;
    r.H = h_prev;
  });
  r.first_violation = test.first();
  detail::transpose_chunks(wt, r.W, p.threads);
  r.objective = objective;
  return r;
}

}  // namespace nmfkit
