// Glue for NMF under the beta-divergences (KL, Itakura-Saito, beta): fits,
// divergences of given factors, and the start check.
#include <vector>

#include "r_convert.h"
#include "r_hooks.h"

namespace {

// The data as CountData (nonzero entries by column and by row) with the
// entry weights of the R layer's masked_setup(), when `i` is not empty:
// base weight 0 or 1 and the exceptions as 0-based rows i, columns j,
// weight offsets delta and data values. With `hooks`, the set-up is
// interruptible (a masked fit's weights take seconds on large data): an
// interrupt is re-raised here.
nmfkit::CountData counts(SEXP x, double base, const Rcpp::IntegerVector& i,
                         const Rcpp::IntegerVector& j,
                         const Rcpp::NumericVector& delta,
                         const Rcpp::NumericVector& value, int threads,
                         nmfkit_r::RHooks* hooks = nullptr) {
  const bool weighted = i.size() > 0 || base != 1.0;
  nmfkit::EntryWeights a;
  if (weighted) {
    const std::vector<nmfkit::Index> iv(i.begin(), i.end()),
        jv(j.begin(), j.end());
    const std::vector<double> dv(delta.begin(), delta.end()),
        vv(value.begin(), value.end());
    const Eigen::Index m = Rf_isS4(x) ? Rcpp::as<nmfkit_r::MapSp>(x).rows()
                                      : Rcpp::as<nmfkit_r::MapMat>(x).rows();
    const Eigen::Index n = Rf_isS4(x) ? Rcpp::as<nmfkit_r::MapSp>(x).cols()
                                      : Rcpp::as<nmfkit_r::MapMat>(x).cols();
    if (hooks != nullptr && hooks->check_interrupt()) hooks->finish();
    a = nmfkit::entry_weights(m, n, base, iv, jv, dv, vv);
  }
  const nmfkit::EntryWeights* ap = weighted ? &a : nullptr;
  nmfkit::CountData c;
  bool done;
  if (Rf_isS4(x)) {
    const nmfkit_r::MapSp xs = Rcpp::as<nmfkit_r::MapSp>(x);
    done = nmfkit::detail::fill_count_data(c, xs, ap, threads, hooks);
  } else {
    const nmfkit_r::MapMat xd = Rcpp::as<nmfkit_r::MapMat>(x);
    if (hooks != nullptr && hooks->check_interrupt()) hooks->finish();
    const nmfkit::SpMat s = nmfkit::DenseData(xd).dense().sparseView(0.0, 0.0);
    done = nmfkit::detail::fill_count_data(c, s, ap, threads, hooks);
  }
  if (!done && hooks != nullptr) hooks->finish();
  return c;
}

}  // namespace

// [[Rcpp::export]]
Rcpp::List r_nmf_divergence(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                            const Eigen::Map<Eigen::MatrixXd> h, double beta,
                            std::string method, Rcpp::List control,
                            SEXP callback, Rcpp::NumericVector penalty,
                            Rcpp::IntegerVector fixed, bool update_w,
                            double base, Rcpp::IntegerVector i,
                            Rcpp::IntegerVector j, Rcpp::NumericVector delta,
                            Rcpp::NumericVector value) {
  nmfkit::DivParams p =
      nmfkit_r::div_params(control, method, beta, penalty, fixed);
  p.update_w = update_w;
  nmfkit_r::RHooks hooks(callback);
  const nmfkit::CountData c =
      counts(x, base, i, j, delta, value, p.threads, &hooks);
  const nmfkit::DivResult r = nmfkit::nmf_divergence(c, w, h, p, hooks);
  hooks.finish();
  return nmfkit_r::div_result_list(r);
}

// sum a d_beta(x | W H) with the entry weights as for r_nmf_divergence.
// [[Rcpp::export]]
double r_divergence(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                    const Eigen::Map<Eigen::MatrixXd> h, double beta,
                    int threads, double base, Rcpp::IntegerVector i,
                    Rcpp::IntegerVector j, Rcpp::NumericVector delta,
                    Rcpp::NumericVector value) {
  const nmfkit::CountData c = counts(x, base, i, j, delta, value, threads);
  return nmfkit::divergence(c, w, h, beta, threads);
}

// Entries with x > 0 where W H is not positive.
// [[Rcpp::export]]
double r_zero_fits(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                   const Eigen::Map<Eigen::MatrixXd> h) {
  const nmfkit::CountData c =
      counts(x, 1.0, Rcpp::IntegerVector(), Rcpp::IntegerVector(),
             Rcpp::NumericVector(), Rcpp::NumericVector(), 1);
  return static_cast<double>(nmfkit::zero_fits(c, w, h));
}
