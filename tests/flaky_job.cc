// flaky_job: a test job whose piranhas fail while a flag file exists.
//
//   flaky_job TASKS FLAG_FILE
//
// The feeder puts TASKS tasks ("task", i) and collects ("result", i) for
// each, printing "result OK" when every i came back once. A piranha that
// takes a task while FLAG_FILE exists writes "flaky_job: task I refused:
// FLAG_FILE is there" on stderr and throws, so it exits with status 1 and
// the task returns to the space.
#include <unistd.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "piranha/runtime/job.h"

namespace ts = piranha::ts;
using std::int64_t;

namespace {

int feeder(piranha::Feeder& f) {
  if (f.args().size() != 2) {
    std::fprintf(stderr, "usage: flaky_job TASKS FLAG_FILE\n");
    return 2;
  }
  int64_t tasks = std::stoll(f.args()[0]);
  for (int64_t i = 0; i < tasks; ++i) f.put_task(i);
  std::vector<int> seen(static_cast<std::size_t>(tasks), 0);
  int64_t i = 0;
  for (int64_t n = 0; n < tasks; ++n) {
    f.space().in("result", ts::bind(i));
    ++seen.at(static_cast<std::size_t>(i));
  }
  bool ok = true;
  for (int s : seen) ok = ok && s == 1;
  std::printf("flaky_job: %s\n", ok ? "result OK" : "result WRONG");
  std::fflush(stdout);
  return ok ? 0 : 1;
}

void worker(piranha::Piranha& w) {
  const std::string flag = w.args().at(1);
  int64_t i = 0;
  while (auto task = w.take_task(ts::bind(i))) {
    if (access(flag.c_str(), F_OK) == 0) {
      std::fprintf(stderr, "flaky_job: task %lld refused: %s is there\n", static_cast<long long>(i),
                   flag.c_str());
      throw std::runtime_error("task " + std::to_string(i) + " failed on purpose");
    }
    w.complete(*task, "result", i);
  }
}

}  // namespace

PIRANHA_JOB(feeder, worker, nullptr)
