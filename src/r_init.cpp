// Glue for NMF's initialisation (randomized SVD, NNDSVD) and NNLS
// prediction: apart from r_nmf.cpp so that the two heaviest sets of template
// instantiations compile in parallel (MAKEFLAGS=-j2).
#include "r_convert.h"
#include "r_hooks.h"

using nmfkit::Mat;

// [[Rcpp::export]]
Rcpp::List r_nndsvd(SEXP x, int k, const Eigen::Map<Eigen::MatrixXd> omega,
                    std::string fill, double scale, SEXP rw, SEXP rh,
                    int power_iter, int threads, bool v_by_columns = false) {
  const nmfkit::ZeroFill zf = nmfkit_r::lookup<nmfkit::ZeroFill>(
      fill,
      {{"none", nmfkit::ZeroFill::none},
       {"mean", nmfkit::ZeroFill::mean},
       {"random", nmfkit::ZeroFill::random}},
      "fill");
  Mat rw_m, rh_m;
  if (zf == nmfkit::ZeroFill::random) {
    rw_m = Rcpp::as<Mat>(rw);
    rh_m = Rcpp::as<Mat>(rh);
  }
  Mat w, h;
  nmfkit_r::RHooks hooks;
  nmfkit_r::with_data(x, [&](const auto& data) {
    const nmfkit::Svd s = nmfkit::rsvd(data, omega, k, power_iter, threads,
                                       v_by_columns, hooks);
    if (!hooks.check_interrupt())
      nmfkit::nndsvd(s, scale, zf, &rw_m, &rh_m, w, h);
    return 0;
  }, threads);
  hooks.finish();
  return Rcpp::List::create(Rcpp::Named("W") = w, Rcpp::Named("H") = h);
}

// The Gram system of NNLS on a fixed basis w: G = w'w and B = w'x (x dense
// or dgCMatrix, interruptible). Returns false when the host interrupted.
static bool nnls_system(SEXP x, const Eigen::Map<Eigen::MatrixXd>& w,
                        int threads, nmfkit_r::RHooks& hooks, Mat& g,
                        Mat& b) {
  g = w.transpose() * w;
  return nmfkit_r::with_data(x, [&](const auto& data) {
    return data.left_mult(w.transpose(), b, threads, &hooks);
  });
}

// The exact NNLS coefficients of the columns of x on w (block principal
// pivoting, bpp.hpp), for refits that need the minimiser itself rather than
// a tolerance's approximation of it. Columns are independent, so they are
// solved in slices of 4096 with an interrupt check between slices: the bits
// do not depend on the slicing or the threads.
// [[Rcpp::export]]
Eigen::MatrixXd r_nnls_exact(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                             int threads) {
  Mat g, b;
  nmfkit_r::RHooks hooks;
  const bool done = nnls_system(x, w, threads, hooks, g, b);
  Mat h = Mat::Zero(w.cols(), b.cols());
  const Eigen::Index n = b.cols(), slice = 4096;
  for (Eigen::Index c0 = 0; done && c0 < n; c0 += slice) {
    if (hooks.check_interrupt()) break;
    const Eigen::Index len = std::min(slice, n - c0);
    Mat z;
    const Mat bs = b.middleCols(c0, len);
    nmfkit::nnls_bpp(z, g, bs, threads);
    h.middleCols(c0, len) = z;
  }
  hooks.finish();
  return h;
}

// The exact Poisson (KL) coefficients of the columns of the dgCMatrix x on
// w, from h (positive where a column may be fitted), by projected Newton
// (poisson_nnls.hpp), in slices of 256 columns with an interrupt check
// between slices (columns are independent: the bits do not depend on it).
// A column on the 60 COSMIC signatures takes about 2 ms, so a slice about
// half a second.
// [[Rcpp::export]]
Eigen::MatrixXd r_poisson_nnls(SEXP x, const Eigen::Map<Eigen::MatrixXd> w,
                               Eigen::MatrixXd h, double tol, int max_iter,
                               int threads) {
  const nmfkit_r::MapSp xs = Rcpp::as<nmfkit_r::MapSp>(x);
  const Mat wm = w;
  nmfkit_r::RHooks hooks;
  const Eigen::Index n = xs.cols(), slice = 256;
  for (Eigen::Index c0 = 0; c0 < n; c0 += slice) {
    if (hooks.check_interrupt()) break;
    const Eigen::Index len = std::min(slice, n - c0);
    const nmfkit::SpMat part = xs.middleCols(c0, len);
    Mat hp = h.middleCols(c0, len);
    nmfkit::poisson_nnls(part, wm, hp, tol, max_iter, threads);
    h.middleCols(c0, len) = hp;
  }
  hooks.finish();
  return h;
}

// Coefficients of the columns of x on a fixed basis w: NNLS by coordinate
// descent from zero, to a tight tolerance.
// [[Rcpp::export]]
Eigen::MatrixXd r_nnls(SEXP x, const Eigen::Map<Eigen::MatrixXd> w, double tol,
                       int max_passes, int threads) {
  Mat g, b;
  nmfkit_r::RHooks hooks;
  const bool done = nnls_system(x, w, threads, hooks, g, b);
  Mat h = Mat::Zero(w.cols(), b.cols());
  if (done) nmfkit::nnls_cd(h, g, b, tol, max_passes, threads, hooks);
  hooks.finish();
  return h;
}
