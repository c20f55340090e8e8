// Tests of the manifold core: k-NN graphs (ties, threads, symmetry), the
// Laplacian identity, Kuhn-Munkres against brute force, the two projections
// (feasible, optimal against random feasible points, bisection reference),
// RMNMF's ALM steps as exact minimisers, G'G = I, and GNMF's monotone
// objective.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "helpers.hpp"

using nmfkit::Index;
using nmfkit::Mat;
using nmfkit::SpMat;
using nmfkit::Vec;

namespace {

// A random point of the simplex (columns of length n).
Vec random_simplex(Index n, std::mt19937& gen) {
  std::exponential_distribution<double> e(1.0);
  Vec v(n);
  for (Index i = 0; i < n; ++i) v[i] = e(gen);
  return v / v.sum();
}

double l1inf(const Mat& a) {
  return a.cwiseAbs().rowwise().maxCoeff().sum();
}

}  // namespace

TEST_CASE("knn: exact neighbours, ties to the lower index, thread-invariant") {
  Mat x = nmfkit_test::runif(3, 200, 1);
  x.col(50) = x.col(10);  // duplicates tie at distance 0
  x.col(60) = x.col(10);
  const nmfkit::Knn a = nmfkit::knn(x, 4, 1, true);
  const nmfkit::Knn b = nmfkit::knn(x, 4, 2, true);
  CHECK(a.idx == b.idx);
  CHECK(a.dist2 == b.dist2);
  CHECK(a.idx(0, 10) == 50);
  CHECK(a.idx(1, 10) == 60);
  CHECK(a.idx(0, 60) == 10);
  CHECK(a.idx(1, 60) == 50);
  // against brute force
  for (Index j = 0; j < 200; j += 17) {
    std::vector<std::pair<double, int>> d;
    for (Index i = 0; i < 200; ++i)
      if (i != j) d.emplace_back((x.col(i) - x.col(j)).squaredNorm(), int(i));
    std::sort(d.begin(), d.end());
    for (int r = 0; r < 4; ++r) {
      CHECK(a.dist2(r, j) == doctest::Approx(d[r].first).epsilon(1e-12));
    }
  }
  const SpMat w = nmfkit::knn_graph(x, 4, nmfkit::GraphWeight::heat, 2);
  const Mat wd = Mat(w);
  CHECK((wd - wd.transpose()).cwiseAbs().maxCoeff() == 0.0);
  CHECK(wd.diagonal().cwiseAbs().maxCoeff() == 0.0);
}

TEST_CASE("laplacian: tr(H L H') is the graph smoothness, L is PSD") {
  const Mat x = nmfkit_test::runif(2, 60, 2);
  const SpMat w = nmfkit::knn_graph(x, 5, nmfkit::GraphWeight::selftune, 1);
  const SpMat l = nmfkit::laplacian(w);
  const Mat h = nmfkit_test::rnorm(3, 60, 3);
  const double tr = (h * l * h.transpose()).trace();
  CHECK(tr == doctest::Approx(nmfkit::graph_smoothness(w, h)).epsilon(1e-12));
  Eigen::SelfAdjointEigenSolver<Mat> es{Mat(l)};
  CHECK(es.eigenvalues().minCoeff() > -1e-10);
}

TEST_CASE("max_assignment: Kuhn-Munkres equals brute force") {
  std::mt19937 gen(4);
  std::uniform_int_distribution<int> u(0, 9);
  for (int rep = 0; rep < 20; ++rep) {
    const int n = 1 + rep % 6;
    Mat p(n, n);
    for (int j = 0; j < n; ++j)
      for (int i = 0; i < n; ++i) p(i, j) = u(gen);
    const std::vector<int> perm = nmfkit::max_assignment(p);
    double got = 0.0;
    for (int i = 0; i < n; ++i) got += p(i, perm[i]);
    std::vector<int> q(n);
    std::iota(q.begin(), q.end(), 0);
    double best = -1.0;
    do {
      double s = 0.0;
      for (int i = 0; i < n; ++i) s += p(i, q[i]);
      best = std::max(best, s);
    } while (std::next_permutation(q.begin(), q.end()));
    CHECK(got == best);
  }
}

TEST_CASE("simplex projection: feasible and no random feasible point is closer") {
  std::mt19937 gen(5);
  Mat v = nmfkit_test::rnorm(12, 30, 6);
  Mat z = v;
  nmfkit::project_simplex_columns(z, 2);
  for (Index j = 0; j < z.cols(); ++j) {
    CHECK(z.col(j).sum() == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(z.col(j).minCoeff() >= 0.0);
    const double dz = (z.col(j) - v.col(j)).squaredNorm();
    for (int t = 0; t < 200; ++t) {
      CHECK(dz <= (random_simplex(12, gen) - v.col(j)).squaredNorm() + 1e-12);
    }
  }
}

TEST_CASE("l1,inf projection: feasible, tight, optimal, matches bisection") {
  std::mt19937 gen(7);
  const Mat a = nmfkit_test::rnorm(15, 20, 8);
  const double tau = 0.3 * l1inf(a);
  const Mat b = nmfkit::project_l1inf(a, tau, 2);
  CHECK(l1inf(b) == doctest::Approx(tau).epsilon(1e-10));
  // feasible-point trials: shrink random matrices into the ball
  const double db = (b - a).squaredNorm();
  for (int t = 0; t < 300; ++t) {
    Mat r = b + 0.05 * nmfkit_test::rnorm(15, 20, 100 + t);
    const double s = l1inf(r);
    if (s > tau) r *= tau / s;
    CHECK(db <= (r - a).squaredNorm() + 1e-12);
  }
  // reference: outer bisection on theta with per-row bisection on mu
  auto row_cap = [&](Index i, double theta) {
    const Vec u = a.row(i).cwiseAbs().transpose();
    if (u.sum() <= theta) return 0.0;
    double lo = 0.0, hi = u.maxCoeff();
    for (int it = 0; it < 200; ++it) {
      const double m = 0.5 * (lo + hi);
      if ((u.array() - m).max(0.0).sum() > theta) lo = m;
      else hi = m;
    }
    return 0.5 * (lo + hi);
  };
  double lo = 0.0, hi = a.cwiseAbs().rowwise().sum().maxCoeff();
  for (int it = 0; it < 200; ++it) {
    const double m = 0.5 * (lo + hi);
    double s = 0.0;
    for (Index i = 0; i < a.rows(); ++i) s += row_cap(i, m);
    if (s > tau) lo = m;
    else hi = m;
  }
  for (Index i = 0; i < a.rows(); ++i) {
    const double mu = row_cap(i, 0.5 * (lo + hi));
    for (Index j = 0; j < a.cols(); ++j) {
      const double ref = std::copysign(std::min(std::abs(a(i, j)), mu), a(i, j));
      CHECK(b(i, j) == doctest::Approx(ref).epsilon(1e-8).scale(1.0));
    }
  }
  // inside the ball: unchanged
  CHECK(nmfkit::project_l1inf(a, 2.0 * l1inf(a), 1) == a);
  // 1 and 2 threads
  CHECK(nmfkit::project_l1inf(a, tau, 1) == b);
}

TEST_CASE("l1,inf projection: lazy row sorts match full sorts") {
  // rows of very different sizes: some inactive (small sums), some with
  // long active prefixes (flat large rows), so partial sorts must grow
  Mat a = nmfkit_test::rnorm(30, 200, 11).cwiseAbs();
  for (Index i = 0; i < 30; ++i) {
    if (i % 3 == 0) a.row(i) *= 1e-3;
    if (i % 5 == 1) a.row(i) = a.row(i).array() * 0.01 + 3.0;
  }
  a(4, 7) = -a(4, 7);
  for (double frac : {0.9, 0.5, 0.1, 0.01}) {
    const double tau = frac * l1inf(a);
    const Mat b = nmfkit::project_l1inf(a, tau, 1);
    CHECK(l1inf(b) == doctest::Approx(tau).epsilon(1e-10));
    CHECK(nmfkit::project_l1inf(a, tau, 2) == b);
    // reference: each row fully sorted, theta by bisection
    auto row_cap = [&](Index i, double theta) {
      std::vector<double> u(static_cast<size_t>(a.cols()));
      for (Index j = 0; j < a.cols(); ++j) u[static_cast<size_t>(j)] =
          std::abs(a(i, j));
      std::sort(u.begin(), u.end(), std::greater<double>());
      double s = 0.0, mu = 0.0;
      for (size_t r = 0; r < u.size(); ++r) {
        s += u[r];
        const double next = r + 1 < u.size() ? u[r + 1] : 0.0;
        if (s - (r + 1) * next >= theta) {
          mu = (s - theta) / static_cast<double>(r + 1);
          break;
        }
      }
      return s <= theta && mu == 0.0 ? 0.0 : std::max(mu, 0.0);
    };
    double lo = 0.0, hi = a.cwiseAbs().rowwise().sum().maxCoeff();
    for (int it = 0; it < 200; ++it) {
      const double m = 0.5 * (lo + hi);
      double t = 0.0;
      for (Index i = 0; i < a.rows(); ++i) t += row_cap(i, m);
      if (t > tau) lo = m;
      else hi = m;
    }
    for (Index i = 0; i < a.rows(); ++i) {
      const double mu = row_cap(i, 0.5 * (lo + hi));
      for (Index j = 0; j < a.cols(); ++j) {
        const double ref =
            std::copysign(std::min(std::abs(a(i, j)), mu), a(i, j));
        CHECK(b(i, j) == doctest::Approx(ref).epsilon(1e-9).scale(1.0));
      }
    }
  }
}

TEST_CASE("RMNMF: each ALM step is an exact minimiser; G'G = I") {
  const Mat x = nmfkit_test::rnorm(4, 40, 9);
  const SpMat w = nmfkit::knn_graph(x, 5, nmfkit::GraphWeight::binary, 1);
  const SpMat lap = nmfkit::laplacian(w);
  const Mat f0 = nmfkit_test::runif(4, 2, 10);
  Mat g0 = nmfkit_test::runif(40, 2, 11);
  nmfkit::detail::AlmState s;
  s.start(x, f0, g0, 0.5);
  s.Gam = nmfkit_test::rnorm(4, 40, 12);
  s.Sig = nmfkit_test::rnorm(40, 2, 13);
  const double lambda = 2.0;
  std::mt19937 gen(14);
  std::normal_distribution<double> z01(0.0, 1.0);
  auto perturb = [&](const Mat& m, double sd) {
    Mat r = m;
    for (Index i = 0; i < r.size(); ++i) r.data()[i] += sd * z01(gen);
    return r;
  };
  // E: ||E||_{2,1} + mu/2 ||E - Q||^2
  const Mat q = x - s.F * s.G.transpose() + s.Gam / s.mu;
  auto fe = [&](const Mat& e) {
    return e.colwise().norm().sum() + 0.5 * s.mu * (e - q).squaredNorm();
  };
  s.update_e(x, 1);
  for (int t = 0; t < 100; ++t) CHECK(fe(s.E) <= fe(perturb(s.E, 0.1)) + 1e-12);
  // F: ||A - F G'||^2
  s.update_f(x, 1);
  auto ff = [&](const Mat& f) { return (s.A - f * s.G.transpose()).squaredNorm(); };
  for (int t = 0; t < 100; ++t) CHECK(ff(s.F) <= ff(perturb(s.F, 0.1)) + 1e-10);
  // H >= 0: lambda tr(G'L H) + mu/2 ||G - H + Sig/mu||^2
  s.update_h(lap, lambda);
  CHECK(s.H.minCoeff() >= 0.0);
  auto fh = [&](const Mat& h) {
    return lambda * (s.G.transpose() * lap * h).trace() +
           0.5 * s.mu * (s.G - h + s.Sig / s.mu).squaredNorm();
  };
  for (int t = 0; t < 100; ++t)
    CHECK(fh(s.H) <= fh(perturb(s.H, 0.1).cwiseMax(0.0)) + 1e-10);
  // G with G'G = I: mu/2 ||A - F G'||^2 + mu/2 ||G - H + Sig/mu||^2
  //                 + lambda tr(G' L H)
  s.update_g(lap, lambda, false, 1);
  CHECK((s.G.transpose() * s.G - Mat::Identity(2, 2)).cwiseAbs().maxCoeff() <
        1e-10);
  auto fg = [&](const Mat& g) {
    return 0.5 * s.mu * (s.A - s.F * g.transpose()).squaredNorm() +
           0.5 * s.mu * (g - s.H + s.Sig / s.mu).squaredNorm() +
           lambda * (g.transpose() * lap * s.H).trace();
  };
  for (int t = 0; t < 100; ++t) {
    const Mat r = perturb(s.G, 0.2);
    Eigen::HouseholderQR<Mat> qr(r);
    const Mat qm = qr.householderQ() * Mat::Identity(40, 2);
    CHECK(fg(s.G) <= fg(qm) + 1e-10);
  }
}

TEST_CASE("RMNMF and GNMF fits: orthonormal G, monotone GNMF objective") {
  const Mat x = nmfkit_test::runif(3, 80, 15);
  const SpMat w = nmfkit::knn_graph(x, 5, nmfkit::GraphWeight::heat, 1);
  nmfkit::NullHooks hooks;
  nmfkit::AlmParams ap;
  ap.max_iter = 300;
  const nmfkit::ManifoldResult r = nmfkit::rmnmf(
      x, w, nmfkit_test::runif(3, 2, 16), nmfkit_test::runif(80, 2, 17), ap,
      hooks);
  CHECK((r.G.transpose() * r.G - Mat::Identity(2, 2)).cwiseAbs().maxCoeff() <
        1e-10);
  CHECK(r.residual.back() < 1e-3);
  nmfkit::GnmfParams gp;
  gp.lambda = 5.0;
  gp.max_iter = 200;
  const nmfkit::DenseData data(x);
  const nmfkit::ManifoldResult g = nmfkit::gnmf(
      data, w, nmfkit_test::runif(3, 2, 18), nmfkit_test::runif(2, 80, 19), gp,
      hooks);
  for (size_t i = 1; i < g.loss.size(); ++i)
    CHECK(g.loss[i] <= g.loss[i - 1] * (1 + 1e-12));
  nmfkit_test::StopAfter stop{3};
  const nmfkit::ManifoldResult gi = nmfkit::gnmf(
      data, w, nmfkit_test::runif(3, 2, 18), nmfkit_test::runif(2, 80, 19), gp,
      stop);
  CHECK(gi.status == nmfkit::Status::interrupted);
  CHECK(gi.iterations == 3);
}

TEST_CASE("SMRMF family: Z columns on the simplex, exemplars, 1 == 2 threads") {
  const Mat x = nmfkit_test::runif(2, 60, 20);
  nmfkit::NullHooks hooks;
  for (auto kind : {nmfkit::SmrmfKind::smrmf, nmfkit::SmrmfKind::fast,
                    nmfkit::SmrmfKind::ns}) {
    nmfkit::SmrmfParams p;
    p.kind = kind;
    p.neighbours = 6;
    p.exemplars = 6;
    p.alm.max_iter = 40;
    p.ds3_max_iter = 200;
    p.keep_z = true;
    const nmfkit::ManifoldResult a = nmfkit::smrmf(
        x, nmfkit_test::runif(2, 2, 21), nmfkit_test::runif(60, 2, 22), p,
        hooks);
    p.alm.threads = 2;
    const nmfkit::ManifoldResult b = nmfkit::smrmf(
        x, nmfkit_test::runif(2, 2, 21), nmfkit_test::runif(60, 2, 22), p,
        hooks);
    CHECK(a.G == b.G);
    CHECK(a.exemplars.size() == 6);
    for (Index j = 0; j < a.Z.cols(); ++j)
      CHECK(a.Z.col(j).sum() == doctest::Approx(1.0).epsilon(1e-10));
    CHECK(a.Z.minCoeff() >= 0.0);
    const Mat wd = Mat(a.graph);
    CHECK((wd - wd.transpose()).cwiseAbs().maxCoeff() < 1e-15);
  }
}

TEST_CASE("SMRMF nbr options: edges are exemplars' input neighbours") {
  const Mat x = nmfkit_test::runif(3, 50, 23);
  nmfkit::NullHooks hooks;
  const int k = 4, s = 5;
  const nmfkit::Knn nb = nmfkit::knn(x, k, 1);
  const Mat dt = nmfkit::detail::kernel_dissimilarity(
      x, k, nmfkit::ZKernel::selftune, 1);
  for (auto nbr : {nmfkit::ZNeighbours::knn, nmfkit::ZNeighbours::knn_kernel}) {
    nmfkit::SmrmfParams p;
    p.neighbours = k;
    p.exemplars = s;
    p.nbr = nbr;
    p.alm.max_iter = 20;
    p.ds3_max_iter = 100;
    p.keep_z = true;
    p.connect = false;  // the paper's graph, which this case rebuilds
    const nmfkit::ManifoldResult r = nmfkit::smrmf(
        x, nmfkit_test::runif(3, 2, 24), nmfkit_test::runif(50, 2, 25), p,
        hooks);
    // the affinity rebuilt from its definition: W~_ij for exemplar i and
    // its input neighbour j, W = (W~ + W~') / 2
    Mat want = Mat::Zero(50, 50);
    for (int i : r.exemplars)
      for (int q = 0; q < k; ++q) {
        const int j = nb.idx(q, i);
        const double w = nbr == nmfkit::ZNeighbours::knn ? r.Z(i, j)
                                                          : 1.0 - dt(i, j) / 2;
        want(i, j) += w / 2;
        want(j, i) += w / 2;
      }
    CHECK((Mat(r.graph) - want).cwiseAbs().maxCoeff() < 1e-14);
    CHECK(r.graph.nonZeros() > 0);
  }
}

TEST_CASE("SMRMF rank_on: exemplars are the rows of Z or of C by norm") {
  const Mat x = nmfkit_test::runif(2, 60, 26);
  nmfkit::NullHooks hooks;
  for (bool on_c : {false, true}) {
    nmfkit::SmrmfParams p;
    p.neighbours = 6;
    p.exemplars = 6;
    p.rank_on_c = on_c;
    p.alm.max_iter = 15;
    p.ds3_max_iter = 100;
    p.keep_z = true;
    const nmfkit::ManifoldResult r = nmfkit::smrmf(
        x, nmfkit_test::runif(2, 2, 27), nmfkit_test::runif(60, 2, 28), p,
        hooks);
    const Mat& m = on_c ? r.C : r.Z;
    const std::vector<int> ranked = nmfkit::detail::rank_rows(m, false);
    CHECK(std::equal(r.exemplars.begin(), r.exemplars.end(), ranked.begin()));
    // every exemplar's row outranks every other row
    const double last = m.row(r.exemplars.back()).norm();
    for (Index i = 0; i < 60; ++i)
      if (std::find(r.exemplars.begin(), r.exemplars.end(), i) ==
          r.exemplars.end())
        CHECK(m.row(i).norm() <= last);
  }
}

namespace {
// connected components of a symmetric sparse graph (union-find)
int graph_components(const SpMat& g) {
  std::vector<int> parent(static_cast<size_t>(g.cols()));
  std::iota(parent.begin(), parent.end(), 0);
  auto find = [&](int a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  int comps = static_cast<int>(g.cols());
  for (Index j = 0; j < g.cols(); ++j)
    for (SpMat::InnerIterator e(g, j); e; ++e) {
      const int a = find(static_cast<int>(e.row()));
      const int b = find(static_cast<int>(j));
      if (a != b) {
        parent[std::max(a, b)] = std::min(a, b);
        --comps;
      }
    }
  return comps;
}
}  // namespace

TEST_CASE("connect_components joins a graph's pieces to the target count") {
  // four groups of three points on a line, far apart; within each group
  // one edge, so the third point is isolated: 8 components in all
  Mat x(1, 12);
  for (int g = 0; g < 4; ++g)
    for (int i = 0; i < 3; ++i) x(0, 3 * g + i) = 100.0 * g + i;
  std::vector<Eigen::Triplet<double>> t;
  for (int g = 0; g < 4; ++g) {
    t.emplace_back(3 * g, 3 * g + 1, 0.5);
    t.emplace_back(3 * g + 1, 3 * g, 0.5);
  }
  SpMat w(12, 12);
  w.setFromTriplets(t.begin(), t.end());
  REQUIRE(graph_components(w) == 8);
  const Mat d2 = nmfkit::squared_distances(x);
  const auto tree = nmfkit::spanning_tree(d2);
  REQUIRE(tree.size() == 11u);
  for (int target : {4, 2, 1}) {
    const SpMat c = nmfkit::connect_components(w, d2, tree, target);
    CHECK(graph_components(c) == target);
    // symmetric, the original edges kept, no self loops
    CHECK((Mat(c) - Mat(c).transpose()).cwiseAbs().maxCoeff() == 0.0);
    for (int g = 0; g < 4; ++g) CHECK(c.coeff(3 * g, 3 * g + 1) >= 0.5);
    CHECK(Mat(c).diagonal().cwiseAbs().maxCoeff() == 0.0);
    // at 4 components the groups are the components: no long edge added
    if (target == 4)
      for (int j = 0; j < 12; ++j)
        for (SpMat::InnerIterator e(c, j); e; ++e)
          CHECK(e.row() / 3 == j / 3);
  }
}
