// piranha-swarm: N simulated workstations (swarm_node.h) in one process
// (several processes for a larger pool: --first numbers their nodes apart),
// against a real `piranha ts serve` and a real `piranha nps run`, for the
// scale benchmark (bench/swarm.sh, docs/scale.md).
//
//   piranha-swarm --server tcp://127.0.0.1:7070 --nodes 1000 --trace t.avail.csv --status s.json
//
// Each node keeps its own two connections to the server, as an agent does;
// the nodes are shared among --drivers threads, which decide for them, each
// with a thread of its own consuming its nodes' tasks. Every second the swarm rewrites --status with
// what it sees (JSON, below); it runs until SIGINT or SIGTERM (or
// --seconds), then marks its nodes down.
//
// The status file: {"time", "started", "connected", "away", "available",
// "obeying", "uplink_reads" (the nodes' reads of the system space so far), "running": {job: nodes},
// "tasks_completed", "obey_latency_ms":
// {"count", "p50", "p99", "max"}, "obey_ms" (every latency, sorted), "seen_ms" (for the same
// decisions, each until the node's uplink learnt of it, sorted), "registered", "false_stale",
// "stale_checks", "spread_s": {job: seconds}}. "false_stale" is the most
// nodes seen at once whose agent was connected and alive but whose
// heartbeat in the system space was older than --node-stale (the rule the
// NPS and `piranha nodes` apply); "spread_s" is, per job, the time from its
// submission (its job record) until 90 % of the available nodes consumed
// its tasks.
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <thread>
#include <zmq.hpp>

#include "piranha/agent/availability_source.h"
#include "piranha/base/percentile.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/scheduler/avail_trace.h"
#include "piranha/tuplespace/server.h"
#include "swarm_node.h"

using namespace std::chrono_literals;
using Json = nlohmann::ordered_json;

namespace piranha::swarm {
namespace {

std::atomic<bool> g_stop{false};
void on_signal(int) {
  g_stop = true;
}

struct Options {
  std::string server = std::string(sys::kDefaultServer);
  int nodes = 100;
  int first = 0;  // the first node's number: several swarms can share a pool
  std::string prefix = "sw";
  std::string trace;
  double time_scale = 10;
  int drivers = 2;
  double task_seconds = 10;
  double heartbeat_seconds = AgentSettings{}.heartbeat_seconds;
  double scheduler_stale = AgentSettings{}.scheduler_stale_seconds;
  double node_stale = 30;
  double ramp = 2000;  // nodes started per second
  std::string status;
  double seconds = 0;
  bool aligned = false;  // every node's trace steps at the same instants (--aligned)
};

// A thread that owns a share of the nodes: starts them at its share of the
// ramp, then turns each when it is due or its uplink read a new view.
class Driver {
 public:
  Driver(const Options& o, const AvailabilityTrace& trace, Tally& tally, std::vector<int> indices)
      : o_(o), trace_(trace), tally_(tally), indices_(std::move(indices)) {
    wake_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    thread_ = std::thread([this] { run(); });
    consumer_ = std::thread([this] { consume(); });
  }
  ~Driver() {
    consumer_.join();
    thread_.join();
    ::close(wake_);
  }

  // The counters, for the reporter (any thread).
  struct Counts {
    std::size_t started = 0, connected = 0, away = 0, available = 0, obeying = 0;
    std::uint64_t reads = 0;  // the uplinks' reads of the system space
    std::map<std::int64_t, std::size_t> running;
    std::vector<std::string> alive;  // connected and not away
  };
  Counts counts() const {
    std::lock_guard lock(mu_);
    Counts c;
    for (const auto& n : nodes_) {
      ++c.started;
      const bool away = n->server_away();
      c.away += away;
      c.available += n->available();
      c.obeying += n->obeying();
      c.reads += n->uplink_reads();
      if (auto j = n->job_running()) ++c.running[j];
      if (!away) c.alive.push_back(n->name());
    }
    c.connected = c.alive.size();
    return c;
  }

 private:
  // The nodes' tasks, on a thread and connection of their own so that no
  // decision waits behind them (swarm_node.h): each node whose task is due
  // takes and completes one, then the thread sleeps until the next is due
  // (10 ms at most, so that a node just started is served soon).
  void consume() {
    std::unique_ptr<ts::Client> consumer;
    std::vector<SwarmNode*> nodes;
    while (!g_stop) {
      if (!consumer) consumer = connect();
      if (!consumer) continue;
      {
        std::lock_guard lock(mu_);
        nodes.resize(nodes_.size());
        for (std::size_t i = 0; i < nodes_.size(); ++i) nodes[i] = nodes_[i].get();
      }
      auto next = Clock::now() + 10ms;
      for (SwarmNode* n : nodes) next = std::min(next, n->consume(Clock::now(), *consumer));
      std::this_thread::sleep_until(next);
    }
    consumed_ = true;
  }

  void run() {
    const auto origin = Clock::now();
    std::vector<Clock::time_point> due;
    std::size_t made = 0;
    const double per_second = o_.ramp / o_.drivers;
    while (!g_stop) {
      auto now = Clock::now();
      // The ramp: so many nodes a second, as a pool's machines boot.
      const double elapsed = std::chrono::duration<double>(now - origin).count();
      while (made < indices_.size() && static_cast<double>(made) < elapsed * per_second + 1) {
        add(indices_[made++], origin);
        due.push_back(now);
      }
      auto next = now + 50ms;
      for (std::size_t i = 0; i < nodes_.size(); ++i) {
        if (now >= due[i] || nodes_[i]->view_changed()) due[i] = nodes_[i]->turn(now);
        next = std::min(next, due[i]);
      }
      if (made < indices_.size()) next = std::min(next, Clock::now() + 10ms);
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - Clock::now());
      pollfd p{wake_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(std::clamp<std::int64_t>(left.count(), 0, 50))) > 0) {
        std::uint64_t v;
        [[maybe_unused]] auto r = ::read(wake_, &v, sizeof v);
      }
    }
    // The consumer thread first: it holds pointers to the nodes.
    while (!consumed_) std::this_thread::sleep_for(1ms);
    // Under the lock: the reporter may still be counting.
    std::lock_guard lock(mu_);
    const auto deadline = Clock::now() + 5s;
    for (auto& n : nodes_) n->stop(deadline);
    nodes_.clear();
  }

  std::unique_ptr<ts::Client> connect() {
    try {
      return std::make_unique<ts::Client>(o_.server);
    } catch (const std::exception&) {
      std::this_thread::sleep_for(100ms);
      return nullptr;
    }
  }

  void add(int i, Clock::time_point origin) {
    char name[32];
    std::snprintf(name, sizeof name, "%s%05d", o_.prefix.c_str(), i);
    AgentSettings s;
    s.node = name;
    s.server = o_.server;
    s.heartbeat_seconds = o_.heartbeat_seconds;
    s.scheduler_stale_seconds = o_.scheduler_stale;
    s.quiet = true;
    const std::string& trace_node = trace_.nodes[static_cast<std::size_t>(i) % trace_.nodes.size()];
    // A real owner comes and goes when they please, not on the trace's
    // 30-s grid: each node's replay is shifted by its own fraction of a step
    // (spread evenly by the golden ratio), so that N nodes' changes do not
    // all land on the server and the NPS in the same instant, unless
    // --aligned asks for that storm.
    const double phase = o_.aligned ? 0 : std::fmod(static_cast<double>(i) * 0.6180339887498949, 1.0);
    const auto shift = std::chrono::duration_cast<Clock::duration>(
        std::chrono::duration<double>(phase * static_cast<double>(trace_.step_seconds) / o_.time_scale));
    auto source = std::make_unique<TraceAvailability>(trace_, trace_node, o_.time_scale, 0, origin - shift);
    auto node =
        std::make_unique<SwarmNode>(s, std::move(source), ConsumerSettings{o_.task_seconds}, tally_, wake_);
    std::lock_guard lock(mu_);
    nodes_.push_back(std::move(node));
  }

  const Options& o_;
  const AvailabilityTrace& trace_;
  Tally& tally_;
  std::vector<int> indices_;
  int wake_ = -1;
  mutable std::mutex mu_;  // nodes_ (the list; each node is the driver's)
  std::vector<std::unique_ptr<SwarmNode>> nodes_;
  std::atomic<bool> consumed_{false};  // the consumer thread has ended
  std::thread thread_, consumer_;
};

// percentile() of sorted `v`, 0 when there is none yet (the status file is written from the start).
double rank(const std::vector<double>& v, double q) {
  return v.empty() ? 0 : percentile(v, q);
}

// Watches the swarm and the system space; writes the status file.
class Reporter {
 public:
  Reporter(const Options& o, const std::vector<std::unique_ptr<Driver>>& drivers, const Tally& tally)
      : o_(o), drivers_(drivers), tally_(tally) {}

  void run() {
    auto next_check = Clock::now() + 2s;
    while (!g_stop) {
      const auto now = Clock::now();
      Driver::Counts all;
      for (const auto& d : drivers_) {
        auto c = d->counts();
        all.started += c.started;
        all.connected += c.connected;
        all.away += c.away;
        all.available += c.available;
        all.obeying += c.obeying;
        all.reads += c.reads;
        for (auto [j, n] : c.running) all.running[j] += n;
        all.alive.insert(all.alive.end(), c.alive.begin(), c.alive.end());
      }
      try {
        if (!client_) client_ = std::make_unique<ts::Client>(o_.server);
        spread(all);
        if (now >= next_check) {
          check_stale(all.alive);
          // Often while the nodes register (the benchmark waits for it).
          next_check = now + (registered_ < static_cast<std::size_t>(o_.first + o_.nodes) ? 2s : 10s);
        }
      } catch (const std::exception&) {
        client_.reset();
      }
      write(all);
      for (int i = 0; i < 10 && !g_stop; ++i) std::this_thread::sleep_for(100ms);
    }
  }

 private:
  // Per job: submission until 90 % of the available nodes consume it.
  void spread(const Driver::Counts& all) {
    for (auto [job, n] : all.running) {
      if (spread_.contains(job)) continue;
      if (!submitted_.contains(job)) {
        auto t = client_->rd(sys::kSpace, sys::job_template(job), 0ms);
        auto r = t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
        if (!r) continue;
        submitted_[job] = r->submit_time;
      }
      if (all.available > 0 && static_cast<double>(n) >= 0.9 * static_cast<double>(all.available))
        spread_[job] = sys::wall_now() - submitted_[job];
    }
  }

  // Nodes alive here whose liveness the system space shows as stale.
  void check_stale(const std::vector<std::string>& alive) {
    std::map<std::string, double> heard;
    for (const auto& n : sys::list_nodes(*client_)) heard[n.name] = n.updated_at;
    for (const auto& h : sys::list_agent_heartbeats(*client_))
      heard[h.node] = std::max(heard[h.node], h.time);
    const double now = sys::wall_now();
    std::size_t stale = 0;
    registered_ = 0;
    for (const auto& [name, t] : heard)
      if (name.rfind(o_.prefix, 0) == 0) ++registered_;
    for (const auto& name : alive) {
      auto it = heard.find(name);
      // Not yet registered is not stale: a node registers on its first turn.
      if (it != heard.end() && now - it->second > o_.node_stale) ++stale;
    }
    false_stale_ = std::max(false_stale_, stale);
    ++stale_checks_;
  }

  void write(const Driver::Counts& all) {
    if (o_.status.empty()) return;
    Json running = Json::object(), spread = Json::object();
    for (auto [j, n] : all.running) running[std::to_string(j)] = n;
    for (auto [j, s] : spread_) spread[std::to_string(j)] = std::round(s * 1000) / 1000;
    const auto obey = tally_.obey_latencies_ms();
    Json status{{"time", sys::wall_now()},
                {"started", all.started},
                {"connected", all.connected},
                {"away", all.away},
                {"available", all.available},
                {"obeying", all.obeying},
                {"uplink_reads", all.reads},
                {"running", running},
                {"tasks_completed", tally_.tasks_completed()},
                {"obey_latency_ms",
                 {{"count", obey.size()},
                  {"p50", rank(obey, 0.5)},
                  {"p99", rank(obey, 0.99)},
                  {"max", obey.empty() ? 0.0 : obey.back()}}},
                {"obey_ms", obey},
                {"seen_ms", tally_.seen_latencies_ms()},
                {"registered", registered_},
                {"false_stale", false_stale_},
                {"stale_checks", stale_checks_},
                {"spread_s", spread}};
    const std::string tmp = o_.status + ".tmp";
    {
      std::ofstream f(tmp, std::ios::trunc);
      f << status.dump() << "\n";
      if (!f) return;
    }
    std::rename(tmp.c_str(), o_.status.c_str());
  }

  const Options& o_;
  const std::vector<std::unique_ptr<Driver>>& drivers_;
  const Tally& tally_;
  std::unique_ptr<ts::Client> client_;
  std::map<std::int64_t, double> submitted_, spread_;
  std::size_t registered_ = 0, false_stale_ = 0, stale_checks_ = 0;
};

// Room for every node's connections: two per node, each a few descriptors
// (its TCP socket, ZeroMQ's mailboxes), as a real server's unit raises its
// LimitNOFILE. Root may raise the hard limit too.
void raise_limits(int nodes) {
  rlimit r{};
  ::getrlimit(RLIMIT_NOFILE, &r);
  const rlim_t want = static_cast<rlim_t>(nodes) * 8 + 1024;
  if (r.rlim_cur < want) {
    r.rlim_cur = want;
    if (r.rlim_max < want) r.rlim_max = want;
    if (::setrlimit(RLIMIT_NOFILE, &r) != 0) {
      ::getrlimit(RLIMIT_NOFILE, &r);
      r.rlim_cur = r.rlim_max;
      ::setrlimit(RLIMIT_NOFILE, &r);
    }
  }
  // Before any socket: ZeroMQ's default is 1,023 sockets per context.
  zmq::context_t& ctx = ts::default_context();
  ctx.set(zmq::ctxopt::max_sockets, nodes * 4 + 1024);
  // A real agent's process holds a connection or two; here thousands share a
  // process, and libzmq cancels a timer by walking its I/O thread's whole
  // timer list (once per ZeroMQ heartbeat answered): with 2,500 nodes on two
  // I/O threads that walk was a third of the swarm's CPU. An I/O thread per
  // 100 nodes keeps each list as short as a few agents' would be together.
  ctx.set(zmq::ctxopt::io_threads, std::clamp(nodes / 100, 2, 32));
}

int run(const Options& o) {
  AvailabilityTrace trace;
  try {
    trace = read_trace(o.trace);
  } catch (const InputError& e) {
    std::fprintf(stderr, "piranha-swarm: %s\n", e.what());
    return 2;
  }
  if (trace.nodes.empty()) {
    std::fprintf(stderr, "piranha-swarm: %s: the trace has no nodes\n", o.trace.c_str());
    return 2;
  }
  raise_limits(o.nodes);
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  std::fprintf(stderr, "piranha-swarm: %d nodes (%s00000 ...) on %s, %d drivers, trace %s at %gx\n", o.nodes,
               o.prefix.c_str(), o.server.c_str(), o.drivers, o.trace.c_str(), o.time_scale);
  Tally tally;
  std::vector<std::unique_ptr<Driver>> drivers;
  for (int d = 0; d < o.drivers; ++d) {
    std::vector<int> mine;
    for (int i = d; i < o.nodes; i += o.drivers) mine.push_back(o.first + i);
    drivers.push_back(std::make_unique<Driver>(o, trace, tally, std::move(mine)));
  }
  std::thread timer;
  if (o.seconds > 0)
    timer = std::thread([&] {
      const auto end = Clock::now() +
                       std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.seconds));
      while (!g_stop && Clock::now() < end) std::this_thread::sleep_for(100ms);
      g_stop = true;
    });
  Reporter(o, drivers, tally).run();
  drivers.clear();  // each marks its nodes down
  if (timer.joinable()) timer.join();
  std::fprintf(stderr, "piranha-swarm: stopped\n");
  return 0;
}

}  // namespace
}  // namespace piranha::swarm

int main(int argc, char** argv) {
  piranha::swarm::Options o;
  CLI::App app{
      "piranha-swarm: N simulated workstations (the agent's own uplink and decision, a replayed trace, a "
      "task consumer instead of piranhas) against a real tuple-space server and NPS (docs/scale.md)"};
  app.add_option("--server", o.server, "the tuple-space server")->capture_default_str();
  app.add_option("--nodes", o.nodes, "simulated workstations")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--first", o.first, "the first node's number (several swarms can share one pool)")
      ->check(CLI::Range(0, 9999999))
      ->capture_default_str();
  app.add_option("--prefix", o.prefix, "node names: PREFIX00000, PREFIX00001, ...")->capture_default_str();
  app.add_option("--trace", o.trace, "availability trace (`piranha trace synth --nodes N`)")
      ->required()
      ->check(CLI::ExistingFile);
  app.add_option("--time-scale", o.time_scale, "trace seconds per real second")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--drivers", o.drivers, "threads deciding for the nodes")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--task-seconds", o.task_seconds, "a running node completes a task this often per core")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--heartbeat", o.heartbeat_seconds, "the agents' heartbeat_seconds")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  app.add_option("--scheduler-stale", o.scheduler_stale, "the agents' scheduler.stale_seconds")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--node-stale", o.node_stale,
                 "a node heard from longer ago counts as stale (the NPS's --stale)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_flag("--aligned", o.aligned,
               "every node's trace steps begin at the same instants (a storm of owners coming and going "
               "at once, which real keyboards do not make); by default each node's replay is shifted by "
               "its own fraction of a step");
  app.add_option("--ramp", o.ramp, "nodes started per second")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app.add_option("--status", o.status, "rewrite this JSON file every second with what the swarm sees");
  app.add_option("--seconds", o.seconds, "stop after this long (default: at SIGINT or SIGTERM)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  return piranha::swarm::run(o);
}
