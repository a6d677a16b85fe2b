// Real processes on loopback: `piranha trellis run --host NAME` per host,
// `piranha trellis check`, and a host killed with SIGKILL reported to its
// neighbour as a link state. Waits are polls with generous deadlines.
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "harness.h"
#include "test_util.h"

namespace piranha::trellis {
namespace {

using it::bin;
using it::Process;

// A program file in a private temporary directory, removed at the end.
struct ProgramFile {
  std::string path;
  explicit ProgramFile(const std::string& yaml) {
    char dir[] = "/tmp/piranha-trellis-XXXXXX";
    path = std::string(::mkdtemp(dir)) + "/program.yaml";
    std::ofstream(path) << yaml;
  }
  ~ProgramFile() {
    std::remove(path.c_str());
    ::rmdir(path.substr(0, path.rfind('/')).c_str());
  }
};

std::string two_hosts() {
  return "program: pair\ndeadline_ms: 0.000001\nheartbeat_ms: 20\nlink_timeout_ms: 400\nhosts:\n"
         "  a: tcp://127.0.0.1:" +
         std::to_string(it::free_port()) + "\n  b: tcp://127.0.0.1:" + std::to_string(it::free_port()) + R"(
nodes:
  - {name: w, type: watch, host: b, inferiors: [c1, c2]}
  - {name: lim, type: limit, host: b, inferiors: [c1], params: {limit: 3}}
  - {name: c1, type: counter, host: a, probe_every_ms: 20}
  - {name: c2, type: counter, host: b, probe_every_ms: 20}
)";
}

std::vector<std::string> run_argv(const std::string& file, const std::string& host) {
  return {bin("piranha"), "trellis", "run", file, "--host", host, "--print"};
}

}  // namespace

TEST_CASE("trellis process: trellis check accepts a good program and names the line of a bad one") {
  ProgramFile good(two_hosts());
  Process ok({bin("piranha"), "trellis", "check", good.path});
  CHECK(ok.wait() == 0);
  CHECK(ok.out().find("ok: 4 nodes on 2 hosts") != std::string::npos);
  ProgramFile bad("nodes:\n  - {name: a, type: counter}\n  - {name: b, type: sum, inferiors: [a, ghost]}\n");
  Process no({bin("piranha"), "trellis", "check", bad.path});
  CHECK(no.wait() == 2);  // bad input, as for every command
  CHECK(no.err().find(bad.path + ":3: node \"b\" names a missing inferior \"ghost\"") != std::string::npos);
}

TEST_CASE(
    "trellis process: two hosts in two processes: states go up, commands come down, a killed host is a link "
    "state") {
  ProgramFile program(two_hosts());
  Process b(run_argv(program.path, "b"));
  Process a(run_argv(program.path, "a"));
  INFO("a: " << a.command());
  CHECK(b.wait_for_out("link a up"));
  CHECK(a.wait_for_out("link b up"));
  // c1's state crosses from a to b; lim's command crosses from b to a.
  CHECK(b.wait_for_out("state w {\"c1\":2,"));
  CHECK(a.wait_for_out("command c1 from lim 0"));
  // Every probe misses a 1 ns deadline, and says so.
  CHECK(b.wait_for_out("miss w probe c2 latency_us"));

  a.signal(SIGKILL);
  CHECK(a.wait() == 128 + SIGKILL);
  CHECK(b.wait_for_out("link a down"));
  CHECK(b.wait_for_out("state w {\"c1\":\"down\","));
  CHECK(b.running());  // the neighbour carries on

  // Host a comes back; the link comes back up.
  Process again(run_argv(program.path, "a"));
  CHECK(again.wait_for_out("link b up"));
  CHECK(b.wait_for_out("link a up", std::chrono::milliseconds(15000)));
  CHECK(it::wait_until([&] {
    std::string s = b.out();
    return s.rfind("link a up") > s.find("link a down");
  }));

  b.signal(SIGTERM);
  CHECK(b.wait() == 0);
  CHECK(b.out().find("deadline misses:") != std::string::npos);
  CHECK(b.out().find("host b") != std::string::npos);
}

}  // namespace piranha::trellis
