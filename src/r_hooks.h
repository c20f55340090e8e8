// R's side of the core's Hooks contract: interrupts and verbose progress.
#pragma once

#include <Rcpp.h>

namespace nmfkit_r {

inline void check_interrupt_fn(void* /*unused*/) { R_CheckUserInterrupt(); }

/// Hooks for solvers called from R. check_interrupt() asks R, without a
/// longjmp through C++ frames, whether the user pressed Ctrl-C; the glue then
/// re-raises the interrupt once the core has returned (see finish()).
/// progress() calls an R function(iter, loss) when one is given.
class RHooks {
 public:
  explicit RHooks(SEXP callback = R_NilValue) : callback_(callback) {}
  bool check_interrupt() {
    if (!interrupted_)
      interrupted_ = R_ToplevelExec(check_interrupt_fn, nullptr) == FALSE;
    return interrupted_;
  }
  void progress(int iter, double loss) {
    if (Rf_isFunction(callback_)) {
      Rcpp::Function f(callback_);
      f(iter, loss);
    }
  }
  /// Re-raises a user interrupt seen during the solve.
  void finish() const {
    if (interrupted_) throw Rcpp::internal::InterruptedException();
  }

 private:
  SEXP callback_;
  bool interrupted_ = false;
};

}  // namespace nmfkit_r
