// Tests of the Frobenius engines' penalties and fixed components (nmf.hpp,
// masked.hpp): NmfParams::pen_w, pen_h, fixed_w, fixed_h.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "helpers.hpp"

using nmfkit::Index;
using nmfkit::Mat;
using nmfkit::Method;
using nmfkit_test::runif;

namespace {

const Method kMethods[] = {Method::hals, Method::mu, Method::anls};

double rms_of(const Mat& x) {
  return std::sqrt(x.squaredNorm() / static_cast<double>(x.size()));
}

// The penalised objective of (w, h) by its definition (NmfParams::pen_w).
double objective_of(const Mat& x, const Mat& w, const Mat& h,
                    const nmfkit::NmfParams& p) {
  // weights relative to the data (rms^1.5, rms) times the length of the
  // lines each factor's entries are fitted on (n for W, m for H)
  const double r = rms_of(x), s1 = r * std::sqrt(r), s2 = r;
  const double m = static_cast<double>(x.rows()),
               n = static_cast<double>(x.cols());
  return 0.5 * (x - w * h).squaredNorm() +
         s1 * (n * p.pen_w.l1 * w.sum() + m * p.pen_h.l1 * h.sum()) +
         0.5 * s2 * (n * p.pen_w.l2 * w.squaredNorm() +
                     m * p.pen_h.l2 * h.squaredNorm());
}

nmfkit::EntryWeights no_weights(Index m, Index n) {
  return nmfkit::entry_weights(m, n, 1.0, {}, {}, {}, {});
}

// Entry weights with the entries (i, i % n) missing (x set to 0 there): 1 of
// n per row, above kFewMissing when n < 10, so the per-line path runs.
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

nmfkit::NmfParams penalised(Method method) {
  nmfkit::NmfParams p;
  p.method = method;
  p.pen_w = {0.05, 0.2};
  p.pen_h = {0.02, 0.1};
  p.fixed_w = 1;
  p.fixed_h = 1;
  return p;
}

}  // namespace

TEST_CASE("zero penalties and no fixed components run the plain updates bit for bit") {
  // the fit of today's engine, written out with the solvers it called:
  // W' then H, each by the method's own update on (Gram, right-hand side)
  const Mat x = runif(35, 25, 101);
  const Mat w = runif(35, 4, 102), h = runif(4, 25, 103);
  const nmfkit::DenseData d(x);
  nmfkit::NullHooks hooks;
  for (Method method : kMethods) {
    nmfkit::NmfParams p;
    p.method = method;
    p.max_iter = 12;
    p.tol = 0.0;
    p.inner = 2;
    const nmfkit::NmfResult r = nmfkit::nmf(d, w, h, p, hooks);
    const double x2 = d.sq_norm(), rms = std::sqrt(x2 / (35.0 * 25.0));
    const double mu_eps = p.mu_eps * rms * std::sqrt(rms);
    auto solve = [&](Mat& z, const Mat& g, const Mat& b) {
      if (method == Method::hals) {
        nmfkit::hals_update(z, g, b, 1, p.inner, p.inner_tol);
      } else if (method == Method::anls) {
        nmfkit::nnls_bpp(z, g, b, 1, true);
      } else {
        const double first = nmfkit::detail::mu_pass(z, g, b, mu_eps, 1);
        if (nmfkit::detail::mu_pass(z, g, b, mu_eps, 1) <= p.inner_tol * first)
          return;
      }
    };
    Mat wt = w.transpose(), hh = h, bw, bh, g;
    std::vector<double> loss;
    for (int it = 0; it < p.max_iter; ++it) {
      d.left_mult_t(hh, bw, 1);
      nmfkit::detail::gram(hh, g, 1);
      solve(wt, g, bw);
      Mat wtw;
      nmfkit::detail::gram(wt, wtw, 1);
      d.left_mult(wt, bh, 1);
      solve(hh, wtw, bh);
      nmfkit::detail::gram(hh, g, 1);
      loss.push_back(nmfkit::relative_error(
          nmfkit::sq_error_gram(x2, hh, bh, wtw, g), x2));
    }
    CHECK(r.W == Mat(wt.transpose()));
    CHECK(r.H == hh);
    CHECK(r.loss == loss);
    CHECK(r.objective == doctest::Approx(0.5 * (x - r.W * r.H).squaredNorm())
                             .epsilon(1e-10));
  }
}

TEST_CASE("L1 on W raises W's zero count over an increasing penalty grid") {
  // a planted rank-4 problem with noise; a fixed small L2 on H keeps the
  // scaling of (W, H) from running off as the L1 weight on W grows
  Mat w0 = runif(60, 4, 111), h0 = runif(4, 40, 112);
  const Mat x = w0 * h0 + 0.05 * runif(60, 40, 113);
  const nmfkit::DenseData d(x);
  nmfkit::NullHooks hooks;
  for (Method method : {Method::hals, Method::anls}) {
    Index last = -1;
    std::vector<Index> zeros;
    for (double l1 : {0.0, 0.05, 0.1, 0.2, 0.4, 0.8, 1.6}) {
      nmfkit::NmfParams p;
      p.method = method;
      p.tol = 1e-8;
      p.max_iter = 3000;
      p.pen_w.l1 = l1;
      p.pen_h.l2 = 0.1;
      const nmfkit::NmfResult r =
          nmfkit::nmf(d, runif(60, 4, 114), runif(4, 40, 115), p, hooks);
      const Index z = (r.W.array() == 0.0).count();
      zeros.push_back(z);
      CHECK(z >= last);
      last = z;
    }
    CHECK(zeros.front() < zeros.back());
    MESSAGE("zero counts of W: " << Eigen::Map<const Eigen::Matrix<Index, 1, -1>>(
                zeros.data(), static_cast<Index>(zeros.size())));
  }
}

TEST_CASE("a huge L2 weight on H drives H to zero") {
  const Mat x = runif(30, 20, 121);
  const nmfkit::DenseData d(x);
  nmfkit::NullHooks hooks;
  for (Method method : kMethods) {
    // with H alone penalised, W would grow to make up for a small H (the
    // objective's infimum is not attained): an L2 weight on W bounds it
    nmfkit::NmfParams p;
    p.method = method;
    p.max_iter = 30;
    p.tol = 0.0;
    p.pen_h.l2 = 1e300;  // times m = 30 and rms: still finite
    p.pen_w.l2 = 1.0;
    const nmfkit::NmfResult r =
        nmfkit::nmf(d, runif(30, 3, 122), runif(3, 20, 123), p, hooks);
    CHECK(r.status != nmfkit::Status::numerical_error);
    INFO("method " << static_cast<int>(method));
    CHECK(r.H.cwiseAbs().maxCoeff() < 1e-300);
    CHECK(r.W.allFinite());
  }
}

TEST_CASE("fixed components come out bit-identical (unmasked with extrapolation, masked)") {
  const Mat x = runif(40, 30, 131);
  Mat xm = runif(40, 8, 132);
  const nmfkit::EntryWeights a = diagonal_mask(xm);
  Mat xf = runif(300, 200, 133);  // few missing per line: the filled path
  const nmfkit::EntryWeights af = diagonal_mask(xf);
  nmfkit::NullHooks hooks;
  for (Method method : kMethods) {
    nmfkit::NmfParams p = penalised(method);
    p.fixed_w = 2;
    p.max_iter = 40;
    p.tol = 0.0;
    auto check_fixed = [&](const nmfkit::NmfResult& r, const Mat& w,
                           const Mat& h) {
      CHECK(r.W.leftCols(2) == w.leftCols(2));
      CHECK(r.H.topRows(1) == h.topRows(1));
      CHECK(r.W.rightCols(2) != w.rightCols(2));
      CHECK(r.H.bottomRows(3) != h.bottomRows(3));
      CHECK(r.iterations == p.max_iter);
    };
    for (bool extrapolate : {false, true}) {
      p.extrapolate = extrapolate;
      const Mat w = runif(40, 4, 134), h = runif(4, 30, 135);
      check_fixed(nmfkit::nmf(nmfkit::DenseData(x), w, h, p, hooks), w, h);
    }
    p.extrapolate = false;
    const Mat wm = runif(40, 4, 136), hm = runif(4, 8, 137);
    check_fixed(nmfkit::nmf_masked(nmfkit::DenseData(xm), a, wm, hm, p, hooks),
                wm, hm);
    if (method != Method::mu) {  // MU never fills in
      const Mat wf = runif(300, 4, 138), hf = runif(4, 200, 139);
      check_fixed(
          nmfkit::nmf_masked(nmfkit::DenseData(xf), af, wf, hf, p, hooks), wf,
          hf);
    }
  }
}

TEST_CASE("fixed_w = k solves H alone: the NNLS projection onto W") {
  const Mat x = runif(50, 40, 141);
  const Mat w = runif(50, 5, 142), h = runif(5, 40, 143);
  // the exact NNLS solution by block principal pivoting
  Mat ref;
  nmfkit::nnls_bpp(ref, w.transpose() * w, w.transpose() * x, 1);
  const nmfkit::DenseData d(x);
  nmfkit::NullHooks hooks;
  for (Method method : {Method::hals, Method::anls}) {
    nmfkit::NmfParams p;
    p.method = method;
    p.fixed_w = 5;
    p.tol = 1e-12;
    p.max_iter = 5000;
    for (bool masked : {false, true}) {
      const nmfkit::NmfResult r =
          masked ? nmfkit::nmf_masked(d, no_weights(50, 40), w, h, p, hooks)
                 : nmfkit::nmf(d, w, h, p, hooks);
      CHECK(r.W == w);
      CHECK((r.H - ref).cwiseAbs().maxCoeff() <= 1e-8 * ref.maxCoeff());
    }
  }
}

TEST_CASE("penalties and fixed components: 1 and 2 threads give the same bits") {
  // big enough for the products and Gram matrices to run in parallel
  const Mat x = runif(600, 500, 151);
  const nmfkit::SpMat xs =
      Mat((x.array() < 0.8).select(0.0, x)).sparseView();
  Mat xm = runif(200, 9, 152);
  const nmfkit::EntryWeights a = diagonal_mask(xm);
  nmfkit::NullHooks hooks;
  for (Method method : kMethods) {
    nmfkit::NmfParams p = penalised(method);
    p.max_iter = 15;
    p.tol = 0.0;
    p.extrapolate = true;
    const Mat w = runif(600, 8, 153), h = runif(8, 500, 154);
    const nmfkit::DenseData dd(x);
    const nmfkit::SparseData<nmfkit::SpMat> ds(xs);
    const nmfkit::NmfResult r1 = nmfkit::nmf(dd, w, h, p, hooks);
    const nmfkit::NmfResult s1 = nmfkit::nmf(ds, w, h, p, hooks);
    const Mat wm = runif(200, 4, 155), hm = runif(4, 9, 156);
    p.extrapolate = false;
    const nmfkit::NmfResult m1 =
        nmfkit::nmf_masked(nmfkit::DenseData(xm), a, wm, hm, p, hooks);
    p.threads = 2;
    const nmfkit::NmfResult m2 =
        nmfkit::nmf_masked(nmfkit::DenseData(xm), a, wm, hm, p, hooks);
    p.extrapolate = true;
    const nmfkit::NmfResult r2 = nmfkit::nmf(dd, w, h, p, hooks);
    const nmfkit::NmfResult s2 = nmfkit::nmf(ds, w, h, p, hooks);
    CHECK(r1.W == r2.W);
    CHECK(r1.H == r2.H);
    CHECK(r1.objective == r2.objective);
    CHECK(s1.W == s2.W);
    CHECK(s1.H == s2.H);
    CHECK(m1.W == m2.W);
    CHECK(m1.H == m2.H);
    CHECK(m1.objective == m2.objective);
  }
}

TEST_CASE("penalised fits are scale-equivariant: 4 X runs the same iterations") {
  const Mat x = runif(40, 30, 161);
  Mat xm = runif(40, 8, 162);
  const nmfkit::EntryWeights a = diagonal_mask(xm);
  nmfkit::EntryWeights a4 = a;  // the exceptions' data values scale too
  for (double& v : a4.by_col.value) v *= 4.0;
  for (double& v : a4.by_row.value) v *= 4.0;
  nmfkit::NullHooks hooks;
  auto same = [](const nmfkit::NmfResult& r, const nmfkit::NmfResult& r4) {
    CHECK(r.iterations == r4.iterations);
    CHECK((r4.W / 2.0 - r.W).norm() <= 1e-12 * r.W.norm());
    CHECK((r4.H / 2.0 - r.H).norm() <= 1e-12 * r.H.norm());
    CHECK(r4.objective == doctest::Approx(16.0 * r.objective).epsilon(1e-12));
  };
  for (Method method : kMethods) {
    nmfkit::NmfParams p = penalised(method);
    p.max_iter = 300;
    p.tol = 1e-5;
    p.extrapolate = true;
    const Mat w = runif(40, 4, 163), h = runif(4, 30, 164);
    const Mat x4 = 4.0 * x;
    same(nmfkit::nmf(nmfkit::DenseData(x), w, h, p, hooks),
         nmfkit::nmf(nmfkit::DenseData(x4), 2.0 * w, 2.0 * h, p, hooks));
    p.extrapolate = false;
    const Mat wm = runif(40, 4, 165), hm = runif(4, 8, 166);
    const Mat xm4 = 4.0 * xm;
    same(nmfkit::nmf_masked(nmfkit::DenseData(xm), a, wm, hm, p, hooks),
         nmfkit::nmf_masked(nmfkit::DenseData(xm4), a4, 2.0 * wm, 2.0 * hm, p,
                            hooks));
  }
}

TEST_CASE("the penalised objective never rises, with and without extrapolation") {
  // the fit after t iterations is the first t iterations of a longer one,
  // so the objective reported by fits of 1, 2, ... iterations is the
  // objective's trace
  const Mat x = runif(30, 25, 171);
  const Mat w = runif(30, 4, 172), h = runif(4, 25, 173);
  const nmfkit::DenseData d(x);
  nmfkit::NullHooks hooks;
  for (Method method : kMethods) {
    for (bool extrapolate : {false, true}) {
      nmfkit::NmfParams p = penalised(method);
      p.fixed_w = p.fixed_h = 0;
      p.tol = 0.0;
      p.extrapolate = extrapolate;
      double last = INFINITY;
      for (int t = 1; t <= 25; ++t) {
        p.max_iter = t;
        const nmfkit::NmfResult r = nmfkit::nmf(d, w, h, p, hooks);
        CHECK(r.objective <= last * (1 + 1e-12));
        CHECK(r.objective ==
              doctest::Approx(objective_of(x, r.W, r.H, p)).epsilon(1e-9));
        last = r.objective;
      }
    }
  }
}

TEST_CASE("KKT conditions of the penalised problem hold at convergence") {
  const Mat x = runif(40, 30, 181);
  const double r = rms_of(x), s1 = r * std::sqrt(r), s2 = r;
  const nmfkit::DenseData d(x);
  nmfkit::NullHooks hooks;
  for (Method method : {Method::hals, Method::anls}) {
    nmfkit::NmfParams p = penalised(method);
    p.fixed_w = p.fixed_h = 0;
    p.tol = 1e-9;
    p.max_iter = 20000;
    const nmfkit::NmfResult f =
        nmfkit::nmf(d, runif(40, 4, 182), runif(4, 30, 183), p, hooks);
    CHECK(f.status == nmfkit::Status::converged);
    // the weights scale with the line lengths: n = 30 for W, m = 40 for H
    const Mat gw = f.W * (f.H * f.H.transpose()) - x * f.H.transpose() +
                   Mat::Constant(40, 4, 30.0 * s1 * p.pen_w.l1) +
                   30.0 * s2 * p.pen_w.l2 * f.W;
    const Mat gh = (f.W.transpose() * f.W) * f.H - f.W.transpose() * x +
                   Mat::Constant(4, 30, 40.0 * s1 * p.pen_h.l1) +
                   40.0 * s2 * p.pen_h.l2 * f.H;
    // min(z, grad) = 0 entrywise: z >= 0, grad >= 0, z grad = 0
    const double sw = (x * f.H.transpose()).cwiseAbs().maxCoeff();
    const double sh = (f.W.transpose() * x).cwiseAbs().maxCoeff();
    CHECK(f.W.cwiseMin(gw).cwiseAbs().maxCoeff() < 1e-5 * sw);
    CHECK(f.H.cwiseMin(gh).cwiseAbs().maxCoeff() < 1e-5 * sh);
    CHECK(f.objective ==
          doctest::Approx(objective_of(x, f.W, f.H, p)).epsilon(1e-9));
  }
}

TEST_CASE("a masked fit with no exceptions follows the penalised unmasked one") {
  const Mat x = runif(30, 20, 191);
  const Mat w = runif(30, 3, 192), h = runif(3, 20, 193);
  const nmfkit::DenseData d(x);
  nmfkit::NullHooks hooks;
  for (Method method : kMethods) {
    nmfkit::NmfParams p = penalised(method);
    p.max_iter = 20;
    p.tol = 0.0;
    const nmfkit::NmfResult a = nmfkit::nmf(d, w, h, p, hooks);
    const nmfkit::NmfResult b =
        nmfkit::nmf_masked(d, no_weights(30, 20), w, h, p, hooks);
    // masked ANLS solves each column by coordinate descent to 1e-8
    // (kMaskedNnlsTol), the unmasked one exactly
    const double tol = method == Method::anls ? 1e-6 : 1e-10;
    INFO("method " << static_cast<int>(method));
    CHECK((a.W - b.W).norm() <= tol * a.W.norm());
    CHECK((a.H - b.H).norm() <= tol * a.H.norm());
    CHECK(b.objective == doctest::Approx(a.objective).epsilon(tol));
  }
}

TEST_CASE("bad penalties or fixed counts throw std::invalid_argument") {
  const Mat x = runif(10, 8, 201);
  const nmfkit::DenseData d(x);
  nmfkit::NullHooks hooks;
  nmfkit::NmfParams p;
  p.pen_w.l1 = -1.0;
  CHECK_THROWS_AS(nmfkit::nmf(d, runif(10, 2, 1), runif(2, 8, 2), p, hooks),
                  std::invalid_argument);
  p.pen_w.l1 = 0.0;
  p.pen_h.l2 = NAN;
  CHECK_THROWS_AS(nmfkit::nmf(d, runif(10, 2, 1), runif(2, 8, 2), p, hooks),
                  std::invalid_argument);
  p.pen_h.l2 = 0.0;
  p.fixed_h = 3;
  CHECK_THROWS_AS(nmfkit::nmf_masked(d, no_weights(10, 8), runif(10, 2, 1),
                                     runif(2, 8, 2), p, hooks),
                  std::invalid_argument);
}
