// Glue for permutation (shift-invariant) NMF: fit, projection of new images,
// reconstruction from terms, and the FFT timing the bench compares against.
#include "r_convert.h"
#include "r_hooks.h"

using nmfkit::IMat;
using nmfkit::Mat;

namespace {

Rcpp::List shift_result_list(const nmfkit::ShiftResult& r) {
  Rcpp::List out = nmfkit_r::result_list(r);
  out["G"] = r.G;
  out["restart_loss"] = r.restart_loss;
  out["best"] = r.best + 1;
  out["stop"] = r.stop;
  return out;
}

}  // namespace

// starts: a list of list(W = m x k, rho = k x n, G = k x n integer, 0-based).
// [[Rcpp::export]]
Rcpp::List r_nmf_shift(const Eigen::Map<Eigen::MatrixXd> x,
                       Rcpp::IntegerVector image_dim, std::string group,
                       std::string w_step, int inner, Rcpp::List starts,
                       Rcpp::List control, SEXP callback) {
  const nmfkit::ShiftParams p =
      nmfkit_r::shift_params(control, group, w_step, inner);
  std::vector<nmfkit::ShiftStart> st;
  for (R_xlen_t i = 0; i < starts.size(); ++i) {
    const Rcpp::List s = starts[i];
    st.push_back({Rcpp::as<Mat>(s["W"]), Rcpp::as<Mat>(s["rho"]),
                  Rcpp::as<IMat>(s["G"])});
  }
  nmfkit_r::RHooks hooks(callback);
  const nmfkit::ShiftResult r =
      nmfkit::nmf_shift(x, image_dim[0], image_dim[1], st, p, hooks);
  hooks.finish();
  return shift_result_list(r);
}

// [[Rcpp::export]]
Rcpp::List r_shift_project(const Eigen::Map<Eigen::MatrixXd> x,
                           const Eigen::Map<Eigen::MatrixXd> w,
                           Rcpp::IntegerVector image_dim, std::string group,
                           int inner, Rcpp::List control) {
  const nmfkit::ShiftParams p =
      nmfkit_r::shift_params(control, group, "hals", inner);
  nmfkit_r::RHooks hooks;
  const nmfkit::ShiftResult r =
      nmfkit::shift_project(x, image_dim[0], image_dim[1], w, p, hooks);
  hooks.finish();
  return shift_result_list(r);
}

// Terms use 0-based image, atom and shift indices; n images.
// [[Rcpp::export]]
Eigen::MatrixXd r_shift_reconstruct(const Eigen::Map<Eigen::MatrixXd> w,
                                    Rcpp::IntegerVector image_dim,
                                    std::string group,
                                    std::vector<int> image,
                                    std::vector<int> atom,
                                    std::vector<double> coef,
                                    std::vector<int> g, int n) {
  return nmfkit::shift_reconstruct(
      w, image_dim[0], image_dim[1],
      nmfkit_r::shift_group(group), image, atom, coef, g, n);
}
