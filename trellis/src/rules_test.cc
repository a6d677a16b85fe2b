// The propagation rules, checked in deterministic mode: one thread, a manual
// clock, the order of recalculations recorded.
#include <random>
#include <stdexcept>
#include <string>

#include "piranha/trellis/deterministic.h"
#include "piranha/trellis/standard_types.h"
#include "test_util.h"

namespace piranha::trellis {
namespace {

using std::chrono::milliseconds;

// Changes state at every recalculation, whatever the cause.
class Tick : public Node {
 public:
  explicit Tick(const Params&) {}
  Value calculate(Context& ctx) override { return (ctx.state().is_int() ? ctx.state().as_int() : 0) + 1; }
};

// On a probe, queries every inferior; its state is the sum of theirs.
class Asker : public Node {
 public:
  explicit Asker(const Params&) {}
  Value calculate(Context& ctx) override {
    if (ctx.activated_by(Cause::Probe))
      for (std::size_t i = 0; i < ctx.inferior_count(); ++i) ctx.query(i);
    std::int64_t s = 0;
    for (std::size_t i = 0; i < ctx.inferior_count(); ++i)
      if (ctx.inferior(i).is_int()) s += ctx.inferior(i).as_int();
    return s;
  }
};

// Commands its inferiors at every recalculation: with Tick below it, the
// two chase each other for ever.
class Nag : public Node {
 public:
  explicit Nag(const Params&) {}
  Value calculate(Context& ctx) override {
    ctx.command_all(1);
    return ctx.inferior(0);
  }
};

// Takes params.ms of (manual) time per recalculation; state = the sum of its
// inferiors + 1 so every recalculation changes it.
class Slow : public Node {
 public:
  Slow(const Params& p, ManualClock& clock) : ms_(p.integer("ms")), clock_(clock) {}
  Value calculate(Context& ctx) override {
    clock_.advance(milliseconds(ms_));
    return (ctx.state().is_int() ? ctx.state().as_int() : 0) + 1;
  }

 private:
  std::int64_t ms_;
  ManualClock& clock_;
};

class Throws : public Node {
 public:
  explicit Throws(const Params&) {}
  Value calculate(Context&) override { throw std::runtime_error("broken sensor"); }
};

// Knows whether its superior can still hear it.
class Orphan : public Node {
 public:
  explicit Orphan(const Params&) {}
  Value calculate(Context& ctx) override {
    return ctx.superior_count() && ctx.superior_link(0) == LinkState::Up ? "led" : "orphaned";
  }
};

// Its state: each superior's name and whether the link to it is "up" or "down".
class Followers : public Node {
 public:
  explicit Followers(const Params&) {}
  Value calculate(Context& ctx) override {
    Value::Map links;
    for (std::size_t i = 0; i < ctx.superior_count(); ++i)
      links[ctx.superior_name(i)] = ctx.superior_link(i) == LinkState::Up ? "up" : "down";
    return links;
  }
};

// Its state: its inferiors' states, in the order of its inferiors.
class Mirror : public Node {
 public:
  explicit Mirror(const Params&) {}
  Value calculate(Context& ctx) override {
    Value::List seen;
    for (std::size_t i = 0; i < ctx.inferior_count(); ++i) seen.push_back(ctx.inferior(i));
    return seen;
  }
};

struct Fixture {
  ManualClock clock;
  Registry types;
  Fixture() {
    add_standard_types(types);
    types.add<Tick>("tick");
    types.add<Asker>("asker");
    types.add<Nag>("nag");
    types.add<Throws>("throws");
    types.add<Orphan>("orphan");
    types.add<Followers>("followers");
    types.add<Mirror>("mirror");
    types.add("slow", [this](const Params& p) { return std::make_unique<Slow>(p, clock); });
  }
  Program program(const std::string& yaml) { return parse_program(yaml, types, "test.yaml"); }
};

std::vector<std::string> order(const DeterministicTrellis& t) {
  std::vector<std::string> names;
  for (const auto& s : t.steps()) names.push_back(s.node);
  return names;
}

// root(sum) <- mid(sum) <- {leaf1, leaf2}(counter); root <- other(counter)
const char* kTree = R"(nodes:
  - {name: root, type: sum, inferiors: [mid, other]}
  - {name: mid, type: sum, inferiors: [leaf1, leaf2]}
  - {name: leaf1, type: counter}
  - {name: leaf2, type: counter}
  - {name: other, type: counter}
)";

using V = std::vector<std::string>;

}  // namespace

TEST_CASE_FIXTURE(Fixture,
                  "trellis: a probe recalculates the node and a change wakes its superiors up to the top") {
  DeterministicTrellis t(program(kTree), types, &clock);
  t.probe("leaf1");
  CHECK(t.run() == 3);
  CHECK(order(t) == V{"leaf1", "mid", "root"});
  CHECK(t.steps()[0].causes == static_cast<unsigned>(Cause::Probe));
  CHECK(t.steps()[1].causes == static_cast<unsigned>(Cause::Inferior));
  CHECK(t.steps()[2].causes == static_cast<unsigned>(Cause::Inferior));
  CHECK(t.state("leaf1") == Value(1));
  CHECK(t.state("mid") == Value(1));
  CHECK(t.state("root") == Value(1));
  // Nodes with no cause never ran: the sibling and the other branch.
  CHECK(t.state("leaf2").is_null());
  CHECK(t.state("other").is_null());
}

TEST_CASE_FIXTURE(Fixture, "trellis: nothing runs without an activation") {
  DeterministicTrellis t(program(kTree), types, &clock);
  CHECK(t.run() == 0);
  t.advance(std::chrono::seconds(10));
  CHECK(t.steps().empty());
}

TEST_CASE_FIXTURE(Fixture, "trellis: an unchanged state does not wake superiors") {
  DeterministicTrellis t(program(R"(nodes:
  - {name: top, type: tick, inferiors: [c]}
  - {name: c, type: constant, params: {value: 7}}
)"),
                         types, &clock);
  t.probe("c");
  t.run();
  CHECK(order(t) == V{"c", "top"});
  CHECK(t.state("top") == Value(1));
  t.clear_steps();
  t.probe("c");  // recalculates to 7 again
  CHECK(t.run() == 1);
  CHECK(order(t) == V{"c"});
  CHECK_FALSE(t.steps()[0].changed);
  CHECK(t.state("top") == Value(1));
}

TEST_CASE_FIXTURE(Fixture, "trellis: superiors see their inferiors' latest states") {
  DeterministicTrellis t(program(kTree), types, &clock);
  t.probe("leaf1");
  t.run();
  t.probe("leaf1");
  t.probe("leaf2");
  t.probe("other");
  t.run();
  CHECK(t.state("mid") == Value(2 + 1));
  CHECK(t.state("root") == Value(3 + 1));
}

// A state delivered to a superior names its place among the superior's
// inferiors, found once when the trellis is built rather than looked up at
// every delivery: on random programs, after random probes, every superior
// sees each inferior's latest state in its place.
TEST_CASE_FIXTURE(Fixture, "trellis: superiors see each inferior's state in its place, on random programs") {
  std::mt19937 rng(29);
  for (int round = 0; round < 20; ++round) {
    const int leaves = 2 + static_cast<int>(rng() % 8), mids = 1 + static_cast<int>(rng() % 4);
    std::string yaml = "nodes:\n";
    std::vector<std::pair<std::string, std::vector<std::string>>> mirrors;
    std::vector<std::string> below;
    for (int l = 0; l < leaves; ++l) {
      below.push_back("leaf" + std::to_string(l));
      yaml += "  - {name: leaf" + std::to_string(l) + ", type: counter}\n";
    }
    for (int m = 0; m <= mids; ++m) {
      const std::string name = m == mids ? "top" : "mid" + std::to_string(m);
      std::vector<std::string> inferiors;
      for (const auto& b : below)
        if (rng() % 2) inferiors.push_back(b);
      if (inferiors.empty()) inferiors.push_back(below.front());
      std::shuffle(inferiors.begin(), inferiors.end(), rng);
      std::string list;
      for (const auto& i : inferiors) list += (list.empty() ? "" : ", ") + i;
      yaml += "  - {name: " + name + ", type: mirror, inferiors: [" + list + "]}\n";
      mirrors.emplace_back(name, inferiors);
      below.push_back(name);
    }
    DeterministicTrellis t(program(yaml), types, &clock);
    for (const auto& m : mirrors) t.probe(m.first);  // each has a state from the start
    for (int probe = 0; probe < 30; ++probe) {
      for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k)
        t.probe("leaf" + std::to_string(rng() % static_cast<unsigned>(leaves)));
      t.run();
      for (const auto& [name, inferiors] : mirrors) {
        Value::List expected;
        for (const auto& i : inferiors) expected.push_back(t.state(i));
        REQUIRE(t.state(name) == Value(std::move(expected)));
      }
    }
  }
}

TEST_CASE_FIXTURE(Fixture,
                  "trellis: activations that arrive together make one recalculation, in FIFO order") {
  DeterministicTrellis t(program(kTree), types, &clock);
  t.probe("leaf1");
  t.probe("leaf2");
  t.probe("other");
  t.run();
  // mid is woken by both leaves before it runs, and runs once; root is
  // woken by other, and by mid before its turn comes: it too runs once.
  CHECK(order(t) == V{"leaf1", "leaf2", "other", "mid", "root"});
  CHECK(t.state("root") == Value(3));
}

TEST_CASE_FIXTURE(Fixture,
                  "trellis: a query makes the inferior recalculate, and its answer is a state change") {
  DeterministicTrellis t(program(R"(nodes:
  - {name: boss, type: asker, inferiors: [t1, k]}
  - {name: t1, type: tick}
  - {name: k, type: constant, params: {value: 5}}
)"),
                         types, &clock);
  t.probe("boss");
  t.run();
  // boss queries both; t1 changes (wakes boss), k changes from null to 5 (wakes boss).
  CHECK(order(t) == V{"boss", "t1", "k", "boss"});
  CHECK(t.steps()[1].causes == static_cast<unsigned>(Cause::Query));
  CHECK(t.steps()[3].causes == static_cast<unsigned>(Cause::Inferior));
  CHECK(t.state("boss") == Value(6));
  t.clear_steps();
  t.probe("boss");
  t.run();
  // This time k's answer is unchanged and does not wake boss; t1's does.
  CHECK(order(t) == V{"boss", "t1", "k", "boss"});
  CHECK(t.state("boss") == Value(7));
}

TEST_CASE_FIXTURE(Fixture, "trellis: commands flow down with their data and activate the inferior") {
  DeterministicTrellis t(program(R"(nodes:
  - {name: bus, type: relay, inferiors: [a, b]}
  - {name: a, type: counter}
  - {name: b, type: relay, inferiors: [c]}
  - {name: c, type: counter}
)"),
                         types, &clock);
  t.command("bus", 42);
  t.run();
  CHECK(t.state("bus") == Value(42));
  CHECK(t.state("a") == Value(42));
  CHECK(t.state("c") == Value(42));
  auto got = t.commands_received("c");
  REQUIRE(got.size() == 1);
  CHECK(got[0].from == "b");
  CHECK(got[0].data == Value(42));
  CHECK(t.commands_received("bus").at(0).from.empty());  // from the outside
  bool commanded = false;
  for (const auto& s : t.steps())
    if (s.node == "a") commanded = s.has(Cause::Command);
  CHECK(commanded);
  SUBCASE("arbitrary data crosses intact") {
    Value data = Value::Map{{"throttle", true}, {"hosts", Value::List{"x", 1.5}}};
    t.command("bus", data);
    t.run();
    CHECK(t.commands_received("a").back().data == data);
  }
  SUBCASE("not kept while not recorded, still delivered") {
    t.record_commands(false);
    t.command("bus", 7);
    t.run();
    CHECK(t.state("c") == Value(7));
    CHECK(t.commands_received("c").size() == 1);
  }
}

TEST_CASE_FIXTURE(Fixture,
                  "trellis: a sensor-actuator loop settles: the limit commands its counters back to zero") {
  DeterministicTrellis t(program(R"(nodes:
  - {name: lim, type: limit, inferiors: [c1, c2], params: {limit: 3}}
  - {name: c1, type: counter}
  - {name: c2, type: counter}
)"),
                         types, &clock);
  t.probe("c1");
  t.probe("c1");  // arrives with the first probe: one recalculation, one step
  t.probe("c2");
  t.run();
  CHECK(t.state("c1") == Value(1));
  CHECK(t.state("lim") == Value(2));
  t.probe("c1");
  t.run();
  CHECK(t.state("c1") == Value(0));
  CHECK(t.state("c2") == Value(0));
  CHECK(t.state("lim") == Value(0));
}

TEST_CASE_FIXTURE(Fixture, "trellis: a trellis that never settles is stopped") {
  DeterministicTrellis t(
      program("nodes:\n  - {name: n, type: nag, inferiors: [k]}\n  - {name: k, type: tick}\n"), types,
      &clock);
  t.probe("n");
  CHECK_THROWS_AS(t.run(100), std::runtime_error);
}

TEST_CASE_FIXTURE(Fixture, "trellis: a link going down is reported to the node as a state of the link") {
  DeterministicTrellis t(program(R"(nodes:
  - {name: w, type: watch, inferiors: [a, b]}
  - {name: a, type: counter}
  - {name: b, type: counter}
)"),
                         types, &clock);
  t.probe("a");
  t.probe("b");
  t.run();
  CHECK(t.state("w") == Value(Value::Map{{"a", 1}, {"b", 1}}));
  t.clear_steps();
  t.set_link("w", "b", LinkState::Down);
  t.run();
  REQUIRE(t.steps().size() == 1);
  CHECK(t.steps()[0].causes == static_cast<unsigned>(Cause::Link));
  CHECK(t.state("w") == Value(Value::Map{{"a", 1}, {"b", "down"}}));
  t.set_link("w", "b", LinkState::Down);  // already known: no activation
  CHECK(t.run() == 0);
  t.set_link("w", "b", LinkState::Up);
  t.run();
  CHECK(t.state("w") == Value(Value::Map{{"a", 1}, {"b", 1}}));
}

TEST_CASE_FIXTURE(Fixture, "trellis: a lost superior is reported to its inferior as a state of the link") {
  DeterministicTrellis t(
      program("nodes:\n  - {name: boss, type: sum, inferiors: [o]}\n  - {name: o, type: orphan}\n"), types,
      &clock);
  t.probe("o");
  t.run();
  CHECK(t.state("o") == Value("led"));
  t.clear_steps();
  t.set_link("o", "boss", LinkState::Down);
  t.run();
  REQUIRE_FALSE(t.steps().empty());
  CHECK(t.steps()[0].node == "o");
  CHECK(t.steps()[0].causes == static_cast<unsigned>(Cause::Link));
  CHECK(t.state("o") == Value("orphaned"));
}

TEST_CASE_FIXTURE(Fixture, "trellis: a link state names the superior it is about, among several") {
  DeterministicTrellis t(program(R"(nodes:
  - {name: a, type: sum, inferiors: [o]}
  - {name: b, type: sum, inferiors: [o]}
  - {name: c, type: sum, inferiors: [o]}
  - {name: o, type: followers}
)"),
                         types, &clock);
  t.probe("o");
  t.run();
  CHECK(t.state("o") == Value(Value::Map{{"a", "up"}, {"b", "up"}, {"c", "up"}}));
  t.set_link("o", "c", LinkState::Down);
  t.run();
  CHECK(t.state("o") == Value(Value::Map{{"a", "up"}, {"b", "up"}, {"c", "down"}}));
  t.set_link("o", "b", LinkState::Down);
  t.set_link("o", "c", LinkState::Up);
  t.run();
  CHECK(t.state("o") == Value(Value::Map{{"a", "up"}, {"b", "down"}, {"c", "up"}}));
}

TEST_CASE_FIXTURE(Fixture,
                  "trellis: recalculation times are measured and a late probe is reported as a miss") {
  const char* chain = R"(deadline_ms: 5
nodes:
  - {name: top, type: slow, inferiors: [mid], params: {ms: 1}}
  - {name: mid, type: slow, inferiors: [leaf], params: {ms: 3}}
  - {name: leaf, type: slow, params: {ms: 2}}
)";
  DeterministicTrellis t(program(chain), types, &clock);
  t.probe("mid");  // 3 + 1 = 4 ms: within the deadline
  t.run();
  CHECK(t.report().misses == 0);
  t.probe("leaf");  // 2 + 3 + 1 = 6 ms: late
  t.run();
  Report r = t.report();
  CHECK(r.misses == 1);
  REQUIRE(r.recent_misses.size() == 1);
  CHECK(r.recent_misses[0].top == "top");
  CHECK(r.recent_misses[0].origin == "leaf");
  CHECK(r.recent_misses[0].latency == milliseconds(6));
  CHECK(r.recent_misses[0].deadline == milliseconds(5));
  const NodeStats& top = r.nodes[0];
  CHECK(top.name == "top");
  CHECK(top.probe_to_top.count == 2);
  CHECK(top.probe_to_top.max == milliseconds(6));
  const NodeStats& mid = r.nodes[1];
  CHECK(mid.calculation.count == 2);
  CHECK(mid.calculation.max == milliseconds(3));
  CHECK(mid.calculation.mean() == milliseconds(3));
}

TEST_CASE_FIXTURE(Fixture, "trellis: the oldest probe among merged activations is the one timed") {
  DeterministicTrellis t(program(R"(deadline_ms: 1
nodes:
  - {name: top, type: sum, inferiors: [a, b]}
  - {name: a, type: counter}
  - {name: b, type: counter}
)"),
                         types, &clock);
  t.probe("a");
  clock.advance(milliseconds(3));
  t.probe("b");
  t.run();
  Report r = t.report();
  CHECK(r.misses == 1);
  CHECK(r.recent_misses.at(0).origin == "a");
  CHECK(r.recent_misses.at(0).latency == milliseconds(3));
}

TEST_CASE_FIXTURE(Fixture, "trellis: periodic probes fire on the manual clock") {
  DeterministicTrellis t(program(R"(nodes:
  - {name: top, type: sum, inferiors: [fast, slow]}
  - {name: fast, type: counter, probe_every_ms: 100}
  - {name: slow, type: counter, probe_every_ms: 250}
)"),
                         types, &clock);
  t.advance(milliseconds(99));
  CHECK(t.steps().empty());
  t.advance(milliseconds(901));
  CHECK(t.state("fast") == Value(10));
  CHECK(t.state("slow") == Value(4));
  CHECK(t.state("top") == Value(14));
}

TEST_CASE_FIXTURE(Fixture, "trellis: a node that throws keeps its state and the error is counted") {
  DeterministicTrellis t(
      program("nodes:\n  - {name: top, type: tick, inferiors: [x]}\n  - {name: x, type: throws}\n"), types,
      &clock);
  t.probe("x");
  CHECK(t.run() == 1);
  CHECK(t.state("x").is_null());
  CHECK(t.report().nodes[1].errors == 1);
}

TEST_CASE_FIXTURE(Fixture, "trellis: unknown nodes are rejected by name") {
  DeterministicTrellis t(program(kTree), types, &clock);
  CHECK_THROWS_AS(t.probe("nobody"), std::out_of_range);
  CHECK_THROWS_AS(t.state("nobody"), std::out_of_range);
}

}  // namespace piranha::trellis
