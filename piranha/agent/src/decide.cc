#include "piranha/agent/decide.h"

#include <algorithm>

#include "piranha/runtime/job.h"

namespace piranha {
namespace {

// One call's work: the rules of decide.h, each a member, adding to `out`.
struct Decision {
  AgentState& st;
  const AgentSettings& s;
  Instant now;
  Actions out;

  Decision(AgentState& state, Instant t) : st(state), s(state.settings), now(t) {}

  sys::NodeState node_state() const {
    if (st.owner_blocked) return sys::NodeState::OwnerBlocked;
    return st.available ? sys::NodeState::Available : sys::NodeState::Unavailable;
  }

  std::string policy_name() const { return std::string(name(s.policy)); }

  void publish_run(const std::string& by) {
    st.run_by = by;
    out.push_back(act::PublishRun{st.target, by});
  }

  void begin() {
    if (st.begun) return;
    st.begun = true;
    out.push_back(act::SetNodeState{node_state()});
    publish_run(policy_name());
  }

  // Availability: the source's verdict and no owner block.
  bool should_be_available() const { return st.verdict.available && !st.owner_blocked; }

  void change_availability(bool available, Clock::time_point when) {
    st.available = available;
    st.change_at = when;
    const std::string why = st.owner_blocked ? "owner block" : st.verdict.reason;
    if (available) {
      st.ap_start = now.wall;
    } else if (st.ap_start) {
      out.push_back(act::RecordPeriod{*st.ap_start, now.wall});
      st.ap_start.reset();
    }
    out.push_back(act::NoteAvailability{available, why});
    out.push_back(act::SetNodeState{node_state()});
  }

  // Which job: scheduler 0's assignment while its heartbeat is fresh, else
  // the native policy over the live jobs not held here.
  void apply_view(const PoolView& v) {
    st.owner_blocked = v.owner_blocked;
    std::erase_if(st.held, [&](const auto& h) { return h.second <= v.holds_written; });
    std::vector<LiveJob> live;
    st.launches.clear();
    std::map<std::int64_t, sched::Requirement> requirements;
    for (const auto& l : v.live) {
      if (st.held.count(l.id)) continue;
      st.launches.emplace(l.id, l);
      sched::Requirement& r = requirements[l.id];
      if (auto known = st.requirements.find(l.id); known != st.requirements.end())
        r = std::move(known->second);
      else if (auto text = v.requirements.find(l.id); text != v.requirements.end())
        r = sched::read_requirement(text->second);
      live.push_back(LiveJob{l.id, r});
    }
    st.requirements = std::move(requirements);
    const sched::NodeAttributes offers = s.attributes.value_or(sched::NodeAttributes{});

    const bool fresh = v.scheduler && now.wall - v.scheduler->time <= s.scheduler_stale_seconds;
    std::optional<std::int64_t> chosen;
    if (v.assignment && fresh) {
      if (!st.obeying_scheduler) out.push_back(act::ObeyScheduler{v.assignment->epoch});
      st.obeying_scheduler = true;
      if (v.assignment->job_id != 0 && st.launches.count(v.assignment->job_id) &&
          sched::satisfies(st.requirements.at(v.assignment->job_id), offers))
        chosen = v.assignment->job_id;
    } else {
      if (st.obeying_scheduler) out.push_back(act::LeaveScheduler{!v.scheduler});
      st.obeying_scheduler = false;
      chosen = st.policy.choose(live, st.target, offers);
    }
    const std::string by = st.obeying_scheduler ? "scheduler 0" : policy_name();
    if (chosen != st.target) {
      out.push_back(act::NoteTarget{chosen, st.obeying_scheduler ? "scheduler" : policy_name()});
      st.target = chosen;
      publish_run(by);
    } else if (by != st.run_by) {
      publish_run(by);
    }
  }

  void hold(std::int64_t job, const std::string& reason) {
    st.failures.erase(job);
    st.hold_off.erase(job);
    st.work_seen.erase(job);
    out.push_back(act::Hold{job, reason});
    st.held[job] = ++st.holds_requested;
    st.launches.erase(job);
    if (st.target == job) st.target.reset();
  }

  // A piranha of `e.job_id` failed: restart at once, later, or hold.
  void on_failure(const PiranhaExit& e, const std::map<std::int64_t, std::int64_t>& tasks_here) {
    const std::int64_t job = e.job_id;
    auto done = tasks_here.find(job);
    if (done != tasks_here.end()) {
      if (done->second > st.work_seen[job]) st.failures[job] = 0;  // useful work since the last failure
      st.work_seen[job] = done->second;
    }
    const int n = ++st.failures[job];
    if (n >= s.max_failures) {
      std::string reason = e.status.describe() + " (" + std::to_string(n) + " failure" + (n == 1 ? "" : "s") +
                           " in a row on " + s.node + ")";
      if (!e.stderr_tail.empty()) reason += "; stderr ends:\n" + e.stderr_tail;
      hold(job, reason);
      return;
    }
    const auto wait =
        n <= 2 ? std::chrono::seconds(0) : std::chrono::seconds(std::min(60, 1 << std::min(n - 2, 6)));
    st.hold_off[job] = now.steady + wait;
    out.push_back(act::NoteFailure{job, e.status.describe(), n, s.max_failures, wait});
  }

  void on_exits(const std::vector<PiranhaExit>& exits,
                const std::map<std::int64_t, std::int64_t>& tasks_here) {
    for (const auto& e : exits) {
      if (e.retreated) {
        // A piranha told to leave a job that has ended since (it is no
        // longer live) left because of that: the job counts no retreat, so
        // neither does the agent.
        const bool live = st.launches.count(e.job_id) || st.held.count(e.job_id);
        const double latency = e.retreat_latency ? e.retreat_latency->count() * 1e3 : 0.0;
        if (live)
          out.push_back(act::NoteRetreated{e.job_id, e.pid, st.retreat_cause, latency, e.killed});
        else
          out.push_back(act::NoteExit{e.job_id, e.status.describe()});
        continue;
      }
      out.push_back(act::NoteExit{e.job_id, e.status.describe()});
      if (e.status.signal == 0 && e.status.code == kExitCutOff) {
        // Not the job's fault: its piranha lost the server. Another starts
        // once the server answers again.
        out.push_back(act::NoteCutOff{e.job_id});
        st.hold_off[e.job_id] = now.steady + std::chrono::seconds(2);
      } else if (e.status.ok()) {
        // No tasks now, or the job ended: look again a little later.
        st.hold_off[e.job_id] = now.steady + std::chrono::seconds(1);
        st.failures.erase(e.job_id);
      } else {
        on_failure(e, tasks_here);
      }
    }
  }

  void retreat(const Piranhas& p, Clock::time_point change, const std::string& cause,
               std::optional<std::int64_t> gives_way_to = std::nullopt) {
    st.retreat_cause = cause;
    out.push_back(act::Retreat{p.job.value_or(0), change, cause, gives_way_to});
  }

  // Retreat, suspend, resume, give way, start.
  void manage(Piranhas p, const Observations& seen) {
    if (!st.available) {
      if (p.running == 0 || p.retreating) return;
      if (s.mode == RetreatMode::Suspend && !p.suspended_since) {
        out.push_back(act::Suspend{p.job.value_or(0)});
        return;
      }
      if (s.mode == RetreatMode::Suspend && now.steady - *p.suspended_since < s.suspend_max) return;
      retreat(p, st.change_at, "unavailable");
      return;
    }
    if (p.suspended_since) {
      out.push_back(act::Resume{p.job.value_or(0)});
      p.suspended_since.reset();
    }
    if (p.running > 0) {
      if (p.job != st.target && !p.retreating)
        retreat(p, now.steady, st.obeying_scheduler ? "assignment" : "policy", st.target);
      return;
    }
    // No new piranhas while the server is away (they could not reach it), nor while lent ones
    // still run (they are retreating: lent_job() gives way to the node's own job).
    if (!st.target || !st.launches.count(*st.target) || seen.server_away || seen.lent_running > 0) return;
    if (auto h = st.hold_off.find(*st.target); h != st.hold_off.end() && now.steady < h->second) return;
    const sys::JobLaunch& launch = st.launches.at(*st.target);
    if (!st.work_seen.count(launch.id))
      if (auto done = seen.tasks_here.find(launch.id); done != seen.tasks_here.end())
        st.work_seen[launch.id] = done->second;
    out.push_back(act::Start{launch, s.cores});
  }

  void stop(const Observations& seen) {
    if (!st.stopping) {
      st.stopping = true;
      st.retreat_cause = "agent stopping";
      if (seen.piranhas.running > 0) retreat(seen.piranhas, now.steady, "agent stopping");
    }
    on_exits(seen.exits, seen.tasks_here);
    if (seen.piranhas.running > 0 || st.down) return;
    if (st.ap_start) out.push_back(act::RecordPeriod{*st.ap_start, now.wall});
    st.ap_start.reset();
    st.down = true;
    out.push_back(act::SetNodeState{sys::NodeState::Down});
  }
};

}  // namespace

AgentState::AgentState(AgentSettings s) : settings(std::move(s)), policy(settings.policy, settings.seed) {}

std::string state_reason(sys::NodeState node_state, const AgentState& state) {
  return node_state == sys::NodeState::Down           ? "agent stopped"
         : node_state == sys::NodeState::OwnerBlocked ? "owner block"
                                                      : state.verdict.reason;
}

Actions decide(const Observations& seen, AgentState& state, Instant now) {
  Decision d(state, now);
  if (seen.stopping) {
    d.stop(seen);
    return std::move(d.out);
  }
  d.begin();
  if (seen.verdict) {
    state.verdict = *seen.verdict;
    if (d.should_be_available() != state.available)
      d.change_availability(d.should_be_available(), seen.verdict_at);
  }
  if (seen.view) {
    const bool was_blocked = state.owner_blocked;
    d.apply_view(*seen.view);
    // An owner block beginning or ending is reported even when the verdict
    // keeps the node unavailable: the node's state changes.
    if (d.should_be_available() != state.available || was_blocked != state.owner_blocked)
      d.change_availability(d.should_be_available(), now.steady);
  }
  d.on_exits(seen.exits, seen.tasks_here);
  d.manage(seen.piranhas, seen);
  return std::move(d.out);
}

Actions cannot_start(std::int64_t job, const std::string& error, AgentState& state) {
  Decision d(state, Instant{});
  d.hold(job, "cannot start its program on " + state.settings.node + ": " + error);
  return std::move(d.out);
}

std::optional<Clock::time_point> next_due(const AgentState& state, const Piranhas& piranhas,
                                          Clock::time_point now) {
  std::optional<Clock::time_point> due;
  auto earliest = [&](Clock::time_point t) {
    if (!due || t < *due) due = t;
  };
  if (piranhas.suspended_since) earliest(*piranhas.suspended_since + state.settings.suspend_max);
  for (const auto& [job, until] : state.hold_off)
    if (until > now) earliest(until);
  return due;
}

}  // namespace piranha
