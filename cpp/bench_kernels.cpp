// Timings of the engine kernels on the dense benchmark problem of bench/nmf.R
// (2000 x 1000, rank 20, X = W0 H0 + U[0, 0.1), W0 and H0 uniform; figures
// in bench/README.md): the column-wise cd_pass (nnls.hpp) against the
// component HALS pass (hals.hpp), coordinate-descent NNLS (nnls_cd) against
// nnls_bpp (bpp.hpp), Eigen's GEMM as the yardstick, and whole fits (ANLS
// with BPP, HALS by component, nmf()) traced to a target relative error.
// Not a test: built only with -DNMFKIT_BENCH=ON.
// Usage: bench_kernels [mode] [data] [target] [seed] [max_iter]
//   mode: kernels; loops / loops2 (all fits, 1 / 2 threads); fast / fast2
//   (ANLS-BPP and HALS inner = 10 only); a "-random" suffix (fast-random)
//   starts from uniform W and H instead of NNDSVDa; all (default): kernels
//   and loops.
//   data: "-" (default; dense, generated with std::mt19937), a file of
//   2000 x 1000 doubles, column-major (bench/nmf.R's problem through
//   writeBin(as.double(x), f)), or "sparse:FILE" holding int m, n, nnz, then
//   the dgCMatrix slots p, i (ints) and x (doubles).
//   target: relative error to reach (default 0.0111745: 1.001 x RcppML's on
//   bench/nmf.R's dense problem; its sparse one is 0.933577).
//   seed: of the start (default 42); max_iter: of the ANLS and HALS
//   inner = 10 fits (default 500; plain HALS gets twice as many). Fits also
//   stop once the error improves by less than 1e-6 in an iteration.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <nmfkit.hpp>
#include <nmfkit/bpp.hpp>
#include <nmfkit/hals.hpp>
#include <random>
#include <string>
#include <vector>

#include "bench_io.hpp"

using nmfkit::Index;
using nmfkit::Mat;
using Clock = std::chrono::steady_clock;

namespace {

constexpr Index kM = 2000, kN = 1000, kK = 20;
unsigned g_seed = 42;  // of the random start and the randomized SVD
int g_max_iter = 500;  // outer iterations of a fit (plain HALS: twice)

Mat runif(Index r, Index c, std::mt19937& gen, double hi = 1.0) {
  std::uniform_real_distribution<double> u(0.0, hi);
  Mat m(r, c);
  for (Index j = 0; j < c; ++j)
    for (Index i = 0; i < r; ++i) m(i, j) = u(gen);
  return m;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Wall times of `reps` calls of f (setup() before each, untimed): the
/// median, and the minimum (the least disturbed by other processes).
struct Timing {
  double med, min;
};
Timing time_it(int reps, const std::function<void()>& setup,
               const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    setup();
    const auto t0 = Clock::now();
    f();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  return {t[t.size() / 2], t.front()};
}

/// One table row: name, threads, passes, median and min seconds, GFLOP/s at
/// both (when flops > 0), and a free-form note.
void row(const std::string& name, int threads, int passes, Timing t,
         double flops, const std::string& note = "") {
  std::printf("%-32s %3d %6d %10.6f %10.6f", name.c_str(), threads, passes,
              t.med, t.min);
  if (flops > 0)
    std::printf(" %7.2f %7.2f", flops / t.med * 1e-9, flops / t.min * 1e-9);
  else
    std::printf(" %7s %7s", "-", "-");
  std::printf("  %s\n", note.c_str());
}

void print_uptime() {
  std::ifstream f("/proc/loadavg");
  std::string a, b, c;
  f >> a >> b >> c;
  std::printf("load average: %s %s %s\n", a.c_str(), b.c_str(), c.c_str());
}

struct Problem {
  Mat x, w0, h0, w, h;  // w, h: NNDSVDa start from a randomized SVD
};

Problem make_problem(const char* file) {
  Problem p;
  std::mt19937 gen(20261122);
  p.w0 = runif(kM, kK, gen);
  p.h0 = runif(kK, kN, gen);
  if (file) {
    p.x.resize(kM, kN);
    std::ifstream in(file, std::ios::binary);
    in.read(reinterpret_cast<char*>(p.x.data()),
            static_cast<std::streamsize>(sizeof(double) * kM * kN));
    if (!in) {
      std::fprintf(stderr, "cannot read %ld doubles from %s\n",
                   static_cast<long>(kM * kN), file);
      std::exit(1);
    }
  } else {
    p.x = p.w0 * p.h0 + runif(kM, kN, gen, 0.1);
  }
  std::normal_distribution<double> z(0.0, 1.0);
  Mat omega(kN, kK + 10);
  for (Index j = 0; j < omega.cols(); ++j)
    for (Index i = 0; i < kN; ++i) omega(i, j) = z(gen);
  const nmfkit::DenseData d(p.x);
  const nmfkit::Svd s = nmfkit::rsvd(d, omega, kK, 7, 1, true);
  nmfkit::nndsvd(s, p.x.mean(), nmfkit::ZeroFill::mean, nullptr, nullptr, p.w,
                 p.h);
  return p;
}

// ---- kernels ---------------------------------------------------------------

void bench_kernels(const Problem& p) {
  const int reps = 15;
  const nmfkit::DenseData d(p.x);
  std::printf(
      "\n== kernels: seconds (median, min of %d runs), GFLOP/s at "
      "each\n",
      reps);
  print_uptime();
  std::printf("%-32s %3s %6s %10s %10s %7s %7s\n", "kernel", "thr", "passes",
              "median", "min", "GF med", "GF min");
  // (iii) GEMM X H' as the yardstick
  const double gemm_flops = 2.0 * kM * kN * kK;
  Mat bmk(kM, kK), bkm;
  row("GEMM X H' (Eigen)", 1, 0,
      time_it(
          reps, [] {}, [&] { bmk.noalias() = p.x * p.h.transpose(); }),
      gemm_flops);
  for (int th : {1, 2})
    row("H X' (DenseData::left_mult_t)", th, 0,
        time_it(
            reps, [] {}, [&] { d.left_mult_t(p.h, bkm, th); }),
        gemm_flops);

  // (i) one W update: products done, passes only
  const Mat hht = p.h * p.h.transpose();
  const Mat b = p.x * p.h.transpose();  // m x k
  const Mat bt = b.transpose();         // k x m
  const double pass_flops = 2.0 * kM * kK * kK;
  std::printf("W update, G = HH' and B = XH' given (one pass: %.1f MFLOP)\n",
              pass_flops * 1e-6);
  for (int inner : {1, 10}) {
    for (int th : {1, 2}) {
      Mat wt, w;
      row("cd_pass (k x m)", th, inner,
          time_it(
              reps, [&] { wt = p.w.transpose(); },
              [&] {
                for (int l = 0; l < inner; ++l)
                  nmfkit::cd_pass(wt, hht, bt, th);
              }),
          inner * pass_flops);
      row("hals_update (k x m)", th, inner,
          time_it(
              reps, [&] { w = p.w.transpose(); },
              [&] { nmfkit::hals_update(w, hht, bt, th, inner, 0.0); }),
          inner * pass_flops);
    }
  }

  // (ii) NNLS to the end: coordinate descent (predict()'s solver) against
  // BPP (the ANLS engine's)
  std::printf(
      "NNLS solves to the end; note: violation after, bpp steps "
      "(nnls_cd: tol 1e-8, <= 100 CD passes)\n");
  struct Case {
    const char* name;
    Mat g, b, start;
  };
  std::vector<Case> cases;
  cases.push_back(
      {"H | W0", p.w0.transpose() * p.w0, p.w0.transpose() * p.x, p.h});
  cases.push_back({"W' | H0", p.h0 * p.h0.transpose(), p.h0 * p.x.transpose(),
                   p.w.transpose()});
  cases.push_back(
      {"H | W start", p.w.transpose() * p.w, p.w.transpose() * p.x, p.h});
  cases.push_back({"W' | H start", p.h * p.h.transpose(), p.h * p.x.transpose(),
                   p.w.transpose()});
  char note[96];
  for (const Case& c : cases) {
    for (int th : {1, 2}) {
      Mat z;
      const Timing t_cd = time_it(
          reps, [&] { z = c.start; },
          [&] { nmfkit::nnls_cd(z, c.g, c.b, 1e-8, 100, th); });
      std::snprintf(note, sizeof note, "viol %.2e",
                    nmfkit::violation(z, c.g, c.b, 1));
      row(std::string(c.name) + " nnls_cd", th, 0, t_cd, 0, note);
      nmfkit::BppStats st;
      const Timing t_b = time_it(
          reps, [] {},
          [&] { nmfkit::nnls_bpp(z, c.g, c.b, th, false, 0, &st); });
      std::snprintf(note, sizeof note, "viol %.2e steps %d",
                    nmfkit::violation(z, c.g, c.b, 1), st.max_steps);
      row(std::string(c.name) + " bpp cold", th, 0, t_b, 0, note);
      const Timing t_w = time_it(
          reps, [&] { z = c.start; },
          [&] { nmfkit::nnls_bpp(z, c.g, c.b, th, true, 0, &st); });
      std::snprintf(note, sizeof note, "viol %.2e steps %d",
                    nmfkit::violation(z, c.g, c.b, 1), st.max_steps);
      row(std::string(c.name) + " bpp warm from start", th, 0, t_w, 0, note);
    }
  }
}

// ---- whole fits
// --------------------------------------------------------------

/// Seconds spent in the phases of an outer iteration: the two products with
/// X, the factor updates, and the rest (Gram matrices, loss, copies).
struct Phases {
  double t[3] = {0, 0, 0};
  Clock::time_point last = Clock::now();
  void lap(int phase = -1) {
    const auto now = Clock::now();
    if (phase >= 0)
      t[phase] += std::chrono::duration<double>(now - last).count();
    last = now;
  }
  void print(const char* update) const {
    std::printf("    seconds in products %.3f, %s %.3f, rest %.3f\n", t[0],
                update, t[1], t[2]);
  }
};

struct Trace {
  std::vector<double> loss, time;
};

// Runs `step` (one outer iteration, returning the relative error) until the
// error improves by less than 1e-6 or max_iter.
Trace run(const std::function<double()>& step, int max_iter) {
  Trace tr;
  const auto t0 = Clock::now();
  for (int it = 1; it <= max_iter; ++it) {
    tr.loss.push_back(step());
    tr.time.push_back(seconds_since(t0));
    const size_t n = tr.loss.size();
    if (n > 1 && tr.loss[n - 2] - tr.loss[n - 1] < 1e-6) break;
  }
  return tr;
}

void report(const char* name, const Trace& tr, double target) {
  size_t hit = tr.loss.size();
  for (size_t i = 0; i < tr.loss.size(); ++i)
    if (tr.loss[i] <= target) {
      hit = i;
      break;
    }
  std::printf("%-30s %6zu %9.6f %8.2f  ", name, tr.loss.size(), tr.loss.back(),
              tr.time.back());
  if (hit < tr.loss.size())
    std::printf("%6zu %8.3f\n", hit + 1, tr.time[hit]);
  else
    std::printf("%6s %8s\n", "-", "-");
  std::printf("    trace:");
  for (size_t i : {0, 1, 2, 4, 9, 14, 19, 29, 49, 99, 199, 499, 999, 1999})
    if (i < tr.loss.size()) std::printf(" [%zu] %.6f", i + 1, tr.loss[i]);
  std::printf("\n");
}

// The starting factors: NNDSVDa from a randomized SVD (nmf()'s default), or
// nmfkit's init = "random", U[0, sqrt(mean(X) / k)).
template <class DataT>
void start(const DataT& d, double x_mean, bool random, Mat& w, Mat& h) {
  std::mt19937 gen(g_seed);
  if (random) {
    const double hi = std::sqrt(x_mean / kK);
    w = runif(d.rows(), kK, gen, hi);
    h = runif(kK, d.cols(), gen, hi);
    return;
  }
  std::normal_distribution<double> z(0.0, 1.0);
  Mat omega(d.cols(), kK + 10);
  for (Index j = 0; j < omega.cols(); ++j)
    for (Index i = 0; i < d.cols(); ++i) omega(i, j) = z(gen);
  const nmfkit::Svd s = nmfkit::rsvd(d, omega, kK, 7, 1, true);
  nmfkit::nndsvd(s, x_mean, nmfkit::ZeroFill::mean, nullptr, nullptr, w, h);
}

// Whole fits on dense or sparse data; `all` adds the slow plain-HALS runs.
template <class DataT>
void bench_loops(const DataT& d, double x_mean, bool random, double target,
                 int threads, bool all) {
  const double x2 = d.sq_norm();
  Mat w0, h0;
  const auto t0 = Clock::now();
  start(d, x_mean, random, w0, h0);
  std::printf(
      "\n== whole fits, %ld x %ld, %d thread(s), start %s (%.2f s); "
      "target %.7f\n",
      static_cast<long>(d.rows()), static_cast<long>(d.cols()), threads,
      random ? "random" : "NNDSVDa", seconds_since(t0), target);
  print_uptime();
  std::printf("%-30s %6s %9s %8s  %6s %8s\n", "method", "iters", "final",
              "seconds", "to tgt", "seconds");

  {  // ANLS, both factors exact by BPP, warm started
    Mat wt = w0.transpose(), h = h0, b, g;
    nmfkit::BppStats st;
    long fact = 0, solves = 0, cols = 0;
    int steps = 0;
    auto tally = [&] {
      fact += st.factorisations;
      solves += st.column_solves;
      steps = std::max(steps, st.max_steps);
    };
    Mat hht = h * h.transpose();
    Phases ph;
    const Trace tr = run(
        [&] {
          ph.lap();
          d.left_mult_t(h, b, threads);  // H X', k x m
          ph.lap(0);
          nmfkit::nnls_bpp(wt, hht, b, threads, true, 0, &st);
          tally();
          cols += wt.cols();
          ph.lap(1);
          g = wt * wt.transpose();
          ph.lap(2);
          d.left_mult(wt, b, threads);  // W' X, k x n
          ph.lap(0);
          nmfkit::nnls_bpp(h, g, b, threads, true, 0, &st);
          tally();
          cols += h.cols();
          ph.lap(1);
          hht = h * h.transpose();
          const double e = nmfkit::relative_error(
              nmfkit::sq_error_gram(x2, h, b, g, hht), x2);
          ph.lap(2);
          return e;
        },
        g_max_iter);
    report("anls-bpp", tr, target);
    ph.print("bpp");
    std::printf(
        "    bpp: %.2f solves per column, %.2f columns per "
        "factorisation, at most %d steps\n",
        static_cast<double>(solves) / cols,
        static_cast<double>(solves) / std::max(fact, 1L), steps);
  }
  for (int inner : {1, 10}) {  // HALS by component on the k x m layout
    if (inner == 1 && !all) continue;
    // Persistent buffers: no allocation inside the loop.
    Mat wt = w0.transpose(), h = h0, g;
    Mat btm(kK, d.rows()), btn(kK, d.cols());  // H X', W' X
    Mat hht = h * h.transpose();
    Phases ph;
    const Trace tr = run(
        [&] {
          ph.lap();
          d.left_mult_t(h, btm, threads);  // H X', k x m
          ph.lap(0);
          nmfkit::hals_update(wt, hht, btm, threads, inner, 0.1);
          ph.lap(1);
          g.noalias() = wt * wt.transpose();
          ph.lap(2);
          d.left_mult(wt, btn, threads);  // W' X, k x n
          ph.lap(0);
          nmfkit::hals_update(h, g, btn, threads, inner, 0.1);
          ph.lap(1);
          hht.noalias() = h * h.transpose();
          const double e =
              x2 - 2.0 * h.cwiseProduct(btn).sum() + g.cwiseProduct(hht).sum();
          ph.lap(2);
          return nmfkit::relative_error(std::max(e, 0.0), x2);
        },
        inner == 1 ? 2 * g_max_iter : g_max_iter);
    report(inner == 1 ? "hals-component inner=1" : "hals-component inner=10",
           tr, target);
    ph.print("passes");
  }
  for (int inner : {1, 10}) {  // nmf() itself
    if (!all) break;
    struct Timer {
      Trace tr;
      Clock::time_point t0 = Clock::now();
      bool check_interrupt() {
        const size_t n = tr.loss.size();
        return n > 1 && tr.loss[n - 2] - tr.loss[n - 1] < 1e-6;
      }
      void progress(int, double loss) {
        tr.loss.push_back(loss);
        tr.time.push_back(seconds_since(t0));
      }
    } hooks;
    nmfkit::NmfParams par;
    par.tol = 0.0;
    par.max_iter = inner == 1 ? 2 * g_max_iter : g_max_iter;
    par.threads = threads;
    par.inner = inner;
    nmfkit::nmf(d, w0, h0, par, hooks);
    report(inner == 1 ? "nmf() hals (default inner=1)" : "nmf() hals inner=10",
           hooks.tr, target);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  const std::string file = argc > 2 ? argv[2] : "-";
  const double target = argc > 3 ? std::atof(argv[3]) : 0.0111745;
  if (argc > 4) g_seed = static_cast<unsigned>(std::atoi(argv[4]));
  if (argc > 5) g_max_iter = std::atoi(argv[5]);
  const bool random = mode.find("random") != std::string::npos;
  const bool all = mode.rfind("loops", 0) == 0 || mode == "all";
  const int threads = mode.find('2') != std::string::npos ? 2 : 1;
  if (file.rfind("sparse:", 0) == 0) {
    const nmfkit::SpMat x = read_sparse(file.c_str() + 7);
    const nmfkit::SparseData<nmfkit::SpMat> d(x);
    std::printf("sparse problem %s: %ld x %ld, nnz %ld\n", file.c_str() + 7,
                static_cast<long>(x.rows()), static_cast<long>(x.cols()),
                static_cast<long>(x.nonZeros()));
    const double mean = x.sum() / (static_cast<double>(x.rows()) * x.cols());
    bench_loops(d, mean, random, target, threads, all);
    return 0;
  }
  const Problem p = make_problem(file == "-" ? nullptr : file.c_str());
  std::printf("dense problem: %ld x %ld, rank %ld (%s)\n",
              static_cast<long>(kM), static_cast<long>(kN),
              static_cast<long>(kK), file.c_str());
  if (mode == "kernels" || mode == "all") bench_kernels(p);
  if (mode != "kernels") {
    const nmfkit::DenseData d(p.x);
    bench_loops(d, p.x.mean(), random, target, threads, all);
  }
  return 0;
}
