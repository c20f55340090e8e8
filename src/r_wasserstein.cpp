// Glue for Wasserstein NMF, its weights step (predict) and entropic OT.
#include "r_convert.h"
#include "r_hooks.h"

using nmfkit::Mat;

namespace {

// list(type = "dense", cost = ) or list(type = "separable", c1 = , c2 = ).
nmfkit::OtKernel make_kernel(const Rcpp::List& spec, double eps) {
  const bool separable = nmfkit_r::lookup<bool>(
      Rcpp::as<std::string>(spec["type"]),
      {{"dense", false}, {"separable", true}}, "kernel");
  if (separable) {
    return nmfkit::OtKernel::separable(Rcpp::as<Mat>(spec["c1"]),
                                       Rcpp::as<Mat>(spec["c2"]), eps);
  }
  return nmfkit::OtKernel::dense(Rcpp::as<Mat>(spec["cost"]), eps);
}

Rcpp::List steps_frame(const std::vector<nmfkit::DualStats>& s) {
  Rcpp::IntegerVector it(s.size()), ev(s.size());
  Rcpp::NumericVector gm(s.size()), val(s.size());
  Rcpp::CharacterVector st(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    it[i] = s[i].iterations;
    ev[i] = s[i].evaluations;
    gm[i] = s[i].grad_max;
    val[i] = s[i].value;
    st[i] = nmfkit::status_name(s[i].status);
  }
  return Rcpp::List::create(Rcpp::Named("iterations") = it,
                            Rcpp::Named("evaluations") = ev,
                            Rcpp::Named("grad_max") = gm,
                            Rcpp::Named("dual") = val,
                            Rcpp::Named("status") = st);
}

// What both Sinkhorn solvers return, as the R layer reads it.
Rcpp::List sinkhorn_list(const nmfkit::SinkhornResult& r) {
  return Rcpp::List::create(
      Rcpp::Named("cost") = r.cost, Rcpp::Named("error") = r.error,
      Rcpp::Named("f") = r.f, Rcpp::Named("g") = r.g,
      Rcpp::Named("iterations") = r.iterations,
      Rcpp::Named("status") = std::string(nmfkit::status_name(r.status)));
}

}  // namespace

// [[Rcpp::export]]
Rcpp::List r_nmf_wasserstein(const Eigen::Map<Eigen::MatrixXd> x,
                             const Eigen::Map<Eigen::MatrixXd> w,
                             const Eigen::Map<Eigen::MatrixXd> h,
                             Rcpp::List kernel, double epsilon,
                             double rho_weights, double rho_dict, int outer,
                             Rcpp::List control, SEXP callback) {
  const nmfkit::OtKernel k = make_kernel(kernel, epsilon);
  const nmfkit::WassersteinParams p =
      nmfkit_r::wasserstein_params(control, rho_weights, rho_dict, outer);
  nmfkit_r::RHooks hooks(callback);
  const nmfkit::WassersteinResult r =
      nmfkit::nmf_wasserstein(k, Mat(x), Mat(w), Mat(h), p, hooks);
  hooks.finish();
  Rcpp::List out = nmfkit_r::result_list(r);
  out["dict_steps"] = steps_frame(r.dict_steps);
  out["weight_steps"] = steps_frame(r.weight_steps);
  return out;
}

// [[Rcpp::export]]
Rcpp::List r_wasserstein_weights(const Eigen::Map<Eigen::MatrixXd> x,
                                 const Eigen::Map<Eigen::MatrixXd> d,
                                 Rcpp::List kernel, double epsilon, double rho,
                                 Rcpp::List control) {
  const nmfkit::OtKernel k = make_kernel(kernel, epsilon);
  const nmfkit::WassersteinParams p =
      nmfkit_r::wasserstein_params(control, rho, rho, 1);
  nmfkit_r::RHooks hooks;
  Mat g = Mat::Zero(x.rows(), x.cols());
  nmfkit::DualStats st;
  const Mat lambda = nmfkit::wasserstein_weights(k, Mat(x), Mat(d), g, p, st,
                                                 hooks);
  hooks.finish();
  return Rcpp::List::create(
      Rcpp::Named("H") = lambda, Rcpp::Named("iterations") = st.iterations,
      Rcpp::Named("evaluations") = st.evaluations,
      Rcpp::Named("grad_max") = st.grad_max, Rcpp::Named("dual") = st.value,
      Rcpp::Named("status") = std::string(nmfkit::status_name(st.status)));
}

// [[Rcpp::export]]
Rcpp::List r_ot_sinkhorn(const Eigen::Map<Eigen::MatrixXd> a,
                         const Eigen::Map<Eigen::MatrixXd> b,
                         Rcpp::List kernel, double epsilon, int max_iter,
                         double tol, int threads) {
  const nmfkit::OtKernel k = make_kernel(kernel, epsilon);
  nmfkit_r::RHooks hooks;
  const nmfkit::SinkhornResult r =
      nmfkit::sinkhorn_log(k, Mat(a), Mat(b), max_iter, tol, threads, hooks);
  hooks.finish();
  return sinkhorn_list(r);
}

// OT of each column of a with itself (the self terms of the divergence).
// [[Rcpp::export]]
Rcpp::List r_ot_sinkhorn_symmetric(const Eigen::Map<Eigen::MatrixXd> a,
                                   Rcpp::List kernel, double epsilon,
                                   int max_iter, double tol, int threads) {
  const nmfkit::OtKernel k = make_kernel(kernel, epsilon);
  nmfkit_r::RHooks hooks;
  const nmfkit::SinkhornResult r =
      nmfkit::sinkhorn_symmetric(k, Mat(a), max_iter, tol, threads, hooks);
  hooks.finish();
  return sinkhorn_list(r);
}

// [[Rcpp::export]]
Rcpp::List r_ot_lbfgs(const Eigen::Map<Eigen::MatrixXd> a,
                      const Eigen::Map<Eigen::MatrixXd> b, Rcpp::List kernel,
                      double epsilon, Rcpp::List control) {
  const nmfkit::OtKernel k = make_kernel(kernel, epsilon);
  const nmfkit::WassersteinParams p =
      nmfkit_r::wasserstein_params(control, 1, 1, 1);
  nmfkit_r::RHooks hooks;
  Mat v;
  nmfkit::DualStats st;
  const nmfkit::Vec cost = nmfkit::ot_lbfgs(k, Mat(a), Mat(b), v, p, st,
                                            hooks);
  hooks.finish();
  return Rcpp::List::create(
      Rcpp::Named("cost") = cost, Rcpp::Named("v") = v,
      Rcpp::Named("iterations") = st.iterations,
      Rcpp::Named("grad_max") = st.grad_max,
      Rcpp::Named("status") = std::string(nmfkit::status_name(st.status)));
}
