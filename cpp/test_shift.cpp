// Tests of the permutation-NMF core: FFT correlation, SinglePermNNLS, the W
// gradient and its Lipschitz constant, monotone steps, thread invariance.
#include <doctest/doctest.h>

#include <nmfkit/shift.hpp>
#include <random>

using nmfkit::Fft;
using nmfkit::FftWork;
using nmfkit::IMat;
using nmfkit::Index;
using nmfkit::Mat;
using nmfkit::ShiftGroup;
using nmfkit::ShiftParams;
using nmfkit::ShiftSolver;
using nmfkit::Vec;

namespace {

Mat uniform(Index r, Index c, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  Mat m(r, c);
  for (Index j = 0; j < c; ++j)
    for (Index i = 0; i < r; ++i) m(i, j) = u(gen);
  return m;
}

IMat shifts(Index k, Index m, Index n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_int_distribution<int> u(0, int(n) - 1);
  IMat g(k, m);
  for (Index j = 0; j < m; ++j)
    for (Index t = 0; t < k; ++t) g(t, j) = u(gen);
  return g;
}

Vec shifted(Index r, Index s, ShiftGroup grp, const Vec& w, Index g) {
  Vec out = Vec::Zero(w.size());
  nmfkit::detail::add_shifted_real(r, s, grp, w.data(), g, 1.0, out.data());
  return out;
}

// Images with two small blobs at random torus positions, plus noise.
Mat blob_images(Index r, Index s, Index m, unsigned seed) {
  Mat a = 0.1 * uniform(r * s, m, seed);
  Vec blob1 = Vec::Zero(r * s), blob2 = Vec::Zero(r * s);
  for (Index i = 0; i < 3; ++i)
    for (Index j = 0; j < 3; ++j) blob1[i + r * j] = 1.0;
  for (Index i = 0; i < 4; ++i) blob2[i + r * (i % 2)] = 1.0;
  const IMat g = shifts(2, m, r * s, seed + 1);
  for (Index j = 0; j < m; ++j) {
    a.col(j) += shifted(r, s, ShiftGroup::torus2d, blob1, g(0, j));
    a.col(j) += shifted(r, s, ShiftGroup::torus2d, blob2, g(1, j));
  }
  return a;
}

struct Counting {
  int checks = 0;
  int stop_at = -1;
  bool check_interrupt() { return ++checks == stop_at; }
  void progress(int, double) {}
};

}  // namespace

TEST_CASE("shift: S_{(a,b)} moves pixel (0,0) to (a,b) and inverts") {
  const Index r = 9, s = 13, n = r * s;
  Vec e = Vec::Zero(n);
  e[0] = 1.0;
  const Index g = 3 + r * 7;
  const Vec moved = shifted(r, s, ShiftGroup::torus2d, e, g);
  CHECK(moved[3 + r * 7] == 1.0);
  CHECK(moved.sum() == 1.0);
  const Vec w = uniform(n, 1, 5).col(0);
  for (ShiftGroup grp : {ShiftGroup::torus2d, ShiftGroup::circular1d}) {
    const Index gi = nmfkit::detail::inverse_shift(r, s, grp, g);
    const Vec back = shifted(r, s, grp, shifted(r, s, grp, w, g), gi);
    CHECK((back - w).norm() == 0.0);
  }
  // circular1d: the linear index moves by g, wrapping into the next column
  const Vec one = shifted(r, s, ShiftGroup::circular1d, e, r - 1 + 1);
  CHECK(one[r] == 1.0);
}

TEST_CASE("shift: the Fourier shift theorem matches real-space shifts") {
  for (ShiftGroup grp : {ShiftGroup::torus2d, ShiftGroup::circular1d}) {
    const Index r = 8, s = 5, n = r * s;
    const Fft fft(r, s, grp);
    FftWork work = fft.make_work();
    const Vec w = uniform(n, 1, 9).col(0);
    const Index g = 6 + r * 3;
    std::vector<nmfkit::Cplx> w_hat(size_t(fft.nc())), sw_hat(w_hat.size()),
        acc(w_hat.size(), 0.0);
    fft.forward_copy(w.data(), work, w_hat.data());
    const Vec sw = shifted(r, s, grp, w, g);
    fft.forward_copy(sw.data(), work, sw_hat.data());
    fft.add_shifted(w_hat.data(), g, 1.0, acc.data());
    double err = 0.0;
    for (size_t i = 0; i < acc.size(); ++i)
      err = std::max(err, std::abs(acc[i] - sw_hat[i]));
    CHECK(err < 1e-12);
  }
}

TEST_CASE("shift: SinglePermNNLS returns (2.5, (3, 7)) on the spec case") {
  for (auto dims : {std::pair<Index, Index>{20, 20}, {9, 13}, {12, 8}}) {
    const Index r = dims.first, s = dims.second, n = r * s;
    Mat w = uniform(n, 1, 3);
    w = (w.array() < 0.5).select(0.0, w);  // sparse, nonnegative
    const Index g = 3 + r * 7;
    const Vec v = 2.5 * shifted(r, s, ShiftGroup::torus2d, w.col(0), g);
    const Fft fft(r, s, ShiftGroup::torus2d);
    FftWork work = fft.make_work();
    std::vector<nmfkit::Cplx> v_hat(size_t(fft.nc())), w_hat(v_hat.size());
    fft.forward_copy(v.data(), work, v_hat.data());
    fft.forward_copy(w.data(), work, w_hat.data());
    const nmfkit::PermTerm p = nmfkit::single_perm_nnls(
        fft, v_hat.data(), w_hat.data(), w.squaredNorm(), work, 0);
    CHECK(p.g == g);
    CHECK(p.g % r == 3);
    CHECK(p.g / r == 7);
    CHECK(p.rho == doctest::Approx(2.5).epsilon(1e-12));
    // the correlation equals <v, S_g w> for every g
    fft.correlate(v_hat.data(), w_hat.data(), work);
    for (Index h : {Index(0), Index(17), n - 1}) {
      const double direct =
          v.dot(shifted(r, s, ShiftGroup::torus2d, w.col(0), h));
      CHECK(work.real[h] == doctest::Approx(direct).epsilon(1e-10));
    }
    // all correlations <= 0 (or a zero atom): rho = 0, previous shift kept
    const Vec zero = Vec::Zero(n);
    const nmfkit::PermTerm q = nmfkit::single_perm_nnls(
        fft, v_hat.data(), w_hat.data(), 0.0, work, 11);
    CHECK(q.rho == 0.0);
    CHECK(q.g == 11);
    (void)zero;
  }
}

TEST_CASE("shift: the analytic W gradient matches finite differences") {
  const Index r = 6, s = 5, n = r * s, m = 4, k = 2;
  for (ShiftGroup grp : {ShiftGroup::torus2d, ShiftGroup::circular1d}) {
    const Mat a = uniform(n, m, 21);
    ShiftParams p;
    p.group = grp;
    ShiftSolver solver(a, r, s, p);
    const Mat w = uniform(n, k, 22), rho = 2.0 * uniform(k, m, 23);
    const IMat g = shifts(k, m, n, 24);
    solver.set_state(w, rho, g);
    const Mat grad = solver.gradient();
    const double h = 1e-6;
    for (Index t = 0; t < k; ++t) {
      for (Index q : {Index(0), Index(7), n - 1}) {
        Mat wp = w, wm = w;
        wp(q, t) += h;
        wm(q, t) -= h;
        solver.set_state(wp, rho, g);
        const double fp = solver.sq_error();
        solver.set_state(wm, rho, g);
        const double fm = solver.sq_error();
        CHECK(grad(q, t) == doctest::Approx((fp - fm) / (2 * h)).epsilon(1e-6));
      }
    }
  }
}

TEST_CASE("shift: L = 2 lambda_max(R^T R) is the Hessian's largest eigenvalue") {
  const Index r = 5, s = 4, n = r * s, m = 6, k = 3;
  const Mat a = uniform(n, m, 31);
  ShiftParams p;
  ShiftSolver solver(a, r, s, p);
  const Mat rho = 3.0 * uniform(k, m, 32);
  const IMat g = shifts(k, m, n, 33);
  solver.set_state(uniform(n, k, 34), rho, g);
  const double lip = solver.lipschitz();
  // Hessian-vector product: 2 sum_j rho_jt S^-1 (sum_u rho_ju S v_u)
  auto hess = [&](const Mat& v) {
    Mat out = Mat::Zero(n, k);
    for (Index j = 0; j < m; ++j) {
      Vec y = Vec::Zero(n);
      for (Index u = 0; u < k; ++u)
        y += rho(u, j) * shifted(r, s, ShiftGroup::torus2d, v.col(u), g(u, j));
      for (Index t = 0; t < k; ++t) {
        const Index gi =
            nmfkit::detail::inverse_shift(r, s, ShiftGroup::torus2d, g(t, j));
        out.col(t) += 2.0 * rho(t, j) *
                      shifted(r, s, ShiftGroup::torus2d, y, gi);
      }
    }
    return out;
  };
  Mat v = uniform(n, k, 35);
  double lambda = 0.0;
  for (int it = 0; it < 5000; ++it) {
    v /= v.norm();
    const Mat hv = hess(v);
    lambda = v.cwiseProduct(hv).sum();
    v = hv;
  }
  CHECK(lambda == doctest::Approx(lip).epsilon(1e-8));
  // and the dense Hessian agrees
  Mat dense(n * k, n * k);
  for (Index c = 0; c < n * k; ++c) {
    Mat e = Mat::Zero(n, k);
    e(c % n, c / n) = 1.0;
    dense.col(c) = Eigen::Map<const Vec>(hess(e).data(), n * k);
  }
  Eigen::SelfAdjointEigenSolver<Mat> es(dense, Eigen::EigenvaluesOnly);
  CHECK(es.eigenvalues().maxCoeff() == doctest::Approx(lip).epsilon(1e-10));
  CHECK(lip < 2.0 * rho.squaredNorm());
}

TEST_CASE("shift: the objective never increases over H and W steps") {
  for (ShiftGroup grp : {ShiftGroup::torus2d, ShiftGroup::circular1d}) {
    for (nmfkit::WStep ws : {nmfkit::WStep::hals, nmfkit::WStep::pg}) {
      const Index r = 12, s = 10, n = r * s, m = 8, k = 2;
      const Mat a = blob_images(r, s, m, 41);
      ShiftParams p;
      p.group = grp;
      p.w_step = ws;
      ShiftSolver solver(a, r, s, p);
      solver.set_state(uniform(n, k, 42), uniform(k, m, 43),
                       shifts(k, m, n, 44));
      nmfkit::NullHooks hooks;
      double f = solver.sq_error();
      for (int it = 0; it < 15; ++it) {
        REQUIRE(solver.h_step(hooks));
        const double fh = solver.sq_error();
        CHECK(fh <= f * (1 + 1e-12) + 1e-14);
        solver.w_step();
        const double fw = solver.sq_error();
        CHECK(fw <= fh * (1 + 1e-12) + 1e-14);
        solver.normalise();
        f = solver.sq_error();
        CHECK(f == doctest::Approx(fw).epsilon(1e-12));
      }
      // residual kept current: equals A minus the reconstruction
      std::vector<int> img, atom, gg;
      std::vector<double> coef;
      for (Index j = 0; j < m; ++j)
        for (Index t = 0; t < k; ++t) {
          img.push_back(int(j));
          atom.push_back(int(t));
          coef.push_back(solver.rho()(t, j));
          gg.push_back(solver.G()(t, j));
        }
      const Mat rec = nmfkit::shift_reconstruct(solver.W(), r, s, grp, img,
                                                atom, coef, gg, m);
      CHECK((a - rec - solver.residual()).norm() < 1e-10);
    }
  }
}

TEST_CASE("shift: 1 and 2 threads give the same bits; restarts keep the best") {
  const Index r = 10, s = 10, n = r * s, m = 40, k = 2;
  const Mat a = blob_images(r, s, m, 51);
  std::vector<nmfkit::ShiftStart> starts;
  for (unsigned i = 0; i < 3; ++i)
    starts.push_back({uniform(n, k, 60 + i), uniform(k, m, 70 + i),
                      shifts(k, m, n, 80 + i)});
  ShiftParams p;
  p.max_iter = 12;
  nmfkit::NullHooks hooks;
  const nmfkit::ShiftResult r1 = nmfkit::nmf_shift(a, r, s, starts, p, hooks);
  p.threads = 2;
  const nmfkit::ShiftResult r2 = nmfkit::nmf_shift(a, r, s, starts, p, hooks);
  CHECK(r1.W == r2.W);
  CHECK(r1.H == r2.H);
  CHECK(r1.G == r2.G);
  CHECK(r1.loss == r2.loss);
  REQUIRE(r1.restart_loss.size() == 3);
  const double best =
      *std::min_element(r1.restart_loss.begin(), r1.restart_loss.end());
  CHECK(r1.loss.back() == best);
  CHECK(r1.restart_loss[size_t(r1.best)] == best);
  for (size_t i = 1; i < r1.loss.size(); ++i)
    CHECK(r1.loss[i] <= r1.loss[i - 1] + 1e-12);
}

TEST_CASE("shift: an interrupt stops the fit with a consistent state") {
  const Index r = 8, s = 8, n = r * s, m = 10, k = 2;
  const Mat a = blob_images(r, s, m, 61);
  std::vector<nmfkit::ShiftStart> starts{
      {uniform(n, k, 62), uniform(k, m, 63), shifts(k, m, n, 64)},
      {uniform(n, k, 65), uniform(k, m, 66), shifts(k, m, n, 67)}};
  ShiftParams p;
  p.tol = 0.0;
  Counting hooks;
  hooks.stop_at = 3;
  const nmfkit::ShiftResult res = nmfkit::nmf_shift(a, r, s, starts, p, hooks);
  CHECK(res.status == nmfkit::Status::interrupted);
  CHECK(res.restart_loss.size() == 1);
  CHECK(res.iterations <= 2);
  CHECK((res.H.array() >= 0).all());
  CHECK((res.G.array() >= 0).all());
  CHECK((res.G.array() < n).all());
}

TEST_CASE("shift: projection recovers planted coefficients and shifts") {
  const Index r = 16, s = 12, n = r * s, m = 5;
  Mat w = Mat::Zero(n, 2);
  for (Index i = 0; i < 3; ++i)
    for (Index j = 0; j < 3; ++j) w(i + r * j, 0) = 1.0 / 3.0;
  for (Index i = 0; i < 5; ++i) w(i + r * 5, 1) = 1.0 / std::sqrt(5.0);
  const IMat g = shifts(2, m, n, 71);
  const Mat rho = 1.0 + uniform(2, m, 72).array();
  Mat a = Mat::Zero(n, m);
  for (Index j = 0; j < m; ++j)
    for (Index t = 0; t < 2; ++t)
      a.col(j) += rho(t, j) * shifted(r, s, ShiftGroup::torus2d, w.col(t),
                                      g(t, j));
  ShiftParams p;
  nmfkit::NullHooks hooks;
  const nmfkit::ShiftResult res = nmfkit::shift_project(a, r, s, w, p, hooks);
  // exact unless the two objects overlap in an image
  CHECK(res.loss[0] < 0.3);
  int exact = 0;
  for (Index j = 0; j < m; ++j)
    exact += res.G.col(j) == g.col(j) &&
             (res.H.col(j) - rho.col(j)).norm() < 1e-10;
  CHECK(exact >= m - 1);
}
