// Online NMF (Frobenius loss) of data read in mini-batches of columns
// (Mairal, Bach, Ponce & Sapiro, JMLR 2010, with a forgetting factor as
// scikit-learn's MiniBatchNMF): each block's H given W, then W from
// forgotten statistics. Reads the sources of source.hpp.
#pragma once

#include <cmath>

#include "driver.hpp"
#include "hooks.hpp"
#include "loss.hpp"
#include "nmf.hpp"
#include "stream.hpp"
#include "stream_block.hpp"
#include "types.hpp"

namespace nmfkit {

/// Settings of nmf_online(): `base` as for nmf() (the H and W updates,
/// penalties, fixed components; max_iter counts passes over the data, tol
/// stops when a pass lowers the error by at most tol of it; a pass that
/// raises it does not stop the fit), and the weight kept by the statistics
/// of earlier blocks per pass over the data, `forget` (each block
/// multiplies them by forget^(len / n)). scikit-learn's MiniBatchNMF keeps
/// 0.7 per pass; with exact H updates per block, 0.01 reached a lower
/// error in every pass of the core tests' problem (cpp/test_stream.cpp),
/// and 1e-8 (only the last blocks count) was unstable.
struct OnlineParams {
  NmfParams base;
  double forget = 0.01;
};

/// Online NMF (Mairal, Bach, Ponce & Sapiro, JMLR 2010, with mini-batches
/// and a forgetting factor as scikit-learn's MiniBatchNMF): for each block
/// of columns in turn, its H given W (warm-started from its last value),
/// then A <- rho A + H_J H_J' and B <- rho B + H_J X_J', and W updated on
/// (A, B). One iteration is one pass over the blocks; its traced loss is
/// sqrt(sum of the blocks' squared errors as each was solved / ||X||^2),
/// and a last pass solves every column of H given the final W (the loss
/// traced for it is the exact relative error of the W, H returned).
template <class Source, class Hooks = NullHooks>
NmfResult nmf_online(Source& source, const Mat& w, const Mat& h,
                     const OnlineParams& op, Hooks& hooks) {
  const NmfParams& p = op.base;
  const Index m = source.rows(), n = source.cols(), k = w.cols();
  require(op.forget > 0 && op.forget <= 1, "nmf_online: forget");
  detail::StreamSetup setup =
      detail::stream_setup(source, w, h, p, "nmf_online");
  const double x2 = setup.x2;
  const detail::NmfTerms& terms = setup.terms;
  const detail::FactorParams& passes = setup.passes;
  StreamPlan& plan = setup.plan;
  detail::FreeSystem work_w;
  NmfResult r;
  Mat& wt = plan.wt;
  r.H = h;
  Mat a = Mat::Zero(k, k), b = Mat::Zero(k, m);
  Mat wt_prev, h_prev;
  double previous = INFINITY;
  auto step = [&](int) {
    StepOutcome o;
    detail::copy_chunks(wt, wt_prev, p.threads);
    detail::copy_chunks(r.H, h_prev, p.threads);
    double sq = 0.0, pen_h = 0.0;
    const bool done = source.for_blocks(
        [&](Index j0, Index len, const auto& x) {
          detail::gram(wt, plan.wtw, p.threads);
          Mat hb = r.H.middleCols(j0, len);
          const BlockSums s =
              stream_block(x, plan, hb, nullptr, nullptr, p.threads);
          r.H.middleCols(j0, len) = hb;
          sq += std::max(x.sq_norm() - 2.0 * s.cross +
                             plan.wtw.cwiseProduct(s.hht).sum(),
                         0.0);
          pen_h += s.pen;
          const double rho =
              std::pow(op.forget, static_cast<double>(len) / n);
          a = rho * a + s.hht;
          b = rho * b + s.bw;
          if (terms.w.fixed < k) {
            // the W update's passes pay off against this block's product
            NmfParams pw = passes.w;
            if (p.passes == InnerPasses::automatic)
              pw.inner = detail::cost_rule_passes(m, len, k, x.stored());
            detail::factor_update(wt, a, b, pw, plan.mu_eps, terms.w,
                                  work_w);
          }
        });
    if (!done) {
      o.interrupted = true;
      return o;
    }
    o.loss = relative_error(sq, x2);
    o.finite = std::isfinite(o.loss) && wt.allFinite();
    const double gain = previous - o.loss;
    o.converged = o.finite && gain >= 0.0 && gain <= p.tol * o.loss;
    previous = o.loss;
    return o;
  };
  drive(p.max_iter, hooks, r, step, [&]() {
    wt = wt_prev;
    r.H = h_prev;
  });
  // every column of H given the final W: the exact error of the result
  if (r.status != Status::interrupted && r.status != Status::numerical_error) {
    detail::gram(wt, plan.wtw, p.threads);
    BlockSums s;
    if (detail::block_pass(source, plan, r.H, nullptr, nullptr, s,
                           p.threads)) {
      const double sq = std::max(
          x2 - 2.0 * s.cross + plan.wtw.cwiseProduct(s.hht).sum(), 0.0);
      r.loss.push_back(relative_error(sq, x2));
      r.objective = 0.5 * sq + s.pen +
                    detail::penalty_value(wt, terms.w, p.threads);
    } else {
      r.status = Status::interrupted;
    }
  }
  detail::transpose_chunks(wt, r.W, p.threads);
  return r;
}

}  // namespace nmfkit
