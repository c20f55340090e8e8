// The one fit export of nmf(): r_nmf_fit(x, w, h, params) with the one
// parameter list R's core_params() builds (R/core.R). It dispatches on the
// source (a double matrix or dgCMatrix in memory, as DenseData/SparseData
// or as CountData; a block source read through R, r_data.h) and on the loss
// and method (the Frobenius engine, masked or not; the beta-divergence
// engine; ARD; the online fit). Initialisation and NNLS prediction are in
// r_init.cpp.
#include "r_data.h"

namespace {

using nmfkit_r::RHooks;

// params$ard: the prior's settings, absolute (R sets them relative to the
// data), with its own iterations and tolerance.
Rcpp::List fit_ard(SEXP x, const Eigen::Map<Eigen::MatrixXd>& w,
                   const Eigen::Map<Eigen::MatrixXd>& h, double beta,
                   const Rcpp::List& ard, int threads, RHooks& hooks) {
  nmfkit::ArdParams p;
  p.beta = beta;
  p.prior = nmfkit_r::lookup<nmfkit::ArdPrior>(
      Rcpp::as<std::string>(ard["prior"]),
      {{"l1", nmfkit::ArdPrior::l1}, {"l2", nmfkit::ArdPrior::l2}},
      "ARD prior");
  p.a = Rcpp::as<double>(ard["a"]);
  p.b = Rcpp::as<double>(ard["b"]);
  p.phi = Rcpp::as<double>(ard["phi"]);
  p.max_iter = Rcpp::as<int>(ard["max_iter"]);
  p.tol = Rcpp::as<double>(ard["tol"]);
  p.threads = threads;
  const nmfkit::CountData c =
      nmfkit_r::counts(x, nmfkit_r::Masked(), threads);
  const nmfkit::ArdResult r = nmfkit::nmf_ard(c, w, h, p, hooks);
  hooks.finish();
  Rcpp::List out = nmfkit_r::result_list(r);
  const Eigen::Index k = r.lambda.size();
  Rcpp::NumericMatrix trace(k, r.iterations);
  std::copy(r.lambda_trace.begin(), r.lambda_trace.end(), trace.begin());
  out["lambda"] = r.lambda;
  out["lambda_trace"] = trace;
  out["divergence"] = r.divergence;
  out["floor"] = r.floor;
  return out;
}

// params$stream: the blocks of columns [start, start + len) of an m x n
// matrix with ||X||^2 = x2 and `stored` stored entries, read by `read` (all
// m_src rows of the source, of which the glue keeps `rows`) or passed whole
// to `pass` (RSource); with `forget`, the online fit.
Rcpp::List fit_stream(const Rcpp::List& s,
                      const Eigen::Map<Eigen::MatrixXd>& w,
                      const Eigen::Map<Eigen::MatrixXd>& h, double beta,
                      const std::string& method, const Rcpp::List& control,
                      const Rcpp::NumericVector& penalty,
                      const Rcpp::IntegerVector& fixed, RHooks& hooks) {
  const int threads = nmfkit_r::ctrl_int(control, "threads");
  const bool online = s.containsElementNamed("forget");
  nmfkit_r::RSource source(
      Rcpp::as<int>(s["m"]), Rcpp::as<int>(s["n"]),
      Rcpp::as<double>(s["x2"]), Rcpp::as<double>(s["stored"]), s["start"],
      s["len"], s["read"], online ? R_NilValue : SEXP(s["pass"]), s["rows"],
      Rcpp::as<int>(s["m_src"]), threads, hooks);
  if (online) {
    nmfkit::OnlineParams p;
    p.base = nmfkit_r::nmf_params(control, method, penalty, fixed);
    p.forget = Rcpp::as<double>(s["forget"]);
    const nmfkit::NmfResult r = nmfkit::nmf_online(source, w, h, p, hooks);
    hooks.finish();
    return nmfkit_r::nmf_result_list(r);
  }
  const nmfkit::NmfParams p =
      nmfkit_r::nmf_params(control, method, penalty, fixed, beta);
  if (beta != 2.0) {
    const nmfkit::DivResult r =
        nmfkit::nmf_divergence_streamed(source, w, h, p, hooks);
    hooks.finish();
    return nmfkit_r::div_result_list(r);
  }
  const nmfkit::NmfResult r = nmfkit::nmf_streamed(source, w, h, p, hooks);
  hooks.finish();
  return nmfkit_r::nmf_result_list(r);
}

}  // namespace

// x the data in memory (NULL when params$stream reads it), w and h the
// start; params (core_params()): beta (2: Frobenius), method, control,
// callback, penalty c(l1_W, l1_H, l2_W, l2_H), fixed c(fixed_w, fixed_h),
// update_w, and NULL or a list for each of masked, stream and ard.
// [[Rcpp::export]]
Rcpp::List r_nmf_fit(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                     const Eigen::Map<Eigen::MatrixXd> h,
                     Rcpp::List params) {
  const double beta = Rcpp::as<double>(params["beta"]);
  const std::string method = Rcpp::as<std::string>(params["method"]);
  const Rcpp::List control = params["control"];
  const Rcpp::NumericVector penalty = params["penalty"];
  const Rcpp::IntegerVector fixed = params["fixed"];
  RHooks hooks(params["callback"]);
  if (!Rf_isNull(params["stream"]))
    return fit_stream(params["stream"], w, h, beta, method, control, penalty,
                      fixed, hooks);
  if (!Rf_isNull(params["ard"]))
    return fit_ard(x, w, h, beta, params["ard"],
                   nmfkit_r::ctrl_int(control, "threads"), hooks);
  const nmfkit_r::Masked masked(params["masked"]);
  nmfkit::NmfParams p =
      nmfkit_r::nmf_params(control, method, penalty, fixed, beta);
  p.update_w = Rcpp::as<bool>(params["update_w"]);
  if (beta != 2.0) {
    const nmfkit::CountData c =
        nmfkit_r::counts(x, masked, p.threads, &hooks);
    const nmfkit::DivResult r = nmfkit::nmf_divergence(c, w, h, p, hooks);
    hooks.finish();
    return nmfkit_r::div_result_list(r);
  }
  nmfkit::NmfResult r;
  if (masked.on) {
    const nmfkit::EntryWeights a = masked.weights(w.rows(), h.cols());
    r = nmfkit_r::with_data(x, [&](const auto& data) {
      return nmfkit::nmf_masked(data, a, w, h, p, hooks);
    }, p.threads);
  } else {
    r = nmfkit_r::with_data(x, [&](const auto& data) {
      return nmfkit::nmf(data, w, h, p, hooks);
    }, p.threads);
  }
  hooks.finish();
  return nmfkit_r::nmf_result_list(r);
}
