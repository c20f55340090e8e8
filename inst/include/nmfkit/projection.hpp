// Euclidean projections used by the exemplar (DS3) blocks of SMRMF and
// f-SMRMF: onto the probability simplex (per column) and onto the
// l1,inf-norm ball {A : sum_i max_j |a_ij| <= tau} (Quattoni et al. 2009).
#pragma once

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <vector>

#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// Projects v (length n) onto {z >= 0, sum z = 1} in place:
/// z = max(v - theta, 0) with theta = (sum_{v_j > theta} v_j - 1) / #{v_j >
/// theta}, the sort-based rule's threshold, found by Michelot's fixed point
/// (each pass drops the entries at or below the current theta; theta only
/// grows, so it ends after a few passes). `buf` is scratch. The first
/// theta is also at least max(v) - 1 (no entry of z exceeds 1), which leaves
/// few entries after the first pass; any start at or below the threshold
/// ends on the same kept set.
inline void project_simplex(double* v, Index n, std::vector<double>& buf) {
  double sum = 0.0, top = v[0];
  for (Index j = 0; j < n; ++j) {
    sum += v[j];
    top = std::max(top, v[j]);
  }
  double theta = std::max((sum - 1.0) / static_cast<double>(n), top - 1.0);
  buf.clear();
  double kept_sum = 0.0;
  for (Index j = 0; j < n; ++j) {
    if (v[j] > theta) {
      buf.push_back(v[j]);
      kept_sum += v[j];
    }
  }
  // Michelot's next theta from the first kept set (never below the start)
  theta = (kept_sum - 1.0) / static_cast<double>(buf.size());
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
  Parallel(threads).for_chunks(m.cols(), [&](Index b, Index l) {
    std::vector<double> buf;
    for (Index j = b; j < b + l; ++j) project_simplex(m.col(j).data(), m.rows(),
                                                      buf);
  }, 10.0 * static_cast<double>(m.size()));
}

namespace detail {

/// One row of the l1,inf projection, sorted lazily: u holds |a_i.|, its
/// first m entries sorted descending and u[m] the (m+1)-th largest (an
/// nth_element pivot), s the prefix sums of the sorted part. cap(theta) is
/// the mu with sum_j max(u_j - mu, 0) = theta (0 when sum u <= theta), from
/// the same sorted prefix sums a full sort gives: the prefix grows only
/// until it holds the active entries. `lower`/`upper` bound the row sum in
/// any summation order; only a row whose sum is within rounding of theta
/// needs the full sort to decide whether it is active.
struct SortedRow {
  std::vector<double> u, s;
  Index m = 0;
  double lower = 0.0, upper = 0.0;

  void load(const Mat& a, Index i) {
    const Index n = a.cols();
    u.resize(static_cast<size_t>(n));
    double sum = 0.0;
    for (Index j = 0; j < n; ++j) {
      u[static_cast<size_t>(j)] = std::abs(a(i, j));
      sum += u[static_cast<size_t>(j)];
    }
    // |fl(sum) - sum| <= (n - 1) eps/2 sum for nonnegative terms
    const double slack =
        2.0 * static_cast<double>(n) * std::numeric_limits<double>::epsilon();
    lower = sum * (1.0 - slack);
    upper = sum * (1.0 + slack);
    m = 0;
    s.clear();
  }
  double total() {
    extend(static_cast<Index>(u.size()));
    return s.back();
  }
  // sorts the prefix up to `want` entries (and places the pivot after it)
  void extend(Index want) {
    const Index n = static_cast<Index>(u.size());
    want = std::min(want, n);
    if (want <= m) return;
    auto first = u.begin() + m, mid = u.begin() + want;
    if (want < n) std::nth_element(first, mid, u.end(), std::greater<double>());
    std::sort(first, mid, std::greater<double>());
    s.resize(static_cast<size_t>(want));
    double acc = m > 0 ? s[static_cast<size_t>(m - 1)] : 0.0;
    for (Index r = m; r < want; ++r) {
      acc += u[static_cast<size_t>(r)];
      s[static_cast<size_t>(r)] = acc;
    }
    m = want;
  }
  double cap(double theta, Index* active = nullptr) {
    const Index n = static_cast<Index>(u.size());
    if (n == 0 || upper <= theta || (lower <= theta && total() <= theta)) {
      if (active) *active = 0;
      return 0.0;
    }
    // s_r - r u_{r+1} (u_{n+1} = 0) is monotone in r: grow the prefix until
    // it holds the smallest r with s_r - r u_{r+1} >= theta
    auto next = [&](Index r) { return r < n ? u[static_cast<size_t>(r)] : 0.0; };
    extend(std::max<Index>(m, 16));
    while (m < n && s[static_cast<size_t>(m - 1)] - m * next(m) < theta) {
      extend(4 * m);
    }
    Index lo = 1, hi = n;
    while (lo < hi) {
      const Index r = (lo + hi) / 2;
      if (r > m || s[static_cast<size_t>(r - 1)] - r * next(r) >= theta) hi = r;
      else lo = r + 1;
    }
    if (active) *active = lo;
    return (s[static_cast<size_t>(lo - 1)] - theta) / static_cast<double>(lo);
  }
};

}  // namespace detail

/// Projects a (rows x cols) onto {||B||_{1,inf} = sum_i max_j |b_ij| <= tau}:
/// b_ij = sign(a_ij) min(|a_ij|, mu_i) with row caps mu_i(theta) and theta
/// such that sum_i mu_i = tau; theta is bracketed by bisection, then solved
/// exactly on the final active sets. Returns the a unchanged when feasible.
/// Rows are sorted lazily (detail::SortedRow): the caps, and so the result,
/// are those of sorting every row, at a fraction of the cost when few
/// entries per row are active.
inline Mat project_l1inf(const Mat& a, double tau, int threads) {
  require(tau >= 0, "project_l1inf: tau must be >= 0");
  const Index rows = a.rows(), cols = a.cols();
  const Vec rowmax = a.cwiseAbs().rowwise().maxCoeff();
  if (rowmax.sum() <= tau) return a;
  if (tau == 0.0) return Mat::Zero(rows, cols);
  std::vector<detail::SortedRow> sr(static_cast<size_t>(rows));
  std::vector<double> caps(static_cast<size_t>(rows));
  const double work = 4.0 * static_cast<double>(cols);
  Parallel(threads).for_chunks(rows, [&](Index b, Index l) {
    for (Index i = b; i < b + l; ++i) sr[static_cast<size_t>(i)].load(a, i);
  }, work * static_cast<double>(rows));
  // every row's cap at theta (rows in parallel, each row's lazy state
  // touched by one thread), summed in row order
  auto total = [&](double theta) {
    Parallel(threads).for_chunks(rows, [&](Index b, Index l) {
      for (Index i = b; i < b + l; ++i) {
        caps[static_cast<size_t>(i)] = sr[static_cast<size_t>(i)].cap(theta);
      }
    }, work * static_cast<double>(rows));
    double t = 0.0;
    for (double c : caps) t += c;
    return t;
  };
  // sum_i mu_i(theta) decreases from ||a||_{1,inf} > tau at 0 to 0; the
  // bracket's top is the largest sorted row sum
  double top = 0.0;
  for (const auto& r : sr) top = std::max(top, r.lower);
  double lo = 0.0, hi = 0.0;
  for (auto& r : sr) {
    if (r.upper >= top) hi = std::max(hi, r.total());
  }
  for (int it = 0; it < 100 && hi - lo > 1e-15 * std::max(1.0, hi); ++it) {
    const double mid = 0.5 * (lo + hi);
    if (total(mid) > tau) lo = mid;
    else hi = mid;
  }
  // exact theta on the active sets at the bracket: mu_i = (s_{r_i} - theta)
  // / r_i for rows with r_i > 0, so sum_i mu_i = tau is linear in theta
  const double mid = 0.5 * (lo + hi);
  double num = 0.0, den = 0.0;
  for (auto& r : sr) {
    Index act = 0;
    r.cap(mid, &act);
    if (act > 0) {
      num += r.s[static_cast<size_t>(act - 1)] / static_cast<double>(act);
      den += 1.0 / static_cast<double>(act);
    }
  }
  double theta = den > 0.0 ? (num - tau) / den : mid;
  if (!(theta >= lo - 1e-12 * hi && theta <= hi + 1e-12 * hi)) theta = mid;
  total(theta);
  Mat b(rows, cols);
  Parallel(threads).for_chunks(cols, [&](Index b0, Index l) {
    for (Index j = b0; j < b0 + l; ++j) {
      for (Index i = 0; i < rows; ++i) {
        const double v = a(i, j), mu = caps[static_cast<size_t>(i)];
        b(i, j) = std::copysign(std::min(std::abs(v), mu), v);
      }
    }
  }, 2.0 * static_cast<double>(a.size()));
  return b;
}

}  // namespace nmfkit
