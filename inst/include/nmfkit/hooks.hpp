// The contract through which a host (R, a test) observes and stops a solver.
#pragma once

namespace nmfkit {

/// A Hooks type has two members, called on the calling thread only, never
/// inside a parallel region:
///   bool check_interrupt();           true: stop now with Status::interrupted
///   void progress(int iter, double loss);
/// Solvers take Hooks as a template parameter, so the default costs nothing.
struct NullHooks {
  bool check_interrupt() { return false; }
  void progress(int /*iter*/, double /*loss*/) {}
};

}  // namespace nmfkit
