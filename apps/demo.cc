// piranha demo: a whole Piranha pool on one machine.
//
// An in-process tuple-space server, three node agents whose availability is
// replayed from a trace (so nodes come and go and piranhas retreat), and the
// cmatrix job under the native FAIR policy, coarse-grained enough (10 rows
// of A a task) that the pool beats one core. Prints the job's own result
// check, its grain and speed-up over the sequential multiply, the
// turnaround, the retreats and what each node did.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
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
  // A task of 10 rows of a 1500 x 1500 multiply is 22.5 M multiply-adds,
  // some 30 ms: its round trip through the tuple space is a small part of
  // it. One element a task (grain 0) is 1,500: the pool then loses to one
  // core. The whole job is a few seconds of work: B's travel to each piranha
  // and the retreats of ws02's flapping owner cost less than a second core
  // gives.
  int size = 1500;
  int grain = 10;
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

// cmatrix's own two times, from its result line: "parallel" (B written to
// the last result taken) and its sequential multiply with the same kernel.
struct Times {
  double parallel = 0, sequential = 0;
};
std::optional<Times> cmatrix_times(const std::string& output) {
  static const std::regex line("parallel ([0-9.]+) s, sequential multiply ([0-9.]+) s");
  std::smatch m;
  if (!std::regex_search(output, m, line)) return std::nullopt;
  return Times{std::stod(m[1].str()), std::stod(m[2].str())};
}

// What a task is, for people: "10 rows of A (10 x 1000 by 1000 x 1000: 10 M multiply-adds)".
std::string grain_words(int size, int grain) {
  const double adds = grain == 0 ? size : static_cast<double>(std::min(grain, size)) * size * size;
  char amount[32];
  if (adds >= 1e6)
    std::snprintf(amount, sizeof amount, "%.3g M", adds / 1e6);
  else
    std::snprintf(amount, sizeof amount, "%.0f", adds);
  const std::string n = std::to_string(size);
  return grain == 0 ? "one element of C a task (a row by a column: " + std::string(amount) + " multiply-adds)"
                    : std::to_string(grain) + " rows of A a task (" + std::to_string(grain) + " x " + n +
                          " by " + n + " x " + n + ": " + amount + " multiply-adds)";
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
  // Its result line is shown, and read for the speed-up.
  const fs::path job_output = dir / "cmatrix.out";
  job.output_file = job_output.string();
  auto started = std::chrono::steady_clock::now();
  ChildProcess feeder(job);
  auto status = feeder.wait();
  double turnaround = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::string job_said;
  {
    std::ifstream in(job_output);
    job_said.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::cout << job_said << std::flush;
  const auto times = cmatrix_times(job_said);

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
  std::printf("  grain:      %s (the work one task does between two trips to the tuple space)\n",
              grain_words(o.size, o.grain).c_str());
  if (times && times->parallel > 0) {
    const double speedup = times->sequential / times->parallel;
    std::printf(
        "  speed-up:   %.2fx: %.3f s on the pool against %.3f s for the same multiply on one core%s\n",
        speedup, times->parallel, times->sequential,
        speedup > 1 ? ""
                    : " (slower: a finer grain than this pays more for its round trips than it gains; "
                      "or the machine's CPUs are busy)");
  }
  std::printf("  turnaround: %.2f s (from starting the job to its end)\n", turnaround);
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
  cmd->add_option("--grain", o->grain, "cmatrix --grain (rows of A per task; 0: one element of C per task)")
      ->check(CLI::Range(0, 2000))
      ->capture_default_str();
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
