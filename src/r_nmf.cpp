// Glue for standard NMF (its initialisation and NNLS prediction are in
// r_init.cpp).
#include "r_convert.h"
#include "r_hooks.h"

using nmfkit::Mat;

// [[Rcpp::export]]
Rcpp::List r_nmf(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                 const Eigen::Map<Eigen::MatrixXd> h, std::string method,
                 Rcpp::List control, SEXP callback,
                 Rcpp::NumericVector penalty, Rcpp::IntegerVector fixed) {
  const nmfkit::NmfParams p =
      nmfkit_r::nmf_params(control, method, penalty, fixed);
  nmfkit_r::RHooks hooks(callback);
  const nmfkit::NmfResult r = nmfkit_r::with_data(
      x, [&](const auto& data) { return nmfkit::nmf(data, w, h, p, hooks); },
      p.threads);
  hooks.finish();
  return nmfkit_r::nmf_result_list(r);
}
