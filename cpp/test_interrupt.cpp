// Every long loop of the core asks its host between chunks of work and
// stops when the host says so (Ctrl-C from R): NNLS prediction, the
// stratified prediction, the randomized SVD behind NNDSVD and both Chamfer
// distances. A host that never interrupts changes no bit of the result.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <vector>
#include <nmfkit.hpp>

#include "helpers.hpp"

using nmfkit::Mat;
using nmfkit_test::rnorm;
using nmfkit_test::runif;
using nmfkit_test::StopAfter;

namespace {
constexpr int kNever = 1 << 30;
}

TEST_CASE("chunked loops ask the host between groups and stop at once") {
  for (int threads : {1, 2}) {
    std::vector<int> ran(64, 0);
    auto mark = [&](nmfkit::Index b, nmfkit::Index) {
      ran[static_cast<size_t>(b / nmfkit::detail::chunk_length(10000))] = 1;
    };
    StopAfter never{kNever};
    const bool all =
        nmfkit::Parallel(threads).for_chunks(10000, &never, mark, 1e9);
    CHECK(all);
    CHECK(std::count(ran.begin(), ran.end(), 1) == 64);
    CHECK(never.checks > 1);
    CHECK(never.checks <= nmfkit::detail::kInterruptGroups);
    std::fill(ran.begin(), ran.end(), 0);
    StopAfter stop{2};
    const bool some =
        nmfkit::Parallel(threads).for_chunks(10000, &stop, mark, 1e9);
    CHECK_FALSE(some);
    CHECK(stop.checks == 2);
    const auto run = std::count(ran.begin(), ran.end(), 1);
    CHECK(run > 0);
    CHECK(run < 64);
  }
}

TEST_CASE("NNLS prediction stops on the host's word, else is unchanged") {
  const Mat w = runif(40, 5, 1);
  const Mat x = runif(40, 3000, 2);
  const Mat g = w.transpose() * w;
  const Mat b = w.transpose() * x;
  Mat z0 = Mat::Zero(5, 3000);
  const int passes = nmfkit::nnls_cd(z0, g, b, 1e-10, 500, 1);
  CHECK(passes > 1);
  StopAfter never{kNever};
  Mat z1 = Mat::Zero(5, 3000);
  CHECK(nmfkit::nnls_cd(z1, g, b, 1e-10, 500, 2, never) == passes);
  CHECK(z1 == z0);
  CHECK(never.checks >= passes);
  StopAfter stop{3};
  Mat z2 = Mat::Zero(5, 3000);
  CHECK(nmfkit::nnls_cd(z2, g, b, 1e-10, 500, 1, stop) == -1);
  CHECK(stop.checks == 3);
}

TEST_CASE("the data products and the stratified prediction stop early") {
  const Mat x = runif(30, 2000, 3);
  const nmfkit::DenseData dense(x);
  const nmfkit::SpMat xs = x.sparseView();
  const nmfkit::SparseData<nmfkit::SpMat> sparse(xs);
  const Mat a = runif(4, 30, 4);
  Mat b0, b1;
  dense.left_mult(a, b0, 1);
  StopAfter never{kNever};
  CHECK(sparse.left_mult(a, b1, 2, &never));
  CHECK((b1 - b0).cwiseAbs().maxCoeff() < 1e-12);
  StopAfter stop{1};
  CHECK_FALSE(dense.left_mult_t(runif(4, 2000, 5), b1, 1, &stop));
  StopAfter stop2{1};
  CHECK_FALSE(sparse.left_mult(a, b1, 1, &stop2));

  const Mat w = runif(30, 3, 6);
  const Mat v = runif(30, 2, 7);
  std::vector<int> group(2000);
  for (size_t j = 0; j < group.size(); ++j) group[j] = static_cast<int>(j % 2);
  const Mat h0 = nmfkit::stratified_coef(dense, group, w, v, 1e-8, 200, 1);
  StopAfter never2{kNever};
  const Mat h1 =
      nmfkit::stratified_coef(dense, group, w, v, 1e-8, 200, 1, never2);
  CHECK(h1 == h0);
  StopAfter stop3{4};
  nmfkit::stratified_coef(dense, group, w, v, 1e-8, 200, 1, stop3);
  CHECK(stop3.checks == 4);
  CHECK(never2.checks > 4);
}

TEST_CASE("the randomized SVD behind NNDSVD stops early") {
  const Mat x = runif(60, 500, 8);
  const nmfkit::DenseData d(x);
  const Mat omega = rnorm(500, 8, 9);
  const nmfkit::Svd s0 = nmfkit::rsvd(d, omega, 4, 5, 1);
  StopAfter never{kNever};
  const nmfkit::Svd s1 = nmfkit::rsvd(d, omega, 4, 5, 1, false, never);
  CHECK(s1.u == s0.u);
  CHECK(s1.d == s0.d);
  StopAfter stop{5};
  const nmfkit::Svd s2 = nmfkit::rsvd(d, omega, 4, 5, 1, false, stop);
  CHECK(s2.u.cols() == 0);
  CHECK(stop.checks == 5);
  CHECK(never.checks > 5);
}

TEST_CASE("both Chamfer distances stop early and say so with NaN") {
  const Mat x = runif(50, 700, 10);
  const Mat y = runif(50, 600, 11);
  const double r0 = nmfkit::chamfer_rows(x, y, 1);
  const double c0 = nmfkit::chamfer_columns(x, y, 1);
  StopAfter never{kNever};
  CHECK(nmfkit::chamfer_rows(x, y, 2, never) == r0);
  CHECK(nmfkit::chamfer_columns(x, y, 1, 512, never) == c0);
  StopAfter stop{2};
  CHECK(std::isnan(nmfkit::chamfer_rows(x, y, 1, stop)));
  CHECK(stop.checks == 2);
  StopAfter stop2{2};
  CHECK(std::isnan(nmfkit::chamfer_columns(x, y, 1, 256, stop2)));
  CHECK(stop2.checks == 2);
}
