// Glue for the divergences of given factors under the beta-divergences
// (summaries, held-out errors) and the start check; the fits go through
// r_nmf_fit() (r_fit.cpp).
#include "r_data.h"

using nmfkit_r::counts;
using nmfkit_r::Masked;

// sum a d_beta(x | W H) with the entry weights of a masked fit (counts()).
// [[Rcpp::export]]
double r_divergence(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                    const Eigen::Map<Eigen::MatrixXd> h, double beta,
                    int threads, double base, Rcpp::IntegerVector i,
                    Rcpp::IntegerVector j, Rcpp::NumericVector delta,
                    Rcpp::NumericVector value) {
  const nmfkit::CountData c =
      counts(x, Masked(base, i, j, delta, value), threads);
  return nmfkit::divergence(c, w, h, beta, threads);
}

// Entries with x > 0 where W H is not positive.
// [[Rcpp::export]]
double r_zero_fits(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                   const Eigen::Map<Eigen::MatrixXd> h) {
  // (a start check of large data: the host may interrupt it)
  nmfkit_r::RHooks hooks;
  const nmfkit::Index bad = nmfkit_r::with_data(
      x,
      [&](const auto& data) { return nmfkit::zero_fits(data, w, h, &hooks); },
      1, false);
  hooks.finish();
  return static_cast<double>(bad);
}
