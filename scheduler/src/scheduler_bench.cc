// scheduler_bench: the scheduler's performance figures for docs/performance.md.
//   1. one strategy on 10,000 nodes for one simulated week (synthetic trace);
//   2. one scheduling decision for 10,000 nodes and 1,000 queued jobs.
// Prints one line per figure; asserts nothing about speed.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "piranha/base/clock.h"
#include "piranha/scheduler/node_history.h"
#include "piranha/scheduler/predictor.h"
#include "piranha/scheduler/simulator.h"
#include "piranha/scheduler/trace_tools.h"

using namespace piranha::sched;
using piranha::Clock;

namespace {

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Outlook : NodeOutlook {
  std::vector<NodeHistory>* h;
  Predictor* p;
  double ap_length(std::size_t n) const override { return p->predict(n, (*h)[n]); }
  double available_fraction(std::size_t n) const override { return (*h)[n].available_fraction(10); }
};

}  // namespace

int main(int argc, char** argv) {
  const int nodes = argc > 1 ? std::stoi(argv[1]) : 10000;
  const int jobs = argc > 2 ? std::stoi(argv[2]) : 1000;
  auto t0 = Clock::now();
  SynthOptions so;
  so.nodes = nodes;
  so.days = 7;
  const auto trace = synthesize_trace(so);
  std::printf("synthetic trace: %d nodes x 7 days in %.2f s (%.1f%% available)\n", nodes, since(t0),
              100 * trace.available_fraction());

  // 1. A week on every node: a workload large enough to keep them busy.
  WorkloadOptions wo;
  wo.jobs = 200;
  wo.interarrival = 30;
  wo.max_tasks = 200000;
  const auto workload = random_workload(1, wo);
  for (const char* name : {"TSK", "SRTA(0.5)", "FAIR"}) {
    auto s = make_strategy(name);
    SimOptions o;
    o.max_steps = 7 * 1440;
    t0 = Clock::now();
    auto r = simulate(trace, workload, *s, o, 1);
    const double sec = since(t0);
    std::printf("week on %d nodes, %-10s %6.2f s  (%.1f ns per node-step, %lld steps, finished %s)\n", nodes,
                name, sec, 1e9 * sec / (static_cast<double>(r.steps) * nodes),
                static_cast<long long>(r.steps), r.finished ? "yes" : "no");
  }

  // 2. One decision: 10,000 nodes with a day of history, 1,000 queued jobs.
  std::vector<JobView> queue;
  Rng rng(3);
  for (int j = 0; j < jobs; ++j) {
    const auto tasks = rng.uniform_int(1, 1000);
    queue.push_back({j + 1, static_cast<double>(j), static_cast<double>(rng.uniform_int(1, 10)), tasks,
                     rng.uniform_int(1, tasks), static_cast<double>(rng.uniform_int(0, 5000))});
  }
  auto predictor = make_predictor("REC_HIST", 10, {}, static_cast<std::size_t>(nodes));
  std::vector<NodeHistory> hist(static_cast<std::size_t>(nodes), NodeHistory(predictor->lookback() + 1));
  for (int n = 0; n < nodes; ++n)
    for (std::int64_t s = 0; s < 1440; ++s)
      hist[static_cast<std::size_t>(n)].observe(trace.available(static_cast<std::size_t>(n), s));
  Outlook outlook;
  outlook.h = &hist;
  outlook.p = predictor.get();
  std::vector<Slot> current(static_cast<std::size_t>(nodes), 0), out(static_cast<std::size_t>(nodes));
  for (const char* name : {"TSK", "SRT", "SRTA(0.5)", "SRTFIT", "LETFIT", "RND", "FAIR", "ROR"}) {
    auto s = make_strategy(name);
    Invocation inv{1440, queue, current, &outlook, &rng, false};
    const int reps = 20;
    t0 = Clock::now();
    for (int i = 0; i < reps; ++i) s->assign(inv, out);
    std::printf("one decision, %d nodes, %d jobs, %-10s %8.3f ms\n", nodes, jobs, name,
                1e3 * since(t0) / reps);
  }
  return 0;
}
