// Glue for stratified NMF and its stratum-aware prediction.
#include "r_convert.h"
#include "r_hooks.h"

// group: 0-based stratum of each column of x.
// [[Rcpp::export]]
Rcpp::List r_nmf_stratified(SEXP x, const std::vector<int>& group,
                        const Eigen::Map<Eigen::MatrixXd> w,
                        const Eigen::Map<Eigen::MatrixXd> h,
                        const Eigen::Map<Eigen::MatrixXd> v,
                        std::string order, int v_updates, Rcpp::List control,
                        SEXP callback) {
  const nmfkit::StratifiedParams p =
      nmfkit_r::stratified_params(control, order, v_updates);
  nmfkit_r::RHooks hooks(callback);
  const nmfkit::StratifiedResult r =
      nmfkit_r::with_data(x, [&](const auto& data) {
        return nmfkit::nmf_stratified(data, group, w, h, v, p, hooks);
      }, p.threads);
  hooks.finish();
  Rcpp::List out = nmfkit_r::result_list(r);
  out["V"] = r.V;
  out["normalized_loss"] = r.normalized_loss;
  out["initial_loss"] = r.initial_loss;
  return out;
}

// [[Rcpp::export]]
Eigen::MatrixXd r_stratified_coef(SEXP x, const std::vector<int>& group,
                                  const Eigen::Map<Eigen::MatrixXd> w,
                                  const Eigen::Map<Eigen::MatrixXd> v,
                                  double tol, int max_passes, int threads) {
  nmfkit_r::RHooks hooks;
  Eigen::MatrixXd h = nmfkit_r::with_data(x, [&](const auto& data) {
    return nmfkit::stratified_coef(data, group, w, v, tol, max_passes, threads,
                                   hooks);
  }, threads);
  hooks.finish();
  return h;
}
