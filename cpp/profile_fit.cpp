// Phase timings of one nmf() fit (nmf.hpp) on bench/nmf.R's problems
// (issue 35, item 5): the set-up (SparseData's transposed copy, ||X||^2,
// the start's transposes and Gram) and, per iteration, each step of
// nmf.hpp's loop in its order (the rollback copies, the two products with
// X, the two factor updates, the Gram matrices, the loss, extrapolation),
// with the flops of each, beside the real nmf() on the same start.
// Not a test: built only with -DNMFKIT_BENCH=ON.
// Usage: profile_fit FILE [iters] [reps]
//   FILE: "sparse:F" (cpp/bench_kernels_data.R's sparse.bin) or "dense:F"
//   (its dense.bin, 2000 x 1000); the method is nmf()'s "auto": HALS with
//   the cost rule's passes on sparse data, ANLS on dense; the start is
//   uniform on [0, sqrt(mean(X) / k)), as init = "random".
#include <algorithm>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nmfkit.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_io.hpp"

using nmfkit::Index;
using nmfkit::Mat;
// The thread's CPU clock: on a shared machine the wall clock counts the
// time the process waits for the core.
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
  }
};

namespace {

constexpr Index kK = 20;

double since(Clock::time_point t0) { return Clock::now() - t0; }

Mat read_dense(const char* file, Index m, Index n) {
  Mat x(m, n);
  std::ifstream in(file, std::ios::binary);
  in.read(reinterpret_cast<char*>(x.data()),
          static_cast<std::streamsize>(sizeof(double) * m * n));
  if (!in) {
    std::fprintf(stderr, "cannot read %ld doubles from %s\n",
                 static_cast<long>(m * n), file);
    std::exit(1);
  }
  return x;
}

/// Seconds and flops per named phase, summed over the iterations.
struct Phases {
  std::vector<std::string> name;
  std::vector<double> sec, flops;
  Clock::time_point last = Clock::now();
  void reset() { last = Clock::now(); }
  void lap(const std::string& n, double f = 0.0) {
    const double s = since(last);
    size_t i = 0;
    while (i < name.size() && name[i] != n) ++i;
    if (i == name.size()) {
      name.push_back(n);
      sec.push_back(0.0);
      flops.push_back(0.0);
    }
    sec[i] += s;
    flops[i] += f;
    last = Clock::now();
  }
  void print(int reps) const {
    double total = 0.0, total_f = 0.0;
    for (size_t i = 0; i < name.size(); ++i) {
      total += sec[i];
      total_f += flops[i];
    }
    for (size_t i = 0; i < name.size(); ++i) {
      std::printf("  %-34s %8.3f ms %5.1f %%", name[i].c_str(),
                  1e3 * sec[i] / reps, 100.0 * sec[i] / total);
      if (flops[i] > 0)
        std::printf("  %6.2f GFLOP/s", flops[i] / sec[i] * 1e-9);
      std::printf("\n");
    }
    std::printf("  %-34s %8.3f ms          %6.2f GFLOP/s\n", "sum",
                1e3 * total / reps, total_f / total * 1e-9);
  }
};

struct NullHooks {
  bool check_interrupt() { return false; }
  void progress(int, double) {}
};

// One fit as nmf.hpp runs it (no penalties, no fixed components,
// extrapolation on), timed phase by phase; returns the traced losses.
template <class DataT>
std::vector<double> phased_fit(const DataT& x, const Mat& w, const Mat& h,
                               const nmfkit::NmfParams& p, Phases& ph) {
  namespace d = nmfkit::detail;
  const Index m = x.rows(), n = x.cols(), k = w.cols();
  const double nnz = x.stored(), kk = static_cast<double>(k * k);
  ph.reset();
  const double x2 = x.sq_norm();
  ph.lap("set-up: ||X||^2", 2 * nnz);
  const d::FactorParams passes = d::factor_params(p, m, n, k, x.stored());
  Mat wt, hh = h, hht, wtw, bw, bh, wt_prev, h_prev;
  d::transpose_chunks(w, wt, p.threads);
  d::gram(hh, hht, p.threads);
  ph.lap("set-up: W' and HH'", 2.0 * n * kk);
  d::PlainIterate plain;
  plain.start(wt, hh);
  d::Extrapolator ex(p.tol);
  std::vector<double> loss;
  auto inner_flops = [&](const nmfkit::NmfParams& q, Index cols) {
    return q.method == nmfkit::Method::hals ? 2.0 * q.inner * cols * kk
                                            : 2.0 * cols * kk;
  };
  for (int it = 1; it <= p.max_iter; ++it) {
    if (!p.extrapolate) {  // nmf.hpp's rollback copies
      d::copy_chunks(wt, wt_prev, p.threads);
      d::copy_chunks(hh, h_prev, p.threads);
      ph.lap("rollback copies");
    }
    x.left_mult_t(hh, bw, p.threads);
    ph.lap("H X' (product)", 2.0 * nnz * k);
    double viol = d::solve_factor(wt, hht, bw, passes.w, 0.0);
    ph.lap("W update", inner_flops(passes.w, m));
    d::gram(wt, wtw, p.threads);
    ph.lap("W'W (Gram)", 2.0 * m * kk);
    x.left_mult(wt, bh, p.threads);
    ph.lap("W' X (product)", 2.0 * nnz * k);
    viol += d::solve_factor(hh, wtw, bh, passes.h, 0.0);
    ph.lap("H update", inner_flops(passes.h, n));
    d::gram(hh, hht, p.threads);
    ph.lap("HH' (Gram)", 2.0 * n * kk);
    const double sq = nmfkit::sq_error_gram(x2, hh, bh, wtw, hht);
    const double e = nmfkit::relative_error(sq, x2);
    ph.lap("loss (Gram identity)", 2.0 * n * k + 2.0 * kk);
    const d::Verdict v = ex.judge(e, viol);
    if (v == d::Verdict::restart) {
      plain.restore(wt, hh);
      d::gram(hh, hht, p.threads);
      ph.lap("extrapolation", 2.0 * n * kk);
      loss.push_back(loss.empty() ? e : loss.back());
      continue;
    }
    loss.push_back(e);
    if (v == d::Verdict::keep) {
      plain.keep(wt, hh, p.threads);
    } else {
      auto push = [&](const Mat& z, const Mat& old, Mat& out) {
        d::push_factor(z, old, ex.beta(), 0, p.threads, out);
      };
      plain.push(wt, hh, push, push);
      d::gram(hh, hht, p.threads);
    }
    ph.lap("extrapolation");
  }
  Mat wout;
  wout.swap(bw);  // as nmf.hpp: W into H X''s storage
  d::transpose_chunks(plain.wt, wout, p.threads);
  ph.lap("result: W");
  return loss;
}

template <class DataT>
void profile(const DataT& x, double mean, nmfkit::Method method, int iters,
             int reps) {
  const Index m = x.rows(), n = x.cols();
  std::mt19937 gen(1);
  const double hi = std::sqrt(mean / kK);
  std::uniform_real_distribution<double> u(0.0, hi);
  Mat w(m, kK), h(kK, n);
  for (Index i = 0; i < w.size(); ++i) w.data()[i] = u(gen);
  for (Index i = 0; i < h.size(); ++i) h.data()[i] = u(gen);
  nmfkit::NmfParams p;
  p.method = method;
  p.tol = 0.0;
  p.max_iter = iters;
  p.threads = 1;
  p.extrapolate = true;  // nmf()'s default
  if (method == nmfkit::Method::hals)
    p.passes = nmfkit::InnerPasses::automatic;
  const auto f = nmfkit::detail::factor_params(p, m, n, kK, x.stored());
  std::printf("%ld x %ld, stored %.0f, rank %ld, %d iterations, passes W %d "
              "H %d, %d reps\n",
              static_cast<long>(m), static_cast<long>(n), x.stored(),
              static_cast<long>(kK), iters, f.w.inner, f.h.inner, reps);
  Phases ph;
  std::vector<double> trace;
  for (int r = 0; r < reps; ++r) trace = phased_fit(x, w, h, p, ph);
  ph.print(reps);
  NullHooks hooks;
  std::vector<double> t;
  nmfkit::NmfResult res;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    res = nmfkit::nmf(x, w, h, p, hooks);
    t.push_back(since(t0));
  }
  std::sort(t.begin(), t.end());
  std::printf("nmf() itself: median %.3f ms, min %.3f ms; final loss %.9f "
              "(phased %.9f)\n",
              1e3 * t[t.size() / 2], 1e3 * t.front(), res.loss.back(),
              trace.back());
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: profile_fit sparse:F|dense:F [iters] [reps]\n");
    return 1;
  }
  const std::string file = argv[1];
  const int iters = argc > 2 ? std::atoi(argv[2]) : 9;
  const int reps = argc > 3 ? std::atoi(argv[3]) : 11;
  if (file.rfind("sparse:", 0) == 0) {
    const nmfkit::SpMat x = read_sparse(file.c_str() + 7);
    const double mean = x.sum() / (static_cast<double>(x.rows()) * x.cols());
    std::vector<double> t;
    for (int r = 0; r < reps; ++r) {
      const auto t0 = Clock::now();
      const nmfkit::SparseData<nmfkit::SpMat> d(x);
      t.push_back(since(t0));
    }
    std::sort(t.begin(), t.end());
    std::printf("SparseData (transposed copy): median %.3f ms\n",
                1e3 * t[t.size() / 2]);
    const nmfkit::SparseData<nmfkit::SpMat> d(x);
    profile(d, mean, nmfkit::Method::hals, iters, reps);
  } else if (file.rfind("dense:", 0) == 0) {
    const Mat x = read_dense(file.c_str() + 6, 2000, 1000);
    const nmfkit::DenseData d(x);
    profile(d, x.mean(), nmfkit::Method::anls, iters, reps);
  }
  return 0;
}
