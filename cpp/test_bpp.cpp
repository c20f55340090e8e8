// Tests of the engine kernels: exact NNLS by block principal pivoting
// (bpp.hpp) and the component-wise HALS pass (hals.hpp).
#include <doctest/doctest.h>

#include <cmath>
#include <nmfkit/bpp.hpp>
#include <nmfkit/hals.hpp>

#include "helpers.hpp"

using nmfkit::Index;
using nmfkit::Mat;
using nmfkit::Vec;
using nmfkit_test::rnorm;
using nmfkit_test::runif;

namespace {

// A Gram system G = A'A, B = A'Y with Y mixed in sign, plus columns whose b
// is all negative (solution 0) and all zero.
struct System {
  Mat g, b;
};
System make_system(Index k, Index n, unsigned seed) {
  const Mat a = runif(3 * k + 10, k, seed);
  System s;
  s.g = a.transpose() * a;
  s.b = a.transpose() *
        (rnorm(3 * k + 10, n, seed + 1) + Mat::Constant(3 * k + 10, n, 0.3));
  s.b.col(0) = -runif(k, 1, seed + 2).col(0) - Vec::Constant(k, 0.1);
  s.b.col(1).setZero();
  return s;
}

// Largest KKT violation of Z for (G, B), relative to the column's scale:
// z >= 0, y = Gz - b >= 0, and y = 0 where z > 0.
double kkt_error(const Mat& z, const Mat& g, const Mat& b) {
  const Mat y = g * z - b;
  double worst = 0.0;
  for (Index j = 0; j < z.cols(); ++j) {
    const double scale =
        std::max(b.col(j).cwiseAbs().maxCoeff(),
                 (g.cwiseAbs() * z.col(j).cwiseAbs()).maxCoeff());
    if (scale == 0.0) continue;
    for (Index i = 0; i < z.rows(); ++i) {
      double e = std::max(-z(i, j), -y(i, j));
      if (z(i, j) > 0.0) e = std::max(e, std::abs(y(i, j)));
      worst = std::max(worst, e / scale);
    }
  }
  return worst;
}

double objective(const Mat& z, const Mat& g, const Mat& b) {
  return 0.5 * (z.transpose() * g * z).trace() - (b.transpose() * z).trace();
}

}  // namespace

TEST_CASE("BPP solves Gram NNLS exactly for ranks 1 to 50") {
  for (Index k : {1, 2, 5, 20, 50}) {
    CAPTURE(k);
    const System s = make_system(k, 300, 100 + static_cast<unsigned>(k));
    Mat z;
    nmfkit::BppStats st;
    CHECK(nmfkit::nnls_bpp(z, s.g, s.b, 1, false, 0, &st) == 0);
    CHECK(st.fallback == 0);
    CHECK(st.max_steps <= k + 5);
    CHECK(z.minCoeff() >= 0.0);
    CHECK(kkt_error(z, s.g, s.b) < 1e-10);
    CHECK(z.col(0).isZero(0.0));  // all-negative b
    CHECK(z.col(1).isZero(0.0));  // b = 0
    // A warm start from the solution is exact at once: one step per column.
    Mat zw = z;
    nmfkit::nnls_bpp(zw, s.g, s.b, 1, true, 0, &st);
    CHECK(st.max_steps == 1);
    CHECK((zw - z).cwiseAbs().maxCoeff() <= 1e-12 * z.cwiseAbs().maxCoeff());
    // ... and from a nearby problem's solution it reaches the new one.
    const Mat b2 = s.b + 0.05 * s.g * rnorm(k, 300, 7);
    nmfkit::nnls_bpp(zw, s.g, b2, 1, true);
    CHECK(kkt_error(zw, s.g, b2) < 1e-10);
  }
}

TEST_CASE("BPP agrees with coordinate descent run to convergence") {
  for (Index k : {3, 8, 20}) {
    CAPTURE(k);
    const System s = make_system(k, 60, 200 + static_cast<unsigned>(k));
    Mat z;
    nmfkit::nnls_bpp(z, s.g, s.b, 1);
    Mat zcd = Mat::Zero(k, 60);
    nmfkit::nnls_cd(zcd, s.g, s.b, 1e-15, 200000, 1);
    CHECK((z - zcd).cwiseAbs().maxCoeff() < 1e-8 * z.cwiseAbs().maxCoeff());
    CHECK(objective(z, s.g, s.b) <= objective(zcd, s.g, s.b) + 1e-12);
  }
}

TEST_CASE("BPP returns a minimiser for a rank-deficient G without crashing") {
  // A = A1 C: 8 columns in a 3-dimensional space, and one zero column.
  Mat a = runif(40, 3, 301) * runif(3, 8, 302);
  a.col(5).setZero();
  const Mat g = a.transpose() * a;
  const Mat b =
      a.transpose() * (runif(40, 50, 303) - Mat::Constant(40, 50, 0.3));
  Mat z;
  const int fallback = nmfkit::nnls_bpp(z, g, b, 1);
  CHECK(fallback >= 0);
  CHECK(z.allFinite());
  CHECK(z.minCoeff() >= 0.0);
  CHECK(z.row(5).isZero(0.0));  // G(5, 5) = 0: pinned at 0
  // The minimum value: no worse than coordinate descent's, to 1e-9.
  Mat zcd = Mat::Zero(8, 50);
  nmfkit::nnls_cd(zcd, g, b, 1e-14, 200000, 1);
  const double fb = objective(z, g, b), fc = objective(zcd, g, b);
  CHECK(fb <= fc + 1e-9 * std::abs(fc));
  CHECK(kkt_error(z, g, b) < 1e-8);
  // Columns out of pivoting steps are finished by coordinate descent.
  const System s = make_system(6, 40, 304);
  Mat zf, ze;
  CHECK(nmfkit::nnls_bpp(zf, s.g, s.b, 1, false, 1) > 0);
  nmfkit::nnls_bpp(ze, s.g, s.b, 1);
  CHECK(zf.minCoeff() >= 0.0);
  CHECK((zf - ze).cwiseAbs().maxCoeff() < 1e-8 * ze.cwiseAbs().maxCoeff());
  // G = 0 entirely: everything is pinned at 0.
  Mat z0;
  nmfkit::nnls_bpp(z0, Mat::Zero(4, 4), Mat::Zero(4, 3), 1);
  CHECK(z0.isZero(0.0));
}

TEST_CASE("BPP and component HALS give the same bits on 1 and 2 threads") {
  const System s = make_system(20, 3000, 401);
  Mat z1, z2;
  nmfkit::nnls_bpp(z1, s.g, s.b, 1);
  nmfkit::nnls_bpp(z2, s.g, s.b, 2);
  CHECK(z1 == z2);
  Mat w1 = z1 * 0.5, w2 = z1 * 0.5;
  nmfkit::nnls_bpp(w1, s.g, s.b * 1.1, 1, true);
  nmfkit::nnls_bpp(w2, s.g, s.b * 1.1, 2, true);
  CHECK(w1 == w2);

  const Mat g = s.g, b = s.b;  // 20 x 3000
  Mat h1 = runif(20, 3000, 402), h2 = h1;
  const double v1 = nmfkit::hals_update(h1, g, b, 1, 4, 0.1);
  const double v2 = nmfkit::hals_update(h2, g, b, 2, 4, 0.1);
  CHECK(h1 == h2);
  CHECK(v1 == v2);
}

TEST_CASE("component HALS pass gives cd_pass's iterate and violation") {
  const Index m = 300, n = 80, k = 7;
  const Mat x = runif(m, n, 501);
  const Mat h = runif(k, n, 502);
  Mat w = runif(m, k, 503);
  w = (w.array() < 0.3).select(0.0, w);  // zeros: the projected branch
  w.row(4).setZero();
  const Mat g = h * h.transpose();
  Mat b = x * h.transpose();  // m x k
  b.row(4) = -b.row(4);       // a row cd_pass skips (z = 0, b <= 0)
  for (int inner : {1, 6}) {
    CAPTURE(inner);
    Mat wt = w.transpose();  // the k x m layout of both solvers
    const Mat bt = b.transpose();
    const double vcd = nmfkit::cd_pass(wt, g, bt, 1);
    for (int l = 2; l <= inner; ++l) nmfkit::cd_pass(wt, g, bt, 1);
    Mat wc = w.transpose();
    const double vh = nmfkit::hals_update(wc, g, bt, 1, inner, 0.0);
    const double scale = w.cwiseAbs().maxCoeff();
    CHECK((wc - wt).cwiseAbs().maxCoeff() < 1e-12 * scale);
    CHECK(std::abs(vh - vcd) < 1e-12 * vcd);
    CHECK(wc.col(4).isZero(0.0));
    CHECK(wc.minCoeff() >= 0.0);
  }
  Mat wbad = w.transpose();
  CHECK_THROWS_AS(nmfkit::hals_update(wbad, g, b.transpose().topRows(3), 1),
                  std::invalid_argument);
}
