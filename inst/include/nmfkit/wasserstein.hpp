// Wasserstein NMF (Rolet, Cuturi & Peyre, AISTATS 2016): histograms X (m x n,
// columns on the simplex) ~ D Lambda with an entropic-OT loss and entropy
// penalties. The two convex subproblems are solved in their smooth duals over
// G (m x n) by L-BFGS (LBFGS++), warm-started across outer iterations; the
// primal factors are recovered by softmax.
#pragma once

#include <chrono>
#include <cmath>
#include <limits>
#include <optimization/LBFGS.h>
#include <vector>

#include "driver.hpp"
#include "hooks.hpp"
#include "parallel.hpp"
#include "sinkhorn.hpp"
#include "types.hpp"

namespace nmfkit {

/// Settings of nmf_wasserstein(). rho_weights (rho1) regularises Lambda,
/// rho_dict (rho2) the dictionary D.
struct WassersteinParams {
  double rho_weights = 0.05;
  double rho_dict = 0.05;
  int outer = 10;       ///< outer iterations (D step, then Lambda step)
  int max_iter = 250;   ///< L-BFGS iterations per subproblem
  double tol = 1e-4;    ///< stop a subproblem when max |grad| <= tol
  int history = 10;     ///< L-BFGS memory
  int threads = 1;
};

/// How one dual subproblem ended.
struct DualStats {
  int iterations = 0;   ///< L-BFGS iterations
  int evaluations = 0;  ///< objective and gradient evaluations
  double grad_max = 0;  ///< max |gradient| at the returned point
  double value = 0;     ///< dual objective at the returned point
  Status status = Status::max_iter;
};

/// W = D (m x k), H = Lambda (k x n), loss = the primal objective
/// sum OT_eps(x_i, D l_i) + rho1 sum E(l_i) + rho2 sum E(d_t) after each outer
/// iteration, and the per-iteration L-BFGS statistics of both steps.
struct WassersteinResult : Result {
  std::vector<DualStats> dict_steps, weight_steps;
};

namespace detail {

/// Column-wise rho * LSE(z / rho), summed, and the column softmax of z / rho.
inline double lse_softmax(const Mat& z, double rho, Mat& sm) {
  sm.resize(z.rows(), z.cols());
  double total = 0.0;
  for (Index j = 0; j < z.cols(); ++j) {
    const double mx = z.col(j).maxCoeff();
    sm.col(j) = ((z.col(j).array() - mx) / rho).exp();
    const double s = sm.col(j).sum();
    sm.col(j) /= s;
    total += mx + rho * std::log(s);
  }
  return total;
}

/// sum_t E(d_t) = sum d log d (0 log 0 = 0).
inline double neg_entropy(const Mat& d) {
  double s = 0.0;
  for (Index i = 0; i < d.size(); ++i) {
    const double v = d.data()[i];
    if (v > 0) s += v * std::log(v);
  }
  return s;
}

/// The data term of every dual here, sum_i OT*(x_i, g_i), and its gradient
/// (semidual()); x holds the histograms, log_x = safe_log(x).
struct SemiDualTerm {
  const OtKernel& kernel;
  const Mat& x;
  const Mat& log_x;
  int threads;
  double operator()(const Eigen::Ref<const Mat>& g, Eigen::Ref<Mat> grad,
                    Vec* per_col = nullptr) const {
    return semidual(kernel, x, log_x, g, grad, threads, per_col);
  }
};

/// Which factor a dual step solves for, the other held fixed.
enum class FactorStep { weights, dictionary };

/// Dual of one factor's step, with `fixed` the other factor:
///   weights (D fixed):
///     F(G) = sum_i OT*(x_i, g_i) + rho sum_i LSE(-D' g_i / rho);
///   dictionary (Lambda fixed):
///     F(G) = sum_i OT*(x_i, g_i) + rho sum_t LSE(-(G Lambda')_t / rho).
struct FactorDual {
  SemiDualTerm ot;
  FactorStep step;
  const Mat& fixed;
  double rho;
  double operator()(const Eigen::Ref<const Mat>& g, Eigen::Ref<Mat> grad) const {
    double v = ot(g, grad);
    if (step == FactorStep::dictionary) {
      Mat sm;
      v += lse_softmax(-(g * fixed.transpose()), rho, sm);
      grad.noalias() -= sm * fixed;
      return v;
    }
    // the weights' penalty: two k x m products per column
    v += Parallel(ot.threads).sum_by_chunk(ot.x.cols(), [&](Index b, Index l) {
      const Mat z = -(fixed.transpose() * g.middleCols(b, l));
      Mat sm;
      const double p = lse_softmax(z, rho, sm);
      grad.middleCols(b, l).noalias() -= fixed * sm;
      return p;
    }, 4.0 * static_cast<double>(fixed.size()) * ot.x.cols(), kOtChunks);
    return v;
  }
  /// The factor solved for: Lambda = softmax(-D' G / rho) (k x n), or
  /// D = softmax(-G Lambda' / rho) (m x k).
  Mat primal(const Mat& g) const {
    Mat sm;
    if (step == FactorStep::dictionary)
      lse_softmax(-(g * fixed.transpose()), rho, sm);
    else
      lse_softmax(-(fixed.transpose() * g), rho, sm);
    return sm;
  }
};

/// The semi-dual of OT from a to b, max_v <v, b> - OT*(a, v), negated for
/// minimisation.
struct TransportDual {
  SemiDualTerm ot;
  const Mat& b;
  double operator()(const Eigen::Ref<const Mat>& g, Eigen::Ref<Mat> grad) const {
    const double s = ot(g, grad);
    grad -= b;
    return s - (g.array() * b.array()).sum();
  }
};

struct StopConverged {};
struct StopInterrupted {};
struct StopNumerical {};

/// Adapts a dual to LBFGS++ on the flattened G: tracks the best point seen,
/// counts iterations, stops on max |grad| <= tol at an accepted point, and
/// polls the host for interrupts at most every 50 ms (from the calling
/// thread, outside any parallel region).
template <class Dual, class Hooks>
class DualFunctor {
 public:
  DualFunctor(const Dual& dual, Index m, Index n, double tol, Hooks& hooks)
      : dual_(dual), m_(m), n_(n), tol_(tol), hooks_(hooks) {}

  double operator()(const Vec& x, Vec& grad) {
    const Eigen::Map<const Mat> g(x.data(), m_, n_);
    Eigen::Map<Mat> gr(grad.data(), m_, n_);
    const double f = dual_(g, gr);
    ++evaluations;
    if (!std::isfinite(f) || !grad.allFinite()) throw StopNumerical{};
    // Keep the lowest f; within rounding of it (where the line search can no
    // longer tell points apart) prefer the smaller gradient.
    offer(x, f, grad.cwiseAbs().maxCoeff());
    poll();
    return f;
  }

  /// Called by the line search at the start of every iteration, at the
  /// current (accepted) point and its gradient.
  void start_iteration(const Vec& xp, const Vec& grad, double fx) {
    const double gmax = grad.cwiseAbs().maxCoeff();
    if (gmax <= tol_) {
      best_x = xp;
      best_f = fx;
      best_gmax = gmax;
      throw StopConverged{};
    }
    ++iterations;
  }

  /// Keeps the lowest f; within rounding of it (where the line search can
  /// no longer tell points apart) prefers the smaller gradient.
  void offer(const Vec& x, double f, double gmax) {
    const double fuzz = 8 * std::numeric_limits<double>::epsilon() *
                        std::max(1.0, std::abs(f));
    if (f < lowest_f_ - fuzz || (f <= lowest_f_ + fuzz && gmax < best_gmax)) {
      best_f = f;
      best_x = x;
      best_gmax = gmax;
    }
    lowest_f_ = std::min(lowest_f_, f);
  }

  void poll() {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll_ < std::chrono::milliseconds(50)) return;
    last_poll_ = now;
    if (hooks_.check_interrupt()) throw StopInterrupted{};
  }

  Vec best_x;
  double best_f = std::numeric_limits<double>::infinity();
  double best_gmax = std::numeric_limits<double>::infinity();
  int iterations = 0;
  int evaluations = 0;

 private:
  const Dual& dual_;
  Index m_, n_;
  double tol_;
  double lowest_f_ = std::numeric_limits<double>::infinity();
  Hooks& hooks_;
  std::chrono::steady_clock::time_point last_poll_{};  // first call polls
};

/// More-Thuente line search that first reports each new iteration to the
/// functor (LBFGS++ has no callback of its own).
template <typename Scalar>
class ReportingLineSearch {
  using Vector = Eigen::Matrix<Scalar, Eigen::Dynamic, 1>;

 public:
  template <typename Foo, typename SolverParam>
  static void LineSearch(Foo& f, const SolverParam& param, const Vector& xp,
                         const Vector& drt, const Scalar& step_max,
                         Scalar& step, Scalar& fx, Vector& grad, Scalar& dg,
                         Vector& x) {
    f.start_iteration(xp, grad, fx);
    LBFGSpp::LineSearchMoreThuente<Scalar>::LineSearch(
        f, param, xp, drt, step_max, step, fx, grad, dg, x);
  }
};

/// Minimises a dual over G (m x n, warm start in, minimiser out) by L-BFGS.
template <class Dual, class Hooks>
DualStats minimise_dual(const Dual& dual, Mat& g, const WassersteinParams& p,
                        Hooks& hooks) {
  LBFGSpp::LBFGSParam<double> lp;
  lp.m = p.history;
  lp.epsilon = 0.0;  // the functor applies Optim.jl's max |grad| rule
  lp.epsilon_rel = 0.0;
  lp.max_iterations = p.max_iter;
  lp.max_linesearch = 40;
  LBFGSpp::LBFGSSolver<double, ReportingLineSearch> solver(lp);
  DualFunctor<Dual, Hooks> fun(dual, g.rows(), g.cols(), p.tol, hooks);
  Vec x = Eigen::Map<const Vec>(g.data(), g.size());
  DualStats st;
  try {
    double fx = 0.0;
    solver.minimize(fun, x, fx);
    const Vec& gr = solver.final_grad();
    const double gmax = gr.cwiseAbs().maxCoeff();
    st.status = gmax <= p.tol ? Status::converged : Status::max_iter;
    fun.offer(x, fx, gmax);
  } catch (const StopConverged&) {
    st.status = Status::converged;
  } catch (const StopInterrupted&) {
    st.status = Status::interrupted;
  } catch (const StopNumerical&) {
    st.status = Status::numerical_error;
  } catch (const std::exception&) {
    // the line search can make no more progress at machine precision
    st.status = Status::max_iter;
  }
  st.iterations = fun.iterations;
  st.evaluations = fun.evaluations;
  if (fun.best_x.size() == g.size()) {
    g = Eigen::Map<const Mat>(fun.best_x.data(), g.rows(), g.cols());
    st.value = fun.best_f;
    st.grad_max = fun.best_gmax;
  } else {  // interrupted before the first evaluation finished
    st.value = std::numeric_limits<double>::quiet_NaN();
    st.grad_max = std::numeric_limits<double>::quiet_NaN();
    if (st.status != Status::interrupted) st.status = Status::numerical_error;
  }
  return st;
}

inline void check_histograms(const Mat& x, const char* what) {
  require(x.allFinite() && (x.array() >= 0).all(),
          std::string(what) + " must be finite and nonnegative");
  for (Index j = 0; j < x.cols(); ++j)
    require(std::abs(x.col(j).sum() - 1.0) < 1e-8,
            std::string(what) + " columns must sum to one");
}

}  // namespace detail

/// The weights step alone (predict): Lambda = argmin sum_i OT_eps(x_i, D l_i)
/// + rho sum_i E(l_i) over the simplex, from the dual started at g (m x n;
/// zeros for a cold start). Returns Lambda (k x n); g holds the dual optimum.
template <class Hooks = NullHooks>
Mat wasserstein_weights(const OtKernel& kernel, const Mat& x, const Mat& d,
                        Mat& g, const WassersteinParams& p, DualStats& stats,
                        Hooks&& hooks = Hooks()) {
  require(kernel.size() == x.rows() && d.rows() == x.rows() &&
              g.rows() == x.rows() && g.cols() == x.cols(),
          "wasserstein_weights: dimensions do not match");
  require(p.rho_weights > 0 && p.max_iter >= 1, "bad settings");
  detail::check_histograms(x, "x");
  const Mat log_x = safe_log(x);
  const detail::FactorDual dual{{kernel, x, log_x, p.threads},
                                detail::FactorStep::weights, d, p.rho_weights};
  stats = detail::minimise_dual(dual, g, p, hooks);
  return dual.primal(g);
}

/// Entropic OT between the columns of a and b (m x n, on the simplex) by
/// L-BFGS on the semi-dual, OT_eps(a, b) = max_v <v, b> - OT*(a, v); the
/// plan's row marginals are exact and its column marginals are within
/// max |error| <= p.tol. Much faster than Sinkhorn when epsilon is small or
/// the histograms have thin tails. Returns the costs (the convention
/// <P,C> + eps sum P (log P - 1)); v (m x n) holds the dual potentials.
template <class Hooks = NullHooks>
Vec ot_lbfgs(const OtKernel& kernel, const Mat& a, const Mat& b, Mat& v,
             const WassersteinParams& p, DualStats& stats,
             Hooks&& hooks = Hooks()) {
  require(kernel.size() == a.rows() && b.rows() == a.rows() &&
              b.cols() == a.cols(),
          "ot_lbfgs: dimensions do not match");
  detail::check_histograms(a, "a");
  detail::check_histograms(b, "b");
  const Mat log_a = safe_log(a);
  const detail::SemiDualTerm ot{kernel, a, log_a, p.threads};
  const detail::TransportDual dual{ot, b};
  v = Mat::Zero(a.rows(), a.cols());
  stats = detail::minimise_dual(dual, v, p, hooks);
  Vec per_col;
  Mat grad(a.rows(), a.cols());
  ot(v, grad, &per_col);
  return (v.array() * b.array()).colwise().sum().transpose() - per_col.array();
}

/// Wasserstein NMF from starting factors w0 (m x k) and h0 (k x n), both with
/// columns on the simplex. Each outer iteration solves the dictionary step,
/// then the weights step (as the OptimalTransport.jl example does), each
/// warm-started from its previous dual optimum.
template <class Hooks = NullHooks>
WassersteinResult nmf_wasserstein(const OtKernel& kernel, const Mat& x,
                                  const Mat& w0, const Mat& h0,
                                  const WassersteinParams& p,
                                  Hooks&& hooks = Hooks()) {
  const Index m = x.rows(), n = x.cols(), k = w0.cols();
  require(kernel.size() == m && w0.rows() == m && h0.rows() == k &&
              h0.cols() == n && k >= 1,
          "nmf_wasserstein: dimensions do not match");
  require(p.rho_weights > 0 && p.rho_dict > 0 && p.outer >= 1 &&
              p.max_iter >= 1 && p.tol >= 0 && p.history >= 1,
          "nmf_wasserstein: bad settings");
  detail::check_histograms(x, "x");
  const Mat log_x = safe_log(x);
  const detail::SemiDualTerm ot{kernel, x, log_x, p.threads};
  WassersteinResult res;
  res.W = w0;
  res.H = h0;
  Mat g_dict = Mat::Zero(m, n), g_weights = Mat::Zero(m, n);
  // A failed or interrupted dual solve ends the fit with its status. The
  // fit runs all `outer` alternations (the example's fixed count); it is
  // "converged" when both dual solves of the last one converged.
  auto failed = [](const DualStats& st, StepOutcome& o) {
    if (st.status == Status::interrupted) o.interrupted = true;
    if (st.status == Status::numerical_error) o.finite = false;
    return o.interrupted || !o.finite;
  };
  // One factor's step: its dual solved from the warm start g, then the
  // factor recovered (unless the solve failed, which ends the fit).
  auto half_step = [&](detail::FactorStep step, const Mat& fixed, double rho,
                       Mat& g, Mat& factor, std::vector<DualStats>& stats,
                       StepOutcome& o) {
    const detail::FactorDual dual{ot, step, fixed, rho};
    stats.push_back(detail::minimise_dual(dual, g, p, hooks));
    if (failed(stats.back(), o)) return false;
    factor = dual.primal(g);
    return true;
  };
  bool both = false;
  drive(p.outer, hooks, res, [&](int) {
    StepOutcome o;
    if (!half_step(detail::FactorStep::dictionary, res.H, p.rho_dict, g_dict,
                   res.W, res.dict_steps, o) ||
        !half_step(detail::FactorStep::weights, res.W, p.rho_weights,
                   g_weights, res.H, res.weight_steps, o))
      return o;
    const DualStats& sd = res.dict_steps.back();
    const DualStats& sw = res.weight_steps.back();
    // strong duality: -F_Lambda(G*) = sum OT_eps(x_i, D l_i) + rho1 sum E(l_i)
    o.loss = -sw.value + p.rho_dict * detail::neg_entropy(res.W);
    both = sd.status == Status::converged && sw.status == Status::converged;
    return o;
  });
  if (res.status == Status::max_iter && both) res.status = Status::converged;
  return res;
}

}  // namespace nmfkit
