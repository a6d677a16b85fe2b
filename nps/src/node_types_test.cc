// The NPS node types on the deterministic trellis, against a ScriptedPool:
// the propagation from enabler to monitors to scheduler and back down as
// commands, with no sockets, clocks or sleeps.
#include "piranha/nps/node_types.h"

#include <doctest/doctest.h>

#include <random>

#include "node_kinds.h"
#include "piranha/nps/program.h"
#include "piranha/trellis/deterministic.h"
#include "scripted_pool.h"
#include "values.h"

namespace piranha::nps {
namespace {

using testing::ScriptedPool;
using trellis::Value;

struct Rig {
  ScriptedPool pool;
  trellis::Registry types;
  std::unique_ptr<trellis::DeterministicTrellis> t;

  explicit Rig(std::vector<std::string> nodes) {
    for (const auto& n : nodes) pool.add_node(n);
    add_nps_types(types, Environment{&pool, make_memory()});
  }
  void standard(const std::string& strategy, double period = 1, double cold_start = 0) {
    StandardOptions o;
    o.nodes = pool.names;
    o.strategy = strategy;
    o.period = period;
    o.cold_start = cold_start;
    t = std::make_unique<trellis::DeterministicTrellis>(standard_program(o, types), types);
  }
  void program(const std::string& yaml) {
    auto p = trellis::parse_program(yaml, types, "test.yaml");
    check_nps_program(p);
    t = std::make_unique<trellis::DeterministicTrellis>(p, types);
  }
  // One tick at time `now`.
  void tick(double now) {
    pool.clock = now;
    t->probe("enabler");
    t->run();
  }
  // The last job the pool was told for `node` by scheduler 0.
  std::optional<std::optional<JobId>> assigned(const std::string& node) const {
    std::optional<std::optional<JobId>> last;
    for (const auto& w : pool.assigns)
      if (w.node == node && w.scheduler == 0) last = w.job;
    return last;
  }
};

TEST_CASE("enabler: every probe is a new tick") {
  Rig r({"ws01"});
  r.standard("TSK");
  r.tick(0);
  CHECK(r.t->state("enabler")["tick"] == Value(0));
  r.tick(1);
  r.tick(2);
  CHECK(r.t->state("enabler")["tick"] == Value(2));
  CHECK(r.t->state("jobs")["tick"] == Value(2));
  CHECK(r.t->state("monitor_ws01")["tick"] == Value(2));
}

TEST_CASE("enabler: a rebuilt trellis goes on from the last tick, so its schedulers keep deciding") {
  Rig r({"ws01"});
  r.pool.job_list = {testing::job(1, 0, 0.5, 1000)};
  r.standard("TSK");
  for (double t : {0.0, 1.0, 2.0}) r.tick(t);
  const std::size_t beats = r.pool.beats.size();
  r.standard("TSK");  // rebuilt, as the live shell does when a node joins
  r.tick(3);
  CHECK(r.t->state("enabler")["tick"] == Value(3));
  CHECK(r.t->state("scheduler_0")["decisions"] == Value(4));
  CHECK(r.pool.beats.size() == beats + 1);
}

TEST_CASE("TSK live: the job with 3 microsecond tasks gets every node before the one with 40") {
  Rig r({"ws01", "ws02", "ws03"});
  r.pool.job_list = {testing::job(1, 100.0, 40e-6, 1000), testing::job(2, 101.0, 3e-6, 1000)};
  r.standard("TSK");
  r.tick(200);
  for (const char* n : {"ws01", "ws02", "ws03"}) {
    REQUIRE(r.assigned(n).has_value());
    CHECK(*r.assigned(n) == std::optional<JobId>(2));
  }
  CHECK(r.pool.beats == std::vector<std::int64_t>{0});
  CHECK(r.t->state("scheduler_0")["assignments"]["ws02"] == Value(2));
}

TEST_CASE("SRT: the job with less work left wins, whatever its task time") {
  Rig r({"ws01", "ws02"});
  // Job 1: 10 tasks of 0.5 s = 5 s left; job 2: 1000 tasks of 0.01 s = 10 s left.
  r.pool.job_list = {testing::job(1, 0, 0.5, 10), testing::job(2, 1, 0.01, 1000)};
  r.standard("SRT");
  r.tick(5);
  CHECK(*r.assigned("ws01") == std::optional<JobId>(1));
  CHECK(*r.assigned("ws02") == std::optional<JobId>(1));
}

TEST_CASE("an unmeasured job is given the cold-start task time, so TSK tries it at once") {
  Rig r({"ws01"});
  r.pool.job_list = {testing::job(1, 0, 0.2, 100), testing::job(2, 5, 0, 100, false)};
  SUBCASE("default prior 0: the new job runs first and gets measured") {
    r.standard("TSK");
    r.tick(6);
    CHECK(*r.assigned("ws01") == std::optional<JobId>(2));
  }
  SUBCASE("a prior of 1 s: the measured 0.2 s job keeps the node") {
    r.standard("TSK", 1, 1.0);
    r.tick(6);
    CHECK(*r.assigned("ws01") == std::optional<JobId>(1));
  }
}

TEST_CASE("probing: a job not yet measured gets one node, the measured jobs the rest, then TSK decides") {
  Rig r({"ws01", "ws02", "ws03"});
  r.pool.job_list = {testing::job(1, 0, 0.2, 1000), testing::job(2, 5, 0, 1000, false)};
  r.standard("TSK", 10);
  r.tick(6);
  CHECK(*r.assigned("ws01") == std::optional<JobId>(1));
  CHECK(*r.assigned("ws02") == std::optional<JobId>(1));
  CHECK(*r.assigned("ws03") == std::optional<JobId>(2));  // the probe: from the end of the list
  // Job 2 is measured at 10 ms: news for on_events? Not in this program
  // (on_events off), so the next decision is at t = 16.
  r.pool.job_list[1].measured = true;
  r.pool.job_list[1].mean_task_time = 0.01;
  r.tick(7);
  CHECK(*r.assigned("ws01") == std::optional<JobId>(1));
  r.tick(16);
  for (const char* n : {"ws01", "ws02", "ws03"}) CHECK(*r.assigned(n) == std::optional<JobId>(2));
}

TEST_CASE("probing: with on_events a job measured is news, decided at the next tick") {
  Rig r({"ws01", "ws02"});
  r.pool.job_list = {testing::job(1, 0, 0.2, 1000), testing::job(2, 5, 0, 1000, false)};
  StandardOptions o;
  o.nodes = r.pool.names;
  o.period = 10;
  o.on_events = true;
  r.t = std::make_unique<trellis::DeterministicTrellis>(standard_program(o, r.types), r.types);
  r.tick(6);
  CHECK(*r.assigned("ws02") == std::optional<JobId>(2));
  r.pool.job_list[1].measured = true;
  r.pool.job_list[1].mean_task_time = 0.01;
  r.tick(7);
  CHECK(*r.assigned("ws01") == std::optional<JobId>(2));
}

TEST_CASE("probe_nodes: one node per unmeasured job, a node keeps its probe, measured jobs keep one node") {
  using J = std::optional<JobId>;
  std::vector<JobId> two = {7, 8};
  CHECK(probe_nodes(two, std::vector<J>{J(), J(), J(), J()}) == std::vector<J>{J(), J(), 8, 7});
  CHECK(probe_nodes(two, std::vector<J>{J(8), J(), J(), J()}) == std::vector<J>{8, J(), J(), 7});
  CHECK(probe_nodes(two, std::vector<J>{J(), J()}) == std::vector<J>{J(), 7});  // one node stays measured
  CHECK(probe_nodes(two, std::vector<J>{J(1)}) == std::vector<J>{J()});
}

TEST_CASE("probe_nodes: with requirements a job is probed only on a node that may run it") {
  using J = std::optional<JobId>;
  std::vector<JobId> two = {7, 8};
  // Job 7 only on node 0, job 8 on nodes 0 and 1.
  auto may_run = [](std::size_t k, JobId job) { return job == 7 ? k == 0 : k <= 1; };
  CHECK(probe_nodes(two, std::vector<J>{J(), J(), J(), J()}, may_run) == std::vector<J>{7, 8, J(), J()});
  // A node running job 8 that may no longer run it does not keep it.
  auto only0 = [](std::size_t k, JobId) { return k == 0; };
  CHECK(probe_nodes(std::vector<JobId>{8}, std::vector<J>{J(), J(8), J()}, only0) ==
        std::vector<J>{8, J(), J()});
  // No node may run it: probed nowhere.
  CHECK(probe_nodes(std::vector<JobId>{8}, std::vector<J>{J(), J()},
                    [](std::size_t, JobId) { return false; }) == std::vector<J>{J(), J()});
}

TEST_CASE("scheduler: a job with a requirement goes only to nodes whose attributes satisfy it") {
  Rig r({"ws01", "ws02", "ws03"});
  r.pool.status["ws02"].attributes = sched::NodeAttributes{4, std::int64_t{8} << 30, "x86_64", {"gpu"}};
  r.pool.status["ws03"].attributes = sched::NodeAttributes{4, std::int64_t{8} << 30, "x86_64", {}};
  // TSK's top job requires a gpu; ws01 published no attributes.
  JobInfo gpu = testing::job(1, 0, 0.5, 100), plain = testing::job(2, 1, 2, 100),
          tpu = testing::job(3, 2, 0.1, 100);
  gpu.requirement = "label=gpu";
  tpu.requirement = "label=tpu";
  r.pool.job_list = {gpu, plain, tpu};
  r.standard("TSK");
  r.tick(0);
  CHECK(r.assigned("ws01") == std::optional<std::optional<JobId>>(2));
  CHECK(r.assigned("ws02") == std::optional<std::optional<JobId>>(1));
  CHECK(r.assigned("ws03") == std::optional<std::optional<JobId>>(2));
  CHECK(r.t->state("jobs")["jobs"].as_list()[0]["requires"] == Value("label=gpu"));
  CHECK(r.t->state("monitor_ws02")["attributes"]["labels"] == Value(Value::List{Value("gpu")}));
  CHECK(r.t->state("monitor_ws01")["attributes"].is_null());
  // Only the job no node satisfies left: every node idle, and it waits.
  r.pool.job_list = {tpu};
  r.tick(1);
  for (const char* n : {"ws01", "ws02", "ws03"})
    CHECK(r.assigned(n) == std::optional<std::optional<JobId>>(std::optional<JobId>()));
}

TEST_CASE("decisions come once per period, only commands that change something are sent") {
  Rig r({"ws01", "ws02"});
  r.pool.job_list = {testing::job(1, 0, 1, 100)};
  r.standard("TSK", 10);
  auto decisions = [&] { return r.t->state("scheduler_0")["decisions"]; };
  r.tick(0);
  CHECK(r.pool.assigns.size() == 2);  // the first decision is sent to every monitor
  CHECK(decisions() == trellis::Value(1));
  r.tick(4);
  r.tick(8);
  CHECK(decisions() == trellis::Value(1));  // not due yet...
  CHECK(r.pool.beats.size() == 3);          // ...but alive: a heartbeat every tick
  r.pool.job_list.push_back(testing::job(2, 9, 0.5, 10));
  r.tick(10);
  CHECK(decisions() == trellis::Value(2));
  REQUIRE(r.pool.assigns.size() == 4);
  CHECK(r.pool.assigns[2].job == std::optional<JobId>(2));
  CHECK(r.pool.assigns[2].epoch == 10);
  r.tick(20);
  CHECK(decisions() == trellis::Value(3));
  CHECK(r.pool.assigns.size() == 4);  // nothing changed: no command, no write
  r.pool.job_list.clear();
  r.tick(30);
  REQUIRE(r.pool.assigns.size() == 6);
  CHECK(r.pool.assigns[5].job == std::nullopt);  // an empty queue: no job
}

TEST_CASE("monitor: history grows by the new steps only, and predictions follow it") {
  Rig r({"ws01"});
  r.pool.history["ws01"] = {true, true, false, true};
  r.standard("TSK");
  r.tick(4);
  r.pool.history["ws01"].push_back(true);
  r.pool.step_requests.clear();
  r.tick(5);
  // Asked only from the step it had not seen.
  for (const auto& [node, from] : r.pool.step_requests)
    if (node == "ws01") CHECK(from == 4);
  const Value& m = r.t->state("monitor_ws01");
  // REC_HIST over [-5, 5) clipped to [0, 5): runs 2 and 2, mean 2.
  CHECK(m["ap_length"] == Value(2.0));
  CHECK(m["fraction"] == Value(0.8));
  CHECK(m["available"] == Value(true));
}

// The monitor keeps its decisions' Value from one command to the next
// rather than building it at every tick: after any sequence of commands it
// is what building it from every command so far gives.
TEST_CASE("monitor: its recorded decisions equal the full recomputation over random commands") {
  Rig r({"ws01"});
  r.program(R"(program: m
nodes:
  - {name: enabler, type: enabler}
  - {name: m1, type: monitor, inferiors: [enabler], params: {node: ws01}}
)");
  std::mt19937 rng(29);
  std::map<std::int64_t, std::optional<JobId>> sent;
  for (int tick = 0; tick < 300; ++tick) {
    for (int k = static_cast<int>(rng() % 3); k > 0; --k) {
      const std::int64_t id = static_cast<std::int64_t>(rng() % 4);
      const std::optional<JobId> job =
          rng() % 3 == 0 ? std::nullopt : std::optional<JobId>(static_cast<JobId>(rng() % 3));
      sent[id] = job;
      r.t->command("m1", Fields()("scheduler", id)("epoch", 1)("job", job_value(job)));
    }
    r.tick(tick);
    Value::Map full;
    for (const auto& [id, job] : sent) full[std::to_string(id)] = job_value(job);
    REQUIRE(r.t->state("m1")["decisions"] == Value(std::move(full)));
  }
}

// A monitor updates its last state field by field, into the map of the
// state before: after any sequence of views it is the state built whole
// from the latest, whether or not that state and the one before were
// shared (as the trellis shares them) when it was updated, and a shared
// one is left alone.
TEST_CASE("update_monitor_state equals the state built whole over random views") {
  std::mt19937 rng(11);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  MonitorView v, kept_view;
  Value state, spare, kept;
  for (int step = 0; step < 3000; ++step) {
    if (pick(2) && state.is_map()) {  // shared, as the trellis keeps the state it was given
      kept = state;
      kept_view = v;
    }
    switch (pick(15)) {
      case 0: v.ap_length = pick(4) * 1.5; break;
      case 13: v.attributes = pick(2) ? Value(Fields()("cores", pick(4))) : Value(); break;
      case 1: v.available = pick(2); break;
      case 2: v.decisions = pick(2) ? Value(Fields()("0", pick(3))) : Value(Value::Map{}); break;
      case 3: v.fraction = pick(5) / 4.0; break;
      case 4: v.history += pick(2); break;
      case 5: v.node = pick(2) ? "ws01" : "a-node-with-a-long-name"; break;
      case 6: v.obeys = pick(3); break;
      case 7: v.predictor = pick(2) ? "REC_HIST" : "HIST_MEAN"; break;
      case 8: v.reason = pick(2) ? "" : "keyboard"; break;
      case 9: v.running = pick(2) ? Value(pick(4)) : Value(); break;
      case 10: v.state = pick(2) ? "available" : "unavailable"; break;
      case 11: v.suspect = pick(2); break;
      case 12: v.tick += pick(3); break;
      default: v.window = 1 + pick(20); break;
    }
    if (pick(50) == 0) state = Value(7);  // not a monitor's state: built whole
    if (pick(50) == 0) spare = Value(8);  // no spare of the state's shape: the state is copied
    update_monitor_state(state, spare, v);
    REQUIRE(state == monitor_state(v));
    if (kept.is_map()) REQUIRE(kept == monitor_state(kept_view));  // the shared copy is left alone
  }
}

// A scheduler finds each node's entry through the slot of the inferior that
// reports it: whatever the inferiors report and whatever entries are added,
// what it finds is what a lookup by name finds.
TEST_CASE("find_decided equals a lookup by name over random reports and new entries") {
  SchedulerMemory m;
  std::mt19937 rng(7);
  const std::vector<std::string> names = {"ws01", "ws02", "ws03", "a-node-with-a-long-name-07", "ws05"};
  for (int step = 0; step < 5000; ++step) {
    const std::string& node = names[rng() % names.size()];
    if (rng() % 5 == 0) m.decided.try_emplace(node).first->second.job = static_cast<JobId>(step);
    const std::size_t inferior = rng() % 6;
    const auto it = m.decided.find(node);
    REQUIRE(find_decided(m, inferior, node) == (it == m.decided.end() ? nullptr : &it->second));
  }
}

TEST_CASE("owner: a block in force makes the monitor report the node unavailable") {
  Rig r({"ws01"});
  r.pool.owner_blocks["ws01"] = {Block{10, 20}};
  r.standard("TSK");
  r.tick(5);
  CHECK(r.t->state("owner_ws01")["blocked"] == Value(false));
  CHECK(r.t->state("monitor_ws01")["available"] == Value(true));
  r.tick(12);
  CHECK(r.t->state("owner_ws01")["blocked"] == Value(true));
  CHECK(r.t->state("monitor_ws01")["available"] == Value(false));
}

// The owner node rebuilds its state only when what it is built from
// changes: a block added for later, or a complaint, still shows at once.
TEST_CASE("owner: a block set for later and a complaint show in its state at the next tick") {
  Rig r({"ws01"});
  r.standard("TSK");
  r.tick(1);
  CHECK(r.t->state("owner_ws01")["blocks"].as_list().empty());
  r.pool.owner_blocks["ws01"] = {Block{50, 60}};
  r.tick(2);
  REQUIRE(r.t->state("owner_ws01")["blocks"].as_list().size() == 1);
  CHECK(r.t->state("owner_ws01")["blocks"].as_list()[0] == Value(Value::List{50.0, 60.0}));
  CHECK(r.t->state("owner_ws01")["blocked"] == Value(false));
  r.pool.complaint_list["ws01"] = {Complaint{2.5, "slow at noon"}};
  r.tick(3);
  REQUIRE(r.t->state("owner_ws01")["complaints"].as_list().size() == 1);
  CHECK(r.t->state("owner_ws01")["complaints"].as_list()[0]["text"] == Value("slow at noon"));
}

// With a pool that numbers its changes (owners_version()), an owner node
// reads its node's blocks only when the number changed or a block begins or
// ends: not at the ticks in between, on a pool of 10,000 almost every tick.
TEST_CASE("owner: a pool that numbers its changes is read only at a change, a block's start or its end") {
  Rig r({"ws01"});
  r.pool.owners_changes = 1;
  r.pool.owner_blocks["ws01"] = {Block{10, 20}};
  r.standard("TSK");
  r.tick(5);
  CHECK(r.t->state("owner_ws01")["blocks"].as_list().size() == 1);
  const std::int64_t first = r.pool.block_reads;
  CHECK(first > 0);
  r.tick(6);
  r.tick(9);
  CHECK(r.pool.block_reads == first);  // nothing changed
  r.tick(10);                          // the block begins
  CHECK(r.pool.block_reads == first + 1);
  CHECK(r.t->state("owner_ws01")["blocked"] == Value(true));
  CHECK(r.t->state("monitor_ws01")["available"] == Value(false));
  r.tick(15);
  CHECK(r.pool.block_reads == first + 1);
  r.tick(20);  // it ends; the pool still lists it until its next change
  CHECK(r.t->state("owner_ws01")["blocked"] == Value(false));
  CHECK(r.t->state("monitor_ws01")["available"] == Value(true));
  r.pool.owner_blocks["ws01"] = {};
  r.tick(21);  // not told: not read
  CHECK(r.t->state("owner_ws01")["blocks"].as_list().size() == 1);
  r.pool.owners_changes = 2;
  r.pool.complaint_list["ws01"] = {Complaint{21.5, "slow"}};
  r.tick(22);
  CHECK(r.t->state("owner_ws01")["blocks"].as_list().empty());
  CHECK(r.t->state("owner_ws01")["complaints"].as_list().size() == 1);
}

const char* kShadowProgram = R"(program: shadow
nodes:
  - {name: enabler, type: enabler}
  - {name: jobs, type: jobs, inferiors: [enabler]}
  - {name: m1, type: monitor, inferiors: [enabler], params: {node: ws01}}
  - {name: m2, type: monitor, inferiors: [enabler], params: {node: ws02}}
  - {name: s0, type: scheduler, inferiors: [jobs, m1, m2], params: {id: 0, strategy: TSK}}
  - {name: s1, type: scheduler, inferiors: [jobs, m1, m2], params: {id: 1, strategy: SRT}}
  - {name: eval, type: evaluator, inferiors: [s0, s1, m1, m2]}
)";

TEST_CASE("a shadow scheduler decides and is recorded, but only scheduler 0 reaches the pool") {
  Rig r({"ws01", "ws02"});
  r.pool.job_list = {testing::job(1, 0, 0.5, 2), testing::job(2, 1, 0.1, 1000)};
  r.program(kShadowProgram);
  r.tick(0);
  CHECK(r.t->state("s0")["assignments"]["ws01"] == Value(2));  // TSK
  CHECK(r.t->state("s1")["assignments"]["ws01"] == Value(1));  // SRT
  for (const auto& w : r.pool.assigns) CHECK(w.scheduler == 0);
  CHECK(r.t->state("m1")["decisions"]["1"] == Value(1));
  CHECK(r.t->state("m1")["decisions"]["0"] == Value(2));
  r.tick(1);
  const Value& e = r.t->state("eval");
  CHECK(e["schedulers"]["0"]["decisions"] == Value(2));
  CHECK(e["schedulers"]["1"]["strategy"] == Value("SRT"));
  CHECK(e["schedulers"]["1"]["obeyed"] == Value(false));
  CHECK(e["nodes"]["ws01"]["observed_seconds"] == Value(1.0));
  CHECK(e["nodes"]["ws01"]["fraction"] == Value(1.0));
}

// The live shell ticks at once when a job arrives (an event tick, ticker.h):
// here a tick at 2.4, between the ticks at 2 and 3.
TEST_CASE(
    "an arrival between ticks is decided at its event tick with on_events, and only on the period without") {
  Rig r({"ws01", "ws02"});
  r.pool.job_list = {testing::job(1, 0, 0.5, 1000)};
  r.program(R"(program: events
nodes:
  - {name: enabler, type: enabler, params: {period: 1}}
  - {name: jobs, type: jobs, inferiors: [enabler]}
  - {name: m1, type: monitor, inferiors: [enabler], params: {node: ws01}}
  - {name: m2, type: monitor, inferiors: [enabler], params: {node: ws02}}
  - {name: s0, type: scheduler, inferiors: [jobs, m1, m2], params: {id: 0, strategy: TSK, period: 10, on_events: true}}
  - {name: s1, type: scheduler, inferiors: [jobs, m1, m2], params: {id: 1, strategy: TSK, period: 10}}
)");
  auto decisions = [&](const char* s) { return r.t->state(s)["decisions"]; };
  for (double t : {0.0, 1.0, 2.0}) r.tick(t);
  CHECK(decisions("s0") == Value(1));
  CHECK(decisions("s1") == Value(1));
  CHECK(*r.assigned("ws02") == std::optional<JobId>(1));
  // Job 2 arrives at 2.4, not yet measured; the event tick comes at once.
  r.pool.job_list.push_back(testing::job(2, 2.4, 0, 1000, false));
  r.tick(2.4);
  CHECK(decisions("s0") == Value(2));                          // decided at the arrival, not at 3
  CHECK(*r.assigned("ws02") == std::optional<JobId>(2));       // a node of its own to be measured on
  CHECK(r.pool.assigns.back().epoch == 2);                     // the event tick's time
  CHECK(r.t->state("s1")["assignments"]["ws02"] == Value(1));  // the spec's period: not due
  CHECK(decisions("s1") == Value(1));
  // The job's first tasks complete at 2.7: measured, news again.
  r.pool.job_list[1].measured = true;
  r.pool.job_list[1].mean_task_time = 0.01;
  r.tick(2.7);
  CHECK(decisions("s0") == Value(3));
  CHECK(*r.assigned("ws01") == std::optional<JobId>(2));  // TSK: the shorter tasks take every node
  // Event ticks leave the period where it was: both decide at 10, not 12.4.
  for (double t = 3; t < 10; ++t) r.tick(t);
  CHECK(decisions("s0") == Value(3));
  CHECK(decisions("s1") == Value(1));
  r.tick(10);
  CHECK(decisions("s0") == Value(4));
  CHECK(decisions("s1") == Value(2));
  CHECK(r.t->state("s1")["assignments"]["ws02"] == Value(2));
}

TEST_CASE("a node that joins is decided for at once with on_events, and at the period without") {
  for (const bool on_events : {true, false}) {
    CAPTURE(on_events);
    Rig r({"ws01", "ws02"});
    r.pool.job_list = {testing::job(1, 0, 0.5, 1000)};
    StandardOptions o;
    o.period = 10;
    o.on_events = on_events;
    o.nodes = r.pool.names;
    r.t = std::make_unique<trellis::DeterministicTrellis>(standard_program(o, r.types), r.types);
    r.tick(0);
    r.tick(1);
    // ws03 registers at 1.5; the live shell rebuilds the standard program
    // (keeping every node's memory) and ticks at once.
    r.pool.add_node("ws03");
    o.nodes = r.pool.names;
    r.t = std::make_unique<trellis::DeterministicTrellis>(standard_program(o, r.types), r.types);
    r.tick(1.5);
    if (on_events)
      CHECK(*r.assigned("ws03") == std::optional<JobId>(1));
    else
      CHECK_FALSE(r.assigned("ws03"));
    r.tick(10);
    CHECK(*r.assigned("ws03") == std::optional<JobId>(1));
  }
}

TEST_CASE("a scheduler waits for every monitor to reach the tick, leaving out one whose link is down") {
  Rig r({"ws01", "ws02"});
  r.pool.job_list = {testing::job(1, 0, 1, 10)};
  r.program(kShadowProgram);
  r.t->set_link("s0", "m2", trellis::LinkState::Down);
  r.tick(0);
  // ws02's monitor is out of reach: ws01 is still scheduled.
  CHECK(*r.assigned("ws01") == std::optional<JobId>(1));
}

}  // namespace
}  // namespace piranha::nps
