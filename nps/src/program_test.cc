// NPS programs: the standard program and every error `piranha nps check`
// names by line.
#include "piranha/nps/program.h"

#include <doctest/doctest.h>

#include <string>

#include "piranha/nps/node_types.h"

namespace piranha::nps {
namespace {

trellis::Registry types() {
  trellis::Registry r;
  add_detached_nps_types(r);
  return r;
}

// The error checking `yaml` gives ("" when it is fine).
std::string error_of(const std::string& yaml) {
  try {
    auto p = trellis::parse_program(yaml, types(), "p.yaml");
    check_nps_program(p);
    return "";
  } catch (const InputError& e) {
    return e.what();
  }
}

const std::string kHead = R"(program: t
nodes:
  - {name: enabler, type: enabler}
  - {name: jobs, type: jobs, inferiors: [enabler]}
  - {name: m1, type: monitor, inferiors: [enabler], params: {node: ws01}}
)";

TEST_CASE("the standard program is valid and names every node type") {
  StandardOptions o;
  o.nodes = {"ws01", "ws-02.example", "yes"};
  o.strategy = "SRTA(0.5)";
  const std::string yaml = standard_program_yaml(o);
  CHECK(error_of(yaml) == "");
  auto p = standard_program(o, types());
  for (const char* name :
       {"enabler", "jobs", "owner_ws01", "monitor_ws-02.example", "monitor_yes", "scheduler_0", "evaluator"})
    CHECK(p.node_index(name) >= 0);
  CHECK(enabler_name(p) == "enabler");
  CHECK(enabler_period(p) == 1.0);  // min(tick, period)
}

// The standard program is built in code (fast) and printed as YAML (`nps
// init`): both must be one program.
void check_same(const trellis::Program& a, const trellis::Program& b) {
  REQUIRE(a.nodes.size() == b.nodes.size());
  CHECK(a.name == b.name);
  CHECK(a.hosts.empty());
  CHECK(b.hosts.empty());
  for (std::size_t i = 0; i < a.nodes.size(); ++i) {
    CAPTURE(a.nodes[i].name);
    CHECK(a.nodes[i].name == b.nodes[i].name);
    CHECK(a.nodes[i].type == b.nodes[i].type);
    CHECK(a.nodes[i].host == b.nodes[i].host);
    CHECK(a.nodes[i].inferiors == b.nodes[i].inferiors);
    CHECK(trellis::Value(a.nodes[i].params) == trellis::Value(b.nodes[i].params));
    CHECK(a.nodes[i].probe_every == b.nodes[i].probe_every);
  }
  CHECK(a.heartbeat == b.heartbeat);
  CHECK(a.link_timeout == b.link_timeout);
  CHECK(a.deadline.has_value() == b.deadline.has_value());
}

TEST_CASE("the standard program built in code is the one its YAML says") {
  StandardOptions o;
  o.nodes = {"ws01", "ws-02.example", "yes", "1e3", "a\"b"};
  check_same(standard_program(o, types()),
             trellis::parse_program(standard_program_yaml(o), types(), "<standard program>"));
  o.strategy = "TSKMIX(1)";
  o.shadows = {"FCFS", "TSK"};
  o.period = 2.5;
  o.tick = 0.5;
  o.window = 7;
  o.spill = true;
  o.on_events = true;
  o.cold_start = 3;
  o.probe = false;
  o.seed = 42;
  check_same(standard_program(o, types()),
             trellis::parse_program(standard_program_yaml(o), types(), "<standard program>"));
  o.evaluator = false;
  o.shadows.clear();
  check_same(standard_program(o, types()),
             trellis::parse_program(standard_program_yaml(o), types(), "<standard program>"));
}

TEST_CASE("a MIX strategy's monitors predict with MIX") {
  StandardOptions o;
  o.nodes = {"ws01"};
  o.strategy = "TSKMIX(1)";
  CHECK(standard_program_yaml(o).find("predictor: MIX") != std::string::npos);
  CHECK(error_of(standard_program_yaml(o)) == "");
}

TEST_CASE("nps check: each error names the file and line") {
  CHECK(error_of(kHead +
                 "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, strategy: NOPE}}\n")
            .starts_with("p.yaml:6: "));
  CHECK(error_of(kHead +
                 "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, strategy: NOPE}}\n")
            .find("NOPE") != std::string::npos);
  CHECK(error_of(
            kHead +
            "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, strategy: SRTA(1.5)}}\n")
            .starts_with("p.yaml:6: "));
  CHECK(error_of(kHead + "  - {name: s0, type: schedular, inferiors: [jobs, m1], params: {id: 0}}\n")
            .starts_with("p.yaml:6: "));
  CHECK(error_of(kHead + "  - {name: s0, type: scheduler, inferiors: [jobs, m9], params: {id: 0}}\n")
            .starts_with("p.yaml:6: "));
  const std::string twice =
      error_of(kHead +
               "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0}}\n"
               "  - {name: s1, type: scheduler, inferiors: [jobs, m1], params: {id: 0}}\n");
  CHECK(twice.starts_with("p.yaml:7: "));
  CHECK(twice.find("line 6") != std::string::npos);
  const std::string none =
      error_of(kHead + "  - {name: s0, type: scheduler, inferiors: [jobs], params: {id: 0}}\n");
  CHECK(none.starts_with("p.yaml:6: "));
  CHECK(none.find("no monitors") != std::string::npos);
  CHECK(error_of(kHead + "  - {name: s0, type: scheduler, inferiors: [m1], params: {id: 0}}\n")
            .find("no jobs") != std::string::npos);
  CHECK(error_of(kHead +
                 "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, colour: red}}\n")
            .starts_with("p.yaml:6: "));
  const std::string window = error_of(kHead +
                                      "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: "
                                      "0, strategy: LETFIT, window: 20}}\n");
  CHECK(window.starts_with("p.yaml:6: "));
  CHECK(window.find("over 20 steps") != std::string::npos);
  CHECK(error_of(kHead + "  - {name: m2, type: monitor, inferiors: [jobs], params: {node: ws02}}\n"
                         "  - {name: s0, type: scheduler, inferiors: [jobs, m2], params: {id: 0}}\n")
            .starts_with("p.yaml:6: "));
  CHECK(error_of(kHead + "  - {name: m2, type: monitor, inferiors: [enabler], params: {node: ws01}}\n"
                         "  - {name: s0, type: scheduler, inferiors: [jobs, m1, m2], params: {id: 0}}\n")
            .starts_with("p.yaml:6: "));
  // A window that does not matter (TSK reads no prediction) is no error.
  CHECK(error_of(kHead +
                 "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, window: 20}}\n") ==
        "");
}

// The warnings checking `yaml` gives.
std::vector<std::string> warnings_of(const std::string& yaml) {
  return nps_program_warnings(trellis::parse_program(yaml, types(), "p.yaml"));
}

TEST_CASE("nps check: a scheduler with a long period that does not decide on events is warned about") {
  const auto slow = warnings_of(
      kHead + "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, period: 10}}\n");
  REQUIRE(slow.size() == 1);
  CHECK(
      slow[0].starts_with("p.yaml:6: warning: scheduler \"s0\" decides only every 10 s (on_events is off)"));
  CHECK(warnings_of(kHead +
                    "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, period: 10, "
                    "on_events: false}}\n")
            .size() == 1);
  // Deciding on events, or often enough, or by default (a period of 1): nothing to say.
  for (const char* params : {"{id: 0, period: 10, on_events: true}", "{id: 0, period: 5}", "{id: 0}"})
    CHECK(warnings_of(kHead + "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: " + params +
                      "}\n")
              .empty());
  // The standard program (what `nps init` prints) decides on events, as `nps run` does without a file.
  StandardOptions o;
  o.nodes = {"ws01"};
  o.on_events = true;
  o.shadows = {"SRT"};
  CHECK(warnings_of(standard_program_yaml(o)).empty());
  o.on_events = false;
  CHECK(warnings_of(standard_program_yaml(o)).size() == 2);
}

}  // namespace
}  // namespace piranha::nps
