// Tests of the streamed NMF (stream.hpp): a fit read in column blocks is the
// in-memory fit, up to the order of its sums.
#include <doctest/doctest.h>

#include <cmath>

#include "helpers.hpp"

using nmfkit::Index;
using nmfkit::Mat;
using nmfkit_test::runif;

namespace {

struct Problem {
  Mat x, w, h;
};
// noisy low-rank data with some zeros, and a start
Problem problem(Index m, Index n, Index k, unsigned seed) {
  Problem p;
  Mat w0 = runif(m, k, seed), h0 = runif(k, n, seed + 1);
  w0 = (w0.array() < 0.4).select(0.0, w0);
  p.x = w0 * h0 + 0.05 * runif(m, n, seed + 2);
  p.x = (p.x.array() < 0.15).select(0.0, p.x);
  p.w = runif(m, k, seed + 3);
  p.h = runif(k, n, seed + 4);
  return p;
}

double rel_diff(const Mat& a, const Mat& b) {
  return (a - b).norm() / b.norm();
}

// The streamed fit of x in blocks of `block` columns, dense or sparse.
nmfkit::NmfResult streamed(const Mat& x, const Mat& w, const Mat& h,
                           const nmfkit::NmfParams& p, Index block,
                           bool sparse) {
  const nmfkit::SpMat xs = x.sparseView();
  auto with_block = [&](Index j0, Index len, auto&& fn) {
    if (sparse) {
      nmfkit::SpMat b = xs.middleCols(j0, len);
      b.makeCompressed();
      // as the R glue: a block without its transposed copy
      fn(nmfkit::SparseData<nmfkit::SpMat>(b, 1, false));
    } else {
      const Mat b = x.middleCols(j0, len);
      fn(nmfkit::DenseData(b));
    }
  };
  nmfkit::BlockSource<decltype(with_block)> src(
      x.rows(), x.cols(), x.squaredNorm(),
      sparse ? static_cast<double>(xs.nonZeros())
             : static_cast<double>(x.size()),
      block, with_block, p.threads);
  nmfkit::NullHooks hooks;
  return nmfkit::nmf_streamed(src, w, h, p, hooks);
}

nmfkit::NmfResult in_memory(const Mat& x, const Mat& w, const Mat& h,
                            const nmfkit::NmfParams& p, bool sparse) {
  nmfkit::NullHooks hooks;
  if (sparse) {
    const nmfkit::SpMat xs = x.sparseView();
    return nmfkit::nmf(nmfkit::SparseData<nmfkit::SpMat>(xs), w, h, p, hooks);
  }
  return nmfkit::nmf(nmfkit::DenseData(x), w, h, p, hooks);
}

}  // namespace

TEST_CASE("a streamed fit is the in-memory fit, for every method and block") {
  // n = 2000: H's chunks are 32 columns; blocks of 64 and 320 columns and
  // a last partial block
  const Problem pr = problem(60, 2000, 5, 11);
  for (auto method : {nmfkit::Method::hals, nmfkit::Method::anls,
                      nmfkit::Method::mu}) {
    for (bool extrapolate : {false, true}) {
      for (bool sparse : {false, true}) {
        nmfkit::NmfParams p;
        p.method = method;
        p.max_iter = 40;
        p.tol = 1e-6;
        p.extrapolate = extrapolate;
        if (method == nmfkit::Method::hals)
          p.passes = nmfkit::InnerPasses::automatic;
        const auto ref = in_memory(pr.x, pr.w, pr.h, p, sparse);
        for (Index block : {Index(64), Index(320), Index(2000)}) {
          CAPTURE(static_cast<int>(method));
          CAPTURE(extrapolate);
          CAPTURE(sparse);
          CAPTURE(block);
          const auto s = streamed(pr.x, pr.w, pr.h, p, block, sparse);
          CHECK(s.iterations == ref.iterations);
          CHECK(s.status == ref.status);
          CHECK(rel_diff(s.W, ref.W) < 1e-10);
          CHECK(rel_diff(s.H, ref.H) < 1e-10);
          REQUIRE(s.loss.size() == ref.loss.size());
          CHECK(std::abs(s.loss.back() - ref.loss.back()) <
                1e-10 * ref.loss.back());
          CHECK(std::abs(s.objective - ref.objective) <
                1e-10 * ref.objective);
        }
      }
    }
  }
}

TEST_CASE("a streamed fit with penalties and fixed components is nmf()'s") {
  const Problem pr = problem(50, 700, 4, 21);
  nmfkit::NmfParams p;
  p.max_iter = 30;
  p.pen_w = {0.01, 0.02};
  p.pen_h = {0.02, 0.0};
  p.fixed_w = 1;
  p.fixed_h = 1;
  const auto ref = in_memory(pr.x, pr.w, pr.h, p, true);
  const auto s = streamed(pr.x, pr.w, pr.h, p, 48, true);  // chunks of 16
  CHECK(s.iterations == ref.iterations);
  CHECK(rel_diff(s.W, ref.W) < 1e-10);
  CHECK(rel_diff(s.H, ref.H) < 1e-10);
  CHECK(s.W.col(0) == pr.w.col(0));  // fixed: bit for bit
  CHECK(s.H.row(0) == pr.h.row(0));
}

TEST_CASE("a streamed fit gives the same bits on 1 and 2 threads") {
  const Problem pr = problem(80, 1500, 6, 31);
  nmfkit::NmfParams p;
  p.max_iter = 25;
  p.passes = nmfkit::InnerPasses::automatic;
  const auto one = streamed(pr.x, pr.w, pr.h, p, 96, true);
  p.threads = 2;
  const auto two = streamed(pr.x, pr.w, pr.h, p, 96, true);
  CHECK(one.W == two.W);
  CHECK(one.H == two.H);
  CHECK(one.loss == two.loss);
}

TEST_CASE("an interrupted pass stops the streamed fit") {
  const Problem pr = problem(30, 200, 3, 41);
  struct Stop {
    int passes = 0;
    Index rows() const { return 30; }
    Index cols() const { return 200; }
    double sq_norm() const { return 1.0; }
    double stored() const { return 6000.0; }
    bool pass(const nmfkit::StreamPlan&, Mat&, const Mat*, Mat*,
              nmfkit::BlockSums& s) {
      s.bw = Mat::Zero(3, 30);
      s.hht = Mat::Identity(3, 3);
      return ++passes < 3;
    }
  } src;
  nmfkit::NmfParams p;
  nmfkit::NullHooks hooks;
  const auto r = nmfkit::nmf_streamed(src, pr.w, pr.h, p, hooks);
  CHECK(r.status == nmfkit::Status::interrupted);
  CHECK(src.passes == 3);
  CHECK(r.iterations == 1);
}

TEST_CASE("online NMF: passes lower the error, the last entry is exact") {
  const Problem pr = problem(60, 2000, 5, 51);
  const nmfkit::SpMat xs = pr.x.sparseView();
  auto with_block = [&](Index j0, Index len, auto&& fn) {
    nmfkit::SpMat b = xs.middleCols(j0, len);
    b.makeCompressed();
    fn(nmfkit::SparseData<nmfkit::SpMat>(b));
  };
  auto run = [&](int threads, int passes) {
    nmfkit::BlockSource<decltype(with_block)> src(
        pr.x.rows(), pr.x.cols(), pr.x.squaredNorm(),
        static_cast<double>(xs.nonZeros()), 128, with_block, threads);
    nmfkit::OnlineParams op;
    op.base.max_iter = passes;
    op.base.tol = 0.0;
    op.base.threads = threads;
    op.base.passes = nmfkit::InnerPasses::automatic;
    nmfkit::NullHooks hooks;
    return nmfkit::nmf_online(src, pr.w, pr.h, op, hooks);
  };
  const auto r = run(1, 12);
  REQUIRE(r.loss.size() == 13);  // 12 passes and the exact last entry
  CHECK(r.iterations == 12);
  CHECK(r.loss[11] < r.loss[0]);
  const double exact =
      std::sqrt((pr.x - r.W * r.H).squaredNorm() / pr.x.squaredNorm());
  CHECK(std::abs(r.loss.back() - exact) < 1e-8 * exact);
  // below the batch fit's error after 20 iterations, within 10 % of its
  // error at convergence
  nmfkit::NmfParams p;
  p.max_iter = 20;
  p.tol = 0.0;
  p.passes = nmfkit::InnerPasses::automatic;
  nmfkit::NullHooks hooks;
  const nmfkit::SparseData<nmfkit::SpMat> data(xs);
  const auto batch20 = nmfkit::nmf(data, pr.w, pr.h, p, hooks);
  p.max_iter = 1000;
  p.tol = 1e-8;
  const auto batch = nmfkit::nmf(data, pr.w, pr.h, p, hooks);
  CHECK(r.loss.back() < batch20.loss.back());
  CHECK(r.loss.back() < 1.1 * batch.loss.back());
  const auto two = run(2, 12);
  CHECK(two.W == r.W);
  CHECK(two.H == r.H);
}

TEST_CASE("A X^T of sparse data without its transpose: the same product") {
  const Problem pr = problem(70, 300, 4, 61);
  const nmfkit::SpMat xs = pr.x.sparseView();
  const nmfkit::SparseData<nmfkit::SpMat> with(xs), without(xs, 1, false);
  Mat b1, b2, b3;
  with.left_mult_t(pr.h, b1, 1);
  without.left_mult_t(pr.h, b2, 1);
  without.left_mult_t(pr.h, b3, 2);
  CHECK((b1 - b2).norm() < 1e-13 * b1.norm());
  CHECK(b2 == b3);
}
