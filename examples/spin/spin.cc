// spin: a job whose tasks burn a set amount of CPU time, for experiments in
// which the scheduler must learn a job's task length.
//
//   spin --tasks N --task-ms T [--sleep]
//
// The feeder puts N tasks ("task", i, T). A piranha burns T ms of its own
// thread's CPU time on each (so a busy node makes a task slower, not
// shorter), asking should_retreat() every millisecond, and completes it with
// ("result", i). With --sleep it waits T ms of wall-clock time instead: many
// nodes on one host (pools in network namespaces, bench/campus-live.sh) then
// each behave as a machine of their own, which CPU-bound tasks sharing the
// host's cores would not. A piranha told to retreat mid-task just stops: the runtime
// puts the task back unchanged and another piranha redoes it. The feeder
// collects N results and checks that every index arrived exactly once.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "piranha/runtime/job.h"

namespace ts = piranha::ts;
using std::int64_t;

namespace {

constexpr int64_t kMaxTasks = 10'000'000;
constexpr int64_t kMaxTaskMs = 24 * 3600 * 1000;
// Results taken in one request at most (the server's limit is larger).
constexpr int64_t kCollectBatch = 100'000;

struct Options {
  int64_t tasks = 0;
  int64_t task_ms = -1;
  bool sleep = false;
};

constexpr const char* kUsage = "usage: spin --tasks N --task-ms T [--sleep]";

[[noreturn]] void fail(const std::string& problem) {
  std::fprintf(stderr, "spin: %s\n%s\n", problem.c_str(), kUsage);
  std::exit(2);
}

// The value of option `name`: an integer in [lo, hi], or exit 2 saying why.
int64_t integer(const std::string& name, const std::string& text, int64_t lo, int64_t hi) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || v < lo || v > hi)
    fail(name + " \"" + text + "\" must be an integer from " + std::to_string(lo) + " to " +
         std::to_string(hi));
  return v;
}

// Parses the job's arguments; exits with status 2 and the problem on error.
Options parse(const std::vector<std::string>& args) {
  Options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "spin --tasks N --task-ms T: a Piranha job of N tasks, each burning T ms of CPU time.\n"
          "  --tasks N    how many tasks (1 to %lld)\n"
          "  --task-ms T  CPU milliseconds per task (0 to %lld)\n"
          "  --sleep      each task waits T ms of wall-clock time instead of burning CPU\n"
          "The feeder checks that every task was done exactly once and prints a summary.\n"
          "Run it with `piranha submit spin --tasks N --task-ms T`, or alone with\n"
          "PIRANHA_LOCAL_PIRANHAS=2 spin --tasks N --task-ms T.\n",
          static_cast<long long>(kMaxTasks), static_cast<long long>(kMaxTaskMs));
      std::exit(0);
    }
    if (a == "--sleep") {
      o.sleep = true;
      continue;
    }
    if (a != "--tasks" && a != "--task-ms") fail("unknown argument \"" + a + "\"");
    if (i + 1 >= args.size()) fail(a + " needs a value");
    if (a == "--tasks")
      o.tasks = integer(a, args[++i], 1, kMaxTasks);
    else
      o.task_ms = integer(a, args[++i], 0, kMaxTaskMs);
  }
  if (o.tasks == 0) fail("--tasks is required");
  if (o.task_ms < 0) fail("--task-ms is required");
  return o;
}

std::chrono::nanoseconds thread_cpu_time() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return std::chrono::seconds(t.tv_sec) + std::chrono::nanoseconds(t.tv_nsec);
}

// "3, 7, 12" for the first few indices, "... (N in all)" after them.
std::string some(const std::vector<int64_t>& indices) {
  constexpr std::size_t kShown = 10;
  std::string s;
  for (std::size_t k = 0; k < indices.size() && k < kShown; ++k)
    s += (k ? ", " : "") + std::to_string(indices[k]);
  if (indices.size() > kShown) s += ", ... (" + std::to_string(indices.size()) + " in all)";
  return s;
}

int feeder(piranha::Feeder& f) {
  Options o = parse(f.args());
  auto started = std::chrono::steady_clock::now();
  std::vector<ts::Tuple> tasks;
  for (int64_t i = 0; i < o.tasks; ++i) {
    tasks.push_back(ts::Tuple::of("task", i, o.task_ms));
    if (tasks.size() == 50'000 || i + 1 == o.tasks) {
      f.put_tasks(tasks);
      tasks.clear();
    }
  }

  // Collect: wait for one result, then take whatever else is there at once.
  std::vector<int64_t> seen(static_cast<std::size_t>(o.tasks), 0);
  std::vector<int64_t> strays;  // indices out of range
  auto count = [&](const ts::Tuple& r) {
    int64_t i = r.get<int64_t>(1);
    if (i < 0 || i >= o.tasks)
      strays.push_back(i);
    else
      ++seen[static_cast<std::size_t>(i)];
  };
  for (int64_t got = 0; got < o.tasks;) {
    count(f.space().in("result", ts::formal<int64_t>));
    ++got;
    if (got == o.tasks) break;
    auto more = static_cast<std::size_t>(std::min<int64_t>(o.tasks - got, kCollectBatch));
    for (const auto& r : f.space().in_many(more, "result", ts::formal<int64_t>)) {
      count(r);
      ++got;
    }
  }
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  // A result written twice would still be here.
  while (auto r = f.space().inp("result", ts::formal<int64_t>)) count(*r);

  std::vector<int64_t> missing, twice;
  for (int64_t i = 0; i < o.tasks; ++i) {
    if (seen[static_cast<std::size_t>(i)] == 0) missing.push_back(i);
    if (seen[static_cast<std::size_t>(i)] > 1) twice.push_back(i);
  }
  if (!missing.empty()) std::fprintf(stderr, "spin: tasks never done: %s\n", some(missing).c_str());
  if (!twice.empty()) std::fprintf(stderr, "spin: tasks done more than once: %s\n", some(twice).c_str());
  if (!strays.empty())
    std::fprintf(stderr, "spin: results for tasks that do not exist: %s\n", some(strays).c_str());
  bool ok = missing.empty() && twice.empty() && strays.empty();
  std::printf("spin: %s: %lld tasks of %lld ms, wall %.3f s\n", ok ? "every task done once" : "result WRONG",
              static_cast<long long>(o.tasks), static_cast<long long>(o.task_ms), wall);
  std::fflush(stdout);
  return ok ? 0 : 1;
}

// The job's options, which the piranhas get as the feeder does (main parses them).
Options options;

// The clock a task's T ms are counted on.
std::chrono::nanoseconds task_clock() {
  if (options.sleep) return std::chrono::steady_clock::now().time_since_epoch();
  return thread_cpu_time();
}

void piranha_worker(piranha::Piranha& w) {
  int64_t i = 0, ms = 0;
  while (auto task = w.take_task(ts::bind(i), ts::bind(ms))) {
    const auto until = task_clock() + std::chrono::milliseconds(ms);
    auto next_check = task_clock();
    for (auto now = next_check; now < until; now = task_clock()) {
      if (options.sleep)
        std::this_thread::sleep_for(
            std::min<std::chrono::nanoseconds>(until - now, std::chrono::milliseconds(1)));
      if (now >= next_check) {
        // Told to retreat mid-task: stop; the runtime puts the task back.
        if (w.should_retreat()) return;
        next_check = now + std::chrono::milliseconds(1);
      }
    }
    w.complete(*task, "result", i);
  }
}

}  // namespace

// The arguments are checked before the runtime connects, so --help and
// usage errors need no server.
int main(int argc, char** argv) {
  options = parse(std::vector<std::string>(argv + 1, argv + argc));
  return piranha::run_job(argc, argv, piranha::JobFunctions{feeder, piranha_worker, nullptr});
}
