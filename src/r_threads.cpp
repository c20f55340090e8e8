// Machine settings of the core: the number of threads OpenMP can run on
// this machine, so that R caps a thread setting before the runtime is asked
// for more (libgomp aborts the process when it cannot create them), and the
// switch of the AVX2/FMA product kernels.
#include <Rcpp.h>

#include <nmfkit/kernels.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#ifdef _OPENMP
#include <omp.h>
#endif

// [[Rcpp::export]]
int r_max_threads() {
#ifdef _OPENMP
  return std::max(1, std::min(omp_get_num_procs(), omp_get_thread_limit()));
#else
  return 1;
#endif
}

// NMFKIT_SIMD=generic in the environment keeps Eigen's products: read once,
// when R loads the package, and passed into the core (which reads no
// environment).
// [[Rcpp::init]]
void r_simd_from_environment(DllInfo* /*dll*/) {
  const char* env = std::getenv("NMFKIT_SIMD");
  if (env != nullptr && std::strcmp(env, "generic") == 0)
    nmfkit::set_simd(false);
}

// The AVX2/FMA product kernels: on (when the processor has them) or off.
// Returns whether they are in use. For tests and benchmarks.
// [[Rcpp::export]]
bool r_set_simd(bool on) { return nmfkit::set_simd(on); }

// [[Rcpp::export]]
bool r_simd_enabled() { return nmfkit::simd_enabled(); }
