// The agent's shell around its decision (decide.h): sense, read the uplink's
// view, reap the piranhas, decide, carry out; then sleep until the next
// thing to do.
#include "piranha/agent/agent.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "piranha/agent/decide.h"
#include "piranha/agent/lending.h"
#include "piranha/agent/piranha_host.h"
#include "piranha/agent/uplink.h"
#include "piranha/base/input_error.h"
#include "piranha/runtime/endpoint.h"
#include "piranha/runtime/short_slice.h"
#include "piranha/runtime/sysspace.h"

namespace piranha {
namespace {

// The events file's fields in the order written (time, node, event, then
// the event's own).
using Json = nlohmann::ordered_json;

// The agent's threads' time slice (short_slice.h).
constexpr std::chrono::nanoseconds kAgentSlice = std::chrono::microseconds(100);

// What decide() needs of the uplink's view.
PoolView pool_view(const Uplink::View& v) {
  return PoolView{v.owner_blocked, v.live, v.requirements, v.assignment, v.scheduler, v.holds_written};
}

// What the piranhas get; `uplink` announces and withdraws their jobs' keys
// (it exists whenever a piranha starts or ends).
PiranhaEnvironment piranha_environment(const AgentSettings& s, const std::unique_ptr<Uplink>& uplink) {
  PiranhaEnvironment env;
  env.server = s.server;
  env.node = s.node;
  env.output_file = s.piranha_output;
  env.heartbeat_timeout_ms =
      s.mode == RetreatMode::Suspend ? static_cast<int>(s.suspend_max.count()) + 5000 : 0;
  env.lowest_priority = s.priority == PiranhaPriority::Idle;
  env.launch = s.launch;
  env.job_keys = s.job_keys;
  env.announce = [&uplink](const sys::JobKey& k) { uplink->announce_key(k); };
  env.withdraw = [&uplink](const sys::JobKey& k) {
    if (uplink) uplink->withdraw_key(k);
  };
  return env;
}

Piranhas piranhas_of(const PiranhaHost& host) {
  return Piranhas{host.running(), host.job(), host.retreating(), host.suspended_since()};
}

std::string plural(long n, const std::string& word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}

}  // namespace

struct Agent::Impl {
  // Reads the node's ("lent", node, ...) record and its pool's ("loan", ...) records every second,
  // on a thread of its own with a connection of its own, for lent_job() (lending.h); writes
  // `wake_fd` when what it read changed. Two requests a second per agent: loans are the campus's,
  // at its slower pace.
  class LoanReader {
   public:
    struct Seen {
      std::optional<sys::Lent> lent;
      std::vector<sys::CampusLoan> loans;
      bool operator==(const Seen& o) const {
        auto key = [](const Seen& s) {
          std::vector<ts::Tuple> t;
          if (s.lent) t.push_back(s.lent->to_tuple());
          for (const auto& l : s.loans) t.push_back(l.to_tuple());
          return t;
        };
        return key(*this) == key(o);
      }
    };

    // `public_key` (the agent's own, empty without keys) is published as the node's ("agentkey", ...)
    // record on each new connection, for the campus to seal loans' keys to.
    LoanReader(std::string server, std::string node, std::string public_key, int wake_fd,
               std::function<void(const std::string&)> log)
        : server_(std::move(server)),
          node_(std::move(node)),
          public_key_(std::move(public_key)),
          wake_fd_(wake_fd),
          log_(std::move(log)),
          thread_([this] { run(); }) {}
    ~LoanReader() {
      {
        std::lock_guard lock(mu_);
        stop_ = true;
      }
      cv_.notify_all();
      thread_.join();
    }
    Seen seen() const {
      std::lock_guard lock(mu_);
      return seen_;
    }

   private:
    void run() {
      std::unique_ptr<ts::Client> client;
      std::unique_lock lock(mu_);
      while (!stop_) {
        lock.unlock();
        Seen now;
        bool read = false;
        try {
          if (!client) {
            ts::ClientOptions o = ts::with_environment_keys({});
            o.connect_timeout = std::chrono::milliseconds(2000);
            o.request_timeout = std::chrono::milliseconds(5000);
            client = std::make_unique<ts::Client>(server_, o);
            if (!public_key_.empty())
              sys::replace(*client, sys::agentkey_template(node_),
                           sys::AgentKey{node_, public_key_}.to_tuple());
          }
          for (const auto& t : client->rd_many(sys::kSpace, sys::lent_template(node_), 16))
            if (auto l = sys::Lent::from_tuple(t); l && (!now.lent || l->epoch > now.lent->epoch))
              now.lent = l;
          for (const auto& t : client->rd_many(sys::kSpace, sys::loan_template(), 10'000))
            if (auto l = sys::CampusLoan::from_tuple(t)) now.loans.push_back(*l);
          read = true;
        } catch (const std::exception& e) {
          // Loans simply expire meanwhile; said once per failure.
          if (client) log_(std::string("cannot read the campus's loans: ") + e.what());
          client.reset();
        }
        lock.lock();
        if (read && !(now == seen_)) {
          seen_ = std::move(now);
          const std::uint64_t one = 1;
          [[maybe_unused]] auto w = ::write(wake_fd_, &one, sizeof one);
        }
        // Every 10 s while the node is lent nothing (the liveness traffic's pace: docs/scale.md),
        // every second while it is, so that a loan's end or change is seen promptly.
        const bool lent = seen_.lent && seen_.lent->job != 0;
        cv_.wait_for(lock, std::chrono::seconds(lent ? 1 : 10), [this] { return stop_; });
      }
    }

    const std::string server_, node_, public_key_;
    const int wake_fd_;
    const std::function<void(const std::string&)> log_;
    mutable std::mutex mu_;
    std::condition_variable cv_;
    bool stop_ = false;
    Seen seen_;
    std::thread thread_;
  };

  AgentSettings s;
  std::unique_ptr<AvailabilitySource> source;
  AgentState state;  // the decision's memory
  PiranhaHost host;
  std::ofstream events;
  int wake_fd = -1;                // written by the uplink after each read
  std::unique_ptr<Uplink> uplink;  // the system space, on its own thread

  Clock::time_point next_eval{};
  std::uint64_t view_seen = 0;    // generation of the last view decided on
  std::int64_t obeyed_epoch = 0;  // the assignment last noted as obeyed
  // A campus loan's foreign job (lending.h): its piranhas, in a host of their own connected to the
  // borrower's server, the loan they serve, and when another may start after one ended.
  std::unique_ptr<LoanReader> loans;
  std::unique_ptr<PiranhaHost> lent_host;
  std::optional<sys::CampusLoan> lent_loan;
  std::optional<LoanCredentials> lent_credentials;  // lent_host's, on a borrower with --auth
  Clock::time_point lent_restart{};
  std::optional<ts::CurveKeyPair> own_key;  // the agent's, to open loans' keys with

  Impl(AgentSettings settings, std::unique_ptr<AvailabilitySource> src)
      : s(std::move(settings)), source(std::move(src)), state(s), host(piranha_environment(s, uplink)) {
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

  // Carries out what decide() asked for, in order.
  void carry_out(const Actions& actions, Instant now) {
    for (const auto& a : actions) std::visit([&](const auto& x) { carry_out(x, now); }, a);
  }

  void carry_out(const act::NoteAvailability& a, Instant) {
    log(std::string(a.available ? "available" : "unavailable") + " (" + a.reason + ")");
    event(a.available ? "available" : "unavailable", {{"reason", a.reason}});
  }
  void carry_out(const act::ObeyScheduler& a, Instant) {
    log("obeying scheduler 0 (assignment epoch " + std::to_string(a.epoch) + ")");
  }
  void carry_out(const act::LeaveScheduler& a, Instant) {
    log(std::string("scheduler 0 ") + (a.gone ? "is gone" : "is stale") + "; back to the native " +
        std::string(name(s.policy)) + " policy");
  }
  void carry_out(const act::NoteTarget& a, Instant) {
    event("target", {{"job", a.job ? Json(*a.job) : Json(nullptr)}, {"by", a.by}});
  }
  void carry_out(const act::NoteRetreated& a, Instant) {
    char ms[32];
    std::snprintf(ms, sizeof ms, "%.1f", a.latency_ms);
    // Each retreat the job counts (its record, task_tally.h) is one of these
    // lines, unless the piranha was killed after its grace, was told before
    // it had connected, or its job had ended.
    log("piranha of job " + std::to_string(a.job) + " retreated (" + a.cause + ") in " + ms + " ms" +
        (a.killed ? " (killed after its grace: the job does not count it)" : ""));
    event("retreat", {{"job", a.job},
                      {"pid", a.pid},
                      {"cause", a.cause},
                      {"latency_ms", std::round(a.latency_ms * 10) / 10},
                      {"killed", a.killed}});
  }
  void carry_out(const act::NoteExit& a, Instant) { event("exit", {{"job", a.job}, {"status", a.status}}); }
  void carry_out(const act::NoteCutOff& a, Instant) {
    log("piranha of job " + std::to_string(a.job) + " was cut off from the server");
  }
  void carry_out(const act::NoteFailure& a, Instant) {
    log("piranha of job " + std::to_string(a.job) + " failed (" + a.status + ", " +
        std::to_string(a.in_a_row) + " of " + std::to_string(a.max_failures) + "); " +
        (a.wait.count() ? "next try in " + std::to_string(a.wait.count()) + " s"
                        : std::string("starting another")));
  }
  void carry_out(const act::RecordPeriod& a, Instant) {
    uplink->record_period(sys::AvailabilityPeriod{s.node, a.start, a.end});
  }
  void carry_out(const act::SetNodeState& a, Instant) {
    uplink->set_state(a.state, state_reason(a.state, state));
  }
  void carry_out(const act::PublishRun& a, Instant now) {
    uplink->set_run(sys::NodeRun{s.node, a.job.value_or(0), a.by, now.wall});
  }
  void carry_out(const act::Hold& a, Instant now) {
    log("holding job " + std::to_string(a.job) + ": " + a.reason);
    event("held", {{"job", a.job}, {"reason", a.reason}});
    uplink->hold(sys::JobHold{a.job, s.node, a.reason, now.wall});
  }
  void carry_out(const act::Start& a, Instant now) {
    try {
      host.start(a.launch, a.count);
      source->set_piranha_groups(host.groups());
      log("started " + plural(a.count, "piranha") + " of job " + std::to_string(a.launch.id));
      event("start", {{"job", a.launch.id}, {"count", a.count}});
    } catch (const std::exception& e) {
      source->set_piranha_groups(host.groups());
      carry_out(cannot_start(a.launch.id, e.what(), state), now);
    }
  }
  void carry_out(const act::Retreat& a, Instant now) {
    if (a.cause == "unavailable") {
      log("retreating job " + std::to_string(a.job));
    } else if (a.cause != "agent stopping") {
      log("job " + std::to_string(a.job) + " gives way to " +
          (a.gives_way_to ? "job " + std::to_string(*a.gives_way_to) : std::string("no job")));
    }
    host.retreat(a.change, s.grace, now.steady,
                 a.cause == "unavailable" ? RetreatCause::Owner : RetreatCause::GivesWay);
  }
  void carry_out(const act::Suspend& a, Instant now) {
    host.suspend(now.steady);
    log("suspended the piranhas of job " + std::to_string(a.job));
    event("suspend", {{"job", a.job}});
  }
  void carry_out(const act::Resume& a, Instant) {
    host.resume();
    event("resume", {{"job", a.job}});
  }

  // Event "obeyed" once scheduler 0's newest assignment is what the node
  // targets, with the latency from the decision (its epoch, in ms) and the
  // moment the uplink learnt of it: what bench/swarm.py reads off real agents.
  void note_obeyed(const Uplink::View& v, Instant at) {
    if (!state.obeying_scheduler || !v.assignment || v.assignment->epoch == obeyed_epoch) return;
    const auto assigned = v.assignment->job_id == 0 ? std::nullopt : std::optional(v.assignment->job_id);
    if (state.target != assigned) return;
    obeyed_epoch = v.assignment->epoch;
    const double epoch_ms = static_cast<double>(v.assignment->epoch);
    event("obeyed", {{"epoch", v.assignment->epoch},
                     {"latency_ms", std::round(std::max(0.0, at.wall * 1000 - epoch_ms) * 10) / 10},
                     {"seen_ms", std::round(std::max(0.0, v.assignment_seen * 1000 - epoch_ms) * 10) / 10}});
  }

  // Notes the foreign piranhas that ended; the foreign ones still running after that. Called
  // before decide(), which starts none of the node's own while they run.
  std::size_t reap_lent(Instant now) {
    if (!lent_host) return 0;
    for (const auto& e : lent_host->reap(now.steady)) {
      log("lent piranha of " + lent_loan->borrower + "'s job " + std::to_string(e.job_id) +
          (e.retreated ? " retreated" : " ended (" + e.status.describe() + ")"));
      event("lent-exit", {{"borrower", lent_loan->borrower}, {"job", e.job_id}, {"retreated", e.retreated}});
      if (!e.retreated) lent_restart = now.steady + std::chrono::seconds(e.status.ok() ? 1 : 2);
    }
    return lent_host->running();
  }

  // Starts, keeps or retreats the foreign job's piranhas (lending.h), after decide() has had its
  // say about the node's own.
  void steer_lent(Instant now) {
    std::optional<sys::CampusLoan> want;
    if (loans) {
      const LoanReader::Seen seen = loans->seen();
      want = lent_job(now.wall, state, host.running(), seen.lent, seen.loans);
    }
    if (lent_host && lent_host->running() > 0) {
      if (!lent_host->retreating() && (!want || !same_foreign_job(*want, *lent_loan))) {
        log("lent piranhas of " + lent_loan->borrower + "'s job " + std::to_string(lent_loan->job) +
            " retreat: " +
            (!state.available ? "the node is unavailable"
                              : "the loan ended or the node's own pool needs it"));
        lent_host->retreat(now.steady, s.grace, now.steady,
                           state.available ? RetreatCause::GivesWay : RetreatCause::Owner);
      }
      return;
    }
    if (!want || now.steady < lent_restart) return;
    std::optional<LoanCredentials> credentials;
    try {
      credentials = loan_credentials(*want, s.node, own_key);
    } catch (const std::exception& e) {
      log("cannot start " + want->borrower + "'s job " + std::to_string(want->job) + ": " + e.what());
      lent_restart = now.steady + std::chrono::seconds(10);
      return;
    }
    if (!lent_host || lent_loan->server != want->server || lent_credentials != credentials) {
      PiranhaEnvironment env = piranha_environment(s, uplink);
      env.server = want->server;
      env.job_keys = false;
      env.foreign = true;
      env.announce = nullptr;
      env.withdraw = nullptr;
      if (credentials) {
        env.given_key = credentials->key;
        env.server_key = credentials->server_key;
      }
      lent_host.reset();  // its key files go before another host makes its own
      lent_host = std::make_unique<PiranhaHost>(env);
      lent_credentials = credentials;
    }
    lent_loan = want;
    try {
      lent_host->start(sys::JobLaunch{want->job, want->program, want->args, want->cwd}, s.cores);
      log("started " + plural(s.cores, "piranha") + " of " + want->borrower + "'s job " +
          std::to_string(want->job) + " (lent by campus " + want->campus + ", server " + want->server +
          (credentials ? ", with the loan's key" : "") + ")");
      event("lent-start", {{"borrower", want->borrower}, {"job", want->job}, {"count", s.cores}});
    } catch (const std::exception& e) {
      log("cannot start " + want->borrower + "'s job " + std::to_string(want->job) + ": " + e.what());
      lent_restart = now.steady + std::chrono::seconds(10);
    }
  }

  // The piranhas that ended since the last call.
  std::vector<PiranhaExit> reap(Clock::time_point now) {
    auto exits = host.reap(now);
    if (!exits.empty()) source->set_piranha_groups(host.groups());
    return exits;
  }

  int run(const std::atomic<bool>& stop) {
    if (auto problem = endpoint_problem(s.server)) throw InputError("server", *problem);
    // The loop acts on an owner's return and on a retreating piranha's
    // exit: each must not wait for the owner's busy threads to end their
    // slices (short_slice.h). Set before the uplink's threads start, which
    // inherit it; the piranhas start with the kernel's default.
    use_slice(kAgentSlice);
    uplink = std::make_unique<Uplink>(
        s, [this](const std::string& m) { log(m); }, wake_fd);
    // Keys an earlier run of this agent left: their piranhas died with it.
    if (s.job_keys) uplink->withdraw_key(sys::JobKey{0, s.node, ""});
    if (s.campus_loans) {
      // The agent's own keys came through the environment (apps/agent.cc), as its uplink's do.
      if (auto keys = ts::curve_keys_from_environment())
        own_key = ts::CurveKeyPair{keys->public_key, keys->secret_key};
      loans = std::make_unique<LoanReader>(s.server, s.node, own_key ? own_key->public_key : "", wake_fd,
                                           [this](const std::string& m) { log(m); });
    }
    if (std::size_t n = host.leftovers_removed())
      log("removed " + std::to_string(n) + (n == 1 ? " directory" : " directories") +
          " of job keys left by agents no longer running");
    log("serving " + s.server + " with " + plural(s.cores, "core") + ", native policy " +
        std::string(name(s.policy)) +
        (s.priority == PiranhaPriority::Normal ? ", piranhas at the agent's own priority" : ""));
    auto now = Clock::now();
    next_eval = now;
    bool input_event = false;
    std::string refused;
    while (!stop.load() && (refused = uplink->refused()).empty()) {
      now = Clock::now();
      Observations seen;
      if (input_event || now >= next_eval) {
        // A scheduled re-evaluation (a trace step) changed at its deadline,
        // an input event at the moment it was read.
        seen.verdict_at = input_event ? now : std::min(now, next_eval);
        seen.verdict = source->evaluate(now);
        next_eval = source->next_evaluation(now);
        input_event = false;
      }
      const auto v = uplink->view();
      const bool new_view = v.generation != view_seen;
      if (new_view) {
        view_seen = v.generation;
        seen.view = pool_view(v);
      }
      seen.tasks_here = v.tasks_here;
      seen.exits = reap(now);
      seen.piranhas = piranhas_of(host);
      seen.server_away = uplink->server_away();
      const Instant at{now, sys::wall_now()};
      seen.lent_running = reap_lent(at);
      carry_out(decide(seen, state, at), at);
      steer_lent(at);
      if (new_view) note_obeyed(v, at);

      // Sleep until the next thing to do, an input event, a new view or a
      // piranha exit.
      auto wake = next_eval;
      if (auto d = host.next_deadline()) wake = std::min(wake, *d);
      if (lent_host) {
        if (auto d = lent_host->next_deadline()) wake = std::min(wake, *d);
        if (lent_restart > now) wake = std::min(wake, lent_restart);
      }
      if (auto d = next_due(state, piranhas_of(host), now)) wake = std::min(wake, *d);
      std::vector<pollfd> fds;
      for (int fd : source->fds()) fds.push_back({fd, POLLIN, 0});
      std::size_t source_fds = fds.size();
      fds.push_back({wake_fd, POLLIN, 0});
      for (int fd : host.fds()) fds.push_back({fd, POLLIN, 0});
      if (lent_host)
        for (int fd : lent_host->fds()) fds.push_back({fd, POLLIN, 0});
      // To the nanosecond: a trace step's deadline met a millisecond late
      // would be a millisecond more of every retreat it causes.
      auto left = std::chrono::duration_cast<std::chrono::nanoseconds>(wake - Clock::now());
      // Without pidfds, exits are noticed by polling.
      bool poll_exits = host.exits_need_polling();
      left = std::clamp<std::chrono::nanoseconds>(
          left, std::chrono::nanoseconds(0),
          poll_exits ? std::chrono::milliseconds(10) : std::chrono::milliseconds(250));
      const auto secs = std::chrono::duration_cast<std::chrono::seconds>(left);
      timespec timeout{static_cast<time_t>(secs.count()), static_cast<long>((left - secs).count())};
      int n = ::ppoll(fds.data(), fds.size(), &timeout, nullptr);
      if (n > 0) {
        auto t = Clock::now();
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
    if (!refused.empty()) {
      // Another pool's server: nothing of this node's may be written there.
      std::fprintf(stderr, "agent %s: refusing the server: %s\n", s.node.c_str(), refused.c_str());
      return shutdown(false);
    }
    return shutdown();
  }

  // Retreats the piranhas (within the grace period), then hands the open
  // availability period and the node's going down to the uplink and waits
  // for them until three quarters of the grace period from the stop are
  // over (at least half a second), so that a server that is away cannot
  // hold the agent up. Without `to_server` (a refused server) nothing is
  // handed over and the agent ends with status 1.
  int shutdown(bool to_server = true) {
    log("stopping");
    auto now = Clock::now();
    // Three quarters of the grace period leave time to exit within it.
    auto give_up = now + std::max<Clock::duration>(s.grace * 3 / 4, std::chrono::milliseconds(500));
    Observations seen;
    seen.stopping = true;
    for (;;) {
      seen.tasks_here = uplink->view().tasks_here;
      seen.piranhas = piranhas_of(host);
      const Instant at{now, sys::wall_now()};
      seen.lent_running = reap_lent(at);
      carry_out(decide(seen, state, at), at);
      steer_lent(at);
      if (state.down && (!lent_host || lent_host->running() == 0)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      now = Clock::now();
      seen.exits = reap(now);
    }
    if (to_server && !uplink->drain(std::max(give_up, Clock::now() + std::chrono::milliseconds(100))))
      log("could not record the node going down: the tuple-space server did not answer in time");
    bool reached = to_server && uplink->ever_connected();
    uplink.reset();
    event("stop");
    return reached ? 0 : 1;
  }
};

Agent::Agent(AgentSettings settings, std::unique_ptr<AvailabilitySource> source)
    : impl_(std::make_unique<Impl>(std::move(settings), std::move(source))) {}
Agent::~Agent() = default;
int Agent::run(const std::atomic<bool>& stop) {
  return impl_->run(stop);
}

}  // namespace piranha
