// SMRMF and f-SMRMF (Mani, Domeniconi & Griva): RMNMF's factorisation
// block regularised by a selective graph learnt from a DS3 exemplar
// encoding Z (n x n, z_ij = how much point i represents point j; columns on
// the simplex; Elhamifar, Sapiro & Sastry, TPAMI 2016, eq. 3.2). The data
// are m x n (m features, n points), the basis F = W is m x k and the
// indicator G = H' n x k for k components. The paper's equation text is
// lost: its objective (3.3), ALM (3.5) and the exemplar graph (3.6) are
// reconstructed from its prose, and each uncertain choice is a parameter.
// Z, C and the dissimilarities are legitimately n x n.
#pragma once

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <vector>

#include "graph.hpp"
#include "parallel.hpp"
#include "manifold.hpp"
#include "projection.hpp"

namespace nmfkit {

/// Which exemplar block: the l1,inf-constrained DS3 block (smrmf), the
/// Frobenius relaxation with a per-column closed form (fast), or SMRMF
/// without the C split (ns: C = Z, every point may be an exemplar).
enum class SmrmfKind { smrmf, fast, ns };
/// Kernel of the dissimilarities 2(1 - K): exp(-d^2/(s_i s_j)),
/// exp(-d^2/(2 s_i^2)) symmetrised, exp(-d^2/s_i); or squared Euclidean
/// distances divided by their maximum (SMRMF-Euc).
enum class ZKernel { selftune, sigma_i2, sigma_i, euclidean };
/// Neighbours of an exemplar i in the selective graph (3.6): the k largest
/// entries of row i of Z (zrow); or i's k nearest points in input space,
/// weighted by z_ij (knn) or by the input kernel K_X(i, j) = 1 - D~_X / 2
/// (knn_kernel).
enum class ZNeighbours { zrow, knn, knn_kernel };

struct SmrmfParams {
  AlmParams alm;
  SmrmfKind kind = SmrmfKind::smrmf;
  ZKernel kernel = ZKernel::selftune;
  int neighbours = 5;      // bandwidths and the (3.6) graph
  int exemplars = 1;       // s = tau
  double beta = 1.0;       // weight of the input-space dissimilarity
  // weight of the codes' dissimilarity; unset: lambda / 2, so that the
  // graph term's gradient lambda tr(G'LG) and the D~_G term weigh alike
  std::optional<double> w_g;
  double mu_z = 0.1;       // DS3 ADMM penalty
  // f-SMRMF ridge; unset: the CAN rule (Nie et al., KDD 2014, eq. 16) on
  // every iteration's dissimilarities
  std::optional<double> gamma;
  int ds3_max_iter = 3000;
  double ds3_tol = 1e-7;
  bool rank_linf = false;  // rank rows of Z by max instead of 2-norm
  bool rank_on_c = false;  // rank rows of the split C instead of Z (smrmf, ns)
  ZNeighbours nbr = ZNeighbours::zrow;
  int inner_z_iter = 1;    // exemplar-block ADMM passes per iteration
  // join the selective graph's components along the input-space spanning
  // tree until k remain (connect_components()); false: the paper's graph
  bool connect = true;
  bool keep_z = false;
};

namespace detail {

/// Dissimilarities between the columns of y (d x n) in the kernel space
/// of `kernel`, with bandwidths from the k-th neighbour distances, into
/// `out`. With a host, it is polled between column groups; false: it
/// interrupted and `out` is incomplete.
template <class Hooks = NullHooks>
bool kernel_dissimilarity(const Mat& y, int k, ZKernel kernel, int threads,
                          Hooks* hooks, Mat& out) {
  const Index n = y.cols();
  const Vec sq = y.colwise().squaredNorm().transpose();
  const double work = 2.0 * static_cast<double>(y.rows() + 20) * n * n;
  Mat d2(n, n);
  if (!Parallel(threads).for_chunks(n, hooks, [&](Index b, Index l) {
    d2.middleCols(b, l).noalias() = y.transpose() * y.middleCols(b, l);
    for (Index j = b; j < b + l; ++j)
      for (Index i = 0; i < n; ++i)
        d2(i, j) = i == j ? 0.0
                          : std::max(0.0, sq[i] + sq[j] - 2.0 * d2(i, j));
  }, work))
    return false;
  if (kernel == ZKernel::euclidean) {
    const double mx = d2.maxCoeff();
    if (mx > 0.0) d2 /= mx;
    out = std::move(d2);
    return true;
  }
  // bandwidths: distance to the k-th nearest other point, from d2 itself
  Vec sig(n);
  const int kk = std::min<int>(k, static_cast<int>(n) - 1);
  if (!Parallel(threads).for_chunks(n, hooks, [&](Index b, Index l) {
    std::vector<double> col;
    for (Index j = b; j < b + l; ++j) {
      col.clear();
      for (Index i = 0; i < n; ++i)
        if (i != j) col.push_back(d2(i, j));
      std::nth_element(col.begin(), col.begin() + (kk - 1), col.end());
      sig[j] = std::sqrt(col[static_cast<size_t>(kk - 1)]);
    }
  }, work))
    return false;
  auto kern = [&](Index i, Index j) {
    const double d = d2(i, j);
    double den = 0.0;
    switch (kernel) {
      case ZKernel::selftune: den = sig[i] * sig[j]; break;
      case ZKernel::sigma_i2: den = 2.0 * sig[i] * sig[i]; break;
      default: den = sig[i]; break;
    }
    return den > 0.0 ? std::exp(-d / den) : (d > 0.0 ? 0.0 : 1.0);
  };
  out.resize(n, n);
  return Parallel(threads).for_chunks(n, hooks, [&](Index b, Index l) {
    for (Index j = b; j < b + l; ++j)
      for (Index i = 0; i < n; ++i) {
        const double kij = kernel == ZKernel::sigma_i2
                               ? 0.5 * (kern(i, j) + kern(j, i))
                               : kern(i, j);
        out(i, j) = 2.0 * (1.0 - kij);
      }
  }, work);
}

/// kernel_dissimilarity() without a host.
inline Mat kernel_dissimilarity(const Mat& y, int k, ZKernel kernel,
                                int threads) {
  Mat out;
  kernel_dissimilarity(y, k, kernel, threads, static_cast<NullHooks*>(nullptr),
                       out);
  return out;
}

/// f-SMRMF's gamma by the CAN rule: mean over columns of
/// 1/2 (k d_(k+1) - sum_{h<=k} d_(h)), order statistics without the
/// diagonal; a positive floor keeps the closed form defined.
inline double can_gamma(const Mat& d, int k, int threads) {
  const Index n = d.cols();
  const int kk = std::min<int>(k, static_cast<int>(n) - 2);
  const double g = Parallel(threads).sum(n, [&](Index j) {
    std::vector<double> col;
    col.reserve(static_cast<size_t>(n));
    for (Index i = 0; i < n; ++i)
      if (i != j) col.push_back(d(i, j));
    std::nth_element(col.begin(), col.begin() + kk, col.end());
    const double next = col[static_cast<size_t>(kk)];
    double s = 0.0;
    for (int h = 0; h < kk; ++h) s += col[static_cast<size_t>(h)];
    return 0.5 * (kk * next - s);
  }, 20.0 * static_cast<double>(n) * n) / static_cast<double>(n);
  return std::max(g, 1e-12);
}

/// Rows of Z ranked by norm (descending, ties to the lower index).
inline std::vector<int> rank_rows(const Mat& z, bool linf) {
  const Index n = z.rows();
  Vec score(n);
  for (Index i = 0; i < n; ++i)
    score[i] = linf ? z.row(i).cwiseAbs().maxCoeff() : z.row(i).norm();
  std::vector<int> idx(static_cast<size_t>(n));
  std::iota(idx.begin(), idx.end(), 0);
  std::stable_sort(idx.begin(), idx.end(),
                   [&](int a, int b) { return score[a] > score[b]; });
  return idx;
}

/// The selective affinity (3.6): for each of the first s ranked rows i,
/// its k largest positive entries z_ij (j != i) give W~_ij = z_ij;
/// W = (W~ + W~') / 2.
inline SpMat selective_graph(const Mat& z, const std::vector<int>& ranked,
                             int s, int k) {
  const Index n = z.rows();
  std::vector<Eigen::Triplet<double>> t;
  std::vector<int> cand;
  for (int q = 0; q < s && q < static_cast<int>(ranked.size()); ++q) {
    const int i = ranked[static_cast<size_t>(q)];
    cand.clear();
    for (Index j = 0; j < n; ++j)
      if (j != i && z(i, j) > 0.0) cand.push_back(static_cast<int>(j));
    auto more = [&](int a, int b) {
      return z(i, a) > z(i, b) || (z(i, a) == z(i, b) && a < b);
    };
    const size_t m = std::min<size_t>(static_cast<size_t>(k), cand.size());
    std::partial_sort(cand.begin(), cand.begin() + m, cand.end(), more);
    for (size_t h = 0; h < m; ++h) {
      const int j = cand[h];
      t.emplace_back(i, j, 0.5 * z(i, j));
      t.emplace_back(j, i, 0.5 * z(i, j));
    }
  }
  SpMat w(n, n);
  w.setFromTriplets(t.begin(), t.end());  // duplicates add: (W~ + W~')/2
  w.prune(0.0);
  w.makeCompressed();
  return w;
}

/// Input-space neighbourhoods of every point for nbr = knn / knn_kernel:
/// the k nearest other points (Euclidean, ties to the lower index) and,
/// for knn_kernel, the kernel similarity kx(r, j) = 1 - D~_X / 2 between
/// point j and its (r+1)-th neighbour.
struct InputNeighbours {
  Knn nb;
  Mat kx;
};

inline InputNeighbours input_neighbours(const Eigen::Ref<const Mat>& x,
                                        const Mat& d_tilde, int k,
                                        bool kernel_weights, int threads) {
  InputNeighbours out;
  out.nb = knn(x, k, threads);
  if (kernel_weights) {
    out.kx.resize(k, x.cols());
    for (Index j = 0; j < x.cols(); ++j)
      for (int r = 0; r < k; ++r)
        out.kx(r, j) = 1.0 - 0.5 * d_tilde(out.nb.idx(r, j), j);
  }
  return out;
}

/// The selective affinity with input-space neighbourhoods: for each of the
/// first s ranked rows i, its k nearest points j give W~_ij = z_ij (or
/// K_X(i, j) with kernel weights); W = (W~ + W~') / 2, zero weights dropped.
inline SpMat selective_graph_knn(const Mat& z, const InputNeighbours& in,
                                 const std::vector<int>& ranked, int s) {
  const Index n = z.rows();
  const Index k = in.nb.idx.rows();
  const bool kernel_weights = in.kx.size() > 0;
  std::vector<Eigen::Triplet<double>> t;
  for (int q = 0; q < s && q < static_cast<int>(ranked.size()); ++q) {
    const int i = ranked[static_cast<size_t>(q)];
    for (Index r = 0; r < k; ++r) {
      const int j = in.nb.idx(r, i);
      const double w = kernel_weights ? in.kx(r, i) : z(i, j);
      if (!(w > 0.0)) continue;
      t.emplace_back(i, j, 0.5 * w);
      t.emplace_back(j, i, 0.5 * w);
    }
  }
  SpMat w(n, n);
  w.setFromTriplets(t.begin(), t.end());
  w.prune(0.0);
  w.makeCompressed();
  return w;
}

/// The DS3 block: Z, its split C and multiplier L for
/// min <D, Z> s.t. Z >= 0, 1'Z = 1', ||C||_{1,inf} <= tau, Z = C.
struct Ds3State {
  Mat z, c, lam;
  /// One ADMM pass (steps 8-9); returns max(mean|Z - C|, mean|dC|).
  double step(const Mat& d, double mu_z, double tau, bool split,
              int threads) {
    z = c - (lam + d) / mu_z;
    project_simplex_columns(z, threads);
    if (!split) {
      const double dc = (z - c).cwiseAbs().mean();
      c = z;
      return dc;
    }
    const Mat c_new = project_l1inf(z + lam / mu_z, tau, threads);
    const double dc = (c_new - c).cwiseAbs().mean();
    c = c_new;
    lam += mu_z * (z - c);
    return std::max((z - c).cwiseAbs().mean(), dc);
  }
};

}  // namespace detail

/// SMRMF / f-SMRMF / SMRMF-NS from F = f0 (m x k), G = g0 (n x k). Each
/// iteration: RMNMF's ALM steps on the selective Laplacian, then the
/// dissimilarity of the codes, the exemplar block and a new selective graph.
template <class Hooks = NullHooks>
ManifoldResult smrmf(const Eigen::Ref<const Mat>& x, const Mat& f0,
                     const Mat& g0, const SmrmfParams& p, Hooks& hooks) {
  const Index n = x.cols(), k = f0.cols();
  require(f0.rows() == x.rows() && g0.rows() == n && g0.cols() == k && k >= 1,
          "smrmf: F must be m x k and G n x k");
  require(p.neighbours >= 1 && p.neighbours < n && p.exemplars >= 1 && p.exemplars <= n &&
              p.mu_z > 0 && p.beta >= 0 && p.alm.max_iter >= 1 &&
              p.inner_z_iter >= 1 &&
              !(p.rank_on_c && p.kind == SmrmfKind::fast),
          "smrmf: params");
  const double w_g = p.w_g.value_or(p.alm.lambda / 2.0);
  // a fit stopped before its first iteration: the start, no trace
  auto interrupted = [&]() {
    ManifoldResult r;
    r.status = Status::interrupted;
    r.W = f0;
    r.G = g0;
    r.H = g0.transpose().cwiseMax(0.0);
    r.graph = SpMat(n, n);
    return r;
  };
  const double tau = static_cast<double>(p.exemplars);
  const int th = p.alm.threads;
  Mat dx;
  if (!detail::kernel_dissimilarity(Mat(x), p.neighbours, p.kernel, th, &hooks,
                                    dx))
    return interrupted();
  detail::Ds3State ds;
  detail::InputNeighbours in;
  if (p.nbr != ZNeighbours::zrow)
    in = detail::input_neighbours(x, dx, p.neighbours,
                                  p.nbr == ZNeighbours::knn_kernel, th);
  dx *= p.beta;
  // (3.6) on the rows ranked by norm (of Z, or of its split C)
  auto selective = [&](const std::vector<int>& ranked, int s) {
    return p.nbr == ZNeighbours::zrow
               ? detail::selective_graph(ds.z, ranked, s, p.neighbours)
               : detail::selective_graph_knn(ds.z, in, ranked, s);
  };
  auto ranking = [&]() {
    return detail::rank_rows(p.rank_on_c ? ds.c : ds.z, p.rank_linf);
  };
  // (3.6) leaves stars around the exemplars and untouched points: more
  // components than clusters, a Laplacian null space of more than k
  // dimensions, and codes that settle on an early, wrong grouping of the
  // stars (bench/README.md, "Manifold clustering")
  Mat d2x;
  std::vector<SpanEdge> tree;
  if (p.connect) {
    d2x = squared_distances(x);
    tree = spanning_tree(d2x);
  }
  auto graph_of = [&](const std::vector<int>& ranked, int s) {
    SpMat g = selective(ranked, s);
    return p.connect ? connect_components(g, d2x, tree, static_cast<int>(k))
                     : g;
  };

  // start: DS3 on the input-space dissimilarities
  if (p.kind == SmrmfKind::fast) {
    const double g0c = p.gamma ? *p.gamma : detail::can_gamma(dx, p.neighbours, th);
    ds.z = -dx / (2.0 * g0c);
    project_simplex_columns(ds.z, th);
  } else {
    Index best = 0;
    const Vec rs = dx.rowwise().sum();
    rs.minCoeff(&best);
    ds.c = Mat::Zero(n, n);
    ds.c.row(best).setOnes();
    ds.lam = Mat::Zero(n, n);
    // the start's DS3 loop: no progress reports; the host is polled after
    // every pass (each costs O(n^2 log n), 0.1-0.3 s at n = 2000), and an
    // interrupt ends the whole fit
    DriveOptions quiet;
    quiet.report = false;
    const DriveResult d =
        drive_with(quiet, p.ds3_max_iter, hooks, nullptr, [&](int) {
          StepOutcome o;
          o.loss = ds.step(dx, p.mu_z, tau, p.kind == SmrmfKind::smrmf, th);
          o.converged = o.loss <= p.ds3_tol;
          return o;
        });
    if (d.status == Status::interrupted) return interrupted();
  }
  std::vector<int> ranked = ranking();
  const int s = p.kind == SmrmfKind::ns ? static_cast<int>(n) : p.exemplars;
  SpMat w = graph_of(ranked, s);
  SpMat lap = laplacian(w);

  detail::AlmState st;
  st.start(x, f0, g0, p.alm.mu0);
  const double x_norm = x.norm();
  ManifoldResult r;
  drive(p.alm.max_iter, hooks, r, [&](int it) {
    r.mu.push_back(st.mu);
    double loss = 0.0;
    const double res = st.iterate(x, lap, p.alm, x_norm, loss);
    r.residual.push_back(res);
    const Mat gt = st.G.transpose();
    const Mat dh =
        dx + w_g * detail::kernel_dissimilarity(gt, p.neighbours, p.kernel, th);
    if (p.kind == SmrmfKind::fast) {
      const double gam = p.gamma ? *p.gamma : detail::can_gamma(dh, p.neighbours, th);
      ds.z = -dh / (2.0 * gam);
      project_simplex_columns(ds.z, th);
    } else {
      for (int q = 0; q < p.inner_z_iter; ++q)
        ds.step(dh, p.mu_z, tau, p.kind == SmrmfKind::smrmf, th);
    }
    ranked = ranking();
    w = graph_of(ranked, s);
    lap = laplacian(w);
    return StepOutcome{loss,
                       detail::alm_converged(p.alm, it, res, loss, r.loss)};
  });
  r.W = st.F;
  r.H = st.H.transpose();
  r.G = st.G;
  r.graph = w;
  r.exemplars.assign(ranked.begin(),
                     ranked.begin() + std::min<Index>(p.exemplars, n));
  if (p.keep_z) {
    r.Z = ds.z;
    r.C = ds.c;
  }
  return r;
}

}  // namespace nmfkit
