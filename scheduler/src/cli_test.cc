// The scheduler's commands run as a user runs them: build/bin/piranha.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_run.h"

namespace fs = std::filesystem;

namespace {

using cli_run::lines;
using cli_run::piranha;
using cli_run::write;

std::string example_trace() {
  std::string t = "# piranha availability trace v1\n# length: 600\nnode,start,end\n";
  for (int s = 0; s < 200; s += 2) t += "n," + std::to_string(s) + "," + std::to_string(s + 1) + "\n";
  return t + "n,200,600\n";
}

}  // namespace

TEST_CASE("sim piranha --json: the worked example's completions in the spec's shape") {
  auto trace = write("ex.avail.csv", example_trace());
  auto jobs = write("ex.jobs.csv", "id,arrival,task_time,tasks\n1,0,1,100\n2,0,2,20\n");
  auto r = piranha("sim piranha --trace " + trace.string() + " --jobs-file " + jobs.string() +
                   " --strategies SRT,tsk --period 10 --json");
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["results"].size() == 2);
  CHECK(j["results"][0]["strategy"] == "SRT");
  CHECK(j["results"][0]["seed"] == 0);
  CHECK(j["results"][0]["mean_turnaround"] == 290.0);
  CHECK(j["results"][0]["jobs"][0] == nlohmann::json({{"id", 1}, {"arrival", 0}, {"completion", 340}}));
  CHECK(j["results"][1]["strategy"] == "TSK");
  CHECK(j["results"][1]["mean_turnaround"] == 219.5);
  CHECK(j["summary"]["TSK"]["normalized_turnaround"] == 1.0);
  CHECK(j["summary"]["SRT"]["normalized_turnaround"] == doctest::Approx(290 / 219.5));
}

TEST_CASE("sim piranha: TSK is run for normalization, unfinished jobs are null") {
  auto trace = write("short.avail.csv", "# length: 4\nnode,start,end\nn,0,3\n");
  auto jobs = write("starve.jobs.csv", "id,arrival,task_time,tasks\n1,0,5,1\n");
  auto r = piranha("sim piranha --trace " + trace.string() + " --jobs-file " + jobs.string() +
                   " --strategies FCFS --window 2 --max-steps 50 --json");
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["results"][0]["finished"] == false);
  CHECK(j["results"][0]["jobs"][0]["completion"].is_null());
  CHECK(j["results"][0]["mean_turnaround"] == 50.0);
  CHECK(j["summary"].contains("TSK"));
}

TEST_CASE("sim piranha: a --max-steps before the last arrival is warned of, and the spec's rule kept") {
  auto trace = write("late.avail.csv", "# length: 100\nnode,start,end\nn,0,100\n");
  auto jobs = write("late.jobs.csv", "id,arrival,task_time,tasks\n1,0,1,1\n2,80,1,1\n");
  auto r = piranha("sim piranha --trace " + trace.string() + " --jobs-file " + jobs.string() +
                   " --strategies FCFS --max-steps 50 --json");
  REQUIRE(r.status == 0);
  CHECK(r.err.find("warning: --max-steps 50 stops the runs before the last job arrives (step 80)") !=
        std::string::npos);
  auto j = nlohmann::json::parse(r.out);
  // Job 1 takes a step (turnaround 1), job 2 counts 50 − 80.
  CHECK(j["results"][0]["mean_turnaround"] == doctest::Approx((1.0 + (50 - 80)) / 2));
  // Long enough: no warning.
  r = piranha("sim piranha --trace " + trace.string() + " --jobs-file " + jobs.string() +
              " --strategies FCFS --max-steps 500 --json");
  REQUIRE(r.status == 0);
  CHECK(r.err.find("warning") == std::string::npos);
  // The default, 20 x the trace's length (4 steps here), is checked too.
  auto shorter = write("late4.avail.csv", "# length: 4\nnode,start,end\nn,0,4\n");
  r = piranha("sim piranha --trace " + shorter.string() + " --jobs-file " + jobs.string() +
              " --strategies FCFS --window 2 --json");
  REQUIRE(r.status == 0);
  CHECK(r.err.find(
            "warning: the default --max-steps (20 x the trace's length, 80) stops the runs before the last "
            "job arrives (step 80)") != std::string::npos);
}

TEST_CASE("predict --json: the spec's shape") {
  auto trace = write("p.avail.csv", "# length: 100\nnode,start,end\na,0,10\na,12,100\nb,5,50\n");
  auto r = piranha("predict --trace " + trace.string() +
                   " --window 5 --tolerance 0.2 --predictors REC_HIST,AVAIL --json");
  REQUIRE(r.status == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["window"] == 5);
  CHECK(j["tolerance"] == 0.2);
  CHECK(j["predictors"]["REC_HIST"]["points"] == 2 * 19);
  CHECK(j["predictors"]["AVAIL"]["fraction_matched"].is_number());
}

TEST_CASE("trace synth | stats: a workstation-like trace near 78% available") {
  auto r = piranha(
      "trace synth --nodes 4 --days 7 --seed 3 --out " +
      (fs::temp_directory_path() / ("sched_cli_" + std::to_string(::getpid())) / "s.avail.csv").string());
  REQUIRE(r.status == 0);
  auto s = piranha(
      "trace stats --json --trace " +
      (fs::temp_directory_path() / ("sched_cli_" + std::to_string(::getpid())) / "s.avail.csv").string());
  REQUIRE(s.status == 0);
  auto j = nlohmann::json::parse(s.out);
  CHECK(j["nodes"] == 4);
  CHECK(j["length"] == 7 * 1440);
  CHECK(j["available_fraction"].get<double>() > 0.6);
  CHECK(j["available_fraction"].get<double>() < 0.95);
}

TEST_CASE("trace import: a 0/1 matrix and recorded ap tuples") {
  auto m = write("m.csv", "a,b\n1,0\n1,1\n0,1\n");
  auto r = piranha("trace import --from matrix --input " + m.string());
  REQUIRE(r.status == 0);
  CHECK(r.out.find("a,0,2\nb,1,3\n") != std::string::npos);
  auto ap = write("ap.txt", "(\"ap\", \"ws1\", 1000.0, 1300.0)\n(\"ap\", \"ws2\", 1030.0, 1100.0)\n");
  r = piranha("trace import --from ap --step-seconds 60 --input " + ap.string());
  REQUIRE(r.status == 0);
  CHECK(r.out.find("ws1,0,5\n") != std::string::npos);
}

TEST_CASE("bad input: one line naming the input, exit status 2, nothing written") {
  auto trace = write("ok.avail.csv", "# length: 100\nnode,start,end\na,0,100\n");
  auto jobs = write("ok.jobs.csv", "id,arrival,task_time,tasks\n1,0,1,5\n");
  const auto report = fs::temp_directory_path() / ("sched_cli_" + std::to_string(::getpid())) / "never.html";
  const std::string base = "sim piranha --trace " + trace.string() + " --jobs-file " + jobs.string() +
                           " --report " + report.string() + " --strategies ";
  struct Case {
    std::string args, says;
  };
  const std::vector<Case> cases{
      {base + "BOGUS", "strategy \"BOGUS\": unknown strategy"},
      {base + "'SRTA(1.5)'", "threshold 1.5 is not between 0 and 1"},
      {base + "'ROR(0)'", "quantum 0 must be at least 1"},
      {base + "TSK --window 101", "--window: 101 is longer than the trace (100 steps)"},
      {base + "TSK --period x", "--period \"x\" is not an integer"},
      {base + "TSK --start 100", "--start: 100 is outside the trace (0..99)"},
      {"sim piranha --trace " + write("bad.avail.csv", "# length: 10\nnode,start,end\na,0,11\n").string() +
           " --strategies TSK",
       "bad.avail.csv:3: end 11 is past the trace length 10"},
      {"sim piranha --trace " +
           write("ovl.avail.csv", "# length: 10\nnode,start,end\na,0,5\na,4,8\n").string() +
           " --strategies TSK",
       "ovl.avail.csv:4: period of a overlaps the one on line 3"},
      {"sim piranha --trace " + trace.string() + " --strategies TSK --jobs-file " +
           write("dup.jobs.csv", "id,arrival,task_time,tasks\n1,0,1,1\n1,0,1,1\n").string(),
       "dup.jobs.csv:3: id 1 repeats the one on line 2"},
      {"sim piranha --trace /nonexistent.avail.csv", "/nonexistent.avail.csv: cannot open the trace file"},
      {"predict --trace " + trace.string() + " --window 101",
       "--window: 101 is longer than the trace (100 steps)"},
      {"predict --trace " + trace.string() + " --window 5 --predictors WTW_HIST",
       "--window: the trace (100 steps) is too short for window 5 after a look-back of"},
      {"predict --trace " + trace.string() + " --predictors NOPE", "predictor \"NOPE\": unknown predictor"},
      {"trace import --from matrix --input " + write("bad.csv", "a,b\n1,2\n").string(),
       "bad.csv:2: value \"2\" is neither 0 nor 1"},
  };
  for (const auto& c : cases) {
    INFO(c.args);
    auto r = piranha(c.args);
    CHECK(r.status == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(r.err.rfind("piranha: ", 0) == 0);
    CHECK(r.out.empty());
    CHECK_FALSE(fs::exists(report));
  }
}
