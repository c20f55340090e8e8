// Standard NMF (Frobenius loss) of data read in column blocks: data larger
// than memory, streamed from disk, or spread over machines. Each iteration
// updates W from two sums over the blocks, H X' (k x m) and H H' (k x k),
// then reads every block once: it solves the block's columns of H given W and
// returns the block's terms of the next sums. Memory: one block and
// O((m + n) k).
//
// The iterations are those of nmf() (nmf.hpp): the same W update, the same H
// update column by column (a HALS update uses the chunks of the whole H,
// NmfParams::chunk, so its inner passes stop where nmf()'s do), the same
// stopping rule and Ang & Gillis extrapolation with its restart rule. Only
// the order of the sums differs (block by block), so a streamed fit equals
// the in-memory one up to rounding.
//
// Extrapolation in one read per iteration: nmf() pushes H after the
// iteration's loss is known and then needs (pushed H) X'. The pass cannot
// wait for the loss, so while extrapolation is on each block also pushes its
// new columns of H (with the step an accepted iteration would take) and
// returns the pushed point's sums too (its H X' from the plain iterates'
// and a product over the clamped entries only, BlockSums); the driver keeps
// whichever the restart rule picks, and the sums of the last accepted plain
// iterate for a restart.
#pragma once

#include <cmath>
#include <string>
#include <vector>

#include "driver.hpp"
#include "extrapolate.hpp"
#include "hooks.hpp"
#include "loss.hpp"
#include "nmf.hpp"
#include "parallel.hpp"
#include "stream_block.hpp"
#include "types.hpp"

namespace nmfkit {
namespace detail {

/// What both streamed solvers set up from the source and the settings:
/// ||X||^2, the factors' terms and passes, and the plan of the H update
/// (its passes, the chunks of the whole H, the absolute MU guard, H's terms)
/// with W' in it.
struct StreamSetup {
  double x2 = 0.0;
  NmfTerms terms;
  FactorParams passes;
  StreamPlan plan;
};
template <class Source>
StreamSetup stream_setup(const Source& source, const Mat& w, const Mat& h,
                         const NmfParams& p, const char* who) {
  const Index m = source.rows(), n = source.cols(), k = w.cols();
  const std::string name(who);
  require(w.rows() == m && h.rows() == k && h.cols() == n,
          name + ": W must be m x k and H k x n");
  require(p.max_iter >= 1 && p.tol >= 0 && p.threads >= 1 && p.inner >= 1 &&
              p.inner_tol >= 0,
          name + ": params");
  StreamSetup s;
  s.x2 = source.sq_norm();
  const double rms =
      std::sqrt(s.x2 / (static_cast<double>(m) * static_cast<double>(n)));
  s.terms = nmf_terms(p, k, rms, m, n);
  s.passes = factor_params(p, m, n, k, source.stored());
  s.plan.h = s.passes.h;
  s.plan.h.chunk = chunk_length(n);  // the chunks of nmf()'s H update
  s.plan.mu_eps = p.mu_eps * rms * std::sqrt(rms);
  s.plan.terms = s.terms.h;
  transpose_chunks(w, s.plan.wt, p.threads);
  return s;
}

}  // namespace detail

/// The streamed fit of X ~ W H from w (m x k) and h (k x n), reading the
/// blocks of `source` once per iteration (and once for the start): its
///   bool pass(const StreamPlan& plan, Mat& h, const Mat* h_plain,
///             Mat* h_push, BlockSums& total)
/// is detail::block_pass() or the same pass run elsewhere. The result and
/// its loss trace are nmf()'s.
template <class Source, class Hooks = NullHooks>
NmfResult nmf_streamed(Source& source, const Mat& w, const Mat& h,
                       const NmfParams& p, Hooks& hooks) {
  const Index k = w.cols();
  detail::StreamSetup setup =
      detail::stream_setup(source, w, h, p, "nmf_streamed");
  const double x2 = setup.x2;
  const detail::NmfTerms& terms = setup.terms;
  const NmfParams& pw = setup.passes.w;
  StreamPlan& plan = setup.plan;
  detail::FreeSystem work_w;

  NmfResult r;
  Mat& wt = plan.wt;  // k x m, as nmf()
  r.H = h;
  // the sums of the H an iteration starts from: H X' and H H'
  Mat bw, hht;
  // the first read: the sums of the start
  {
    plan.update = false;
    BlockSums s;
    if (!source.pass(plan, r.H, nullptr, nullptr, s)) {
      r.status = Status::interrupted;
      detail::transpose_chunks(wt, r.W, p.threads);
      return r;
    }
    bw = std::move(s.bw);
    hht = std::move(s.hht);
    plan.update = true;
  }
  Mat wt_prev, h_prev;
  // extrapolation, as nmf(): the plain iterate and the sums of its H (for a
  // restart from it), the pushed point in h_push
  Mat wt_plain, h_plain, h_push, wt_next, bw_plain, hht_plain;
  double plain_loss = INFINITY;
  if (p.extrapolate) {
    wt_plain = wt;
    h_plain = r.H;
    bw_plain = bw;
    hht_plain = hht;
  }
  detail::Extrapolator ex(p.tol);
  RelativeTest test(p.tol, p.reference_violation);
  double objective = NAN;
  auto step = [&](int) {
    StepOutcome o;
    // the rollback's copies: with extrapolation the fit returns the plain
    // iterate whatever happens, so none is needed (H is k x n: 160 MB at
    // n = 10^6, k = 20)
    if (!p.extrapolate) {
      detail::copy_chunks(wt, wt_prev, p.threads);
      detail::copy_chunks(r.H, h_prev, p.threads);
    }
    double viol = 0.0;
    if (terms.w.fixed < k)
      viol = detail::factor_update(wt, hht, bw, pw, plan.mu_eps, terms.w,
                                   work_w);
    detail::gram(wt, plan.wtw, p.threads);
    // the step an accepted iteration takes next (Extrapolation::accept())
    plan.push = p.extrapolate && ex.pushing();
    if (plan.push) plan.beta = ex.next_beta();
    BlockSums s;
    if (!source.pass(plan, r.H, plan.push ? &h_plain : nullptr,
                     plan.push ? &h_push : nullptr, s)) {
      o.interrupted = true;
      return o;
    }
    viol += s.viol;
    const double sq =
        std::max(x2 - 2.0 * s.cross + plan.wtw.cwiseProduct(s.hht).sum(), 0.0);
    const double pen = detail::penalty_value(wt, terms.w, p.threads) + s.pen;
    o.loss = relative_error(sq, x2);
    o.finite = std::isfinite(viol) && std::isfinite(o.loss) &&
               std::isfinite(pen);
    if (!p.extrapolate || !o.finite) {
      o.converged = o.finite && test(viol);
      if (o.finite) objective = 0.5 * sq + pen;
      bw = std::move(s.bw);
      hht = std::move(s.hht);
      return o;
    }
    const detail::Verdict v =
        ex.judge(relative_error(sq + 2.0 * pen, x2), viol);
    if (v == detail::Verdict::restart) {
      // restart from the plain iterate, whose sums were kept
      wt = wt_plain;
      r.H = h_plain;
      bw = bw_plain;
      hht = hht_plain;
      o.loss = plain_loss;
      return o;
    }
    plain_loss = o.loss;
    objective = 0.5 * sq + pen;
    o.converged = test(viol);
    if (v == detail::Verdict::keep) {
      detail::copy_chunks(wt, wt_plain, p.threads);
      detail::copy_chunks(r.H, h_plain, p.threads);
      bw = std::move(s.bw);
      hht = std::move(s.hht);
      bw_plain = bw;
      hht_plain = hht;
      return o;
    }
    // the pass pushed H with ex.beta() (the step judge() just took): push W
    // with it too and start the next iteration from the pushed point
    detail::push_factor(wt, wt_plain, ex.beta(), terms.w.fixed, p.threads,
                        wt_next);
    wt_plain.swap(wt);
    wt.swap(wt_next);
    h_plain.swap(r.H);
    r.H.swap(h_push);
    detail::push_sums(s, bw_plain, ex.beta(), bw);
    bw_plain = std::move(s.bw);
    hht_plain = std::move(s.hht);
    hht = std::move(s.hht_push);
    return o;
  };
  detail::drive_fit(p.max_iter, p.extrapolate, hooks, r, test, step, wt,
                    wt_prev, h_prev, wt_plain, h_plain);
  h_push = Mat();  // before the result's copies
  detail::transpose_chunks(wt, r.W, p.threads);
  r.objective = objective;
  return r;
}

}  // namespace nmfkit
