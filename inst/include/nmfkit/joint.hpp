// Joint-NMF similarity (Friedman et al., CISS 2023) and Chamfer distances
// between two point clouds. The joint factorisation itself is nmf() on the
// pooled matrix [X1 X2]; this header holds what is computed from its
// coefficients (p-bar) and the Chamfer baselines.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "hooks.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// p-bar with its Monte Carlo standard error (zero for the exact form).
struct Pbar {
  Vec p;   // k
  Vec se;  // k
};

namespace detail {
inline double row_max(const Eigen::Ref<const Mat>& h, Index i) {
  return h.cols() ? h.row(i).maxCoeff() : 0.0;
}

/// Sum of the values in increasing order: independent of their order in the
/// input, so a permuted copy of a set gets bitwise the same mean.
template <class V>
double sorted_sum(const V& v) {
  std::vector<double> a(static_cast<size_t>(v.size()));
  for (Index j = 0; j < v.size(); ++j) a[static_cast<size_t>(j)] = v[j];
  std::sort(a.begin(), a.end());
  double s = 0.0;
  for (double x : a) s += x;
  return s;
}
}  // namespace detail

/// The reference code's normalisation, in place: each column scaled to unit
/// Euclidean norm, and columns whose norm is below 5% of the average norm
/// (or zero) set to zero. Each column is divided by its maximum before its
/// norm is taken, which changes nothing in exact arithmetic but makes
/// lambda * x normalise to bitwise the same columns as x whenever lambda * x
/// is exact (so a rescaled copy is at distance exactly 0).
inline void unit_norm_columns(Mat& x) {
  const Index n = x.cols();
  if (n == 0) return;
  Vec norm(n);
  for (Index j = 0; j < n; ++j) {
    const double mx = x.rows() ? x.col(j).maxCoeff() : 0.0;
    const double s = mx > 0.0 ? mx : 1.0;
    x.col(j) /= s;
    const double nu = x.col(j).norm();
    norm[j] = nu * s;
    if (nu > 0.0) x.col(j) /= nu;
  }
  const double cut = 0.05 * norm.mean();
  for (Index j = 0; j < n; ++j)
    if (!(norm[j] >= cut && norm[j] > 0.0)) x.col(j).setZero();
}

/// Exact p-bar from H (k x N) whose first n1 columns came from X1: the
/// threshold T ~ U(0, s_i) integrated out,
/// p_i = (mean(S1[i, ]) - mean(S2[i, ])) / s_i with s_i the row maximum
/// (0 when s_i = 0). Positive: component i is used more by X1.
inline Vec pbar_exact(const Eigen::Ref<const Mat>& h, Index n1) {
  const Index k = h.rows(), n = h.cols(), n2 = n - n1;
  require(n1 >= 1 && n2 >= 1, "pbar_exact: both sets need columns");
  Vec p(k);
  for (Index i = 0; i < k; ++i) {
    const double s = detail::row_max(h, i);
    if (s <= 0.0) {
      p[i] = 0.0;
      continue;
    }
    const double m1 = detail::sorted_sum(h.row(i).head(n1));
    const double m2 = detail::sorted_sum(h.row(i).tail(n2));
    p[i] = (m1 / static_cast<double>(n1) - m2 / static_cast<double>(n2)) / s;
  }
  return p;
}

/// Monte Carlo p-bar of Algorithm 1: for each component i, u.col(i) holds K
/// uniforms on [0, 1) (drawn by the caller), T = u * s_i, and
/// p_i = mean over T of frac(S1[i, ] > T) - frac(S2[i, ] > T).
/// se_i is the standard error of that mean. Cost O((N + K) log N) per row.
inline Pbar pbar_montecarlo(const Eigen::Ref<const Mat>& h, Index n1,
                            const Eigen::Ref<const Mat>& u) {
  const Index k = h.rows(), n = h.cols(), n2 = n - n1, draws = u.rows();
  require(n1 >= 1 && n2 >= 1, "pbar_montecarlo: both sets need columns");
  require(u.cols() == k && draws >= 1, "pbar_montecarlo: u must be K x k");
  Pbar out{Vec::Zero(k), Vec::Zero(k)};
  std::vector<double> a, b;
  for (Index i = 0; i < k; ++i) {
    const double s = detail::row_max(h, i);
    if (s <= 0.0) continue;
    a.resize(static_cast<size_t>(n1));
    b.resize(static_cast<size_t>(n2));
    for (Index j = 0; j < n1; ++j) a[static_cast<size_t>(j)] = h(i, j);
    for (Index j = 0; j < n2; ++j) b[static_cast<size_t>(j)] = h(i, n1 + j);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    double sum = 0.0, sum2 = 0.0;
    for (Index t = 0; t < draws; ++t) {
      const double thr = u(t, i) * s;
      const double above1 = static_cast<double>(
          a.end() - std::upper_bound(a.begin(), a.end(), thr));
      const double above2 = static_cast<double>(
          b.end() - std::upper_bound(b.begin(), b.end(), thr));
      const double d = above1 / static_cast<double>(n1) -
                       above2 / static_cast<double>(n2);
      sum += d;
      sum2 += d * d;
    }
    const double kd = static_cast<double>(draws);
    const double mean = sum / kd;
    out.p[i] = mean;
    const double var = draws > 1
                           ? std::max(sum2 - kd * mean * mean, 0.0) / (kd - 1)
                           : 0.0;
    out.se[i] = std::sqrt(var / kd);
  }
  return out;
}

/// Chamfer distance of the authors' reference code (Friedman et al.), with
/// rows as point sets: each row p is
/// a pair of 1-D point sets {x(p, j)} and {y(p, l)}, and
/// d = (1/m) sum_p [sum_j min_l (x_pj - y_pl)^2 + sum_l min_j (...)^2].
/// Sorting each row and binary searching costs O(m (n1 + n2) log n).
template <class Hooks = NullHooks>
double chamfer_rows(const Eigen::Ref<const Mat>& x,
                    const Eigen::Ref<const Mat>& y, int threads,
                    Hooks&& hooks = Hooks()) {
  const Index m = x.rows();
  require(y.rows() == m && m >= 1 && x.cols() >= 1 && y.cols() >= 1,
          "chamfer_rows: x and y need the same rows and some columns");
  // sum over query values of the squared distance to the nearest of `ref`
  auto one_way = [](const std::vector<double>& query,
                    const std::vector<double>& ref) {
    double s = 0.0;
    for (double q : query) {
      const auto it = std::lower_bound(ref.begin(), ref.end(), q);
      double best = std::numeric_limits<double>::infinity();
      if (it != ref.end()) best = (*it - q) * (*it - q);
      if (it != ref.begin()) {
        const double d = q - *(it - 1);
        best = std::min(best, d * d);
      }
      s += best;
    }
    return s;
  };
  double total = 0.0;
  const bool done = Parallel(threads).sum(m, &hooks, [&](Index p) {
    std::vector<double> a(static_cast<size_t>(x.cols()));
    std::vector<double> b(static_cast<size_t>(y.cols()));
    for (Index j = 0; j < x.cols(); ++j) a[static_cast<size_t>(j)] = x(p, j);
    for (Index j = 0; j < y.cols(); ++j) b[static_cast<size_t>(j)] = y(p, j);
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    return one_way(a, b) + one_way(b, a);
  }, total);
  if (!done) return std::numeric_limits<double>::quiet_NaN();
  return total / static_cast<double>(m);
}

/// Nearest column of y for every column of x and vice versa: squared
/// Euclidean distances, found through blocks of the inner products
/// (never an n1 x n2 x m array; at most n1 x block doubles at once) and then
/// recomputed directly for the winning pair, so identical columns give 0.
struct NearestColumns {
  Vec x_to_y;  // n1: min_l ||x_j - y_l||^2
  Vec y_to_x;  // n2: min_j ||y_l - x_j||^2
};

template <class Hooks = NullHooks>
NearestColumns nearest_columns(const Eigen::Ref<const Mat>& x,
                               const Eigen::Ref<const Mat>& y, int threads,
                               Index block = 512, Hooks&& hooks = Hooks()) {
  const Index n1 = x.cols(), n2 = y.cols();
  require(x.rows() == y.rows() && n1 >= 1 && n2 >= 1 && block >= 1,
          "nearest_columns: x and y need the same rows and some columns");
  const Vec nx = x.colwise().squaredNorm().transpose();
  const Vec ny = y.colwise().squaredNorm().transpose();
  constexpr double kInf = std::numeric_limits<double>::infinity();
  Vec best_x = Vec::Constant(n1, kInf), best_y = Vec::Constant(n2, kInf);
  std::vector<Index> arg_x(static_cast<size_t>(n1), 0);
  std::vector<Index> arg_y(static_cast<size_t>(n2), 0);
  for (Index l0 = 0; l0 < n2; l0 += block) {
    const Index len = std::min(block, n2 - l0);
    Mat g(n1, len);
    // the host is asked between chunks of every block (empty result then)
    const bool done =
        Parallel(threads).for_chunks(len, &hooks, [&](Index c0, Index cl) {
          g.middleCols(c0, cl).noalias() =
              x.transpose() * y.middleCols(l0 + c0, cl);
        });
    if (!done) return NearestColumns{};
    for (Index c = 0; c < len; ++c) {
      const Index l = l0 + c;
      for (Index j = 0; j < n1; ++j) {
        const double d = nx[j] + ny[l] - 2.0 * g(j, c);
        if (d < best_x[j]) {
          best_x[j] = d;
          arg_x[static_cast<size_t>(j)] = l;
        }
        if (d < best_y[l]) {
          best_y[l] = d;
          arg_y[static_cast<size_t>(l)] = j;
        }
      }
    }
  }
  NearestColumns out{Vec(n1), Vec(n2)};
  for (Index j = 0; j < n1; ++j)
    out.x_to_y[j] =
        (x.col(j) - y.col(arg_x[static_cast<size_t>(j)])).squaredNorm();
  for (Index l = 0; l < n2; ++l)
    out.y_to_x[l] =
        (y.col(l) - x.col(arg_y[static_cast<size_t>(l)])).squaredNorm();
  return out;
}

/// The paper's Chamfer distance, eq. (1), with columns as points:
/// mean_j min_l ||x_j - y_l||^2 + mean_l min_j ||y_l - x_j||^2.
/// NaN when the host interrupted.
template <class Hooks = NullHooks>
double chamfer_columns(const Eigen::Ref<const Mat>& x,
                       const Eigen::Ref<const Mat>& y, int threads,
                       Index block = 512, Hooks&& hooks = Hooks()) {
  const NearestColumns nc = nearest_columns(x, y, threads, block, hooks);
  if (nc.x_to_y.size() == 0) return std::numeric_limits<double>::quiet_NaN();
  return nc.x_to_y.mean() + nc.y_to_x.mean();
}

}  // namespace nmfkit
