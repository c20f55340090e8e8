// The per-block work of every streamed fit (stream.hpp, stream_divergence.hpp,
// online.hpp) and the pass that sums it: a block of columns X_J is read,
// its columns of H are updated given W exactly as the in-memory fit updates
// them, and the block returns its terms of the next W update (BlockSums),
// which a pass adds up in block order whoever computed them, so every split
// of the work (threads, futures) gives the same bits.
//  - Frobenius: H X_J' and H_J H_J' (the W update is nmf()'s, from them);
//  - a beta-divergence: the numerator and denominator of a multiplicative
//    W update (for KL from the nonzeros and the row sums of H only).
// The source a pass reads is described in source.hpp.
#pragma once

#include <cmath>
#include <vector>

#include "data.hpp"
#include "divergence_kernels.hpp"
#include "extrapolate.hpp"
#include "hooks.hpp"
#include "loss.hpp"
#include "nmf.hpp"
#include "parallel.hpp"
#include "types.hpp"
#include "weights.hpp"

namespace nmfkit {

/// The loss a streamed pass works for: the Frobenius norm (StreamPlan's h,
/// mu_eps, wtw), or the beta-divergence of exponent `beta` (KL at 1) with
/// the H update `method` (cd: KL only) and `inner` passes per column.
struct StreamLoss {
  LossKind kind = LossKind::frobenius;  // divergence: beta, method, inner
  double beta = 2.0;
  Method method = Method::mu;
  int inner = 1;
};

/// What a block's update needs (the same for every block of a pass; it is
/// what travels to wherever a block is read): W' (and W'W), the H update's
/// settings, and whether to push.
struct StreamPlan {
  Mat wt;   // k x m
  Mat wtw;  // k x k (Frobenius)
  StreamLoss loss;
  NmfParams h;                // the Frobenius H update: passes fixed, chunk set
  double mu_eps = 0.0;        // absolute guard of multiplicative updates
  detail::FactorTerms terms;  // penalties and fixed rows of H
  bool update = true;         // false: only the sums of the H given
  bool push = false;          // also the pushed point's H and sums
  double beta = 0.0;          // its step
  Mat wt_push;  // a divergence's pushed W' (its sums are at the pushed point)
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
/// Under a divergence: div, the block's divergence sum d(x | W H_J) after
/// the update; wnum and wden, the block's terms of the W update's
/// numerator and denominator (divergence_w_sums()), and with a push
/// wnum_push, wden_push, those at the pushed point.
struct BlockSums {
  double viol = 0.0, cross = 0.0, pen = 0.0, div = 0.0;
  Mat hht, bw, hht_push, bw_clamp;
  Mat wnum, wden, wnum_push, wden_push;

  /// Adds o's terms: a pass sums its blocks in block order, whoever
  /// computed them, so any split of the work gives the same bits.
  void add(const BlockSums& o) {
    viol += o.viol;
    cross += o.cross;
    pen += o.pen;
    div += o.div;
    accumulate(hht, o.hht);
    accumulate(bw, o.bw);
    accumulate(hht_push, o.hht_push);
    accumulate(bw_clamp, o.bw_clamp);
    accumulate(wnum, o.wnum);
    accumulate(wden, o.wden);
    accumulate(wnum_push, o.wnum_push);
    accumulate(wden_push, o.wden_push);
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

namespace detail {

/// stream_block() under the Frobenius loss: nmf()'s H update of the
/// block's columns, then the block's terms of the next W update.
template <class DataT>
BlockSums frobenius_block(const DataT& x, const StreamPlan& plan, Mat& hb,
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


/// The block's nonzero entries by column, stored zeros dropped (as the
/// in-memory fit's CountData, so both see the same entries).
inline SpMat block_counts(const DenseData& x) {
  return x.dense().sparseView(0.0, 0.0);
}
template <class SpT>
SpMat block_counts(const SparseData<SpT>& x) {
  SpMat s = x.sparse();
  s.prune([](Index, Index, const double& v) { return v != 0.0; });
  s.makeCompressed();
  return s;
}

/// The block's terms of a W update under d_beta at the point (wt, h) (h
/// the block's columns; xr the block's nonzeros by row, len x m, the
/// transpose of its counts, formed once for both points of a push):
/// wnum(:, i) = sum_j x_ij y_ij^(beta-2) h_j and
/// wden(:, i) = sum_j y_ij^(beta-1) h_j, y = W h, over the block's columns
/// j, each row i summed in column order (rows in parallel, so any thread
/// count gives the same bits). Under KL the zeros enter the denominator
/// only, through the row sums of h: wden is k x 1 and a pass costs
/// O(nnz k); other betas form y a chunk of rows at a time (as the in-memory
/// beta update forms it a row at a time). With `newton` (KL), wnum is 3k x m:
/// below the numerator s, the curvature sum_j x_ij h_j^2 / y_ij^2 and the
/// numerator at w_it = 0, sum_j x_ij h_tj / (y_ij - w_it h_tj) (infinite
/// where that y would not be positive): what kl_coordinate()'s safeguarded
/// Newton step reads, for every coordinate at once.
inline void divergence_w_sums(const SpMat& xr, const Mat& wt, const Mat& h,
                              double beta, bool newton, int threads,
                              Mat& wnum, Mat& wden) {
  const Index k = h.rows(), m = wt.cols(), len = h.cols();
  wnum.setZero(newton ? 3 * k : k, m);
  const Parallel par(threads);
  if (beta == 1.0) {
    wden = h.rowwise().sum();
    par.for_chunks(m, [&](Index r0, Index l) {
      for (Index i = r0; i < r0 + l; ++i)
        for (SpMat::InnerIterator it(xr, i); it; ++it) {
          const auto hj = h.col(it.index());
          const double y = wt.col(i).dot(hj), r = it.value() / y;
          wnum.col(i).head(k).noalias() += r * hj;
          if (!newton) continue;
          auto curv = wnum.col(i).segment(k, k);
          auto zero = wnum.col(i).tail(k);
          for (Index t = 0; t < k; ++t) {
            curv[t] += r / y * hj[t] * hj[t];
            if (hj[t] == 0.0) continue;
            const double y0 = y - wt(t, i) * hj[t];
            zero[t] += y0 > 0.0 ? it.value() * hj[t] / y0 : INFINITY;
          }
        }
    }, (newton ? 10.0 : 4.0) * static_cast<double>(k) * xr.nonZeros());
    return;
  }
  wden.resize(k, m);
  par.for_chunks(m, [&](Index r0, Index l) {
    const Mat y = wt.middleCols(r0, l).transpose() * h;  // l x len
    Mat x = Mat::Zero(l, len);
    for (Index i = r0; i < r0 + l; ++i)
      for (SpMat::InnerIterator it(xr, i); it; ++it)
        x(i - r0, it.index()) = it.value();
    // as beta_update(): a zero x adds nothing to the numerator, and a y
    // that underflowed counts as 1e-300
    const Eigen::ArrayXXd ys = y.array().max(1e-300);
    const Mat num =
        (x.array() == 0.0).select(0.0, x.array() * ys.pow(beta - 2.0));
    const Mat den = ys.pow(beta - 1.0);
    wnum.middleCols(r0, l).noalias() = h * num.transpose();
    wden.middleCols(r0, l).noalias() = h * den.transpose();
  }, 4.0 * static_cast<double>(k) * m * len);
}

/// stream_block() under a beta-divergence: the block's columns of H
/// updated exactly as the in-memory fit updates them (kl_update() or
/// beta_update() against W, penalties and fixed rows of plan.terms), their
/// divergence and penalty, and the block's terms of the next W update at
/// (W, H_J); with plan.push also the pushed point's H_J (push_positive())
/// and the terms at (plan.wt_push, pushed H_J). Without plan.update, the
/// divergence of the H given and the terms at it.
template <class DataT>
BlockSums divergence_block(const DataT& x, const StreamPlan& plan, Mat& hb,
                           const Mat* h_plain, Mat* h_push, int threads) {
  const SpMat xc = block_counts(x);
  const Vec no_weights;
  const Exceptions no_exceptions;
  const Side side{&xc, &no_weights, &no_exceptions, 1.0, plan.terms.fixed,
                  plan.terms.l1, plan.terms.l2};
  const Parallel par(threads);
  const double beta = plan.loss.beta;
  // KL coordinate descent's W takes the safeguarded Newton step
  const bool newton = beta == 1.0 && plan.loss.method == Method::cd;
  BlockSums s;
  NullHooks* none = nullptr;  // hooks are R's, on R's thread only
  if (plan.update) {
    if (beta == 1.0) {
      kl_update(hb, plan.wt, side, plan.loss.method, plan.loss.inner, par,
                none, s.viol, s.div);
    } else {
      beta_update(hb, plan.wt, side, beta, plan.loss.inner, par, none,
                  s.viol, s.div);
    }
    const auto rest = hb.bottomRows(hb.rows() - plan.terms.fixed);
    if (plan.terms.l1 != 0.0) s.pen += plan.terms.l1 * rest.sum();
    if (plan.terms.l2 != 0.0) s.pen += 0.5 * plan.terms.l2 * rest.squaredNorm();
  } else {
    s.div = divergence_of(hb, plan.wt, side, beta, par);
  }
  const SpMat xr = transpose_sparse(xc, threads);  // len x m: rows of xc
  divergence_w_sums(xr, plan.wt, hb, beta, newton, threads, s.wnum,
                    s.wden);
  if (plan.push) {
    require(h_plain != nullptr && h_push != nullptr &&
                h_plain->cols() == hb.cols(),
            "stream_block: a push needs the plain iterate");
    push_positive(hb, *h_plain, plan.beta, threads, *h_push);
    divergence_w_sums(xr, plan.wt_push, *h_push, beta, newton, threads,
                      s.wnum_push, s.wden_push);
  }
  return s;
}

}  // namespace detail

/// One block: x (m x len), hb its columns of H (k x len, updated in place
/// when plan.update), under the plan's loss. With plan.push, h_plain holds
/// the block's columns of the last accepted plain iterate and h_push
/// receives the pushed point. The one per-block entry of every streamed
/// pass, wherever the block is read (the glue's futures call it too).
template <class DataT>
BlockSums stream_block(const DataT& x, const StreamPlan& plan, Mat& hb,
                       const Mat* h_plain, Mat* h_push, int threads) {
  if (plan.loss.kind == LossKind::frobenius)
    return detail::frobenius_block(x, plan, hb, h_plain, h_push, threads);
  return detail::divergence_block(x, plan, hb, h_plain, h_push, threads);
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

}  // namespace detail
}  // namespace nmfkit
