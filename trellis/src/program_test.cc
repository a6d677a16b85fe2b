#include "piranha/trellis/program.h"

#include <string>

#include "piranha/trellis/registry.h"
#include "piranha/trellis/standard_types.h"
#include "test_util.h"

namespace piranha::trellis {
namespace {

Registry standard() {
  Registry r;
  add_standard_types(r);
  return r;
}

// The InputError that parsing `yaml` throws (fails the test if none).
InputError error_of(const std::string& yaml) {
  try {
    parse_program(yaml, standard(), "test.yaml");
  } catch (const InputError& e) {
    return e;
  }
  FAIL("no error for:\n" << yaml);
  return InputError("", 0, "");
}

}  // namespace

TEST_CASE("trellis: a valid program is read with hosts, params, inferiors and timing") {
  Program p = parse_program(R"(program: demo
deadline_ms: 2.5
heartbeat_ms: 50
link_timeout_ms: 400
hosts:
  a: tcp://127.0.0.1:7301
  b: tcp://127.0.0.1:7302
nodes:
  - name: c1
    type: counter
    host: a
    probe_every_ms: 100
    params: {step: 2}
  - name: top
    type: limit
    host: b
    inferiors: [c1]
    params:
      limit: 10
      reset: "zero"
)",
                            standard(), "demo.yaml");
  CHECK(p.name == "demo");
  REQUIRE(p.deadline);
  CHECK(*p.deadline == std::chrono::microseconds(2500));
  CHECK(p.heartbeat == std::chrono::milliseconds(50));
  CHECK(p.link_timeout == std::chrono::milliseconds(400));
  REQUIRE(p.hosts.size() == 2);
  CHECK(p.hosts[1].endpoint == "tcp://127.0.0.1:7302");
  REQUIRE(p.nodes.size() == 2);
  CHECK(p.nodes[0].params.at("step") == Value(2));
  CHECK(p.nodes[0].probe_every == std::chrono::milliseconds(100));
  CHECK(p.nodes[0].line == 9);
  CHECK(p.nodes[1].inferiors == std::vector<std::string>{"c1"});
  CHECK(p.nodes[1].params.at("reset") == Value("zero"));
  CHECK(p.nodes[1].params.at("limit") == Value(10));
  CHECK(p.node_index("top") == 1);
}

TEST_CASE("trellis: an unknown type is named with its line") {
  InputError e = error_of("nodes:\n  - name: a\n    type: counter\n  - name: b\n    type: countr\n");
  CHECK(e.line() == 4);
  CHECK(e.message().find("unknown type \"countr\"") != std::string::npos);
  CHECK(std::string(e.what()).rfind("test.yaml:4: ", 0) == 0);
}

TEST_CASE("trellis: a missing inferior is named with its line") {
  InputError e = error_of(
      "nodes:\n  - name: a\n    type: sum\n    inferiors:\n      - b\n      - ghost\n"
      "  - name: b\n    type: counter\n");
  CHECK(e.line() == 6);
  CHECK(e.message().find("missing inferior \"ghost\"") != std::string::npos);
}

TEST_CASE("trellis: a duplicate node name is named with both lines") {
  InputError e = error_of("nodes:\n  - name: a\n    type: counter\n  - name: a\n    type: sum\n");
  CHECK(e.line() == 4);
  CHECK(e.message().find("duplicate node name \"a\" (first defined on line 2)") != std::string::npos);
}

TEST_CASE("trellis: a bad parameter is named with the parameter's line") {
  SUBCASE("wrong type") {
    InputError e = error_of("nodes:\n  - name: a\n    type: counter\n    params:\n      step: fast\n");
    CHECK(e.line() == 5);
    CHECK(e.message().find("\"step\" must be an integer") != std::string::npos);
  }
  SUBCASE("missing") {
    InputError e = error_of("nodes:\n  - name: a\n    type: limit\n");
    CHECK(e.line() == 2);
    CHECK(e.message().find("missing parameter \"limit\"") != std::string::npos);
  }
  SUBCASE("unknown (a typo is not a default)") {
    InputError e =
        error_of("nodes:\n  - name: a\n    type: counter\n    params:\n      step: 1\n      stpe: 2\n");
    CHECK(e.line() == 6);
    CHECK(e.message().find("unknown parameter \"stpe\"") != std::string::npos);
  }
}

TEST_CASE("trellis: a cycle is rejected and named") {
  InputError e = error_of(R"(nodes:
  - name: top
    type: sum
    inferiors: [a]
  - name: a
    type: sum
    inferiors: [b]
  - name: b
    type: sum
    inferiors: [c]
  - name: c
    type: sum
    inferiors: [a]
)");
  CHECK(e.message().find("cycle in the inferior graph: a -> b -> c -> a") != std::string::npos);
  CHECK(e.line() == 5);
  SUBCASE("a node that is its own inferior") {
    InputError self = error_of("nodes:\n  - name: me\n    type: sum\n    inferiors: [me]\n");
    CHECK(self.message().find("cycle in the inferior graph: me -> me") != std::string::npos);
  }
}

TEST_CASE("trellis: hosts are checked") {
  SUBCASE("unknown host") {
    InputError e =
        error_of("hosts:\n  a: tcp://127.0.0.1:1\nnodes:\n  - name: x\n    type: counter\n    host: b\n");
    CHECK(e.line() == 4);
    CHECK(e.message().find("unknown host \"b\"") != std::string::npos);
  }
  SUBCASE("host missing when there are hosts") {
    InputError e = error_of("hosts:\n  a: tcp://127.0.0.1:1\nnodes:\n  - name: x\n    type: counter\n");
    CHECK(e.message().find("has no host") != std::string::npos);
  }
  SUBCASE("bad endpoint") {
    InputError e = error_of("hosts:\n  a: localhost\nnodes:\n  - name: x\n    type: counter\n    host: a\n");
    CHECK(e.line() == 2);
  }
}

TEST_CASE("trellis: malformed YAML and unknown keys name the line") {
  InputError bad = error_of("nodes:\n  - name: a\n    type: [counter\n");
  CHECK(bad.message().find("malformed YAML") != std::string::npos);
  CHECK(bad.line() > 0);
  InputError key = error_of("nodes:\n  - name: a\n    type: counter\n    inferrors: [b]\n");
  CHECK(key.line() == 4);
  CHECK(key.message().find("unknown key \"inferrors\"") != std::string::npos);
  InputError none = error_of("program: empty\n");
  CHECK(none.message().find("no \"nodes\"") != std::string::npos);
}

TEST_CASE("trellis: a missing file is a InputError naming it") {
  CHECK_THROWS_WITH_AS(load_program("/nonexistent/trellis.yaml", standard()),
                       "/nonexistent/trellis.yaml: cannot read the program file", InputError);
}

}  // namespace piranha::trellis
