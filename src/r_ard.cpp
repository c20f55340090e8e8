// Glue for ARD-NMF (ard.hpp): the data as CountData, the prior's settings
// (absolute: R sets them relative to the data) and the result with its
// relevance trace.
#include <string>

#include "r_convert.h"
#include "r_hooks.h"
// after r_convert.h: RcppEigen comes before any Eigen header
#include <nmfkit/ard.hpp>

// [[Rcpp::export]]
Rcpp::List r_nmf_ard(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                     const Eigen::Map<Eigen::MatrixXd> h, double beta,
                     std::string prior, double a, double b, double phi,
                     int max_iter, double tol, int threads,
                     SEXP callback) {
  nmfkit::ArdParams p;
  p.beta = beta;
  if (prior == "l1") {
    p.prior = nmfkit::ArdPrior::l1;
  } else if (prior == "l2") {
    p.prior = nmfkit::ArdPrior::l2;
  } else {
    throw std::invalid_argument("nmfkit glue: unknown ARD prior " + prior);
  }
  p.a = a;
  p.b = b;
  p.phi = phi;
  p.max_iter = max_iter;
  p.tol = tol;
  p.threads = threads;
  nmfkit::CountData c;
  if (Rf_isS4(x)) {
    const nmfkit_r::MapSp xs = Rcpp::as<nmfkit_r::MapSp>(x);
    nmfkit::detail::fill_count_data(c, xs, nullptr, threads);
  } else {
    const nmfkit_r::MapMat xd = Rcpp::as<nmfkit_r::MapMat>(x);
    c = nmfkit::count_data(nmfkit::DenseData(xd), nullptr, threads);
  }
  nmfkit_r::RHooks hooks(callback);
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
