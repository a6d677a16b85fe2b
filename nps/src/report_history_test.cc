// The report against a history written down in advance: a pool of two
// nodes driven through known jobs, known retreats, an owner block and a
// scheduler switch on the deterministic trellis (a ScriptedPool), the
// evaluator's records and the jobs' own records handed to build_report, and
// every number the report prints checked against that history.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "piranha/nps/node_types.h"
#include "piranha/nps/program.h"
#include "piranha/nps/report.h"
#include "piranha/trellis/deterministic.h"
#include "scripted_pool.h"

namespace piranha::nps {
namespace {

using json = nlohmann::json;
using testing::ScriptedPool;

constexpr const char* kProgram = R"(program: history
nodes:
  - {name: enabler, type: enabler}
  - {name: jobs, type: jobs, inferiors: [enabler]}
  - {name: m1, type: monitor, inferiors: [enabler], params: {node: ws01}}
  - {name: m2, type: monitor, inferiors: [enabler], params: {node: ws02}}
  - {name: s0, type: scheduler, inferiors: [jobs, m1, m2], params: {id: 0, strategy: FCFS}}
  - {name: s1, type: scheduler, inferiors: [jobs, m1, m2], params: {id: 1, strategy: TSK}}
  - {name: evaluator, type: evaluator, inferiors: [jobs, s0, s1, m1, m2],
     params: {switch: {among: [1], after_jobs: 1, margin_percent: 10}}}
)";

// The history, in pool seconds:
//   0  job 1 (10 tasks of 1.5 s) arrives; ws01 and ws02 run it
//   1  job 2 (2 tasks of 0.5 s) arrives
//   2  ws02's owner blocks it until 10: job 1's piranha there retreats (owner)
//   3  ws01 gives job 1 up for job 2: job 1's piranha retreats (gives way)
//   4  job 2 ends; ws01 runs job 1 again
//   10 the block ends; ws02 runs job 1 again
//   12 job 1 ends
// The jobs' own records say the same: job 1 did 7 tasks (10.5 s) on ws01
// and 3 (4.5 s) on ws02, with one retreat on each, ws02's for its owner;
// job 2 did its 2 tasks (1 s) on ws01.
struct History {
  ScriptedPool pool;
  trellis::Registry types;
  std::unique_ptr<trellis::DeterministicTrellis> t;
  ReportInput in;

  History() {
    pool.add_node("ws01");
    pool.add_node("ws02");
    add_nps_types(types, Environment{&pool, make_memory()});
    auto program = trellis::parse_program(kProgram, types, "history.yaml");
    check_nps_program(program);
    t = std::make_unique<trellis::DeterministicTrellis>(program, types);
    JobInfo one = testing::job(1, 0, 1.5, 10), two = testing::job(2, 1, 0.5, 2);
    pool.job_list = {one};
    run("ws01", 1);
    run("ws02", 1);
    tick(0);
    pool.job_list.push_back(two);
    tick(1);
    pool.owner_blocks["ws02"] = {{2, 10}};
    pool.status["ws02"] = NodeStatus{"ws02", "owner-blocked", false, std::nullopt, "", false, ""};
    pool.job_list[0].retreats = 1;
    pool.job_list[0].owner_retreats = 1;
    tick(2);
    run("ws01", 2);
    pool.job_list[0].retreats = 2;
    tick(3);
    pool.job_list.erase(pool.job_list.begin() + 1);
    run("ws01", 1);
    tick(4);
    pool.owner_blocks.erase("ws02");
    pool.status["ws02"] = NodeStatus{"ws02", "available", true, std::nullopt, "", false, ""};
    run("ws02", 1);
    tick(10);
    pool.job_list.clear();
    run("ws01", std::nullopt);
    run("ws02", std::nullopt);
    tick(12);

    in.now = 13;
    in.jobs = {{1, "job1", "job.1", 0, sys::JobState::Done}, {2, "job2", "job.2", 1, sys::JobState::Done}};
    in.times = {{1, {1, 0.5, 12}}, {2, {2, 3, 4}}};
    in.work[1] = {{1, "ws01", 7, 10.5, 1, 0}, {1, "ws02", 3, 4.5, 1, 1}};
    in.work[2] = {{2, "ws01", 2, 1.0, 0, 0}};
    for (const auto& k : pool.kept) in.records.push_back({k.kind, k.time, k.json});
    in.current = {{"ws01", "available", std::nullopt}, {"ws02", "available", std::nullopt}};
  }
  void run(const std::string& node, std::optional<JobId> job) { pool.status[node].running = job; }
  void tick(double now) {
    pool.clock = now;
    t->probe("enabler");
    t->run();
  }
  std::vector<json> kept(const std::string& kind) const {
    std::vector<json> out;
    for (const auto& r : pool.kept)
      if (r.kind == kind) out.push_back(json::parse(r.json));
    return out;
  }
};

const json& by_id(const json& list, std::int64_t id) {
  for (const auto& j : list)
    if (j["id"] == id) return j;
  FAIL("no entry " << id);
  static const json none;
  return none;
}

std::string row(const std::vector<std::string>& cells) {
  std::string s = "<tr>";
  for (const auto& c : cells) s += "<td>" + c + "</td>";
  return s + "</tr>";
}

TEST_CASE("report: every number it prints agrees with a scripted history") {
  History h;
  const json r = build_report(h.in);
  const std::string page = report_html(r);

  SUBCASE("jobs: turnaround, wait, node-seconds, tasks, nodes and retreats as the history says") {
    const json& one = by_id(r["jobs"], 1);
    CHECK(one["turnaround_seconds"] == 12.0);
    CHECK(one["node_seconds"] == 15.0);
    CHECK(one["tasks"] == 10);
    CHECK(one["retreats"] == 2);
    CHECK(one["owner_retreats"] == 1);
    CHECK(one["gave_way_retreats"] == 1);
    const json& two = by_id(r["jobs"], 2);
    CHECK(two["turnaround_seconds"] == 3.0);
    CHECK(two["retreats"] == 0);
    CHECK(r["observed_mean_turnaround_seconds"] == 7.5);
    CHECK(page.find(row({"1 job1", "done", "12.0", "0.5", "15.0", "10", "ws01, ws02", "2 (1)"})) !=
          std::string::npos);
    CHECK(page.find(row({"2 job2", "done", "3.0", "2.0", "1.0", "2", "ws01", "0 (0)"})) != std::string::npos);
    CHECK(page.find("Observed mean turnaround of the finished jobs: 7.5 s.") != std::string::npos);
  }

  SUBCASE("retreats: the job's count, the nodes', the evaluator's job record and its spans agree") {
    std::map<std::string, json> nodes;
    for (const auto& n : r["nodes"]) nodes[n["name"]] = n;
    CHECK(nodes["ws01"]["retreats"] == 1);
    CHECK(nodes["ws01"]["owner_retreats"] == 0);
    CHECK(nodes["ws02"]["retreats"] == 1);
    CHECK(nodes["ws02"]["owner_retreats"] == 1);
    // The evaluator's record of job 1 counts as the job does.
    json record;
    for (const auto& j : h.kept("job"))
      if (j["id"] == 1) record = j;
    CHECK(record["retreats"] == 2);
    CHECK(record["owner_retreats"] == 1);
    // And the evaluator saw job 1 leave ws02 for its owner and ws01 for another job.
    std::map<std::string, std::string> left;
    for (const auto& g : r["gantt"])
      if (g["retreat"].is_string() && g["job"] == 1) left[g["node"]] = g["retreat"];
    CHECK(left == std::map<std::string, std::string>{{"ws01", "scheduler"}, {"ws02", "owner"}});
  }

  SUBCASE("nodes: availability and availability periods from the owner block") {
    std::map<std::string, json> nodes;
    for (const auto& n : r["nodes"]) nodes[n["name"]] = n;
    // Seen from 0 to 13; ws02 owner-blocked from 2 to 10.
    CHECK(nodes["ws01"]["observed_seconds"] == 13.0);
    CHECK(nodes["ws01"]["available_fraction"] == 1.0);
    CHECK(nodes["ws01"]["availability_periods"]["count"] == 1);
    CHECK(nodes["ws02"]["available_seconds"] == 5.0);
    CHECK(nodes["ws02"]["availability_periods"]["count"] == 2);
    CHECK(nodes["ws02"]["availability_periods"]["max_seconds"] == 3.0);
    CHECK(page.find("<td>ws02</td><td>38.5</td><td>2</td><td>2.5</td><td>3.0</td>") != std::string::npos);
    bool blocked = false;
    for (const auto& g : r["gantt"])
      blocked |=
          g["node"] == "ws02" && g["state"] == "owner-blocked" && g["start"] == 2.0 && g["end"] == 10.0;
    CHECK(blocked);
  }

  SUBCASE("the switch: from FCFS to TSK when job 2 ended, with its evidence") {
    REQUIRE(r["switches"].size() == 1);
    const json& sw = r["switches"][0];
    CHECK(sw["time"] == 4.0);
    CHECK(sw["from"] == 0);
    CHECK(sw["to"] == 1);
    CHECK(sw["ended_jobs"] == 1);
    CHECK(page.find("<td>0 FCFS</td><td>1 TSK</td><td>1</td>") != std::string::npos);
  }

  SUBCASE("observed and replayed over the same jobs; the verdict from those figures") {
    const json& cmp = r["comparison"];
    CHECK(cmp["jobs"] == json::array({1, 2}));
    CHECK(cmp["left_out"].empty());
    CHECK(cmp["observed_mean_seconds"] == 7.5);
    // Each scheduler's figure is the mean of its latest estimate's jobs,
    // and that estimate's own mean is the same figure (the same jobs).
    std::map<std::int64_t, json> latest;
    for (const auto& e : h.kept("estimate")) latest[e["scheduler"]] = e;
    REQUIRE(latest.size() == 2);
    for (const auto& s : r["schedulers"]) {
      const json& e = latest[s["id"]];
      const double mean = (e["jobs"]["1"].get<double>() + e["jobs"]["2"].get<double>()) / 2;
      CHECK(s["same_jobs_mean_turnaround_seconds"].get<double>() == doctest::Approx(mean));
      CHECK(s["estimated_mean_turnaround_seconds"].get<double>() == doctest::Approx(mean));
      CHECK(e["ended_jobs"] == 2);
    }
    // After the switch scheduler 1 (TSK) is the obeyed one.
    CHECK(by_id(r["schedulers"], 1)["obeyed"] == true);
    // The replay was given job 1's work in whole steps of 1 s: its 10 tasks
    // of 1.5 s as 10 of 2 s.
    const json& one = cmp["per_job"][0];
    CHECK(one["replay_work_seconds"] == 20.0);
    CHECK(one["task_seconds"] == 15.0);
    CHECK(one["observed_seconds"] == 12.0);
    CHECK(one["replayed_seconds"] == latest[1]["jobs"]["1"]);
    CHECK(cmp["basis"].get<std::string>().find("over the same 2 jobs") != std::string::npos);
    // The explanation's numbers are the table's: 20 + 1 s of work against 15 + 1 s of tasks.
    const std::string why = cmp["explanation"];
    CHECK(why.find("21.0 s of work where their tasks took 16.0 s") != std::string::npos);
    char worst[80];
    std::snprintf(worst, sizeof worst, "job 1 (12.0 s observed, %.1f s replayed)",
                  one["replayed_seconds"].get<double>());
    CHECK(why.find(worst) != std::string::npos);
    CHECK(page.find(why) != std::string::npos);
    const double tsk = by_id(r["schedulers"], 1)["same_jobs_mean_turnaround_seconds"];
    const double fcfs = by_id(r["schedulers"], 0)["same_jobs_mean_turnaround_seconds"];
    const std::string verdict = r["verdict"];
    char numbers[64];
    std::snprintf(numbers, sizeof numbers, "%.1f s against %.1f s", tsk, fcfs);
    if (tsk < fcfs - 0.05)
      CHECK(verdict.find("The obeyed scheduler 1 (TSK) served this pool best") == 0);
    else
      CHECK(verdict.find("A tie") == 0);
    if (tsk < fcfs - 0.05) CHECK(verdict.find(numbers) != std::string::npos);
    CHECK(page.find(verdict.substr(0, 40)) != std::string::npos);
  }
}

}  // namespace
}  // namespace piranha::nps
