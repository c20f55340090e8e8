// The loop driver and the parallel policy.
#include <limits>
#include <vector>

#include <doctest/doctest.h>
#include "nmfkit/driver.hpp"
#include "nmfkit/parallel.hpp"

using namespace nmfkit;

namespace {
struct CountingHooks {
  int progress_calls = 0;
  int interrupt_after = -1;  // interrupt at this check (-1: never)
  int checks = 0;
  bool check_interrupt() { return ++checks == interrupt_after; }
  void progress(int, double) { ++progress_calls; }
};
}  // namespace

TEST_CASE("driver: converged, traced, progress once per iteration") {
  CountingHooks hooks;
  Result r;
  drive(100, hooks, r, [](int it) {
    StepOutcome o;
    o.loss = 1.0 / it;
    o.converged = it == 7;
    return o;
  });
  CHECK(r.status == Status::converged);
  CHECK(r.iterations == 7);
  CHECK(r.loss.size() == 7);
  CHECK(hooks.progress_calls == 7);
}

TEST_CASE("driver: max_iter, interrupt and a non-finite step") {
  CountingHooks hooks;
  Result r;
  drive(5, hooks, r, [](int) { return StepOutcome{1.0}; });
  CHECK(r.status == Status::max_iter);
  CHECK(r.iterations == 5);

  CountingHooks stop;
  stop.interrupt_after = 3;
  Result r2;
  drive(100, stop, r2, [](int) { return StepOutcome{1.0}; });
  CHECK(r2.status == Status::interrupted);
  CHECK(r2.iterations == 3);

  // a NaN at iteration 4: rolled back, not traced, not counted
  int state = 0, rolled = 0;
  Result r3;
  CountingHooks h3;
  drive(100, h3, r3, [&](int it) {
    ++state;
    StepOutcome o;
    o.loss = it == 4 ? std::numeric_limits<double>::quiet_NaN() : 1.0;
    return o;
  }, [&]() { ++rolled; --state; });
  CHECK(r3.status == Status::numerical_error);
  CHECK(r3.iterations == 3);
  CHECK(r3.loss.size() == 3);
  CHECK(rolled == 1);
  CHECK(state == 3);

  // an interrupt raised inside the step
  Result r4;
  CountingHooks h4;
  drive(100, h4, r4, [](int it) {
    StepOutcome o{1.0};
    o.interrupted = it == 2;
    return o;
  });
  CHECK(r4.status == Status::interrupted);
  CHECK(r4.iterations == 1);
}

TEST_CASE("RelativeTest: ratio to the first measure; zero first converges") {
  RelativeTest t(0.1);
  CHECK_FALSE(t(10.0));
  CHECK_FALSE(t(2.0));
  CHECK(t(1.0));
  RelativeTest z(1e-4);
  CHECK(z(0.0));
}

TEST_CASE("Parallel: 1 and 2 threads sum to the same bits") {
  std::vector<double> v(100000);
  for (size_t i = 0; i < v.size(); ++i) v[i] = 1.0 / (1.0 + i);
  auto f = [&](Index i) { return v[size_t(i)] * 1e-3 + 1e7 * (i % 3); };
  const double a = Parallel(1).sum(Index(v.size()), f);
  const double b = Parallel(2).sum(Index(v.size()), f);
  CHECK(a == b);
  CHECK(Parallel(0).threads == 1);
  CHECK(Parallel(2).threads_for(1.0) == 1);
  CHECK(Parallel(2).threads_for(1e9) == 2);
}
