// Tests of the entropic-OT kernels (sinkhorn.hpp) and Wasserstein NMF
// (wasserstein.hpp): stabilised vs naive formulas, finite differences,
// separable vs dense kernels, Fenchel / strong-duality identities.
#include <doctest/doctest.h>

#include <cmath>
#include <nmfkit/sinkhorn_symmetric.hpp>
#include <nmfkit/wasserstein.hpp>
#include <random>

using nmfkit::Index;
using nmfkit::Mat;
using nmfkit::OtKernel;
using nmfkit::Vec;

namespace {

// Squared-Euclidean cost between points t (1-D), divided by its mean.
Mat cost_1d(const Vec& t) {
  const Index m = t.size();
  Mat c(m, m);
  for (Index i = 0; i < m; ++i)
    for (Index j = 0; j < m; ++j) c(i, j) = (t[i] - t[j]) * (t[i] - t[j]);
  return c / c.mean();
}

Vec grid(Index m, double lo, double hi) {
  return Vec::LinSpaced(m, lo, hi);
}

// Per-axis squared distances of an r x s pixel grid, scaled so that the full
// cost has mean one.
OtKernel grid_kernel(Index r, Index s, double eps, Mat* dense = nullptr) {
  Mat c1(r, r), c2(s, s);
  for (Index i = 0; i < r; ++i)
    for (Index k = 0; k < r; ++k) c1(i, k) = double((i - k) * (i - k));
  for (Index j = 0; j < s; ++j)
    for (Index l = 0; l < s; ++l) c2(j, l) = double((j - l) * (j - l));
  const double mean = c1.mean() + c2.mean();
  c1 /= mean;
  c2 /= mean;
  OtKernel k = OtKernel::separable(c1, c2, eps);
  if (dense != nullptr) *dense = k.dense_cost();
  return k;
}

// Random histograms with some exact zeros.
Mat histograms(Index m, Index n, unsigned seed, double zero_share = 0.2) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Mat x(m, n);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < m; ++i) x(i, j) = u(gen) < zero_share ? 0 : u(gen);
    x.col(j) /= x.col(j).sum();
  }
  return x;
}

Mat gaussian_matrix(Index m, Index n, double sd, unsigned seed) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> z(0.0, sd);
  Mat g(m, n);
  for (Index i = 0; i < g.size(); ++i) g.data()[i] = z(gen);
  return g;
}

// The OptimalTransport.jl formulas, computed naively (not stabilised).
double naive_semidual(const Mat& c, double eps, const Mat& x, const Mat& g,
                      Mat& grad) {
  const Mat k = (-c.array() / eps).exp();
  const Mat eg = (g.array() / eps).exp();
  const Mat kv = k * eg;
  double v = 0.0;
  for (Index i = 0; i < x.size(); ++i) {
    const double xa = x.data()[i];
    if (xa > 0) v += -(xa * std::log(xa) - xa) + xa * std::log(kv.data()[i]);
  }
  const Mat ratio = (x.array() / kv.array()).matrix();
  grad = (eg.array() * (k.transpose() * ratio).array()).matrix();
  return eps * v;
}

struct StopAtOnce {
  bool check_interrupt() { return true; }
  void progress(int, double) {}
};

}  // namespace

TEST_CASE("stabilised semi-dual equals the naive formulas where finite") {
  const Mat c = cost_1d(grid(40, -12, 12));
  const double eps = 0.05;
  const Mat x = histograms(40, 6, 1);
  const Mat g = gaussian_matrix(40, 6, 0.3, 2);
  const OtKernel k = OtKernel::dense(c, eps);
  Mat grad(40, 6), ngrad;
  const double v = nmfkit::semidual(k, x, nmfkit::safe_log(x), g, grad, 1);
  const double nv = naive_semidual(c, eps, x, g, ngrad);
  REQUIRE(std::isfinite(nv));
  REQUIRE(ngrad.allFinite());
  CHECK(std::abs(v - nv) <= 1e-13 * std::max(1.0, std::abs(nv)));
  CHECK((grad - ngrad).cwiseAbs().maxCoeff() <= 1e-14);
  // the gradient is the plan's column marginal: it has the mass of x
  for (Index j = 0; j < 6; ++j) CHECK(grad.col(j).sum() == doctest::Approx(1));
}

TEST_CASE("semi-dual gradient matches central finite differences") {
  const Mat c = cost_1d(grid(25, 0, 1));
  const double eps = 0.03;
  const Mat x = histograms(25, 3, 3);
  Mat g = gaussian_matrix(25, 3, 0.5, 4);
  const OtKernel k = OtKernel::dense(c, eps);
  const Mat lx = nmfkit::safe_log(x);
  Mat grad(25, 3), tmp(25, 3);
  nmfkit::semidual(k, x, lx, g, grad, 1);
  const double h = 1e-6;
  double worst = 0.0;
  for (Index i = 0; i < g.size(); i += 7) {
    const double keep = g.data()[i];
    g.data()[i] = keep + h;
    const double fp = nmfkit::semidual(k, x, lx, g, tmp, 1);
    g.data()[i] = keep - h;
    const double fm = nmfkit::semidual(k, x, lx, g, tmp, 1);
    g.data()[i] = keep;
    const double fd = (fp - fm) / (2 * h);
    worst = std::max(worst, std::abs(fd - grad.data()[i]) /
                                std::max(1e-3, std::abs(grad.data()[i])));
  }
  CHECK(worst < 1e-6);
}

TEST_CASE("separable grid kernel equals the dense kernel to 1e-12") {
  for (Index s : {Index(1), Index(4)}) {
    Mat c;
    const OtKernel sep = grid_kernel(6, s, 0.01, &c);
    const OtKernel den = OtKernel::dense(c, 0.01);
    const Index m = 6 * s;
    const Mat x = histograms(m, 5, 7);
    const Mat g = gaussian_matrix(m, 5, 1.5, 8);
    const Mat lx = nmfkit::safe_log(x);
    Mat g1(m, 5), g2(m, 5);
    const double v1 = nmfkit::semidual(sep, x, lx, g, g1, 1);
    const double v2 = nmfkit::semidual(den, x, lx, g, g2, 1);
    CHECK(std::abs(v1 - v2) <= 1e-12 * std::max(1.0, std::abs(v2)));
    CHECK((g1 - g2).cwiseAbs().maxCoeff() <= 1e-12);
  }
}

TEST_CASE("no NaN or Inf for eps = 1e-3 on a 28 x 28 grid") {
  Mat c;
  const OtKernel sep = grid_kernel(28, 28, 1e-3, &c);
  const OtKernel den = OtKernel::dense(c, 1e-3);
  // two blobs far apart: the naive kernel underflows to exact zeros here
  Mat x = Mat::Zero(784, 2);
  for (Index i = 0; i < 4; ++i)
    for (Index j = 0; j < 4; ++j) {
      x(i + 28 * j, 0) = 1.0;
      x((24 + i) + 28 * (24 + j), 1) = 1.0;
    }
  x.col(0) /= x.col(0).sum();
  x.col(1) /= x.col(1).sum();
  const Mat g = gaussian_matrix(784, 2, 3.0, 9);
  const Mat lx = nmfkit::safe_log(x);
  Mat g1(784, 2), g2(784, 2), ng;
  const double v1 = nmfkit::semidual(sep, x, lx, g, g1, 2);
  const double v2 = nmfkit::semidual(den, x, lx, g, g2, 2);
  CHECK(std::isfinite(v1));
  CHECK(g1.allFinite());
  CHECK(std::abs(v1 - v2) <= 1e-10 * std::abs(v2));
  CHECK((g1 - g2).cwiseAbs().maxCoeff() <= 1e-12);
  CHECK(g1.col(0).sum() == doctest::Approx(1).epsilon(1e-12));
  CHECK(g1.col(1).sum() == doctest::Approx(1).epsilon(1e-12));
  // while the naive formulas break down
  const double nv = naive_semidual(c, 1e-3, x, g, ng);
  CHECK_FALSE((std::isfinite(nv) && ng.allFinite()));
}

TEST_CASE("Fenchel identity: sup_v <v,nu> - OT*(mu,v) = OT_eps(mu,nu)") {
  const Index m = 30;
  const Mat c = cost_1d(grid(m, -1, 1));
  const double eps = 0.05;
  const OtKernel k = OtKernel::dense(c, eps);
  const Mat mu = histograms(m, 1, 11, 0.0), nu = histograms(m, 1, 12, 0.1);
  const nmfkit::SinkhornResult s =
      nmfkit::sinkhorn_log(k, mu, nu, 5000, 1e-13, 1);
  REQUIRE(s.status == nmfkit::Status::converged);
  const Mat p = nmfkit::sinkhorn_plan(k, s, 0);
  // marginals of the plan
  CHECK((p.rowwise().sum() - mu).cwiseAbs().sum() < 1e-12);
  CHECK((p.colwise().sum().transpose() - nu).cwiseAbs().sum() < 1e-12);
  // the semi-dual at v = g (the column potential) is maximal: its gradient is
  // nu, and its value is the primal cost with the constant offset -eps
  Mat v = s.g;
  for (Index i = 0; i < m; ++i)
    if (nu(i, 0) == 0) v(i, 0) = -50.0;  // any very low value; no mass there
  Mat grad(m, 1);
  const double star = nmfkit::semidual(k, mu, nmfkit::safe_log(mu), v, grad, 1);
  CHECK((grad - nu).cwiseAbs().maxCoeff() < 5e-9);
  double pc = 0.0, plogp = 0.0;
  for (Index i = 0; i < p.size(); ++i) {
    pc += p.data()[i] * c.data()[i];
    if (p.data()[i] > 0) plogp += p.data()[i] * std::log(p.data()[i]);
  }
  const double sinkhorn_ent = pc + eps * plogp;  // <P,C> + eps sum P log P
  double vnu = 0.0;
  for (Index i = 0; i < m; ++i)
    if (nu(i, 0) > 0) vnu += v(i, 0) * nu(i, 0);
  CHECK(vnu - star == doctest::Approx(sinkhorn_ent - eps).epsilon(1e-9));
  CHECK(s.cost[0] == doctest::Approx(sinkhorn_ent - eps).epsilon(1e-9));
}

TEST_CASE("strong duality of the weights step holds with the offset") {
  const Index m = 30, n = 4, kk = 3;
  const Mat c = cost_1d(grid(m, -12, 12));
  const double eps = 0.05;
  const OtKernel k = OtKernel::dense(c, eps);
  const Mat x = histograms(m, n, 21, 0.0);
  const Mat d = histograms(m, kk, 22, 0.0);
  nmfkit::WassersteinParams p;
  p.rho_weights = 0.05;
  p.tol = 1e-10;
  p.max_iter = 2000;
  Mat g = Mat::Zero(m, n);
  nmfkit::DualStats st;
  const Mat lambda = nmfkit::wasserstein_weights(k, x, d, g, p, st);
  CHECK(st.grad_max < 1e-8);
  // primal: sum_i OT_eps(x_i, D l_i) + rho sum E(l_i)
  const Mat y = d * lambda;
  const nmfkit::SinkhornResult s = nmfkit::sinkhorn_log(k, x, y, 20000,
                                                        1e-13, 1);
  REQUIRE(s.status == nmfkit::Status::converged);
  double primal = s.cost.sum();
  for (Index i = 0; i < lambda.size(); ++i)
    primal += p.rho_weights * lambda.data()[i] * std::log(lambda.data()[i]);
  CHECK(-st.value == doctest::Approx(primal).epsilon(1e-7));
  // the Sinkhorn convention without the -1 differs by eps * n
  const double no_offset = primal + eps * n;
  CHECK(std::abs(-st.value - no_offset) == doctest::Approx(eps * n));
}

TEST_CASE("nmf_wasserstein: simplex factors, thread invariance, interrupt") {
  const Index m = 30, n = 150, kk = 3;
  const Mat c = cost_1d(grid(m, -12, 12));
  const OtKernel k = OtKernel::dense(c, 0.025);
  const Mat x = histograms(m, n, 31, 0.0);
  const Mat w0 = histograms(m, kk, 32, 0.0), h0 = histograms(kk, n, 33, 0.0);
  nmfkit::WassersteinParams p;
  p.outer = 3;
  p.max_iter = 50;
  const nmfkit::WassersteinResult r1 = nmfkit::nmf_wasserstein(k, x, w0, h0, p);
  p.threads = 2;
  const nmfkit::WassersteinResult r2 = nmfkit::nmf_wasserstein(k, x, w0, h0, p);
  REQUIRE(r1.loss.size() == 3);
  CHECK(r1.W == r2.W);
  CHECK(r1.H == r2.H);
  CHECK(r1.loss == r2.loss);
  CHECK((r1.W.colwise().sum().array() - 1).abs().maxCoeff() < 1e-12);
  CHECK((r1.H.colwise().sum().array() - 1).abs().maxCoeff() < 1e-12);
  CHECK((r1.W.array() >= 0).all());
  CHECK(r1.dict_steps.size() == 3);
  CHECK(r1.dict_steps[0].iterations > 0);
  const nmfkit::WassersteinResult r3 =
      nmfkit::nmf_wasserstein(k, x, w0, h0, p, StopAtOnce{});
  CHECK(r3.status == nmfkit::Status::interrupted);
  CHECK_THROWS_AS(nmfkit::nmf_wasserstein(k, x, w0.topRows(5), h0, p),
                  std::invalid_argument);
}

TEST_CASE("OT by L-BFGS on the semi-dual agrees with Sinkhorn") {
  const Mat c = cost_1d(grid(40, -3, 3));
  const OtKernel k = OtKernel::dense(c, 0.02);
  const Mat a = histograms(40, 5, 51, 0.0), b = histograms(40, 5, 52, 0.0);
  const nmfkit::SinkhornResult s =
      nmfkit::sinkhorn_log(k, a, b, 200000, 1e-12, 1);
  REQUIRE(s.status == nmfkit::Status::converged);
  nmfkit::WassersteinParams p;
  p.tol = 1e-8;
  p.max_iter = 5000;
  Mat v;
  nmfkit::DualStats st;
  const Vec cost = nmfkit::ot_lbfgs(k, a, b, v, p, st);
  CHECK(st.status == nmfkit::Status::converged);
  CHECK((cost - s.cost).cwiseAbs().maxCoeff() < 1e-10);
  MESSAGE("sinkhorn " << s.iterations << ", lbfgs " << st.iterations);
}

TEST_CASE("the BLAS fast path and the log-domain path agree") {
  Mat c;
  const OtKernel sep = grid_kernel(7, 5, 0.02, &c);
  const OtKernel den = OtKernel::dense(c, 0.02);
  const Mat x = histograms(35, 6, 61);
  const Mat g = gaussian_matrix(35, 6, 1.0, 62);
  const Mat lx = nmfkit::safe_log(x);
  for (const OtKernel* k : {&sep, &den}) {
    Mat g1(35, 6), g2;
    Vec v1, v2(6);
    nmfkit::semidual(*k, x, lx, g, g1, 1, &v1);
    nmfkit::detail::semidual_log(*k, x, lx, g / 0.02, g2, v2);
    CHECK((v1 - v2).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((g1 - g2).cwiseAbs().maxCoeff() < 1e-12);
  }
}

TEST_CASE("semi-dual and Sinkhorn give the same bits on 1 and 2 threads") {
  // large enough that the column blocks do run in parallel
  const Mat c = cost_1d(grid(400, 0, 1));
  const OtKernel k = OtKernel::dense(c, 0.01);
  REQUIRE(k.work_per_column() * 200 >= 1e7);
  const Mat x = histograms(400, 200, 71, 0.1);
  const Mat g = gaussian_matrix(400, 200, 0.2, 72);
  const Mat lx = nmfkit::safe_log(x);
  Mat g1(400, 200), g2(400, 200);
  const double v1 = nmfkit::semidual(k, x, lx, g, g1, 1);
  const double v2 = nmfkit::semidual(k, x, lx, g, g2, 2);
  CHECK(v1 == v2);
  CHECK(g1 == g2);
  const Mat y = histograms(400, 200, 73, 0.0);
  const nmfkit::SinkhornResult s1 = nmfkit::sinkhorn_log(k, x, y, 30, 0, 1);
  const nmfkit::SinkhornResult s2 = nmfkit::sinkhorn_log(k, x, y, 30, 0, 2);
  CHECK(s1.cost == s2.cost);
  CHECK(s1.g == s2.g);
}

TEST_CASE("symmetric Sinkhorn: fixed point, plan marginals a, zero bins") {
  const Index m = 30, n = 4;
  const Mat c = cost_1d(grid(m, -12, 12));
  const double eps = 0.05;
  const OtKernel k = OtKernel::dense(c, eps);
  const Mat a = histograms(m, n, 81, 0.3);  // about 30% empty bins
  REQUIRE((a.array() == 0).any());
  const nmfkit::SinkhornResult s =
      nmfkit::sinkhorn_symmetric(k, a, 1000, 1e-13, 1);
  REQUIRE(s.status == nmfkit::Status::converged);
  CHECK(s.iterations < 200);
  CHECK(s.f == s.g);
  for (Index j = 0; j < n; ++j) {
    for (Index i = 0; i < m; ++i) {
      if (a(i, j) > 0) {
        CHECK(std::isfinite(s.f(i, j)));
        // fixed point: f_i = eps log a_i - eps LSE_b((f_b - C_ib) / eps)
        double mx = -INFINITY, sum = 0.0;
        for (Index b = 0; b < m; ++b)
          mx = std::max(mx, (s.f(b, j) - c(i, b)) / eps);
        for (Index b = 0; b < m; ++b)
          sum += std::exp((s.f(b, j) - c(i, b)) / eps - mx);
        CHECK(s.f(i, j) ==
              doctest::Approx(eps * (std::log(a(i, j)) - mx - std::log(sum)))
                  .epsilon(1e-11));
      } else {
        CHECK(s.f(i, j) == -INFINITY);
      }
    }
    const Mat p = nmfkit::sinkhorn_plan(k, s, j);
    CHECK(p.allFinite());
    CHECK((p - p.transpose()).cwiseAbs().maxCoeff() < 1e-15);
    CHECK((p.rowwise().sum() - a.col(j)).cwiseAbs().sum() < 1e-12);
    CHECK((p.colwise().sum().transpose() - a.col(j)).cwiseAbs().sum() <
          1e-12);
    // its value is the primal value of the plan
    double v = 0.0;
    for (Index i = 0; i < p.size(); ++i) {
      const double q = p.data()[i];
      if (q > 0) v += q * (c.data()[i] + eps * (std::log(q) - 1.0));
    }
    CHECK(s.cost[j] == doctest::Approx(v).epsilon(1e-11));
  }
  // plain Sinkhorn on (a, a), where it converges, gives the same OT(a, a)
  const nmfkit::SinkhornResult p =
      nmfkit::sinkhorn_log(k, a, a, 200000, 1e-13, 1);
  REQUIRE(p.status == nmfkit::Status::converged);
  CHECK(p.iterations > s.iterations);
  for (Index j = 0; j < n; ++j)
    CHECK(s.cost[j] == doctest::Approx(p.cost[j]).epsilon(1e-11));
}

TEST_CASE("symmetric Sinkhorn: separable and asymmetric costs, threads") {
  Mat dense;
  const OtKernel ks = grid_kernel(6, 5, 0.05, &dense);
  const Mat a = histograms(30, 3, 82, 0.2);
  const nmfkit::SinkhornResult s1 =
      nmfkit::sinkhorn_symmetric(ks, a, 1000, 1e-13, 1);
  const nmfkit::SinkhornResult s2 = nmfkit::sinkhorn_symmetric(
      OtKernel::dense(dense, 0.05), a, 1000, 1e-13, 1);
  REQUIRE(s1.status == nmfkit::Status::converged);
  for (Index j = 0; j < 3; ++j)
    CHECK(s1.cost[j] == doctest::Approx(s2.cost[j]).epsilon(1e-12));
  // an asymmetric cost (potentials not equal): plain Sinkhorn on (a, a)
  Mat c = cost_1d(grid(30, -1, 1));
  c += gaussian_matrix(30, 30, 0.05, 83).cwiseAbs();
  const OtKernel ka = OtKernel::dense(c, 0.1);
  REQUIRE_FALSE(ka.is_symmetric());
  const nmfkit::SinkhornResult sa =
      nmfkit::sinkhorn_symmetric(ka, a, 1000, 1e-13, 1);
  const nmfkit::SinkhornResult pa =
      nmfkit::sinkhorn_log(ka, a, a, 200000, 1e-13, 1);
  REQUIRE(sa.status == nmfkit::Status::converged);
  REQUIRE(pa.status == nmfkit::Status::converged);
  CHECK(sa.cost == pa.cost);
  // 1 and 2 threads give the same bits; the interrupt hook stops it
  const OtKernel kb = OtKernel::dense(cost_1d(grid(400, 0, 1)), 0.01);
  const Mat x = histograms(400, 200, 84, 0.1);
  const nmfkit::SinkhornResult t1 = nmfkit::sinkhorn_symmetric(kb, x, 20, 0, 1);
  const nmfkit::SinkhornResult t2 = nmfkit::sinkhorn_symmetric(kb, x, 20, 0, 2);
  CHECK(t1.cost == t2.cost);
  CHECK(t1.f == t2.f);
  const nmfkit::SinkhornResult ti =
      nmfkit::sinkhorn_symmetric(kb, x, 20, 0, 1, StopAtOnce());
  CHECK(ti.status == nmfkit::Status::interrupted);
  CHECK(ti.iterations == 1);
  CHECK(ti.cost.allFinite());
}
