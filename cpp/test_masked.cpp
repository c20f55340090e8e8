// Tests of masked and weighted NMF (masked.hpp).
#include <doctest/doctest.h>

#include <vector>

#include "helpers.hpp"

using nmfkit::Index;
using nmfkit::Mat;
using nmfkit_test::runif;

namespace {

// Entry weights of x with every entry at (i, i % n) missing, x set to 0 there.
nmfkit::EntryWeights diagonal_mask(Mat& x) {
  std::vector<Index> i, j;
  std::vector<double> d, v;
  for (Index r = 0; r < x.rows(); ++r) {
    const Index c = r % x.cols();
    x(r, c) = 0.0;
    i.push_back(r);
    j.push_back(c);
    d.push_back(-1.0);
    v.push_back(0.0);
  }
  return nmfkit::entry_weights(x.rows(), x.cols(), 1.0, i, j, d, v);
}

// A masked fit of x from (w, h) with the checks every masked solver must
// pass: the masked loss never rises, masked_sq_error() matches its
// definition (the entries (r, r % n) left out), 2 threads give the same bits.
nmfkit::Result checked_masked_fit(const Mat& x, const nmfkit::EntryWeights& a,
                                  const Mat& w, const Mat& h,
                                  nmfkit::NmfParams p) {
  nmfkit::NullHooks hooks;
  const nmfkit::DenseData data(x);
  const nmfkit::Result r1 = nmfkit::nmf_masked(data, a, w, h, p, hooks);
  for (size_t t = 1; t < r1.loss.size(); ++t)
    CHECK(r1.loss[t] <= r1.loss[t - 1] * (1 + 1e-12));
  Mat res = x - r1.W * r1.H;
  for (Index r = 0; r < x.rows(); ++r) res(r, r % x.cols()) = 0.0;
  CHECK(nmfkit::masked_sq_error(data, a, r1.W, r1.H) ==
        doctest::Approx(res.squaredNorm()).epsilon(1e-9));
  p.threads = 2;
  const nmfkit::Result r2 = nmfkit::nmf_masked(data, a, w, h, p, hooks);
  CHECK(r1.W == r2.W);
  CHECK(r1.H == r2.H);
  return r1;
}

}  // namespace

TEST_CASE("masked NMF with no exceptions follows unmasked HALS") {
  const Mat x = runif(30, 20, 1);
  const Mat w = runif(30, 3, 2), h = runif(3, 20, 3);
  nmfkit::NmfParams p;
  p.max_iter = 20;
  p.tol = 0.0;
  const nmfkit::EntryWeights none =
      nmfkit::entry_weights(30, 20, 1.0, {}, {}, {}, {});
  nmfkit::NullHooks hooks;
  const nmfkit::DenseData data(x);
  const nmfkit::Result a = nmfkit::nmf(data, w, h, p, hooks);
  const nmfkit::Result b = nmfkit::nmf_masked(data, none, w, h, p, hooks);
  CHECK((a.W - b.W).norm() <= 1e-10 * a.W.norm());
  CHECK((a.H - b.H).norm() <= 1e-10 * a.H.norm());
  CHECK(b.loss.back() == doctest::Approx(a.loss.back()).epsilon(1e-10));
}

TEST_CASE("masked loss decreases, matches its definition, any thread count") {
  // 1 of 8 entries of every row and 5 of 40 of every column missing: above
  // kFewMissing, so every method runs the per-line Gram corrections
  for (auto method : {nmfkit::Method::hals, nmfkit::Method::mu,
                      nmfkit::Method::anls}) {
    Mat x = runif(40, 8, 4);
    const nmfkit::EntryWeights a = diagonal_mask(x);
    const Mat w = runif(40, 4, 5), h = runif(4, 8, 6);
    nmfkit::NmfParams p;
    p.method = method;
    p.max_iter = 15;
    p.tol = 0.0;
    nmfkit::NullHooks hooks;
    const nmfkit::Result r1 = checked_masked_fit(x, a, w, h, p);
    // sparse data give the same fit up to rounding
    const nmfkit::SpMat xs = x.sparseView();
    const nmfkit::SparseData<nmfkit::SpMat> sdata(xs);
    const nmfkit::Result r3 = nmfkit::nmf_masked(sdata, a, w, h, p, hooks);
    CHECK((r3.H - r1.H).norm() <= 1e-9 * r1.H.norm());
  }
}

TEST_CASE("few missing entries per line: filled-in HALS and ANLS are monotone, exact") {
  // 1 of 200 entries per row and at most 2 of 300 per column missing (under
  // kFewMissing): HALS and ANLS fill them in on the unmasked engine
  Mat x = runif(300, 200, 7);
  const nmfkit::EntryWeights a = diagonal_mask(x);
  const Mat w = runif(300, 5, 8), h = runif(5, 200, 9);
  nmfkit::NullHooks hooks;
  const nmfkit::DenseData data(x);
  std::vector<double> final_loss;
  for (const nmfkit::Method method :
       {nmfkit::Method::hals, nmfkit::Method::anls}) {
    nmfkit::NmfParams p;
    p.method = method;
    p.max_iter = 15;
    p.tol = 0.0;
    p.inner = 3;
    checked_masked_fit(x, a, w, h, p);
    p.max_iter = 400;
    final_loss.push_back(
        nmfkit::nmf_masked(data, a, w, h, p, hooks).loss.back());
  }
  // from the same start the two solvers reach the same loss
  CHECK(final_loss[0] == doctest::Approx(final_loss[1]).epsilon(1e-3));
}
