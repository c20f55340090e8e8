// Tests of the standard NMF engine: NNLS kernel, initialisation, HALS, MU.
#include <doctest/doctest.h>

#include <cmath>
#include <stdexcept>

#include "helpers.hpp"

using nmfkit::Index;
using nmfkit::Mat;
using nmfkit::Vec;
using nmfkit_test::rnorm;
using nmfkit_test::runif;

namespace {

// Planted exact factorisation with sparse, identifiable factors.
struct Planted {
  Mat w0, h0, x;
};
Planted planted(Index m, Index n, Index k, unsigned seed) {
  Planted p;
  p.w0 = runif(m, k, seed);
  p.h0 = runif(k, n, seed + 1);
  p.w0 = (p.w0.array() < 0.5).select(0.0, p.w0);
  p.h0 = (p.h0.array() < 0.5).select(0.0, p.h0);
  for (Index t = 0; t < k; ++t) {  // an anchor row/column per component
    p.w0(t, t) = 2.0;
    p.h0(t, t) = 2.0;
  }
  p.x = p.w0 * p.h0;
  return p;
}

nmfkit::SpMat to_sparse(const Mat& x) { return x.sparseView(); }

}  // namespace

TEST_CASE("cd NNLS reaches the KKT point of a strictly convex problem") {
  const Mat a = runif(30, 6, 1);
  const Mat g = a.transpose() * a;
  const Mat b = a.transpose() * (runif(30, 4, 2) - Mat::Constant(30, 4, 0.4));
  Mat z = Mat::Zero(6, 4);
  const int passes = nmfkit::nnls_cd(z, g, b, 1e-14, 5000, 1);
  CHECK(passes < 5000);
  const Mat grad = g * z - b;
  for (Index j = 0; j < z.cols(); ++j)
    for (Index t = 0; t < z.rows(); ++t) {
      CHECK(z(t, j) >= 0.0);
      CHECK(grad(t, j) >= -1e-10);
      CHECK(std::abs(z(t, j) * grad(t, j)) < 1e-10);
    }
}

TEST_CASE("cd_pass skips coordinates with a zero Gram diagonal") {
  Mat g = Mat::Identity(3, 3);
  g(1, 1) = 0.0;
  Mat b = Mat::Ones(3, 2);
  Mat z = Mat::Zero(3, 2);
  nmfkit::cd_pass(z, g, b, 1);
  CHECK(z.allFinite());
  CHECK(z(1, 0) == 0.0);
  CHECK(z(0, 0) == doctest::Approx(1.0));
}

TEST_CASE("randomized SVD matches the exact singular values") {
  const Mat x = runif(80, 8, 3) * runif(8, 60, 4) + 1e-3 * runif(80, 60, 5);
  const nmfkit::DenseData d(x);
  const nmfkit::Svd s = nmfkit::rsvd(d, rnorm(60, 15, 6), 5, 7, 1);
  Eigen::JacobiSVD<Mat> exact(x);
  for (Index j = 0; j < 5; ++j)
    CHECK(s.d[j] == doctest::Approx(exact.singularValues()[j]).epsilon(1e-8));
  // U and V orthonormal
  CHECK((s.u.transpose() * s.u - Mat::Identity(5, 5)).norm() < 1e-10);
  CHECK((s.v.transpose() * s.v - Mat::Identity(5, 5)).norm() < 1e-10);
}

TEST_CASE("thin_q gives an orthonormal basis of the columns, even when rank-deficient") {
  // spans y: the residual of projecting y on Q is rounding
  auto check_basis = [](const Mat& y) {
    const Mat q = nmfkit::detail::thin_q(y);
    REQUIRE(q.rows() == y.rows());
    REQUIRE(q.cols() == y.cols());
    CHECK((q.transpose() * q - Mat::Identity(y.cols(), y.cols())).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((y - q * (q.transpose() * y)).norm() < 1e-12 * y.norm());
  };
  // well conditioned (the CholeskyQR2 path)
  check_basis(rnorm(500, 20, 11));
  // columns scaled over 7 orders of magnitude (still CholeskyQR2)
  Mat y = rnorm(300, 12, 12);
  for (Index j = 0; j < 12; ++j) y.col(j) *= std::pow(10.0, -0.6 * j);
  check_basis(y);
  // rank 5 with 15 columns (the Householder fallback): Q stays orthonormal
  check_basis(runif(200, 5, 13) * rnorm(5, 15, 14));
  // an exactly zero column and a square y
  Mat z = rnorm(40, 6, 15);
  z.col(3).setZero();
  check_basis(z);
  check_basis(rnorm(8, 8, 16));
}

TEST_CASE("gram() is Z Z^T, exactly symmetric and the same on any thread count") {
  for (Index n : {0, 1, 37, 300, 5000}) {
    const Mat z = runif(7, n, 21 + static_cast<unsigned>(n));
    Mat g1, g2;
    nmfkit::detail::gram(z, g1, 1);
    nmfkit::detail::gram(z, g2, 2);
    REQUIRE(g1.rows() == 7);
    REQUIRE(g1.cols() == 7);
    CHECK((g1 - g2).cwiseAbs().maxCoeff() == 0.0);
    CHECK((g1 - g1.transpose()).cwiseAbs().maxCoeff() == 0.0);
    const Mat ref = z * z.transpose();
    CHECK((g1 - ref).cwiseAbs().maxCoeff() <= 1e-12 * std::max(1.0, ref.cwiseAbs().maxCoeff()));
  }
}

TEST_CASE("transpose_chunks() is the transpose on any thread count") {
  for (Index m : {0, 1, 5, 3000}) {
    const Mat a = runif(m, 7, 5 + static_cast<unsigned>(m));
    Mat t1, t2;
    nmfkit::detail::transpose_chunks(a, t1, 1);
    nmfkit::detail::transpose_chunks(a, t2, 2);
    REQUIRE(t1.rows() == 7);
    REQUIRE(t1.cols() == m);
    CHECK(t1 == a.transpose());
    CHECK(t2 == t1);
  }
}

TEST_CASE("transpose_sparse() gives Eigen's transpose arrays on any thread count") {
  // a mostly-zero matrix with empty rows and columns, and one big enough
  // for the parallel path
  for (Index n : {1, 9, 4000}) {
    const Index m = n == 4000 ? 300 : 13;  // 4000: about 470k entries
    Mat d = runif(m, n, 40 + static_cast<unsigned>(n));
    for (Index j = 0; j < n; ++j)
      for (Index i = 0; i < m; ++i)
        if (d(i, j) < 0.5 || i == 2 || j % 5 == 3) d(i, j) = 0.0;
    nmfkit::SpMat x = d.sparseView();
    x.makeCompressed();
    nmfkit::SpMat ref(x.transpose());
    ref.makeCompressed();
    for (int threads : {1, 2, 3}) {
      const nmfkit::SpMat t = nmfkit::detail::transpose_sparse(x, threads);
      REQUIRE(t.isCompressed());
      REQUIRE(t.rows() == n);
      REQUIRE(t.cols() == m);
      REQUIRE(t.nonZeros() == ref.nonZeros());
      for (Index i = 0; i <= m; ++i)
        CHECK(t.outerIndexPtr()[i] == ref.outerIndexPtr()[i]);
      bool same = true;
      for (Index p = 0; p < ref.nonZeros(); ++p)
        same = same && t.innerIndexPtr()[p] == ref.innerIndexPtr()[p] &&
               t.valuePtr()[p] == ref.valuePtr()[p];
      CHECK(same);
    }
  }
}

TEST_CASE("cost_rule_passes() follows Gillis and Glineur's cost rule") {
  using nmfkit::detail::cost_rule_passes;
  // the sparse benchmark: 20000 x 5000 with 500k stored, k = 20
  CHECK(cost_rule_passes(20000, 5000, 20, 5e5) == 2);  // W
  CHECK(cost_rule_passes(5000, 20000, 20, 5e5) == 5);  // H
  // dense 2000 x 1000, k = 20: products cost n / k passes and more
  CHECK(cost_rule_passes(2000, 1000, 20, 2e6) == 26);
  CHECK(cost_rule_passes(10, 10000000, 2, 1e9) == 100);  // capped
  CHECK(cost_rule_passes(0, 10, 3, 0) == 1);
  // factor_params(): W's passes over its m rows, H's over its n columns
  nmfkit::NmfParams p;
  p.passes = nmfkit::InnerPasses::automatic;
  const auto f = nmfkit::detail::factor_params(p, 20000, 5000, 20, 5e5);
  CHECK(f.w.inner == 2);
  CHECK(f.h.inner == 5);
  CHECK(f.w.passes == nmfkit::InnerPasses::fixed);
  CHECK(f.h.passes == nmfkit::InnerPasses::fixed);
  p.passes = nmfkit::InnerPasses::fixed;  // a given count wins
  p.inner = 4;
  CHECK(nmfkit::detail::factor_params(p, 20000, 5000, 20, 5e5).h.inner == 4);
  CHECK(nmfkit::detail::factor_params(p, 100, 50, 5, 1e4).w.inner == 4);
}

TEST_CASE("NNDSVD does not depend on the SVD's sign convention") {
  const Mat x = runif(40, 30, 7);
  const nmfkit::DenseData d(x);
  nmfkit::Svd s = nmfkit::rsvd(d, rnorm(30, 14, 8), 4, 7, 1);
  Mat w1, h1, w2, h2;
  nmfkit::nndsvd(s, std::sqrt(x.mean() / 4), nmfkit::ZeroFill::mean, nullptr, nullptr, w1, h1);
  for (Index j = 0; j < 4; ++j) {
    s.u.col(j) *= -1.0;
    s.v.col(j) *= -1.0;
  }
  nmfkit::nndsvd(s, std::sqrt(x.mean() / 4), nmfkit::ZeroFill::mean, nullptr, nullptr, w2, h2);
  CHECK((w1 - w2).norm() < 1e-14);
  CHECK((h1 - h2).norm() < 1e-14);
  CHECK((w1.array() > 0).all());  // NNDSVDa leaves no zeros
  Mat w3, h3;
  nmfkit::nndsvd(s, std::sqrt(x.mean() / 4), nmfkit::ZeroFill::none, nullptr, nullptr, w3, h3);
  CHECK((w3.array() >= 0).all());
  CHECK((w3.array() == 0).any());
}

TEST_CASE("HALS recovers a planted factorisation with a monotone loss") {
  const Planted p = planted(60, 50, 5, 11);
  const nmfkit::DenseData d(p.x);
  nmfkit::NmfParams par;
  par.tol = 0.0;
  par.max_iter = 3000;
  nmfkit::NullHooks hooks;
  const nmfkit::Result r =
      nmfkit::nmf(d, runif(60, 5, 12), runif(5, 50, 13), par, hooks);
  CHECK(r.loss.back() < 1e-6);
  CHECK(std::sqrt(nmfkit::sq_error_dense(p.x, r.W, r.H)) / p.x.norm() < 1e-6);
  for (size_t i = 1; i < r.loss.size(); ++i)
    CHECK(r.loss[i] <= r.loss[i - 1] + 1e-9);
  CHECK((r.W.array() >= 0).all());
  CHECK((r.H.array() >= 0).all());
}

TEST_CASE("KKT conditions hold at convergence") {
  const Mat x = runif(40, 30, 21);
  const nmfkit::DenseData d(x);
  nmfkit::NmfParams par;
  par.tol = 1e-9;
  par.max_iter = 5000;
  nmfkit::NullHooks hooks;
  const nmfkit::Result r =
      nmfkit::nmf(d, runif(40, 4, 22), runif(4, 30, 23), par, hooks);
  const Mat gw = r.W * (r.H * r.H.transpose()) - x * r.H.transpose();
  const Mat gh = (r.W.transpose() * r.W) * r.H - r.W.transpose() * x;
  const double sw = gw.cwiseAbs().maxCoeff(), sh = gh.cwiseAbs().maxCoeff();
  CHECK(r.W.cwiseMin(gw).cwiseAbs().maxCoeff() < 1e-3 * std::max(sw, 1.0));
  CHECK(r.H.cwiseMin(gh).cwiseAbs().maxCoeff() < 1e-3 * std::max(sh, 1.0));
}

TEST_CASE("dense and sparse data give the same fit; threads do not matter") {
  Mat x = runif(70, 45, 31);
  x = (x.array() < 0.7).select(0.0, x);
  x.row(3).setZero();  // all-zero row and column stay zero
  x.col(5).setZero();
  const nmfkit::SpMat xs = to_sparse(x);
  const nmfkit::DenseData dd(x);
  const nmfkit::SparseData<nmfkit::SpMat> ds(xs);
  const Mat w0 = runif(70, 4, 32), h0 = runif(4, 45, 33);
  nmfkit::NmfParams par;
  par.max_iter = 50;
  nmfkit::NullHooks hooks;
  const nmfkit::Result a = nmfkit::nmf(dd, w0, h0, par, hooks);
  const nmfkit::Result b = nmfkit::nmf(ds, w0, h0, par, hooks);
  CHECK((a.W - b.W).cwiseAbs().maxCoeff() < 1e-10);
  CHECK((a.H - b.H).cwiseAbs().maxCoeff() < 1e-10);
  CHECK(a.W.row(3).isZero(0.0));
  CHECK(a.H.col(5).isZero(0.0));
  par.threads = 2;
  const nmfkit::Result c = nmfkit::nmf(dd, w0, h0, par, hooks);
  const nmfkit::Result e = nmfkit::nmf(ds, w0, h0, par, hooks);
  CHECK(a.W == c.W);
  CHECK(a.H == c.H);
  CHECK(b.W == e.W);
  CHECK(b.H == e.H);
}

TEST_CASE("multiplicative updates never increase the loss") {
  const Mat x = runif(30, 25, 41);
  const nmfkit::DenseData d(x);
  nmfkit::NmfParams par;
  par.method = nmfkit::Method::mu;
  par.tol = 0.0;
  par.max_iter = 300;
  nmfkit::NullHooks hooks;
  const nmfkit::Result r =
      nmfkit::nmf(d, runif(30, 3, 42), runif(3, 25, 43), par, hooks);
  CHECK(r.status == nmfkit::Status::max_iter);
  for (size_t i = 1; i < r.loss.size(); ++i)
    CHECK(r.loss[i] <= r.loss[i - 1] + 1e-12);
}

TEST_CASE("an interrupt stops the fit at once with its status") {
  const Mat x = runif(30, 20, 51);
  const nmfkit::DenseData d(x);
  nmfkit::NmfParams par;
  par.tol = 0.0;
  par.max_iter = 100000;
  nmfkit_test::StopAfter hooks{3};
  const nmfkit::Result r =
      nmfkit::nmf(d, runif(30, 2, 52), runif(2, 20, 53), par, hooks);
  CHECK(r.status == nmfkit::Status::interrupted);
  CHECK(r.iterations == 3);
  CHECK(hooks.progress_calls == 3);
  CHECK(r.loss.size() == 3);
}

TEST_CASE("bad shapes throw std::invalid_argument, never crash") {
  const Mat x = runif(10, 8, 61);
  const nmfkit::DenseData d(x);
  nmfkit::NmfParams par;
  nmfkit::NullHooks hooks;
  CHECK_THROWS_AS(nmfkit::nmf(d, runif(9, 2, 1), runif(2, 8, 2), par, hooks),
                  std::invalid_argument);
  Mat z = Mat::Zero(3, 2);
  CHECK_THROWS_AS(nmfkit::cd_pass(z, Mat::Identity(2, 2), Mat::Zero(3, 2), 1),
                  std::invalid_argument);
}

TEST_CASE("ANLS is monotone and the same on 1 and 2 threads") {
  const Mat x = runif(40, 30, 73);
  const nmfkit::DenseData d(x);
  nmfkit::NmfParams par;
  par.method = nmfkit::Method::anls;
  par.tol = 0.0;
  par.max_iter = 40;
  nmfkit::NullHooks hooks;
  const nmfkit::Result r =
      nmfkit::nmf(d, runif(40, 4, 74), runif(4, 30, 75), par, hooks);
  for (size_t i = 1; i < r.loss.size(); ++i)
    CHECK(r.loss[i] <= r.loss[i - 1] + 1e-10);
  par.threads = 2;
  const nmfkit::Result r2 =
      nmfkit::nmf(d, runif(40, 4, 74), runif(4, 30, 75), par, hooks);
  CHECK(r.W == r2.W);
}

TEST_CASE("an overflowing update returns the last finite iterate") {
  // entries near 1e300: the products overflow in the first iteration
  const Mat x = runif(20, 15, 31) * 1e300;
  const nmfkit::DenseData d(x);
  const Mat w = runif(20, 3, 32), h = runif(3, 15, 33);
  nmfkit::NullHooks hooks;
  for (auto method : {nmfkit::Method::hals, nmfkit::Method::mu,
                      nmfkit::Method::anls}) {
    nmfkit::NmfParams p;
    p.method = method;
    const nmfkit::Result r = nmfkit::nmf(d, w, h, p, hooks);
    CHECK(r.status == nmfkit::Status::numerical_error);
    CHECK(r.W.allFinite());
    CHECK(r.H.allFinite());
    CHECK(static_cast<int>(r.loss.size()) == r.iterations);
    for (double l : r.loss) CHECK(std::isfinite(l));
  }
}

TEST_CASE("nmf is scale-equivariant (MU's guard is relative)") {
  const Mat x = runif(30, 20, 41);
  const Mat w = runif(30, 4, 42), h = runif(4, 20, 43);
  nmfkit::NullHooks hooks;
  nmfkit::NmfParams p;
  p.method = nmfkit::Method::mu;
  p.max_iter = 50;
  const nmfkit::Result a = nmfkit::nmf(nmfkit::DenseData(x), w, h, p, hooks);
  const double c = 1e-12;  // absolute 1e-10 guard would dominate here
  const Mat xc = x * c;
  const nmfkit::Result b = nmfkit::nmf(nmfkit::DenseData(xc), w * std::sqrt(c),
                                       h * std::sqrt(c), p, hooks);
  CHECK(a.iterations == b.iterations);
  CHECK((b.W / std::sqrt(c) - a.W).norm() < 1e-8 * a.W.norm());
  CHECK((b.H / std::sqrt(c) - a.H).norm() < 1e-8 * a.H.norm());
}
