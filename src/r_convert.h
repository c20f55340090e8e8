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

/// nmf_control() -> StratifiedParams. The control's tol applies only when
/// the user set it (the reference code runs a fixed number of iterations);
/// eps is the denominators' guard (the R layer fills in 1e-9).
inline nmfkit::StratifiedParams stratified_params(const Rcpp::List& control,
                                                  const std::string& order,
                                                  int v_updates) {
  nmfkit::StratifiedParams p;
  p.order = order == "jacobi" ? nmfkit::UpdateOrder::jacobi
                              : nmfkit::UpdateOrder::gauss_seidel;
  p.v_updates = v_updates;
  p.max_iter = ctrl_int(control, "max_iter");
  p.tol = Rcpp::as<bool>(control["tol_set"]) ? ctrl_dbl(control, "tol") : 0.0;
  p.eps = ctrl_dbl(control, "eps");
  p.threads = ctrl_int(control, "threads");
  return p;
}

/// Reads a setting of a control list, or `def` when it is absent or NULL.
inline double ctrl_dbl_or(const Rcpp::List& c, const char* name, double def) {
  if (!c.containsElementNamed(name) || Rf_isNull(c[name])) return def;
  return Rcpp::as<double>(c[name]);
}

/// nmf_control() -> GnmfParams; the R layer has filled in tol (1e-5 unless
/// set) and min_iter.
inline nmfkit::GnmfParams gnmf_params(const Rcpp::List& control,
                                      double lambda) {
  nmfkit::GnmfParams p;
  p.lambda = lambda;
  p.max_iter = ctrl_int(control, "max_iter");
  p.min_iter = static_cast<int>(ctrl_dbl_or(control, "min_iter", 30));
  p.tol = ctrl_dbl(control, "tol");
  p.threads = ctrl_int(control, "threads");
  return p;
}

/// nmf_control() -> AlmParams (RMNMF and the SMRMF family); the R layer has
/// filled in the variant's knobs (mu0, rho, mu_max, sign_compat).
inline nmfkit::AlmParams alm_params(const Rcpp::List& control, double lambda) {
  nmfkit::AlmParams p;
  p.lambda = lambda;
  p.max_iter = ctrl_int(control, "max_iter");
  p.min_iter = static_cast<int>(ctrl_dbl_or(control, "min_iter", 30));
  p.tol = ctrl_dbl(control, "tol");
  p.threads = ctrl_int(control, "threads");
  p.mu0 = ctrl_dbl(control, "mu0");
  p.rho = ctrl_dbl(control, "rho");
  p.mu_max = ctrl_dbl(control, "mu_max");
  p.sign_compat = Rcpp::as<bool>(control["sign_compat"]);
  return p;
}

/// nmf_control() -> SmrmfParams (SMRMF, f-SMRMF, SMRMF-NS, SMRMF-Euc); the
/// R layer has filled in every knob.
inline nmfkit::SmrmfParams smrmf_params(const Rcpp::List& control,
                                        double lambda, bool fast, int k,
                                        int exemplars) {
  nmfkit::SmrmfParams p;
  p.alm = alm_params(control, lambda);
  const bool split = Rcpp::as<bool>(control["split"]);
  p.kind = fast ? nmfkit::SmrmfKind::fast
                : (split ? nmfkit::SmrmfKind::smrmf : nmfkit::SmrmfKind::ns);
  const std::string kernel = Rcpp::as<std::string>(control["kernel"]);
  p.kernel = kernel == "sigma_i2"    ? nmfkit::ZKernel::sigma_i2
             : kernel == "sigma_i"   ? nmfkit::ZKernel::sigma_i
             : kernel == "euclidean" ? nmfkit::ZKernel::euclidean
                                     : nmfkit::ZKernel::selftune;
  p.k = k;
  p.exemplars = exemplars;
  p.beta = ctrl_dbl(control, "beta");
  p.w_g = ctrl_dbl(control, "w_g");
  p.mu_z = ctrl_dbl(control, "mu_z");
  p.gamma = ctrl_dbl(control, "gamma");
  p.ds3_max_iter = ctrl_int(control, "ds3_max_iter");
  p.rank_linf = Rcpp::as<std::string>(control["rank_norm"]) == "linf";
  p.keep_z = Rcpp::as<bool>(control["keep_z"]);
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
