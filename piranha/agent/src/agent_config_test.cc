#include "piranha/agent/agent_config.h"

#include <doctest/doctest.h>

#include <fstream>
#include <sstream>

#include "piranha/testing/temp_dir.h"

using piranha::AgentConfig;
using piranha::InputError;
using piranha::parse_agent_config;
using piranha::testing::TempDir;

namespace {

std::string error_of(const std::string& text, const std::string& name = "agent.yaml") {
  try {
    parse_agent_config(text, name);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

const char* kTrace =
    "# piranha availability trace v1\n# step_seconds: 60\n# length: 100\nnode,start,end\n"
    "ws01,0,50\nws02,10,100\n";

}  // namespace

TEST_CASE("agent config: an empty file gives the documented defaults") {
  AgentConfig c = parse_agent_config("", "agent.yaml");
  CHECK_FALSE(c.node.empty());  // the host name
  CHECK(c.server == "tcp://127.0.0.1:7070");
  CHECK(c.cores == 1);
  CHECK(c.speed == 1.0);
  CHECK(c.policy == piranha::NativePolicyKind::Fair);
  CHECK(c.piranha_priority == piranha::PiranhaPriority::Idle);
  CHECK_FALSE(c.seed);
  CHECK(c.availability.sensor == piranha::SensorKind::Live);
  CHECK(c.availability.thresholds.load1 == 0.7);
  CHECK(c.availability.thresholds.load5 == 0.4);
  CHECK(c.availability.thresholds.load15 == 0.1);
  CHECK(c.availability.thresholds.input_idle_seconds == 60);
  CHECK(c.availability.poll_seconds == 1);
  CHECK(c.availability.input_devices == std::vector<std::string>{"/dev/input/event*"});
  CHECK(c.availability.terminals);
  CHECK(c.availability.x11);
  CHECK_FALSE(c.availability.trace);
  CHECK(c.retreat.mode == piranha::RetreatMode::Retreat);
  CHECK(c.retreat.grace_seconds == 2);
  CHECK(c.retreat.suspend_max_seconds == 30);
  CHECK(c.scheduler.stale_seconds == 10);
  CHECK(c.heartbeat_seconds == 10);
  CHECK(parse_agent_config("# only a comment\n", "agent.yaml").cores == 1);
}

TEST_CASE("agent config: every key is read") {
  TempDir dir;
  dir.write("traces/pool.avail.csv", kTrace);
  std::string path = dir.write("agent.yaml", R"(node: ws02
server: tcp://10.0.0.1:7070
cores: 4
speed: 2.5
policy: FCFS
seed: 18446744073709551615
availability:
  sensor: trace
  load: [1.5, 1.0, 0.5]
  input_idle_seconds: 0
  poll_seconds: 0.25
  input_devices: ["/dev/input/event*", "/dev/input/mouse*"]
  terminals: false
  x11: no
  trace: {file: traces/pool.avail.csv, time_scale: 3600, start_step: 42}
retreat:
  mode: suspend
  grace_seconds: 0
  suspend_max_seconds: 120
scheduler:
  stale_seconds: 4.5
heartbeat_seconds: 0.5
piranha_priority: normal
)");
  AgentConfig c = piranha::load_agent_config(path);
  CHECK(c.node == "ws02");
  CHECK(c.server == "tcp://10.0.0.1:7070");
  CHECK(c.cores == 4);
  CHECK(c.speed == 2.5);
  CHECK(c.policy == piranha::NativePolicyKind::Fcfs);
  CHECK(*c.seed == 18446744073709551615ull);
  const auto& a = c.availability;
  CHECK(a.sensor == piranha::SensorKind::Trace);
  CHECK(a.thresholds.load1 == 1.5);
  CHECK(a.thresholds.load5 == 1.0);
  CHECK(a.thresholds.load15 == 0.5);
  CHECK(a.thresholds.input_idle_seconds == 0);
  CHECK(a.poll_seconds == 0.25);
  CHECK(a.input_devices == std::vector<std::string>{"/dev/input/event*", "/dev/input/mouse*"});
  CHECK_FALSE(a.terminals);
  CHECK_FALSE(a.x11);
  REQUIRE(a.trace);
  // Relative to the YAML file's directory, not the working directory.
  CHECK(a.trace->file == dir / "traces/pool.avail.csv");
  CHECK(a.trace->node == "ws02");  // defaults to the agent's node
  CHECK(a.trace->time_scale == 3600);
  CHECK(a.trace->start_step == 42);
  REQUIRE(a.trace->trace);
  CHECK(a.trace->trace->nodes == std::vector<std::string>{"ws01", "ws02"});
  CHECK(c.retreat.mode == piranha::RetreatMode::Suspend);
  CHECK(c.retreat.grace_seconds == 0);
  CHECK(c.retreat.suspend_max_seconds == 120);
  CHECK(c.scheduler.stale_seconds == 4.5);
  CHECK(c.heartbeat_seconds == 0.5);
  CHECK(c.piranha_priority == piranha::PiranhaPriority::Normal);
}

TEST_CASE("agent config: unknown keys are errors naming the key, the section and the line") {
  CHECK(
      error_of("node: ws01\navailability:\n  sensor: live\n  laod: [1, 1, 1]\n") ==
      "agent.yaml:4: unknown key 'laod' in availability (expected one of: sensor, load, input_idle_seconds, "
      "poll_seconds, input_devices, terminals, x11, trace)");
  CHECK(error_of("nodes: ws01\n").rfind("agent.yaml:1: unknown key 'nodes' in the agent configuration", 0) ==
        0);
  CHECK(error_of("retreat:\n  mode: retreat\n  grace: 3\n")
            .rfind("agent.yaml:3: unknown key 'grace' in retreat", 0) == 0);
  CHECK(error_of("scheduler: {stale: 3}\n").rfind("agent.yaml:1: unknown key 'stale' in scheduler", 0) == 0);
}

TEST_CASE("agent config: duplicate keys and malformed YAML are errors with a line") {
  CHECK(error_of("cores: 1\ncores: 2\n") == "agent.yaml:2: duplicate key 'cores' in the agent configuration");
  CHECK(error_of("availability:\n  load: [0.7, 0.4\n").rfind("agent.yaml:", 0) == 0);
  CHECK(error_of("availability:\n  load: [0.7, 0.4\n").find("invalid YAML") != std::string::npos);
  CHECK(error_of("- a\n- b\n") == "agent.yaml:1: the agent configuration must be a mapping of keys");
  CHECK(error_of("availability: 3\n") == "agent.yaml:1: availability must be a mapping of keys");
}

TEST_CASE("agent config: wrong types name the key and the line") {
  CHECK(error_of("node: ws01\ncores: many\n") == "agent.yaml:2: cores must be an integer, got 'many'");
  CHECK(error_of("cores: 1.5\n") == "agent.yaml:1: cores must be an integer, got '1.5'");
  CHECK(error_of("cores:\n") == "agent.yaml:1: cores must be an integer, got nothing");
  CHECK(error_of("speed: fast\n") == "agent.yaml:1: speed must be a number, got 'fast'");
  CHECK(error_of("speed: .nan\n") == "agent.yaml:1: speed must be a number, got '.nan'");
  CHECK(error_of("availability:\n  terminals: maybe\n") ==
        "agent.yaml:2: availability.terminals must be true or false, got 'maybe'");
  CHECK(error_of("availability:\n  load: 0.7\n") ==
        "agent.yaml:2: availability.load must be a list of 3 numbers (1-, 5-, 15-minute thresholds), got "
        "'0.7'");
  CHECK(error_of("availability:\n  load: [0.7, 0.4]\n")
            .rfind("agent.yaml:2: availability.load must be a list", 0) == 0);
  CHECK(error_of("availability:\n  input_devices: /dev/input/event*\n")
            .rfind("agent.yaml:2: availability.input_devices must be a list", 0) == 0);
  CHECK(error_of("node: [a, b]\n") == "agent.yaml:1: node must be a non-empty string, got a list");
  CHECK(error_of("seed: -1\n") == "agent.yaml:1: seed must be an integer, got '-1'");
  CHECK(error_of("seed: 18446744073709551616\n") ==
        "agent.yaml:1: seed is out of range, got '18446744073709551616'");
  CHECK(error_of("server: localhost\n") ==
        "agent.yaml:1: server: 'localhost' is not an endpoint (expected tcp://HOST:PORT, ipc://PATH or "
        "inproc://NAME)");
  CHECK(error_of("server: tcp://127.0.0.1:99999\n") ==
        "agent.yaml:1: server: port 99999 is out of range (1-65535) in 'tcp://127.0.0.1:99999'");
}

TEST_CASE("agent config: out-of-range values name the key and the line") {
  CHECK(error_of("availability:\n  load:\n    - 0.7\n    - 0\n    - 0.1\n") ==
        "agent.yaml:4: availability.load[1] (5-minute) must be > 0, got 0");
  CHECK(error_of("availability:\n  load: [0.7, 0.4, -0.1]\n") ==
        "agent.yaml:2: availability.load[2] (15-minute) must be > 0, got -0.1");
  CHECK(error_of("availability:\n  load: [7000, 0.4, 0.1]\n") ==
        "agent.yaml:2: availability.load[0] (1-minute) must be <= 1000, got 7000");
  CHECK(error_of("availability:\n  input_idle_seconds: -1\n") ==
        "agent.yaml:2: availability.input_idle_seconds must be >= 0, got -1");
  CHECK(error_of("availability:\n  poll_seconds: 0\n") ==
        "agent.yaml:2: availability.poll_seconds must be >= 0.05, got 0");
  CHECK(error_of("heartbeat_seconds: 1e-9\n") ==
        "agent.yaml:1: heartbeat_seconds must be >= 0.05, got 1e-09");
  CHECK(error_of("cores: 0\n") == "agent.yaml:1: cores must be in [1, 4096], got 0");
  CHECK(error_of("speed: 0\n") == "agent.yaml:1: speed must be > 0, got 0");
  CHECK(error_of("retreat:\n  grace_seconds: -2\n") ==
        "agent.yaml:2: retreat.grace_seconds must be >= 0, got -2");
  CHECK(error_of("retreat:\n  suspend_max_seconds: -1\n") ==
        "agent.yaml:2: retreat.suspend_max_seconds must be >= 0, got -1");
  CHECK(error_of("scheduler:\n  stale_seconds: 0\n") ==
        "agent.yaml:2: scheduler.stale_seconds must be > 0, got 0");
  CHECK(error_of("heartbeat_seconds: 1e9\n") == "agent.yaml:1: heartbeat_seconds must be <= 3600, got 1e+09");
}

TEST_CASE("agent config: the pool is a name of letters, digits, '-', '_' and '.'") {
  CHECK(parse_agent_config("", "agent.yaml").pool.empty());
  CHECK(parse_agent_config("pool: lab-2.b_c\n", "agent.yaml").pool == "lab-2.b_c");
  CHECK(error_of("pool: two words\n") ==
        "agent.yaml:1: pool must be 1 to 64 letters, digits, '-', '_' or '.', got 'two words'");
  CHECK(error_of("pool: ''\n") == "agent.yaml:1: pool must be a non-empty string, got ''");
}

TEST_CASE("agent config: unknown enum values list the valid ones") {
  CHECK(error_of("policy: FIAR\n") == "agent.yaml:1: policy must be one of: FAIR, FCFS, got 'FIAR'");
  CHECK(parse_agent_config("policy: fcfs\n", "agent.yaml").policy == piranha::NativePolicyKind::Fcfs);
  CHECK(error_of("piranha_priority: low\n") ==
        "agent.yaml:1: piranha_priority must be one of: idle, normal, got 'low'");
  CHECK(error_of("availability:\n  sensor: replay\n") ==
        "agent.yaml:2: availability.sensor must be one of: live, trace, got 'replay'");
  CHECK(error_of("retreat:\n  mode: flee\n") ==
        "agent.yaml:2: retreat.mode must be one of: retreat, suspend, got 'flee'");
}

TEST_CASE("agent config: the trace sensor needs a readable trace with the node") {
  TempDir dir;
  dir.write("pool.avail.csv", kTrace);
  dir.write("bad.avail.csv", "# piranha availability trace v1\n# length: 10\nnode,start,end\nws01,5,3\n");
  const std::string name = dir / "agent.yaml";
  auto err = [&](const std::string& text) { return error_of(text, name); };

  CHECK(err("availability:\n  sensor: trace\n") ==
        name +
            ":2: availability.sensor is trace but availability.trace is missing (give at least trace: {file: "
            "...})");
  CHECK(err("availability:\n  sensor: trace\n  trace: {node: ws01}\n") ==
        name + ":3: availability.trace.file is missing: the trace sensor needs a trace file");
  CHECK(err("availability:\n  sensor: trace\n  trace: {file: nowhere.avail.csv, node: ws01}\n")
            .rfind(name + ":3: availability.trace.file: " + (dir / "nowhere.avail.csv"), 0) == 0);
  // The trace reader's own message, with its file and line, is passed on.
  std::string bad =
      err("availability:\n  sensor: trace\n  trace:\n    file: bad.avail.csv\n    node: ws01\n");
  CHECK(bad.rfind(name + ":4: availability.trace.file: " + (dir / "bad.avail.csv") + ":4: ", 0) == 0);
  CHECK(err("node: ws09\navailability:\n  sensor: trace\n  trace: {file: pool.avail.csv}\n") ==
        name + ":4: trace " + (dir / "pool.avail.csv") +
            " has no node 'ws09' (it has: ws01, ws02); set availability.trace.node");
  CHECK(
      err("availability:\n  sensor: trace\n  trace: {file: pool.avail.csv, node: ws01, start_step: 100}\n") ==
      name + ":3: availability.trace.start_step 100 is past the trace's end (length 100)");
  CHECK(err("availability:\n  sensor: trace\n  trace: {file: pool.avail.csv, node: ws01, time_scale: 0}\n") ==
        name + ":3: availability.trace.time_scale must be > 0, got 0");
  CHECK(err("availability:\n  sensor: trace\n  trace: {file: pool.avail.csv, node: ws01, speed: 2}\n")
            .rfind(name + ":3: unknown key 'speed' in availability.trace", 0) == 0);
  CHECK(
      err("availability:\n  trace: {file: pool.avail.csv}\n") ==
      name +
          ":2: availability.trace is given but availability.sensor is live (set sensor: trace to replay the "
          "trace)");

  auto ok = parse_agent_config(
      "availability:\n  sensor: trace\n  trace: {file: pool.avail.csv, node: ws01}\n", name);
  CHECK(ok.availability.trace->time_scale == 60);
  CHECK(ok.availability.trace->start_step == 0);
}

TEST_CASE("agent config: a file that cannot be read") {
  TempDir dir;
  try {
    piranha::load_agent_config(dir / "missing.yaml");
    FAIL("no error");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()) == dir / "missing.yaml" + ": cannot open the agent configuration");
  }
}

TEST_CASE("agent config: the examples in docs/configuration.md parse") {
  std::ifstream in(std::string(PIRANHA_SOURCE_DIR) + "/docs/configuration.md");
  REQUIRE(in);
  std::stringstream doc;
  doc << in.rdbuf();
  const std::string text = doc.str();
  auto section = text.find("## Agent configuration");
  REQUIRE(section != std::string::npos);
  auto end = text.find("\n## ", section + 1);
  const std::string agent =
      text.substr(section, end == std::string::npos ? std::string::npos : end - section);

  TempDir dir;
  dir.write("pool.avail.csv", kTrace);
  int examples = 0;
  for (std::size_t at = agent.find("```yaml\n"); at != std::string::npos; at = agent.find("```yaml\n", at)) {
    at += 8;
    auto close = agent.find("```", at);
    REQUIRE(close != std::string::npos);
    std::string yaml = agent.substr(at, close - at);
    CAPTURE(yaml);
    CHECK_NOTHROW(parse_agent_config(yaml, dir / "agent.yaml"));
    ++examples;
    at = close + 3;
  }
  CHECK(examples >= 2);
}

TEST_CASE("agent config: max_failures and retention, with their defaults and limits") {
  auto d = piranha::parse_agent_config("", "agent.yaml");
  CHECK(d.max_failures == 3);
  CHECK(d.retention.jobs_seconds == 7 * 86400);
  CHECK(d.retention.ap_seconds == 8 * 86400);
  auto c = piranha::parse_agent_config("max_failures: 5\nretention: {jobs_seconds: 60, ap_seconds: 120}\n",
                                       "agent.yaml");
  CHECK(c.max_failures == 5);
  CHECK(c.retention.jobs_seconds == 60);
  CHECK(c.retention.ap_seconds == 120);
  CHECK(error_of("max_failures: 0\n").rfind("agent.yaml:1: max_failures", 0) == 0);
  CHECK(error_of("retention: {jobs_seconds: 0}\n").rfind("agent.yaml:1: retention.jobs_seconds", 0) == 0);
  CHECK(error_of("retention: {jobs: 7}\n").rfind("agent.yaml:1: unknown key 'jobs' in retention", 0) == 0);
}

TEST_CASE("agent config: key files are found beside the YAML file, and a key's Z85 text is kept as it is") {
  const std::string z85 = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";  // 40 characters, no such file
  AgentConfig c = parse_agent_config("key: ws01.key\nserver_key: '" + z85 + "'\n", "/etc/piranha/agent.yaml");
  CHECK(c.key == "/etc/piranha/ws01.key");
  CHECK(c.server_key == z85);
  CHECK(parse_agent_config("key: /keys/ws01.key\n", "agent.yaml").key == "/keys/ws01.key");
  CHECK(parse_agent_config("", "agent.yaml").key.empty());
  CHECK(error_of("key: ''\n") == "agent.yaml:1: key must be a non-empty string, got ''");
}

TEST_CASE("agent config: labels are names, kept sorted without duplicates") {
  CHECK(parse_agent_config("", "agent.yaml").labels.empty());
  CHECK(parse_agent_config("labels: [gpu, fast-disk, gpu]\n", "agent.yaml").labels ==
        std::vector<std::string>{"fast-disk", "gpu"});
  CHECK(error_of("labels: [gpu, 'two words']\n") ==
        "agent.yaml:1: labels: 'two words' is not a name (1 to 64 letters, digits, '_', '-' or '.')");
  CHECK(error_of("labels: gpu\n") == "agent.yaml:1: labels must be a list, got 'gpu'");
  // What the agent publishes: this machine's figures and the labels.
  const auto a = piranha::local_node_attributes({"gpu", "gpu"});
  CHECK(a.cores >= 1);
  CHECK(a.memory > 0);
  CHECK_FALSE(a.arch.empty());
  CHECK(a.labels == std::vector<std::string>{"gpu"});
}
