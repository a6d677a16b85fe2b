// The NPS's live page in a real browser: a pool (a server, two agents
// replaying traces, `piranha nps run --http`), headless Chromium driven
// over its DevTools pipe (--remote-debugging-pipe: JSON messages ending in
// NUL on fds 3 and 4, no WebSocket needed), and a node whose trace turns it
// unavailable while the page is open: the nodes' table and the timeline
// follow it without a reload, and a reload has more of the timeline (from
// /history) and the ended job. Skipped, with a message, without chromium.
// With PIRANHA_SCREENSHOT=FILE the test also saves a PNG of the page.
#include <doctest/doctest.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "harness.h"
#include "piranha/nps/live_page.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/testing/raw_http.h"

using namespace piranha::it;
using piranha::Clock;
using json = nlohmann::json;
namespace sys = piranha::sys;

namespace {

std::string base64_decode(const std::string& in) {
  std::string out;
  int bits = 0, value = 0;
  for (char c : in) {
    int d;
    if (c >= 'A' && c <= 'Z')
      d = c - 'A';
    else if (c >= 'a' && c <= 'z')
      d = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      d = c - '0' + 52;
    else if (c == '+')
      d = 62;
    else if (c == '/')
      d = 63;
    else
      continue;
    value = (value << 6) | d;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((value >> bits) & 0xff));
    }
  }
  return out;
}

// Headless Chromium and one page in it, driven through the DevTools protocol.
class Browser {
 public:
  explicit Browser(const std::string& profile) {
    int to[2], from[2];
    REQUIRE(pipe(to) == 0);
    REQUIRE(pipe(from) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      // The browser reads commands on fd 3 and writes answers on fd 4.
      dup2(to[0], 3);
      dup2(from[1], 4);
      const int null = ::open("/dev/null", O_WRONLY);
      dup2(null, 1);
      dup2(null, 2);
      for (int fd : {to[0], to[1], from[0], from[1], null})
        if (fd > 4) close(fd);
      const std::string dir = "--user-data-dir=" + profile;
      execlp("chromium", "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--disable-dev-shm-usage", "--window-size=1100,900", dir.c_str(),
             "--remote-debugging-pipe", "about:blank", static_cast<char*>(nullptr));
      _exit(127);
    }
    close(to[0]);
    close(from[1]);
    to_ = to[1];
    from_ = from[0];
  }
  ~Browser() {
    close(to_);
    close(from_);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }

  // Sends a command and returns its result; throws on an error or silence.
  json call(const std::string& method, const json& params = json::object(), const std::string& session = "") {
    json m = {{"id", ++id_}, {"method", method}, {"params", params}};
    if (!session.empty()) m["sessionId"] = session;
    const std::string text = m.dump() + '\0';
    if (write(to_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
      throw std::runtime_error("cannot talk to chromium (is it installed? scripts/setup.sh installs it)");
    const auto deadline = Clock::now() + 20s;
    while (Clock::now() < deadline) {
      for (auto end = buffer_.find('\0'); end != std::string::npos; end = buffer_.find('\0')) {
        const json reply = json::parse(buffer_.substr(0, end));
        buffer_.erase(0, end + 1);
        if (reply.value("id", 0) != id_) continue;  // an event
        if (reply.contains("error")) throw std::runtime_error(method + ": " + reply["error"].dump());
        return reply["result"];
      }
      pollfd p{from_, POLLIN, 0};
      if (poll(&p, 1, 200) <= 0) continue;
      char chunk[65536];
      const ssize_t n = read(from_, chunk, sizeof chunk);
      if (n <= 0) throw std::runtime_error("chromium went away during " + method);
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
    throw std::runtime_error(method + ": no answer from chromium in 20 s");
  }

  // Opens `url` in a new page; later evaluate() runs there.
  void open(const std::string& url) {
    const auto target = call("Target.createTarget", {{"url", url}})["targetId"];
    session_ = call("Target.attachToTarget", {{"targetId", target}, {"flatten", true}})["sessionId"];
  }
  json evaluate(const std::string& expression) {
    return call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}}, session_)["result"]
        .value("value", json());
  }
  std::string screenshot() {
    return base64_decode(call("Page.captureScreenshot", {{"format", "png"}}, session_)["data"]);
  }

 private:
  pid_t pid_ = -1;
  int to_ = -1, from_ = -1, id_ = 0;
  std::string buffer_, session_;
};

// Whether a `chromium` is on the PATH (scripts/setup.sh installs Debian's
// as an optional test dependency).
bool have_chromium() {
  return std::system("command -v chromium >/dev/null 2>&1") == 0;
}

}  // namespace

TEST_CASE("nps page: a browser sees a node turn unavailable when its trace does, without reloading") {
  if (!have_chromium()) {
    MESSAGE("skipped: no chromium on the PATH (scripts/setup.sh installs it; apt-get install chromium)");
    return;
  }
  ServerProcess server({"--pool", "lab"});
  Scratch s;
  // ws01 is available for its first 12 trace steps (12 s at the agents'
  // 60 trace seconds per second), ws02 always.
  const std::string trace = s.write("pool.avail.csv",
                                    "# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\n"
                                    "node,start,end\nflip,0,12\nup,0,100000\n");
  const std::string config = s.write("agent.yaml", "policy: FAIR\nscheduler:\n  stale_seconds: 3\n");
  // The piranhas stay at SCHED_IDLE: the page shows the nodes, not the job's
  // progress, and on a busy machine they leave the CPU to the browser.
  std::vector<std::unique_ptr<Process>> agents;
  for (const auto& [node, replay] : {std::pair("ws01", "flip"), std::pair("ws02", "up")})
    agents.push_back(std::make_unique<Process>(std::vector<std::string>{
        bin("piranha"), "agent", "--node", node, "--server", server.endpoint(), "--config", config, "--trace",
        trace, "--trace-node", replay, "--piranha-output", s.dir + "/" + node + ".piranhas", "--quiet"}));
  ts::Client c(server.endpoint());
  REQUIRE(wait_until([&] { return sys::list_nodes(c).size() == 2; }));
  // The page asks for a token, as one other machines reach must.
  const std::string token_file = s.dir + "/page.token";
  Process nps({bin("piranha"), "nps", "run", "--server", server.endpoint(), "--period", "1", "--shadow",
               "FCFS", "--http", "127.0.0.1:0", "--http-token", token_file});
  REQUIRE(nps.wait_for_err("the live page is at http://127.0.0.1:"));
  std::string token;
  std::ifstream(token_file) >> token;
  const std::string err = nps.err();
  const auto at = err.find("http://127.0.0.1:");
  const std::string url = err.substr(at, err.find('/', at + 7) + 1 - at);
  // A short job that ends before the page is opened: it is listed with its
  // turnaround all the same.
  Process short_job({"/usr/bin/env", "PIRANHA_SERVER=" + server.endpoint(), bin("piranha"), "submit",
                     bin("spin"), "--tasks", "20", "--task-ms", "10"});
  CHECK(short_job.wait() == 0);
  Process job({"/usr/bin/env", "PIRANHA_SERVER=" + server.endpoint(), bin("piranha"), "submit", bin("spin"),
               "--tasks", "2000", "--task-ms", "20"});

  Browser b(s.dir + "/chromium");
  // Opened once with the token in its address: the page takes it as a
  // cookie and leaves the address without it.
  b.open(url + "?token=" + token);
  CHECK(wait_until([&] { return b.evaluate("location.href") == url; }, 10s));
  auto state = [&] { return b.evaluate("document.getElementById('node-ws01')?.dataset.state || ''"); };
  auto count = [&](const std::string& selector) {
    return b.evaluate("document.querySelectorAll('" + selector + "').length").get<int>();
  };
  INFO(nps.err());
  REQUIRE(wait_until([&] { return state() == "available"; }, 10s));
  // The timeline: a row per node, stretches drawn in them.
  REQUIRE(wait_until([&] { return count("#timeline g.row") == 2; }, 10s));
  CHECK(count("#timeline g.row[data-node=ws01] rect.span") >= 1);
  const int first_load = count("#timeline g.row[data-node=ws01] rect.span");
  b.evaluate("window.samePage = 42");
  // The trace turns ws01 unavailable; the page must show it by itself.
  CHECK(wait_until([&] { return state() == "unavailable"; }, 20s));
  CHECK(b.evaluate("window.samePage") == 42);
  CHECK(wait_until(
      [&] { return count("#timeline g.row[data-node=ws01] rect.span[data-state=unavailable]") >= 1; }, 10s));
  CHECK(b.evaluate("document.getElementById('changes').textContent")
            .get<std::string>()
            .find("ws01: available") != std::string::npos);
  // The short job, ended before the page opened, is listed with its turnaround.
  CHECK(wait_until([&] { return count("#finished tr[id^=ended-]") >= 1; }, 10s));
  CHECK(b.evaluate("document.querySelector('#finished tr[id^=ended-]').textContent")
            .get<std::string>()
            .find(" s") != std::string::npos);
  // Loaded again, the page has the history from /history: more than at the
  // first load, the stretch since included.
  b.evaluate("location.reload()");
  CHECK(wait_until(
      [&] {
        return b.evaluate("window.samePage === undefined") == true &&
               count("#timeline g.row[data-node=ws01] rect.span") > first_load &&
               count("#timeline g.row[data-node=ws01] rect.span[data-state=unavailable]") >= 1 &&
               count("#finished tr[id^=ended-]") >= 1;
      },
      10s));
  // Its latest changes come from the history too, not only from what it saw.
  CHECK(b.evaluate("document.getElementById('changes').textContent")
            .get<std::string>()
            .find("ws01: available") != std::string::npos);
  CHECK(b.evaluate("document.getElementById('node-ws02').textContent")
            .get<std::string>()
            .find("available to Piranha") != std::string::npos);
  CHECK(wait_until([&] { return b.evaluate("document.getElementById('conn').textContent") == "live"; }, 10s));
  CHECK(b.evaluate("document.getElementById('obeyed').textContent") == "0 (TSK)");
  CHECK(b.evaluate("document.getElementById('pool').textContent").get<std::string>().rfind("lab (id ", 0) ==
        0);
  CHECK(b.evaluate("document.querySelectorAll('#nodes tr').length") == 2);
  if (const char* file = std::getenv("PIRANHA_SCREENSHOT")) {
    b.evaluate("window.scrollTo(0, 0)");
    std::ofstream(file, std::ios::binary) << b.screenshot();
  }
  // Every other event stream taken (the page above holds one): a second
  // page is refused a stream, says so and shows the state by polling.
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  std::vector<std::unique_ptr<piranha::testing::RawHttp>> taken;
  // The stream of the page before its reload is given back when the server
  // notices it gone (within a second or two): a refused stream is asked again.
  auto take_stream = [&] {
    const auto give_up = Clock::now() + 20s;
    for (;;) {
      auto stream = std::make_unique<piranha::testing::RawHttp>(
          port, piranha::testing::RawHttp::get("/events", "Authorization: Bearer " + token + "\r\n"));
      if (stream->wait_for("data: {", 10s) || Clock::now() > give_up) return stream;
      std::this_thread::sleep_for(50ms);  // refused: ask again shortly
    }
  };
  for (int i = 1; i < piranha::nps::LivePage::kMaxStreams; ++i) {
    CAPTURE(i);
    taken.push_back(take_stream());
    REQUIRE(taken.back()->text().find("data: {") != std::string::npos);
  }
  b.open(url);  // with the cookie
  CHECK(wait_until(
      [&] { return b.evaluate("document.getElementById('conn').textContent") == "polling every 2 s"; }, 20s));
  CHECK(wait_until([&] { return state() == "unavailable"; }, 20s));
  taken.clear();
  // Stopped while the browser reads the page: a clean stop all the same.
  nps.signal(SIGTERM);
  CHECK(nps.wait() == 0);
  CHECK(nps.err().find("nps: stopped") != std::string::npos);
  CHECK_FALSE(c.rd(sys::kSpace, sys::scheduler_heartbeat_template(0), 0ms).has_value());
  CHECK(wait_until([&] { return b.evaluate("document.getElementById('conn').textContent") != "live"; }));
}
