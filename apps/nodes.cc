// piranha nodes: the pool's nodes as their agents last reported them, from
// the ("node", ...), agent ("heartbeat", ...), ("agentbeat", ...),
// ("owner", ...), ("running", ...) and ("nodeattr", ...) tuples, each node
// judged by the node-liveness rule (node_liveness.h).
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "piranha/runtime/node_liveness.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/scheduler/requirement.h"
#include "pool_command.h"

using namespace std::chrono_literals;

namespace piranha::apps {
namespace {

struct NodesArgs {
  std::shared_ptr<std::string> server;
  bool json = false;
};

struct NodeRow {
  sys::NodeRecord node;
  double heard_at = 0;                        // the newer of updated_at and the agent's heartbeat
  double beat_seconds = kDefaultBeatSeconds;  // how often its agent beats
  Liveness liveness = Liveness::Heard;
  std::optional<double> blocked_until;  // an owner block in force now
  std::optional<sys::NodeRun> run;      // what its agent last said it runs
  std::optional<std::string> reason;    // why its agent put it in its reported state
  std::optional<sys::NodeAttrs> attrs;  // what it offers jobs' requirements (docs/jobs.md)
  // Its memory, architecture and labels, for the table ("-": not published).
  std::string offers() const {
    if (!attrs) return "-";
    std::string out = attrs->memory > 0 ? sched::format_size(attrs->memory) : "";
    for (const std::string& part : {attrs->arch, join_labels()})
      if (!part.empty()) out += (out.empty() ? "" : " ") + part;
    return out.empty() ? "-" : out;
  }
  std::string join_labels() const {
    std::string out;
    for (const auto& l : attrs->labels) out += (out.empty() ? "" : ",") + l;
    return out;
  }
  // Why, for people: an owner block says until when; a node not heard from
  // says that, whatever its agent last said.
  std::optional<std::string> why(double now) const {
    if (stale() || suspect()) return "agent last heard " + age(heard_at, now);
    if (node.state == sys::NodeState::OwnerBlocked && blocked_until)
      return "owner block until " + local_time(*blocked_until, now);
    return reason;
  }
  bool stale() const { return liveness == Liveness::Stale; }
  bool suspect() const { return liveness == Liveness::Suspect; }
  std::string state() const {
    return stale() ? "down (stale)" : suspect() ? "suspect" : std::string(sys::name(node.state));
  }
};

NodeRow row_of(ts::Client& c, const sys::NodeRecord& n, double now) {
  NodeRow r{n,
            n.updated_at,
            kDefaultBeatSeconds,
            Liveness::Heard,
            std::nullopt,
            std::nullopt,
            std::nullopt,
            std::nullopt};
  if (auto hb = c.rd(sys::kSpace, sys::agent_heartbeat_template(n.name), 0ms))
    if (auto h = sys::AgentHeartbeat::from_tuple(*hb)) r.heard_at = std::max(r.heard_at, h->time);
  if (auto t = c.rd(sys::kSpace, sys::agentbeat_template(n.name), 0ms))
    if (auto b = sys::AgentBeat::from_tuple(*t); b && b->seconds > 0) r.beat_seconds = b->seconds;
  r.liveness = node_liveness(r.heard_at, now, r.beat_seconds);
  for (const auto& t : c.rd_many(sys::kSpace, sys::owner_template(n.name), 1000))
    if (auto b = sys::OwnerBlock::from_tuple(t); b && b->covers(now))
      r.blocked_until = std::max(r.blocked_until.value_or(0.0), b->end);
  if (auto t = c.rd(sys::kSpace, sys::running_template(n.name), 0ms)) r.run = sys::NodeRun::from_tuple(*t);
  if (auto t = c.rd(sys::kSpace, sys::nodewhy_template(n.name), 0ms))
    if (auto w = sys::NodeReason::from_tuple(*t); w && w->state == sys::name(n.state)) r.reason = w->reason;
  return r;
}

int nodes(const NodesArgs& a) {
  auto client = connect(*a.server);
  double now = sys::wall_now();
  std::vector<NodeRow> rows;
  for (const auto& n : sys::list_nodes(*client)) rows.push_back(row_of(*client, n, now));
  // Every node's attributes in one request.
  for (auto& a : sys::list_node_attrs(*client))
    for (auto& r : rows)
      if (r.node.name == a.node) r.attrs = a;
  std::sort(rows.begin(), rows.end(),
            [](const NodeRow& x, const NodeRow& y) { return x.node.name < y.node.name; });

  // The pool the server said it serves (docs/protocol.md, "hello"): on each
  // node object, so that the array stays what it always was.
  const nlohmann::json pool =
      client->pool_name().empty() ? nlohmann::json(nullptr) : nlohmann::json(client->pool_name());
  const nlohmann::json pool_id =
      client->pool_name().empty() ? nlohmann::json(nullptr) : nlohmann::json(client->pool_id());
  if (a.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows)
      out.push_back(
          {{"node", r.node.name},
           {"pool", pool},
           {"pool_id", pool_id},
           {"state", r.stale()     ? std::string("down")
                     : r.suspect() ? std::string("suspect")
                                   : std::string(sys::name(r.node.state))},
           {"reported_state", std::string(sys::name(r.node.state))},
           {"stale", r.stale()},
           {"suspect", r.suspect()},
           {"heartbeat_seconds", r.beat_seconds},
           {"cores", r.node.cores},
           {"speed", r.node.speed},
           {"updated_at", r.node.updated_at},
           {"heard_at", r.heard_at},
           {"blocked_until", r.blocked_until ? nlohmann::json(*r.blocked_until) : nlohmann::json(nullptr)},
           {"job", r.run && r.run->job_id != 0 ? nlohmann::json(r.run->job_id) : nlohmann::json(nullptr)},
           {"by", r.run ? nlohmann::json(r.run->by) : nlohmann::json(nullptr)},
           {"reason", r.why(now) ? nlohmann::json(*r.why(now)) : nlohmann::json(nullptr)},
           {"attributes", r.attrs ? nlohmann::json{{"cores", r.attrs->cores},
                                                   {"memory", r.attrs->memory},
                                                   {"arch", r.attrs->arch},
                                                   {"labels", r.attrs->labels}}
                                  : nlohmann::json(nullptr)}});
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return 0;
  }
  if (client->pool_name().empty())
    std::cout << "pool: none named (the server was started without --pool)\n";
  else
    std::cout << "pool: " << client->pool_name() << " (id " << client->pool_id() << ")\n";
  if (rows.empty()) {
    std::cout << "no nodes (start `piranha agent` on each workstation)\n";
    return 0;
  }
  int name_w = 4;
  for (const auto& r : rows) name_w = std::max(name_w, static_cast<int>(r.node.name.size()));
  int offers_w = 6;
  for (const auto& r : rows) offers_w = std::max(offers_w, static_cast<int>(r.offers().size()));
  std::printf("%-*s %-14s %5s %6s %-10s %-6s %-12s %-13s %-*s %s\n", name_w, "NODE", "STATE", "CORES",
              "SPEED", "UPDATED", "JOB", "BY", "BLOCKED-UNTIL", offers_w, "OFFERS", "REASON");
  for (const auto& r : rows) {
    std::string job = r.run && r.run->job_id != 0 ? std::to_string(r.run->job_id) : "-";
    // Who chose the job: "scheduler 0" (the NPS) or the native policy.
    const std::string by = r.run && !r.run->by.empty() ? r.run->by : "-";
    std::printf("%-*s %-14s %5lld %6.2f %-10s %-6s %-12s %-13s %-*s %s\n", name_w, r.node.name.c_str(),
                r.state().c_str(), static_cast<long long>(r.node.cores), r.node.speed,
                age(r.heard_at, now).c_str(), job.c_str(), by.c_str(),
                r.blocked_until ? local_time(*r.blocked_until, now).c_str() : "-", offers_w,
                r.offers().c_str(), r.why(now).value_or("-").c_str());
  }
  return 0;
}

}  // namespace

void add_nodes(CLI::App& app) {
  auto a = std::make_shared<NodesArgs>();
  auto* cmd = app.add_subcommand(
      "nodes",
      "list the pool's nodes: state, cores, speed, last report, job and who chose it, owner blocks, what "
      "they "
      "offer jobs' requirements (memory, architecture, labels) and why they are in their state");
  a->server = add_server_option(*cmd);
  cmd->add_flag("--json", a->json, "print one JSON array of node objects instead of the table");
  cmd->footer(
      "A node whose agent has not been heard from for more than 1.5 of its heartbeat intervals (15 s at the "
      "default 10 s) shows as \"suspect\", for 30 s as \"down (stale)\".");
  cmd->callback([a] { run_command("nodes", *a->server, [&] { return nodes(*a); }); });
}

}  // namespace piranha::apps
