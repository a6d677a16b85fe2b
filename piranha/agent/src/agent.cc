#include "piranha/agent/agent.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "piranha/runtime/job.h"
#include "piranha/agent/piranha_host.h"
#include "piranha/runtime/endpoint.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/runtime/short_slice.h"
#include "uplink.h"

namespace piranha {
namespace {

// The events file's fields in the order written (time, node, event, then
// the event's own).
using Json = nlohmann::ordered_json;

double ms(std::chrono::duration<double> d) { return d.count() * 1e3; }

// The agent's threads' time slice (short_slice.h).
constexpr std::chrono::nanoseconds kAgentSlice = std::chrono::microseconds(100);

}  // namespace

struct Agent::Impl {
  AgentSettings s;
  std::unique_ptr<AvailabilitySource> source;
  NativePolicy policy;
  PiranhaHost host;
  std::ofstream events;
  int wake_fd = -1;               // written by the uplink after each read
  std::unique_ptr<Uplink> uplink;  // the system space, on its own thread

  Verdict verdict{false, "not yet evaluated"};
  bool owner_blocked = false;
  bool available = false;
  std::optional<double> ap_start;  // wall time the open availability period began
  SteadyClock::time_point change_at{};  // when the last availability change happened

  SteadyClock::time_point next_eval{};
  std::uint64_t view_seen = 0;  // generation of the last view applied
  Uplink::View view;
  std::map<std::int64_t, sys::JobLaunch> launches;
  std::optional<std::int64_t> target;  // the job this node should run
  bool obeying_scheduler = false;
  std::string run_by;  // `by` of the last ("running", ...) published
  std::map<std::int64_t, SteadyClock::time_point> hold_off;  // no restart before
  std::map<std::int64_t, int> failures;          // in a row, on this node
  std::map<std::int64_t, std::int64_t> work_seen;  // jobwork tasks here at the last start or failure
  // Jobs held here, by the number of their hold request: not run again
  // until a view read after the hold was written says whether they are live
  // (released) or not.
  std::map<std::int64_t, std::uint64_t> held;
  std::uint64_t holds_requested = 0;
  std::string retreat_cause;  // why the piranhas were last told to retreat

  Impl(AgentSettings settings, std::unique_ptr<AvailabilitySource> src)
      : s(std::move(settings)),
        source(std::move(src)),
        policy(s.policy, s.seed),
        host(PiranhaEnvironment{s.server, s.node, s.piranha_output,
                                s.mode == RetreatMode::Suspend
                                    ? static_cast<int>(s.suspend_max.count()) + 5000
                                    : 0,
                                s.priority == PiranhaPriority::Idle}) {
    if (!s.events_file.empty()) {
      events.open(s.events_file, std::ios::app);
      if (!events) throw std::runtime_error(s.events_file + ": cannot open the events file");
    }
    wake_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd < 0) throw std::runtime_error("agent: cannot create an eventfd");
  }
  ~Impl() {
    uplink.reset();
    if (wake_fd >= 0) ::close(wake_fd);
  }

  void log(const std::string& line) {
    if (!s.quiet) std::fprintf(stderr, "agent %s: %s\n", s.node.c_str(), line.c_str());
  }

  // One JSON object per line: {"time": ..., "node": ..., "event": ..., fields}.
  void event(const std::string& kind, const Json& fields = Json::object()) {
    if (!events.is_open()) return;
    Json e{{"time", std::round(sys::wall_now() * 1e6) / 1e6}, {"node", s.node}, {"event", kind}};
    for (const auto& [key, value] : fields.items()) e[key] = value;
    // A piranha's stderr in a hold's reason need not be UTF-8.
    events << e.dump(-1, ' ', false, Json::error_handler_t::replace) << "\n";
    events.flush();
  }

  sys::NodeState node_state() const {
    if (owner_blocked) return sys::NodeState::OwnerBlocked;
    return available ? sys::NodeState::Available : sys::NodeState::Unavailable;
  }

  // Applies what the uplink last read: owner blocks, live jobs, and the
  // scheduler's assignment or the native policy's choice; decides target.
  void apply_view(const Uplink::View& v) {
    double now = sys::wall_now();
    view = v;
    owner_blocked = v.owner_blocked;
    std::erase_if(held, [&](const auto& h) { return h.second <= v.holds_written; });
    std::vector<LiveJob> live;
    launches.clear();
    for (const auto& l : v.live) {
      if (held.count(l.id)) continue;
      launches.emplace(l.id, l);
      live.push_back(LiveJob{l.id});
    }

    bool fresh = v.scheduler && now - v.scheduler->time <= s.scheduler_stale_seconds;
    std::optional<std::int64_t> chosen;
    if (v.assignment && fresh) {
      if (!obeying_scheduler) log("obeying scheduler 0 (assignment epoch " + std::to_string(v.assignment->epoch) + ")");
      obeying_scheduler = true;
      if (v.assignment->job_id != 0 && launches.count(v.assignment->job_id)) chosen = v.assignment->job_id;
    } else {
      if (obeying_scheduler)
        log(std::string("scheduler 0 ") + (v.scheduler ? "is stale" : "is gone") + "; back to the native " +
            std::string(name(s.policy)) + " policy");
      obeying_scheduler = false;
      chosen = policy.choose(live, target);
    }
    std::string by = obeying_scheduler ? "scheduler 0" : std::string(name(s.policy));
    if (chosen != target) {
      event("target", {{"job", chosen ? Json(*chosen) : Json(nullptr)},
                       {"by", obeying_scheduler ? "scheduler" : std::string(name(s.policy))}});
      target = chosen;
      publish_run(by);
    } else if (by != run_by) {
      publish_run(by);
    }
  }

  // ("running", node, job, by, since): what this node runs now and on whose word.
  void publish_run(const std::string& by) {
    run_by = by;
    uplink->set_run(sys::NodeRun{s.node, target.value_or(0), by, sys::wall_now()});
  }

  void on_availability_change(bool now_available, SteadyClock::time_point when) {
    double wall = sys::wall_now();
    available = now_available;
    change_at = when;
    std::string why = owner_blocked ? "owner block" : verdict.reason;
    if (available) {
      ap_start = wall;
      log("available (" + why + ")");
      event("available", {{"reason", why}});
    } else {
      if (ap_start) {
        uplink->record_period(sys::AvailabilityPeriod{s.node, *ap_start, wall});
        ap_start.reset();
      }
      log("unavailable (" + why + ")");
      event("unavailable", {{"reason", why}});
    }
    uplink->set_state(node_state());
  }

  // Tasks of `job` completed on this node, as the uplink last learnt (its
  // watch notes them as the feeder publishes them, between views).
  std::optional<std::int64_t> tasks_here(std::int64_t job) const {
    auto latest = uplink->view();
    auto it = latest.tasks_here.find(job);
    if (it == latest.tasks_here.end()) return std::nullopt;
    return it->second;
  }

  // Stops running `job` anywhere: its state becomes held, with `reason`.
  void hold(std::int64_t job, const std::string& reason) {
    failures.erase(job);
    hold_off.erase(job);
    work_seen.erase(job);
    log("holding job " + std::to_string(job) + ": " + reason);
    event("held", {{"job", job}, {"reason", reason}});
    uplink->hold(sys::JobHold{job, s.node, reason, sys::wall_now()});
    held[job] = ++holds_requested;
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
        event("retreat", {{"job", e.job_id},
                          {"pid", e.pid},
                          {"cause", retreat_cause},
                          {"latency_ms", std::round(lat * 10) / 10},
                          {"killed", e.killed}});
        continue;
      }
      event("exit", {{"job", e.job_id}, {"status", e.status.describe()}});
      if (e.status.signal == 0 && e.status.code == kExitCutOff) {
        // Not the job's fault: its piranha lost the server. Another starts
        // once the server answers again.
        log("piranha of job " + job + " was cut off from the server");
        hold_off[e.job_id] = now + std::chrono::seconds(2);
      } else if (e.status.ok()) {
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
        event("suspend", {{"job", *host.job()}});
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
      event("resume", {{"job", *host.job()}});
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
    // No new piranhas while the server is away: they could not reach it.
    if (!target || !launches.count(*target) || uplink->server_away()) return;
    if (auto h = hold_off.find(*target); h != hold_off.end() && now < h->second) return;
    const auto launch = launches.at(*target);
    if (!work_seen.count(launch.id))
      if (auto done = tasks_here(launch.id)) work_seen[launch.id] = *done;
    try {
      host.start(launch, s.cores);
      source->set_piranha_groups(host.groups());
      log("started " + std::to_string(s.cores) + " piranha" + (s.cores == 1 ? "" : "s") + " of job " +
          std::to_string(launch.id));
      event("start", {{"job", launch.id}, {"count", s.cores}});
    } catch (const std::exception& e) {
      source->set_piranha_groups(host.groups());
      hold(launch.id, std::string("cannot start its program on ") + s.node + ": " + e.what());
    }
  }

  int run(const std::atomic<bool>& stop) {
    if (auto problem = endpoint_problem(s.server)) throw std::invalid_argument("server: " + *problem);
    // The loop acts on an owner's return and on a retreating piranha's
    // exit: each must not wait for the owner's busy threads to end their
    // slices (short_slice.h). Set before the uplink's threads start, which
    // inherit it; the piranhas start with the kernel's default.
    use_slice(kAgentSlice);
    uplink = std::make_unique<Uplink>(s, [this](const std::string& m) { log(m); }, wake_fd);
    log("serving " + s.server + " with " + std::to_string(s.cores) + " core" + (s.cores == 1 ? "" : "s") +
        ", native policy " + std::string(name(s.policy)) +
        (s.priority == PiranhaPriority::Normal ? ", piranhas at the agent's own priority" : ""));
    uplink->set_state(sys::NodeState::Unavailable);
    publish_run(std::string(name(s.policy)));
    auto now = SteadyClock::now();
    next_eval = now;
    bool input_event = false;
    while (!stop.load()) {
      now = SteadyClock::now();
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
      if (auto v = uplink->view(); v.generation != view_seen) {
        view_seen = v.generation;
        bool was_blocked = owner_blocked;
        apply_view(v);
        bool avail = verdict.available && !owner_blocked;
        if (avail != available || was_blocked != owner_blocked) on_availability_change(avail, now);
      }
      handle_exits(now);
      manage_piranhas(now);

      // Sleep until the next thing to do, an input event, a new view or a
      // piranha exit.
      auto wake = next_eval;
      if (auto d = host.next_deadline()) wake = std::min(wake, *d);
      if (host.suspended()) wake = std::min(wake, *host.suspended_since() + s.suspend_max);
      auto hold_until = std::min_element(hold_off.begin(), hold_off.end(),
                                         [](const auto& a, const auto& b) { return a.second < b.second; });
      if (hold_until != hold_off.end() && hold_until->second > now) wake = std::min(wake, hold_until->second);
      std::vector<pollfd> fds;
      for (int fd : source->fds()) fds.push_back({fd, POLLIN, 0});
      std::size_t source_fds = fds.size();
      fds.push_back({wake_fd, POLLIN, 0});
      for (int fd : host.fds()) fds.push_back({fd, POLLIN, 0});
      // To the nanosecond: a trace step's deadline met a millisecond late
      // would be a millisecond more of every retreat it causes.
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(wake - SteadyClock::now());
      // Without pidfds, exits are noticed by polling.
      bool poll_exits = host.exits_need_polling();
      left = std::clamp<std::chrono::nanoseconds>(left, std::chrono::nanoseconds(0),
                                                  poll_exits ? std::chrono::milliseconds(10)
                                                             : std::chrono::milliseconds(250));
      const auto secs = std::chrono::duration_cast<std::chrono::seconds>(left);
      timespec timeout{static_cast<time_t>(secs.count()), static_cast<long>((left - secs).count())};
      int n = ::ppoll(fds.data(), fds.size(), &timeout, nullptr);
      if (n > 0) {
        auto t = SteadyClock::now();
        for (std::size_t i = 0; i < source_fds; ++i)
          if (fds[i].revents) {
            source->on_readable(fds[i].fd, t);
            input_event = true;
          }
        if (fds[source_fds].revents) {
          std::uint64_t v;
          [[maybe_unused]] auto r = ::read(wake_fd, &v, sizeof v);
        }
      }
    }
    return shutdown();
  }

  // Retreats the piranhas (within the grace period), then hands the open
  // availability period and the node's going down to the uplink and waits
  // for them until three quarters of the grace period from the stop are
  // over (at least half a second), so that a server that is away cannot
  // hold the agent up.
  int shutdown() {
    log("stopping");
    auto now = SteadyClock::now();
    // Three quarters of the grace period leave time to exit within it.
    auto give_up = now + std::max<SteadyClock::duration>(s.grace * 3 / 4, std::chrono::milliseconds(500));
    retreat_cause = "agent stopping";
    if (host.running()) host.retreat(now, s.grace, now);
    while (host.running()) {
      handle_exits(SteadyClock::now());
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    if (ap_start) uplink->record_period(sys::AvailabilityPeriod{s.node, *ap_start, sys::wall_now()});
    uplink->set_state(sys::NodeState::Down);
    if (!uplink->drain(std::max(give_up, SteadyClock::now() + std::chrono::milliseconds(100))))
      log("could not record the node going down: the tuple-space server did not answer in time");
    bool reached = uplink->ever_connected();
    uplink.reset();
    event("stop");
    return reached ? 0 : 1;
  }
};

Agent::Agent(AgentSettings settings, std::unique_ptr<AvailabilitySource> source)
    : impl_(std::make_unique<Impl>(std::move(settings), std::move(source))) {}
Agent::~Agent() = default;
int Agent::run(const std::atomic<bool>& stop) { return impl_->run(stop); }

}  // namespace piranha
