// piranha demo: a whole Piranha pool on one machine.
//
// An in-process tuple-space server, three node agents whose availability is
// replayed from a trace (so nodes come and go and piranhas retreat), and the
// cmatrix job under the native FAIR policy. Prints the job's own result
// check, the turnaround, the retreats and what each node did.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "commands.h"
#include "piranha/agent/native_policy.h"
#include "piranha/runtime/child.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/tuplespace/embedded.h"
#include "pool_command.h"

namespace piranha::apps {
namespace {

namespace fs = std::filesystem;

struct PoolDemoOptions {
  int size = 200;
  int grain = 0;
  double time_scale = 2400;  // a one-minute trace step lasts 25 ms
  std::string policy = "FAIR";
  bool keep = false;
};

// Three workstations over 400 one-minute steps: ws01 idle throughout, ws02
// in short bursts (its owner keeps coming back), ws03 busy at first, then
// idle with a few interruptions.
void write_demo_trace(const fs::path& path) {
  std::ofstream out(path);
  out << "# piranha availability trace v1\n# step_seconds: 60\n# length: 400\nnode,start,end\n";
  out << "ws01,0,400\n";
  for (int s = 0; s + 5 <= 400; s += 8) out << "ws02," << s << "," << s + 5 << "\n";
  out << "ws03,6,20\nws03,23,45\nws03,47,400\n";
}

fs::path self_dir() {
  return fs::read_symlink("/proc/self/exe").parent_path();
}

// The latencies of the retreats an availability change caused, from an
// agent's events file (one JSON object per line), in ms.
std::vector<double> retreat_latencies(const fs::path& events) {
  std::vector<double> out;
  std::ifstream in(events);
  std::string line;
  while (std::getline(in, line)) {
    auto e = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!e.is_object() || e.value("event", "") != "retreat" || e.value("cause", "") != "unavailable")
      continue;
    if (auto at = e.find("latency_ms"); at != e.end() && at->is_number()) out.push_back(at->get<double>());
  }
  return out;
}

int run_pool_demo(const PoolDemoOptions& o) {
  fs::path cmatrix = self_dir() / "cmatrix";
  if (!fs::exists(cmatrix)) {
    std::cerr << "piranha demo: " << cmatrix.string()
              << " is missing; build the examples (cmake --build build)\n";
    return 1;
  }
  char tmpl[] = "/tmp/piranha-demo-XXXXXX";
  if (!mkdtemp(tmpl)) {
    std::perror("piranha demo: mkdtemp");
    return 1;
  }
  fs::path dir = tmpl;
  // Removed on every way out unless --keep.
  struct Cleanup {
    const fs::path& dir;
    bool keep;
    ~Cleanup() {
      std::error_code ec;
      if (!keep) fs::remove_all(dir, ec);
    }
  } cleanup{dir, o.keep};
  if (!native_policy_from(o.policy)) {
    std::cerr << "piranha demo: unknown policy \"" << o.policy << "\" (expected FAIR or FCFS)\n";
    return 2;
  }
  fs::path trace = dir / "pool.avail.csv";
  write_demo_trace(trace);

  // The demo's pool is its own, without keys, whatever this shell has.
  ::unsetenv(ts::kKeyEnv);
  ::unsetenv(ts::kServerKeyEnv);
  ts::ServerOptions so;
  so.bind = {"tcp://127.0.0.1:*"};
  ts::EmbeddedServer server(so);
  std::string endpoint = server.server().endpoints().front();
  std::cout << "piranha demo: a pool of 3 nodes on " << endpoint << ", availability replayed from "
            << trace.string() << " at " << o.time_scale << "x (one trace minute every " << 60.0 / o.time_scale
            << " s)\n";
  std::cout.flush();

  std::vector<std::string> nodes = {"ws01", "ws02", "ws03"};
  std::vector<std::unique_ptr<ChildProcess>> agents;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    SpawnOptions a;
    a.argv = {(self_dir() / "piranha").string(),
              "agent",
              "--node",
              nodes[i],
              "--server",
              endpoint,
              "--trace",
              trace.string(),
              "--time-scale",
              std::to_string(o.time_scale),
              "--policy",
              o.policy,
              "--events",
              (dir / (nodes[i] + ".events.jsonl")).string()};
    agents.push_back(std::make_unique<ChildProcess>(a));
  }
  ts::Client client(endpoint);
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (sys::list_nodes(client).size() < nodes.size()) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::cerr << "piranha demo: the agents did not register within 20 s\n";
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }

  SpawnOptions job;
  job.argv = {cmatrix.string(), std::to_string(o.size)};
  if (o.grain > 0) job.argv.insert(job.argv.end(), {"--grain", std::to_string(o.grain)});
  job.env = {{"PIRANHA_SERVER", endpoint}};
  auto started = std::chrono::steady_clock::now();
  ChildProcess feeder(job);
  auto status = feeder.wait();
  double turnaround = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::int64_t job_id = 0;
  for (const auto& j : sys::list_jobs(client)) job_id = std::max(job_id, j.id);
  auto work = sys::list_jobwork(client, job_id);
  for (auto& a : agents) a->signal(SIGTERM);
  for (auto& a : agents) a->wait(std::chrono::seconds(10));

  std::vector<double> latencies;
  std::ostringstream per_node_retreats;
  for (const auto& n : nodes) {
    auto l = retreat_latencies(dir / (n + ".events.jsonl"));
    latencies.insert(latencies.end(), l.begin(), l.end());
  }
  std::sort(latencies.begin(), latencies.end());
  std::sort(work.begin(), work.end(), [](const auto& a, const auto& b) { return a.node < b.node; });

  std::printf("\npiranha demo summary (cmatrix %d%s, native %s policy)\n", o.size,
              o.grain ? (" --grain " + std::to_string(o.grain)).c_str() : "", o.policy.c_str());
  std::printf("  result:     %s\n", status && status->ok()
                                        ? "checked OK against a sequential multiply"
                                        : ("FAILED: cmatrix " + status->describe()).c_str());
  std::printf("  turnaround: %.2f s\n", turnaround);
  if (latencies.empty())
    std::printf("  retreats:   none\n");
  else
    std::printf(
        "  retreats:   %zu seen by the agents, latency from availability change to piranha stopped: p50 %.1f "
        "ms, "
        "max %.1f ms\n",
        latencies.size(), latencies[latencies.size() / 2], latencies.back());
  for (const auto& w : work)
    std::printf("  %-6s      %lld tasks, %.2f s of task time, %lld retreat%s recorded by the job\n",
                w.node.c_str(), static_cast<long long>(w.tasks), w.seconds,
                static_cast<long long>(w.retreats), w.retreats == 1 ? "" : "s");
  if (o.keep) std::printf("  files:      %s (trace, agents' event logs)\n", dir.string().c_str());
  return status && status->ok() ? 0 : 1;
}

}  // namespace

void add_demo(CLI::App& app) {
  auto o = std::make_shared<PoolDemoOptions>();
  auto* cmd = app.add_subcommand(
      "demo", "run a pool on this machine: a tuple space, 3 agents on replayed availability, and cmatrix");
  cmd->add_option("--size", o->size, "cmatrix dimension")->check(CLI::Range(1, 2000))->capture_default_str();
  cmd->add_option("--grain", o->grain, "cmatrix --grain (rows per task; 0: one element per task)")
      ->check(CLI::Range(0, 2000));
  cmd->add_option("--time-scale", o->time_scale, "trace seconds per real second")
      ->check(positive_number())
      ->capture_default_str();
  cmd->add_option("--policy", o->policy, "the agents' native policy: FAIR or FCFS")->capture_default_str();
  cmd->add_flag("--keep", o->keep, "keep the trace and the agents' event logs");
  cmd->callback([o] {
    int rc = run_pool_demo(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace piranha::apps
