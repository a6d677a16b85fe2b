// The scheduler node type (node_types.h): one strategy of the strategy
// library, deciding from the jobs node and its monitors.
#include <algorithm>
#include <cmath>
#include <span>

#include "node_kinds.h"
#include "values.h"

namespace piranha::nps {
namespace {

// Fills `seen` (one entry per inferior). The fields are looked for where a
// monitor's state has them (MonitorFields), or the jobs node's ({jobs, tick}).
void look(const trellis::Context& ctx, std::vector<Seen>& seen) {
  seen.assign(ctx.inferior_count(), Seen{});
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const Value& s = ctx.inferior(i);
    Seen& v = seen[i];
    const Value& node = s.get("node", MonitorFields::kNode);
    const Value& decisions = s.get("decisions", MonitorFields::kDecisions);
    v.monitor = node.is_string() && decisions.is_map();
    if (v.monitor) {
      v.node = &node.as_string();
      v.decisions = &decisions;
    }
    // In a monitor's state, "jobs" would come just before "node".
    v.jobs = s.get("jobs", v.monitor ? MonitorFields::kNode : 0).is_list();
    v.up = ctx.inferior_link(i) == trellis::LinkState::Up;
    v.null = s.is_null();
    v.tick = int_at(s, "tick", v.monitor ? MonitorFields::kTick : 1);
  }
}

// The newest enabler tick among the inferiors' states (-1: none yet).
std::int64_t newest_tick_of(const std::vector<Seen>& seen) {
  std::int64_t tick = -1;
  for (const Seen& v : seen) tick = std::max(tick, v.tick);
  return tick;
}

// The queue as on_events compares it: the jobs, and which are measured (a job
// measured since the last decision is news for the strategy, as an arrival is).
std::vector<std::pair<JobId, bool>> queue_key(const trellis::Context& ctx, const std::vector<Seen>& seen) {
  std::vector<std::pair<JobId, bool>> key;
  for (std::size_t i = 0; i < seen.size(); ++i)
    if (seen[i].jobs)
      for (const Value& j : ctx.inferior(i)["jobs"].as_list())
        key.emplace_back(int_of(j, "id"), j["measured"].is_bool() && j["measured"].as_bool());
  return key;
}

// Whether a monitor within reach reports a node this scheduler has never
// decided for (it joined the pool after the last decision): news, as an
// arrival is, for a scheduler deciding on events.
bool undecided_node(const std::vector<Seen>& seen, const SchedulerMemory& m) {
  for (const Seen& v : seen)
    if (v.monitor && v.up && !m.decided.contains(*v.node)) return true;
  return false;
}

}  // namespace

std::vector<std::optional<JobId>> probe_nodes(std::span<const JobId> unmeasured,
                                              std::span<const std::optional<JobId>> current,
                                              const std::function<bool(std::size_t, JobId)>& may_run) {
  const std::size_t nodes = current.size();
  std::vector<std::optional<JobId>> out(nodes);
  if (nodes < 2) return out;           // one node: nothing to spare for measuring
  const std::size_t most = nodes - 1;  // the measured jobs keep a node
  std::vector<JobId> left;
  std::size_t given = 0;
  // A node already running an unmeasured job keeps probing it...
  for (JobId job : unmeasured) {
    bool kept = false;
    for (std::size_t n = 0; n < nodes && !kept && given < most; ++n)
      if (!out[n] && current[n] == job && (!may_run || may_run(n, job))) out[n] = job, kept = true, ++given;
    if (!kept) left.push_back(job);
  }
  // ...and the others take nodes from the end of the list (with
  // requirements, the last free one that may run them).
  if (may_run) {
    for (JobId job : left) {
      if (given >= most) break;
      for (std::size_t k = nodes; k-- > 0;)
        if (!out[k] && may_run(k, job)) {
          out[k] = job;
          ++given;
          break;
        }
    }
    return out;
  }
  std::size_t n = nodes;
  for (JobId job : left) {
    while (n > 0 && out[n - 1]) --n;
    if (n == 0 || given >= most) break;
    out[--n] = job;
    ++given;
  }
  return out;
}

Scheduler::Scheduler(Environment env, const trellis::Params& p)
    : env_(std::move(env)),
      id_(p.integer("id")),
      period_(p.number("period", 1)),
      spill_(p.boolean("spill", false)),
      on_events_(p.boolean("on_events", false)),
      cold_start_(p.number("cold_start", 0)),
      probe_(p.boolean("probe", true)) {
  if (id_ < 0) throw trellis::BadParameter("id", "a scheduler id must not be negative");
  if (!(period_ > 0)) throw trellis::BadParameter("period", "period must be positive");
  // The predictions come from the monitors; these two are read only so that
  // nps check can hold them against the monitors' (program.h).
  p.string("predictor", "REC_HIST");
  if (p.integer("window", 10) < 1)
    throw trellis::BadParameter("window", "window must be at least 1 history step");
  if (!(cold_start_ >= 0)) throw trellis::BadParameter("cold_start", "cold_start must not be negative");
  const std::string strategy = p.string("strategy", "TSK");
  const auto seed = static_cast<std::uint64_t>(p.integer("seed", 0));
  SchedulerMemory& m = env_.memory->schedulers[id_];
  std::string canonical;
  try {
    canonical = sched::canonical_strategy_name(strategy);
    if (!m.strategy || m.strategy_name != canonical) {
      m = SchedulerMemory{};
      m.strategy = sched::make_strategy(strategy);
      m.strategy_name = canonical;
      m.rng = std::make_unique<sched::Rng>(seed, 2);  // the simulator's stream for strategies
    }
  } catch (const InputError& e) {
    throw trellis::BadParameter("strategy", e.what());
  }
  memory_ = &m;
}

bool Scheduler::ready(const std::vector<Seen>& seen, std::int64_t tick) const {
  bool jobs = false;
  for (const Seen& v : seen) {
    if (v.jobs) jobs = true;
    if (!v.up) {
      if (v.jobs || v.null) return false;  // no job list, no decision
      continue;                            // a monitor out of reach is left out
    }
    if (v.tick < tick) return false;
  }
  return jobs;
}

Value Scheduler::calculate(trellis::Context& ctx) {
  SchedulerMemory& m = *memory_;
  look(ctx, seen_);
  const std::vector<Seen>& seen = seen_;
  const std::int64_t tick = newest_tick_of(seen);
  if (tick > m.last_tick && ready(seen, tick)) {
    const double now = env_.pool->now();
    bool due = !m.next_due || now >= *m.next_due - env_.pool->slack();
    if (on_events_ && !due) due = queue_key(ctx, seen) != m.last_queue || undecided_node(seen, m);
    m.last_tick = tick;
    if (due) decide(ctx, seen);
    // Alive and deciding: beaten every tick, so that a period longer than
    // the agents' stale time does not make them fall back between decisions.
    env_.pool->heartbeat(id_);
  }
  // Re-send a decision a monitor has not recorded by a later tick (its host
  // came back, or it was rebuilt): monitors are the only way decisions
  // reach the agents.
  const std::string key = std::to_string(id_);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const Seen& v = seen[i];
    if (!v.monitor || !v.up) continue;
    SchedulerMemory::Decided* d = find_decided(m, i, *v.node);
    if (!d) continue;
    const Value::Map& recorded = v.decisions->as_map();
    if (const auto r = recorded.find(key); r != recorded.end() && job_of(r->second) == d->job) continue;
    if (v.tick <= d->sent_tick) continue;  // it has not had the chance yet
    send(ctx, i, *d, d->job);
  }
  return Fields()("assignments", m.assignments)("decisions", m.decisions)("id", id_)("on_events", on_events_)(
      "period", period_)("strategy", m.strategy_name)("tick", m.last_tick);  // in key order (Fields)
}

SchedulerMemory::Decided* find_decided(SchedulerMemory& m, std::size_t i, const std::string& node) {
  if (m.slots.size() <= i) m.slots.resize(i + 1);
  SchedulerMemory::Slot& slot = m.slots[i];
  if (slot.decided && slot.node == node) return slot.decided;
  const auto it = m.decided.find(node);
  if (it == m.decided.end()) return nullptr;
  slot.node = node;
  slot.decided = &it->second;
  return slot.decided;
}

void Scheduler::send(trellis::Context& ctx, std::size_t monitor, SchedulerMemory::Decided& decided,
                     std::optional<JobId> job, std::optional<std::int64_t> epoch) {
  ctx.command(monitor,
              Fields()("scheduler", id_)("epoch", epoch.value_or(env_.pool->epoch()))("job", job_value(job)));
  decided.sent_tick = memory_->last_tick;
}

void Scheduler::decide(trellis::Context& ctx, const std::vector<Seen>& seen) {
  SchedulerMemory& m = *memory_;
  Pool& pool = *env_.pool;
  const double now = pool.now();
  std::vector<sched::QueuedJob> queue;
  std::vector<JobId> unmeasured;
  std::vector<std::size_t> monitors;
  std::vector<SchedulerMemory::Decided*> known;  // per monitor: its node's entry, if decided before
  std::vector<std::optional<JobId>> current;
  std::vector<double> ap, fraction;
  bool required = false;  // some job has a requirement: nodes are told apart by their attributes
  m.last_queue = queue_key(ctx, seen);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const Value& s = ctx.inferior(i);
    if (seen[i].jobs) {
      for (const Value& j : s["jobs"].as_list()) {
        sched::QueuedJob q;
        q.id = int_of(j, "id");
        q.arrival = number_of(j, "arrival");
        const bool measured = j["measured"].is_bool() && j["measured"].as_bool();
        q.task_time = measured ? number_of(j, "task_time") : cold_start_;
        q.tasks = int_of(j, "tasks", 1);
        q.tasks_left = int_of(j, "tasks_left", 1);
        q.attained = number_of(j, "attained");
        q.queue_length_at_arrival = int_of(j, "q", 0);
        if (const Value& r = j["requires"]; r.is_string() && !r.as_string().empty()) {
          q.requirement = sched::read_requirement(r.as_string());
          required = true;
        }
        if (!measured) unmeasured.push_back(q.id);
        queue.push_back(q);
      }
    } else if (seen[i].monitor) {
      monitors.push_back(i);
      SchedulerMemory::Decided* d = find_decided(m, i, *seen[i].node);
      known.push_back(d);
      current.push_back(d ? d->job : std::nullopt);
      ap.push_back(number_at(s, "ap_length", MonitorFields::kApLength));
      fraction.push_back(number_at(s, "fraction", MonitorFields::kFraction, 1));
    }
  }
  // Job requirements: what each node offers, as its monitor says (none: it
  // runs only jobs without one). Looked at only when some job has one.
  std::vector<sched::NodeAttributes> offers;
  std::function<bool(std::size_t, JobId)> may_run;
  if (required) {
    for (std::size_t i : monitors) offers.push_back(attributes_of(ctx.inferior(i)["attributes"]));
    may_run = [&](std::size_t k, JobId job) {
      const auto q =
          std::find_if(queue.begin(), queue.end(), [&](const sched::QueuedJob& j) { return j.id == job; });
      return q != queue.end() && sched::satisfies(q->requirement, offers[k]);
    };
  }
  // Probing: while some job is measured, each unmeasured job gets one node
  // of its own to be measured on, and the strategy places the measured jobs
  // on the other nodes (docs/nps.md, "The prior").
  std::vector<std::optional<JobId>> probes(monitors.size());
  if (probe_ && !unmeasured.empty() && unmeasured.size() < queue.size()) {
    probes = probe_nodes(unmeasured, current, may_run);
    // A job with a node of its own leaves the strategy's queue; one that got
    // none (too few nodes) stays in it with the cold-start task time.
    std::erase_if(queue, [&](const sched::QueuedJob& q) {
      return std::find(probes.begin(), probes.end(), std::optional<JobId>(q.id)) != probes.end();
    });
  }
  std::vector<std::size_t> free;  // nodes the strategy places
  for (std::size_t k = 0; k < monitors.size(); ++k)
    if (!probes[k]) free.push_back(k);
  std::vector<std::optional<JobId>> free_current;
  std::vector<double> free_ap, free_fraction;
  std::vector<sched::NodeAttributes> free_offers;
  for (std::size_t k : free) {
    free_current.push_back(current[k]);
    free_ap.push_back(ap[k]);
    free_fraction.push_back(fraction[k]);
    if (required) free_offers.push_back(offers[k]);
  }
  sched::FixedOutlook outlook(std::move(free_ap), std::move(free_fraction));
  const auto placed = m.decider.decide(*m.strategy, now, std::move(queue), free_current, &outlook,
                                       m.rng.get(), spill_, free_offers);
  std::vector<std::optional<JobId>> chosen = probes;
  for (std::size_t f = 0; f < free.size(); ++f) chosen[free[f]] = placed[f];
  const std::int64_t epoch = pool.epoch();
  for (std::size_t k = 0; k < monitors.size(); ++k) {
    const std::string& node = *seen[monitors[k]].node;
    // Entries stay where they are as others are added, so `known` holds.
    SchedulerMemory::Decided* d = known[k];
    if (!d) d = &m.decided.try_emplace(node).first->second;
    if (!known[k] || d->job != chosen[k]) m.assignments.as_map().insert_or_assign(node, job_value(chosen[k]));
    d->job = chosen[k];
    if (chosen[k] != current[k] || m.decisions == 0) send(ctx, monitors[k], *d, chosen[k], epoch);
  }
  ++m.decisions;
  // The next due time is a whole number of periods after the first decision,
  // so a late tick does not shift every later one.
  if (!m.next_due) m.next_due = now;
  while (*m.next_due <= now + env_.pool->slack()) *m.next_due += period_;
}

}  // namespace piranha::nps
