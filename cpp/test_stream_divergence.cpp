// Tests of the streamed divergence fit (stream_divergence.hpp): under "mu"
// it is the in-memory fit up to the order of its sums; under KL "cd" it
// reaches the in-memory fit's optimum; any block layout, dense or sparse
// blocks and any thread count give the same bits.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "helpers.hpp"

using nmfkit::Method;
using nmfkit::NmfParams;
using nmfkit::Index;
using nmfkit::Mat;
using nmfkit_test::runif;

namespace {

// nmf()'s settings for KL by coordinate descent (the divergence engine's
// test default).
NmfParams kl_params() {
  NmfParams p;
  p.beta = 1.0;
  p.method = Method::cd;
  return p;
}

Mat counts(Index m, Index n, Index k, unsigned seed) {
  const Mat mu = 3.0 * runif(m, k, seed) * runif(k, n, seed + 1);
  return (mu.array() - 0.5).max(0.0).floor().matrix();
}

double rel_diff(const Mat& a, const Mat& b) {
  return (a - b).norm() / b.norm();
}

nmfkit::DivResult streamed(const Mat& x, const Mat& w, const Mat& h,
                           const NmfParams& p, Index block, bool sparse) {
  const nmfkit::SpMat xs = x.sparseView();
  auto with_block = [&](Index j0, Index len, auto&& fn) {
    if (sparse) {
      nmfkit::SpMat b = xs.middleCols(j0, len);
      b.makeCompressed();
      fn(nmfkit::SparseData<nmfkit::SpMat>(b, 1, false));
    } else {
      const Mat b = x.middleCols(j0, len);
      fn(nmfkit::DenseData(b));
    }
  };
  nmfkit::BlockSource<decltype(with_block)> src(
      x.rows(), x.cols(), x.squaredNorm(), static_cast<double>(x.size()),
      block, with_block, p.threads);
  nmfkit::NullHooks hooks;
  return nmfkit::nmf_divergence_streamed(src, w, h, p, hooks);
}

nmfkit::DivResult in_memory(const Mat& x, const Mat& w, const Mat& h,
                            const NmfParams& p) {
  nmfkit::NullHooks hooks;
  const nmfkit::CountData c =
      nmfkit::count_data(nmfkit::DenseData(x), nullptr, 1);
  return nmfkit::nmf_divergence(c, w, h, p, hooks);
}

}  // namespace

TEST_CASE("a streamed mu fit is the in-memory mu fit, for every beta") {
  const Mat x = counts(50, 600, 4, 3) + Mat::Constant(50, 600, 0.25);
  const Mat w = runif(50, 4, 7, 0.5, 1.5), h = runif(4, 600, 8, 0.5, 1.5);
  for (double beta : {1.0, 0.5, 0.0, 1.5}) {
    for (bool extrapolate : {false, true}) {
      NmfParams p = kl_params();
      p.beta = beta;
      p.method = Method::mu;
      p.max_iter = 40;
      p.tol = 1e-6;
      p.extrapolate = extrapolate;
      const nmfkit::DivResult a = in_memory(x, w, h, p);
      for (Index block : {64, 600}) {
        for (bool sparse : {false, true}) {
          const nmfkit::DivResult b = streamed(x, w, h, p, block, sparse);
          CAPTURE(beta);
          CAPTURE(extrapolate);
          CAPTURE(block);
          CHECK(b.iterations == a.iterations);
          CHECK(rel_diff(b.W, a.W) < 1e-9);
          CHECK(rel_diff(b.H, a.H) < 1e-9);
          CHECK(std::abs(b.baseline / a.baseline - 1) < 1e-12);
          CHECK(std::abs(b.divergence / a.divergence - 1) < 1e-10);
        }
      }
    }
  }
}

TEST_CASE("streamed KL cd reaches the in-memory optimum") {
  // planted Poisson counts (about a fifth zero) of a well-separated basis
  Mat mu = 4.0 * runif(40, 3, 21) * runif(3, 500, 22);
  std::mt19937 gen(23);
  Mat x(40, 500);
  for (Index j = 0; j < 500; ++j)
    for (Index i = 0; i < 40; ++i)
      x(i, j) = std::poisson_distribution<int>(mu(i, j))(gen);
  const Mat w = runif(40, 3, 5, 0.5, 1.5), h = runif(3, 500, 6, 0.5, 1.5);
  NmfParams p = kl_params();
  p.method = Method::cd;
  // (the relative violation of either fit stalls above 1e-8 at this
  // optimum, so both run a fixed number of iterations)
  p.max_iter = 3000;
  p.tol = 0;
  p.extrapolate = true;
  const nmfkit::DivResult a = in_memory(x, w, h, p);
  const nmfkit::DivResult b = streamed(x, w, h, p, 64, true);
  CAPTURE(a.iterations);
  CAPTURE(b.iterations);
  CHECK(std::abs(b.divergence / a.divergence - 1) < 1e-8);
  // and the zeros of W that coordinate descent finds
  CHECK((b.W.array() == 0).count() == (a.W.array() == 0).count());
}

TEST_CASE("streamed divergence fits: dense = sparse blocks, 1 = 2 threads") {
  const Mat x = counts(30, 400, 3, 31);
  const Mat w = runif(30, 3, 9, 0.5, 1.5), h = runif(3, 400, 10, 0.5, 1.5);
  for (double beta : {1.0, 0.5}) {
    NmfParams p = kl_params();
    p.beta = beta;
    p.method = beta == 1.0 ? Method::cd : Method::mu;
    p.max_iter = 30;
    p.extrapolate = true;
    p.pen_h = {0.01, 0.01};
    p.fixed_w = 1;
    const nmfkit::DivResult a = streamed(x, w, h, p, 64, false);
    const nmfkit::DivResult b = streamed(x, w, h, p, 64, true);
    p.threads = 2;
    const nmfkit::DivResult c = streamed(x, w, h, p, 64, true);
    CHECK(a.W == b.W);
    CHECK(a.H == b.H);
    CHECK(b.W == c.W);
    CHECK(b.H == c.H);
    CHECK(a.loss == c.loss);
    CHECK(a.W.col(0) == w.col(0));
  }
}
