// Permutation NMF (Barbarino, arXiv 1608.01372): images of m = rows * cols
// pixels as the columns of X (m x n), X ~ W <> H (the paper's W <> H^T; our
// H = rho is k x n), where every (image j, atom t) pair has one coefficient
// rho(t, j) >= 0 and one shift G(t, j) of a group of size m, minimising
//   F = sum_j || x_j - sum_t rho(t, j) S_{G(t, j)} w_t ||^2.
// H step: MultPermNNLS (exact block coordinate descent over atoms, each block
// solved by FFT cross-correlation). W step: shifted HALS (exact per atom, as
// S^T S = I) or projected gradient with step 1/L, L = 2 lambda_max(R^T R).
#pragma once

#include <limits>
#include <utility>
#include <vector>

#include "hooks.hpp"
#include "shift_kernels.hpp"
#include "shift_solver.hpp"
#include "types.hpp"

namespace nmfkit {

/// Permutation NMF from several starts (drawn by the caller); keeps the run
/// with the smallest final relative error (the first on ties). The plans are
/// made once and shared by all runs.
template <class Hooks = NullHooks>
ShiftResult nmf_shift(const Eigen::Ref<const Mat>& x, Index rows, Index cols,
                      const std::vector<ShiftStart>& starts,
                      const ShiftParams& p, Hooks& hooks) {
  require(!starts.empty(), "nmf_shift: at least one start");
  ShiftSolver solver(x, rows, cols, p);
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

/// Coefficients and shifts of the images in X on fixed atoms W: MultPermNNLS
/// from rho = 0 (its first sweep is greedy matching), `p.inner` sweeps.
/// loss holds the relative error of the projection.
template <class Hooks = NullHooks>
ShiftResult shift_project(const Eigen::Ref<const Mat>& x, Index rows,
                          Index cols, const Mat& w, const ShiftParams& p,
                          Hooks& hooks) {
  ShiftSolver solver(x, rows, cols, p);
  solver.set_state(w, Mat::Zero(w.cols(), x.cols()),
                   IMat::Zero(w.cols(), x.cols()));
  ShiftResult r;
  r.status = solver.h_step(hooks) ? Status::converged : Status::interrupted;
  r.W = w;
  r.H = solver.rho();
  r.G = solver.G();
  r.loss.push_back(solver.rel_error());
  r.iterations = 1;
  return r;
}

/// Sum of terms coef_i S_{g_i} W[, atom_i] into column image_i of an m x n
/// matrix (m = rows * cols pixels, n images; 0-based indices): the model's
/// reconstruction, also for the composed terms of the two-stage method.
inline Mat shift_reconstruct(const Mat& w, Index rows, Index cols,
                             ShiftGroup group, const std::vector<int>& image,
                             const std::vector<int>& atom,
                             const std::vector<double>& coef,
                             const std::vector<int>& g, Index n) {
  const Index m = rows * cols;
  require(w.rows() == m, "shift_reconstruct: W must have rows * cols rows");
  require(image.size() == atom.size() && atom.size() == coef.size() &&
              coef.size() == g.size(),
          "shift_reconstruct: term vectors must have equal lengths");
  Mat out = Mat::Zero(m, n);
  for (size_t i = 0; i < image.size(); ++i) {
    require(image[i] >= 0 && image[i] < n && atom[i] >= 0 &&
                atom[i] < w.cols() && g[i] >= 0 && g[i] < m,
            "shift_reconstruct: term index out of range");
    detail::add_shifted_real(rows, cols, group, w.col(atom[i]).data(), g[i],
                             coef[i], out.col(image[i]).data());
  }
  return out;
}

}  // namespace nmfkit
