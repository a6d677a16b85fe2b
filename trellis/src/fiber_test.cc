// FiberTrellis: the same rules on fibers and the real clock, and hosts
// linked over ZeroMQ on loopback within one process. Every wait is a poll
// with a generous deadline; nothing asserts how fast anything is.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "piranha/trellis/fiber_trellis.h"
#include "piranha/trellis/standard_types.h"
#include "test_util.h"

namespace piranha::trellis {
namespace {

using namespace std::chrono_literals;

bool eventually(const std::function<bool()>& done, std::chrono::milliseconds limit = 15s) {
  auto end = Clock::now() + limit;
  while (Clock::now() < end) {
    if (done()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return done();
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

FiberOptions on(std::string host, std::function<void(const Event&)> events = {}) {
  FiberOptions o;
  o.host = std::move(host);
  o.on_event = std::move(events);
  return o;
}

Registry standard_registry() {
  Registry r;
  add_standard_types(r);
  return r;
}

}  // namespace

TEST_CASE("FiberTrellis: a probe propagates to the top and a command reaches the leaves") {
  Registry types = standard_registry();
  Program p = parse_program(R"(nodes:
  - {name: top, type: sum, inferiors: [mid1, mid2]}
  - {name: mid1, type: sum, inferiors: [a, b]}
  - {name: mid2, type: sum, inferiors: [c]}
  - {name: a, type: counter}
  - {name: b, type: counter}
  - {name: c, type: counter}
  - {name: bus, type: relay, inferiors: [a, b, c]}
)",
                            types);
  std::atomic<int> events{0};
  FiberTrellis t(p, types, on("", [&](const Event&) { ++events; }));
  t.probe("a");
  CHECK(eventually([&] { return t.state("top") == Value(1); }));
  t.probe("b");
  t.probe("c");
  CHECK(eventually([&] { return t.state("top") == Value(3); }));
  t.command("bus", 10);
  CHECK(eventually([&] { return t.state("top") == Value(30); }));
  CHECK(t.state("a") == Value(10));
  // Several states read together, in the order asked.
  const std::vector<std::string> some = {"top", "a", "mid2"};
  const auto together = t.states(some);
  REQUIRE(together.size() == 3);
  CHECK(together[0] == Value(30));
  CHECK(together[1] == Value(10));
  CHECK(together[2] == Value(10));
  const std::vector<std::string> unknown = {"a", "nowhere"};
  CHECK_THROWS_AS(t.states(unknown), std::out_of_range);
  Report r = t.report();
  REQUIRE(r.nodes.size() == 7);
  CHECK(r.nodes[0].name == "top");
  CHECK(r.nodes[0].probe_to_top.count >= 2);
  CHECK(r.nodes[3].calculation.count >= 2);
  CHECK(events.load() > 0);
  t.stop();
  CHECK(t.report().nodes.size() == 7);  // still readable after stop
}

TEST_CASE("FiberTrellis: periodic probes run on the real clock") {
  Registry types = standard_registry();
  Program p = parse_program("nodes:\n  - {name: c, type: counter, probe_every_ms: 5}\n", types);
  FiberTrellis t(p, types);
  CHECK(eventually([&] { return t.state("c").is_int() && t.state("c").as_int() >= 3; }));
}

TEST_CASE("FiberTrellis: wrong host choices are program errors") {
  Registry types = standard_registry();
  Program hosts = parse_program(
      "hosts: {a: 'tcp://127.0.0.1:1'}\nnodes:\n  - {name: c, type: counter, host: a}\n", types);
  CHECK_THROWS_AS(FiberTrellis(hosts, types), InputError);
  CHECK_THROWS_AS(FiberTrellis(hosts, types, on("b")), InputError);
  Program none = parse_program("nodes:\n  - {name: c, type: counter}\n", types);
  CHECK_THROWS_AS(FiberTrellis(none, types, on("a")), InputError);
  FiberTrellis t(none, types);
  CHECK_THROWS_AS(t.probe("ghost"), std::out_of_range);
}

TEST_CASE("FiberTrellis: two hosts linked over loopback, a lost host is a link state") {
  Registry types = standard_registry();
  std::string yaml =
      "heartbeat_ms: 20\nlink_timeout_ms: 300\nhosts:\n  a: tcp://127.0.0.1:" + std::to_string(free_port()) +
      "\n  b: tcp://127.0.0.1:" + std::to_string(free_port()) +
      R"(
nodes:
  - {name: w, type: watch, host: b, inferiors: [c1, c2]}
  - {name: c1, type: counter, host: a}
  - {name: c2, type: counter, host: b}
  - {name: lim, type: limit, host: b, inferiors: [c1], params: {limit: 3, reset: 0}}
)";
  Program p = parse_program(yaml, types);
  std::vector<std::string> link_events;
  std::mutex m;
  FiberTrellis b(p, types, on("b", [&](const Event& e) {
                   if (e.kind == Event::Kind::Link) {
                     std::lock_guard<std::mutex> lock(m);
                     link_events.push_back(e.other + " " + e.value.as_string());
                   }
                 }));
  auto a = std::make_unique<FiberTrellis>(p, types, on("a"));
  CHECK(eventually([&] { return b.link("a") == LinkState::Up && a->link("b") == LinkState::Up; }));
  a->probe("c1");
  b.probe("c2");
  CHECK(eventually([&] { return b.state("w") == Value(Value::Map{{"c1", 1}, {"c2", 1}}); }));
  // A command crosses back down: lim resets c1 when it reaches 3.
  a->probe("c1");
  CHECK(eventually([&] { return b.state("lim") == Value(2); }));
  a->probe("c1");
  CHECK(eventually([&] { return a->state("c1") == Value(0); }));
  CHECK(eventually([&] { return b.state("lim") == Value(0); }));
  Report r = b.report();
  REQUIRE(r.links.size() == 1);
  CHECK(r.links[0].host == "a");
  CHECK(r.links[0].received > 0);
  CHECK(eventually([&] { return b.report().links[0].round_trip.count > 0; }));

  a.reset();  // host a disappears
  CHECK(eventually([&] { return b.link("a") == LinkState::Down; }));
  CHECK(eventually([&] { return b.state("w")["c1"] == Value("down"); }));
  CHECK(b.state("w")["c2"] == Value(1));
  {
    std::lock_guard<std::mutex> lock(m);
    CHECK(link_events == std::vector<std::string>{"a up", "a down"});
  }
  // It comes back: the link goes up again and superiors resynchronize.
  a = std::make_unique<FiberTrellis>(p, types, on("a"));
  CHECK(eventually([&] { return b.link("a") == LinkState::Up; }));
  a->probe("c1");
  CHECK(eventually([&] { return b.state("w")["c1"] == Value(1); }));
}

}  // namespace piranha::trellis
