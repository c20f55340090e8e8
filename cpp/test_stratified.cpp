// Tests of the stratified NMF core: the updates against a literal transcript
// of the reference code (samples as rows), monotone loss under both orders,
// dense == sparse, 1 == 2 threads, zero-locking and bad input.
#include <doctest/doctest.h>

#include <cmath>
#include <random>
#include <vector>

#include "helpers.hpp"

using nmfkit::Mat;
using nmfkit::SpMat;
using nmfkit::Vec;

namespace {

struct Problem {
  Mat x;                   // features x samples, strata interleaved
  std::vector<int> group;  // stratum of each column
  Mat w, h, v;             // starting factors
};

// Planted model X_i = v_i 1' + W H_i with strata interleaved over the
// columns, some entries zeroed (so the sparse path has real zeros).
Problem make_problem(unsigned seed, int n = 30, int s = 3, int per = 12,
                     int k = 3, double drop = 0.0) {
  using nmfkit_test::runif;
  std::mt19937 gen(seed);
  Problem p;
  const int cols = s * per;
  p.group.resize(cols);
  for (int j = 0; j < cols; ++j) p.group[j] = (j * 7 + j / 5) % s;
  const Mat wt = runif(n, k, 10 * seed + 1);
  const Mat ht = runif(k, cols, 10 * seed + 2);
  const Mat vt = runif(n, s, 10 * seed + 3);
  p.x = wt * ht;
  for (int j = 0; j < cols; ++j)
    p.x.col(j) += (p.group[j] + 1.0) * vt.col(p.group[j]);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < n; ++i)
      if (u(gen) < drop) p.x(i, j) = 0.0;
  p.v = runif(n, s, 10 * seed + 4);
  p.h = runif(k, cols, 10 * seed + 5) / std::sqrt(double(k));
  p.w = runif(n, k, 10 * seed + 6) / std::sqrt(double(k));
  return p;
}

double direct_loss(const Problem& p, const nmfkit::StratifiedResult& r) {
  Mat res = p.x - r.W * r.H;
  for (nmfkit::Index j = 0; j < p.x.cols(); ++j)
    res.col(j) -= r.V.col(p.group[j]);
  return res.norm();
}

// One iteration of the reference code, literally, in its orientation:
// A_i = X_i' (m_i x n), Wp_i = H_i' (m_i x r), Hp = W' (r x n), Vp = V'.
void reference_step(const Problem& p, Mat& w, Mat& h, Mat& v, int m_updates,
                    bool jacobi, double tol = 1e-9) {
  const int s = static_cast<int>(v.cols());
  std::vector<Mat> a(s), wp(s);
  std::vector<std::vector<int>> idx(s);
  for (int j = 0; j < static_cast<int>(p.group.size()); ++j)
    idx[p.group[j]].push_back(j);
  for (int i = 0; i < s; ++i) {
    const int mi = static_cast<int>(idx[i].size());
    a[i].resize(mi, p.x.rows());
    wp[i].resize(mi, h.rows());
    for (int q = 0; q < mi; ++q) {
      a[i].row(q) = p.x.col(idx[i][q]).transpose();
      wp[i].row(q) = h.col(idx[i][q]).transpose();
    }
  }
  Mat hp = w.transpose();
  Mat vp = v.transpose();  // s x n
  for (int rep = 0; rep < m_updates; ++rep) {
    for (int i = 0; i < s; ++i) {
      const Vec colsum = a[i].colwise().sum().transpose();
      const double mi = static_cast<double>(a[i].rows());
      const Vec wsum = wp[i].colwise().sum().transpose();
      const Vec den = mi * vp.row(i).transpose() + hp.transpose() * wsum;
      for (int c = 0; c < vp.cols(); ++c)
        vp(i, c) = vp(i, c) * colsum[c] / (den[c] + tol);
    }
  }
  std::vector<Mat> wp_new(s);
  for (int i = 0; i < s; ++i) {
    const Mat num = a[i] * hp.transpose();
    Mat den = wp[i] * (hp * hp.transpose());
    den.rowwise() += (hp * vp.row(i).transpose()).transpose();
    wp_new[i] = wp[i].array() * num.array() / (den.array() + tol);
  }
  if (!jacobi) wp = wp_new;
  Mat num = Mat::Zero(hp.rows(), hp.cols()), den = num;
  for (int i = 0; i < s; ++i) {
    num += wp[i].transpose() * a[i];
    den += wp[i].colwise().sum().transpose() * vp.row(i);
    den += wp[i].transpose() * wp[i] * hp;
  }
  hp = hp.array() * num.array() / (den.array() + tol);
  w = hp.transpose();
  v = vp.transpose();
  for (int i = 0; i < s; ++i)
    for (int q = 0; q < static_cast<int>(idx[i].size()); ++q)
      h.col(idx[i][q]) = wp_new[i].row(q).transpose();
}

nmfkit::StratifiedResult fit(const Problem& p, int iters,
                             nmfkit::UpdateOrder order, int threads = 1,
                             bool sparse = false) {
  nmfkit::StratifiedParams par;
  par.order = order;
  par.max_iter = iters;
  par.threads = threads;
  nmfkit::NullHooks hooks;
  if (sparse) {
    SpMat xs = p.x.sparseView();
    const nmfkit::SparseData<SpMat> data(xs);
    return nmfkit::nmf_stratified(data, p.group, p.w, p.h, p.v, par, hooks);
  }
  const nmfkit::DenseData data(p.x);
  return nmfkit::nmf_stratified(data, p.group, p.w, p.h, p.v, par, hooks);
}

}  // namespace

TEST_CASE("stratified: one iteration equals the reference code's") {
  // on data of root mean square 1, where the core's relative guard
  // (eps times rms powers) is the code's absolute 1e-9
  Problem p = make_problem(1);
  const double rms = std::sqrt(p.x.squaredNorm() / double(p.x.size()));
  p.x /= rms;
  p.w /= std::sqrt(rms);
  p.h /= std::sqrt(rms);
  p.v /= rms;
  for (bool jacobi : {false, true}) {
    CAPTURE(jacobi);
    Mat w = p.w, h = p.h, v = p.v;
    reference_step(p, w, h, v, 2, jacobi);
    reference_step(p, w, h, v, 2, jacobi);
    const auto r = fit(p, 2,
                       jacobi ? nmfkit::UpdateOrder::jacobi
                              : nmfkit::UpdateOrder::gauss_seidel);
    CHECK((r.W - w).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((r.H - h).cwiseAbs().maxCoeff() < 1e-12);
    CHECK((r.V - v).cwiseAbs().maxCoeff() < 1e-12);
  }
}

TEST_CASE("stratified: loss is the direct residual norm, non-increasing") {
  const Problem p = make_problem(2);
  for (auto order :
       {nmfkit::UpdateOrder::gauss_seidel, nmfkit::UpdateOrder::jacobi}) {
    const auto r = fit(p, 400, order);
    REQUIRE(r.loss.size() == 400u);
    CHECK(r.status == nmfkit::Status::max_iter);
    CHECK(r.loss.back() == doctest::Approx(direct_loss(p, r)).epsilon(1e-9));
    double prev = r.initial_loss;
    int increases = 0;
    for (double l : r.loss) {
      if (l > prev * (1 + 1e-12)) ++increases;
      prev = l;
    }
    CHECK(increases == 0);
    CHECK(r.loss.back() < 0.05 * r.initial_loss);
    const double xn = p.x.norm();
    CHECK(r.normalized_loss.back() ==
          doctest::Approx(r.loss.back() / xn).epsilon(1e-14));
    CHECK((r.W.array() >= 0).all());
    CHECK((r.H.array() >= 0).all());
    CHECK((r.V.array() >= 0).all());
  }
}

TEST_CASE("stratified: dense and sparse data give the same fit") {
  const Problem p = make_problem(3, 40, 4, 10, 3, 0.4);
  for (auto order :
       {nmfkit::UpdateOrder::gauss_seidel, nmfkit::UpdateOrder::jacobi}) {
    const auto d = fit(p, 50, order, 1, false);
    const auto s = fit(p, 50, order, 1, true);
    CHECK((d.W - s.W).cwiseAbs().maxCoeff() < 1e-10);
    CHECK((d.H - s.H).cwiseAbs().maxCoeff() < 1e-10);
    CHECK((d.V - s.V).cwiseAbs().maxCoeff() < 1e-10);
    CHECK(d.loss.back() == doctest::Approx(s.loss.back()).epsilon(1e-10));
  }
}

TEST_CASE("stratified: 1 and 2 threads give identical bits") {
  // enough rows, columns and rank for several chunks and for the products
  // to pass the Parallel policy's work threshold
  const Problem p = make_problem(4, 500, 4, 250, 8, 0.3);
  for (bool sparse : {false, true}) {
    const auto a = fit(p, 20, nmfkit::UpdateOrder::gauss_seidel, 1, sparse);
    const auto b = fit(p, 20, nmfkit::UpdateOrder::gauss_seidel, 2, sparse);
    CHECK(a.W == b.W);
    CHECK(a.H == b.H);
    CHECK(a.V == b.V);
    CHECK(a.loss == b.loss);
  }
}

TEST_CASE("stratified: a shift entry with zero row sum stays zero") {
  Problem p = make_problem(5);
  for (nmfkit::Index j = 0; j < p.x.cols(); ++j)
    if (p.group[j] == 1) p.x(0, j) = 0.0;
  const auto r = fit(p, 30, nmfkit::UpdateOrder::gauss_seidel);
  CHECK(r.V(0, 1) == 0.0);
  CHECK(r.V(0, 0) > 0.0);
}

TEST_CASE("stratified: tol stops on a stalled loss; interrupts stop") {
  const Problem p = make_problem(6);
  nmfkit::StratifiedParams par;
  par.max_iter = 5000;
  par.tol = 1e-3;
  const nmfkit::DenseData data(p.x);
  nmfkit::NullHooks none;
  const auto r =
      nmfkit::nmf_stratified(data, p.group, p.w, p.h, p.v, par, none);
  CHECK(r.status == nmfkit::Status::converged);
  CHECK(r.iterations < 5000);

  nmfkit_test::StopAfter stop{3};
  par.tol = 0.0;
  const auto q =
      nmfkit::nmf_stratified(data, p.group, p.w, p.h, p.v, par, stop);
  CHECK(q.status == nmfkit::Status::interrupted);
  CHECK(q.iterations == 3);
  CHECK(stop.progress_calls == 3);
}

TEST_CASE("stratified: bad input throws invalid_argument") {
  const Problem p = make_problem(7);
  const nmfkit::DenseData data(p.x);
  nmfkit::StratifiedParams par;
  nmfkit::NullHooks hooks;
  std::vector<int> g = p.group;
  g[0] = 5;  // out of range
  CHECK_THROWS_AS(nmfkit::nmf_stratified(data, g, p.w, p.h, p.v, par, hooks),
                  std::invalid_argument);
  g = p.group;
  for (int& gi : g)
    if (gi == 2) gi = 0;  // stratum 3 empty
  CHECK_THROWS_AS(nmfkit::nmf_stratified(data, g, p.w, p.h, p.v, par, hooks),
                  std::invalid_argument);
  g.pop_back();
  CHECK_THROWS_AS(
      nmfkit::nmf_stratified(data, g, p.w, p.h, p.v, par, hooks),
      std::invalid_argument);
  CHECK_THROWS_AS(nmfkit::nmf_stratified(data, p.group, p.w, p.h,
                                         Mat(p.v.leftCols(2)), par, hooks),
                  std::invalid_argument);
}

TEST_CASE("stratified: an overflowing update returns the last finite iterate") {
  Problem p = make_problem(7);
  p.x *= 1e300;  // the products overflow in the first iteration
  const nmfkit::StratifiedResult r =
      fit(p, 5, nmfkit::UpdateOrder::gauss_seidel);
  CHECK(r.status == nmfkit::Status::numerical_error);
  CHECK(r.W.allFinite());
  CHECK(r.H.allFinite());
  CHECK(r.V.allFinite());
  CHECK(static_cast<int>(r.loss.size()) == r.iterations);
}

TEST_CASE("stratified: scaling the data scales the fit (relative eps)") {
  const Problem p = make_problem(8);
  Problem q = p;
  const double c = 1e-12;  // an absolute 1e-9 guard would dominate here
  q.x *= c;
  q.w *= std::sqrt(c);
  q.h *= std::sqrt(c);
  q.v *= c;
  const auto a = fit(p, 30, nmfkit::UpdateOrder::gauss_seidel);
  const auto b = fit(q, 30, nmfkit::UpdateOrder::gauss_seidel);
  CHECK((b.W / std::sqrt(c) - a.W).norm() < 1e-8 * a.W.norm());
  CHECK((b.V / c - a.V).norm() < 1e-8 * a.V.norm());
  CHECK(b.loss.back() / c == doctest::Approx(a.loss.back()).epsilon(1e-10));
}

namespace {

nmfkit::StratifiedResult fit_hals(const Problem& p, int iters,
                                  int threads = 1, double tol = 0.0) {
  nmfkit::StratifiedParams par;
  par.rule = nmfkit::StratifiedRule::hals;
  par.max_iter = iters;
  par.threads = threads;
  par.tol = tol;
  nmfkit::NullHooks hooks;
  const nmfkit::DenseData data(p.x);
  return nmfkit::nmf_stratified(data, p.group, p.w, p.h, p.v, par, hooks);
}

}  // namespace

TEST_CASE("stratified hals: non-increasing, the direct loss, nonnegative") {
  const Problem p = make_problem(5);
  const auto a = fit_hals(p, 200);
  REQUIRE(a.loss.size() == 200);
  for (size_t i = 1; i < a.loss.size(); ++i)
    CHECK(a.loss[i] <= a.loss[i - 1] * (1.0 + 1e-12));
  CHECK(direct_loss(p, a) == doctest::Approx(a.loss.back()).epsilon(1e-8));
  CHECK((a.W.array() >= 0).all());
  CHECK((a.H.array() >= 0).all());
  CHECK((a.V.array() >= 0).all());
  CHECK(a.loss.back() < a.initial_loss);
}

TEST_CASE("stratified hals: 1 == 2 threads, scale equivariant") {
  const Problem big = make_problem(4, 500, 4, 250, 8, 0.3);
  const auto a = fit_hals(big, 10, 1);
  const auto b = fit_hals(big, 10, 2);
  CHECK(a.W == b.W);
  CHECK(a.H == b.H);
  CHECK(a.V == b.V);
  CHECK(a.loss == b.loss);

  const Problem p = make_problem(8);
  Problem q = p;
  const double c = 1e-12;
  q.x *= c;
  q.w *= std::sqrt(c);
  q.h *= std::sqrt(c);
  q.v *= c;
  const auto u = fit_hals(p, 500, 1, 1e-6);
  const auto v = fit_hals(q, 500, 1, 1e-6);
  CHECK(u.iterations == v.iterations);
  CHECK(u.status == v.status);
  CHECK((v.W / std::sqrt(c) - u.W).norm() < 1e-8 * u.W.norm());
  CHECK((v.V / c - u.V).norm() < 1e-8 * u.V.norm());
}
