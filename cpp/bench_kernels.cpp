// Timings of the engine kernels on the dense benchmark problem of
// specs/nmf.md (2000 x 1000, rank 20, X = W0 H0 + U[0, 0.1), W0 and H0
// uniform): today's cd_pass (k x m layout) against the component HALS pass
// (hals.hpp), today's nnls_solve against nnls_bpp (bpp.hpp), Eigen's GEMM as
// the yardstick, and whole fits (ANLS with BPP, HALS by component, today's
// nmf()) traced to a target relative error. Not a test: built only with
// -DNMFKIT_BENCH=ON.
// Usage: bench_kernels [kernels|loops|all] [x.bin] [target]
//   x.bin: 2000 x 1000 doubles, column-major (e.g. bench/nmf.R's problem via
//   writeBin(as.double(x), "x.bin")); default: generated with std::mt19937.
//   target: relative error to reach (default 0.0111745, 1.001 x RcppML's).
#include <algorithm>
#include <chrono>
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

using nmfkit::Index;
using nmfkit::Mat;
using Clock = std::chrono::steady_clock;

namespace {

constexpr Index kM = 2000, kN = 1000, kK = 20;

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

/// Median wall time of `reps` calls of f (setup() before each, untimed).
double median_time(int reps, const std::function<void()>& setup,
                   const std::function<void()>& f) {
  std::vector<double> t;
  for (int r = 0; r < reps; ++r) {
    setup();
    const auto t0 = Clock::now();
    f();
    t.push_back(seconds_since(t0));
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
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
  nmfkit::nndsvd(s, p.x.mean(), nmfkit::ZeroFill::mean, nullptr, nullptr,
                 p.w, p.h);
  return p;
}

// ---- kernels ---------------------------------------------------------------

void bench_kernels(const Problem& p) {
  const int reps = 15;
  const nmfkit::DenseData d(p.x);
  std::printf("\n== kernels (median of %d runs; seconds)\n", reps);
  print_uptime();
  // (iii) GEMM X H' as the yardstick
  const double gemm_flops = 2.0 * kM * kN * kK;
  Mat bmk(kM, kK), bkm;
  const double t_gemm = median_time(reps, [] {}, [&] {
    bmk.noalias() = p.x * p.h.transpose();
  });
  std::printf("%-44s %9.5f  %6.2f GFLOP/s\n", "GEMM X H' (Eigen, 1 thread)",
              t_gemm, gemm_flops / t_gemm * 1e-9);
  for (int th : {1, 2}) {
    const double t = median_time(reps, [] {}, [&] {
      d.left_mult_t(p.h, bkm, th);
    });
    std::printf("H X' by DenseData::left_mult_t, %d thread(s)    %9.5f  %6.2f "
                "GFLOP/s\n", th, t, gemm_flops / t * 1e-9);
  }

  // (i) one W update: products done, passes only
  const Mat hht = p.h * p.h.transpose();
  const Mat b = p.x * p.h.transpose();  // m x k
  const Mat bt = b.transpose();         // k x m
  const double pass_flops = 2.0 * kM * kK * kK;
  std::printf("\nW update (G = HH', B = XH' given; pass = %.1f MFLOP)\n",
              pass_flops * 1e-6);
  std::printf("%-28s %7s %7s %10s %8s\n", "kernel", "threads", "passes",
              "seconds", "GFLOP/s");
  for (int inner : {1, 10}) {
    for (int th : {1, 2}) {
      Mat wt;
      const double t_cd = median_time(reps, [&] { wt = p.w.transpose(); },
                                      [&] {
        for (int l = 0; l < inner; ++l) nmfkit::cd_pass(wt, hht, bt, th);
      });
      std::printf("%-28s %7d %7d %10.6f %8.2f\n", "cd_pass (k x m)", th, inner,
                  t_cd, inner * pass_flops / t_cd * 1e-9);
      Mat w;
      const double t_h = median_time(reps, [&] { w = p.w; }, [&] {
        nmfkit::hals_update(w, hht, b, th, inner, 0.0);
      });
      std::printf("%-28s %7d %7d %10.6f %8.2f\n", "hals_update (m x k)", th,
                  inner, t_h, inner * pass_flops / t_h * 1e-9);
    }
  }

  // (ii) exact NNLS: today's nnls_solve against BPP
  std::printf("\nNNLS solves (anls: nnls_solve tol 1e-8, <= 100 CD passes)\n");
  std::printf("%-34s %7s %10s %12s %9s\n", "problem / solver", "threads",
              "seconds", "violation", "bpp steps");
  struct Case {
    const char* name;
    Mat g, b, start;
  };
  std::vector<Case> cases;
  cases.push_back({"H given W0", p.w0.transpose() * p.w0,
                   p.w0.transpose() * p.x, p.h});
  cases.push_back({"W' given H0", p.h0 * p.h0.transpose(),
                   p.h0 * p.x.transpose(), p.w.transpose()});
  for (const Case& c : cases) {
    for (int th : {1, 2}) {
      Mat z;
      const double t_cd = median_time(reps, [&] { z = c.start; }, [&] {
        nmfkit::nnls_solve(z, c.g, c.b, 1e-8, 100, th);
      });
      std::printf("%-34s %7d %10.5f %12.3e %9s\n",
                  (std::string(c.name) + " / nnls_solve").c_str(), th, t_cd,
                  nmfkit::violation(z, c.g, c.b, 1), "-");
      nmfkit::BppStats st;
      const double t_b = median_time(reps, [] {}, [&] {
        nmfkit::nnls_bpp(z, c.g, c.b, th, false, 0, &st);
      });
      std::printf("%-34s %7d %10.5f %12.3e %9d\n",
                  (std::string(c.name) + " / bpp cold").c_str(), th, t_b,
                  nmfkit::violation(z, c.g, c.b, 1), st.max_steps);
      const double t_w = median_time(reps, [&] { z = c.start; }, [&] {
        nmfkit::nnls_bpp(z, c.g, c.b, th, true, 0, &st);
      });
      std::printf("%-34s %7d %10.5f %12.3e %9d\n",
                  (std::string(c.name) + " / bpp warm (init)").c_str(), th,
                  t_w, nmfkit::violation(z, c.g, c.b, 1), st.max_steps);
    }
  }
}

// ---- whole fits --------------------------------------------------------------

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
  std::printf("%-30s %6zu %9.6f %8.2f  ", name, tr.loss.size(),
              tr.loss.back(), tr.time.back());
  if (hit < tr.loss.size())
    std::printf("%6zu %8.3f\n", hit + 1, tr.time[hit]);
  else
    std::printf("%6s %8s\n", "-", "-");
  std::printf("    trace:");
  for (size_t i : {0, 1, 2, 4, 9, 14, 19, 29, 49, 99, 199, 499, 999, 1999})
    if (i < tr.loss.size()) std::printf(" [%zu] %.6f", i + 1, tr.loss[i]);
  std::printf("\n");
}

void bench_loops(const Problem& p, double target, int threads) {
  const nmfkit::DenseData d(p.x);
  const double x2 = p.x.squaredNorm();
  std::printf("\n== whole fits from NNDSVDa, %d thread(s); target %.7f\n",
              threads, target);
  print_uptime();
  std::printf("%-30s %6s %9s %8s  %6s %8s\n", "method", "iters", "final",
              "seconds", "to tgt", "seconds");

  {  // ANLS, both factors exact by BPP, warm started
    Mat wt = p.w.transpose(), h = p.h, b, g;
    Mat hht = h * h.transpose();
    const Trace tr = run([&] {
      d.left_mult_t(h, b, threads);  // H X', k x m
      nmfkit::nnls_bpp(wt, hht, b, threads, true);
      g = wt * wt.transpose();
      d.left_mult(wt, b, threads);  // W' X, k x n
      nmfkit::nnls_bpp(h, g, b, threads, true);
      hht = h * h.transpose();
      return nmfkit::relative_error(
          nmfkit::sq_error_gram(x2, h, b, g, hht), x2);
    }, 500);
    report("anls-bpp", tr, target);
  }
  for (int inner : {1, 10}) {  // HALS by component, m x k and n x k layouts
    Mat w = p.w, ht = p.h.transpose(), b, g;
    Mat hht = ht.transpose() * ht;
    const Trace tr = run([&] {
      b.resize(kM, kK);
      nmfkit::detail::for_chunks(kM, threads, [&](Index r0, Index len) {
        b.middleRows(r0, len).noalias() =
            p.x.middleRows(r0, len) * ht;  // X H'
      }, 2.0 * kM * kN * kK);
      nmfkit::hals_update(w, hht, b, threads, inner, 0.1);
      g = w.transpose() * w;
      b.resize(kN, kK);
      nmfkit::detail::for_chunks(kN, threads, [&](Index c0, Index len) {
        b.middleRows(c0, len).noalias() =
            p.x.middleCols(c0, len).transpose() * w;  // X' W
      }, 2.0 * kM * kN * kK);
      nmfkit::hals_update(ht, g, b, threads, inner, 0.1);
      hht = ht.transpose() * ht;
      const double e = x2 - 2.0 * ht.cwiseProduct(b).sum() +
                       g.cwiseProduct(hht).sum();
      return nmfkit::relative_error(std::max(e, 0.0), x2);
    }, inner == 1 ? 1000 : 500);
    report(inner == 1 ? "hals-component inner=1"
                      : "hals-component inner=10", tr, target);
  }
  for (int inner : {1, 10}) {  // today's nmf()
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
    par.max_iter = inner == 1 ? 1000 : 500;
    par.threads = threads;
    par.inner = inner;
    nmfkit::nmf(d, p.w, p.h, par, hooks);
    report(inner == 1 ? "nmf() hals (today's default)" : "nmf() hals inner=10",
           hooks.tr, target);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "all";
  const char* file = argc > 2 && std::string(argv[2]) != "-" ? argv[2] : nullptr;
  const double target = argc > 3 ? std::atof(argv[3]) : 0.0111745;
  const auto t0 = Clock::now();
  const Problem p = make_problem(file);
  std::printf("problem: %ld x %ld, rank %ld (%s); start NNDSVDa %.2f s\n",
              static_cast<long>(kM), static_cast<long>(kN),
              static_cast<long>(kK), file ? file : "mt19937",
              seconds_since(t0));
  if (mode == "kernels" || mode == "all") bench_kernels(p);
  if (mode == "loops" || mode == "all") bench_loops(p, target, 1);
  if (mode == "loops2" || mode == "all") bench_loops(p, target, 2);
  return 0;
}
