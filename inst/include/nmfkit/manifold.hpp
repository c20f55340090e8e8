// Manifold-regularised matrix factorisation: GNMF (Cai et al. 2011,
// multiplicative updates with a graph penalty) and RMNMF (Huang et al. 2014,
// an augmented-Lagrangian method for the 2,1-norm loss with an orthonormal
// cluster indicator). Points are the columns of X (m x n: m features, n
// points); the papers' X ~ F G' has F = W (m x k) and G = H' (n x k) for k
// components (clusters). Graphs are sparse: no
// n x n buffer anywhere. Each solver is an update step run by the one loop
// driver (driver.hpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

#include "data.hpp"
#include "driver.hpp"
#include "graph.hpp"
#include "hooks.hpp"
#include "parallel.hpp"
#include "types.hpp"

namespace nmfkit {

/// Result of a manifold solver: W = F (m x k), H (k x n, nonnegative), the
/// cluster indicator G (n x k; for GNMF H'), the loss trace (the objective),
/// and for the ALM solvers the residual and penalty traces.
struct ManifoldResult : Result {
  Mat G;
  std::vector<double> residual;
  std::vector<double> mu;
  SpMat graph;                 // the final affinity (SMRMF: selective)
  std::vector<int> exemplars;  // SMRMF / f-SMRMF: ranked, 0-based
  Mat Z;                       // SMRMF / f-SMRMF: the encoding, if kept
  Mat C;                       // SMRMF: its l1,inf split, if kept
};

/// GNMF's solver: Cai's multiplicative updates, or exact coordinate
/// (HALS-type) updates with the columns of W kept at unit length.
enum class GnmfSolver { mu, hals };

/// Settings of GNMF. Stopping (Cai's GNMF_Multi): m <- r m + (1 - r) J_t
/// from m_0 = 10 J_0, stop once (m - J_t) / m <= tol after min_iter.
struct GnmfParams {
  GnmfSolver solver = GnmfSolver::hals;
  double lambda = 100.0;
  int max_iter = 1000;
  int min_iter = 30;
  double tol = 1e-5;
  double mean_fit_ratio = 0.1;
  double eps = 1e-10;  // floor of the denominators (max, not +)
  int threads = 1;
};

/// Settings of the ALM solvers (RMNMF and the SMRMF family).
struct AlmParams {
  double lambda = 1.0;
  double mu0 = 1e-3;
  double rho = 1.05;
  double mu_max = 1e10;
  int max_iter = 1000;
  int min_iter = 30;
  double tol = 1e-8;
  // A fit whose scaled residual is at most stall_res and whose objective
  // changed by at most stall_obj (relative) in the last iteration has
  // converged too: once mu is large the iterates freeze with the residual
  // near 1e-4 (the G >= 0, G'G = I split is never met exactly), so the
  // residual test alone ran every fit to max_iter.
  double stall_res = 1e-3;
  double stall_obj = 1e-4;
  bool sign_compat = false;  // + (lambda/mu) L H in the G step (author code)
  int threads = 1;
};

namespace detail {

/// Cai's NormalizeUV on W' (k x m): rows of W' (the columns of W) to unit
/// 2-norm, the rows of H scaled back, so W H is unchanged.
inline void normalize_rows(Mat& wt, Mat& h) {
  for (Index r = 0; r < wt.rows(); ++r) {
    const double nr = wt.row(r).norm();
    if (nr > 0.0) {
      wt.row(r) /= nr;
      h.row(r) *= nr;
    }
  }
}

}  // namespace detail

/// GNMF: min ||X - W H||_F^2 + lambda tr(H L H'), W, H >= 0, by Cai's
/// multiplicative updates or by exact coordinate (HALS) updates, H (his V')
/// first. `graph` is the affinity
/// (n x n, symmetric, nonnegative, zero diagonal). lambda = 0 is Lee-Seung.
template <class DataT, class Hooks = NullHooks>
ManifoldResult gnmf(const DataT& x, const SpMat& graph, const Mat& w0,
                    const Mat& h0, const GnmfParams& p, Hooks& hooks) {
  const Index m = x.rows(), n = x.cols(), k = w0.cols();
  require(w0.rows() == m && h0.rows() == k && h0.cols() == n && k >= 1,
          "gnmf: W must be m x k and H k x n");
  require(graph.rows() == n && graph.cols() == n, "gnmf: graph must be n x n");
  require(p.max_iter >= 1 && p.min_iter >= 0 && p.tol >= 0 &&
              p.lambda >= 0 && p.threads >= 1,
          "gnmf: params");
  const bool reg = p.lambda > 0.0 && graph.nonZeros() > 0;
  const SpMat sw = p.lambda * graph;
  const Vec deg = degrees(sw);
  const double x2 = x.sq_norm();
  const double work = 2.0 * x.stored() * k;

  ManifoldResult r;
  Mat wt;  // k x m
  detail::transpose_chunks(w0, wt, p.threads);
  Mat& h = r.H;
  h = h0;
  detail::normalize_rows(wt, h);
  Mat wtx, xht, num, den;
  x.left_mult(wt, wtx, p.threads);
  auto objective = [&]() {
    const double hx = Parallel(p.threads).sum(n, [&](Index j) {
      return h.col(j).dot(wtx.col(j));
    }, 2.0 * k * n);
    const Mat wtw = wt * wt.transpose();
    const Mat hht = h * h.transpose();
    const double fit = std::max(0.0, x2 - 2.0 * hx + wtw.cwiseProduct(hht).sum());
    return fit + (reg ? graph_smoothness(sw, h) : 0.0);
  };
  double mean_fit = 10.0 * objective();

  // HALS: each row h_r of H, then each column w_r of W, is replaced by the
  // exact minimiser of the objective in it, so J never increases. For h_r
  // the graph couples the points: one Gauss-Seidel sweep over them in
  // index order (one thread: the same result for any thread count),
  // h_rj = max(0, (b_j + sum_i s_ij h_ri) / (w_r'w_r + d_j)), b = W'X - the
  // other components' fit. The penalty is not invariant to the scaling
  // (W D, D^-1 H): with W free, exact updates would shrink H and fade the
  // penalty, so W's columns stay at unit length (Cai normalises so before
  // and after), and w_r = [R h_r']_+ / ||[R h_r']_+|| is the exact
  // minimiser on the unit sphere.
  auto hals_step = [&]() {
    const Mat wtw = wt * wt.transpose();
    for (Index r = 0; r < k; ++r) {
      auto b = [&](Index j) {
        return wtx(r, j) - wtw.row(r).dot(h.col(j)) + wtw(r, r) * h(r, j);
      };
      if (reg) {
        for (Index j = 0; j < n; ++j) {
          double nu = b(j);
          for (SpMat::InnerIterator e(sw, j); e; ++e)
            nu += e.value() * h(r, e.row());
          h(r, j) = std::max(0.0, nu) / std::max(wtw(r, r) + deg[j], p.eps);
        }
      } else {
        Parallel(p.threads).for_chunks(n, [&](Index c, Index l) {
          for (Index j = c; j < c + l; ++j)
            h(r, j) = std::max(0.0, b(j)) / std::max(wtw(r, r), p.eps);
        }, 2.0 * k * n);
      }
    }
    x.left_mult_t(h, xht, p.threads);  // H X', k x m
    const Mat hht = h * h.transpose();
    Vec v(m);
    for (Index r = 0; r < k; ++r) {
      Parallel(p.threads).for_chunks(m, [&](Index c, Index l) {
        for (Index i = c; i < c + l; ++i)
          v[i] = std::max(0.0, xht(r, i) - hht.row(r).dot(wt.col(i)) +
                                   hht(r, r) * wt(r, i));
      }, 2.0 * k * m);
      const double nv = v.norm();
      if (nv > 0.0) wt.row(r) = v.transpose() / nv;
    }
    x.left_mult(wt, wtx, p.threads);
  };

  // Cai's multiplicative updates, H first.
  auto mu_step = [&]() {
    const Mat wtw = wt * wt.transpose();
    Parallel(p.threads).for_chunks(n, [&](Index b, Index l) {
      Mat nu = wtx.middleCols(b, l);
      Mat de = wtw * h.middleCols(b, l);
      if (reg) {
        nu.noalias() += h * sw.middleCols(b, l);
        for (Index q = 0; q < l; ++q) de.col(q) += deg[b + q] * h.col(b + q);
      }
      // the new columns depend on all of h through the graph: write to a
      // separate buffer
      num.middleCols(b, l) = nu;
      den.middleCols(b, l) = de;
    }, work);
    h.array() *= num.array() / den.array().max(p.eps);
    x.left_mult_t(h, xht, p.threads);  // H X', k x m
    const Mat hht = h * h.transpose();
    Parallel(p.threads).for_chunks(m, [&](Index b, Index l) {
      const Mat de = hht * wt.middleCols(b, l);
      wt.middleCols(b, l).array() *=
          xht.middleCols(b, l).array() / de.array().max(p.eps);
    }, work);
    x.left_mult(wt, wtx, p.threads);
  };

  // One iteration: H from W (and the graph), then W from H; wtx is W'X of
  // the current W on entry and on exit.
  auto step = [&](int it) {
    if (p.solver == GnmfSolver::hals) hals_step(); else mu_step();
    const double j = objective();
    mean_fit = p.mean_fit_ratio * mean_fit + (1.0 - p.mean_fit_ratio) * j;
    const bool done = it > p.min_iter && mean_fit > 0.0 &&
                      (mean_fit - j) / mean_fit <= p.tol;
    return StepOutcome{j, done};
  };
  num.resize(k, n);
  den.resize(k, n);
  drive(p.max_iter, hooks, r, step);
  detail::normalize_rows(wt, h);
  detail::transpose_chunks(wt, r.W, p.threads);
  detail::transpose_chunks(h, r.G, p.threads);
  r.graph = graph;
  return r;
}

namespace detail {

/// The ALM variables of RMNMF (and SMRMF's factorisation block) and its
/// steps, each the exact minimiser of the augmented Lagrangian in one
/// variable: E (m x n), F (m x k), H, G (n x k), multipliers Gam (m x n),
/// Sig (n x k), penalty mu.
struct AlmState {
  Mat F, G, H, E, Gam, Sig, A;
  double mu = 1e-3;

  void start(const Eigen::Ref<const Mat>& x, const Mat& f0, const Mat& g0,
             double mu0) {
    F = f0;
    G = g0;
    H = g0;
    E = Mat::Zero(x.rows(), x.cols());
    Gam = Mat::Zero(x.rows(), x.cols());
    Sig = Mat::Zero(g0.rows(), g0.cols());
    mu = mu0;
  }

  /// E <- prox of ||.||_{2,1} / mu at Q = X - F G' + Gam / mu, column-wise
  /// shrinkage e_j = max(0, 1 - 1 / (mu ||q_j||)) q_j.
  void update_e(const Eigen::Ref<const Mat>& x, int threads) {
    const double inv = 1.0 / mu;
    Parallel(threads).for_chunks(x.cols(), [&](Index b, Index l) {
      E.middleCols(b, l) = x.middleCols(b, l) - F * G.middleRows(b, l).transpose() +
                           inv * Gam.middleCols(b, l);
      for (Index j = b; j < b + l; ++j) {
        const double nq = E.col(j).norm();
        const double s = nq > 0.0 ? std::max(0.0, 1.0 - inv / nq) : 0.0;
        E.col(j) *= s;
      }
    }, 4.0 * x.size() * F.cols());
  }

  /// A = X - E + Gam / mu; F <- A G (G'G)^-1.
  void update_f(const Eigen::Ref<const Mat>& x, int threads) {
    A = x - E + Gam / mu;
    Mat ag(A.rows(), G.cols());
    Parallel(threads).for_chunks(A.rows(), [&](Index b, Index l) {
      ag.middleRows(b, l).noalias() = A.middleRows(b, l) * G;
    }, 2.0 * A.size() * G.cols());
    const Mat gtg = G.transpose() * G;
    F = gtg.ldlt().solve(ag.transpose()).transpose();
  }

  /// H <- max(0, G + Sig / mu - (lambda / mu) L G).
  void update_h(const SpMat& lap, double lambda) {
    const Mat lg = lap * G;
    H = (G + Sig / mu - (lambda / mu) * lg).cwiseMax(0.0);
  }

  /// G <- P Q' from the thin SVD of M = H - Sig/mu -/+ (lambda/mu) L H + A'F
  /// (the orthogonal Procrustes solution); `plus` is the author's sign.
  void update_g(const SpMat& lap, double lambda, bool plus, int threads) {
    Mat m(G.rows(), G.cols());
    Parallel(threads).for_chunks(A.cols(), [&](Index b, Index l) {
      m.middleRows(b, l).noalias() = A.middleCols(b, l).transpose() * F;
    }, 2.0 * A.size() * G.cols());
    const Mat lh = lap * H;
    m += H - Sig / mu + (plus ? 1.0 : -1.0) * (lambda / mu) * lh;
    Eigen::JacobiSVD<Mat> svd(m, Eigen::ComputeThinU | Eigen::ComputeThinV);
    G = svd.matrixU() * svd.matrixV().transpose();
  }

  /// Multipliers and penalty; returns the scaled primal residual
  /// max(||X - F G' - E|| / ||X||, ||G - H|| / sqrt(n)) and, through
  /// `loss21`, sum_j ||x_j - F g_j|| of the new factors.
  double update_multipliers(const Eigen::Ref<const Mat>& x, double rho,
                            double mu_max, double x_norm, int threads,
                            double& loss21) {
    const Index n = x.cols();
    const Index len = chunk_length(n);
    std::vector<double> r2((n + len - 1) / len), l21((n + len - 1) / len);
    Parallel(threads).for_chunks(n, [&](Index b, Index l) {
      Mat res = x.middleCols(b, l) - F * G.middleRows(b, l).transpose();
      double s = 0.0, t = 0.0;
      for (Index q = 0; q < l; ++q) t += res.col(q).norm();
      res -= E.middleCols(b, l);
      s = res.squaredNorm();
      Gam.middleCols(b, l) += mu * res;
      r2[b / len] = s;
      l21[b / len] = t;
    }, 4.0 * x.size() * F.cols());
    double s = 0.0;
    loss21 = 0.0;
    for (size_t i = 0; i < r2.size(); ++i) {
      s += r2[i];
      loss21 += l21[i];
    }
    Sig += mu * (G - H);
    const double rg = (G - H).norm() / std::sqrt(static_cast<double>(n));
    mu = std::min(rho * mu, mu_max);
    const double rx = x_norm > 0.0 ? std::sqrt(s) / x_norm : std::sqrt(s);
    return std::max(rx, rg);
  }

  /// Steps 1-5 of one ALM iteration on the Laplacian `lap`; returns the
  /// residual, `loss` gets the objective ||X - F G'||_{2,1} + lambda
  /// tr(G' L G).
  double iterate(const Eigen::Ref<const Mat>& x, const SpMat& lap,
                 const AlmParams& p, double x_norm, double& loss) {
    update_e(x, p.threads);
    update_f(x, p.threads);
    update_h(lap, p.lambda);
    update_g(lap, p.lambda, p.sign_compat, p.threads);
    double l21 = 0.0;
    const double res =
        update_multipliers(x, p.rho, p.mu_max, x_norm, p.threads, l21);
    loss = l21 + p.lambda * (G.transpose() * (lap * G)).trace();
    return res;
  }
};

/// The ALM stopping rule after iteration `it` with residual `res` and
/// objective `loss` (`trace`: the objectives before it): the residual is
/// at most tol, or the fit has stalled (residual <= stall_res and
/// |J_t - J_(t-1)| <= stall_obj J_t), in both cases after min_iter.
inline bool alm_converged(const AlmParams& p, int it, double res, double loss,
                          const std::vector<double>& trace) {
  if (it < p.min_iter) return false;
  if (res <= p.tol) return true;
  return res <= p.stall_res && !trace.empty() &&
         std::abs(loss - trace.back()) <= p.stall_obj * std::abs(loss);
}

}  // namespace detail

/// RMNMF: min ||X - F G'||_{2,1} + lambda tr(G' L G) s.t. G >= 0, G'G = I,
/// by the ALM of Huang et al. from F = f0 (m x k), G = g0 (n x k). X may be
/// signed. Stops when t >= min_iter and the scaled residual <= tol.
template <class Hooks = NullHooks>
ManifoldResult rmnmf(const Eigen::Ref<const Mat>& x, const SpMat& graph,
                     const Mat& f0, const Mat& g0, const AlmParams& p,
                     Hooks& hooks) {
  const Index n = x.cols(), k = f0.cols();
  require(f0.rows() == x.rows() && g0.rows() == n && g0.cols() == k && k >= 1,
          "rmnmf: F must be m x k and G n x k");
  require(graph.rows() == n && graph.cols() == n, "rmnmf: graph must be n x n");
  require(p.max_iter >= 1 && p.mu0 > 0 && p.rho >= 1 && p.mu_max >= p.mu0 &&
              p.lambda >= 0 && p.tol >= 0 && p.threads >= 1,
          "rmnmf: params");
  const SpMat lap = laplacian(graph);
  const double x_norm = x.norm();
  detail::AlmState s;
  s.start(x, f0, g0, p.mu0);
  ManifoldResult r;
  drive(p.max_iter, hooks, r, [&](int it) {
    r.mu.push_back(s.mu);
    double loss = 0.0;
    const double res = s.iterate(x, lap, p, x_norm, loss);
    r.residual.push_back(res);
    return StepOutcome{loss, detail::alm_converged(p, it, res, loss, r.loss)};
  });
  r.W = s.F;
  r.H = s.H.transpose();
  r.G = s.G;
  r.graph = graph;
  return r;
}

/// Cluster of each point: the argmax of each row of G (ties to the lowest
/// index), 0-based.
inline std::vector<int> argmax_rows(const Mat& g) {
  std::vector<int> lab(static_cast<size_t>(g.rows()));
  for (Index i = 0; i < g.rows(); ++i) {
    Index best = 0;
    for (Index r = 1; r < g.cols(); ++r)
      if (g(i, r) > g(i, best)) best = r;
    lab[static_cast<size_t>(i)] = static_cast<int>(best);
  }
  return lab;
}

}  // namespace nmfkit
