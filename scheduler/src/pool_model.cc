#include "piranha/scheduler/pool_model.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace piranha::sched {

PoolModel::PoolModel(const AvailabilityTrace& trace, std::vector<Job> jobs, const SimOptions& options,
                     std::string strategy_name, std::uint64_t seed)
    : trace_(trace),
      options_(options),
      jobs_(std::move(jobs)),
      strategy_(std::move(strategy_name)),
      seed_(seed) {
  validate(options_, trace_);
  std::stable_sort(jobs_.begin(), jobs_.end(), queue_before);
  const std::size_t njobs = jobs_.size(), n = trace_.nodes.size();
  max_steps_ = options_.max_steps > 0 ? options_.max_steps : 20 * trace_.length;
  for (std::size_t j = 0; j < njobs; ++j) {
    index_of_[jobs_[j].id] = static_cast<int>(j);
    tasks_left_.push_back(jobs_[j].tasks);
  }
  attained_.assign(njobs, 0);
  completion_.assign(njobs, std::nullopt);
  estimate_.assign(njobs, TaskTimeEstimator(options_.cold_start));
  length_at_arrival_.assign(njobs, 0);
  position_.assign(njobs, kIdle);
  job_.assign(n, -1);
  prev_.assign(n, -1);
  active_.assign(n, 0);
  cursor_.assign(n, Cursor{});
  remaining_ = njobs;
  s_ = options_.start;
}

bool PoolModel::arrive() {
  bool changed = completed_last_step_;
  while (next_arrival_ < jobs_.size() && jobs_[next_arrival_].arrival == t_) {
    length_at_arrival_[next_arrival_] = static_cast<std::int64_t>(queue_.size()) + 1;
    queue_.push_back(static_cast<int>(next_arrival_++));
    changed = true;
  }
  return changed;
}

inline QueuedJob PoolModel::queued(int j) const {
  const auto ju = static_cast<std::size_t>(j);
  const Job& jb = jobs_[ju];
  std::int64_t task_time = jb.task_time;
  if (options_.task_times == TaskTimes::kObserved) task_time = std::llround(estimate_[ju].estimate());
  return {jb.id,           static_cast<double>(jb.arrival),    static_cast<double>(task_time), jb.tasks,
          tasks_left_[ju], static_cast<double>(attained_[ju]), length_at_arrival_[ju]};
}

std::vector<QueuedJob> PoolModel::queue() const {
  std::vector<QueuedJob> out;
  out.reserve(queue_.size());
  for (int j : queue_) out.push_back(queued(j));
  return out;
}

std::optional<JobId> PoolModel::job(std::size_t n) const {
  if (job_[n] < 0) return std::nullopt;
  return jobs_[static_cast<std::size_t>(job_[n])].id;
}

void PoolModel::set_job(std::size_t n, std::optional<JobId> job) {
  if (!job) {
    job_[n] = -1;
    return;
  }
  auto it = index_of_.find(*job);
  if (it == index_of_.end()) throw std::invalid_argument("no job " + std::to_string(*job) + " in the model");
  job_[n] = it->second;
}

void PoolModel::fill(InvocationBuilder& builder) {
  const std::size_t n = nodes();
  builder.clear(n);
  for (std::size_t q = 0; q < queue_.size(); ++q) {
    const int j = queue_[q];
    builder.push(queued(j));
    position_[static_cast<std::size_t>(j)] = static_cast<Slot>(q);
  }
  for (std::size_t i = 0; i < n; ++i) {
    const int j = job_[i];
    if (j >= 0 && !completion_[static_cast<std::size_t>(j)])
      builder.set_current(i, position_[static_cast<std::size_t>(j)]);
  }
}

void PoolModel::apply(std::span<const Slot> chosen) {
  for (std::size_t n = 0; n < chosen.size(); ++n)
    job_[n] = chosen[n] == kIdle ? -1 : queue_[static_cast<std::size_t>(chosen[n])];
}

void PoolModel::step() {
  // 3. Every node in index order.
  bool completed = false;
  for (std::size_t n = 0; n < nodes(); ++n) {
    Cursor& c = cursor_[n];
    if (t_ == 0 || s_ == 0 || s_ >= c.until) {
      c.available = trace_.available(n, s_);
      c.until = trace_.next_change(n, s_);
    }
    const int j = job_[n];
    if (j != prev_[n] && active_[n] > 0) {
      ++scheduler_retreats_;
      lost_steps_ += active_[n];
      active_[n] = 0;
    }
    if (j < 0 || completion_[static_cast<std::size_t>(j)]) {
      active_[n] = 0;
      continue;
    }
    const auto ju = static_cast<std::size_t>(j);
    if (c.available) {
      ++active_[n];
      ++attained_[ju];
      ++busy_steps_;
    } else if (active_[n] > 0) {
      ++owner_retreats_;
      lost_steps_ += active_[n];
      active_[n] = 0;
    }
    if (active_[n] == jobs_[ju].task_time) {
      active_[n] = 0;
      estimate_[ju].observe(static_cast<double>(jobs_[ju].task_time));
      if (--tasks_left_[ju] == 0) {
        completion_[ju] = t_ + 1;
        --remaining_;
        completed = true;
      }
    }
  }
  // 4. Completed jobs leave the queue; PREV = JOB.
  if (completed)
    std::erase_if(queue_, [&](int j) { return completion_[static_cast<std::size_t>(j)].has_value(); });
  completed_last_step_ = completed;
  prev_ = job_;
  if (++s_ == trace_.length) s_ = 0;
  ++t_;
}

SimResult PoolModel::result() const {
  SimResult r;
  r.strategy = strategy_;
  r.seed = seed_;
  r.steps = t_;
  r.finished = remaining_ == 0;
  r.busy_steps = busy_steps_;
  r.lost_steps = lost_steps_;
  r.owner_retreats = owner_retreats_;
  r.scheduler_retreats = scheduler_retreats_;
  double total = 0;
  for (std::size_t j = 0; j < jobs_.size(); ++j) {
    r.jobs.push_back({jobs_[j].id, jobs_[j].arrival, completion_[j]});
    total += static_cast<double>(completion_[j].value_or(max_steps_) - jobs_[j].arrival);
  }
  r.mean_turnaround = jobs_.empty() ? 0 : total / static_cast<double>(jobs_.size());
  return r;
}

}  // namespace piranha::sched
