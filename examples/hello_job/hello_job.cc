// hello_job: the shortest complete Piranha job. It sums i*i for i below one
// million in 100 tasks. A task is ("task", next, end, sum): sum already holds
// the squares of the task's numbers below next. A piranha told to retreat
// stops where it is and its retreat function puts the task back as it now
// stands, so the next piranha goes on from there instead of starting again.
//
//   PIRANHA_LOCAL_PIRANHAS=2 hello_job      alone on this host
//   piranha submit hello_job                on a pool
#include <cstdint>
#include <cstdio>

#include "piranha/runtime/job.h"

namespace ts = piranha::ts;
using std::int64_t;

constexpr int64_t kNumbers = 1'000'000, kTasks = 100;

int feeder(piranha::Feeder& f) {
  for (int64_t first = 0; first < kNumbers; first += kNumbers / kTasks)
    f.put_task(first, first + kNumbers / kTasks, int64_t{0});
  int64_t total = 0, sum = 0;
  for (int64_t t = 0; t < kTasks; ++t) {
    f.space().in("sum", ts::bind(sum));
    total += sum;
  }
  const int64_t expected = (kNumbers - 1) * kNumbers * (2 * kNumbers - 1) / 6;
  std::printf("hello_job: the squares below %lld sum to %lld: %s\n", static_cast<long long>(kNumbers),
              static_cast<long long>(total), total == expected ? "OK" : "WRONG");
  return total == expected ? 0 : 1;  // the job's exit status
}

void piranha_worker(piranha::Piranha& w) {
  int64_t next = 0, end = 0, sum = 0;
  while (auto task = w.take_task(ts::bind(next), ts::bind(end), ts::bind(sum))) {  // nullopt: stop
    for (; next < end; ++next) {
      sum += next * next;
      if (next % 1000 == 999 && w.should_retreat()) {  // cheap; ask between steps
        task->set_progress(ts::Tuple::of("task", next + 1, end, sum));
        return;  // the runtime calls retreat() for the task still held
      }
    }
    w.complete(*task, "sum", sum);  // ends the task and writes its result, atomically
  }
}

// Puts the task back with the progress made, or as taken if there is none.
void retreat(piranha::Piranha& w, piranha::Task& task) {
  w.put_back(task, {task.progress().size() ? task.progress() : task.tuple()});
}

PIRANHA_JOB(feeder, piranha_worker, retreat)
