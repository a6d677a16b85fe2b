// `piranha sim rigid` run as a user runs it: build/bin/piranha.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "../../src/cli_run.h"

namespace {

using cli_run::lines;
using cli_run::piranha;
using cli_run::write;

// The three jobs of space_sim_test.cc on 4 nodes, in SWF.
std::string three_jobs() {
  return "; MaxNodes: 4\n"
         "1 0 -1 10 2 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
         "2 0 -1 10 4 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n"
         "3 1 -1 5 2 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n";
}

}  // namespace

TEST_CASE("sim rigid --json: the shape of docs/rigid.md and the hand-worked numbers") {
  const auto swf = write("three.swf", three_jobs());
  const auto r = piranha("sim rigid --swf " + swf.string() +
                         " --algorithms fifo,FirstFit,PFCFS3 --estimates exact --json --per-job");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["workload"]["jobs"] == 3);
  CHECK(j["machine"]["sites"][0]["nodes"] == 4);
  CHECK(j["options"]["estimates"] == "exact");
  REQUIRE(j["results"].size() == 3);
  CHECK(j["results"][0]["algorithm"] == "FIFO");
  CHECK(j["results"][0]["makespan"] == 25.0);
  CHECK(j["results"][0]["mean_flow"] == 18.0);
  CHECK(j["results"][0]["max_wait"] == 19.0);
  CHECK(j["results"][0]["mean_delay"].is_null());
  CHECK(j["results"][0]["per_job"][2] ==
        nlohmann::json({{"id", 3}, {"site", 0}, {"start", 20.0}, {"completion", 25.0}}));
  CHECK(j["results"][1]["makespan"] == 20.0);
  CHECK(j["results"][2]["algorithm"] == "PFCFS3(600,0)");
}

TEST_CASE("sim rigid: a table by default, --sites for several sites, --report written whole") {
  const auto swf = write("three.swf", three_jobs());
  const auto html = cli_run::scratch() / "run.html";
  const auto r =
      piranha("sim rigid --swf " + swf.string() +
              " --sites 4,4*2 --algorithms 'Greedy,mr(0,CONS,COMPLETION),MTI' --report " + html.string());
  REQUIRE(r.status == 0);
  CHECK(lines(r.out) == 8);  // a header, three algorithms, then the legend's four lines
  CHECK(r.out.find("MR(all,CONS,COMPLETION,FCFS,LOAD)") != std::string::npos);
  CHECK(r.out.find("\nbsld: mean bounded slowdown") != std::string::npos);
  const auto page = cli_run::slurp(html);
  CHECK(page.find("<svg") != std::string::npos);
  CHECK(page.find("</html>") != std::string::npos);
}

TEST_CASE("sim rigid: the default list on two sites names MR(2) and MR(all) apart") {
  const auto swf = write("three.swf", three_jobs());
  const auto r = piranha("sim rigid --swf " + swf.string() + " --sites 4,4 --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  std::vector<std::string> names;
  for (const auto& x : j["results"]) names.push_back(x["algorithm"]);
  CHECK(names == std::vector<std::string>{"Greedy", "MR(2,EASY,START,FCFS,LOAD)",
                                          "MR(all,EASY,START,FCFS,LOAD)", "MR(all,CONS,COMPLETION,FCFS,LOAD)",
                                          "MR(all,CONS,COMPLETION,EFFICACY,LOAD)", "MTI", "MCT", "MNI"});
}

TEST_CASE("swf synth: the Lublin model's SWF, the same for the same seed, read back by sim rigid") {
  const auto a = piranha("swf synth --jobs 300 --nodes 64 --seed 3");
  const auto b = piranha("swf synth --jobs 300 --nodes 64 --seed 3");
  REQUIRE(a.status == 0);
  CHECK(a.out == b.out);
  CHECK(a.out.find("; MaxNodes: 64\n") != std::string::npos);
  CHECK(lines(a.out) == 306);  // six header lines
  const auto swf = write("synth.swf", a.out);
  const auto r = piranha("sim rigid --swf " + swf.string() + " --algorithms EASY --json");
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["workload"]["jobs"] == 300);
  CHECK(j["machine"]["sites"][0]["nodes"] == 64);
  const auto bad = piranha("swf synth --jobs 0");
  CHECK(bad.status == 2);
  CHECK(lines(bad.err) == 1);
}

TEST_CASE("sim rigid bad input: one line naming the file, line or parameter, exit 2, nothing written") {
  const auto good = write("good.swf", three_jobs());
  const auto bad = write("bad.swf", three_jobs() + "4 3 -1 x 1 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n");
  const auto html = cli_run::scratch() / "never.html";
  struct Case {
    std::string args, says;
  };
  const Case cases[] = {
      {"--swf " + bad.string(), "bad.swf:5: field 4 \"x\" is not an integer"},
      {"--swf " + good.string() + " --nodes 3", "good.swf:3: job 2 needs 4 nodes; the largest site has 3"},
      {"--swf " + good.string() + " --algorithms FIFO,SJF", "algorithm \"SJF\": unknown algorithm"},
      {"--swf " + good.string() + " --algorithms 'PFCFS1(x)'", "wait \"X\" is not a whole number"},
      {"--swf " + good.string() + " --nodes 0", "--nodes 0 must be at least 1"},
      {"--swf " + good.string() + " --sites 4,4 --algorithms EASY",
       "algorithm \"EASY\": schedules one site; --sites gives 2"},
      {"--swf " + good.string() + " --sites 4,zero", "--sites: \"zero\""},
      {"--swf " + good.string() + " --estimates psychic", "--estimates \"psychic\""},
      {"--swf " + good.string() + " --nodes 4 --sites 4", "give --nodes or --sites, not both"},
      {"--swf /nonexistent.swf", "/nonexistent.swf: cannot open"},
      {"--nodes 4", "--swf is required"},
  };
  for (const auto& c : cases) {
    CAPTURE(c.args);
    const auto r = piranha("sim rigid " + c.args + " --report " + html.string());
    CHECK(r.status == 2);
    CHECK(lines(r.err) == 1);
    CHECK(r.err.find(c.says) != std::string::npos);
    CHECK(r.out.empty());
    CHECK_FALSE(std::filesystem::exists(html));
  }
}

TEST_CASE("sim rigid-study: bad input is one line and exit 2") {
  const auto r = piranha("sim rigid-study --report " + (cli_run::scratch() / "study.html").string());
  CHECK(r.status == 2);
  CHECK(r.err == "piranha: sim rigid-study: --swf is required\n");
  const auto wide = write("wide.swf", "1 0 -1 10 300 -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n");
  const auto w = piranha("sim rigid-study --swf " + wide.string() + " --report " +
                         (cli_run::scratch() / "study.html").string());
  CHECK(w.status == 2);
  CHECK(w.err.find("wide.swf:1: job 1 needs 300 nodes; the largest site has 256") != std::string::npos);
  CHECK_FALSE(std::filesystem::exists(cli_run::scratch() / "study.html"));
}

TEST_CASE("sim rigid --help names every option") {
  const auto r = piranha("sim rigid --help");
  CHECK(r.status == 0);
  for (const char* option :
       {"--swf", "--nodes", "--sites", "--algorithms", "--estimates", "--json", "--report"})
    CHECK(r.out.find(option) != std::string::npos);
}
