// AgentConfig: the node agent's YAML configuration (docs/configuration.md).
//
//   node: ws01
//   server: tcp://127.0.0.1:7070
//   pool: lab
//   cores: 1
//   policy: FAIR
//   availability:
//     sensor: trace
//     trace: {file: pool.avail.csv, time_scale: 60}
//   retreat: {mode: suspend, grace_seconds: 2}
//   max_failures: 3
//   retention: {jobs_seconds: 604800, ap_seconds: 691200}
//   key: ws01.key
//   server_key: server.pub
//   piranha_user: piranha-job
//   piranha_programs: [/opt/jobs/]
//   piranha_limits: {address_space_mb: 4096, cpu_seconds: 86400, open_files: 1024}
//   labels: [gpu, fast-disk]
//
// Only plain data; the agent turns it into its AgentSettings and an
// AvailabilitySource (make_availability_source in availability_source.h).
//
// Parsing is strict, because a typo in a threshold silently running piranhas
// on an owner's busy machine is worse than an agent that refuses to start:
// unknown keys, duplicate keys, wrong types, out-of-range values, unknown
// enum values and unreadable trace files are all errors.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "piranha/agent/agent.h"
#include "piranha/agent/availability.h"
#include "piranha/agent/launch_policy.h"
#include "piranha/agent/native_policy.h"
#include "piranha/base/input_error.h"
#include "piranha/scheduler/avail_trace.h"

namespace piranha {

// Where availability comes from.
enum class SensorKind { Live, Trace };     // YAML: live, trace
const char* to_string(SensorKind sensor);  // "live" / "trace"

// The trace sensor: replay one node of an availability trace.
struct TraceSensorConfig {
  std::string file;        // required; a relative path is resolved against the YAML file's directory
  std::string node;        // the trace node to replay; default: AgentConfig::node
  double time_scale = 60;  // trace seconds per real second (> 0); 60 plays a minute-step trace at 1 step/s
  std::int64_t start_step = 0;  // trace step at which the replay begins, in [0, length)
  // The trace, read and validated when the configuration is loaded.
  std::shared_ptr<const AvailabilityTrace> trace;
};

struct AvailabilityConfig {
  SensorKind sensor = SensorKind::Live;
  Thresholds thresholds;    // YAML: load: [l1, l5, l15] (each > 0) and input_idle_seconds (>= 0)
  double poll_seconds = 1;  // live: how often the sensors are read (> 0)
  std::vector<std::string> input_devices = {"/dev/input/event*"};  // live: evdev glob patterns
  bool terminals = true;                                           // live: use /dev/pts access times
  bool x11 = true;                         // live: use the X screensaver idle time if a display is reachable
  std::optional<TraceSensorConfig> trace;  // present iff sensor == Trace
};

struct RetreatConfig {
  // What happens to a running piranha when the node becomes unavailable
  // (agent.h). YAML: retreat, suspend.
  RetreatMode mode = RetreatMode::Retreat;
  double grace_seconds = 2;         // time a piranha is given to retreat before it is killed (>= 0)
  double suspend_max_seconds = 30;  // suspend mode: longest suspension before retreating (>= 0)
};

struct SchedulerConfig {
  // Obey scheduler 0's assignments while its heartbeat is younger than this;
  // otherwise fall back to the native policy (> 0).
  double stale_seconds = 10;
};

// How long the system space keeps old records (the agents remove them).
struct RetentionConfig {
  // Every record of a job that finished (done, failed, cancelled) this long
  // ago: job, jobexec, jobstat, jobwork, jobtime, jobexit, jobheld (> 0; 7 days).
  double jobs_seconds = 7 * 86400;
  // This node's ("ap", ...) records that ended this long ago (> 0; 8 days:
  // the NPS's predictors look back a week).
  double ap_seconds = 8 * 86400;
};

struct AgentConfig {
  std::string node;                             // node name in the system space; default: the host name
  std::string server = "tcp://127.0.0.1:7070";  // the tuple-space server's endpoint
  // The pool this node belongs to (docs/operations.md, "Pools"): a server of
  // another pool is refused. Empty: $PIRANHA_POOL, else any server.
  std::string pool;
  int cores = 1;       // piranhas run at once on this node (>= 1)
  double speed = 1.0;  // relative speed, published in the node tuple (> 0)
  // Native policy, used while no scheduler is directing the node. YAML: FAIR or FCFS.
  NativePolicyKind policy = NativePolicyKind::Fair;
  std::optional<std::uint64_t> seed;  // RNG seed for FAIR; nullopt: seeded randomly
  AvailabilityConfig availability;
  RetreatConfig retreat;
  // How piranhas run while the node is available (agent.h, PiranhaPriority).
  // YAML: idle or normal.
  PiranhaPriority piranha_priority = PiranhaPriority::Idle;
  SchedulerConfig scheduler;
  double heartbeat_seconds = 10;  // how often the agent rewrites its heartbeat tuple (> 0)
  // A job whose piranhas fail this many times in a row on this node is held (>= 1).
  int max_failures = 3;
  RetentionConfig retention;
  // CURVE (docs/security.md): the agent's secret key file and the server's
  // public key file, for a server started with --auth; each may be a key's
  // Z85 text instead. A relative path is resolved against the YAML file's
  // directory. Empty: PIRANHA_KEY and PIRANHA_SERVER_KEY, if set. The
  // agent's piranhas never get its key: each job's piranhas get a key of
  // their own for that job (docs/security.md).
  std::string key;
  std::string server_key;
  // What a job's program may do here (launch_policy.h). YAML: piranha_user
  // (a user name), piranha_programs (absolute paths; a directory is one
  // that exists, or ends in '/'), piranha_sha256 (64 hex digits each),
  // piranha_limits: {address_space_mb, cpu_seconds, open_files} (each >= 1).
  // Paths are resolved (symbolic links followed) when read.
  LaunchPolicy launch;
  // What the node offers beyond its cores, memory and architecture, for
  // jobs submitted with `--require label=NAME` (docs/jobs.md,
  // "Requirements"): names, sorted, without duplicates. YAML: labels.
  std::vector<std::string> labels;
};

// This machine's attributes as an agent publishes them (("nodeattr", ...)):
// its online processors, its physical memory, its architecture (`uname -m`)
// and `labels` (sorted, without duplicates). Reads the system (sysconf,
// uname); a value it cannot read is 0 or empty.
sched::NodeAttributes local_node_attributes(std::vector<std::string> labels);

// Parses `text`; `name` is the file name used in error messages and the base
// for relative trace paths (its directory; the current directory when it has
// none). An empty document gives all defaults. Reads the trace file when the
// trace sensor is configured. Throws InputError.
AgentConfig parse_agent_config(const std::string& text, const std::string& name);

// Reads and parses the file at `path`. Throws InputError, also when the file
// cannot be read.
AgentConfig load_agent_config(const std::string& path);

}  // namespace piranha
