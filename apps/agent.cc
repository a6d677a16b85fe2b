// piranha agent: the node agent, one per workstation.
#include "piranha/agent/agent.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <iostream>
#include <random>
#include <thread>

#include "commands.h"
#include "piranha/agent/agent_config.h"
#include "piranha/base/input_error.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/tuplespace/curve.h"
#include "pool_command.h"
#include "stop_signals.h"

namespace piranha::apps {
namespace {

std::atomic<bool> g_stop{false};

struct AgentArgs {
  std::string config;
  bool key_given = false, server_key_given = false;  // --key, --server-key (already in the environment)
  bool pool_given = false;                           // --pool (already in the environment)
  std::string node, server, policy, trace, trace_node, events, piranha_output, priority, piranha_user;
  std::vector<std::string> labels;  // --label, added to the YAML's
  double time_scale = 0;
  int cores = 0;
  bool quiet = false;
  bool campus_loans = false;
};

AgentSettings settings_from(const AgentConfig& c, const AgentArgs& a) {
  AgentSettings s;
  s.node = c.node;
  s.server = c.server;
  s.cores = c.cores;
  s.speed = c.speed;
  s.policy = c.policy;
  s.seed = c.seed ? *c.seed : std::random_device{}();
  s.priority = c.piranha_priority;
  s.mode = c.retreat.mode;
  s.grace = std::chrono::milliseconds(static_cast<long>(c.retreat.grace_seconds * 1000));
  s.suspend_max = std::chrono::milliseconds(static_cast<long>(c.retreat.suspend_max_seconds * 1000));
  s.scheduler_stale_seconds = c.scheduler.stale_seconds;
  s.heartbeat_seconds = c.heartbeat_seconds;
  s.max_failures = c.max_failures;
  s.job_retention_seconds = c.retention.jobs_seconds;
  s.ap_retention_seconds = c.retention.ap_seconds;
  s.launch = c.launch;
  s.attributes = local_node_attributes(c.labels);
  // With keys of its own the agent talks to a server with --auth, where
  // each job's piranhas need a key of their own.
  s.job_keys = ts::curve_keys_from_environment().has_value();
  s.events_file = a.events;
  s.piranha_output = a.piranha_output;
  s.quiet = a.quiet;
  s.campus_loans = a.campus_loans;
  return s;
}

int run_agent(const AgentArgs& a) {
  AgentConfig config;
  try {
    config = a.config.empty() ? parse_agent_config("", "(defaults)") : load_agent_config(a.config);
    if (!a.node.empty()) config.node = a.node;
    if (!a.server.empty())
      config.server = a.server;
    else if (std::getenv("PIRANHA_SERVER") && config.server == sys::kDefaultServer)
      config.server = sys::server_from_env();  // like every other command
    if (auto problem = endpoint_problem(config.server))
      throw InputError(a.server.empty() ? "server ($PIRANHA_SERVER or the YAML)" : "--server", *problem);
    // The YAML's keys, unless --key or --server-key said otherwise; in the
    // environment, where the agent's client and its piranhas find them.
    std::string from = a.config.empty() ? "the configuration" : a.config;
    if (!config.key.empty() && !a.key_given) export_key(config.key, true, from + ": key");
    if (!config.server_key.empty() && !a.server_key_given)
      export_key(config.server_key, false, from + ": server_key");
    // The YAML's pool, unless --pool said otherwise: in the environment too,
    // so that the piranhas' clients refuse another pool's server as well.
    if (!config.pool.empty() && !a.pool_given) ::setenv(ts::kPoolEnv, config.pool.c_str(), 1);
    // Keys from the environment are read now too, not first by the uplink's thread.
    ts::curve_keys_from_environment();
    if (a.cores > 0) config.cores = a.cores;
    if (!a.labels.empty()) {
      config.labels.insert(config.labels.end(), a.labels.begin(), a.labels.end());
      config.labels = sched::normalize_labels(std::move(config.labels), "--label");
    }
    if (!a.piranha_user.empty()) config.launch.user = a.piranha_user;
    if (!a.policy.empty()) {
      auto p = native_policy_from(a.policy);
      if (!p) throw InputError("--policy", "unknown policy \"" + a.policy + "\" (expected FAIR or FCFS)");
      config.policy = *p;
    }
    if (!a.priority.empty())
      config.piranha_priority = a.priority == "normal" ? PiranhaPriority::Normal : PiranhaPriority::Idle;
    if (!a.trace.empty()) {
      TraceSensorConfig t;
      t.file = a.trace;
      t.node = a.trace_node.empty() ? config.node : a.trace_node;
      if (a.time_scale > 0) t.time_scale = a.time_scale;
      t.trace = std::make_shared<const AvailabilityTrace>(read_trace(a.trace));
      if (!t.trace->index_of(t.node)) throw InputError(a.trace, "the trace has no node \"" + t.node + "\"");
      config.availability.sensor = SensorKind::Trace;
      config.availability.trace = t;
    } else if (a.time_scale > 0 && config.availability.trace) {
      config.availability.trace->time_scale = a.time_scale;
    }
  } catch (const std::exception& e) {
    std::cerr << "piranha agent: " << e.what() << "\n";
    return 2;
  }

  StopOnSignals signals(g_stop);

  try {
    auto source = make_availability_source(config.availability, Clock::now());
    Agent agent(settings_from(config, a), std::move(source));
    return agent.run(g_stop);
  } catch (const std::exception& e) {
    std::cerr << "piranha agent: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

void add_agent(CLI::App& app) {
  auto a = std::make_shared<AgentArgs>();
  auto* cmd = app.add_subcommand(
      "agent",
      "the node agent: watch this node's availability and run piranhas of the pool's jobs while it is idle");
  cmd->add_option("--config", a->config, "agent YAML (docs/configuration.md); without it, the defaults")
      ->check(CLI::ExistingFile);
  cmd->add_option("--node", a->node, "node name (overrides the YAML; default: the host name)");
  cmd->add_option(
         "--server", a->server,
         "tuple-space server (overrides the YAML; default $PIRANHA_SERVER, else tcp://127.0.0.1:7070)")
      ->check(endpoint_check());
  cmd->add_option("--cores", a->cores, "piranhas run at once (overrides the YAML)")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--policy", a->policy, "native policy: FAIR or FCFS (overrides the YAML)");
  cmd->add_option("--trace", a->trace,
                  "replay availability from this *.avail.csv instead of the live sensors");
  cmd->add_option("--trace-node", a->trace_node, "the trace node to replay (default: --node)");
  cmd->add_option("--time-scale", a->time_scale, "trace seconds per real second (default 60)")
      ->check(positive_number());
  cmd->add_option("--events", a->events,
                  "append one JSON line per event here (availability, target, start, retreat, obeyed: a "
                  "scheduler 0 assignment carried out, with its latency from the decision)");
  cmd->add_option("--piranha-output", a->piranha_output, "send the piranhas' stdout and stderr to this file");
  cmd->add_option("--piranha-priority", a->priority,
                  "idle (nice 19 under SCHED_IDLE: every other thread first; the default) or normal "
                  "(for a node with no owner to protect); overrides the YAML")
      ->check(CLI::IsMember({"idle", "normal"}, CLI::ignore_case));
  cmd->add_option("--piranha-user", a->piranha_user,
                  "run piranhas as this user, without the agent's groups (the agent must run as root; "
                  "overrides the YAML's piranha_user; docs/security.md)");
  cmd->add_option(
         "--label", a->labels,
         "a label this node offers to jobs submitted with --require label=NAME (repeatable; added to "
         "the YAML's labels)")
      ->type_name("NAME")
      ->allow_extra_args(false);
  cmd->add_flag("--quiet", a->quiet, "no log lines on stderr");
  cmd->add_flag("--campus-loans", a->campus_loans,
                "serve a campus's loans: run piranhas of other pools' jobs on this node's idle cores when "
                "its pool's NPS lends it (nps run --lend-to; docs/nps.md, \"The live campus\")");
  add_key_options(*cmd);
  add_pool_option(*cmd);
  cmd->callback([a, cmd] {
    a->pool_given = cmd->count("--pool") > 0;
    a->key_given = cmd->count("--key") > 0;
    a->server_key_given = cmd->count("--server-key") > 0;
    int rc = run_agent(*a);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace piranha::apps
