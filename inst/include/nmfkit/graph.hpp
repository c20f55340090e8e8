// Neighbourhood graphs for manifold regularisation (Cai's constructW
// semantics): exact k nearest neighbours of every column (point) of the
// m x n data by blocked distance products, dense or sparse; binary / heat /
// self-tuning weights, symmetrised by max(W, W'), no self-loops; and the
// sparse graph Laplacian L = D - W. Nothing here is n x n dense: each block
// of queries holds an n x block slab of distances.
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// Edge weights of a k-NN graph: 1; exp(-d^2 / (2 t^2)) with t the mean of
/// all n^2 pairwise distances (constructW's heat kernel); or
/// exp(-d^2 / (sigma_i sigma_j)) with sigma_i the distance from i to its
/// k-th neighbour (self-tuning).
enum class GraphWeight { binary, heat, selftune };

/// The k nearest other columns of each column: idx(r, j) is the (r+1)-th
/// nearest neighbour of column j (0-based), dist2 its squared distance,
/// ascending, ties broken by the lower index. mean_dist is the mean of all
/// n^2 Euclidean distances (diagonal zeros included), filled on request.
/// `interrupted`: the host stopped the search and the rest is unset.
struct Knn {
  Eigen::MatrixXi idx;
  Mat dist2;
  double mean_dist = 0.0;
  bool interrupted = false;
};

namespace detail {

/// Squared norms of the columns of a dense or sparse matrix.
template <class M>
Vec column_sq_norms(const M& x) {
  Vec sq(x.cols());
  for (Index j = 0; j < x.cols(); ++j) sq[j] = x.col(j).squaredNorm();
  return sq;
}

/// Inner products of every column with columns [b, b + l): the n x l slab
/// a'b, by a dense product, or for sparse data by a sparse product (xt is
/// x' stored by columns), so sparse data are never densified beyond the slab.
inline void inner_slab(const Eigen::Ref<const Mat>& x, const Mat& /*xt*/,
                       Index b, Index l, Mat& d2) {
  d2.noalias() = x.transpose() * x.middleCols(b, l);
}
inline void inner_slab(const SpMat& x, const SpMat& xt, Index b, Index l,
                       Mat& d2) {
  d2 = Mat(xt * x.middleCols(b, l));
}

inline Mat transpose_for_slabs(const Eigen::Ref<const Mat>&) { return Mat(); }
inline SpMat transpose_for_slabs(const SpMat& x) { return x.transpose(); }

/// Slabs of at most 256 columns: the n x 256 distance buffer per worker
/// stays small for any n (64 chunks below 16384 points, as before).
inline ChunkShape knn_chunks(Index n) {
  return ChunkShape{16, std::max<Index>(64, (n + 255) / 256)};
}

}  // namespace detail

/// Exact k nearest neighbours of the columns of x (p x n, dense or sparse),
/// 1 <= k < n. Distances come from ||a||^2 + ||b||^2 - 2 a'b on slabs of
/// columns, in fixed chunks, so any thread count gives the same graph. The
/// cost is O(p n^2): the host is asked between groups of slabs (Hooks
/// contract), so a large search stops within a fraction of a second.
template <class M, class Hooks = NullHooks>
Knn knn(const M& x, int k, int threads, bool want_mean = false,
        Hooks* hooks = nullptr) {
  const Index n = x.cols();
  require(k >= 1 && k < n, "knn: k must be in [1, n - 1]");
  const Vec sq = detail::column_sq_norms(x);
  const auto xt = detail::transpose_for_slabs(x);
  Knn out;
  out.idx.resize(k, n);
  out.dist2.resize(k, n);
  const detail::ChunkShape shape = detail::knn_chunks(n);
  const Index len = detail::chunk_length(n, shape);
  std::vector<double> dist_sum(static_cast<size_t>((n + len - 1) / len), 0.0);
  const bool done = Parallel(threads).for_chunks(n, hooks,
      [&](Index b, Index l) {
        Mat d2(n, l);
        detail::inner_slab(x, xt, b, l, d2);
        std::vector<int> order(static_cast<size_t>(n));
        double s = 0.0;
        for (Index q = 0; q < l; ++q) {
          const Index j = b + q;
          double* col = d2.col(q).data();
          for (Index i = 0; i < n; ++i)
            col[i] = std::max(0.0, sq[i] + sq[j] - 2.0 * col[i]);
          col[j] = 0.0;
          if (want_mean)
            for (Index i = 0; i < n; ++i) s += std::sqrt(col[i]);
          // every index but j, ordered by (distance, index)
          std::iota(order.begin(), order.end(), 0);
          order.erase(order.begin() + j);
          auto less = [col](int a, int c) {
            return col[a] < col[c] || (col[a] == col[c] && a < c);
          };
          std::nth_element(order.begin(), order.begin() + (k - 1), order.end(),
                           less);
          std::sort(order.begin(), order.begin() + k, less);
          order.push_back(static_cast<int>(j));  // restore the size
          for (int r = 0; r < k; ++r) {
            out.idx(r, j) = order[static_cast<size_t>(r)];
            out.dist2(r, j) = col[order[static_cast<size_t>(r)]];
          }
        }
        dist_sum[static_cast<size_t>(b / len)] = s;
      },
      2.0 * static_cast<double>(x.rows()) * n * n, shape);
  out.interrupted = !done;
  if (want_mean) {
    double s = 0.0;
    for (double v : dist_sum) s += v;
    out.mean_dist = s / (static_cast<double>(n) * n);
  }
  return out;
}

/// Symmetric sparse affinity from directed edges (i, j, w): each edge is
/// mirrored and duplicates keep the larger weight, W = max(W, W'). Zero
/// weights and self-loops are dropped.
inline SpMat symmetric_graph(Index n, const std::vector<Eigen::Triplet<double>>&
                                          edges) {
  std::vector<Eigen::Triplet<double>> both;
  both.reserve(2 * edges.size());
  for (const auto& e : edges) {
    if (e.row() == e.col() || !(e.value() > 0.0)) continue;
    both.push_back(e);
    both.emplace_back(e.col(), e.row(), e.value());
  }
  SpMat w(n, n);
  w.setFromTriplets(both.begin(), both.end(),
                    [](double a, double b) { return std::max(a, b); });
  w.makeCompressed();
  return w;
}

/// k-NN affinity graph (constructW semantics) from the neighbours of every
/// point, however they were found (exactly, or by an approximate search
/// for large n): nb.idx, nb.dist2 (k x n) and, for heat weights,
/// nb.mean_dist.
inline SpMat knn_affinity(const Knn& nb, GraphWeight weight) {
  const Index n = nb.idx.cols();
  const int k = static_cast<int>(nb.idx.rows());
  std::vector<Eigen::Triplet<double>> edges;
  edges.reserve(static_cast<size_t>(n) * k);
  const double t2 = 2.0 * nb.mean_dist * nb.mean_dist;
  for (Index j = 0; j < n; ++j) {
    for (int r = 0; r < k; ++r) {
      const int i = nb.idx(r, j);
      const double d2 = nb.dist2(r, j);
      double w = 1.0;
      if (weight == GraphWeight::heat) {
        w = t2 > 0.0 ? std::exp(-d2 / t2) : 1.0;
      } else if (weight == GraphWeight::selftune) {
        const double den =
            std::sqrt(nb.dist2(k - 1, j)) * std::sqrt(nb.dist2(k - 1, i));
        w = den > 0.0 ? std::exp(-d2 / den) : (d2 > 0.0 ? 0.0 : 1.0);
      }
      edges.emplace_back(static_cast<int>(j), i, w);
    }
  }
  return symmetric_graph(n, edges);
}

/// Exact k-NN affinity graph of the columns of x (dense or sparse). An
/// interrupted search returns an empty graph with `interrupted` set.
template <class M, class Hooks = NullHooks>
SpMat knn_graph(const M& x, int k, GraphWeight weight, int threads,
                Hooks* hooks = nullptr, bool* interrupted = nullptr) {
  const Knn nb = knn(x, k, threads, weight == GraphWeight::heat, hooks);
  if (interrupted != nullptr) *interrupted = nb.interrupted;
  if (nb.interrupted) return SpMat(x.cols(), x.cols());
  return knn_affinity(nb, weight);
}

/// Degrees (row sums) of a symmetric affinity.
inline Vec degrees(const SpMat& w) {
  Vec d = Vec::Zero(w.rows());
  for (Index j = 0; j < w.outerSize(); ++j)
    for (SpMat::InnerIterator it(w, j); it; ++it) d[it.row()] += it.value();
  return d;
}

/// Graph Laplacian L = D - W (sparse).
inline SpMat laplacian(const SpMat& w) {
  const Vec d = degrees(w);
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(static_cast<size_t>(w.nonZeros() + w.rows()));
  for (Index j = 0; j < w.outerSize(); ++j)
    for (SpMat::InnerIterator it(w, j); it; ++it)
      if (it.row() != it.col())
        t.emplace_back(static_cast<int>(it.row()), static_cast<int>(j),
                       -it.value());
  for (Index i = 0; i < w.rows(); ++i)
    t.emplace_back(static_cast<int>(i), static_cast<int>(i), d[i]);
  SpMat l(w.rows(), w.cols());
  l.setFromTriplets(t.begin(), t.end());
  l.makeCompressed();
  return l;
}

/// Graph smoothness of the columns h_j of a c x n matrix,
/// 1/2 sum_ij w_ij ||h_i - h_j||^2 = tr(H L H') (W symmetric), without
/// forming L.
inline double graph_smoothness(const SpMat& w, const Mat& h) {
  double s = 0.0;
  for (Index j = 0; j < w.outerSize(); ++j)
    for (SpMat::InnerIterator it(w, j); it; ++it)
      s += it.value() * (h.col(j) - h.col(it.row())).squaredNorm();
  return 0.5 * s;
}

/// Optimal assignment for a square profit matrix (Kuhn-Munkres with
/// potentials, O(n^3)): perm[i] is the column given to row i, maximising
/// sum_i profit(i, perm[i]).
inline std::vector<int> max_assignment(const Mat& profit) {
  const Index n = profit.rows();
  require(profit.cols() == n, "max_assignment: square matrix");
  const double big = profit.size() ? profit.maxCoeff() : 0.0;
  // minimise cost = big - profit; 1-based arrays with a virtual row/col 0
  std::vector<double> u(n + 1, 0.0), v(n + 1, 0.0), minv(n + 1);
  std::vector<Index> match(n + 1, 0), way(n + 1, 0);
  std::vector<char> used(n + 1);
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (Index i = 1; i <= n; ++i) {
    match[0] = i;
    Index j0 = 0;
    std::fill(minv.begin(), minv.end(), inf);
    std::fill(used.begin(), used.end(), 0);
    do {
      used[j0] = 1;
      const Index i0 = match[j0];
      double delta = inf;
      Index j1 = 0;
      for (Index j = 1; j <= n; ++j) {
        if (used[j]) continue;
        const double cur = (big - profit(i0 - 1, j - 1)) - u[i0] - v[j];
        if (cur < minv[j]) {
          minv[j] = cur;
          way[j] = j0;
        }
        if (minv[j] < delta) {
          delta = minv[j];
          j1 = j;
        }
      }
      for (Index j = 0; j <= n; ++j) {
        if (used[j]) {
          u[match[j]] += delta;
          v[j] -= delta;
        } else {
          minv[j] -= delta;
        }
      }
      j0 = j1;
    } while (match[j0] != 0);
    do {
      const Index j1 = way[j0];
      match[j0] = match[j1];
      j0 = j1;
    } while (j0 != 0);
  }
  std::vector<int> perm(static_cast<size_t>(n));
  for (Index j = 1; j <= n; ++j)
    perm[static_cast<size_t>(match[j] - 1)] = static_cast<int>(j - 1);
  return perm;
}

/// Squared Euclidean distances between the columns of x (n x n, zero
/// diagonal), for the spanning tree below.
inline Mat squared_distances(const Eigen::Ref<const Mat>& x) {
  const Vec sq = x.colwise().squaredNorm().transpose();
  Mat d2 = x.transpose() * x;
  for (Index j = 0; j < d2.cols(); ++j)
    for (Index i = 0; i < d2.rows(); ++i)
      d2(i, j) = i == j ? 0.0 : std::max(0.0, sq[i] + sq[j] - 2.0 * d2(i, j));
  return d2;
}

/// An edge of the spanning tree: squared length and end points.
struct SpanEdge {
  double len;
  int u, v;
};

/// Minimum spanning tree of the complete graph on squared distances d2
/// (Prim, O(n^2); ties to the lower index), its n - 1 edges by length.
inline std::vector<SpanEdge> spanning_tree(const Mat& d2) {
  const Index n = d2.cols();
  std::vector<SpanEdge> out;
  if (n < 2) return out;
  std::vector<char> in(static_cast<size_t>(n), 0);
  Vec best = d2.col(0);
  std::vector<int> from(static_cast<size_t>(n), 0);
  in[0] = 1;
  for (Index it = 1; it < n; ++it) {
    Index j = -1;
    for (Index c = 0; c < n; ++c)
      if (!in[c] && (j < 0 || best[c] < best[j])) j = c;
    out.push_back({best[j], from[j], static_cast<int>(j)});
    in[j] = 1;
    for (Index c = 0; c < n; ++c)
      if (!in[c] && d2(j, c) < best[c]) {
        best[c] = d2(j, c);
        from[c] = static_cast<int>(j);
      }
  }
  std::stable_sort(out.begin(), out.end(), [](const SpanEdge& a,
                                              const SpanEdge& b) {
    return a.len < b.len;
  });
  return out;
}

/// Connects a sparse affinity w: every point without an edge is linked to
/// its nearest point with one (so no isolated point counts as a cluster),
/// then components are joined along the spanning tree, shortest links
/// first (single linkage), until at most `target` remain. Added edges
/// weigh the mean weight of w. Joining on the tree is exact: an edge off
/// the tree never joins two components that its tree path has not.
inline SpMat connect_components(const SpMat& w, const Mat& d2,
                                const std::vector<SpanEdge>& tree,
                                int target) {
  const Index n = w.cols();
  std::vector<int> parent(static_cast<size_t>(n));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  int comps = static_cast<int>(n);
  auto join = [&](int a, int b) {
    a = find(a);
    b = find(b);
    if (a == b) return false;
    parent[std::max(a, b)] = std::min(a, b);
    --comps;
    return true;
  };
  double total = 0.0;
  Index edges = 0;
  std::vector<char> touched(static_cast<size_t>(n), 0);
  for (Index j = 0; j < n; ++j)
    for (SpMat::InnerIterator e(w, j); e; ++e)
      if (e.value() > 0.0 && e.row() != j) {
        touched[j] = touched[e.row()] = 1;
        join(static_cast<int>(e.row()), static_cast<int>(j));
        total += e.value();
        ++edges;
      }
  const double weight = edges ? total / static_cast<double>(edges) : 1.0;
  std::vector<Eigen::Triplet<double>> t;
  t.reserve(static_cast<size_t>(w.nonZeros() + 2 * n));
  for (Index j = 0; j < n; ++j)
    for (SpMat::InnerIterator e(w, j); e; ++e)
      t.emplace_back(e.row(), j, e.value());
  auto add = [&](int a, int b) {
    t.emplace_back(a, b, weight);
    t.emplace_back(b, a, weight);
  };
  if (edges) {
    for (Index j = 0; j < n; ++j) {
      if (touched[j]) continue;
      Index best = -1;
      for (Index i = 0; i < n; ++i)
        if (touched[i] && (best < 0 || d2(i, j) < d2(best, j))) best = i;
      if (join(static_cast<int>(best), static_cast<int>(j)))
        add(static_cast<int>(best), static_cast<int>(j));
    }
  }
  for (const SpanEdge& e : tree) {
    if (comps <= target) break;
    if (join(e.u, e.v)) add(e.u, e.v);
  }
  SpMat out(n, n);
  out.setFromTriplets(t.begin(), t.end());
  out.makeCompressed();
  return out;
}

}  // namespace nmfkit
