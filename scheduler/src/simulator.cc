#include "piranha/scheduler/simulator.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "piranha/scheduler/node_history.h"
#include "piranha/scheduler/predictor.h"
#include "piranha/scheduler/task_time.h"

namespace piranha::sched {
namespace {

// Predictions from the nodes' histories, as a strategy sees them at step t.
class HistoryOutlook : public NodeOutlook {
 public:
  HistoryOutlook(const std::vector<NodeHistory>& h, const Predictor& p, std::int64_t window)
      : h_(h), p_(p), window_(window) {}
  double ap_length(std::size_t n) const override { return p_.predict(n, h_[n]); }
  double available_fraction(std::size_t n) const override { return h_[n].available_fraction(window_); }

 private:
  const std::vector<NodeHistory>& h_;
  const Predictor& p_;
  std::int64_t window_;
};

// Availability of one node at successive trace steps, touching the trace
// only where availability changes.
struct Cursor {
  bool available = false;
  std::int64_t until = 0;  // availability holds for trace steps < until
};

}  // namespace

void validate(const SimOptions& o, const AvailabilityTrace& trace) {
  if (o.period < 1)
    throw std::invalid_argument("--period " + std::to_string(o.period) + " must be at least 1");
  if (o.window < 1)
    throw std::invalid_argument("--window " + std::to_string(o.window) + " must be at least 1");
  if (o.window > trace.length)
    throw std::invalid_argument("--window " + std::to_string(o.window) + " is longer than the trace (" +
                                std::to_string(trace.length) + " steps)");
  if (o.start < 0 || o.start >= trace.length)
    throw std::invalid_argument("--start " + std::to_string(o.start) + " is outside the trace (0.." +
                                std::to_string(trace.length - 1) + ")");
  if (o.max_steps < 0) throw std::invalid_argument("--max-steps must not be negative");
  if (trace.nodes.empty()) throw std::invalid_argument("the trace has no nodes");
  make_predictor(o.predictor, o.window, Calendar{}, 0);  // throws PredictorError for an unknown name
}

SimResult simulate(const AvailabilityTrace& trace, const std::vector<Job>& input, Strategy& strategy,
                   const SimOptions& opt, std::uint64_t seed) {
  validate(opt, trace);
  std::vector<Job> jobs = input;
  std::stable_sort(jobs.begin(), jobs.end(), queue_before);
  const std::size_t nodes = trace.nodes.size();
  const std::size_t njobs = jobs.size();
  const std::int64_t length = trace.length;
  const std::int64_t max_steps = opt.max_steps > 0 ? opt.max_steps : 20 * length;

  // Predictions are kept up only for strategies that read them.
  const bool outlook_needed = strategy.uses_outlook();
  std::unique_ptr<Predictor> predictor;
  std::vector<NodeHistory> history;
  if (outlook_needed) {
    const std::string name = strategy.predictor().empty() ? opt.predictor : strategy.predictor();
    predictor = make_predictor(name, opt.window, Calendar::for_step_seconds(trace.step_seconds), nodes);
    history.assign(nodes, NodeHistory(std::max(predictor->lookback(), opt.window) + 1));
  }
  std::optional<HistoryOutlook> outlook;
  if (outlook_needed) outlook.emplace(history, *predictor, opt.window);
  Rng rng(seed, 2);

  std::vector<std::int64_t> tasks_left(njobs), attained(njobs, 0);
  std::vector<std::optional<std::int64_t>> completion(njobs);
  std::vector<TaskTimeEstimator> estimate(njobs, TaskTimeEstimator(opt.cold_start));
  std::vector<int> queue;                    // job indices in queue order
  std::vector<Slot> position(njobs, kIdle);  // job index -> queue position at the last invocation
  std::vector<std::int64_t> length_at_arrival(njobs, 0);  // queue length right after the job arrived
  std::vector<std::int64_t> arrival_lengths;              // the same, per queue position
  for (std::size_t j = 0; j < njobs; ++j) tasks_left[j] = jobs[j].tasks;

  std::vector<int> job(nodes, -1), prev(nodes, -1);  // JOB[n], PREV[n] as job indices
  std::vector<std::int64_t> active(nodes, 0);
  std::vector<Cursor> cursor(nodes);
  std::vector<char> up(nodes, 0);
  std::vector<JobView> views;
  std::vector<Slot> current(nodes), chosen(nodes);

  SimResult r;
  r.strategy = strategy.name();
  r.seed = seed;
  std::size_t next_arrival = 0, remaining = njobs;
  bool event = false;
  std::int64_t s = opt.start;  // trace step of t
  std::int64_t t = 0;
  for (; remaining > 0 && t < max_steps; ++t) {
    // 1. Arrivals.
    while (next_arrival < njobs && jobs[next_arrival].arrival == t) {
      length_at_arrival[next_arrival] = static_cast<std::int64_t>(queue.size()) + 1;
      queue.push_back(static_cast<int>(next_arrival++));
      event = true;
    }
    // 2. The strategy, from the queue and availability at steps < t.
    if (t % opt.period == 0 || (opt.on_events && event)) {
      event = false;
      views.clear();
      arrival_lengths.clear();
      for (std::size_t q = 0; q < queue.size(); ++q) {
        const int j = queue[q];
        arrival_lengths.push_back(length_at_arrival[static_cast<std::size_t>(j)]);
        const Job& jb = jobs[static_cast<std::size_t>(j)];
        std::int64_t task_time = jb.task_time;
        if (opt.task_times == TaskTimes::kObserved)
          task_time = std::llround(estimate[static_cast<std::size_t>(j)].estimate());
        views.push_back({jb.id, static_cast<double>(jb.arrival), static_cast<double>(task_time), jb.tasks,
                         tasks_left[static_cast<std::size_t>(j)],
                         static_cast<double>(attained[static_cast<std::size_t>(j)])});
        position[static_cast<std::size_t>(j)] = static_cast<Slot>(q);
      }
      for (std::size_t n = 0; n < nodes; ++n) {
        const int j = job[n];
        current[n] =
            j < 0 || completion[static_cast<std::size_t>(j)] ? kIdle : position[static_cast<std::size_t>(j)];
      }
      Invocation inv;
      inv.now = static_cast<double>(t);
      inv.queue = views;
      inv.current = current;
      inv.outlook = outlook ? &*outlook : nullptr;
      inv.rng = &rng;
      inv.spill = opt.spill;
      inv.arrival_queue_length = arrival_lengths;
      strategy.assign(inv, chosen);
      for (std::size_t n = 0; n < nodes; ++n)
        job[n] = chosen[n] == kIdle ? -1 : queue[static_cast<std::size_t>(chosen[n])];
    }
    // 3. Every node in index order.
    bool completed = false;
    for (std::size_t n = 0; n < nodes; ++n) {
      Cursor& c = cursor[n];
      if (t == 0 || s == 0 || s >= c.until) {
        c.available = trace.available(n, s);
        c.until = trace.next_change(n, s);
      }
      up[n] = c.available;
      const int j = job[n];
      if (j != prev[n] && active[n] > 0) {
        ++r.scheduler_retreats;
        r.lost_steps += active[n];
        active[n] = 0;
      }
      if (j < 0 || completion[static_cast<std::size_t>(j)]) {
        active[n] = 0;
        continue;
      }
      const auto ju = static_cast<std::size_t>(j);
      if (c.available) {
        ++active[n];
        ++attained[ju];
        ++r.busy_steps;
      } else if (active[n] > 0) {
        ++r.owner_retreats;
        r.lost_steps += active[n];
        active[n] = 0;
      }
      if (active[n] == jobs[ju].task_time) {
        active[n] = 0;
        estimate[ju].observe(static_cast<double>(jobs[ju].task_time));
        if (--tasks_left[ju] == 0) {
          completion[ju] = t + 1;
          --remaining;
          completed = true;
        }
      }
    }
    // 4. Completed jobs leave the queue; PREV = JOB.
    if (completed) {
      std::erase_if(queue, [&](int j) { return completion[static_cast<std::size_t>(j)].has_value(); });
      event = true;
    }
    prev = job;
    if (outlook_needed)
      for (std::size_t n = 0; n < nodes; ++n) {
        history[n].observe(up[n] != 0);
        predictor->observe(n, history[n]);
      }
    if (++s == length) s = 0;
    if (opt.progress && t > 0 && t % opt.progress_every == 0) opt.progress(t);
  }
  r.steps = t;
  r.finished = remaining == 0;
  double total = 0;
  for (std::size_t j = 0; j < njobs; ++j) {
    r.jobs.push_back({jobs[j].id, jobs[j].arrival, completion[j]});
    total += static_cast<double>(completion[j].value_or(max_steps) - jobs[j].arrival);
  }
  r.mean_turnaround = njobs == 0 ? 0 : total / static_cast<double>(njobs);
  return r;
}

}  // namespace piranha::sched
