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
#include "hooks.hpp"
#include "loss.hpp"
#include "nmf.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// What a block's update needs (the same for every block of a pass; it is
/// what travels to wherever a block is read): W' and W'W, the H update's
/// settings, and whether to push.
struct StreamPlan {
  Mat wt;   // k x m
  Mat wtw;  // k x k
  NmfParams h;                // the H update: passes fixed, chunk set
  double mu_eps = 0.0;        // absolute guard of multiplicative updates
  detail::FactorTerms terms;  // penalties and fixed rows of H
  bool update = true;         // false: only the sums of the H given
  bool push = false;          // also the pushed point's H and sums
  double beta = 0.0;          // its step
};

/// A block's (or a pass's) terms. With columns J of H:
/// viol: the H update's projected-gradient violation; cross: sum of
/// H_J * (W'X_J) (for the loss); pen: H_J's penalty; hht: H_J H_J';
/// bw: H_J X_J' (k x m). With a push: hht_push, the pushed point's Gram,
/// and bw_clamp, C_J X_J' for the part C of the pushed point that its
/// clamp at zero added to the linear push L = H + beta (H - H_plain): the
/// pushed point is L + C, so its product with X' is
/// bw + beta (bw - H_plain X') + bw_clamp, and only the clamped entries
/// cost a product (push_sums()).
struct BlockSums {
  double viol = 0.0, cross = 0.0, pen = 0.0;
  Mat hht, bw, hht_push, bw_clamp;

  /// Adds o's terms: a pass sums its blocks in block order, whoever
  /// computed them, so any split of the work gives the same bits.
  void add(const BlockSums& o) {
    viol += o.viol;
    cross += o.cross;
    pen += o.pen;
    accumulate(hht, o.hht);
    accumulate(bw, o.bw);
    accumulate(hht_push, o.hht_push);
    accumulate(bw_clamp, o.bw_clamp);
  }

 private:
  static void accumulate(Mat& a, const Mat& b) {
    if (b.size() == 0) return;
    if (a.size() == 0) {
      a = b;
    } else {
      a += b;
    }
  }
};

/// One block: x (m x len), hb its columns of H (k x len, updated in place
/// when plan.update). With plan.push, h_plain holds the block's columns of
/// the last accepted plain iterate and h_push receives the pushed point
/// max(0, hb + beta (hb - h_plain)).
template <class DataT>
BlockSums stream_block(const DataT& x, const StreamPlan& plan, Mat& hb,
                       const Mat* h_plain, Mat* h_push, int threads) {
  const Index k = hb.rows();
  require(x.cols() == hb.cols() && plan.wt.rows() == k &&
              plan.wt.cols() == x.rows(),
          "stream_block: a block must be m x len with H k x len");
  BlockSums s;
  if (plan.update) {
    Mat bh;
    x.left_mult(plan.wt, bh, threads);  // W'X_J, k x len
    NmfParams q = plan.h;
    q.threads = threads;
    detail::FreeSystem work;
    s.viol = detail::factor_update(hb, plan.wtw, bh, q, plan.mu_eps,
                                   plan.terms, work);
    s.cross = hb.cwiseProduct(bh).sum();
    s.pen = detail::penalty_value(hb, plan.terms, threads);
  }
  detail::gram(hb, s.hht, threads);
  x.left_mult_t(hb, s.bw, threads);
  if (plan.push) {
    require(h_plain != nullptr && h_push != nullptr &&
                h_plain->cols() == hb.cols(),
            "stream_block: a push needs the plain iterate");
    detail::push_factor(hb, *h_plain, plan.beta, plan.terms.fixed, threads,
                        *h_push);
    detail::gram(*h_push, s.hht_push, threads);
    // the entries push_factor() clamped: its own expression, negative
    std::vector<Entry> clamped;
    for (Index j = 0; j < hb.cols(); ++j)
      for (Index t = plan.terms.fixed; t < k; ++t) {
        const double lin =
            hb(t, j) + plan.beta * (hb(t, j) - (*h_plain)(t, j));
        if (lin < 0.0) clamped.push_back(Entry{t, j, -lin});
      }
    s.bw_clamp = Mat::Zero(k, x.rows());
    x.add_entries_t(clamped, s.bw_clamp);
  }
  return s;
}

namespace detail {
/// The pushed point's H X', from a pass's sums (BlockSums) and the plain
/// iterate's: bw + beta (bw - bw_plain) + bw_clamp.
inline void push_sums(const BlockSums& s, const Mat& bw_plain, double beta,
                      Mat& out) {
  out = s.bw + beta * (s.bw - bw_plain);
  out += s.bw_clamp;
}
}  // namespace detail

/// A source of blocks: rows(), cols(), sq_norm() (||X||^2), stored()
/// (stored entries, for the passes' cost rule), and
///   template <class F> bool for_blocks(F&& f)
/// which calls f(j0, len, data) for every block of columns [j0, j0 + len),
/// in order, with the block's data object (DenseData, SparseData); false
/// means the host interrupted. Blocks may have any widths whose edges fall
/// on the chunks of the H update (StreamPlan::h.chunk). A source may also
/// run a whole pass elsewhere (RSource: futures), as pass() below does here.
namespace detail {

/// One pass over the blocks of `source`: stream_block() on each, the
/// blocks' columns of h (and of *h_push) written, their terms summed in
/// block order with BlockSums::add(). False when the host interrupted.
template <class Source>
bool block_pass(Source& source, const StreamPlan& plan, Mat& h,
                const Mat* h_plain, Mat* h_push, BlockSums& total,
                int threads) {
  if (h_push != nullptr) h_push->resize(h.rows(), h.cols());
  return source.for_blocks([&](Index j0, Index len, const auto& x) {
    Mat hb = h.middleCols(j0, len), hp, hpush;
    if (h_plain != nullptr) hp = h_plain->middleCols(j0, len);
    total.add(stream_block(x, plan, hb, h_plain ? &hp : nullptr,
                           h_push ? &hpush : nullptr, threads));
    h.middleCols(j0, len) = hb;
    if (h_push != nullptr) h_push->middleCols(j0, len) = hpush;
  });
}

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
  detail::Extrapolation ex;
  bool pushed = false;
  bool pushing = p.extrapolate;
  double first_viol = -1.0;
  RelativeTest test(p.tol);
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
    plan.push = p.extrapolate && pushing;
    if (plan.push) {
      detail::Extrapolation next = ex;
      next.accept(-INFINITY, false);
      plan.beta = next.beta;
    }
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
    if (!ex.accept(relative_error(sq + 2.0 * pen, x2), pushed)) {
      // restart from the plain iterate, whose sums were kept
      wt = wt_plain;
      r.H = h_plain;
      bw = bw_plain;
      hht = hht_plain;
      pushed = false;
      o.loss = plain_loss;
      return o;
    }
    plain_loss = o.loss;
    objective = 0.5 * sq + pen;
    o.converged = test(viol);
    if (first_viol < 0.0) first_viol = viol;
    if (pushing && viol <= std::sqrt(p.tol) * first_viol) pushing = false;
    if (!pushing) {
      detail::copy_chunks(wt, wt_plain, p.threads);
      detail::copy_chunks(r.H, h_plain, p.threads);
      bw = std::move(s.bw);
      hht = std::move(s.hht);
      bw_plain = bw;
      hht_plain = hht;
      pushed = false;
      return o;
    }
    // the pass pushed H with ex.beta (the step accept() just took): push W
    // with it too and start the next iteration from the pushed point
    detail::push_factor(wt, wt_plain, ex.beta, terms.w.fixed, p.threads,
                        wt_next);
    wt_plain.swap(wt);
    wt.swap(wt_next);
    h_plain.swap(r.H);
    r.H.swap(h_push);
    detail::push_sums(s, bw_plain, ex.beta, bw);
    bw_plain = std::move(s.bw);
    hht_plain = std::move(s.hht);
    hht = std::move(s.hht_push);
    pushed = true;
    return o;
  };
  drive(p.max_iter, hooks, r, step, [&]() {
    if (p.extrapolate) return;  // the plain iterate below
    wt = wt_prev;
    r.H = h_prev;
  });
  if (p.extrapolate) {
    wt = std::move(wt_plain);
    r.H = std::move(h_plain);
  }
  h_push = Mat();  // before the result's copies
  detail::transpose_chunks(wt, r.W, p.threads);
  r.objective = objective;
  return r;
}

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

/// A source over data held in memory, cut into column blocks of `block`
/// columns (a multiple of the H update's chunk, or all columns): the core
/// tests' reference. with_block(j0, len, fn) calls fn(data) with the
/// block's data object (DenseData, SparseData).
template <class WithBlock>
class BlockSource {
 public:
  BlockSource(Index m, Index n, double x2, double stored, Index block,
              WithBlock with_block, int threads)
      : m_(m), n_(n), x2_(x2), stored_(stored), block_(block),
        with_block_(std::move(with_block)), threads_(threads) {}
  Index rows() const { return m_; }
  Index cols() const { return n_; }
  double sq_norm() const { return x2_; }
  double stored() const { return stored_; }
  template <class F>
  bool for_blocks(F&& f) {
    for (Index j0 = 0; j0 < n_; j0 += block_) {
      const Index len = std::min(block_, n_ - j0);
      with_block_(j0, len, [&](const auto& x) { f(j0, len, x); });
    }
    return true;
  }
  bool pass(const StreamPlan& plan, Mat& h, const Mat* h_plain, Mat* h_push,
            BlockSums& total) {
    return detail::block_pass(*this, plan, h, h_plain, h_push, total,
                              threads_);
  }

 private:
  Index m_, n_;
  double x2_, stored_;
  Index block_;
  WithBlock with_block_;
  int threads_;
};

}  // namespace nmfkit
