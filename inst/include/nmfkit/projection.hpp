// Euclidean projections used by the exemplar (DS3) blocks of SMRMF and
// f-SMRMF: onto the probability simplex (per column) and onto the
// l1,inf-norm ball {A : sum_i max_j |a_ij| <= tau} (Quattoni et al. 2009).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <vector>

#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// Projects v (length n) onto {z >= 0, sum z = 1} in place:
/// z = max(v - theta, 0) with theta = (sum_{v_j > theta} v_j - 1) / #{v_j >
/// theta}, the sort-based rule's threshold, found by Michelot's fixed point
/// (each pass drops the entries at or below the current theta; theta only
/// grows, so it ends after a few passes). `buf` is scratch.
inline void project_simplex(double* v, Index n, std::vector<double>& buf) {
  buf.assign(v, v + n);
  double theta = (std::accumulate(buf.begin(), buf.end(), 0.0) - 1.0) /
                 static_cast<double>(n);
  for (;;) {
    size_t kept = 0;
    double sum = 0.0;
    for (double u : buf) {
      if (u > theta) {
        buf[kept++] = u;
        sum += u;
      }
    }
    const bool same = kept == buf.size();
    buf.resize(kept);
    const double next = (sum - 1.0) / static_cast<double>(kept);
    if (same || !(next > theta)) {
      theta = next;
      break;
    }
    theta = next;
  }
  for (Index j = 0; j < n; ++j) v[j] = std::max(v[j] - theta, 0.0);
}

/// Projects every column of m onto the simplex, in parallel chunks.
inline void project_simplex_columns(Mat& m, int threads) {
  detail::for_chunks(m.cols(), threads, [&](Index b, Index l) {
    std::vector<double> buf;
    for (Index j = b; j < b + l; ++j) project_simplex(m.col(j).data(), m.rows(),
                                                      buf);
  }, 10.0 * static_cast<double>(m.size()));
}

namespace detail {

/// One row of the l1,inf projection: |a| sorted descending (u) and its
/// cumulative sums (s). cap(theta) is the mu with sum_j max(u_j - mu, 0) =
/// theta (0 when sum u <= theta); `active` gets the count of u_j > mu.
struct SortedRow {
  std::vector<double> u, s;
  double cap(double theta, Index* active = nullptr) const {
    const Index n = static_cast<Index>(u.size());
    if (n == 0 || s.back() <= theta) {
      if (active) *active = 0;
      return 0.0;
    }
    // smallest r with s_r - r u_{r+1} >= theta (u_{n+1} = 0): monotone in r
    Index lo = 1, hi = n;
    while (lo < hi) {
      const Index r = (lo + hi) / 2;
      const double next = r < n ? u[static_cast<size_t>(r)] : 0.0;
      if (s[static_cast<size_t>(r - 1)] - r * next >= theta) hi = r;
      else lo = r + 1;
    }
    if (active) *active = lo;
    return (s[static_cast<size_t>(lo - 1)] - theta) / static_cast<double>(lo);
  }
};

}  // namespace detail

/// Projects a (n x m) onto {||B||_{1,inf} = sum_i max_j |b_ij| <= tau}:
/// b_ij = sign(a_ij) min(|a_ij|, mu_i) with row caps mu_i(theta) and theta
/// such that sum_i mu_i = tau; theta is bracketed by bisection, then solved
/// exactly on the final active sets. Returns the a unchanged when feasible.
inline Mat project_l1inf(const Mat& a, double tau, int threads) {
  require(tau >= 0, "project_l1inf: tau must be >= 0");
  const Index rows = a.rows(), cols = a.cols();
  Vec rowmax(rows);
  for (Index i = 0; i < rows; ++i) rowmax[i] = a.row(i).cwiseAbs().maxCoeff();
  if (rowmax.sum() <= tau) return a;
  if (tau == 0.0) return Mat::Zero(rows, cols);
  std::vector<detail::SortedRow> sr(static_cast<size_t>(rows));
  detail::for_chunks(rows, threads, [&](Index b, Index l) {
    for (Index i = b; i < b + l; ++i) {
      auto& r = sr[static_cast<size_t>(i)];
      r.u.resize(static_cast<size_t>(cols));
      for (Index j = 0; j < cols; ++j) r.u[static_cast<size_t>(j)] =
          std::abs(a(i, j));
      std::sort(r.u.begin(), r.u.end(), std::greater<double>());
      r.s.resize(r.u.size());
      std::partial_sum(r.u.begin(), r.u.end(), r.s.begin());
    }
  }, 10.0 * static_cast<double>(a.size()));
  auto total = [&](double theta) {
    double t = 0.0;
    for (const auto& r : sr) t += r.cap(theta);
    return t;
  };
  // sum_i mu_i(theta) decreases from ||a||_{1,inf} > tau at 0 to 0
  double lo = 0.0, hi = 0.0;
  for (const auto& r : sr) hi = std::max(hi, r.s.back());
  for (int it = 0; it < 100 && hi - lo > 1e-15 * std::max(1.0, hi); ++it) {
    const double mid = 0.5 * (lo + hi);
    if (total(mid) > tau) lo = mid;
    else hi = mid;
  }
  // exact theta on the active sets at the bracket: mu_i = (s_{r_i} - theta)
  // / r_i for rows with r_i > 0, so sum_i mu_i = tau is linear in theta
  const double mid = 0.5 * (lo + hi);
  double num = 0.0, den = 0.0;
  for (const auto& r : sr) {
    Index act = 0;
    r.cap(mid, &act);
    if (act > 0) {
      num += r.s[static_cast<size_t>(act - 1)] / static_cast<double>(act);
      den += 1.0 / static_cast<double>(act);
    }
  }
  double theta = den > 0.0 ? (num - tau) / den : mid;
  if (!(theta >= lo - 1e-12 * hi && theta <= hi + 1e-12 * hi)) theta = mid;
  Mat b(rows, cols);
  detail::for_chunks(rows, threads, [&](Index b0, Index l) {
    for (Index i = b0; i < b0 + l; ++i) {
      const double mu = sr[static_cast<size_t>(i)].cap(theta);
      for (Index j = 0; j < cols; ++j) {
        const double v = a(i, j);
        b(i, j) = std::copysign(std::min(std::abs(v), mu), v);
      }
    }
  }, 2.0 * static_cast<double>(a.size()));
  return b;
}

}  // namespace nmfkit
