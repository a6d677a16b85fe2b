// piranha trellis bench: propagation times through a big trellis, in one
// process and across two processes on loopback (docs/performance.md).
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "commands.h"
#include "piranha/trellis/fiber_trellis.h"
#include "piranha/trellis/standard_types.h"

extern char** environ;

namespace piranha::apps {
namespace {

using namespace piranha::trellis;
using std::chrono::duration;
using Micros = duration<double, std::micro>;

struct BenchArgs {
  int nodes = 10000;
  int fan_in = 10;
  int samples = 200;
  bool remote = true;
};

// A complete tree in breadth-first order: node i's inferiors are
// fan_in*i+1 .. fan_in*i+fan_in. Inner nodes are relaying sums, leaves counters.
Program make_tree(const BenchArgs& a) {
  Program p;
  p.name = "bench";
  p.source = "<bench>";
  for (int i = 0; i < a.nodes; ++i) {
    NodeSpec n;
    n.name = "n" + std::to_string(i);
    for (int k = 1; k <= a.fan_in && a.fan_in * i + k < a.nodes; ++k)
      n.inferiors.push_back("n" + std::to_string(a.fan_in * i + k));
    n.type = n.inferiors.empty() ? "counter" : "sum";
    if (!n.inferiors.empty()) n.params["relay"] = true;
    p.nodes.push_back(std::move(n));
  }
  return p;
}

bool is_leaf(const BenchArgs& a, int i) {
  return a.fan_in * i + 1 >= a.nodes;
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0 : s / static_cast<double>(v.size());
}

// Polls every 50 us (the trellis thread needs the core more than we do).
template <class Pred>
bool wait_for(Pred done, std::chrono::seconds limit = std::chrono::seconds(20),
              std::chrono::microseconds every = std::chrono::microseconds(50)) {
  auto end = Clock::now() + limit;
  while (!done()) {
    if (Clock::now() > end) return false;
    std::this_thread::sleep_for(every);
  }
  return true;
}

void row(const char* what, double p50, double p99, double mean, double max) {
  std::printf("  %-46s p50 %9.1f  p99 %9.1f  mean %9.1f  max %9.1f  us\n", what, p50, p99, mean, max);
}

// For figures the trellis keeps itself (stats.h): mean and max only.
void row_mean_max(const char* what, double mean, double max) {
  std::printf("  %-46s %-32s mean %9.1f  max %9.1f  us\n", what, "", mean, max);
}

double us(Duration d) {
  return static_cast<double>(d.count()) / 1e3;
}

void one_process(const BenchArgs& a, const Registry& types) {
  Program p = make_tree(a);
  int leaves = 0;
  for (int i = 0; i < a.nodes; ++i) leaves += is_leaf(a, i);
  // Timestamps taken on the trellis thread, as the state changes happen.
  std::atomic<int> probed{-1};
  std::atomic<std::int64_t> leaf_ns{0}, root_ns{0}, all_leaves_ns{0};
  std::atomic<std::int64_t> command_value{-1};
  std::atomic<int> leaves_reached{0};
  FiberOptions o;
  o.stack_bytes = 16 * 1024;
  o.on_event = [&](const Event& e) {
    if (e.kind != Event::Kind::State) return;
    std::int64_t now = Clock::now().time_since_epoch().count();
    int i = std::stoi(e.node.substr(1));
    if (i == 0) root_ns = now;
    if (i == probed.load()) leaf_ns = now;
    if (e.value.is_int() && e.value.as_int() == command_value.load() && is_leaf(a, i) &&
        ++leaves_reached == leaves)
      all_leaves_ns = now;
  };
  auto built = Clock::now();
  FiberTrellis t(p, types, o);
  std::printf("one process: %d nodes, fan-in %d, %d leaves, built in %.1f ms\n", a.nodes, a.fan_in, leaves,
              duration<double, std::milli>(Clock::now() - built).count());

  // Leaf to root: probe one leaf (it counts up), wait for the root to change.
  std::vector<double> change_up, probe_up;
  std::int64_t root = 0;
  int leaf = a.nodes - 1;
  for (int s = 0; s < a.samples; ++s) {
    if (!is_leaf(a, leaf)) leaf = a.nodes - 1;
    probed = leaf;
    std::string name = "n" + std::to_string(leaf--);
    std::int64_t t0 = Clock::now().time_since_epoch().count();
    t.probe(name);
    ++root;
    if (!wait_for([&] { return t.state("n0") == Value(root); }))
      throw std::runtime_error("root never changed");
    change_up.push_back(static_cast<double>(root_ns - leaf_ns) / 1e3);
    probe_up.push_back(static_cast<double>(root_ns - t0) / 1e3);
  }
  row("leaf state change -> root state change", percentile(change_up, .5), percentile(change_up, .99),
      mean_of(change_up), percentile(change_up, 1));
  row("probe() call -> root state change", percentile(probe_up, .5), percentile(probe_up, .99),
      mean_of(probe_up), percentile(probe_up, 1));
  const NodeStats& top = t.report().nodes[0];
  row_mean_max("probe -> root recalculated (trace)", us(top.probe_to_top.mean()), us(top.probe_to_top.max));

  // Root command to every leaf: the leaves take the command's value, and
  // the sums bring it back up.
  std::vector<double> down, round;
  int rounds = std::max(5, a.samples / 20);
  for (int s = 1; s <= rounds; ++s) {
    std::int64_t v = 1'000'000 * s;
    leaves_reached = 0;
    command_value = v;
    std::int64_t t0 = Clock::now().time_since_epoch().count();
    t.command("n0", v);
    if (!wait_for([&] { return t.state("n0") == Value(v * leaves); }))
      throw std::runtime_error("command lost");
    down.push_back(static_cast<double>(all_leaves_ns - t0) / 1e3);
    round.push_back(static_cast<double>(root_ns - t0) / 1e3);
  }
  row("root command -> every leaf changed", percentile(down, .5), percentile(down, .99), mean_of(down),
      percentile(down, 1));
  row("root command -> leaves -> root changed", percentile(round, .5), percentile(round, .99), mean_of(round),
      percentile(round, 1));
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("no free port");
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

// Writes `p` as YAML (node names are plain words, so no quoting is needed).
void write_yaml(const Program& p, const std::string& path) {
  std::ofstream f(path);
  f << "program: " << p.name << "\nheartbeat_ms: 50\nlink_timeout_ms: 2000\nhosts:\n";
  for (const auto& h : p.hosts) f << "  " << h.name << ": " << h.endpoint << "\n";
  f << "nodes:\n";
  for (const auto& n : p.nodes) {
    f << "  - {name: " << n.name << ", type: " << n.type << ", host: " << n.host;
    if (n.probe_every) f << ", probe_every_ms: " << n.probe_every->count();
    if (!n.inferiors.empty()) {
      f << ", params: {relay: true}, inferiors: [";
      for (std::size_t k = 0; k < n.inferiors.size(); ++k) f << (k ? ", " : "") << n.inferiors[k];
      f << "]";
    }
    f << "}\n";
  }
}

// The same tree with its top levels (root and its inferiors' inferiors) on
// host "top", here, and the rest on host "bottom", a child process running
// `piranha trellis run`. The last leaf is probed by its host every 20 ms.
void two_processes(const BenchArgs& a, const Registry& types) {
  Program p = make_tree(a);
  p.heartbeat = std::chrono::milliseconds(50);
  p.link_timeout = std::chrono::milliseconds(2000);
  p.hosts = {{"top", "tcp://127.0.0.1:" + std::to_string(free_port())},
             {"bottom", "tcp://127.0.0.1:" + std::to_string(free_port())}};
  int split = 1 + a.fan_in + a.fan_in * a.fan_in;
  int leaves = 0;
  for (int i = 0; i < a.nodes; ++i) {
    p.nodes[static_cast<std::size_t>(i)].host = i < split ? "top" : "bottom";
    leaves += is_leaf(a, i);
  }
  p.nodes.back().probe_every = std::chrono::milliseconds(20);
  std::string path = "/tmp/piranha-trellis-bench-" + std::to_string(::getpid()) + ".yaml";
  write_yaml(p, path);
  int crossing = 0;
  for (int i = 0; i < split; ++i)
    for (const auto& inf : p.nodes[static_cast<std::size_t>(i)].inferiors)
      crossing += std::stoi(inf.substr(1)) >= split;

  std::vector<std::string> argv = {"/proc/self/exe", "trellis", "run", path, "--host", "bottom", "--quiet"};
  std::vector<char*> args;
  for (auto& s : argv) args.push_back(s.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 1, "/dev/null", O_WRONLY, 0);
  pid_t child = -1;
  int rc = ::posix_spawn(&child, args[0], &files, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  if (rc != 0) throw std::runtime_error("cannot start the bottom host");
  struct Reap {
    pid_t pid;
    std::string path;
    ~Reap() {
      ::kill(pid, SIGTERM);
      int status;
      ::waitpid(pid, &status, 0);
      std::remove(path.c_str());
    }
  } reap{child, path};

  FiberOptions o;
  o.host = "top";
  FiberTrellis t(p, types, o);
  if (!wait_for([&] { return t.link("bottom") == LinkState::Up; }, std::chrono::seconds(30)))
    throw std::runtime_error("the bottom host never answered");
  std::printf("two processes: hosts top (%d nodes, here) and bottom (%d nodes, a child); %d links cross\n",
              split, a.nodes - split, crossing);
  // Wait for the bottom's first states to arrive and settle.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));

  // Leaf to root, first, while nothing else happens: the last leaf is
  // probed over there every 20 ms.
  std::uint64_t before = t.report().nodes[0].probe_to_top.count;
  wait_for(
      [&] {
        return t.report().nodes[0].probe_to_top.count >= before + static_cast<std::uint64_t>(a.samples / 4);
      },
      std::chrono::seconds(30), std::chrono::milliseconds(100));  // a report costs the trellis thread
  Report r = t.report();
  const NodeStats& top = r.nodes[0];
  row_mean_max("probe -> root recalculated (trace)", us(top.probe_to_top.mean()), us(top.probe_to_top.max));
  std::printf("  (%llu probes; the trace adds half the link's heartbeat round trip, mean %.1f us)\n",
              static_cast<unsigned long long>(top.probe_to_top.count),
              r.links.empty() ? 0.0 : us(r.links[0].round_trip.mean()) / 2);

  // Root command to every leaf and back, across the link both ways.
  std::vector<double> round;
  int rounds = std::max(5, a.samples / 20);
  for (int s = 1; s <= rounds; ++s) {
    std::int64_t v = 1'000'000 * s;
    auto t0 = Clock::now();
    t.command("n0", v);
    if (!wait_for([&] {
          Value root = t.state("n0");
          return root.is_int() && root.as_int() >= v * leaves;
        }))
      throw std::runtime_error("command lost");
    round.push_back(Micros(Clock::now() - t0).count());
  }
  row("root command -> leaves -> root (round trip)", percentile(round, .5), percentile(round, .99),
      mean_of(round), percentile(round, 1));
}

}  // namespace

void add_trellis_bench(CLI::App& trellis) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd =
      trellis.add_subcommand("bench", "time propagation through a big trellis (one and two processes)");
  cmd->add_option("--nodes", a->nodes, "nodes in the tree")
      ->capture_default_str()
      ->check(CLI::Range(2, 10'000'000));
  cmd->add_option("--fan-in", a->fan_in, "inferiors per inner node")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  cmd->add_option("--samples", a->samples, "leaf-to-root samples")
      ->capture_default_str()
      ->check(CLI::Range(10, 1'000'000));
  cmd->add_flag("!--no-remote", a->remote, "skip the two-process part");
  cmd->callback([a] {
    Registry types;
    add_standard_types(types);
    one_process(*a, types);
    if (a->remote) two_processes(*a, types);
  });
}

}  // namespace piranha::apps
