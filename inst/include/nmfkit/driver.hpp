// The one loop driver of the iterative solvers. A solver writes only its
// update step; the driver keeps the trace, calls the progress hook, checks
// finiteness (restoring the last finite iterate), applies the step's
// convergence verdict, asks for interrupts and sets the status.
#pragma once

#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "hooks.hpp"
#include "types.hpp"

namespace nmfkit {

/// What one iteration of a solver reports to the driver.
struct StepOutcome {
  double loss = 0.0;         // traced and passed to hooks.progress()
  bool converged = false;    // the solver's own stopping test is met
  bool finite = true;        // false: something besides `loss` is not finite
  bool interrupted = false;  // a hooked parallel loop inside was interrupted
};

/// How a driven loop ended.
struct DriveResult {
  Status status = Status::max_iter;
  int iterations = 0;  // completed (finite, traced) iterations
};

/// Does nothing: for solvers that keep no previous iterate.
struct NoRollback {
  void operator()() const {}
};

/// How a loop is watched. The defaults suit a solver's outer loop; an inner
/// loop (a solver's start, run before its outer loop) reports no progress
/// and may poll the host less often when its iterations are very cheap.
struct DriveOptions {
  bool report = true;   // call hooks.progress(it, loss)
  int check_every = 1;  // hooks.check_interrupt() after every this many
};

/// Runs step(it) for it = 1, ..., max_iter. After each step, in this order:
///  - interrupted inside the step: stop, Status::interrupted;
///  - loss or step not finite: rollback() (the solver restores its last
///    finite iterate), stop, Status::numerical_error; nothing is traced;
///  - otherwise trace the loss (if `trace` is given), count the iteration,
///    hooks.progress(it, loss) (if opt.report);
///  - converged: stop, Status::converged;
///  - every opt.check_every iterations, hooks.check_interrupt(): stop,
///    Status::interrupted.
/// Hooks are called on the calling thread only.
template <class Hooks, class Step, class Rollback = NoRollback>
DriveResult drive_with(const DriveOptions& opt, int max_iter, Hooks& hooks,
                       std::vector<double>* trace, Step&& step,
                       Rollback&& rollback = Rollback{}) {
  DriveResult d;
  const int every = opt.check_every < 1 ? 1 : opt.check_every;
  for (int it = 1; it <= max_iter; ++it) {
    const StepOutcome o = step(it);
    if (o.interrupted) {
      d.status = Status::interrupted;
      break;
    }
    if (!o.finite || !std::isfinite(o.loss)) {
      rollback();
      d.status = Status::numerical_error;
      break;
    }
    if (trace != nullptr) trace->push_back(o.loss);
    d.iterations = it;
    if (opt.report) hooks.progress(it, o.loss);
    if (o.converged) {
      d.status = Status::converged;
      break;
    }
    if (it % every == 0 && hooks.check_interrupt()) {
      d.status = Status::interrupted;
      break;
    }
  }
  return d;
}

/// drive_with() with the default options: a solver's outer loop.
template <class Hooks, class Step, class Rollback = NoRollback>
DriveResult drive(int max_iter, Hooks& hooks, std::vector<double>* trace,
                  Step&& step, Rollback&& rollback = Rollback{}) {
  return drive_with(DriveOptions{}, max_iter, hooks, trace,
                    std::forward<Step>(step),
                    std::forward<Rollback>(rollback));
}

/// drive() into a Result: its loss trace, iteration count and status.
template <class Hooks, class Step, class Rollback = NoRollback>
void drive(int max_iter, Hooks& hooks, Result& r, Step&& step,
           Rollback&& rollback = Rollback{}) {
  const DriveResult d = drive(max_iter, hooks, &r.loss,
                              std::forward<Step>(step),
                              std::forward<Rollback>(rollback));
  r.status = d.status;
  r.iterations = d.iterations;
}

/// The relative stopping test of the NMF solvers: converged once the
/// measure (a projected-gradient violation) is at most tol times its value
/// at the first iteration, or the first value is zero. With a `reference`
/// the test is relative to it instead (a warm start, whose own first
/// violation is already small, stops relative to the fit it started from);
/// first() is the first measure seen either way, the fit's own reference.
class RelativeTest {
 public:
  explicit RelativeTest(double tol,
                        std::optional<double> reference = std::nullopt)
      : tol_(tol), reference_(reference) {}
  bool operator()(double measure) {
    if (first_ < 0.0) first_ = measure;
    const double ref = reference_ ? *reference_ : first_;
    return ref == 0.0 || measure <= tol_ * ref;
  }
  /// The first measure seen; NaN before any.
  double first() const { return first_ < 0.0 ? NAN : first_; }

 private:
  double tol_;
  std::optional<double> reference_;
  double first_ = -1.0;
};

}  // namespace nmfkit
