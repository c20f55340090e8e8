// Shared types of the nmfkit core. No R headers anywhere in the core.
#pragma once

#include <Eigen/Dense>
#include <Eigen/Sparse>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace nmfkit {

using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;
using SpMat = Eigen::SparseMatrix<double, Eigen::ColMajor, int>;
using Index = Eigen::Index;

/// How a solver stopped. Non-convergence is a status, never an exception.
enum class Status { converged, max_iter, interrupted, numerical_error };

/// Name of a status as the R layer reports it.
inline const char* status_name(Status s) {
  switch (s) {
    case Status::converged:
      return "converged";
    case Status::max_iter:
      return "max_iter";
    case Status::interrupted:
      return "interrupted";
    case Status::numerical_error:
      return "numerical_error";
  }
  return "unknown";
}

/// What every factorisation returns: W (m x k), H (k x n), the loss trace
/// (one entry per completed outer iteration), the iteration count and how it
/// stopped. Variants derive from it to add their own fields.
struct Result {
  Mat W;
  Mat H;
  std::vector<double> loss;
  int iterations = 0;
  Status status = Status::max_iter;
  /// The first iteration's projected-gradient violation (the stopping
  /// rule's own reference; NaN for solvers without that rule).
  double first_violation = NAN;
};

/// Throws std::invalid_argument: the core's answer to input the R layer
/// should have rejected (a bug upstream, never a crash).
inline void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("nmfkit core: " + what);
}

}  // namespace nmfkit
