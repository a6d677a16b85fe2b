// crash_job: a test job whose feeder crashes (abort(), SIGABRT) after the job
// is running, so `piranha submit` has to record the job's end itself.
#include <cstdlib>

#include "piranha/runtime/job.h"

namespace {

int feeder(piranha::Feeder& f) {
  f.put_task(std::int64_t{1});
  std::abort();
}

void worker(piranha::Piranha& w) {
  while (auto task = w.take_task(piranha::ts::formal<std::int64_t>))
    w.complete(*task, "result", std::int64_t{1});
}

}  // namespace

PIRANHA_JOB(feeder, worker, nullptr)
