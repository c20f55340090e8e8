// Permutation NMF (Barbarino, arXiv 1608.01372): A ~ W <> H^T where every
// (image j, atom t) pair has one coefficient rho(t, j) >= 0 and one shift
// G(t, j) of a group G of size n, minimising
//   F = sum_j || a_j - sum_t rho(t, j) S_{G(t, j)} w_t ||^2.
// H step: MultPermNNLS (exact block coordinate descent over atoms, each block
// solved by FFT cross-correlation). W step: shifted HALS (exact per atom, as
// S^T S = I) or projected gradient with step 1/L, L = 2 lambda_max(R^T R).
#pragma once

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <string>
#include <vector>

#include "driver.hpp"
#include "fft.hpp"
#include "hooks.hpp"
#include "parallel.hpp"
#include "shift_kernels.hpp"
#include "types.hpp"

namespace nmfkit {

using IMat = Eigen::MatrixXi;

enum class WStep { hals, pg };

/// Settings of nmf_shift(). tol: stop when the relative error changes by
/// less than tol between outer iterations (0 runs max_iter iterations).
struct ShiftParams {
  ShiftGroup group = ShiftGroup::torus2d;
  WStep w_step = WStep::hals;
  int inner = 10;  // sweeps of MultPermNNLS and of the W step
  int max_iter = 30;
  double tol = 1e-6;
  int threads = 1;
  FftPlanner planner = FftPlanner::estimate;
};

/// A starting point: W (n x k), rho (k x m) and shifts G (k x m, in [0, n)).
struct ShiftStart {
  Mat W;
  Mat rho;
  IMat G;
};

/// Result: W, H = rho (k x m), the shifts G (k x m), the loss trace (relative
/// error after each outer iteration), the final relative error of each
/// restart, the index of the kept one and why the kept run stopped.
struct ShiftResult : Result {
  IMat G;
  std::vector<double> restart_loss;
  int best = 0;
  std::string stop = "max_iter";
};

/// Alternating solver on one data matrix A (n x m, images as columns). Holds
/// the plans (made once, here), the state (W, rho, G) and the residual
/// E = A - W <> H^T, kept current after every step.
class ShiftSolver {
 public:
  ShiftSolver(const Eigen::Ref<const Mat>& a, Index rows, Index cols,
              const ShiftParams& p)
      : a_(a), p_(p), par_(p.threads), fft_(rows, cols, p.group, p.planner) {
    require(rows * cols == a.rows(), "shift: rows * cols must be nrow(A)");
    require(p.inner >= 1 && p.max_iter >= 1 && p.threads >= 1 && p.tol >= 0,
            "shift: params");
    a_sq_ = a.squaredNorm();
  }

  Index n() const { return a_.rows(); }
  Index m() const { return a_.cols(); }
  const Mat& W() const { return w_; }
  const Mat& rho() const { return rho_; }
  const IMat& G() const { return g_; }
  const Mat& residual() const { return e_; }
  double sq_error() const { return e_.squaredNorm(); }
  double rel_error() const {
    return a_sq_ > 0.0 ? std::sqrt(sq_error() / a_sq_) : 0.0;
  }

  /// Sets the state and recomputes the residual.
  void set_state(const Mat& w, const Mat& rho, const IMat& g) {
    require(w.rows() == n() && w.cols() >= 1, "shift: W must be n x k");
    require(rho.rows() == w.cols() && rho.cols() == m() &&
                g.rows() == w.cols() && g.cols() == m(),
            "shift: rho and G must be k x m");
    require(w.allFinite() && (w.array() >= 0).all() && rho.allFinite() &&
                (rho.array() >= 0).all(),
            "shift: W and rho must be finite and nonnegative");
    require((g.array() >= 0).all() && (g.array() < n()).all(),
            "shift: shifts must lie in [0, n)");
    w_ = w;
    rho_ = rho;
    g_ = g;
    recompute_residual();
  }

  /// H step: MultPermNNLS for every image (in parallel chunks of images,
  /// each worker with its own FFT buffers), then the residual. The host may
  /// interrupt between groups of chunks; returns false if it did (the state
  /// stays consistent: each image is updated whole or not at all).
  template <class Hooks>
  bool h_step(Hooks& hooks) {
    const Index k = w_.cols();
    const AtomSpectra at(fft_, w_);
    std::vector<FftWork> works;
    for (int i = 0; i < par_.slots(); ++i) works.push_back(fft_.make_work());
    // per image: `inner` sweeps over k atoms, each a few length-n transforms
    const double nd = static_cast<double>(n());
    const double work = static_cast<double>(m()) * p_.inner * k * nd *
                        (4.0 + std::log2(std::max(nd, 2.0)));
    // images are independent: any schedule gives the same bits
    return par_.for_slots(m(), &hooks, [&](Index b, Index l, int slot) {
      FftWork& wk = works[static_cast<size_t>(slot)];
      for (Index j = b; j < b + l; ++j) {
        // the image's spectrum starts as the Fourier residual (wk.spec2)
        std::copy(a_.col(j).data(), a_.col(j).data() + n(), wk.real.data());
        fft_.forward(wk.real.data(), wk.spec2.data());
        mult_perm_nnls(fft_, wk.spec2.data(), at, p_.inner,
                       rho_.col(j).data(), g_.col(j).data(), wk);
        residual_col(j);
      }
    }, work);
  }

  /// W step by the chosen method, `inner` passes; the residual stays current.
  void w_step() {
    if (p_.w_step == WStep::hals)
      w_step_hals();
    else
      w_step_pg();
  }

  /// w_t <- w_t / ||w_t||, rho(t, .) <- rho(t, .) ||w_t||; the fit is kept.
  void normalise() {
    for (Index t = 0; t < w_.cols(); ++t) {
      const double nrm = w_.col(t).norm();
      if (nrm > 0.0) {
        w_.col(t) /= nrm;
        rho_.row(t) *= nrm;
      }
    }
  }

  /// Gradient of F in W (Appendix A): -2 E <> H', column t being
  /// -2 sum_j rho(t, j) S_{G(t, j)}^{-1} e_j.
  Mat gradient() const {
    Mat grad(n(), w_.cols());
    for (Index t = 0; t < w_.cols(); ++t) grad.col(t) = -2.0 * back_project(t);
    return grad;
  }

  /// Lipschitz constant of the W gradient: 2 lambda_max(R^T R), R = rho^T.
  double lipschitz() const {
    const Mat rtr = rho_ * rho_.transpose();
    Eigen::SelfAdjointEigenSolver<Mat> es(rtr, Eigen::EigenvaluesOnly);
    return 2.0 * std::max(0.0, es.eigenvalues().maxCoeff());
  }

  /// One run from a start (W is normalised first): H step, W step,
  /// normalisation, until the relative error changes by less than tol, the
  /// shifts cycle, max_iter, or an interrupt.
  template <class Hooks>
  ShiftResult run(const ShiftStart& s, Hooks& hooks) {
    Mat w0 = s.W;
    for (Index t = 0; t < w0.cols(); ++t) {
      const double nrm = w0.col(t).norm();
      if (nrm > 0.0) w0.col(t) /= nrm;
    }
    set_state(w0, s.rho, s.G);
    ShiftResult r;
    std::deque<IMat> recent;
    std::deque<double> recent_loss;
    Mat w_prev, rho_prev;  // the last finite iterate
    IMat g_prev;
    auto step = [&](int) {
      w_prev = w_;
      rho_prev = rho_;
      g_prev = g_;
      StepOutcome o;
      if (!h_step(hooks)) {
        o.interrupted = true;
        return o;
      }
      w_step();
      normalise();
      o.loss = rel_error();
      if (std::isfinite(o.loss))
        o.converged = stopped(o.loss, r.loss, r.stop, recent, recent_loss);
      return o;
    };
    drive(p_.max_iter, hooks, r, step, [&]() {
      w_ = w_prev;
      rho_ = rho_prev;
      g_ = g_prev;
    });
    if (r.status != Status::converged) r.stop = status_name(r.status);
    r.W = w_;
    r.H = rho_;
    r.G = g_;
    return r;
  }

 private:
  // Plateau: |change of the relative error| < tol. Cycle: the shifts equal
  // those of 2 to 4 iterations earlier (not the last) while the relative
  // error fell by less than 0.1% since then.
  bool stopped(double loss, const std::vector<double>& trace,
               std::string& why, std::deque<IMat>& recent,
               std::deque<double>& recent_loss) const {
    constexpr size_t kWindow = 4;
    constexpr double kCycleProgress = 1e-3;
    bool stop = false;
    if (loss == 0.0) {
      stop = true;
      why = "exact";
    } else if (p_.tol > 0.0 && !trace.empty() &&
               std::abs(trace.back() - loss) < p_.tol) {
      stop = true;
      why = "plateau";
    } else if (p_.tol > 0.0 && !recent.empty() && recent.back() != g_) {
      for (size_t lag = 2; lag <= recent.size(); ++lag) {
        const size_t i = recent.size() - lag;
        if (recent[i] == g_ &&
            recent_loss[i] - loss < kCycleProgress * recent_loss[i]) {
          stop = true;
          why = "cycle";
          break;
        }
      }
    }
    recent.push_back(g_);
    recent_loss.push_back(loss);
    if (recent.size() > kWindow) {
      recent.pop_front();
      recent_loss.pop_front();
    }
    return stop;
  }

  Index rows() const { return fft_.rows(); }
  Index cols() const { return fft_.cols(); }

  void residual_col(Index j) {
    double* e = e_.col(j).data();
    std::copy(a_.col(j).data(), a_.col(j).data() + n(), e);
    for (Index t = 0; t < w_.cols(); ++t)
      detail::add_shifted_real(rows(), cols(), p_.group, w_.col(t).data(),
                               g_(t, j), -rho_(t, j), e);
  }

  void recompute_residual() {
    e_.resize(n(), m());
    par_.for_chunks(m(), [&](Index c0, Index len) {
      for (Index j = c0; j < c0 + len; ++j) residual_col(j);
    }, 2.0 * static_cast<double>(a_.size()) * w_.cols());
  }

  // sum_j rho(t, j) S_{G(t, j)}^{-1} e_j, summed in fixed chunks of images.
  Vec back_project(Index t) const {
    const Index len = detail::chunk_length(m());
    const Index chunks = (m() + len - 1) / len;
    Mat part = Mat::Zero(n(), chunks);
    par_.for_chunks(m(), [&](Index c0, Index l) {
      double* acc = part.col(c0 / len).data();
      for (Index j = c0; j < c0 + l; ++j) {
        const Index ginv = detail::inverse_shift(rows(), cols(), p_.group,
                                                 g_(t, j));
        detail::add_shifted_real(rows(), cols(), p_.group, e_.col(j).data(),
                                 ginv, rho_(t, j), acc);
      }
    }, 2.0 * static_cast<double>(a_.size()));
    Vec out = part.col(0);
    for (Index c = 1; c < chunks; ++c) out += part.col(c);
    return out;
  }

  // e_j -= rho(t, j) S_{G(t, j)} d for every image.
  void subtract_from_residual(Index t, const Vec& d) {
    par_.for_chunks(m(), [&](Index c0, Index l) {
      for (Index j = c0; j < c0 + l; ++j)
        detail::add_shifted_real(rows(), cols(), p_.group, d.data(), g_(t, j),
                                 -rho_(t, j), e_.col(j).data());
    }, 2.0 * static_cast<double>(a_.size()));
  }

  // Exact minimisation over one atom at a time: the Hessian in w_t is
  // 2 (sum_j rho(t, j)^2) I, so the minimiser is a projected Newton step.
  void w_step_hals() {
    for (int pass = 0; pass < p_.inner; ++pass) {
      for (Index t = 0; t < w_.cols(); ++t) {
        const double s = rho_.row(t).squaredNorm();
        if (!(s > 0.0)) continue;
        const Vec num = back_project(t);
        const Vec w_new = (w_.col(t) + num / s).cwiseMax(0.0);
        const Vec d = w_new - w_.col(t);
        subtract_from_residual(t, d);
        w_.col(t) = w_new;
      }
    }
  }

  // Projected gradient with the exact Lipschitz step.
  void w_step_pg() {
    const double lip = lipschitz();
    if (!(lip > 0.0)) return;
    for (int pass = 0; pass < p_.inner; ++pass) {
      const Mat grad = gradient();
      w_ = (w_ - grad / lip).cwiseMax(0.0);
      recompute_residual();
    }
  }

  Eigen::Ref<const Mat> a_;
  ShiftParams p_;
  Parallel par_;
  Fft fft_;
  double a_sq_ = 0.0;
  Mat w_, rho_, e_;
  IMat g_;
};

/// Permutation NMF from several starts (drawn by the caller); keeps the run
/// with the smallest final relative error (the first on ties). The plans are
/// made once and shared by all runs.
template <class Hooks = NullHooks>
ShiftResult shift_nmf(const Eigen::Ref<const Mat>& a, Index rows, Index cols,
                      const std::vector<ShiftStart>& starts,
                      const ShiftParams& p, Hooks& hooks) {
  require(!starts.empty(), "shift_nmf: at least one start");
  ShiftSolver solver(a, rows, cols, p);
  ShiftResult best;
  std::vector<double> finals;
  double best_loss = std::numeric_limits<double>::infinity();
  for (size_t i = 0; i < starts.size(); ++i) {
    ShiftResult r = solver.run(starts[i], hooks);
    const double fin = r.loss.empty() ? std::numeric_limits<double>::infinity()
                                      : r.loss.back();
    finals.push_back(fin);
    const bool interrupted = r.status == Status::interrupted;
    if (i == 0 || fin < best_loss) {
      best = std::move(r);
      best.best = int(i);
      best_loss = fin;
    }
    if (interrupted) {
      best.status = Status::interrupted;
      best.stop = "interrupted";
      break;
    }
  }
  best.restart_loss = finals;
  return best;
}

/// Coefficients and shifts of the images in A on fixed atoms W: MultPermNNLS
/// from rho = 0 (its first sweep is greedy matching), `p.inner` sweeps.
/// loss holds the relative error of the projection.
template <class Hooks = NullHooks>
ShiftResult shift_project(const Eigen::Ref<const Mat>& a, Index rows,
                          Index cols, const Mat& w, const ShiftParams& p,
                          Hooks& hooks) {
  ShiftSolver solver(a, rows, cols, p);
  solver.set_state(w, Mat::Zero(w.cols(), a.cols()),
                   IMat::Zero(w.cols(), a.cols()));
  ShiftResult r;
  r.status = solver.h_step(hooks) ? Status::converged : Status::interrupted;
  r.W = w;
  r.H = solver.rho();
  r.G = solver.G();
  r.loss.push_back(solver.rel_error());
  r.iterations = 1;
  return r;
}

/// Sum of terms coef_i S_{g_i} W[, atom_i] into column image_i of an n x m
/// matrix (0-based indices): the model's reconstruction, also for the
/// composed terms of the two-stage method.
inline Mat shift_reconstruct(const Mat& w, Index rows, Index cols,
                             ShiftGroup group, const std::vector<int>& image,
                             const std::vector<int>& atom,
                             const std::vector<double>& coef,
                             const std::vector<int>& g, Index m) {
  const Index n = rows * cols;
  require(w.rows() == n, "shift_reconstruct: W must have rows * cols rows");
  require(image.size() == atom.size() && atom.size() == coef.size() &&
              coef.size() == g.size(),
          "shift_reconstruct: term vectors must have equal lengths");
  Mat out = Mat::Zero(n, m);
  for (size_t i = 0; i < image.size(); ++i) {
    require(image[i] >= 0 && image[i] < m && atom[i] >= 0 &&
                atom[i] < w.cols() && g[i] >= 0 && g[i] < n,
            "shift_reconstruct: term index out of range");
    detail::add_shifted_real(rows, cols, group, w.col(atom[i]).data(), g[i],
                             coef[i], out.col(image[i]).data());
  }
  return out;
}

}  // namespace nmfkit
