#include "piranha/nps/live.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>
#include <unordered_map>

#include "node_kinds.h"
#include "piranha/nps/campus_sim.h"
#include "piranha/nps/node_types.h"
#include "piranha/nps/tick_timer.h"
#include "piranha/nps/ticker.h"
#include "piranha/trellis/fiber_trellis.h"
#include "values.h"

using namespace std::chrono_literals;

namespace piranha::nps {
namespace {

// Event ticks (ticker.h) at most this often: a flood of news (many jobs
// submitted at once) costs at most one refresh of the pool per gap.
constexpr auto kEventGap = std::chrono::milliseconds(20);

std::string stamp() {
  std::time_t t = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%H:%M:%S", std::localtime(&t));
  return buf;
}

std::string job_text(const Value& v) {
  return v.is_int() ? "job " + std::to_string(v.as_int()) : "no job";
}

// The pool's large shapes read whole on a thread and connection of their
// own (LivePool::read_whole), so that no tick waits for them: a shape is
// due every few seconds and each is up to 10,000 tuples. Its failures are
// left unsaid (the tick's own requests meet the same server and say so);
// it connects again a second later. Stopped and joined by the destructor,
// which interrupts a call in progress.
class WholeReader {
 public:
  WholeReader(LivePool& pool, std::string server) : pool_(pool), server_(std::move(server)) {
    stop_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    thread_ = std::thread([this] { run(); });
  }
  ~WholeReader() {
    stop_ = true;
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(stop_fd_, &one, sizeof one);
    thread_.join();
    ::close(stop_fd_);
  }
  WholeReader(const WholeReader&) = delete;
  WholeReader& operator=(const WholeReader&) = delete;

 private:
  void run() {
    std::unique_ptr<ts::Client> c;
    while (!stop_) {
      auto pause = std::chrono::milliseconds(200);
      try {
        if (!c) {
          ts::ClientOptions o;
          o.connect_timeout = std::chrono::milliseconds(1000);
          o.interrupt_fd = stop_fd_;
          c = std::make_unique<ts::Client>(server_, o);
        }
        pool_.read_whole(*c);
      } catch (const std::exception&) {
        c.reset();
        pause = std::chrono::milliseconds(1000);
      }
      const auto until = Clock::now() + pause;
      while (!stop_ && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }

  LivePool& pool_;
  std::string server_;
  int stop_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

class Shell {
 public:
  Shell(const LiveOptions& o, std::ostream& log) : o_(o), log_(log), pool_(o.pool) {}

  int run(const std::atomic<bool>& stop) {
    const auto deadline = o_.duration ? std::optional(Clock::now() + *o_.duration) : std::nullopt;
    auto stopped = [&] { return stop.load() || (deadline && Clock::now() >= *deadline); };
    if (!connect(stopped)) return 1;
    if (o_.on_pool) o_.on_pool(client_->pool_name(), client_->pool_id());
    add_nps_types(types_, Environment{&pool_, make_memory()});
    if (o_.program_file) {
      program_ = trellis::load_program(*o_.program_file, types_);
      apply_overrides(*program_, o_.overrides);
      if (o_.tick_override)
        for (auto& n : program_->nodes)
          if (n.type == "enabler") n.params["period"] = *o_.tick_override;
      trellis::validate(*program_, types_);
      check_nps_program(*program_);
    }
    // The shell probes the enabler at the enabler's own period (the standard
    // program's enabler ticks every min(tick, period)), and in between at
    // once when the system space brings news (ticker.h).
    const double period =
        program_ ? enabler_period(*program_) : std::min(o_.standard.tick, o_.standard.period);
    const auto tick = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(period));
    if (!wait_for_silence(stopped, period)) return 0;
    try {
      pool_.start(*client_);
    } catch (const ts::TupleSpaceError& e) {
      if (e.code() != ts::Code::Interrupted || !stopped()) throw;
      note("stopped");
      return 0;
    }
    WholeReader whole_reader(pool_, o_.server);
    if (o_.on_records) o_.on_records(pool_.records());
    std::ostringstream what;
    what << "serving " << o_.server << " with "
         << (o_.program_file ? *o_.program_file : "the standard program") << ", a tick every " << period
         << " s";
    note(what.str());
    Ticker ticker(Clock::now(), tick, kEventGap);
    auto next_look = Clock::now();
    auto next_stats = Clock::now();
    auto next_lend = Clock::now();
    // A reconnection that met another pool's server (one replaced on the
    // same endpoint): nothing of this pool may be decided there.
    std::string refused;
    auto failed = [&](const ts::TupleSpaceError& e) {
      if (e.code() == ts::Code::WrongPool) refused = e.what();
      if (e.code() == ts::Code::Interrupted && stopped()) return;  // asked to stop: nothing to say
      note(std::string("tuple space: ") + e.what());
    };
    while (!stopped() && refused.empty()) {
      const auto now = Clock::now();
      if (const auto kind = ticker.take(now); kind != Ticker::Tick::None) {
        ticks_.began(seconds(now), pool_.latest_heartbeat().first);
        try {
          pool_.refresh(*client_);
          ticks_.read(seconds(Clock::now()));
          // Nodes that joined are taken in at grid ticks only, and after a
          // pause twice as long as the last rebuild took: a pool registering
          // brings news many times a second, and each rebuild costs time in
          // proportion to the whole pool (docs/scale.md), so that at most a
          // third of the NPS's time goes to rebuilding.
          if (trellises_.empty() ||
              (!program_ && kind == Ticker::Tick::Grid && Clock::now() >= next_rebuild_)) {
            const auto t0 = Clock::now();
            build();
            next_rebuild_ = Clock::now() + 2 * (Clock::now() - t0);
          }
          if (!enabler_.empty()) enabler_host_->probe(enabler_);
        } catch (const ts::TupleSpaceError& e) {
          failed(e);
        }
      }
      try {
        if (pool_.pending()) pool_.flush(*client_);
      } catch (const ts::TupleSpaceError& e) {
        failed(e);
      }
      // At the decision's own moment (the scheduler's heartbeat() call), not
      // when this thread got to it: the flush above may have waited on the
      // server, which is not the tick's.
      const auto [calls, decided_at] = pool_.latest_heartbeat();
      ticks_.decided(seconds(decided_at), calls);
      if (!o_.tick_stats_file.empty() && now >= next_stats) {
        write_tick_stats();
        next_stats = now + std::chrono::seconds(5);
      }
      // The subnet record reads every node's monitor and status: not while
      // the trellis decides a tick, whose threads would wait on each other
      // for the same locks (at 10,000 nodes about 30 ms of reading, in the
      // middle of every tick), unless a tick has been deciding for a second.
      if (now >= next_lend && (!ticks_.deciding() || now >= next_lend + std::chrono::seconds(1))) {
        try {
          lend();
        } catch (const ts::TupleSpaceError& e) {
          failed(e);
        }
        next_lend = now + std::chrono::seconds(1);
      }
      if (now >= next_look) {
        report_decisions();
        publish_states();
        next_look = now + std::chrono::milliseconds(100);
      }
      // Wait for news rather than sleep, so that an arrival is acted on
      // within a millisecond or so; at most 5 ms, for the trellis's writes.
      const auto wait =
          std::clamp(std::chrono::duration_cast<std::chrono::milliseconds>(ticker.next() - Clock::now()),
                     std::chrono::milliseconds(0), std::chrono::milliseconds(5));
      try {
        if (pool_.news(*client_, wait)) ticker.news();
      } catch (const ts::TupleSpaceError&) {
        // The next tick's refresh meets the same failure and says so.
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    }
    for (auto& t : trellises_) t->stop();
    if (!refused.empty()) return 1;
    try {
      // The main connection is interrupted once a signal asks to stop
      // (LiveOptions::stop_fd): the last writes go on one of their own that
      // waits a few seconds at most, so that a server that is gone does not
      // hold up the stop.
      std::unique_ptr<ts::Client> last;
      if (o_.stop_fd >= 0) {
        ts::ClientOptions lo;
        lo.connect_timeout = std::chrono::milliseconds(2000);
        lo.request_timeout = std::chrono::milliseconds(3000);
        last = std::make_unique<ts::Client>(o_.server, lo);
      }
      ts::Client& c = last ? *last : *client_;
      if (pool_.pending()) pool_.flush(c);
      pool_.withdraw(c);
    } catch (const ts::TupleSpaceError& e) {
      note(std::string("could not withdraw the heartbeat: ") + e.what());
    }
    const TickSummary t = ticks_.summary();
    if (!o_.tick_stats_file.empty()) write_tick_stats();
    if (t.ticks > 0) {
      char line[160];
      std::snprintf(line, sizeof line,
                    "%zu ticks: p50 %.1f ms, p99 %.1f ms, max %.1f ms (reading to decision)", t.ticks,
                    t.p50_ms, t.p99_ms, t.max_ms);
      note(line);
    }
    note("stopped");
    return 0;
  }

 private:
  static double seconds(Clock::time_point t) {
    return std::chrono::duration<double>(t.time_since_epoch()).count();
  }

  // Written whole, then renamed: a reader never sees half a file.
  void write_tick_stats() {
    const std::string tmp = o_.tick_stats_file + ".tmp";
    {
      std::ofstream f(tmp, std::ios::trunc);
      f << ticks_.summary().to_json(true) << "\n";
      if (!f) return;
    }
    std::rename(tmp.c_str(), o_.tick_stats_file.c_str());
  }

  bool connect(const std::function<bool()>& stopped) {
    try {
      client_ = sys::connect_patiently(
          o_.server, stopped, [&](const std::string& m) { note(m); }, o_.stop_fd, /*served_first=*/true);
    } catch (const ts::TupleSpaceError& e) {
      if (e.code() != ts::Code::WrongPool && e.code() != ts::Code::NotPermitted) throw;
      // Another pool's server, or a key that may not be the NPS: one line, and the NPS ends with status 1.
      note(e.what());
      return false;
    }
    return client_ != nullptr;
  }

  // The ids of the schedulers this process runs: scheduler 0 of the
  // standard program, or those of the program placed on the hosts run here.
  std::vector<std::int64_t> local_schedulers() const {
    if (!program_) return {0};
    std::vector<std::int64_t> ids;
    for (const auto& n : program_->nodes) {
      const bool here =
          o_.hosts.empty() || std::find(o_.hosts.begin(), o_.hosts.end(), n.host) != o_.hosts.end();
      const auto id = n.params.find("id");
      if (n.type == "scheduler" && here && id != n.params.end() && id->second.is_int())
        ids.push_back(id->second.as_int());
    }
    return ids;
  }

  // Two NPSs deciding for one scheduler id would overwrite each other's
  // assignments: while one of this process's scheduler ids beats (a younger
  // heartbeat than three ticks), another NPS is serving the pool, and this
  // one waits for it to stop. Returns false when stopped meanwhile.
  bool wait_for_silence(const std::function<bool()>& stopped, double tick) {
    const double quiet = std::max(3.0, 3 * tick);
    bool told = false;
    while (!stopped()) {
      std::optional<std::pair<std::int64_t, double>> beating;
      try {
        for (std::int64_t id : local_schedulers())
          if (auto t = client_->rd(sys::kSpace, sys::scheduler_heartbeat_template(id), 0ms))
            if (auto hb = sys::SchedulerHeartbeat::from_tuple(*t); hb && sys::wall_now() - hb->time < quiet)
              beating = std::pair(id, sys::wall_now() - hb->time);
      } catch (const ts::TupleSpaceError& e) {
        note(std::string("tuple space: ") + e.what());
      }
      if (!beating) return true;
      if (!told) {
        std::ostringstream m;
        m.precision(2);
        m << "scheduler " << beating->first << " beat " << std::fixed << beating->second
          << " s ago: another NPS is serving this pool; waiting until it stops";
        note(m.str());
        told = true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    return false;
  }

  // (Re)builds the trellis: once for a program file; for the standard
  // program whenever the pool's node list has grown.
  void build() {
    trellis::Program program;
    if (program_) {
      program = *program_;
    } else {
      auto nodes = pool_.node_names();
      if (nodes.empty()) {
        if (!waiting_) note("waiting for a node to register");
        waiting_ = true;
        return;
      }
      if (nodes == built_nodes_) return;
      std::string joined;
      for (std::size_t i = built_nodes_.size(); i < nodes.size(); ++i) joined += " " + nodes[i];
      note((built_nodes_.empty() ? "scheduling" : "node(s) joined, rescheduling with") + joined +
           " (scheduler 0: " + sched::canonical_strategy_name(o_.standard.strategy) + ")");
      StandardOptions s = o_.standard;
      s.nodes = nodes;
      program = standard_program(s, types_);
      built_nodes_ = nodes;
      ticks_.rebuilt();
    }
    for (auto& t : trellises_) t->stop();
    trellises_.clear();
    enabler_host_ = nullptr;
    enabler_ = enabler_name(program);
    std::vector<std::string> hosts = o_.hosts;
    if (hosts.empty())
      for (const auto& h : program.hosts) hosts.push_back(h.name);
    if (hosts.empty()) hosts.push_back("");
    schedulers_.clear();
    evaluators_.clear();
    monitor_groups_.clear();
    local_groups_.clear();
    for (const auto& h : hosts) {
      trellis::FiberOptions fo;
      fo.host = h;
      trellises_.push_back(std::make_unique<trellis::FiberTrellis>(program, types_, fo));
      for (const auto& n : program.nodes) {
        if (n.host != h) continue;
        if (n.name == enabler_) enabler_host_ = trellises_.back().get();
        if (n.type == "scheduler") schedulers_.push_back({trellises_.back().get(), n.name});
        if (n.type == "evaluator") evaluators_.push_back({trellises_.back().get(), n.name});
        if (n.type == "monitor") add_to(monitor_groups_, trellises_.back().get(), n.name);
        add_to(local_groups_, trellises_.back().get(), n.name);
      }
    }
    if (!enabler_host_) enabler_.clear();  // another host ticks
    built_ = program;
  }

  // The campus's side of this pool (campus_live.h): its state for the campus, from what scheduler
  // 0 assigned and the monitors predict, and its idle nodes serving the loans it trusts.
  void lend() {
    if (built_nodes_.empty() && !program_) return;
    // Every node's facts in the pool's order, read in bulk: one lock for
    // the monitors' states, not one each, and no map of names per field
    // (docs/scale.md, limit 20).
    const std::vector<std::string> nodes = pool_.node_names();
    const std::size_t n = nodes.size();
    std::unordered_map<std::string_view, std::size_t> at;
    at.reserve(n);
    for (std::size_t i = 0; i < n; ++i) at.emplace(nodes[i], i);
    std::unique_ptr<bool[]> own_of(new bool[n]()), available(new bool[n]());
    std::vector<bool> own_v(n), available_v(n);
    for (const auto& [t, name] : schedulers_) {
      const Value s = t->state(name);
      if (int_of(s, "id") != 0 || !s["assignments"].is_map()) continue;
      for (const auto& [node, job] : s["assignments"].as_map())
        if (const auto i = at.find(node); i != at.end()) own_of[i->second] = job.is_int();
    }
    // The monitors' states only: a node's owner node has none to give (the
    // standard program has one of each per workstation).
    std::vector<double> fraction_v(n);
    std::vector<bool> has_fraction(n);
    for (const auto& g : monitor_groups_)
      for (const Value& s : g.trellis->states(g.names)) {
        const Value& node = s.get("node", MonitorFields::kNode);
        const Value& f = s.get("fraction", MonitorFields::kFraction);
        if (!node.is_string() || !f.is_number()) continue;
        if (const auto i = at.find(node.as_string()); i != at.end()) {
          fraction_v[i->second] = f.as_number();
          has_fraction[i->second] = true;
        }
      }
    std::vector<std::optional<LentJob>> serving(n);
    // What each node offers jobs' requirements: for the state, only nodes whose agent is up (a
    // job only down nodes satisfy is stranded, as `piranha jobs` says it waits).
    std::vector<std::optional<sched::NodeAttributes>> offers(n);
    std::vector<sched::NodeAttributes> offers_now(n);
    NodeStatus st;  // reused: its strings keep their storage
    for (std::size_t i = 0; i < n; ++i) {
      const bool known = pool_.node_into(nodes[i], st);
      if (known && st.attributes) {
        offers_now[i] = *st.attributes;
        if (st.state != "down") offers[i] = st.attributes;
      }
      available_v[i] = available[i] = known && st.available;
      own_v[i] = own_of[i];
      if (!has_fraction[i]) fraction_v[i] = available[i] ? 1.0 : 0.0;
      if (!lent_.empty())
        if (const auto w = lent_.find(nodes[i]); w != lent_.end()) serving[i] = w->second;
    }
    const double now = sys::wall_now();
    const sched::SubnetState state = subnet_state(pool_.jobs(), available_v, own_v, fraction_v, offers);
    sys::replace(*client_, sys::subnet_template(),
                 sys::SubnetReport{now, subnet_state_json(state)}.to_tuple());
    std::vector<sys::CampusLoan> loans;
    if (!o_.lending.lends_to.empty())
      for (const auto& t : client_->rd_many(sys::kSpace, sys::loan_template(), 10'000))
        if (auto l = sys::CampusLoan::from_tuple(t)) loans.push_back(*l);
    const auto plan = plan_lending(now, loans, o_.lending, std::span<const bool>(own_of.get(), n),
                                   std::span<const bool>(available.get(), n), serving, offers_now);
    for (std::size_t i = 0; i < n; ++i) {
      const auto w = lent_.find(nodes[i]);
      if (w != lent_.end() ? w->second == plan[i] : !plan[i]) continue;
      const sys::Lent lent{nodes[i], plan[i] ? plan[i]->borrower : "", plan[i] ? plan[i]->job : 0,
                           static_cast<std::int64_t>(now * 1000)};
      sys::replace(*client_, sys::lent_template(nodes[i]), lent.to_tuple());
      note(plan[i]
               ? "lending " + nodes[i] + " to " + plan[i]->borrower + "'s job " + std::to_string(plan[i]->job)
               : "no longer lending " + nodes[i]);
      lent_[nodes[i]] = plan[i];
    }
  }

  // Hands every node's state to on_states (the live page).
  void publish_states() {
    if (!o_.on_states) return;
    std::vector<Value> states;
    for (const auto& g : local_groups_) {
      auto some = g.trellis->states(g.names);
      states.insert(states.end(), std::make_move_iterator(some.begin()), std::make_move_iterator(some.end()));
    }
    o_.on_states(sys::wall_now(), states);
  }

  // Logs each scheduler's assignments when they change, and the
  // evaluator's switches with their evidence.
  void report_decisions() {
    for (const auto& [t, name] : evaluators_) {
      const Value s = t->state(name);
      if (s["last_switch"].is_string() && !s["last_switch"].as_string().empty() &&
          s["last_switch"] != last_switch_) {
        note("evaluator: " + s["last_switch"].as_string());
        last_switch_ = s["last_switch"];
      }
    }
    if (o_.quiet) return;
    for (const auto& [t, name] : schedulers_) {
      const Value s = t->state(name);
      if (!s["assignments"].is_map() || s["assignments"].as_map().empty()) continue;
      auto& before = last_[name];
      if (s["assignments"] == before) continue;
      std::map<std::string, std::vector<std::string>> by_job;
      for (const auto& [node, job] : s["assignments"].as_map()) by_job[job_text(job)].push_back(node);
      std::string line =
          "scheduler " + std::to_string(int_of(s, "id")) + " (" + s["strategy"].as_string() + "):";
      for (const auto& [job, nodes] : by_job) {
        line += " " + job + " on";
        for (const auto& n : nodes) line += " " + n;
        line += ";";
      }
      line.pop_back();
      note(line);
      before = s["assignments"];
    }
  }

  void note(const std::string& line) {
    if (o_.quiet && line.rfind("scheduler ", 0) == 0) return;
    log_ << stamp() << " nps: " << line << std::endl;
  }

  const LiveOptions& o_;
  std::ostream& log_;
  LivePool pool_;
  TickTimer ticks_;
  std::unique_ptr<ts::Client> client_;
  trellis::Registry types_;
  std::optional<trellis::Program> program_, built_;
  std::vector<std::string> built_nodes_;
  std::vector<std::unique_ptr<trellis::FiberTrellis>> trellises_;
  trellis::FiberTrellis* enabler_host_ = nullptr;
  std::string enabler_;
  std::vector<std::pair<trellis::FiberTrellis*, std::string>> schedulers_, evaluators_;
  // Nodes by the trellis that runs them, in program order, for reading
  // their states together (FiberTrellis::states): the monitors, and every
  // local node.
  struct Group {
    trellis::FiberTrellis* trellis;
    std::vector<std::string> names;
  };
  static void add_to(std::vector<Group>& groups, trellis::FiberTrellis* t, const std::string& name) {
    if (groups.empty() || groups.back().trellis != t) groups.push_back({t, {}});
    groups.back().names.push_back(name);
  }
  std::vector<Group> monitor_groups_, local_groups_;
  Value last_switch_;
  std::map<std::string, Value> last_;
  std::map<std::string, std::optional<LentJob>> lent_;  // each node's ("lent", ...) as written
  bool waiting_ = false;
  Clock::time_point next_rebuild_{};
};

}  // namespace

int run_live(const LiveOptions& options, const std::atomic<bool>& stop, std::ostream& log) {
  return Shell(options, log).run(stop);
}

}  // namespace piranha::nps
