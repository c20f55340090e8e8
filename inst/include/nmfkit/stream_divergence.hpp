// NMF under the beta-divergences (KL, Itakura-Saito, any beta) of data read
// in column blocks (a source, source.hpp): nmf_divergence()'s model, trace,
// penalties, fixed components, stopping rule and extrapolation, one read of
// the data per iteration.
//
// H is updated a block at a time exactly as in memory (each column's
// problem needs that column only: KL coordinate descent or the
// multiplicative update). W cannot be: coordinate descent on a row of W
// needs the whole row of X at once, which a column stream never holds. So
// each pass also returns the sums of the multiplicative (majorise-minimise)
// W update at the point it leaves, (W, H) (stream_block.hpp,
// divergence_w_sums()), and the next iteration takes that step: Fevotte &
// Idier's update with their exponent, which never raises the divergence
// and whose fixed points are the KKT points of the in-memory fit. Under
// method = "mu" that is the in-memory fit's own W update, so a streamed
// "mu" fit equals the in-memory one up to the order of its sums; under
// "cd" (KL) H takes the in-memory Newton steps and W the MM step, and the
// fit reaches the same optimum (ARCHITECTURE.md, "Data read in blocks").
// A diagonal Newton step for W from the same pass would need its own
// safeguard (a Jacobi Newton step over all k coordinates at once can
// raise the loss, and checking it costs another read); the MM step needs
// none.
//
// Extrapolation as in stream.hpp: while pushing, each block also pushes its
// columns of H and returns the W sums at the pushed point (W pushed before
// the pass, with the step an accepted iteration takes), so a restart and a
// push both cost no extra read.
#pragma once

#include <cmath>

#include "divergence.hpp"
#include "divergence_kernels.hpp"
#include "driver.hpp"
#include "extrapolate.hpp"
#include "hooks.hpp"
#include "loss.hpp"
#include "parallel.hpp"
#include "stream_block.hpp"
#include "types.hpp"

namespace nmfkit {
namespace detail {

/// One step of every free entry of W' (k x m) from a pass's sums at (W, H)
/// (divergence_w_sums(); wden k x 1 under KL), with the absolute
/// penalties l1, l2. Under beta != 1, or KL with wnum k x m, the
/// multiplicative step: the W half of nmf_divergence()'s "mu" iteration.
/// Under KL with wnum 3k x m (coordinate descent), kl_coordinate()'s
/// safeguarded Newton step for each coordinate from the sums at the same
/// point: the larger of Newton and MM from below the coordinate's optimum;
/// from above Newton if it stays positive, 0 where phi'(0) >= 0 (so
/// entries reach exact zeros, which the MM step only approaches), else
/// Newton in log z kept between the MM point and z. Returns the
/// projected-gradient violation at the entry point, summed in chunk order.
inline double divergence_w_step(Mat& wt, const Mat& wnum, const Mat& wden,
                                double beta, double l1, double l2,
                                Index fixed, int threads) {
  const Index k = wt.rows();
  const bool newton = wnum.rows() == 3 * k && beta == 1.0;
  const double gamma = mu_exponent(beta);
  return Parallel(threads).sum(wt.cols(), [&](Index i) {
    double viol = 0.0;
    for (Index t = fixed; t < k; ++t) {
      const double lin = wden.cols() == 1 ? wden(t, 0) : wden(t, i);
      const double s = wnum(t, i);
      double& z = wt(t, i);
      if (beta != 1.0) {
        const double dt = lin + l1 + l2 * z;
        const double grad = dt - s;
        viol += std::abs(z == 0.0 ? std::min(0.0, grad) : grad);
        if (dt > 0.0) z *= std::pow(s / dt, gamma);
        continue;
      }
      const double grad = lin + l1 + l2 * z - s;
      viol += std::abs(z == 0.0 ? std::min(0.0, grad) : grad);
      const double mm = mm_step(z, lin + l1, l2, s);
      if (!newton) {
        z = mm;
        continue;
      }
      if (grad == 0.0) continue;
      const double h = wnum(k + t, i) + l2;
      const double step = h > 0.0 ? z - grad / h : (grad > 0.0 ? 0.0 : z);
      if (grad < 0.0 || z == 0.0) {
        z = std::max(std::max(step, mm), 0.0);
        continue;
      }
      // from above: every coordinate of the row moves at once, so none
      // falls below a tenth of its value (W H then stays positive wherever
      // it was, as extrapolation's push_positive() keeps it); an entry
      // whose optimum is 0 gets there geometrically
      double down;
      if (step > 0.0) {
        down = std::max(step, mm);
      } else if (std::isfinite(wnum(2 * k + t, i)) &&
                 lin + l1 - wnum(2 * k + t, i) >= 0.0) {
        down = 0.0;
      } else {
        down = std::min(z, std::max(z * std::exp(-grad / (h * z + grad)), mm));
      }
      z = std::max(down, 0.1 * z);
    }
    return viol;
  }, 8.0 * static_cast<double>(k) * wt.cols());
}

}  // namespace detail

/// The streamed fit of X ~ W H under d_beta from w (m x k) and h (k x n):
/// nmf_divergence()'s result (trace D(X | WH) / D(X | r c'/T)). Reads the
/// source twice before iterating (its row and column sums, then the
/// baseline and the start's W sums) and once per iteration. p.inner is
/// the H update's passes; W takes one step per read.
template <class Source, class Hooks = NullHooks>
DivResult nmf_divergence_streamed(Source& source, const Mat& w, const Mat& h,
                                  const NmfParams& p, Hooks& hooks) {
  const Index m = source.rows(), n = source.cols(), k = w.cols();
  require(w.rows() == m && h.rows() == k && h.cols() == n,
          "nmf_divergence_streamed: W must be m x k and H k x n");
  require(p.max_iter >= 0 && p.tol >= 0 && p.threads >= 1 && p.inner >= 1 &&
              p.update_w,
          "nmf_divergence_streamed: params");
  require(p.method == Method::mu || (p.method == Method::cd && p.beta == 1.0),
          "nmf_divergence_streamed: method mu, or cd at beta = 1");
  require(p.fixed_w >= 0 && p.fixed_w <= k && p.fixed_h >= 0 &&
              p.fixed_h <= k,
          "nmf_divergence_streamed: fixed components");
  const double x2 = source.sq_norm();
  const double rms = data_rms(x2, m, n);
  const Penalty pw = absolute_penalty(p.pen_w, p.beta, rms, n),
                ph = absolute_penalty(p.pen_h, p.beta, rms, m);
  const double w_l1 = pw.l1, w_l2 = pw.l2;
  StreamPlan plan;
  plan.loss = StreamLoss{LossKind::divergence, p.beta, p.method, p.inner};
  plan.terms = detail::FactorTerms{ph.l1, ph.l2, p.fixed_h};
  Mat& wt = plan.wt;  // k x m, the W' of the pass
  detail::transpose_chunks(w, wt, p.threads);
  DivResult r;
  r.H = h;
  auto interrupted = [&]() {
    r.status = Status::interrupted;
    detail::transpose_chunks(wt, r.W, p.threads);
    return r;
  };
  // read 1: row and column sums, for the baseline r c' / T (summed as
  // nmf_divergence() sums them: column by column, in order)
  Vec rs = Vec::Zero(m);
  Mat h1(1, n);
  if (!source.for_blocks([&](Index j0, Index len, const auto& x) {
        const SpMat xc = detail::block_counts(x);
        for (Index j = 0; j < len; ++j) {
          h1(0, j0 + j) = xc.col(j).sum();
          for (SpMat::InnerIterator it(xc, j); it; ++it)
            rs[it.index()] += it.value();
        }
      }))
    return interrupted();
  const double total = rs.sum();
  if (total > 0.0) h1 /= total;
  const Mat w1t = rs.transpose();
  // read 2: the baseline's divergence, and the sums of the start
  Mat wnum, wden;
  {
    plan.update = false;
    BlockSums start;
    if (!source.for_blocks([&](Index j0, Index len, const auto& x) {
          const SpMat xc = detail::block_counts(x);
          const Vec none;
          const Exceptions no_ex;
          const detail::Side side{&xc, &none, &no_ex, 1.0, k, 0.0, 0.0};
          r.baseline += detail::divergence_of(h1.middleCols(j0, len), w1t,
                                              side, p.beta,
                                              Parallel(p.threads));
          Mat hb = r.H.middleCols(j0, len);
          start.add(stream_block(x, plan, hb, nullptr, nullptr, p.threads));
        }))
      return interrupted();
    wnum = std::move(start.wnum);
    wden = std::move(start.wden);
    r.divergence = start.div;
    plan.update = true;
  }
  auto rel = [&](double d) { return r.baseline > 0.0 ? d / r.baseline : d; };
  auto pen_w = [&]() {
    const auto rest = wt.bottomRows(k - p.fixed_w);
    double s = 0.0;
    if (w_l1 != 0.0) s += w_l1 * rest.sum();
    if (w_l2 != 0.0) s += 0.5 * w_l2 * rest.squaredNorm();
    return s;
  };
  Mat wt_prev, h_prev;
  // extrapolation (extrapolate.hpp): the plain iterate and its sums, the
  // pushed H of the pass
  Mat wt_plain, h_plain, h_push, wnum_plain, wden_plain;
  if (p.extrapolate) {
    wt_plain = wt;
    h_plain = r.H;
    wnum_plain = wnum;
    wden_plain = wden;
  }
  detail::Extrapolator ex(p.tol);
  RelativeTest test(p.tol, p.reference_violation);
  auto step = [&](int) {
    StepOutcome o;
    if (!p.extrapolate) {
      detail::copy_chunks(wt, wt_prev, p.threads);
      detail::copy_chunks(r.H, h_prev, p.threads);
    }
    double viol = 0.0;
    if (p.fixed_w < k)
      viol = detail::divergence_w_step(wt, wnum, wden, p.beta, w_l1, w_l2,
                                       p.fixed_w, p.threads);
    plan.push = p.extrapolate && ex.pushing();
    if (plan.push) {
      plan.beta = ex.next_beta();
      detail::push_positive(wt, wt_plain, plan.beta, p.threads, plan.wt_push);
    }
    BlockSums s;
    if (!source.pass(plan, r.H, plan.push ? &h_plain : nullptr,
                     plan.push ? &h_push : nullptr, s)) {
      o.interrupted = true;
      return o;
    }
    viol += s.viol;
    const double obj = s.div + pen_w() + s.pen;
    o.loss = rel(s.div);
    o.finite = std::isfinite(viol) && std::isfinite(obj);
    if (!p.extrapolate || !o.finite) {
      if (o.finite) {
        r.divergence = s.div;
        r.objective = obj;
      }
      o.converged = o.finite && test(viol);
      wnum = std::move(s.wnum);
      wden = std::move(s.wden);
      return o;
    }
    const detail::Verdict v = ex.judge(obj, viol);
    if (v == detail::Verdict::restart) {
      wt = wt_plain;
      r.H = h_plain;
      wnum = wnum_plain;
      wden = wden_plain;
      o.loss = rel(r.divergence);
      return o;
    }
    r.divergence = s.div;
    r.objective = obj;
    o.converged = test(viol);
    if (v == detail::Verdict::keep) {
      detail::copy_chunks(wt, wt_plain, p.threads);
      detail::copy_chunks(r.H, h_plain, p.threads);
      wnum = std::move(s.wnum);
      wden = std::move(s.wden);
      wnum_plain = wnum;
      wden_plain = wden;
      return o;
    }
    // the pass pushed H, and W before it, with the step judge() just took
    wt_plain.swap(wt);
    wt.swap(plan.wt_push);
    h_plain.swap(r.H);
    r.H.swap(h_push);
    wnum_plain = std::move(s.wnum);
    wden_plain = std::move(s.wden);
    wnum = std::move(s.wnum_push);
    wden = std::move(s.wden_push);
    return o;
  };
  detail::drive_fit(p.max_iter, p.extrapolate, hooks, r, test, step, wt,
                    wt_prev, h_prev, wt_plain, h_plain);
  h_push = Mat();
  if (r.status == Status::numerical_error) {
    // the trace's last value is not the returned iterate's: read it again
    plan.update = plan.push = false;
    BlockSums s;
    if (source.pass(plan, r.H, nullptr, nullptr, s)) r.divergence = s.div;
  }
  detail::transpose_chunks(wt, r.W, p.threads);
  r.objective = r.divergence + pen_w() + [&] {
    const auto rest = r.H.bottomRows(k - p.fixed_h);
    double s = 0.0;
    if (plan.terms.l1 != 0.0) s += plan.terms.l1 * rest.sum();
    if (plan.terms.l2 != 0.0) s += 0.5 * plan.terms.l2 * rest.squaredNorm();
    return s;
  }();
  return r;
}

}  // namespace nmfkit
