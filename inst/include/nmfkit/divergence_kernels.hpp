// The per-column kernels of NMF under the beta-divergences (Fevotte & Idier,
// Neural Computation 2011), shared by the in-memory fit (divergence.hpp) and
// the streamed one (stream_block.hpp): one factor's update against the
// other, column by column, for the data compressed by the updated factor's
// index. Under KL the zero entries enter only through the linear term
// (column sums of the other factor): a pass costs O(nnz k). Other betas
// form one column of the product at a time (O(m n k) per pass).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "hooks.hpp"
#include "kernels.hpp"
#include "parallel.hpp"
#include "params.hpp"
#include "types.hpp"
#include "weights.hpp"

namespace nmfkit {

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

#ifdef NMFKIT_SIMD_X86
/// kl_sums() with its four lanes in one AVX register: the same operations
/// in the same order, multiplications and additions apart (no fused
/// multiply-add), so the same bits as the scalar loop, at a quarter of its
/// divisions' issue slots. AVX2 without FMA: with FMA in the target the
/// compiler may fuse a product into a sum, which changes bits.
__attribute__((target("avx2"))) inline void kl_sums_avx(
    const double* ax, const double* fl, const double* y, double dz, Index len,
    double& s, double& h) {
  __m256d s4 = _mm256_setzero_pd(), h4 = _mm256_setzero_pd();
  const __m256d one = _mm256_set1_pd(1.0), vdz = _mm256_set1_pd(dz);
  Index p = 0;
  for (; p + 4 <= len; p += 4) {
    const __m256d f = _mm256_loadu_pd(fl + p);
    __m256d yp = _mm256_loadu_pd(y + p);
    if (dz != 0.0) yp = _mm256_add_pd(yp, _mm256_mul_pd(f, vdz));
    const __m256d inv = _mm256_div_pd(one, yp);
    const __m256d rf =
        _mm256_mul_pd(_mm256_mul_pd(_mm256_loadu_pd(ax + p), inv), f);
    s4 = _mm256_add_pd(s4, rf);
    h4 = _mm256_add_pd(h4, _mm256_mul_pd(_mm256_mul_pd(rf, f), inv));
  }
  alignas(32) double sl[4], hl[4];
  _mm256_store_pd(sl, s4);
  _mm256_store_pd(hl, h4);
  for (int lane = 0; p < len; ++p, ++lane) {
    const double yp = dz == 0.0 ? y[p] : y[p] + fl[p] * dz;
    const double inv = 1.0 / yp;
    const double rf = ax[p] * inv * fl[p];
    sl[lane] += rf;
    hl[lane] += rf * fl[p] * inv;
  }
  s = (sl[0] + sl[1]) + (sl[2] + sl[3]);
  h = (hl[0] + hl[1]) + (hl[2] + hl[3]);
}
#endif

/// y += d f0 and then kl_sums(ax, f1, y, 0) at the new y, in one sweep:
/// the same operations in the same order as the two loops.
inline void kl_shift_sums(double* y, const double* f0, double d,
                          const double* ax, const double* f1, Index len,
                          double& s, double& h) {
  double s4[4] = {0.0, 0.0, 0.0, 0.0}, h4[4] = {0.0, 0.0, 0.0, 0.0};
  Index p = 0;
  auto term = [&](Index q, int lane) {
    y[q] = y[q] + d * f0[q];
    const double inv = 1.0 / y[q];
    const double rf = ax[q] * inv * f1[q];
    s4[lane] += rf;
    h4[lane] += rf * f1[q] * inv;
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

#ifdef NMFKIT_SIMD_X86
__attribute__((target("avx2"))) inline void kl_shift_sums_avx(
    double* y, const double* f0, double d, const double* ax,
    const double* f1, Index len, double& s, double& h) {
  __m256d s4 = _mm256_setzero_pd(), h4 = _mm256_setzero_pd();
  const __m256d one = _mm256_set1_pd(1.0), vd = _mm256_set1_pd(d);
  Index p = 0;
  for (; p + 4 <= len; p += 4) {
    const __m256d yp = _mm256_add_pd(
        _mm256_loadu_pd(y + p), _mm256_mul_pd(vd, _mm256_loadu_pd(f0 + p)));
    _mm256_storeu_pd(y + p, yp);
    const __m256d f = _mm256_loadu_pd(f1 + p);
    const __m256d inv = _mm256_div_pd(one, yp);
    const __m256d rf =
        _mm256_mul_pd(_mm256_mul_pd(_mm256_loadu_pd(ax + p), inv), f);
    s4 = _mm256_add_pd(s4, rf);
    h4 = _mm256_add_pd(h4, _mm256_mul_pd(_mm256_mul_pd(rf, f), inv));
  }
  alignas(32) double sl[4], hl[4];
  _mm256_store_pd(sl, s4);
  _mm256_store_pd(hl, h4);
  for (int lane = 0; p < len; ++p, ++lane) {
    y[p] = y[p] + d * f0[p];
    const double inv = 1.0 / y[p];
    const double rf = ax[p] * inv * f1[p];
    sl[lane] += rf;
    hl[lane] += rf * f1[p] * inv;
  }
  s = (sl[0] + sl[1]) + (sl[2] + sl[3]);
  h = (hl[0] + hl[1]) + (hl[2] + hl[3]);
}
#endif

/// kl_sums() by the AVX2 kernel when `simd`.
inline void kl_sums_any(const double* ax, const double* fl, const double* y,
                        Index len, bool simd, double& s, double& h) {
#ifdef NMFKIT_SIMD_X86
  if (simd) return kl_sums_avx(ax, fl, y, 0.0, len, s, h);
#endif
  kl_sums(ax, fl, y, 0.0, len, s, h);
}

/// kl_shift_sums() by the AVX2 kernel when `simd`.
inline void kl_shift_sums_any(double* y, const double* f0, double d,
                              const double* ax, const double* f1, Index len,
                              bool simd, double& s, double& h) {
#ifdef NMFKIT_SIMD_X86
  if (simd) return kl_shift_sums_avx(y, f0, d, ax, f1, len, s, h);
#endif
  kl_shift_sums(y, f0, d, ax, f1, len, s, h);
}

/// The coordinate's step (above) from its sums s, h at z0 (kl_sums()).
inline double kl_coordinate(double z0, double lin, double l1, double l2,
                            const double* ax, const double* fl,
                            const double* y, Index len, double s, double h,
                            double& grad) {
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
bool kl_update(Mat& z, const Mat& ft, const Side& s, Method method,
               int passes, const Parallel& par, Hooks* hooks, double& viol,
               double& div, bool want_div = true) {
  const Index k = z.rows(), n = z.cols();
  // read here, outside the parallel region (simd_enabled() may decide)
  const bool simd = simd_enabled();
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
        if (method == Method::cd) {
          // the sums of coordinate t + 1 in the sweep that moves y by t's step
          double sn = 0.0, hn = 0.0;
          bool have = false;
          for (Index t = s.fixed; t < k; ++t) {
            if (!have)
              kl_sums_any(ax.data(), fl.col(t).data(), y.data(), np, simd, sn,
                          hn);
            double grad;
            const double next = kl_coordinate(
                zo[t], lin[t], s.l1, s.l2, ax.data(), fl.col(t).data(),
                y.data(), np, sn, hn, grad);
            pv += std::abs(zo[t] == 0.0 ? std::min(0.0, grad) : grad);
            const double d = next - zo[t];
            have = false;
            if (d != 0.0) {
              if (t + 1 < k) {
                kl_shift_sums_any(y.data(), fl.col(t).data(), d, ax.data(),
                                  fl.col(t + 1).data(), np, simd, sn, hn);
                have = true;
              } else {
                y.noalias() += d * fl.col(t);
              }
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
    kl_update(zc, ft, t, Method::mu, 1, par, none, viol, div);
  else
    beta_update(zc, ft, t, beta, 1, par, none, viol, div);
  return div;
}

}  // namespace detail

}  // namespace nmfkit
