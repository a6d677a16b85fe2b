#include "piranha/scheduler/experiment.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

namespace piranha::sched {

std::vector<Workload> random_workloads(int seeds, const WorkloadOptions& options) {
  std::vector<Workload> w;
  for (int s = 0; s < seeds; ++s)
    w.push_back({static_cast<std::uint64_t>(s), random_workload(static_cast<std::uint64_t>(s), options)});
  return w;
}

void parallel_for(std::size_t count, unsigned threads, const std::function<void(std::size_t)>& work,
                  const std::function<void(std::size_t, std::size_t)>& progress) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  threads = static_cast<unsigned>(std::min<std::size_t>(threads, std::max<std::size_t>(count, 1)));
  std::atomic<std::size_t> next{0};
  std::size_t done = 0;
  std::mutex mu;
  std::condition_variable cv;
  std::exception_ptr error;
  auto worker = [&] {
    for (std::size_t i; (i = next++) < count;) {
      try {
        work(i);
      } catch (...) {
        std::lock_guard lock(mu);
        if (!error) error = std::current_exception();
      }
      std::lock_guard lock(mu);
      ++done;
      cv.notify_all();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned k = 1; k < threads; ++k) pool.emplace_back(worker);
  if (!progress) {
    worker();
  } else {
    // The calling thread reports progress while the pool works.
    if (pool.empty()) pool.emplace_back(worker);
    std::unique_lock lock(mu);
    while (done < count) {
      cv.wait_for(lock, std::chrono::milliseconds(250));
      progress(done, count);
    }
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

Experiment run_experiment(const AvailabilityTrace& trace, const std::vector<std::string>& strategies,
                          const std::vector<Workload>& workloads, const SimOptions& options, unsigned threads,
                          const std::function<void(std::size_t, std::size_t)>& progress,
                          const RunFunction& run) {
  validate(options, trace);
  std::vector<std::string> names;
  for (const auto& s : strategies) {
    auto c = canonical_strategy_name(s);
    if (std::find(names.begin(), names.end(), c) == names.end()) names.push_back(c);
  }
  if (std::find(names.begin(), names.end(), "TSK") == names.end()) names.push_back("TSK");
  Experiment e;
  e.results.resize(names.size() * workloads.size());
  SimOptions o = options;
  o.progress = {};  // many short runs report as a batch instead
  parallel_for(
      e.results.size(), threads,
      [&](std::size_t i) {
        const auto& w = workloads[i % workloads.size()];
        const std::string& name = names[i / workloads.size()];
        if (run) {
          e.results[i] = run(trace, w.jobs, name, o, w.seed);
        } else {
          auto s = make_strategy(name);
          e.results[i] = simulate(trace, w.jobs, *s, o, w.seed);
        }
      },
      progress);
  const auto tsk = static_cast<std::size_t>(std::find(names.begin(), names.end(), "TSK") - names.begin());
  for (std::size_t k = 0; k < names.size(); ++k) {
    StrategySummary s;
    s.strategy = names[k];
    for (std::size_t w = 0; w < workloads.size(); ++w) {
      const SimResult& r = e.results[k * workloads.size() + w];
      s.mean_turnaround += r.mean_turnaround;
      s.normalized_turnaround += r.mean_turnaround / e.results[tsk * workloads.size() + w].mean_turnaround;
      ++s.runs;
      s.unfinished += r.finished ? 0 : 1;
    }
    if (s.runs > 0) {
      s.mean_turnaround /= s.runs;
      s.normalized_turnaround /= s.runs;
    }
    e.summary.push_back(s);
  }
  return e;
}

}  // namespace piranha::sched
