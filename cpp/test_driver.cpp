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

TEST_CASE("driver options: no progress, interrupt polled every N") {
  CountingHooks hooks;
  hooks.interrupt_after = 2;  // the second poll interrupts
  DriveOptions opt;
  opt.report = false;
  opt.check_every = 5;
  std::vector<double> trace;
  const DriveResult d = drive_with(opt, 100, hooks, &trace,
                                   [](int) { return StepOutcome{2.0}; });
  CHECK(d.status == Status::interrupted);
  CHECK(d.iterations == 10);  // polled after iterations 5 and 10
  CHECK(hooks.checks == 2);
  CHECK(hooks.progress_calls == 0);
  CHECK(trace.size() == 10);

  // without a trace; a step that reports non-finite state besides its loss
  CountingHooks h2;
  const DriveResult d2 = drive(100, h2, nullptr, [](int it) {
    StepOutcome o{1.0};
    o.finite = it < 3;
    return o;
  });
  CHECK(d2.status == Status::numerical_error);
  CHECK(d2.iterations == 2);
}

TEST_CASE("Parallel: chunk shapes fixed by n; worker slots in range") {
  // the OT shape: at least 64 per chunk, at most 16 chunks
  CHECK(detail::chunk_length(100, detail::ChunkShape{64, 16}) == 64);
  CHECK(detail::chunk_length(4000, detail::ChunkShape{64, 16}) == 250);
  CHECK(detail::chunk_length(4000) == 63);
  for (int threads : {1, 2, 3}) {
    const Parallel par(threads);
    const Index n = 5000;
    std::vector<int> slot_of(static_cast<size_t>(n), -1);
    std::vector<Index> begins;
    std::vector<double> scratch(static_cast<size_t>(par.slots()), 0.0);
    NullHooks none;
    const bool done = par.for_slots(n, &none, [&](Index b, Index l, int s) {
      scratch[static_cast<size_t>(s)] += 1.0;  // per-worker: no race
      for (Index i = b; i < b + l; ++i) slot_of[static_cast<size_t>(i)] = s;
    }, 1e9, detail::ChunkShape{100, 8});
    CHECK(done);
    for (int s : slot_of) {
      CHECK(s >= 0);
      CHECK(s < par.slots());
    }
    double chunks = 0.0;
    for (double c : scratch) chunks += c;
    CHECK(chunks == 8.0);  // 5000 in chunks of 625
  }
  // sum_by_chunk adds chunk values in chunk order, whatever the threads
  std::vector<double> v(20000);
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = 1e8 * (double(i % 7) - 3.0) + 1.0 / (1.0 + i);
  auto f = [&](Index b, Index l) {
    double s = 0.0;
    for (Index i = b; i < b + l; ++i) s += v[size_t(i)];
    return s;
  };
  const detail::ChunkShape ot{64, 16};
  CHECK(Parallel(1).sum_by_chunk(20000, f, 1e9, ot) ==
        Parallel(2).sum_by_chunk(20000, f, 1e9, ot));
}

TEST_CASE("Parallel: an interrupting host stops a slotted loop") {
  CountingHooks hooks;
  hooks.interrupt_after = 2;
  int ran = 0;
  const bool done = Parallel(1).for_slots(
      Index(10000), &hooks, [&](Index, Index, int) { ++ran; });
  CHECK_FALSE(done);
  CHECK(ran > 0);
  CHECK(ran < 64);
}
