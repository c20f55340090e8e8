// Tests of the beta-divergence engine (divergence.hpp): KL coordinate
// descent and multiplicative updates, weights, penalties, fixed components.
#include <doctest/doctest.h>

#include <cmath>

#include "helpers.hpp"

using nmfkit::CountData;
using nmfkit::Method;
using nmfkit::NmfParams;
using nmfkit::Index;
using nmfkit::Mat;
using nmfkit_test::runif;

namespace {

// nmf()'s settings for KL by coordinate descent (the divergence engine's
// test default).
NmfParams kl_params() {
  NmfParams p;
  p.beta = 1.0;
  p.method = Method::cd;
  return p;
}

// Counts-like data: a positive low-rank mean, rounded down, so about a
// third of the entries are zero.
Mat counts(Index m, Index n, Index k, unsigned seed) {
  const Mat mu = 3.0 * runif(m, k, seed) * runif(k, n, seed + 1);
  return (mu.array() - 0.5).max(0.0).floor().matrix();
}

double kl_direct(const Mat& x, const Mat& mu) {
  double s = 0.0;
  for (Index j = 0; j < x.cols(); ++j)
    for (Index i = 0; i < x.rows(); ++i)
      s += (x(i, j) > 0 ? x(i, j) * std::log(x(i, j) / mu(i, j)) : 0.0) -
           x(i, j) + mu(i, j);
  return s;
}

nmfkit::DivResult fit(const Mat& x, const Mat& w, const Mat& h,
                      const NmfParams& p, bool sparse = false) {
  nmfkit::NullHooks hooks;
  CountData c;
  if (sparse) {
    const nmfkit::SpMat s = x.sparseView();
    c = nmfkit::count_data(nmfkit::SparseData<nmfkit::SpMat>(s), nullptr, 1);
  } else {
    c = nmfkit::count_data(nmfkit::DenseData(x), nullptr, 1);
  }
  return nmfkit::nmf_divergence(c, w, h, p, hooks);
}

}  // namespace

TEST_CASE("KL cd and mu never raise the divergence, which matches a direct sum") {
  const Mat x = counts(40, 30, 3, 11);
  const Mat w = runif(40, 3, 12) + Mat::Constant(40, 3, 0.1);
  const Mat h = runif(3, 30, 13) + Mat::Constant(3, 30, 0.1);
  for (Method m : {Method::cd, Method::mu}) {
    for (bool ex : {false, true}) {
      NmfParams p = kl_params();
      p.method = m;
      p.max_iter = 100;
      p.tol = 0;
      p.extrapolate = ex;
      const auto r = fit(x, w, h, p);
      CHECK(r.iterations == 100);
      for (size_t i = 1; i < r.loss.size(); ++i)
        CHECK(r.loss[i] <= r.loss[i - 1] * (1 + 1e-12));
      CHECK(r.divergence == doctest::Approx(kl_direct(x, r.W * r.H)).epsilon(1e-10));
    }
  }
}

TEST_CASE("dense and sparse data, 1 and 2 threads: the same bits") {
  const Mat x = counts(50, 35, 4, 21);
  const Mat w = runif(50, 4, 22) + Mat::Constant(50, 4, 0.1);
  const Mat h = runif(4, 35, 23) + Mat::Constant(4, 35, 0.1);
  NmfParams p = kl_params();
  p.max_iter = 30;
  p.extrapolate = true;
  const auto a = fit(x, w, h, p, false);
  const auto b = fit(x, w, h, p, true);
  p.threads = 2;
  const auto c = fit(x, w, h, p, true);
  CHECK(a.W == b.W);
  CHECK(a.H == b.H);
  CHECK(b.W == c.W);
  CHECK(b.H == c.H);
}

TEST_CASE("fixed components are never changed; all of W fixed projects H") {
  const Mat x = counts(30, 25, 3, 31);
  const Mat w = runif(30, 3, 32) + Mat::Constant(30, 3, 0.1);
  const Mat h = runif(3, 25, 33) + Mat::Constant(3, 25, 0.1);
  NmfParams p = kl_params();
  p.max_iter = 40;
  p.extrapolate = true;
  p.fixed_w = 2;
  p.fixed_h = 1;
  const auto r = fit(x, w, h, p);
  CHECK(r.W.leftCols(2) == w.leftCols(2));
  CHECK(r.H.topRows(1) == h.topRows(1));
  NmfParams q = kl_params();
  q.update_w = false;
  // W's columns are strongly correlated (uniform plus 0.1): coordinate
  // descent converges linearly, in 833 iterations to tol 1e-12
  q.max_iter = 5000;
  q.tol = 1e-12;
  const auto s = fit(x, w, h, q);
  CHECK(s.W == w);
  CHECK(s.status == nmfkit::Status::converged);
  // KKT of the projection: W' (1 - x / WH) >= 0, zero where H > 0
  const Mat g = w.transpose() *
                (Mat::Ones(30, 25) - x.cwiseQuotient(w * s.H));
  for (Index j = 0; j < 25; ++j)
    for (Index t = 0; t < 3; ++t) {
      CHECK(g(t, j) > -1e-7);
      if (s.H(t, j) > 0) CHECK(std::abs(g(t, j)) < 1e-7);
    }
}

TEST_CASE("scale equivariance: c x takes the same steps") {
  const Mat x = counts(30, 20, 3, 41);
  const Mat w = runif(30, 3, 42) + Mat::Constant(30, 3, 0.1);
  const Mat h = runif(3, 20, 43) + Mat::Constant(3, 20, 0.1);
  for (double beta : {1.0, 0.5, 1.5}) {
    NmfParams p = kl_params();
    p.beta = beta;
    p.method = beta == 1.0 ? Method::cd : Method::mu;
    p.max_iter = 200;
    p.pen_w = {0.1, 0.1};
    p.pen_h = {0.1, 0.1};
    const double c = 16.0;  // 4^2: factors scale by 4, exactly
    const auto a = fit(x, w, h, p);
    const auto b = fit(c * x, 4.0 * w, 4.0 * h, p);
    CHECK(a.iterations == b.iterations);
    CHECK((b.W - 4.0 * a.W).norm() <= 1e-10 * b.W.norm());
    CHECK((b.H - 4.0 * a.H).norm() <= 1e-10 * b.H.norm());
  }
}
