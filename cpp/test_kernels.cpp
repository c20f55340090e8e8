// Tests of the AVX2/FMA product kernels (kernels.hpp) against Eigen's
// products, through DenseData as every solver calls them.
#include <doctest/doctest.h>

#include <cmath>

#include "helpers.hpp"

using nmfkit::DenseData;
using nmfkit::Index;
using nmfkit::Mat;
using nmfkit_test::runif;

namespace {
// restores the automatic choice when a test ends
struct SimdGuard {
  ~SimdGuard() { nmfkit::detail::simd_state() = -1; }
};

double rel_diff(const Mat& a, const Mat& b) {
  return (a - b).cwiseAbs().maxCoeff() / b.cwiseAbs().maxCoeff();
}
}  // namespace

TEST_CASE("the AVX2 products equal Eigen's to rounding, on every shape") {
  SimdGuard guard;
  if (!nmfkit::detail::simd_available()) {
    MESSAGE("no AVX2/FMA here: the products stay Eigen's");
    CHECK_FALSE(nmfkit::set_simd(true));
    return;
  }
  // remainders of every register block: k from 1 to 29 (row blocks of
  // 12/8/4 and bands of up to 6), rows and columns not multiples of 4 or 8
  const Index shapes[][2] = {{1, 1}, {3, 5}, {9, 11}, {13, 7}, {64, 33},
                             {221, 130}, {300, 17}};
  for (const auto& sh : shapes) {
    for (Index k : {1, 2, 3, 4, 5, 6, 7, 9, 10, 12, 13, 17, 20, 29}) {
      const Index m = sh[0], n = sh[1];
      CAPTURE(m);
      CAPTURE(n);
      CAPTURE(k);
      const Mat x = runif(m, n, 11u + static_cast<unsigned>(k));
      const Mat a = runif(k, m, 12u) - Mat::Constant(k, m, 0.5);
      const Mat c = runif(k, n, 13u);
      const DenseData d(x);
      Mat b_eigen, t_eigen, b_simd, t_simd;
      nmfkit::set_simd(false);
      d.left_mult(a, b_eigen, 1);
      d.left_mult_t(c, t_eigen, 1);
      REQUIRE(nmfkit::set_simd(true));
      d.left_mult(a, b_simd, 1);
      d.left_mult_t(c, t_simd, 1);
      REQUIRE(b_simd.rows() == k);
      REQUIRE(b_simd.cols() == n);
      REQUIRE(t_simd.rows() == k);
      REQUIRE(t_simd.cols() == m);
      CHECK(rel_diff(b_simd, b_eigen) < 1e-13);
      CHECK(rel_diff(t_simd, t_eigen) < 1e-13);
    }
  }
}

TEST_CASE("the AVX2 products give identical columns identical bits, on any thread count") {
  SimdGuard guard;
  if (!nmfkit::set_simd(true)) return;
  const Index m = 203, n = 700, k = 10;
  Mat x = runif(m, n, 21u);
  // column 0 copied to columns 5, 333 and 699 (other positions in the
  // blocks of 4 and the last, partial block); row 0 to rows 9 and 202
  for (Index j : {5, 333, 699}) x.col(j) = x.col(0);
  for (Index i : {9, 202}) x.row(i) = x.row(0);
  const Mat a = runif(k, m, 22u);
  const Mat c = runif(k, n, 23u);
  const DenseData d(x);
  Mat b1, b2, t1, t2;
  d.left_mult(a, b1, 1);
  d.left_mult_t(c, t1, 1);
  d.left_mult(a, b2, 2);
  d.left_mult_t(c, t2, 2);
  CHECK(b1 == b2);
  CHECK(t1 == t2);
  for (Index j : {5, 333, 699}) CHECK(b1.col(j) == b1.col(0));
  for (Index i : {9, 202}) CHECK(t1.col(i) == t1.col(0));
}

TEST_CASE("set_simd(false) keeps Eigen's; unset, the processor decides") {
  SimdGuard guard;
  CHECK_FALSE(nmfkit::set_simd(false));
  CHECK_FALSE(nmfkit::simd_enabled());
  nmfkit::detail::simd_state() = -1;
  CHECK(nmfkit::simd_enabled() == nmfkit::detail::simd_available());
}

TEST_CASE("the AVX2 Gram equals Eigen's, exactly symmetric") {
  SimdGuard guard;
  if (!nmfkit::detail::simd_available()) return;
  for (Index k : {1, 3, 5, 8, 10, 13, 20}) {
    for (Index n : {1, 7, 300, 1000}) {
      CAPTURE(k);
      CAPTURE(n);
      const Mat z = runif(k, n, 31u + static_cast<unsigned>(k));
      Mat g_eigen, g_simd, g_two;
      nmfkit::set_simd(false);
      nmfkit::detail::gram(z, g_eigen, 1);
      REQUIRE(nmfkit::set_simd(true));
      nmfkit::detail::gram(z, g_simd, 1);
      nmfkit::detail::gram(z, g_two, 2);
      CHECK(rel_diff(g_simd, g_eigen) < 1e-13);
      CHECK(g_simd == g_simd.transpose());
      CHECK(g_simd == g_two);
    }
  }
}

TEST_CASE("the AVX2 HALS pass equals the portable one, identical samples stay identical") {
  SimdGuard guard;
  if (!nmfkit::detail::simd_available()) return;
  for (Index k : {1, 4, 10, 13}) {
    for (Index cols : {1, 5, 8, 37, 300}) {
      CAPTURE(k);
      CAPTURE(cols);
      const Mat a = runif(k, k + 3, 41u);
      const Mat g = a * a.transpose();
      const Mat b = runif(k, cols, 42u) - Mat::Constant(k, cols, 0.2);
      Mat z0 = runif(k, cols, 43u);
      z0.row(0).head(cols / 2).setZero();  // coordinates at the bound
      if (cols >= 37) {  // a sample repeated in other register positions
        for (Index j : {9, 36}) z0.col(j) = z0.col(3);
      }
      Mat bb = b;
      if (cols >= 37) {
        for (Index j : {9, 36}) bb.col(j) = bb.col(3);
      }
      Mat z_port = z0, z_simd = z0, z_two = z0;
      nmfkit::set_simd(false);
      const double v_port = nmfkit::hals_update(z_port, g, bb, 1, 3);
      REQUIRE(nmfkit::set_simd(true));
      const double v_simd = nmfkit::hals_update(z_simd, g, bb, 1, 3);
      const double v_two = nmfkit::hals_update(z_two, g, bb, 2, 3);
      CHECK((z_simd - z_port).cwiseAbs().maxCoeff() <
            1e-12 * (1.0 + z_port.cwiseAbs().maxCoeff()));
      CHECK(std::abs(v_simd - v_port) <= 1e-12 * (1.0 + std::abs(v_port)));
      CHECK(z_simd == z_two);
      CHECK(v_simd == v_two);
      CHECK(z_simd.minCoeff() >= 0.0);
      if (cols >= 37) {
        for (Index j : {9, 36}) CHECK(z_simd.col(j) == z_simd.col(3));
      }
    }
  }
}

TEST_CASE("the AVX2 sparse products are the portable ones, bit for bit") {
  SimdGuard guard;
  if (!nmfkit::detail::simd_available()) return;
  // ranks of one register group and of several (32 rows each), full and
  // partial last registers; columns with no, one and many nonzeros
  Mat x = runif(230, 90, 51u);
  x = (x.array() < 0.8).select(0.0, x);
  x.col(4).setZero();
  x.col(7).setZero();
  x(11, 7) = 0.5;
  const nmfkit::SpMat xs = x.sparseView();
  const nmfkit::SparseData<nmfkit::SpMat> d(xs);
  for (Index k : {1, 2, 3, 4, 5, 7, 8, 13, 20, 31, 32, 33, 45, 70}) {
    CAPTURE(k);
    const Mat a = runif(k, 230, 52u) - Mat::Constant(k, 230, 0.3);
    const Mat c = runif(k, 90, 53u);
    Mat b_port, t_port, b_simd, t_simd, b_two;
    nmfkit::set_simd(false);
    d.left_mult(a, b_port, 1);
    d.left_mult_t(c, t_port, 1);
    REQUIRE(nmfkit::set_simd(true));
    d.left_mult(a, b_simd, 1);
    d.left_mult_t(c, t_simd, 1);
    d.left_mult(a, b_two, 2);
    CHECK(b_simd == b_port);
    CHECK(t_simd == t_port);
    CHECK(b_two == b_simd);
    CHECK((b_simd - a * x).cwiseAbs().maxCoeff() < 1e-12);
  }
}

TEST_CASE("the AVX2 HALS pass steps each coordinate by its chain of FMAs") {
  SimdGuard guard;
  if (!nmfkit::set_simd(true)) return;
  // one chunk of `cols` samples: groups of 32 rows, then every tail of 1
  // to 31 rows (one to four blocks of eight, the last one partial)
  for (Index k : {1, 3, 10, 20}) {
    for (Index cols : {1, 7, 8, 9, 17, 25, 31, 32, 33, 64, 70, 101}) {
      CAPTURE(k);
      CAPTURE(cols);
      const Mat a = runif(k, k + 3, 61u);
      const Mat g = a * a.transpose();
      const Mat b = runif(k, cols, 62u) - Mat::Constant(k, cols, 0.2);
      Mat z = runif(k, cols, 63u);
      z.row(0).head(cols / 2).setZero();  // coordinates at the bound
      Mat ref = z;
      // the pass as a scalar loop: gradient -b + sum_l z(l, i) g(l, t),
      // one fused multiply-add per l in order, then the projected step
      double viol_ref = 0.0;
      for (Index t = 0; t < k; ++t) {
        for (Index i = 0; i < cols; ++i) {
          double gr = -b(t, i);
          for (Index l = 0; l < k; ++l) gr = std::fma(ref(l, i), g(l, t), gr);
          viol_ref += std::abs(ref(t, i) == 0.0 ? std::min(0.0, gr) : gr);
          const double next = ref(t, i) - gr / g(t, t);
          ref(t, i) = next > 0.0 ? next : 0.0;
        }
      }
      const double viol = nmfkit::hals_update(z, g, b, 1, 1, 0.0, cols);
      CHECK(z == ref);
      CHECK(std::abs(viol - viol_ref) <= 1e-12 * (1.0 + viol_ref));
    }
  }
}
