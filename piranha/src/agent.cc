#include "piranha/agent.h"

#include <poll.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "piranha/piranha_host.h"
#include "piranha/sysspace.h"

namespace piranha {
namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

double ms(std::chrono::duration<double> d) { return d.count() * 1e3; }

// Feeders rewrite their jobstat at least every 5 s (JobReporter).
constexpr double kFeederSilence = 30;

}  // namespace

struct Agent::Impl {
  AgentSettings s;
  std::unique_ptr<AvailabilitySource> source;
  NativePolicy policy;
  PiranhaHost host;
  std::unique_ptr<ts::Client> client;
  std::ofstream events;

  Verdict verdict{false, "not yet evaluated"};
  bool owner_blocked = false;
  bool available = false;
  std::optional<double> ap_start;  // wall time the open availability period began
  SteadyClock::time_point change_at{};  // when the last availability change happened

  SteadyClock::time_point next_eval{}, next_tick{}, next_heartbeat{};
  std::map<std::int64_t, sys::JobLaunch> launches;
  std::optional<std::int64_t> target;  // the job this node should run
  bool obeying_scheduler = false;
  std::string run_by;  // `by` of the last ("running", ...) published
  std::map<std::int64_t, SteadyClock::time_point> hold_off;  // no restart before
  std::map<std::int64_t, int> failures;          // in a row, on this node
  std::map<std::int64_t, std::int64_t> work_seen;  // jobwork tasks here at the last start or failure
  SteadyClock::time_point next_prune{};
  std::string retreat_cause;  // why the piranhas were last told to retreat

  Impl(AgentSettings settings, std::unique_ptr<AvailabilitySource> src)
      : s(std::move(settings)),
        source(std::move(src)),
        policy(s.policy, s.seed),
        host(PiranhaEnvironment{s.server, s.node, s.piranha_output,
                                s.mode == RetreatMode::Suspend
                                    ? static_cast<int>(s.suspend_max.count()) + 5000
                                    : 0}) {
    if (!s.events_file.empty()) {
      events.open(s.events_file, std::ios::app);
      if (!events) throw std::runtime_error(s.events_file + ": cannot open the events file");
    }
  }

  void log(const std::string& line) {
    if (!s.quiet) std::fprintf(stderr, "agent %s: %s\n", s.node.c_str(), line.c_str());
  }

  // One JSON object per line: {"time": ..., "node": ..., "event": ..., fields}.
  void event(const std::string& kind, const std::string& fields = "") {
    if (!events.is_open()) return;
    char t[32];
    std::snprintf(t, sizeof t, "%.6f", sys::wall_now());
    events << "{\"time\":" << t << ",\"node\":" << json_string(s.node) << ",\"event\":" << json_string(kind)
           << (fields.empty() ? "" : ",") << fields << "}\n";
    events.flush();
  }

  sys::NodeState node_state() const {
    if (owner_blocked) return sys::NodeState::OwnerBlocked;
    return available ? sys::NodeState::Available : sys::NodeState::Unavailable;
  }

  void publish(sys::NodeState state) {
    double now = sys::wall_now();
    sys::replace(*client, sys::node_template(s.node), sys::NodeRecord{s.node, s.cores, s.speed, state, now}.to_tuple());
    sys::replace(*client, sys::agent_heartbeat_template(s.node), sys::AgentHeartbeat{s.node, now}.to_tuple());
    client->flush();
  }

  bool connect(const std::atomic<bool>& stop) {
    client = sys::connect_patiently(s.server, [&] { return stop.load(); }, [&](const std::string& m) { log(m); });
    return client != nullptr;
  }

  // Reads jobs, owner blocks and the scheduler's assignment; decides target.
  void read_system_space() {
    double now = sys::wall_now();
    bool blocked = false;
    for (const auto& t : client->rd_many(sys::kSpace, sys::owner_template(s.node), 1000))
      if (auto b = sys::OwnerBlock::from_tuple(t); b && b->covers(now)) blocked = true;
    owner_blocked = blocked;

    std::map<std::int64_t, double> heard;  // job id -> its feeder's last jobstat
    for (const auto& st : sys::list_jobstats(*client)) heard[st.id] = st.updated_at;
    std::vector<LiveJob> live;
    for (const auto& j : sys::list_jobs(*client)) {
      if (!sys::is_live(j.state)) continue;
      // A running job whose feeder has been silent this long is dead (killed
      // outright, outside `piranha submit`): its piranhas would wait for ever.
      if (auto h = heard.find(j.id); j.state == sys::JobState::Running && h != heard.end() &&
                                     now - h->second > kFeederSilence)
        continue;
      if (!launches.count(j.id)) {
        auto l = sys::find_launch(*client, j.id);
        if (!l) continue;  // registered without a program: nothing to start
        launches.emplace(j.id, *l);
      }
      live.push_back(LiveJob{j.id});
    }
    std::erase_if(launches, [&](const auto& kv) {
      return std::none_of(live.begin(), live.end(), [&](const LiveJob& j) { return j.id == kv.first; });
    });

    std::optional<sys::Assignment> assignment;
    for (const auto& t : client->rd_many(sys::kSpace, sys::assign_template(0, s.node), 1000))
      if (auto a = sys::Assignment::from_tuple(t); a && (!assignment || a->epoch > assignment->epoch)) assignment = a;
    auto hb = client->rd(sys::kSpace, sys::scheduler_heartbeat_template(0), 0);
    auto beat = hb ? sys::SchedulerHeartbeat::from_tuple(*hb) : std::nullopt;
    bool fresh = beat && now - beat->time <= s.scheduler_stale_seconds;

    std::optional<std::int64_t> chosen;
    if (assignment && fresh) {
      if (!obeying_scheduler) log("obeying scheduler 0 (assignment epoch " + std::to_string(assignment->epoch) + ")");
      obeying_scheduler = true;
      if (assignment->job_id != 0 && launches.count(assignment->job_id)) chosen = assignment->job_id;
    } else {
      if (obeying_scheduler)
        log(std::string("scheduler 0 ") + (beat ? "is stale" : "is gone") + "; back to the native " +
            std::string(name(s.policy)) + " policy");
      obeying_scheduler = false;
      chosen = policy.choose(live, target);
    }
    std::string by = obeying_scheduler ? "scheduler 0" : std::string(name(s.policy));
    if (chosen != target) {
      event("target", "\"job\":" + (chosen ? std::to_string(*chosen) : std::string("null")) +
                          ",\"by\":" + json_string(obeying_scheduler ? "scheduler" : std::string(name(s.policy))));
      target = chosen;
      publish_run(by);
    } else if (by != run_by) {
      publish_run(by);
    }
  }

  // ("running", node, job, by, since): what this node runs now and on whose word.
  void publish_run(const std::string& by) {
    run_by = by;
    sys::replace(*client, sys::running_template(s.node),
                 sys::NodeRun{s.node, target.value_or(0), by, sys::wall_now()}.to_tuple());
  }

  void on_availability_change(bool now_available, SteadyClock::time_point when) {
    double wall = sys::wall_now();
    available = now_available;
    change_at = when;
    std::string why = owner_blocked ? "owner block" : verdict.reason;
    if (available) {
      ap_start = wall;
      log("available (" + why + ")");
      event("available", "\"reason\":" + json_string(why));
    } else {
      if (ap_start) {
        client->out(sys::kSpace, sys::AvailabilityPeriod{s.node, *ap_start, wall}.to_tuple());
        ap_start.reset();
      }
      log("unavailable (" + why + ")");
      event("unavailable", "\"reason\":" + json_string(why));
    }
    publish(node_state());
  }

  // Tasks of `job` completed on this node so far (its jobwork); nullopt
  // when the system space cannot say.
  std::optional<std::int64_t> tasks_here(std::int64_t job) {
    try {
      auto t = client->rd(sys::kSpace, sys::jobwork_template(job, s.node), 0);
      auto w = t ? sys::JobWork::from_tuple(*t) : std::nullopt;
      return w ? w->tasks : 0;
    } catch (const ts::TupleSpaceError&) {
      return std::nullopt;
    }
  }

  // Stops running `job` anywhere: its state becomes held, with `reason`.
  void hold(std::int64_t job, const std::string& reason) {
    failures.erase(job);
    hold_off.erase(job);
    work_seen.erase(job);
    try {
      if (sys::hold_job(*client, sys::JobHold{job, s.node, reason, sys::wall_now()})) {
        log("job " + std::to_string(job) + " held: " + reason);
        event("held", "\"job\":" + std::to_string(job) + ",\"reason\":" + json_string(reason));
      }
    } catch (const ts::TupleSpaceError& e) {
      log("could not hold job " + std::to_string(job) + ": " + e.what());
    }
    // Whether or not it is held now, this node does not run it again until
    // the system space says it is live.
    launches.erase(job);
    if (target == job) target.reset();
  }

  // A piranha of `e.job_id` ended abnormally: restart at once, later, or hold.
  void on_failure(const PiranhaExit& e, SteadyClock::time_point now) {
    std::int64_t job = e.job_id;
    auto done = tasks_here(job);
    if (done && *done > work_seen[job]) failures[job] = 0;  // useful work since the last failure
    if (done) work_seen[job] = *done;
    int n = ++failures[job];
    if (n >= s.max_failures) {
      std::string reason = e.status.describe() + " (" + std::to_string(n) + " failure" + (n == 1 ? "" : "s") +
                           " in a row on " + s.node + ")";
      if (!e.stderr_tail.empty()) reason += "; stderr ends:\n" + e.stderr_tail;
      hold(job, reason);
      return;
    }
    auto wait = n <= 2 ? std::chrono::seconds(0) : std::chrono::seconds(std::min(60, 1 << std::min(n - 2, 6)));
    hold_off[job] = now + wait;
    log("piranha of job " + std::to_string(job) + " failed (" + e.status.describe() + ", " + std::to_string(n) +
        " of " + std::to_string(s.max_failures) + "); " +
        (wait.count() ? "next try in " + std::to_string(wait.count()) + " s" : std::string("starting another")));
  }

  // Removes this node's old ap records and old finished jobs' records.
  void prune(SteadyClock::time_point now) {
    double wall = sys::wall_now();
    auto aps = sys::prune_availability(*client, s.node, wall - s.ap_retention_seconds);
    auto jobs = sys::prune_finished_jobs(*client, wall - s.job_retention_seconds);
    if (aps || jobs)
      log("pruned " + std::to_string(aps) + " old availability period(s) and " + std::to_string(jobs) +
          " finished job(s)");
    double every = std::clamp(std::min(s.ap_retention_seconds, s.job_retention_seconds) / 4, 1.0, 600.0);
    next_prune = now + std::chrono::milliseconds(static_cast<long>(every * 1000));
  }

  void handle_exits(SteadyClock::time_point now) {
    auto exits = host.reap(now);
    if (!exits.empty()) source->set_piranha_groups(host.groups());
    for (const auto& e : exits) {
      std::string job = std::to_string(e.job_id);
      if (e.retreated) {
        double lat = e.retreat_latency ? ms(*e.retreat_latency) : 0.0;
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.1f", lat);
        log("piranha of job " + job + " retreated in " + buf + " ms" + (e.killed ? " (killed after its grace)" : ""));
        event("retreat", "\"job\":" + job + ",\"pid\":" + std::to_string(e.pid) + ",\"cause\":" +
                             json_string(retreat_cause) + ",\"latency_ms\":" + buf +
                             ",\"killed\":" + (e.killed ? "true" : "false"));
        continue;
      }
      event("exit", "\"job\":" + job + ",\"status\":" + json_string(e.status.describe()));
      if (e.status.ok()) {
        // No tasks now, or the job ended: look again a little later.
        hold_off[e.job_id] = now + std::chrono::seconds(1);
        failures.erase(e.job_id);
      } else {
        on_failure(e, now);
      }
    }
  }

  void manage_piranhas(SteadyClock::time_point now) {
    if (!available) {
      if (host.running() == 0 || host.retreating()) return;
      if (s.mode == RetreatMode::Suspend && !host.suspended()) {
        host.suspend(now);
        log("suspended the piranhas of job " + std::to_string(*host.job()));
        event("suspend", "\"job\":" + std::to_string(*host.job()));
        return;
      }
      if (s.mode == RetreatMode::Suspend && now - *host.suspended_since() < s.suspend_max) return;
      log("retreating job " + std::to_string(*host.job()));
      retreat_cause = "unavailable";
      host.retreat(change_at, s.grace, now);
      return;
    }
    if (host.suspended()) {
      host.resume();
      event("resume", "\"job\":" + std::to_string(*host.job()));
    }
    if (host.running() > 0) {
      if (host.job() != target && !host.retreating()) {
        log("job " + std::to_string(*host.job()) + " gives way to " +
            (target ? "job " + std::to_string(*target) : std::string("no job")));
        retreat_cause = obeying_scheduler ? "assignment" : "policy";
        host.retreat(now, s.grace, now);
      }
      return;
    }
    if (!target || !launches.count(*target)) return;
    if (auto h = hold_off.find(*target); h != hold_off.end() && now < h->second) return;
    const auto launch = launches.at(*target);
    if (!work_seen.count(launch.id))
      if (auto done = tasks_here(launch.id)) work_seen[launch.id] = *done;
    try {
      host.start(launch, s.cores);
      source->set_piranha_groups(host.groups());
      log("started " + std::to_string(s.cores) + " piranha" + (s.cores == 1 ? "" : "s") + " of job " +
          std::to_string(launch.id));
      event("start", "\"job\":" + std::to_string(launch.id) + ",\"count\":" + std::to_string(s.cores));
    } catch (const std::exception& e) {
      source->set_piranha_groups(host.groups());
      hold(launch.id, std::string("cannot start its program on ") + s.node + ": " + e.what());
    }
  }

  int run(const std::atomic<bool>& stop) {
    if (!connect(stop)) return 1;
    log("serving " + s.server + " with " + std::to_string(s.cores) + " core" + (s.cores == 1 ? "" : "s") +
        ", native policy " + std::string(name(s.policy)));
    publish(sys::NodeState::Unavailable);
    publish_run(std::string(name(s.policy)));
    auto now = SteadyClock::now();
    next_eval = next_tick = next_heartbeat = next_prune = now;
    bool input_event = false;
    while (!stop.load()) {
      now = SteadyClock::now();
      try {
        if (input_event || now >= next_eval) {
          // A scheduled re-evaluation (a trace step) changed at its deadline,
          // an input event at the moment it was read.
          SteadyClock::time_point when = input_event ? now : std::min(now, next_eval);
          verdict = source->evaluate(now);
          next_eval = source->next_evaluation(now);
          bool avail = verdict.available && !owner_blocked;
          if (avail != available) on_availability_change(avail, when);
          input_event = false;
        }
        if (now >= next_tick) {
          bool was_blocked = owner_blocked;
          read_system_space();
          next_tick = now + s.tick;
          bool avail = verdict.available && !owner_blocked;
          if (avail != available || was_blocked != owner_blocked) on_availability_change(avail, now);
        }
        if (now >= next_prune) prune(now);
        if (now >= next_heartbeat) {
          publish(node_state());
          next_heartbeat = now + std::chrono::milliseconds(static_cast<long>(s.heartbeat_seconds * 1000));
        }
        handle_exits(now);
        manage_piranhas(now);
      } catch (const ts::TupleSpaceError& e) {
        log(std::string("tuple space: ") + e.what());
        next_tick = now + std::chrono::seconds(1);
      }

      // Sleep until the next thing to do, an input event or a piranha exit.
      auto wake = std::min({next_eval, next_tick, next_heartbeat, next_prune});
      if (auto d = host.next_deadline()) wake = std::min(wake, *d);
      if (host.suspended()) wake = std::min(wake, *host.suspended_since() + s.suspend_max);
      std::vector<pollfd> fds;
      for (int fd : source->fds()) fds.push_back({fd, POLLIN, 0});
      std::size_t source_fds = fds.size();
      for (int fd : host.fds()) fds.push_back({fd, POLLIN, 0});
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(wake - SteadyClock::now()).count() + 1;
      // Without pidfds, exits are noticed by polling.
      bool poll_exits = host.exits_need_polling();
      left = std::clamp<long long>(left, 0, poll_exits ? 10 : 250);
      int n = ::poll(fds.data(), fds.size(), static_cast<int>(left));
      if (n > 0) {
        auto t = SteadyClock::now();
        for (std::size_t i = 0; i < source_fds; ++i)
          if (fds[i].revents) {
            source->on_readable(fds[i].fd, t);
            input_event = true;
          }
      }
    }
    shutdown();
    return 0;
  }

  void shutdown() {
    log("stopping");
    auto now = SteadyClock::now();
    retreat_cause = "agent stopping";
    if (host.running()) host.retreat(now, s.grace, now);
    while (host.running()) {
      handle_exits(SteadyClock::now());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    try {
      if (ap_start) client->out(sys::kSpace, sys::AvailabilityPeriod{s.node, *ap_start, sys::wall_now()}.to_tuple());
      publish(sys::NodeState::Down);
    } catch (const std::exception& e) {
      log(std::string("could not record the node going down: ") + e.what());
    }
    event("stop");
  }
};

Agent::Agent(AgentSettings settings, std::unique_ptr<AvailabilitySource> source)
    : impl_(std::make_unique<Impl>(std::move(settings), std::move(source))) {}
Agent::~Agent() = default;
int Agent::run(const std::atomic<bool>& stop) { return impl_->run(stop); }

}  // namespace piranha
