// Tests of the exact Poisson NNLS (poisson_nnls.hpp): KKT conditions on
// nearly collinear bases, bitwise scale equivariance, threads, stored zeros.
#include <doctest/doctest.h>

#include <cmath>
#include <nmfkit/poisson_nnls.hpp>

#include "helpers.hpp"

using nmfkit::Index;
using nmfkit::Mat;
using nmfkit::SpMat;
using nmfkit::Vec;
using nmfkit_test::runif;

namespace {

// A basis of k columns summing to 1, the later ones mixtures of the first
// three (nearly collinear), and counts from three of them, sparse.
struct Problem {
  Mat w;
  SpMat x;
};
Problem make_problem(Index m, Index k, Index n, unsigned seed) {
  Problem p;
  Mat base = runif(m, k, seed);
  for (Index c = 3; c < k; ++c)
    base.col(c) = 0.7 * base.col(c % 3) + 0.3 * base.col(c);
  for (Index c = 0; c < k; ++c) base.col(c) /= base.col(c).sum();
  p.w = base;
  const Mat h = runif(3, n, seed + 1) * 500.0;
  Mat mean = p.w.leftCols(3) * h;
  // counts: the mean rounded down, zero below 1 (many zeros)
  for (Index i = 0; i < mean.size(); ++i)
    mean.data()[i] = std::floor(mean.data()[i] * ((i % 5) == 0 ? 0.0 : 1.0));
  p.x = mean.sparseView();
  return p;
}

Mat start(const Problem& p) {
  Mat h(p.w.cols(), p.x.cols());
  for (Index j = 0; j < p.x.cols(); ++j)
    h.col(j).setConstant(Mat(p.x).col(j).sum() / p.w.sum());
  return h;
}

// Largest |projected gradient| of KL(x | W h) over h, per unit of W's
// column sums (which are 1): scale-free.
double kkt_error(const Problem& p, const Mat& h) {
  const Mat xd = p.x;
  const Mat mu = p.w * h;
  double worst = 0.0;
  for (Index j = 0; j < h.cols(); ++j) {
    Vec r(xd.rows());
    for (Index i = 0; i < xd.rows(); ++i)
      r[i] = xd(i, j) > 0 ? xd(i, j) / mu(i, j) : 0.0;
    const Vec g = Vec::Ones(h.rows()) - p.w.transpose() * r;
    for (Index c = 0; c < h.rows(); ++c) {
      const double pg = h(c, j) > 0 ? g[c] : std::min(g[c], 0.0);
      worst = std::max(worst, std::abs(pg));
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("poisson_nnls meets the KKT conditions on collinear bases") {
  const Problem p = make_problem(96, 12, 40, 7);
  Mat h = start(p);
  nmfkit::poisson_nnls(p.x, p.w, h, 1e-12, 200, 1);
  CHECK((h.array() >= 0.0).all());
  CHECK(kkt_error(p, h) < 1e-6);
}

TEST_CASE("poisson_nnls is scale-equivariant, thread- and zero-invariant") {
  const Problem p = make_problem(60, 8, 33, 11);
  Mat h1 = start(p);
  nmfkit::poisson_nnls(p.x, p.w, h1, 1e-12, 200, 1);
  Problem q = p;
  q.x *= std::ldexp(1.0, -40);
  Mat hq = start(q);
  nmfkit::poisson_nnls(q.x, q.w, hq, 1e-12, 200, 1);
  CHECK((hq * std::ldexp(1.0, 40) - h1).cwiseAbs().maxCoeff() == 0.0);
  Mat h2 = start(p);
  nmfkit::poisson_nnls(p.x, p.w, h2, 1e-12, 200, 2);
  CHECK((h2 - h1).cwiseAbs().maxCoeff() == 0.0);
  // stored zeros change nothing
  SpMat z = p.x;
  for (Index c = 0; c < z.outerSize(); ++c)
    for (SpMat::InnerIterator it(z, c); it; ++it)
      if (it.row() % 7 == 0) it.valueRef() = 0.0;
  SpMat dropped = z;
  dropped.prune(0.0, 0.0);
  Mat hz = start(p), hd = start(p);
  nmfkit::poisson_nnls(z, p.w, hz, 1e-12, 200, 1);
  nmfkit::poisson_nnls(dropped, p.w, hd, 1e-12, 200, 1);
  CHECK((hz - hd).cwiseAbs().maxCoeff() == 0.0);
}
