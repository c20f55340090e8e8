// Stratified NMF (Chapman, Yaniv & Needell 2023): strata X_i (m features x
// n_i samples) share a basis W and each adds its own nonnegative
// shift v_i, X_i ~ v_i 1' + W H_i, minimising sum_i ||X_i - v_i 1' - W H_i||^2
// by the paper's multiplicative updates (transposed: the paper stores samples
// as rows, its H is our W', its W(i) our H_i').
//
// The strata are the columns of one data matrix X labelled by a group index,
// so the large products are plain products with all of X (sum_i X_i H_i' =
// X H', W'X_i are column blocks of W'X) and sparse X stays sparse: the
// rank-one shift terms only ever enter through small matrices.
#pragma once

#include <cmath>
#include <vector>

#include "data.hpp"
#include "driver.hpp"
#include "hooks.hpp"
#include "nnls.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// Which factors the W update sees: the paper's Algorithm 1 (Gauss-Seidel,
/// W from the new H, covered by its monotonicity theorem) or the reference
/// code (Jacobi, W and H both from the old factors).
enum class UpdateOrder { gauss_seidel, jacobi };

/// How each block moves: the paper's multiplicative rules, or exact block
/// coordinate descent on the same objective (HALS): V in closed form, then
/// H and W by `inner` cyclic passes over the components, each on its Gram
/// system (the order is Gauss-Seidel; `order` and `v_updates` are unused).
enum class StratifiedRule { multiplicative, hals };

/// Settings of nmf_stratified().
struct StratifiedParams {
  UpdateOrder order = UpdateOrder::gauss_seidel;
  int max_iter = 100;
  int v_updates = 2;   // shift updates per iteration (the paper's M)
  /// Added to every denominator (the code's tol), relative to the data so
  /// that c * X takes the same steps as X: the shift denominators scale like
  /// rms(X) and those of W and H like rms(X)^1.5, and get eps times that.
  double eps = 1e-9;
  double tol = 0.0;    // > 0: stop when the loss falls by <= tol relatively
  int threads = 1;  // each loop goes parallel by the Parallel policy's rule
  StratifiedRule rule = StratifiedRule::multiplicative;
  /// hals: passes per factor update; a pass after the first runs only
  /// while the previous one removed more than a tenth of the first pass's
  /// violation. 1 (plain HALS) was fastest to a given loss on the paper's
  /// synthetic problem.
  int inner = 1;
};

/// Result: W (m x k), H (k x n, the caller's column order), V (m x strata),
/// loss[i] = sqrt(objective) after iteration i + 1,
/// normalized_loss = loss / ||X||_F, and the loss of the starting factors.
struct StratifiedResult : Result {
  Mat V;
  std::vector<double> normalized_loss;
  double initial_loss = 0.0;
};

namespace detail {

/// Per-stratum sums of the coefficients: column i of the result is H_i 1.
inline Mat group_col_sums(const Mat& h, const std::vector<int>& group,
                          int n_groups) {
  Mat g = Mat::Zero(h.rows(), n_groups);
  for (Index j = 0; j < h.cols(); ++j) g.col(group[j]) += h.col(j);
  return g;
}

/// The stratified objective from small matrices (no dense residual):
/// ||X||^2 + sum_i m_i ||v_i||^2 + <W'W, HH'> - 2 <R, V> - 2 <H, W'X>
/// + 2 <G, W'V>, where R holds the per-stratum row sums of X and G the
/// per-stratum column sums of H. Clamped at 0 against rounding.
inline double stratified_sq_error(double x2, const Vec& size, const Mat& v,
                                  const Mat& r, const Mat& h, const Mat& wtx,
                                  const Mat& wtw, const Mat& hht, const Mat& g,
                                  const Mat& wtv, const Parallel& par) {
  const Index k = h.rows();
  const double hx = par.sum(h.cols(), [&](Index j) {
    double s = 0.0;
    for (Index t = 0; t < k; ++t) s += h(t, j) * wtx(t, j);
    return s;
  }, 2.0 * static_cast<double>(h.size()));
  const double e = x2 + (v.colwise().squaredNorm().transpose().array() *
                         size.array()).sum() +
                   wtw.cwiseProduct(hht).sum() - 2.0 * r.cwiseProduct(v).sum() -
                   2.0 * hx + 2.0 * g.cwiseProduct(wtv).sum();
  return std::max(e, 0.0);
}

}  // namespace detail

/// Fits stratified NMF of X (m x n) from starting factors w (m x k), h
/// (k x n) and v (m x strata). group[j] in [0, strata) is the stratum
/// of column j of x; every stratum must have at least one column.
/// One iteration: v_updates shift updates (all with the same W, H), then H
/// and W by the multiplicative rules, in the order p.order. The loss is
/// checked for finiteness and the hooks polled once per iteration.
template <class DataT, class Hooks = NullHooks>
StratifiedResult nmf_stratified(const DataT& x, const std::vector<int>& group,
                                const Mat& w, const Mat& h, const Mat& v,
                                const StratifiedParams& p, Hooks& hooks) {
  const Index m = x.rows(), n = x.cols(), k = w.cols(), s = v.cols();
  require(w.rows() == m && h.rows() == k && h.cols() == n &&
              v.rows() == m && s >= 1 && k >= 1,
          "nmf_stratified: W must be m x k, H k x n, V m x strata");
  require(static_cast<Index>(group.size()) == n,
          "nmf_stratified: one stratum label per column");
  Vec size = Vec::Zero(s);  // samples per stratum
  for (int gi : group) {
    require(gi >= 0 && gi < s, "nmf_stratified: stratum label out of range");
    size[gi] += 1.0;
  }
  require((size.array() > 0).all(),
          "nmf_stratified: a stratum has no samples");
  require(p.max_iter >= 1 && p.v_updates >= 0 && p.eps >= 0 && p.tol >= 0 &&
              p.threads >= 1 && p.inner >= 1,
          "nmf_stratified: params");

  const Parallel par(p.threads);
  const int th = par.threads;  // for the data's products (policy inside)
  StratifiedResult res;
  Mat wt;  // k x m: a row of W per column, contiguous
  detail::transpose_chunks(w, wt, th);
  Mat& hm = res.H;
  Mat& vm = res.V;
  hm = h;
  vm = v;
  const double x2 = x.sq_norm();
  const double x_norm = std::sqrt(x2);
  const double rms =
      std::sqrt(x2 / (static_cast<double>(m) * static_cast<double>(n)));
  const double eps_v = p.eps * rms, eps = p.eps * rms * std::sqrt(rms);
  const Mat rsum = x.row_sums_by(group, static_cast<int>(s), th);  // m x s

  Mat wtx, xht, wtw, hht, g, wtv, wg;
  auto loss_now = [&]() {  // needs wtx = W'X of the current W
    wtw = wt * wt.transpose();
    hht = hm * hm.transpose();
    g = detail::group_col_sums(hm, group, static_cast<int>(s));
    wtv = wt * vm;
    return std::sqrt(detail::stratified_sq_error(x2, size, vm, rsum, hm, wtx,
                                                 wtw, hht, g, wtv, par));
  };
  x.left_mult(wt, wtx, th);
  res.initial_loss = loss_now();

  // W from the current H: its numerator X H' (as H X', k x m), HH' and G.
  auto prepare_w = [&]() {
    x.left_mult_t(hm, xht, th);
    hht = hm * hm.transpose();
    g = detail::group_col_sums(hm, group, static_cast<int>(s));
  };
  const double kd = static_cast<double>(k);
  double prev = res.initial_loss;
  Mat wt_prev, h_prev, v_prev;  // the last finite iterate
  Mat b;
  // cyclic passes on min 1/2 tr(Z'GZ) - tr(B'Z), as nmf()'s HALS
  auto passes = [&](Mat& z, const Mat& gram) {
    const double first = cd_pass(z, gram, b, th);
    for (int l = 2; l <= p.inner; ++l)
      if (cd_pass(z, gram, b, th) <= 0.1 * first) break;
  };
  // One HALS iteration: V exactly (v_i = max(0, mean over stratum i of
  // x_j - W h_j)), H given W and V (right-hand side W'x_j - W'v_i), W given
  // H and V (right-hand side H X' - G V'). g and wtw are current on entry.
  auto hals_step = [&]() {
    wg = wt.transpose() * g;  // m x s
    vm = ((rsum - wg).array().rowwise() / size.transpose().array())
             .cwiseMax(0.0)
             .matrix();
    wtv = wt * vm;
    b = wtx;
    for (Index j = 0; j < n; ++j) b.col(j) -= wtv.col(group[j]);
    passes(hm, wtw);
    prepare_w();
    b = xht;
    b.noalias() -= g * vm.transpose();
    passes(wt, hht);
  };
  // One iteration of the paper's multiplicative rules.
  auto mu_step = [&]() {
    // shifts: v_i <- v_i * rowsum_i / (m_i v_i + W H_i 1 + eps); g and wtw
    // are those of the current factors (left by loss_now)
    wg = wt.transpose() * g;  // m x s
    for (int rep = 0; rep < p.v_updates; ++rep) {
      vm = (vm.array() * rsum.array() /
            ((vm.array().rowwise() * size.transpose().array()) + wg.array() +
             eps_v))
               .matrix();
    }
    wtv = wt * vm;  // k x s
    if (p.order == UpdateOrder::jacobi) prepare_w();
    // coefficients: H_i <- H_i * W'X_i / (W'W H_i + (W'v_i) 1' + eps)
    par.for_chunks(n, [&](Index c0, Index len) {
      Mat den = wtw * hm.middleCols(c0, len);
      for (Index j = 0; j < len; ++j) den.col(j) += wtv.col(group[c0 + j]);
      hm.middleCols(c0, len).array() *=
          wtx.middleCols(c0, len).array() / (den.array() + eps);
    }, 2.0 * kd * kd * n);
    if (p.order == UpdateOrder::gauss_seidel) prepare_w();
    // basis: W <- W * X H' / (sum_i v_i (H_i 1)' + W HH' + eps), row by row
    par.for_chunks(m, [&](Index r0, Index len) {
      Mat den = hht * wt.middleCols(r0, len);
      den.noalias() += g * vm.middleRows(r0, len).transpose();
      wt.middleCols(r0, len).array() *=
          xht.middleCols(r0, len).array() / (den.array() + eps);
    }, 2.0 * kd * (kd + s) * m);
  };
  auto step = [&](int) {
    wt_prev = wt;
    h_prev = hm;
    v_prev = vm;
    if (p.rule == StratifiedRule::hals)
      hals_step();
    else
      mu_step();
    x.left_mult(wt, wtx, th);
    StepOutcome o;
    o.loss = loss_now();
    o.converged = p.tol > 0 && prev - o.loss <= p.tol * prev;
    prev = o.loss;
    return o;
  };
  drive(p.max_iter, hooks, res, step, [&]() {
    wt = wt_prev;
    hm = h_prev;
    vm = v_prev;
  });
  for (double l : res.loss)
    res.normalized_loss.push_back(x_norm > 0 ? l / x_norm : 0.0);
  detail::transpose_chunks(wt, res.W, th);
  return res;
}

/// Coefficients of new samples of known strata with W and V held fixed:
/// for each column x_j of stratum g_j, argmin_{h >= 0} ||x_j - v_g - W h||,
/// i.e. NNLS with right-hand side W'x_j - W'v_g, by coordinate descent from
/// zero (see nnls_cd for tol and max_passes). The host may interrupt
/// between chunks of the product and of every pass; the result is then
/// incomplete and hooks.check_interrupt() stays true.
template <class DataT, class Hooks = NullHooks>
Mat stratified_coef(const DataT& x, const std::vector<int>& group,
                    const Mat& w, const Mat& v, double tol, int max_passes,
                    int threads, Hooks&& hooks = Hooks()) {
  require(w.rows() == x.rows() && v.rows() == x.rows() &&
              static_cast<Index>(group.size()) == x.cols(),
          "stratified_coef: dimensions");
  for (int gi : group)
    require(gi >= 0 && gi < v.cols(), "stratified_coef: stratum label");
  const Mat wt = w.transpose();
  Mat b;
  Mat h = Mat::Zero(w.cols(), x.cols());
  if (!x.left_mult(wt, b, threads, &hooks)) return h;
  const Mat wtv = wt * v;
  for (Index j = 0; j < b.cols(); ++j) b.col(j) -= wtv.col(group[j]);
  nnls_cd(h, wt * w, b, tol, max_passes, threads, hooks);
  return h;
}

}  // namespace nmfkit
