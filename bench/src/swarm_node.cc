#include "swarm_node.h"

#include <algorithm>
#include <thread>
#include <variant>

#include "piranha/runtime/task_tally.h"

using namespace std::chrono_literals;

namespace piranha::swarm {
namespace {

// A consumer holds a task this long at most before completing it; it
// completes it in the same turn, so the lease only matters should the
// swarm die between the two steps.
constexpr auto kTaskLease = 30s;

// examples/spin's task: ("task", i, ms).
ts::Template task_template() {
  return ts::Template({ts::Field::of(ts::Value(std::string("task"))), ts::Field::formal(ts::Type::Int),
                       ts::Field::formal(ts::Type::Int)});
}

}  // namespace

void Tally::obeyed(std::int64_t epoch_ms, double seen, double wall) {
  std::lock_guard lock(mu_);
  obey_ms_.push_back(std::max(0.0, wall * 1000 - static_cast<double>(epoch_ms)));
  seen_ms_.push_back(std::max(0.0, seen * 1000 - static_cast<double>(epoch_ms)));
}

void Tally::completed(std::int64_t tasks) {
  tasks_ += tasks;
}

std::vector<double> Tally::sorted(const std::vector<double>& ms) const {
  std::vector<double> v;
  {
    std::lock_guard lock(mu_);
    v = ms;
  }
  std::sort(v.begin(), v.end());
  return v;
}

std::vector<double> Tally::obey_latencies_ms() const {
  return sorted(obey_ms_);
}

std::vector<double> Tally::seen_latencies_ms() const {
  return sorted(seen_ms_);
}

SwarmNode::SwarmNode(const AgentSettings& settings, std::unique_ptr<AvailabilitySource> source,
                     ConsumerSettings consumer, Tally& tally, int wake_fd)
    : s_(settings),
      source_(std::move(source)),
      consumer_(consumer),
      tally_(tally),
      state_(s_),
      uplink_(std::make_unique<Uplink>(
          s_, [](const std::string&) {}, wake_fd)) {}

SwarmNode::~SwarmNode() = default;

Clock::time_point SwarmNode::turn(Clock::time_point now) {
  std::lock_guard lock(task_mu_);
  Observations seen;
  if (now >= next_eval_) {
    seen.verdict_at = std::min(now, next_eval_);
    seen.verdict = source_->evaluate(now);
    next_eval_ = source_->next_evaluation(now);
  }
  const std::uint64_t generation = uplink_->generation();
  const bool new_view = generation != view_seen_;
  Uplink::View v;
  if (new_view) {
    v = uplink_->view();
    view_seen_ = v.generation;
    seen.view = PoolView{v.owner_blocked, v.live, v.requirements, v.assignment, v.scheduler, v.holds_written};
  }
  seen.exits.swap(exits_);
  seen.piranhas = piranhas_;
  seen.server_away = uplink_->server_away();
  const Instant at{now, sys::wall_now()};
  carry_out(decide(seen, state_, at), at);
  if (!exits_.empty()) {
    // The simulated piranhas retreated at once: decide on their exits now.
    Observations after;
    after.exits.swap(exits_);
    after.piranhas = piranhas_;
    after.server_away = seen.server_away;
    carry_out(decide(after, state_, at), at);
  }
  // Obeyed: scheduler 0's newest assignment is what the node now targets.
  if (new_view && state_.obeying_scheduler && v.assignment && v.assignment->epoch != obeyed_epoch_) {
    const auto assigned = v.assignment->job_id == 0 ? std::nullopt : std::optional(v.assignment->job_id);
    if (state_.target == assigned) {
      obeyed_epoch_ = v.assignment->epoch;
      tally_.obeyed(v.assignment->epoch, v.assignment_seen, at.wall);
    }
  }
  available_ = state_.available;
  obeying_ = state_.obeying_scheduler;
  job_running_ = piranhas_.running > 0 && !piranhas_.retreating ? piranhas_.job.value_or(0) : 0;

  // Views and exits wake the node; otherwise the trace's next step (its
  // tasks are the consumer thread's).
  auto wake = std::min(next_eval_, now + 10s);
  if (auto d = next_due(state_, piranhas_, now)) wake = std::min(wake, *d);
  return wake;
}

Clock::time_point SwarmNode::consume(Clock::time_point now, ts::Client& consumer) {
  std::int64_t job = 0;
  Clock::time_point next;
  {
    std::lock_guard lock(task_mu_);
    if (piranhas_.running == 0 || piranhas_.retreating || !piranhas_.job) return Clock::time_point::max();
    if (now < next_task_) return next_task_;
    const auto every = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(consumer_.task_seconds / static_cast<double>(piranhas_.running)));
    next_task_ = next = now + every;
    job = *piranhas_.job;
  }
  // Unlocked: a retreat decided meanwhile finds the task done or returned
  // by its lease, as a real piranha's would be.
  const std::string space = "job." + std::to_string(job);
  try {
    auto t = consumer.in(space, task_template(), 0ms, kTaskLease);
    if (!t) return next_task_;
    const double started = sys::wall_now();
    consumer.complete(t->lease, space,
                      {ts::Tuple::of(std::string("result"), t->tuple.get<std::int64_t>(1)),
                       done_record(s_.node, started, consumer_.task_seconds)});
    tally_.completed(1);
  } catch (const ts::TupleSpaceError&) {
    // The server is away: the next due task tries again, as a piranha would.
  }
  return next;
}

void SwarmNode::carry_out(const Actions& actions, Instant now) {
  for (const auto& action : actions) {
    std::visit(
        [&](const auto& a) {
          using A = std::decay_t<decltype(a)>;
          if constexpr (std::is_same_v<A, act::RecordPeriod>) {
            uplink_->record_period(sys::AvailabilityPeriod{s_.node, a.start, a.end});
          } else if constexpr (std::is_same_v<A, act::SetNodeState>) {
            uplink_->set_state(a.state, state_reason(a.state, state_));
          } else if constexpr (std::is_same_v<A, act::PublishRun>) {
            uplink_->set_run(sys::NodeRun{s_.node, a.job.value_or(0), a.by, now.wall});
          } else if constexpr (std::is_same_v<A, act::Hold>) {
            uplink_->hold(sys::JobHold{a.job, s_.node, a.reason, now.wall});
          } else if constexpr (std::is_same_v<A, act::Start>) {
            piranhas_ = Piranhas{static_cast<std::size_t>(a.count), a.launch.id, false, std::nullopt};
            next_task_ = now.steady;
          } else if constexpr (std::is_same_v<A, act::Retreat>) {
            // The consumer holds no task between turns: it stops at once.
            for (std::size_t i = 0; i < piranhas_.running; ++i) {
              PiranhaExit e;
              e.job_id = a.job;
              e.retreated = true;
              e.retreat_latency = now.steady - a.change;
              exits_.push_back(e);
            }
            piranhas_ = Piranhas{};
          }
          // The reports (log lines and events in a real agent) and suspend
          // mode (not used by the swarm) need nothing here.
        },
        action);
  }
}

void SwarmNode::stop(Clock::time_point deadline) {
  std::lock_guard lock(task_mu_);
  Observations seen;
  seen.stopping = true;
  for (int i = 0; i < 3 && !state_.down; ++i) {
    seen.exits.swap(exits_);
    seen.piranhas = piranhas_;
    const Instant at{Clock::now(), sys::wall_now()};
    carry_out(decide(seen, state_, at), at);
  }
  uplink_->drain(deadline);
  uplink_.reset();
}

}  // namespace piranha::swarm
