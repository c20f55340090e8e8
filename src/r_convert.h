// Shared conversions between R objects and the core's types: the one place
// where control lists become Params and Results become named lists.
#pragma once

#include <RcppEigen.h>

#include <nmfkit.hpp>
#include <string>

namespace nmfkit_r {

using MapMat = Eigen::Map<Eigen::MatrixXd>;
using MapSp = Eigen::Map<Eigen::SparseMatrix<double>>;

/// Reads an integer / double / logical setting of a control list.
inline int ctrl_int(const Rcpp::List& c, const char* name) {
  return Rcpp::as<int>(c[name]);
}
inline double ctrl_dbl(const Rcpp::List& c, const char* name) {
  return Rcpp::as<double>(c[name]);
}

/// nmf_control() -> NmfParams (method given separately).
inline nmfkit::NmfParams nmf_params(const Rcpp::List& control,
                                    const std::string& method) {
  nmfkit::NmfParams p;
  p.method = method == "mu"     ? nmfkit::Method::mu
             : method == "anls" ? nmfkit::Method::anls
                                : nmfkit::Method::hals;
  p.max_iter = ctrl_int(control, "max_iter");
  p.tol = ctrl_dbl(control, "tol");
  p.threads = ctrl_int(control, "threads");
  if (control.containsElementNamed("inner") && !Rf_isNull(control["inner"]))
    p.inner = ctrl_int(control, "inner");
  return p;
}

/// Calls f(data) with x wrapped as DenseData (a double matrix) or SparseData
/// (a dgCMatrix), without copying x.
template <class F>
auto with_data(SEXP x, F&& f) {
  if (Rf_isS4(x)) {
    const MapSp xs = Rcpp::as<MapSp>(x);
    const nmfkit::SparseData<MapSp> data(xs);
    return f(data);
  }
  const MapMat xd = Rcpp::as<MapMat>(x);
  const nmfkit::DenseData data(xd);
  return f(data);
}

/// The fields every Result has, as a named list.
inline Rcpp::List result_list(const nmfkit::Result& r) {
  return Rcpp::List::create(
      Rcpp::Named("W") = r.W, Rcpp::Named("H") = r.H,
      Rcpp::Named("loss") = r.loss, Rcpp::Named("iterations") = r.iterations,
      Rcpp::Named("status") = std::string(nmfkit::status_name(r.status)));
}

}  // namespace nmfkit_r
