// Tests of ARD-NMF (ard.hpp): the MAP objective never rises, dense and
// sparse storage and 1 and 2 threads give the same bits, components beyond
// the planted rank fall to the relevance floor, and c X with the prior's
// scales taken relative to the data runs the same iterations.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "helpers.hpp"
#include <nmfkit/ard.hpp>

using nmfkit::ArdParams;
using nmfkit::ArdPrior;
using nmfkit::ArdResult;
using nmfkit::CountData;
using nmfkit::Index;
using nmfkit::Mat;
using nmfkit_test::runif;

namespace {

CountData data_of(const Mat& x, bool sparse, int threads = 1) {
  if (sparse) {
    const nmfkit::SpMat s = x.sparseView();
    return nmfkit::count_data(nmfkit::SparseData<nmfkit::SpMat>(s), nullptr,
                              threads);
  }
  return nmfkit::count_data(nmfkit::DenseData(x), nullptr, threads);
}

ArdResult ard(const Mat& x, const Mat& w, const Mat& h, const ArdParams& p,
              bool sparse = false) {
  nmfkit::NullHooks hooks;
  return nmfkit::nmf_ard(data_of(x, sparse, p.threads), w, h, p, hooks);
}

// Planted rank-r data with a sparse H (a third of its entries zero), plus
// uniform noise of relative size `noise`.
Mat planted(Index m, Index n, Index r, double noise, unsigned seed) {
  Mat h = runif(r, n, seed + 1);
  const Mat keep = runif(r, n, seed + 2);
  h = (keep.array() < 0.33).select(0.0, h);
  return runif(m, r, seed) * h + noise * runif(m, n, seed + 3);
}

// The prior's scales relative to the data as the R layer sets them.
ArdParams params(const Mat& x, double beta, ArdPrior prior, Index k,
                 double phi) {
  ArdParams p;
  p.beta = beta;
  p.prior = prior;
  p.a = 5.0;
  const double mean = x.mean();
  p.b = prior == ArdPrior::l1
            ? std::sqrt((p.a - 1.0) * (p.a - 2.0) * mean / k)
            : 0.5 * M_PI * (p.a - 1.0) * mean / k;
  p.phi = phi;
  p.max_iter = 300;
  p.tol = 0.0;
  return p;
}

Index active(const ArdResult& r, double rel = 1e-3) {
  const double top = r.lambda.maxCoeff() - r.floor;
  Index a = 0;
  for (Index t = 0; t < r.lambda.size(); ++t)
    if (r.lambda[t] - r.floor > rel * top) ++a;
  return a;
}

}  // namespace

TEST_CASE("ARD: the MAP objective never rises, for every beta and prior") {
  const Mat x = planted(30, 25, 3, 0.1, 11);
  const Index k = 6;
  for (double beta : {2.0, 1.5, 1.0, 0.5, 0.0}) {
    for (ArdPrior prior : {ArdPrior::l1, ArdPrior::l2}) {
      ArdParams p = params(x, beta, prior, k, 0.05);
      p.max_iter = 150;
      const ArdResult r = ard(x, runif(30, k, 3), runif(k, 25, 4), p);
      REQUIRE(r.iterations == 150);
      for (size_t i = 1; i < r.loss.size(); ++i)
        CHECK(r.loss[i] <= r.loss[i - 1] + 1e-10 * std::abs(r.loss[i - 1]));
      CHECK(r.lambda.minCoeff() >= r.floor);
    }
  }
}

TEST_CASE("ARD: dense and sparse storage, 1 and 2 threads: the same bits") {
  Mat x = planted(40, 35, 3, 0.0, 21);
  x = (x.array() < 0.4).select(0.0, x);  // many zeros
  const Mat w0 = runif(40, 5, 5), h0 = runif(5, 35, 6);
  for (double beta : {2.0, 1.0, 1.5}) {
    ArdParams p = params(x, beta, ArdPrior::l1, 5, 0.01);
    p.max_iter = 40;
    const ArdResult d = ard(x, w0, h0, p, false);
    const ArdResult s = ard(x, w0, h0, p, true);
    p.threads = 2;
    const ArdResult t = ard(x, w0, h0, p, true);
    CHECK((d.W.array() == s.W.array()).all());
    CHECK((d.H.array() == s.H.array()).all());
    CHECK((s.W.array() == t.W.array()).all());
    CHECK((s.H.array() == t.H.array()).all());
    CHECK(d.loss == t.loss);
  }
}

TEST_CASE("ARD: components beyond the planted rank fall to the floor") {
  // Poisson counts of a planted rank-r mean under KL, at the Poisson
  // dispersion phi = 1, from a random start at 10 components
  for (Index r : {2, 4}) {
    Mat mu = planted(60, 50, r, 0.0, 31 + static_cast<unsigned>(r));
    mu *= 20.0 / mu.mean();
    std::mt19937 gen(7);
    Mat x(60, 50);
    for (Index j = 0; j < 50; ++j)
      for (Index i = 0; i < 60; ++i)
        x(i, j) = std::poisson_distribution<int>(mu(i, j))(gen);
    ArdParams p = params(x, 1.0, ArdPrior::l1, 10, 1.0);
    p.a = std::log(110.0);
    p.b = std::sqrt((p.a - 1.0) * (p.a - 2.0) * x.mean() / 10.0);
    p.max_iter = 5000;
    p.tol = 1e-6;
    const double s = std::sqrt(x.mean() / 10.0);
    const ArdResult f = ard(x, s * runif(60, 10, 7), s * runif(10, 50, 8), p);
    CHECK(active(f) == r);
  }
}

TEST_CASE("ARD: c X with the prior relative to the data runs the same iterations") {
  const Mat x = planted(30, 20, 3, 0.05, 41);
  for (double beta : {2.0, 1.0, 0.5}) {
    for (ArdPrior prior : {ArdPrior::l1, ArdPrior::l2}) {
      const double c = 1000.0;
      ArdParams p = params(x, beta, prior, 5, 0.01);
      p.tol = 1e-6;
      p.max_iter = 500;
      ArdParams q = params(c * x, beta, prior, 5, 0.01 * std::pow(c, beta));
      q.tol = p.tol;
      q.max_iter = p.max_iter;
      const Mat w0 = runif(30, 5, 9), h0 = runif(5, 20, 10);
      const ArdResult a = ard(x, w0, h0, p);
      const ArdResult b = ard(c * x, std::sqrt(c) * w0, std::sqrt(c) * h0, q);
      CHECK(a.iterations == b.iterations);
      CHECK((b.W / std::sqrt(c) - a.W).cwiseAbs().maxCoeff() <=
            1e-8 * a.W.cwiseAbs().maxCoeff());
    }
  }
}
