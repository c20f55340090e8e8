// The alternating solver of permutation NMF (see shift.hpp for the model):
// one data matrix X (m x n, images of m = rows * cols pixels as columns),
// its FFT plans, the state (W, rho, G) and the residual, with the H step
// (MultPermNNLS per image, shift_kernels.hpp), the W step and the outer
// loop of one run.
#pragma once

#include <algorithm>
#include <cmath>
#include <deque>
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

/// A starting point: W (m x k), rho (k x n) and shifts G (k x n, in [0, m)).
struct ShiftStart {
  Mat W;
  Mat rho;
  IMat G;
};

/// Result: W, H = rho (k x n), the shifts G (k x n), the loss trace (relative
/// error after each outer iteration), the final relative error of each
/// restart, the index of the kept one and why the kept run stopped.
struct ShiftResult : Result {
  IMat G;
  std::vector<double> restart_loss;
  int best = 0;
  std::string stop = "max_iter";
};

/// Alternating solver on one data matrix X (m x n, images as columns). Holds
/// the plans (made once, here), the state (W, rho, G) and the residual
/// E = X - W <> H, kept current after every step.
class ShiftSolver {
 public:
  ShiftSolver(const Eigen::Ref<const Mat>& x, Index rows, Index cols,
              const ShiftParams& p)
      : x_(x), p_(p), par_(p.threads), fft_(rows, cols, p.group, p.planner) {
    require(rows * cols == x.rows(), "shift: rows * cols must be nrow(X)");
    require(p.inner >= 1 && p.max_iter >= 1 && p.threads >= 1 && p.tol >= 0,
            "shift: params");
    x_sq_ = x.squaredNorm();
  }

  Index m() const { return x_.rows(); }  // pixels of an image
  Index n() const { return x_.cols(); }  // images
  const Mat& W() const { return w_; }
  const Mat& rho() const { return rho_; }
  const IMat& G() const { return g_; }
  const Mat& residual() const { return e_; }
  double sq_error() const { return e_.squaredNorm(); }
  double rel_error() const {
    return x_sq_ > 0.0 ? std::sqrt(sq_error() / x_sq_) : 0.0;
  }

  /// Sets the state and recomputes the residual.
  void set_state(const Mat& w, const Mat& rho, const IMat& g) {
    require(w.rows() == m() && w.cols() >= 1, "shift: W must be m x k");
    require(rho.rows() == w.cols() && rho.cols() == n() &&
                g.rows() == w.cols() && g.cols() == n(),
            "shift: rho and G must be k x n");
    require(w.allFinite() && (w.array() >= 0).all() && rho.allFinite() &&
                (rho.array() >= 0).all(),
            "shift: W and rho must be finite and nonnegative");
    require((g.array() >= 0).all() && (g.array() < m()).all(),
            "shift: shifts must lie in [0, m)");
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
    // per image: `inner` sweeps over k atoms, each a few length-m transforms
    const double md = static_cast<double>(m());
    const double work = static_cast<double>(n()) * p_.inner * k * md *
                        (4.0 + std::log2(std::max(md, 2.0)));
    // images are independent: any schedule gives the same bits
    return par_.for_slots(n(), &hooks, [&](Index b, Index l, int slot) {
      FftWork& wk = works[static_cast<size_t>(slot)];
      for (Index j = b; j < b + l; ++j) {
        // the image's spectrum starts as the Fourier residual (wk.spec2)
        std::copy(x_.col(j).data(), x_.col(j).data() + m(), wk.real.data());
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
    Mat grad(m(), w_.cols());
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
    std::copy(x_.col(j).data(), x_.col(j).data() + m(), e);
    for (Index t = 0; t < w_.cols(); ++t)
      detail::add_shifted_real(rows(), cols(), p_.group, w_.col(t).data(),
                               g_(t, j), -rho_(t, j), e);
  }

  void recompute_residual() {
    e_.resize(m(), n());
    par_.for_chunks(n(), [&](Index c0, Index len) {
      for (Index j = c0; j < c0 + len; ++j) residual_col(j);
    }, 2.0 * static_cast<double>(x_.size()) * w_.cols());
  }

  // sum_j rho(t, j) S_{G(t, j)}^{-1} e_j, summed in fixed chunks of images.
  Vec back_project(Index t) const {
    const Index len = detail::chunk_length(n());
    const Index chunks = (n() + len - 1) / len;
    Mat part = Mat::Zero(m(), chunks);
    par_.for_chunks(n(), [&](Index c0, Index l) {
      double* acc = part.col(c0 / len).data();
      for (Index j = c0; j < c0 + l; ++j) {
        const Index ginv = detail::inverse_shift(rows(), cols(), p_.group,
                                                 g_(t, j));
        detail::add_shifted_real(rows(), cols(), p_.group, e_.col(j).data(),
                                 ginv, rho_(t, j), acc);
      }
    }, 2.0 * static_cast<double>(x_.size()));
    Vec out = part.col(0);
    for (Index c = 1; c < chunks; ++c) out += part.col(c);
    return out;
  }

  // e_j -= rho(t, j) S_{G(t, j)} d for every image.
  void subtract_from_residual(Index t, const Vec& d) {
    par_.for_chunks(n(), [&](Index c0, Index l) {
      for (Index j = c0; j < c0 + l; ++j)
        detail::add_shifted_real(rows(), cols(), p_.group, d.data(), g_(t, j),
                                 -rho_(t, j), e_.col(j).data());
    }, 2.0 * static_cast<double>(x_.size()));
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

  Eigen::Ref<const Mat> x_;
  ShiftParams p_;
  Parallel par_;
  Fft fft_;
  double x_sq_ = 0.0;
  Mat w_, rho_, e_;
  IMat g_;
};

}  // namespace nmfkit
