// Tests of the joint-NMF kernels: p-bar (exact, Monte Carlo, against a
// brute-force integration over breakpoints) and both Chamfer distances
// (against direct O(n1 n2 m) definitions on small cases).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <nmfkit.hpp>
#include <random>
#include <vector>

using nmfkit::Index;
using nmfkit::Mat;
using nmfkit::Vec;

namespace {

// (1/s) * integral over T in [0, s] of frac(S1 > T) - frac(S2 > T), by
// summing over the intervals between the sorted pooled values.
double pbar_breakpoints(const Mat& h, Index i, Index n1) {
  const Index n = h.cols();
  std::vector<double> pts{0.0};
  for (Index j = 0; j < n; ++j) pts.push_back(h(i, j));
  std::sort(pts.begin(), pts.end());
  const double s = pts.back();
  if (s <= 0.0) return 0.0;
  double acc = 0.0;
  for (size_t b = 0; b + 1 < pts.size(); ++b) {
    const double lo = pts[b], hi = pts[b + 1];
    if (hi <= lo) continue;
    const double mid = 0.5 * (lo + hi);
    double f1 = 0.0, f2 = 0.0;
    for (Index j = 0; j < n; ++j) (j < n1 ? f1 : f2) += h(i, j) > mid;
    acc += (hi - lo) * (f1 / n1 - f2 / (n - n1));
  }
  return acc / s;
}

Mat random_h(Index k, Index n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Mat h(k, n);
  for (Index j = 0; j < n; ++j)
    for (Index i = 0; i < k; ++i) h(i, j) = u(gen) < 0.3 ? 0.0 : u(gen);
  return h;
}

double chamfer_rows_direct(const Mat& x, const Mat& y) {
  double tot = 0.0;
  for (Index p = 0; p < x.rows(); ++p) {
    for (Index j = 0; j < x.cols(); ++j) {
      double b = std::numeric_limits<double>::infinity();
      for (Index l = 0; l < y.cols(); ++l)
        b = std::min(b, std::pow(x(p, j) - y(p, l), 2));
      tot += b;
    }
    for (Index l = 0; l < y.cols(); ++l) {
      double b = std::numeric_limits<double>::infinity();
      for (Index j = 0; j < x.cols(); ++j)
        b = std::min(b, std::pow(x(p, j) - y(p, l), 2));
      tot += b;
    }
  }
  return tot / x.rows();
}

double chamfer_columns_direct(const Mat& x, const Mat& y) {
  double a = 0.0, b = 0.0;
  for (Index j = 0; j < x.cols(); ++j) {
    double m = std::numeric_limits<double>::infinity();
    for (Index l = 0; l < y.cols(); ++l)
      m = std::min(m, (x.col(j) - y.col(l)).squaredNorm());
    a += m;
  }
  for (Index l = 0; l < y.cols(); ++l) {
    double m = std::numeric_limits<double>::infinity();
    for (Index j = 0; j < x.cols(); ++j)
      m = std::min(m, (x.col(j) - y.col(l)).squaredNorm());
    b += m;
  }
  return a / x.cols() + b / y.cols();
}

}  // namespace

TEST_CASE("exact p-bar equals the integral over breakpoints") {
  const Mat h = random_h(6, 37, 1u);
  const Vec p = nmfkit::pbar_exact(h, 15);
  for (Index i = 0; i < h.rows(); ++i)
    CHECK(p[i] == doctest::Approx(pbar_breakpoints(h, i, 15)).epsilon(1e-12));
}

TEST_CASE("exact p-bar: hand example, sign, zero rows, permutation") {
  Mat h(2, 5);
  h << 1, 3, 0, 2, 4,  // means 2 and 2 -> 0 ... set 1 = {1, 3}
      0, 0, 0, 0, 0;
  Vec p = nmfkit::pbar_exact(h, 2);
  CHECK(p[0] == doctest::Approx((2.0 - 2.0) / 4.0));
  CHECK(p[1] == 0.0);
  h(0, 0) = 5;  // set 1 = {5, 3}: mean 4; set 2 mean 2; s = 5
  p = nmfkit::pbar_exact(h, 2);
  CHECK(p[0] == doctest::Approx(0.4));
  // swapping the sets flips the sign
  Mat sw(2, 5);
  sw << h.block(0, 2, 2, 3), h.block(0, 0, 2, 2);
  CHECK(nmfkit::pbar_exact(sw, 3)[0] == doctest::Approx(-0.4));
  // a permuted copy of the same values gives exactly zero
  Mat pc(1, 8);
  pc << 0.1, 0.7, 0.3, 1e-9, 0.3, 0.1, 1e-9, 0.7;
  CHECK(nmfkit::pbar_exact(pc, 4)[0] == 0.0);
}

TEST_CASE("Monte Carlo p-bar is within a few standard errors") {
  const Mat h = random_h(5, 60, 2u);
  const Vec exact = nmfkit::pbar_exact(h, 25);
  std::mt19937 gen(3u);
  std::uniform_real_distribution<double> u01(0.0, 1.0);
  Mat u(20000, 5);
  for (Index j = 0; j < u.size(); ++j) u.data()[j] = u01(gen);
  const nmfkit::Pbar mc = nmfkit::pbar_montecarlo(h, 25, u);
  for (Index i = 0; i < 5; ++i) {
    CHECK(mc.se[i] > 0.0);
    CHECK(std::abs(mc.p[i] - exact[i]) < 4.0 * mc.se[i]);
  }
  // a single draw is one sample of frac(S1 > T) - frac(S2 > T)
  Mat h1(1, 4);
  h1 << 1, 2, 3, 4;
  Mat u1(1, 1);
  u1 << 0.6;  // T = 2.4: set 1 {1, 2} has 0 above, set 2 {3, 4} has 1
  CHECK(nmfkit::pbar_montecarlo(h1, 2, u1).p[0] == doctest::Approx(-1.0));
}

TEST_CASE("Chamfer over rows: hand case and direct definition") {
  Mat x(1, 2), y(1, 3);
  x << 0, 1;
  y << 0.5, 2, 0.9;
  // x->y: 0 -> 0.5 (0.25), 1 -> 0.9 (0.01); y->x: 0.5 -> 0 or 1 (0.25),
  // 2 -> 1 (1), 0.9 -> 1 (0.01)
  CHECK(nmfkit::chamfer_rows(x, y, 1) == doctest::Approx(1.52));
  const Mat a = random_h(7, 11, 4u), b = random_h(7, 9, 5u);
  CHECK(nmfkit::chamfer_rows(a, b, 1) ==
        doctest::Approx(chamfer_rows_direct(a, b)).epsilon(1e-12));
  CHECK(nmfkit::chamfer_rows(a, b, 2) == nmfkit::chamfer_rows(a, b, 1));
  CHECK(nmfkit::chamfer_rows(a, a, 1) == 0.0);
}

TEST_CASE("Chamfer over columns: hand case, blocks, direct definition") {
  Mat x(2, 2), y(2, 1);
  x << 0, 1,
       0, 1;
  y << 1, 0;  // one point (1, 0): distances 1 and 1
  CHECK(nmfkit::chamfer_columns(x, y, 1) == doctest::Approx(1.0 + 1.0));
  const Mat a = random_h(6, 23, 6u), b = random_h(6, 17, 7u);
  const double direct = chamfer_columns_direct(a, b);
  for (Index block : {1, 3, 17, 512})
    CHECK(nmfkit::chamfer_columns(a, b, 1, block) ==
          doctest::Approx(direct).epsilon(1e-12));
  Mat perm = a;
  perm.col(0).swap(perm.col(5));
  CHECK(nmfkit::chamfer_columns(a, perm, 2) == 0.0);
}

TEST_CASE("bad input throws invalid_argument") {
  const Mat h = random_h(3, 4, 8u);
  CHECK_THROWS_AS(nmfkit::pbar_exact(h, 0), std::invalid_argument);
  CHECK_THROWS_AS(nmfkit::pbar_exact(h, 4), std::invalid_argument);
  CHECK_THROWS_AS(nmfkit::pbar_montecarlo(h, 2, Mat(5, 2)),
                  std::invalid_argument);
  CHECK_THROWS_AS(nmfkit::chamfer_rows(Mat(2, 3), Mat(3, 3), 1),
                  std::invalid_argument);
  CHECK_THROWS_AS(nmfkit::chamfer_columns(Mat(2, 3), Mat(2, 0), 1),
                  std::invalid_argument);
}

TEST_CASE("cd_pass leaves a column at its optimum untouched") {
  // column 0: z = 0 and b <= 0 (already optimal, skipped);
  // column 1: z = 0 but b > 0 somewhere (must move)
  Mat g(2, 2);
  g << 2, 0.5,
       0.5, 1;
  Mat b(2, 2);
  b << -1, 0,
       0, 3;
  Mat z = Mat::Zero(2, 2);
  const double viol = nmfkit::cd_pass(z, g, b, 1);
  CHECK(z(0, 0) == 0.0);
  CHECK(z(1, 0) == 0.0);
  CHECK(z(1, 1) > 0.0);
  // only column 1's second coordinate has a negative projected gradient
  CHECK(viol == doctest::Approx(3.0));
}
