#include "piranha/agent/agent_config.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "piranha/base/yaml_reader.h"
#include "piranha/runtime/endpoint.h"

namespace piranha {

const char* to_string(SensorKind sensor) {
  return sensor == SensorKind::Live ? "live" : "trace";
}

namespace {

using yaml::fmt;
using yaml::parse_yaml;
using yaml::Reader;

// Upper bounds that no sane configuration reaches; beyond them a value is a
// typo (an extra zero, milliseconds written as seconds).
constexpr double kMaxLoad = 1000;
constexpr double kMaxIdleSeconds = 86400;
constexpr double kMaxIntervalSeconds = 3600;
// Shorter intervals would only hammer the server and the processor.
constexpr double kMinIntervalSeconds = 0.05;
constexpr double kMaxLongSeconds = 86400;
constexpr double kMaxTimeScale = 1e6;
constexpr double kMaxSpeed = 1e6;
constexpr long long kMaxCores = 4096;
constexpr long long kMaxFailures = 1000;
constexpr double kMaxRetentionSeconds = 10 * 365 * 86400.0;
constexpr std::uint64_t kMaxAddressSpaceMb = 1ULL << 30;  // a petabyte
constexpr std::uint64_t kMaxCpuSeconds = 10ULL * 365 * 86400;
constexpr std::uint64_t kMaxOpenFiles = 1ULL << 24;

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "localhost";
  return buf;
}

Thresholds read_load(const Reader& r, const YAML::Node& av, Thresholds t) {
  const YAML::Node load = av["load"];
  if (!load.IsSequence() || load.size() != 3)
    r.fail(Reader::mark_of(av, "load"),
           "availability.load must be a list of 3 numbers (1-, 5-, 15-minute thresholds), got " +
               r.describe(load));
  const char* names[] = {"availability.load[0] (1-minute)", "availability.load[1] (5-minute)",
                         "availability.load[2] (15-minute)"};
  double* slots[] = {&t.load1, &t.load5, &t.load15};
  for (std::size_t i = 0; i < 3; ++i) {
    const YAML::Node v = load[i];
    *slots[i] = r.number(v, v.Mark(), names[i], 0, true, kMaxLoad);
  }
  return t;
}

std::vector<std::string> read_patterns(const Reader& r, const YAML::Node& av) {
  const YAML::Node list = av["input_devices"];
  if (!list.IsSequence())
    r.fail(Reader::mark_of(av, "input_devices"),
           "availability.input_devices must be a list of glob patterns, got " + r.describe(list));
  std::vector<std::string> out;
  for (const auto& p : list) {
    if (!p.IsScalar() || p.Scalar().empty())
      r.fail(p, "availability.input_devices entries must be non-empty strings, got " + r.describe(p));
    out.push_back(p.Scalar());
  }
  return out;
}

TraceSensorConfig read_trace_sensor(const Reader& r, const YAML::Node& tr, const std::string& agent_node,
                                    const std::string& name) {
  r.check_keys(tr, "availability.trace", {"file", "node", "time_scale", "start_step"});
  TraceSensorConfig t;
  if (!tr["file"]) r.fail(tr, "availability.trace.file is missing: the trace sensor needs a trace file");
  t.file = r.text(tr, "file", "availability.trace.file");
  if (std::filesystem::path(t.file).is_relative())
    t.file = (std::filesystem::path(name).parent_path() / t.file).lexically_normal().string();
  t.node = tr["node"] ? r.text(tr, "node", "availability.trace.node") : agent_node;
  if (tr["time_scale"])
    t.time_scale = r.number(tr, "time_scale", "availability.trace.time_scale", 0, true, kMaxTimeScale);
  if (tr["start_step"])
    t.start_step = r.integer<std::int64_t>(tr, "start_step", "availability.trace.start_step", 0, INT64_MAX);

  AvailabilityTrace trace;
  try {
    trace = read_trace(t.file);
  } catch (const InputError& e) {
    r.fail(Reader::mark_of(tr, "file"), std::string("availability.trace.file: ") + e.what());
  }
  if (!trace.index_of(t.node)) {
    std::string nodes;
    for (std::size_t i = 0; i < trace.nodes.size() && i < 10; ++i) nodes += (i ? ", " : "") + trace.nodes[i];
    if (trace.nodes.size() > 10) nodes += ", ...";
    r.fail(Reader::mark_of(tr, tr["node"] ? "node" : "file"),
           "trace " + t.file + " has no node '" + t.node + "' (it has: " + nodes + ")" +
               (tr["node"] ? "" : "; set availability.trace.node"));
  }
  if (t.start_step >= trace.length)
    r.fail(Reader::mark_of(tr, "start_step"),
           "availability.trace.start_step " + std::to_string(t.start_step) +
               " is past the trace's end (length " + std::to_string(trace.length) + ")");
  t.trace = std::make_shared<const AvailabilityTrace>(std::move(trace));
  return t;
}

AvailabilityConfig read_availability(const Reader& r, const YAML::Node& av, const std::string& agent_node,
                                     const std::string& name) {
  r.check_keys(
      av, "availability",
      {"sensor", "load", "input_idle_seconds", "poll_seconds", "input_devices", "terminals", "x11", "trace"});
  AvailabilityConfig c;
  if (av["sensor"])
    c.sensor = r.choice(av, "sensor", "availability.sensor", {"live", "trace"}) == 0 ? SensorKind::Live
                                                                                     : SensorKind::Trace;
  if (av["load"]) c.thresholds = read_load(r, av, c.thresholds);
  if (av["input_idle_seconds"])
    c.thresholds.input_idle_seconds =
        r.number(av, "input_idle_seconds", "availability.input_idle_seconds", 0, false, kMaxIdleSeconds);
  if (av["poll_seconds"])
    c.poll_seconds = r.number(av, "poll_seconds", "availability.poll_seconds", kMinIntervalSeconds, false,
                              kMaxIntervalSeconds);
  if (av["input_devices"]) c.input_devices = read_patterns(r, av);
  if (av["terminals"]) c.terminals = r.boolean(av, "terminals", "availability.terminals");
  if (av["x11"]) c.x11 = r.boolean(av, "x11", "availability.x11");
  if (c.sensor == SensorKind::Trace) {
    if (!av["trace"])
      r.fail(Reader::mark_of(av, "sensor"),
             "availability.sensor is trace but availability.trace is missing (give at least trace: {file: "
             "...})");
    c.trace = read_trace_sensor(r, av["trace"], agent_node, name);
  } else if (av["trace"]) {
    r.fail(Reader::mark_of(av, "trace"),
           "availability.trace is given but availability.sensor is live "
           "(set sensor: trace to replay the trace)");
  }
  return c;
}

std::vector<std::string> read_list(const Reader& r, const YAML::Node& root, const char* key) {
  const YAML::Node list = root[key];
  if (!list.IsSequence())
    r.fail(Reader::mark_of(root, key), std::string(key) + " must be a list, got " + r.describe(list));
  std::vector<std::string> out;
  for (const auto& v : list) {
    if (!v.IsScalar() || v.Scalar().empty())
      r.fail(v, std::string(key) + " entries must be non-empty strings, got " + r.describe(v));
    out.push_back(v.Scalar());
  }
  return out;
}

// Absolute paths, symbolic links resolved as far as they exist; a directory
// (one that exists, or written with a trailing '/') ends in '/'.
std::vector<std::string> read_programs(const Reader& r, const YAML::Node& root) {
  std::vector<std::string> out;
  std::size_t i = 0;
  for (const auto& p : read_list(r, root, "piranha_programs")) {
    const YAML::Node at = root["piranha_programs"][i++];
    if (p.front() != '/') r.fail(at, "piranha_programs: '" + p + "' is not an absolute path");
    std::error_code ec;
    bool dir = p.back() == '/' || std::filesystem::is_directory(p, ec);
    std::string real = std::filesystem::weakly_canonical(p, ec).string();
    if (ec) r.fail(at, "piranha_programs: '" + p + "': " + ec.message());
    if (dir && real.back() != '/') real += '/';
    out.push_back(real);
  }
  return out;
}

std::vector<std::string> read_digests(const Reader& r, const YAML::Node& root) {
  std::vector<std::string> out;
  std::size_t i = 0;
  for (auto d : read_list(r, root, "piranha_sha256")) {
    const YAML::Node at = root["piranha_sha256"][i++];
    for (auto& c : d) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (d.size() != 64 || d.find_first_not_of("0123456789abcdef") != std::string::npos)
      r.fail(at, "piranha_sha256: '" + d + "' is not a SHA-256 digest (64 hex digits, as sha256sum prints)");
    out.push_back(d);
  }
  return out;
}

LaunchLimits read_limits(const Reader& r, const YAML::Node& l) {
  r.check_keys(l, "piranha_limits", {"address_space_mb", "cpu_seconds", "open_files"});
  LaunchLimits out;
  if (l["address_space_mb"])
    out.address_space_mb = r.integer<std::uint64_t>(l, "address_space_mb", "piranha_limits.address_space_mb",
                                                    1, kMaxAddressSpaceMb);
  if (l["cpu_seconds"])
    out.cpu_seconds =
        r.integer<std::uint64_t>(l, "cpu_seconds", "piranha_limits.cpu_seconds", 1, kMaxCpuSeconds);
  if (l["open_files"])
    out.open_files = r.integer<std::uint64_t>(l, "open_files", "piranha_limits.open_files", 1, kMaxOpenFiles);
  return out;
}

}  // namespace

AgentConfig parse_agent_config(const std::string& text, const std::string& name) {
  Reader r(name);
  const YAML::Node root = parse_yaml(r, text);
  AgentConfig c;
  c.node = host_name();
  if (root.IsNull()) return c;
  r.check_keys(root, "the agent configuration",
               {"node",
                "server",
                "pool",
                "cores",
                "speed",
                "policy",
                "seed",
                "availability",
                "retreat",
                "scheduler",
                "heartbeat_seconds",
                "max_failures",
                "retention",
                "key",
                "server_key",
                "piranha_priority",
                "piranha_user",
                "piranha_programs",
                "piranha_sha256",
                "piranha_limits",
                "labels"});
  try {
    if (root["node"]) c.node = r.text(root, "node", "node");
    if (root["server"]) {
      c.server = r.text(root, "server", "server");
      if (auto problem = endpoint_problem(c.server))
        r.fail(Reader::mark_of(root, "server"), "server: " + *problem);
    }
    if (root["pool"]) {
      c.pool = r.text(root, "pool", "pool");
      if (!valid_pool_name(c.pool))
        r.fail(Reader::mark_of(root, "pool"),
               "pool must be 1 to 64 letters, digits, '-', '_' or '.', got '" + c.pool + "'");
    }
    if (root["cores"]) c.cores = static_cast<int>(r.integer<long long>(root, "cores", "cores", 1, kMaxCores));
    if (root["speed"]) c.speed = r.number(root, "speed", "speed", 0, true, kMaxSpeed);
    if (root["policy"])
      c.policy = r.choice(root, "policy", "policy", {"FAIR", "FCFS"}) == 0 ? NativePolicyKind::Fair
                                                                           : NativePolicyKind::Fcfs;
    if (root["piranha_priority"])
      c.piranha_priority = r.choice(root, "piranha_priority", "piranha_priority", {"idle", "normal"}) == 0
                               ? PiranhaPriority::Idle
                               : PiranhaPriority::Normal;
    if (root["seed"]) c.seed = r.integer<std::uint64_t>(root, "seed", "seed", 0, UINT64_MAX);
    if (root["availability"]) c.availability = read_availability(r, root["availability"], c.node, name);
    if (root["retreat"]) {
      const YAML::Node rt = root["retreat"];
      r.check_keys(rt, "retreat", {"mode", "grace_seconds", "suspend_max_seconds"});
      if (rt["mode"])
        c.retreat.mode = r.choice(rt, "mode", "retreat.mode", {"retreat", "suspend"}) == 0
                             ? RetreatMode::Retreat
                             : RetreatMode::Suspend;
      if (rt["grace_seconds"])
        c.retreat.grace_seconds =
            r.number(rt, "grace_seconds", "retreat.grace_seconds", 0, false, kMaxIntervalSeconds);
      if (rt["suspend_max_seconds"])
        c.retreat.suspend_max_seconds =
            r.number(rt, "suspend_max_seconds", "retreat.suspend_max_seconds", 0, false, kMaxLongSeconds);
    }
    if (root["scheduler"]) {
      const YAML::Node sc = root["scheduler"];
      r.check_keys(sc, "scheduler", {"stale_seconds"});
      if (sc["stale_seconds"])
        c.scheduler.stale_seconds =
            r.number(sc, "stale_seconds", "scheduler.stale_seconds", 0, true, kMaxLongSeconds);
    }
    if (root["max_failures"])
      c.max_failures =
          static_cast<int>(r.integer<long long>(root, "max_failures", "max_failures", 1, kMaxFailures));
    if (root["retention"]) {
      const YAML::Node rn = root["retention"];
      r.check_keys(rn, "retention", {"jobs_seconds", "ap_seconds"});
      if (rn["jobs_seconds"])
        c.retention.jobs_seconds =
            r.number(rn, "jobs_seconds", "retention.jobs_seconds", 0, true, kMaxRetentionSeconds);
      if (rn["ap_seconds"])
        c.retention.ap_seconds =
            r.number(rn, "ap_seconds", "retention.ap_seconds", 0, true, kMaxRetentionSeconds);
    }
    for (auto [field, slot] : {std::pair{"key", &c.key}, std::pair{"server_key", &c.server_key}}) {
      if (!root[field]) continue;
      *slot = r.text(root, field, field);
      // A file beside the YAML file, unless it is 40 characters (a key's Z85
      // text) and no such file is there. Checked when the agent starts.
      auto beside = (std::filesystem::path(name).parent_path() / *slot).lexically_normal();
      if (std::filesystem::path(*slot).is_relative() &&
          (slot->size() != 40 || std::filesystem::exists(beside)))
        *slot = beside.string();
    }
    if (root["piranha_user"]) c.launch.user = r.text(root, "piranha_user", "piranha_user");
    if (root["piranha_programs"]) c.launch.programs = read_programs(r, root);
    if (root["piranha_sha256"]) c.launch.sha256 = read_digests(r, root);
    if (root["piranha_limits"]) c.launch.limits = read_limits(r, root["piranha_limits"]);
    if (root["labels"]) {
      std::size_t i = 0;
      for (const auto& l : read_list(r, root, "labels")) {
        if (!sched::valid_attribute_name(l))
          r.fail(root["labels"][i],
                 "labels: '" + l + "' is not a name (1 to 64 letters, digits, '_', '-' or '.')");
        ++i;
      }
      c.labels = sched::normalize_labels(read_list(r, root, "labels"), name);
    }
    if (root["heartbeat_seconds"])
      c.heartbeat_seconds = r.number(root, "heartbeat_seconds", "heartbeat_seconds", kMinIntervalSeconds,
                                     false, kMaxIntervalSeconds);
  } catch (const YAML::Exception& e) {
    // Anything yaml-cpp itself objects to while walking the document.
    r.fail(e.mark, e.msg);
  }
  return c;
}

sched::NodeAttributes local_node_attributes(std::vector<std::string> labels) {
  sched::NodeAttributes a;
  a.cores = std::max(0L, ::sysconf(_SC_NPROCESSORS_ONLN));
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0) a.memory = static_cast<std::int64_t>(pages) * page;
  struct utsname u {};
  if (::uname(&u) == 0) a.arch = u.machine;
  a.labels = sched::normalize_labels(std::move(labels), "labels");
  return a;
}

AgentConfig load_agent_config(const std::string& path) {
  return parse_agent_config(yaml::read_file(path, "the agent configuration"), path);
}

}  // namespace piranha
