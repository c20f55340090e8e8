// Ang & Gillis's extrapolation between outer iterations (Neural Computation
// 2019, their Algorithm 1 and parameters), written once for every driver of
// nmf(): the in-memory Frobenius fit (nmf.hpp), the streamed fits
// (stream.hpp, stream_divergence.hpp) and the divergence fit
// (divergence.hpp). A driver runs an iteration from its current point, then
// asks Extrapolator::judge() what to do with it:
//  - restart: the iteration started from a pushed point and its objective
//    rose: go back to the last accepted plain iterate (beta shrinks);
//  - keep: accept the plain iterate and start the next iteration from it;
//  - push: accept it and start the next iteration from the pushed point
//    max(floor, z + beta (z - z_plain)) (beta grows).
// What each driver keeps beside the factors (Gram matrices, a pass's sums)
// is its own; PlainIterate holds the factors' copies for the two in-memory
// drivers.
#pragma once

#include <algorithm>
#include <cmath>

#include "driver.hpp"
#include "parallel.hpp"
#include "params.hpp"
#include "types.hpp"

namespace nmfkit {
namespace detail {

/// How the step beta moves (Ang & Gillis's Algorithm 1): times `grow` (their
/// gamma) after an accepted push, up to beta_max, which grows by `cap_grow`
/// (gamma_bar) up to `cap`; divided by `shrink` (eta) after a rejected one,
/// beta_max then falling to the last accepted step. The defaults are their
/// parameters (beta0 = 0.5, eta = 1.5, gamma = 1.01, gamma_bar = 1.005).
struct ExtrapolationRule {
  double grow = 1.01, shrink = 1.5, cap_grow = 1.005, cap = 1.0;
};

/// The rule of the in-memory KL coordinate descent (divergence.hpp):
/// fastTopics' faster growth (beta times 1.1, beta_max times 1.05 up to
/// 0.99, divided by 4/3 on a restart; Carbonetto et al.'s
/// fit_poisson_nmf() defaults). Measured on bench/kl.R's problems at rank
/// 10 from init_poisson_nmf(): iterations to fastTopics' 100-iteration
/// divergence x (1 + 1e-4) 42 -> 24 (planted counts) and 73 -> 67
/// (pbmc_facs), and a lower divergence after 60 and 110 iterations on both
/// (bench/README.md); growth 1.05-1.3 gave 24-27 on the planted problem.
/// Every other fit keeps Ang and Gillis's rule: the multiplicative updates,
/// whose streamed fit must take the in-memory fit's iterations, and the
/// streamed coordinate descent, whose W step (a diagonal Newton step from
/// one pass's sums) is not the in-memory one: under the faster growth it
/// ended 1.29e-7 above the in-memory deviance after 1,500 iterations in
/// test-stream-divergence.R, against 6.4e-8 with Ang and Gillis's rule.
inline ExtrapolationRule divergence_extrapolation(double beta,
                                                  Method method) {
  ExtrapolationRule r;
  if (beta == 1.0 && method == Method::cd) {
    r.grow = 1.1;
    r.shrink = 4.0 / 3.0;
    r.cap_grow = 1.05;
    r.cap = 0.99;
  }
  return r;
}

/// Ang & Gillis's extrapolation parameters and restart rule.
struct Extrapolation {
  ExtrapolationRule rule;
  double beta = 0.5, beta_max = rule.cap, beta_prev = 0.5;
  double best = INFINITY;  // the objective of the current plain iterate
  /// After an iteration with objective e: true accepts it (beta grows), false
  /// rejects it (beta shrinks; restart from the plain iterate). An iteration
  /// that started from a plain iterate (`pushed` false) is a descent step of
  /// the solver itself and always accepted, so rounding noise in the loss
  /// of a nearly exact fit cannot stall it.
  bool accept(double e, bool pushed) {
    if (pushed && e > best) {
      beta_max = beta_prev;
      beta /= rule.shrink;
      return false;
    }
    best = e;
    beta_prev = beta;
    beta = std::min(beta_max, rule.grow * beta);
    beta_max = std::min(rule.cap, rule.cap_grow * beta_max);
    return true;
  }
};

/// What a driver does with an iteration it has just run.
enum class Verdict { restart, keep, push };

/// The state machine of the extrapolated drivers: the parameters, whether
/// the current point is a pushed one, and the switch that stops pushing for
/// good once the violation is within sqrt(tol) of the first accepted one
/// (near the optimum, pushes along the scaling ambiguity of (W, H) change
/// the loss by rounding only and keep the violation from falling, so the
/// last stretch to `tol` runs plain).
class Extrapolator {
 public:
  explicit Extrapolator(double tol, ExtrapolationRule rule = {})
      : sqrt_tol_(std::sqrt(tol)) {
    ex_.rule = rule;
    ex_.beta_max = rule.cap;
  }
  /// The step of the last push (set by judge()).
  double beta() const { return ex_.beta; }
  /// Whether the next accepted iteration pushes.
  bool pushing() const { return pushing_; }
  /// The step an accepted iteration would push with next: the streamed
  /// drivers push inside the pass, before the iteration is judged.
  double next_beta() const {
    Extrapolation next = ex_;
    next.accept(-INFINITY, false);
    return next.beta;
  }
  /// The verdict on a finite iteration of objective `objective` (in any
  /// fixed units) whose projected-gradient violation was `viol`.
  Verdict judge(double objective, double viol) {
    if (!ex_.accept(objective, pushed_)) {
      pushed_ = false;
      return Verdict::restart;
    }
    if (first_viol_ < 0.0) first_viol_ = viol;
    if (pushing_ && viol <= sqrt_tol_ * first_viol_) pushing_ = false;
    pushed_ = pushing_;
    return pushing_ ? Verdict::push : Verdict::keep;
  }

 private:
  Extrapolation ex_;
  double sqrt_tol_;
  bool pushed_ = false;   // the current point is a pushed one
  bool pushing_ = true;   // pushes still pay off
  double first_viol_ = -1.0;
};

/// Ang & Gillis's extrapolated point max(0, z + beta (z - old)) of z (k x
/// cols) into out; the first `fixed` rows (fixed components) are copied,
/// never pushed, so they stay bit for bit what they were. Entrywise, so
/// `out` may be `old` itself (PlainIterate::push()).
inline void push_factor(const Mat& z, const Mat& old, double beta,
                        Index fixed, int threads, Mat& out) {
  const Index kf = z.rows() - fixed;
  out.resize(z.rows(), z.cols());
  Parallel(threads).for_chunks(z.cols(), [&](Index c0, Index len) {
    out.middleCols(c0, len).topRows(fixed) =
        z.middleCols(c0, len).topRows(fixed);
    out.middleCols(c0, len).bottomRows(kf) =
        (z.middleCols(c0, len).bottomRows(kf) +
         beta * (z.middleCols(c0, len).bottomRows(kf) -
                 old.middleCols(c0, len).bottomRows(kf)))
            .cwiseMax(0.0);
  }, 10.0 * static_cast<double>(z.size()));
}

/// The extrapolated point of a divergence fit, max(z / 10, z + beta (z -
/// old)): a pushed entry never falls below a tenth of its plain value, so
/// where the plain iterate fits every positive entry (W H > 0) the pushed
/// one does too, at any scale of the data. Fixed rows (z = old) stay bit
/// for bit what they were. Entrywise, so `out` may be `old` itself.
inline void push_positive(const Mat& z, const Mat& old, double beta,
                          int threads, Mat& out) {
  out.resize(z.rows(), z.cols());
  Parallel(threads).for_chunks(z.cols(), [&](Index c0, Index len) {
    out.middleCols(c0, len) =
        (z.middleCols(c0, len) +
         beta * (z.middleCols(c0, len) - old.middleCols(c0, len)))
            .cwiseMax(0.1 * z.middleCols(c0, len));
  }, 10.0 * static_cast<double>(z.size()));
}

/// The last accepted plain iterate (W' and H) of an in-memory driver, what
/// the fit returns. The pushed point is written over the previous plain
/// iterate, then the two swap: two buffers per factor, not three (fresh
/// memory costs its page faults, 18 us a page on the bench machine).
struct PlainIterate {
  Mat wt, h;
  void start(const Mat& wt0, const Mat& h0) {
    wt = wt0;
    h = h0;
  }
  /// restart: the current point becomes the plain iterate again.
  void restore(Mat& wt_cur, Mat& h_cur) const {
    wt_cur = wt;
    h_cur = h;
  }
  /// keep: the current point is the new plain iterate.
  void keep(const Mat& wt_cur, const Mat& h_cur, int threads) {
    copy_chunks(wt_cur, wt, threads);
    copy_chunks(h_cur, h, threads);
  }
  /// push: the current point becomes the plain iterate and push_w(z, old,
  /// out), push_h(z, old, out) write the pushed point, which becomes the
  /// current one (`out` is `old`: each writes entrywise over the previous
  /// plain iterate, which is then swapped in as the current point).
  template <class PushW, class PushH>
  void push(Mat& wt_cur, Mat& h_cur, PushW&& push_w, PushH&& push_h) {
    push_w(wt_cur, wt, wt);
    push_h(h_cur, h, h);
    wt.swap(wt_cur);  // the plain iterate; wt_cur the pushed point
    h.swap(h_cur);
  }
};

/// The loop of every nmf() driver (nmf.hpp, divergence.hpp, stream.hpp,
/// stream_divergence.hpp) around its step: drive() it; a step that is not
/// finite rolls back to (wt_prev, h_prev), which step() saved, unless the
/// fit extrapolates; then the first violation and, with extrapolation, the
/// last accepted plain iterate (wt_plain, h_plain), what the fit returns
/// whatever ended the loop.
template <class Hooks, class Step>
void drive_fit(int max_iter, bool extrapolate, Hooks& hooks, Result& r,
               const RelativeTest& test, Step&& step, Mat& wt,
               const Mat& wt_prev, const Mat& h_prev, Mat& wt_plain,
               Mat& h_plain) {
  drive(max_iter, hooks, r, step, [&]() {
    if (extrapolate) return;  // the plain iterate below
    wt = wt_prev;
    r.H = h_prev;
  });
  r.first_violation = test.first();
  if (extrapolate) {
    wt = std::move(wt_plain);
    r.H = std::move(h_plain);
  }
}

}  // namespace detail
}  // namespace nmfkit
