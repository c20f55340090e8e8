// The number of threads OpenMP can run on this machine, so that R caps a
// thread setting before the runtime is asked for more (libgomp aborts the
// process when it cannot create them).
#include <Rcpp.h>

#include <algorithm>
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
