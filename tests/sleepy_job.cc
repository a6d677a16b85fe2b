// sleepy_job: a test job whose tasks take a known time.
//
//   sleepy_job TASKS MS
//
// Each task ("task", i, MS) busy-waits MS milliseconds in 1 ms steps,
// checking should_retreat() between them, and completes with ("result", i).
// The feeder collects TASKS results, then checks that every i arrived exactly
// once and no extra result is left, and prints "result OK" or what is wrong.
// The piranha prints "piranha PID took task I" as it starts a task, so tests
// can kill it mid-task; "piranha PID retreats from task I" (or "piranha PID
// stops" between tasks), unflushed, when it is told to retreat; and "piranha
// PID ended its ordinary way" from an atexit handler.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "piranha/runtime/job.h"

namespace ts = piranha::ts;
using std::int64_t;

namespace {

int feeder(piranha::Feeder& f) {
  if (f.args().size() != 2) {
    std::fprintf(stderr, "usage: sleepy_job TASKS MS\n");
    return 2;
  }
  int64_t tasks = std::stoll(f.args()[0]), ms = std::stoll(f.args()[1]);
  for (int64_t i = 0; i < tasks; ++i) f.put_task(i, ms);
  std::vector<int> seen(static_cast<std::size_t>(tasks), 0);
  int64_t i = 0;
  for (int64_t n = 0; n < tasks; ++n) {
    f.space().in("result", ts::bind(i));
    ++seen.at(static_cast<std::size_t>(i));
  }
  int64_t extra = 0;
  while (f.space().inp("result", ts::formal<int64_t>)) ++extra;
  int64_t missing = 0, twice = 0;
  for (int s : seen) {
    if (s == 0) ++missing;
    if (s > 1) ++twice;
  }
  bool ok = missing == 0 && twice == 0 && extra == 0;
  std::printf("sleepy_job: %s (%lld tasks, %lld missing, %lld twice, %lld extra)\n",
              ok ? "result OK" : "result WRONG", static_cast<long long>(tasks),
              static_cast<long long>(missing), static_cast<long long>(twice), static_cast<long long>(extra));
  std::fflush(stdout);
  return ok ? 0 : 1;
}

// Printed, flushed, by a piranha whose process ends its ordinary way (not
// by one that retreated: its process ends with _Exit).
void ordinary_end() {
  std::printf("piranha %d ended its ordinary way\n", static_cast<int>(getpid()));
  std::fflush(stdout);
}

void worker(piranha::Piranha& w) {
  std::atexit(ordinary_end);
  int64_t i = 0, ms = 0;
  while (auto task = w.take_task(ts::bind(i), ts::bind(ms))) {
    std::printf("piranha %d took task %lld\n", static_cast<int>(getpid()), static_cast<long long>(i));
    std::fflush(stdout);
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < until) {
      if (w.should_retreat()) {
        // Not flushed: the runtime flushes a retreating piranha's output.
        std::printf("piranha %d retreats from task %lld\n", static_cast<int>(getpid()),
                    static_cast<long long>(i));
        return;  // the runtime puts the task back
      }
      auto step = std::chrono::steady_clock::now() + std::chrono::milliseconds(1);
      while (std::chrono::steady_clock::now() < step) {
      }
    }
    w.complete(*task, "result", i);
  }
  // Told between tasks (or the job ended): also not flushed.
  if (w.should_retreat()) std::printf("piranha %d stops\n", static_cast<int>(getpid()));
}

}  // namespace

PIRANHA_JOB(feeder, worker, nullptr)
