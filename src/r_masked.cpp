// Glue for masked and weighted NMF (nmf() with na = "omit", weights or mask).
#include <vector>

#include "r_convert.h"
#include "r_hooks.h"

// Entry weights from the R layer: base weight 0 or 1 and the exceptions as
// 0-based rows i, columns j, weight offsets delta and data values.
// [[Rcpp::export]]
Rcpp::List r_nmf_masked(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                        const Eigen::Map<Eigen::MatrixXd> h,
                        std::string method, Rcpp::List control,
                        SEXP callback, double base, Rcpp::IntegerVector i,
                        Rcpp::IntegerVector j, Rcpp::NumericVector delta,
                        Rcpp::NumericVector value,
                        Rcpp::NumericVector penalty,
                        Rcpp::IntegerVector fixed) {
  const nmfkit::NmfParams p =
      nmfkit_r::nmf_params(control, method, penalty, fixed);
  const std::vector<nmfkit::Index> iv(i.begin(), i.end()), jv(j.begin(),
                                                              j.end());
  const std::vector<double> dv(delta.begin(), delta.end()),
      vv(value.begin(), value.end());
  const nmfkit::EntryWeights a =
      nmfkit::entry_weights(w.rows(), h.cols(), base, iv, jv, dv, vv);
  nmfkit_r::RHooks hooks(callback);
  const nmfkit::NmfResult r = nmfkit_r::with_data(x, [&](const auto& data) {
    return nmfkit::nmf_masked(data, a, w, h, p, hooks);
  }, p.threads);
  hooks.finish();
  return nmfkit_r::nmf_result_list(r);
}
