// build_report and report_html (report.h) on hand-made system-space records.
#include "piranha/nps/report.h"

#include <doctest/doctest.h>

namespace piranha::nps {
namespace {

using json = nlohmann::json;

sys::EvalRecord rec(const std::string& kind, double time, const json& j) {
  return {kind, time, j.dump()};
}

ReportInput pool_with_two_jobs() {
  ReportInput in;
  in.now = 1000;
  in.jobs = {{1, "cmatrix", "job.1", 100, sys::JobState::Done},
             {2, "spin", "job.2", 110, sys::JobState::Done}};
  in.times = {{1, {1, 105, 300}}, {2, {2, 112, 200}}};
  in.work[1] = {{1, "ws01", 40, 150, 1, 1}, {1, "ws02", 10, 30, 0, 0}};
  in.work[2] = {{2, "ws02", 5, 80, 0}};
  in.records = {
      rec("span", 150,
          {{"node", "ws01"},
           {"state", "available"},
           {"available", true},
           {"job", 1},
           {"start", 100},
           {"end", 150}}),
      rec("span", 160,
          {{"node", "ws01"},
           {"state", "unavailable"},
           {"available", false},
           {"job", 1},
           {"start", 150},
           {"end", 160},
           {"retreat", "owner"}}),
      rec("span", 300,
          {{"node", "ws01"},
           {"state", "available"},
           {"available", true},
           {"job", nullptr},
           {"start", 160},
           {"end", 300}}),
      rec("span", 200,
          {{"node", "ws02"},
           {"state", "available"},
           {"available", true},
           {"job", 2},
           {"start", 100},
           {"end", 200}}),
      rec("decision", 101, {{"scheduler", 0}, {"strategy", "TSK"}, {"node", "ws01"}, {"job", 1}}),
      rec("estimate", 300,
          {{"scheduler", 0}, {"strategy", "TSK"}, {"obeyed", true}, {"estimate", 150.0}, {"ended_jobs", 2}}),
      rec("estimate", 300,
          {{"scheduler", 1}, {"strategy", "SRT"}, {"obeyed", false}, {"estimate", 120.0}, {"ended_jobs", 2}}),
      rec("junk", 300, {}),
  };
  in.records.push_back({"span", 301, "not json"});
  in.complaints = {{"ws01", 155, "my editor froze <again>"}};
  return in;
}

TEST_CASE("report: jobs, schedulers with a verdict, nodes with APs, complaints beside what ran, a Gantt") {
  const json r = build_report(pool_with_two_jobs());
  CHECK(r["empty"] == false);
  REQUIRE(r["jobs"].size() == 2);
  CHECK(r["jobs"][0]["turnaround_seconds"] == 200.0);
  CHECK(r["jobs"][0]["node_seconds"] == 180.0);
  CHECK(r["jobs"][0]["retreats"] == 1);
  CHECK(r["jobs"][0]["owner_retreats"] == 1);
  CHECK(r["observed_mean_turnaround_seconds"] == 145.0);
  REQUIRE(r["schedulers"].size() == 2);
  CHECK(r["schedulers"][0]["assignment_changes"] == 1);
  CHECK(r["verdict"].get<std::string>().find("Scheduler 1 (SRT) would have served this pool best") == 0);
  REQUIRE(r["nodes"].size() == 2);
  const json& ws01 = r["nodes"][0];
  CHECK(ws01["available_fraction"].get<double>() == doctest::Approx(190.0 / 200));
  CHECK(ws01["availability_periods"]["count"] == 2);
  CHECK(ws01["availability_periods"]["max_seconds"] == 140.0);
  REQUIRE(ws01["complaints"].size() == 1);
  CHECK(ws01["complaints"][0]["job"] == 1);
  CHECK(ws01["complaints"][0]["retreat"]["seconds"] == 10.0);
  CHECK(r["gantt"].size() == 4);
}

TEST_CASE("report: each node's stretch since its last recorded span comes from what its agent shows now") {
  ReportInput in = pool_with_two_jobs();
  in.current = {{"ws01", "owner-blocked", std::nullopt}, {"ws02", "available", 2}, {"ws07", "available", 1}};
  const json r = build_report(in);
  CHECK(r["gantt"].size() == 6);     // ws07 was never seen by the evaluator
  const json& last = r["gantt"][3];  // after ws01's three recorded spans
  CHECK(last["node"] == "ws01");
  CHECK(last["state"] == "owner-blocked");
  CHECK(last["start"] == 300.0);
  CHECK(last["end"] == 1000.0);
  CHECK(last["open"] == true);
  CHECK(r["gantt"][0]["open"] == false);
}

// Two estimates over jobs 1 and 2 with each job's replayed turnaround.
ReportInput with_estimates(const json& obeyed_jobs, const json& shadow_jobs) {
  ReportInput in = pool_with_two_jobs();
  std::erase_if(in.records, [](const sys::EvalRecord& r) { return r.kind == "estimate"; });
  in.records.push_back(rec("estimate", 300,
                           {{"scheduler", 0},
                            {"strategy", "SRT"},
                            {"obeyed", true},
                            {"estimate", 0.0},
                            {"ended_jobs", 2},
                            {"jobs", obeyed_jobs},
                            {"work", {{"1", 180.0}, {"2", 80.0}}}}));
  in.records.push_back(rec("estimate", 300,
                           {{"scheduler", 1},
                            {"strategy", "TSK"},
                            {"obeyed", false},
                            {"estimate", 0.0},
                            {"ended_jobs", 2},
                            {"jobs", shadow_jobs}}));
  return in;
}

TEST_CASE("report: a tie is called a tie, and says why neither wins") {
  const json r = build_report(with_estimates({{"1", 210.0}, {"2", 95.0}}, {{"1", 210.0}, {"2", 95.0}}));
  const std::string v = r["verdict"];
  CHECK(v.find("A tie: the obeyed scheduler 0 (SRT) and scheduler 1 (TSK) have the same mean turnaround, "
               "152.5 s") == 0);
  CHECK(v.find("Every job finishes at the same time under both") != std::string::npos);
  // Different jobs evening out are a tie too, with the jobs named.
  const std::string even =
      build_report(with_estimates({{"1", 200.0}, {"2", 105.0}}, {{"1", 210.0}, {"2", 95.0}}))["verdict"];
  CHECK(even.find("A tie") == 0);
  CHECK(even.find("job 1 (200.0 s obeyed, 210.0 s under TSK) and job 2 (105.0 s obeyed, 95.0 s under TSK)") !=
        std::string::npos);
}

TEST_CASE(
    "report: the winner is named with the jobs that make the difference, over the same jobs as observed") {
  const json r = build_report(with_estimates({{"1", 260.0}, {"2", 100.0}}, {{"1", 200.0}, {"2", 98.0}}));
  const std::string v = r["verdict"];
  CHECK(v.find("Scheduler 1 (TSK) would have served this pool best") == 0);
  CHECK(v.find("149.0 s against 180.0 s") != std::string::npos);
  CHECK(v.find("The jobs that make the difference: job 1 (260.0 s obeyed, 200.0 s under TSK) and job 2") !=
        std::string::npos);
  CHECK(v.find("nps run --strategy TSK") != std::string::npos);
  const json& c = r["comparison"];
  CHECK(c["jobs"] == json::array({1, 2}));
  CHECK(c["observed_mean_seconds"] == 145.0);
  CHECK(c["replayed_mean_seconds"] == 180.0);
  // The replay gave job 1 180 s and job 2 80 s of work, as their tasks took
  // (150 + 30 and 80 s): the difference is put down to timing.
  CHECK(c["explanation"].get<std::string>().find(
            "about the work their tasks took (260.0 s against 260.0 s)") != std::string::npos);
}

TEST_CASE("report: a finished job the estimates did not replay is left out of both sides, with the reason") {
  ReportInput in = with_estimates({{"1", 260.0}}, {{"1", 200.0}});
  const json r = build_report(in);
  const json& c = r["comparison"];
  CHECK(c["jobs"] == json::array({1}));
  REQUIRE(c["left_out"].size() == 1);
  CHECK(c["left_out"][0]["id"] == 2);
  CHECK(c["left_out"][0]["why"].get<std::string>().find("the evaluator did not replay it") == 0);
  CHECK(c["observed_mean_seconds"] == 200.0);             // job 1 only
  CHECK(r["observed_mean_turnaround_seconds"] == 145.0);  // every finished job
  CHECK(c["basis"].get<std::string>().find("same 1 job:") != std::string::npos);
  CHECK(report_html(r).find("Finished jobs not in the comparison") != std::string::npos);
}

TEST_CASE("report: --since clips spans and leaves out older jobs and records") {
  ReportInput in = pool_with_two_jobs();
  in.since = 250;
  const json r = build_report(in);
  CHECK(r["jobs"].size() == 1);  // job 1 ended at 300
  REQUIRE(r["gantt"].size() == 1);
  CHECK(r["gantt"][0]["start"] == 250.0);
  CHECK(r["nodes"][0]["complaints"].empty());
}

TEST_CASE("report: an empty period says so, in JSON and in HTML") {
  ReportInput in;
  in.now = 5000;
  in.since = 4000;
  const json r = build_report(in);
  CHECK(r["empty"] == true);
  CHECK(r["message"].get<std::string>().find("nothing was recorded") == 0);
  CHECK(report_html(r).find("Nothing was recorded in this period") != std::string::npos);
}

TEST_CASE("report HTML: a report saved before retreats had causes shows each job's count alone") {
  json r = build_report(pool_with_two_jobs());
  for (auto& j : r["jobs"]) {
    j["piranha_retreats"] = j["retreats"].get<std::int64_t>() + 6;
    j.erase("retreats");
  }
  r.erase("comparison");
  const std::string page = report_html(r);
  CHECK(page.find("<td>ws01, ws02</td><td>7</td>") != std::string::npos);
}

TEST_CASE("report HTML: self-contained, escaped, with units on the Gantt's axis") {
  const std::string page = report_html(build_report(pool_with_two_jobs()));
  CHECK(page.find("<script") == std::string::npos);
  CHECK(page.find("http://") == page.find("http://www.w3.org/2000/svg"));  // no link but the SVG namespace
  CHECK(page.find("my editor froze &lt;again&gt;") != std::string::npos);
  CHECK(page.find("Which job ran on which node") != std::string::npos);
  CHECK(page.find("(s)</text>") != std::string::npos);
  CHECK(page.find("job 2") != std::string::npos);
  CHECK(page.find("would have served this pool best") != std::string::npos);
}

}  // namespace
}  // namespace piranha::nps
