// Entropic optimal transport between histograms, computed so that no
// epsilon underflows or overflows (kernels in ot_kernel.hpp): the stabilised
// semi-dual value and gradient used by Wasserstein NMF, and log-domain
// Sinkhorn for plain OT between two histograms.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "driver.hpp"
#include "hooks.hpp"
#include "ot_kernel.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

namespace detail {

/// Column chunks of the OT kernels: wide enough (>= 64 columns, at most 16
/// chunks) that each chunk's kernel product amortises packing the kernel.
/// Fixed by n alone, so 1 and N threads give the same bits.
constexpr ChunkShape kOtChunks{64, 16};

}  // namespace detail

/// log(x) where x > 0 and -inf where x == 0, elementwise.
inline Mat safe_log(const Mat& x) {
  return x.unaryExpr([](double v) {
    return v > 0 ? std::log(v) : detail::kNegInf;
  });
}

namespace detail {

constexpr double kFastTiny = 1e-200;
constexpr double kFastHuge = 1e200;

/// The semi-dual of the columns of x at z = g / eps, fully in the log
/// domain (exact for any epsilon): values per column and the gradient.
inline void semidual_log(const OtKernel& kernel, const Mat& x,
                         const Mat& log_x, const Mat& z, Mat& grad,
                         Vec& value) {
  const Index m = x.rows(), l = x.cols();
  const double eps = kernel.epsilon();
  Mat ell(m, l), z2(m, l);
  kernel.log_conv(z, ell, false, &x);
  for (Index j = 0; j < l; ++j) {
    double v = 0.0;
    for (Index a = 0; a < m; ++a) {
      if (x(a, j) > 0) {
        v += x(a, j) * (ell(a, j) - log_x(a, j) + 1.0);
        z2(a, j) = log_x(a, j) - ell(a, j);
      } else {
        z2(a, j) = kNegInf;
      }
    }
    value[j] = eps * v;
  }
  Mat r(m, l);
  kernel.log_conv(z2, r, true);
  grad = (z.array() + r.array()).exp().matrix();
}

}  // namespace detail

/// The entropic OT semi-dual summed over columns, with its gradient:
///   OT*(x, g) = eps sum_{a: x_a > 0} x_a (l_a - log x_a + 1),
///   l_a = LSE_b((g_b - C_ab) / eps),
///   grad_b = sum_a x_a exp((g_b - C_ab) / eps - l_a)
/// (the column marginal of the plan). x: m x n histograms, log_x =
/// safe_log(x), g: m x n. Writes grad (m x n) and, when `per_col` is given,
/// each column's value. Exact in the log domain for any epsilon.
inline double semidual(const OtKernel& kernel, const Mat& x, const Mat& log_x,
                       const Eigen::Ref<const Mat>& g, Eigen::Ref<Mat> grad,
                       int threads, Vec* per_col = nullptr) {
  const Index m = x.rows(), n = x.cols();
  require(kernel.size() == m && g.rows() == m && g.cols() == n,
          "semidual: dimensions do not match");
  const double eps = kernel.epsilon();
  if (per_col != nullptr) per_col->resize(n);
  const Parallel par(threads);
  return par.sum_by_chunk(n, [&](Index b, Index l) {
    // Fast path, two kernel products per column: u = exp((g - max g) / eps),
    // q = K u, l = max g / eps + log q, grad = u * K'(x / q). A column with
    // a q entry outside [kFastTiny, kFastHuge] where x > 0 has lost accuracy
    // there and goes through the log domain.
    const Mat z = g.middleCols(b, l) / eps;
    const Eigen::RowVectorXd beta = z.colwise().maxCoeff();
    const Mat u = (z.rowwise() - beta).array().exp().matrix();
    Mat q(m, l), w = Mat::Zero(m, l);
    kernel.apply(u, q, false);
    std::vector<Index> slow;
    Vec value = Vec::Zero(l);
    for (Index j = 0; j < l; ++j) {
      bool ok = true;
      for (Index a = 0; a < m && ok; ++a)
        ok = x(a, b + j) <= 0 ||
             (q(a, j) >= detail::kFastTiny && q(a, j) <= detail::kFastHuge);
      if (!ok) {
        slow.push_back(j);
        continue;
      }
      double v = 0.0;
      for (Index a = 0; a < m; ++a) {
        const double xa = x(a, b + j);
        if (xa > 0) {
          v += xa * (beta[j] + std::log(q(a, j)) - log_x(a, b + j) + 1.0);
          w(a, j) = xa / q(a, j);
        }
      }
      value[j] = eps * v;
    }
    Mat r(m, l);
    kernel.apply(w, r, true);
    grad.middleCols(b, l) = (u.array() * r.array()).matrix();
    if (!slow.empty()) {
      const Index ls = static_cast<Index>(slow.size());
      Mat zs(m, ls), xs(m, ls), lxs(m, ls), gs(m, ls);
      Vec vs(ls);
      for (Index c = 0; c < ls; ++c) {
        zs.col(c) = z.col(slow[c]);
        xs.col(c) = x.col(b + slow[c]);
        lxs.col(c) = log_x.col(b + slow[c]);
      }
      detail::semidual_log(kernel, xs, lxs, zs, gs, vs);
      for (Index c = 0; c < ls; ++c) {
        grad.col(b + slow[c]) = gs.col(c);
        value[slow[c]] = vs[c];
      }
    }
    if (per_col != nullptr) per_col->segment(b, l) = value;
    return value.sum();
  }, kernel.work_per_column() * n, detail::kOtChunks);
}

/// Result of log-domain Sinkhorn between the columns of a and b.
struct SinkhornResult {
  Vec cost;       ///< OT_eps = <P,C> + eps sum P (log P - 1), one per column
  Vec error;      ///< L1 error of the row marginal at the end, per column
  Mat f, g;       ///< dual potentials (m x n); -inf where the mass is zero
  std::vector<int> column_iterations;  ///< iterations each column ran
  int iterations = 0;
  Status status = Status::max_iter;
};

namespace detail {

/// One Sinkhorn iteration on the columns `cols` (g update, then the row
/// marginal error, then the f update for the columns still above tol).
/// Columns are gathered so that the kernel runs only on active ones.
inline void sinkhorn_step(const OtKernel& kernel, const Mat& a, const Mat& b,
                          const Mat& log_a, const Mat& log_b, double tol,
                          const std::vector<Index>& cols, SinkhornResult& res,
                          Mat& lf_out, std::vector<char>& done) {
  const Index m = a.rows(), l = static_cast<Index>(cols.size());
  const double eps = kernel.epsilon();
  Mat z(m, l), lse(m, l);
  for (Index c = 0; c < l; ++c) z.col(c) = res.f.col(cols[c]) / eps;
  kernel.log_conv(z, lse, true);
  for (Index c = 0; c < l; ++c) {
    const Index j = cols[c];
    for (Index i = 0; i < m; ++i)
      res.g(i, j) = b(i, j) > 0 ? eps * (log_b(i, j) - lse(i, c)) : kNegInf;
    z.col(c) = res.g.col(j) / eps;
  }
  kernel.log_conv(z, lse, false);
  for (Index c = 0; c < l; ++c) {
    const Index j = cols[c];
    double e = 0.0;
    for (Index i = 0; i < m; ++i) {
      const double r =
          a(i, j) > 0 ? std::exp(res.f(i, j) / eps + lse(i, c)) : 0.0;
      e += std::abs(r - a(i, j));
    }
    res.error[j] = e;
    lf_out.col(j) = lse.col(c);
    ++res.column_iterations[static_cast<size_t>(j)];
    if (e <= tol || !std::isfinite(e)) {
      done[static_cast<size_t>(j)] = 1;
      continue;
    }
    for (Index i = 0; i < m; ++i)
      res.f(i, j) = a(i, j) > 0 ? eps * (log_a(i, j) - lse(i, c)) : kNegInf;
  }
}

}  // namespace detail

namespace detail {

/// A Sinkhorn iteration as the driver sees it: the loss is the summed
/// row-marginal error (not finite: a numerical error), converged once every
/// column has stopped.
inline StepOutcome sinkhorn_outcome(const SinkhornResult& res,
                                    const std::vector<char>& done) {
  StepOutcome o;
  o.loss = res.error.sum();
  o.converged =
      std::all_of(done.begin(), done.end(), [](char d) { return d != 0; });
  return o;
}

/// One driven Sinkhorn iteration of the log-domain and symmetric solvers:
/// every fixed chunk of the n columns runs step(cols) on its columns not
/// yet done (skipped when none are), then the outcome as sinkhorn_outcome().
template <class Step>
StepOutcome sinkhorn_iteration(const Parallel& par, Index n, double work,
                               const SinkhornResult& res,
                               const std::vector<char>& done, Step&& step) {
  par.for_chunks(n, [&](Index c0, Index l) {
    std::vector<Index> cols;
    for (Index j = c0; j < c0 + l; ++j)
      if (!done[static_cast<size_t>(j)]) cols.push_back(j);
    if (!cols.empty()) step(cols);
  }, work, kOtChunks);
  return sinkhorn_outcome(res, done);
}

}  // namespace detail

/// Entropic OT between histograms a(:, j) and b(:, j) (m x n each, columns
/// summing to one) by Sinkhorn iterations on the potentials in the log
/// domain. Each column stops on its own once its row-marginal L1 error is
/// <= tol (its column marginal is exact after every iteration), so a column's
/// answer does not depend on the others; all stop after max_iter.
template <class Hooks = NullHooks>
SinkhornResult sinkhorn_log(const OtKernel& kernel, const Mat& a,
                            const Mat& b, int max_iter, double tol,
                            int threads, Hooks&& hooks = Hooks()) {
  const Index m = a.rows(), n = a.cols();
  require(kernel.size() == m && b.rows() == m && b.cols() == n,
          "sinkhorn: dimensions do not match");
  require(max_iter >= 1 && tol >= 0, "sinkhorn: bad settings");
  const double eps = kernel.epsilon();
  const Mat log_a = safe_log(a), log_b = safe_log(b);
  SinkhornResult res;
  res.f = Mat::Zero(m, n);
  res.g = Mat::Zero(m, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < m; ++i)
      if (a(i, j) <= 0) res.f(i, j) = detail::kNegInf;
  res.error = Vec::Constant(n, std::numeric_limits<double>::infinity());
  res.column_iterations.assign(static_cast<size_t>(n), 0);
  std::vector<char> done(static_cast<size_t>(n), 0);
  Mat lf(m, n);
  const Parallel par(threads);
  const double work = kernel.work_per_column() * n;
  const DriveResult d = drive(max_iter, hooks, nullptr, [&](int) {
    return detail::sinkhorn_iteration(
        par, n, work, res, done, [&](const std::vector<Index>& cols) {
          detail::sinkhorn_step(kernel, a, b, log_a, log_b, tol, cols, res,
                                lf, done);
        });
  });
  res.status = d.status;
  res.iterations = d.iterations;
  // Value of the plan P = exp((f + g - C) / eps), whose column marginals are
  // b: eps log P = f + g - C gives <P,C> + eps sum P (log P - 1) =
  // sum_a f_a r_a + sum_b g_b b_b - eps sum r, r = P 1.
  res.cost.resize(n);
  for (Index j = 0; j < n; ++j) {
    double fr = 0.0, gb = 0.0, mass = 0.0;
    for (Index i = 0; i < m; ++i) {
      if (a(i, j) > 0) {
        const double r = std::exp(res.f(i, j) / eps + lf(i, j));
        fr += res.f(i, j) * r;
        mass += r;
      }
      if (b(i, j) > 0) gb += res.g(i, j) * b(i, j);
    }
    res.cost[j] = fr + gb - eps * mass;
  }
  return res;
}

/// The plan exp((f_a + g_b - C_ab) / eps) of column j of a Sinkhorn result.
inline Mat sinkhorn_plan(const OtKernel& kernel, const SinkhornResult& r,
                         Index j) {
  const Mat c = kernel.dense_cost();
  const double eps = kernel.epsilon();
  const Index m = c.rows();
  Mat p(m, m);
  for (Index bb = 0; bb < m; ++bb)
    for (Index a = 0; a < m; ++a)
      p(a, bb) = std::exp((r.f(a, j) + r.g(bb, j) - c(a, bb)) / eps);
  return p;
}

}  // namespace nmfkit
