// Entropic OT of a histogram with itself, OT_eps(a, a), by the symmetric
// fixed-point iteration of Feydy, Sejourne, Vialard, Amari, Trouve and Peyre
// (AISTATS 2019, "Interpolating between optimal transport and MMD using
// Sinkhorn divergences"). For a symmetric cost the two dual potentials of
// OT(a, a) are equal, and averaging the potential with its softmin image
// converges in tens of iterations where plain Sinkhorn on (a, a) can
// oscillate for thousands. The self terms of the Sinkhorn divergence use it.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "driver.hpp"
#include "hooks.hpp"
#include "ot_kernel.hpp"
#include "sinkhorn.hpp"
#include "types.hpp"

namespace nmfkit {

namespace detail {

/// One symmetric iteration on the columns `cols`. With F the potential in
/// the a (x) a reference (finite on every bin) and
///   T(F)_i = -eps LSE_{j: a_j > 0}( log a_j + (F_j - C_ij) / eps ),
/// the plan P_ij = a_i a_j exp((F_i + F_j - C_ij) / eps) has row (= column)
/// sums r_i = a_i exp((F_i - T(F)_i) / eps). Records the L1 error of r, and
/// unless it is <= tol, updates F <- (F + T(F)) / 2 on the bins with mass
/// (a zero-mass bin is in no sum, so its F is never needed). With
/// `evaluate_only`, only T(F) and the error are refreshed (no update, not
/// counted as an iteration).
inline void symmetric_step(const OtKernel& kernel, const Mat& a,
                           const Mat& log_a, double tol,
                           const std::vector<Index>& cols, Mat& big_f,
                           Mat& t_out, SinkhornResult& res,
                           std::vector<char>& done,
                           bool evaluate_only = false) {
  const Index m = a.rows(), l = static_cast<Index>(cols.size());
  const double eps = kernel.epsilon();
  Mat z(m, l), lse(m, l), need(m, l);
  for (Index c = 0; c < l; ++c) {
    const Index j = cols[c];
    need.col(c) = a.col(j);
    for (Index i = 0; i < m; ++i)
      z(i, c) = a(i, j) > 0 ? log_a(i, j) + big_f(i, j) / eps : kNegInf;
  }
  // only the bins with mass need exact values (the others are not used)
  kernel.log_conv(z, lse, false, &need);
  for (Index c = 0; c < l; ++c) {
    const Index j = cols[c];
    double e = 0.0;
    for (Index i = 0; i < m; ++i) {
      if (a(i, j) <= 0) continue;
      t_out(i, j) = -eps * lse(i, c);
      const double r = a(i, j) * std::exp((big_f(i, j) - t_out(i, j)) / eps);
      e += std::abs(r - a(i, j));
    }
    res.error[j] = e;
    if (evaluate_only) continue;
    ++res.column_iterations[static_cast<size_t>(j)];
    if (e <= tol || !std::isfinite(e)) {
      done[static_cast<size_t>(j)] = 1;
      continue;
    }
    for (Index i = 0; i < m; ++i)
      if (a(i, j) > 0) big_f(i, j) = 0.5 * (big_f(i, j) + t_out(i, j));
  }
}

}  // namespace detail

/// Entropic OT of each column of a (m x n, columns summing to one) with
/// itself, OT_eps(a, a) = <P,C> + eps sum P (log P - 1), by the symmetric
/// iteration F <- (F + T(F)) / 2 (see detail::symmetric_step). Each column
/// stops on its own once the L1 error of the plan's row sums (its column
/// sums are the same) is <= tol; all stop after max_iter. The result has
/// the layout of sinkhorn_log(): f = g = F + eps log a (-inf where a is 0),
/// so the plan is exp((f_a + g_b - C_ab) / eps) as there. With a
/// non-symmetric cost the two potentials differ (and OT(a, a) is not that
/// of (C + C') / 2), so this runs sinkhorn_log() on (a, a) instead.
template <class Hooks = NullHooks>
SinkhornResult sinkhorn_symmetric(const OtKernel& kernel, const Mat& a,
                                  int max_iter, double tol, int threads,
                                  Hooks&& hooks = Hooks()) {
  if (!kernel.is_symmetric())
    return sinkhorn_log(kernel, a, a, max_iter, tol, threads, hooks);
  const Index m = a.rows(), n = a.cols();
  require(kernel.size() == m, "sinkhorn_symmetric: dimensions do not match");
  require(max_iter >= 1 && tol >= 0, "sinkhorn_symmetric: bad settings");
  const double eps = kernel.epsilon();
  const Mat log_a = safe_log(a);
  SinkhornResult res;
  Mat big_f = Mat::Zero(m, n), t_f = Mat::Zero(m, n);
  res.error = Vec::Constant(n, std::numeric_limits<double>::infinity());
  res.column_iterations.assign(static_cast<size_t>(n), 0);
  std::vector<char> done(static_cast<size_t>(n), 0);
  const Parallel par(threads);
  const double work = kernel.work_per_column() * n;
  const DriveResult d = drive(max_iter, hooks, nullptr, [&](int) {
    return detail::sinkhorn_iteration(
        par, n, work, res, done, [&](const std::vector<Index>& cols) {
          detail::symmetric_step(kernel, a, log_a, tol, cols, big_f, t_f,
                                 res, done);
        });
  });
  res.status = d.status;
  res.iterations = d.iterations;
  // Columns stopped by max_iter or an interrupt had F updated after their
  // last T(F): evaluate once more so that value and error belong to one F.
  std::vector<Index> open;
  for (Index j = 0; j < n; ++j)
    if (!done[static_cast<size_t>(j)]) open.push_back(j);
  if (!open.empty())
    detail::symmetric_step(kernel, a, log_a, tol, open, big_f, t_f, res,
                           done, true);
  // Value of the plan of F (t_f = T(F) there): with
  // f = F + eps log a, eps log P_ij = f_i + f_j - C_ij, so
  // <P,C> + eps sum P (log P - 1) = sum_i (2 f_i - eps) r_i.
  res.f.resize(m, n);
  res.cost.resize(n);
  for (Index j = 0; j < n; ++j) {
    double v = 0.0;
    for (Index i = 0; i < m; ++i) {
      if (a(i, j) <= 0) {
        res.f(i, j) = detail::kNegInf;
        continue;
      }
      res.f(i, j) = big_f(i, j) + eps * log_a(i, j);
      const double r = a(i, j) * std::exp((big_f(i, j) - t_f(i, j)) / eps);
      v += (2.0 * res.f(i, j) - eps) * r;
    }
    res.cost[j] = v;
  }
  res.g = res.f;
  return res;
}

}  // namespace nmfkit
