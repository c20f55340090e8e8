// Glue for joint-NMF similarity: p-bar from the coefficients of the joint
// factorisation, and the two Chamfer distances. The factorisation itself
// goes through r_nmf().
#include "r_convert.h"
#include "r_hooks.h"

using MapMat = nmfkit_r::MapMat;

// [[Rcpp::export]]
Rcpp::List r_pbar(const Eigen::Map<Eigen::MatrixXd> h, int n1,
                  std::string method, SEXP u) {
  nmfkit::Pbar out;
  const bool montecarlo = nmfkit_r::lookup<bool>(
      method, {{"exact", false}, {"montecarlo", true}}, "pbar");
  if (montecarlo) {
    const MapMat um = Rcpp::as<MapMat>(u);
    out = nmfkit::pbar_montecarlo(h, n1, um);
  } else {
    out.p = nmfkit::pbar_exact(h, n1);
    out.se = Eigen::VectorXd::Zero(out.p.size());
  }
  return Rcpp::List::create(Rcpp::Named("p") = out.p,
                            Rcpp::Named("se") = out.se);
}

// [[Rcpp::export]]
double r_chamfer(const Eigen::Map<Eigen::MatrixXd> x,
                 const Eigen::Map<Eigen::MatrixXd> y, std::string variant,
                 int threads) {
  const bool rows = nmfkit_r::lookup<bool>(
      variant, {{"paper", false}, {"reference_code", true}}, "variant");
  nmfkit_r::RHooks hooks;
  const double d = rows ? nmfkit::chamfer_rows(x, y, threads, hooks)
                        : nmfkit::chamfer_columns(x, y, threads, 512, hooks);
  hooks.finish();
  return d;
}

// The reference code's column normalisation of a dense matrix (a copy).
// [[Rcpp::export]]
Eigen::MatrixXd r_normalize_columns(const Eigen::Map<Eigen::MatrixXd> x) {
  Eigen::MatrixXd y = x;
  nmfkit::unit_norm_columns(y);
  return y;
}
