// live_state on hand-made node states, and LivePage over real HTTP on a
// loopback port: the page, /api/state, 404s, a client that leaves mid-stream.
#include "piranha/nps/live_page.h"

#include <doctest/doctest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "piranha/base/input_error.h"
#include "piranha/testing/raw_http.h"
#include "values.h"

namespace piranha::nps {
namespace {

using namespace std::chrono_literals;
using ::piranha::testing::RawHttp;  // not nps::testing (scripted_pool.h), in a unity build
using trellis::Value;

// How long a request to a page on this machine may take to be answered.
constexpr auto kAnswer = 10s;

std::vector<Value> states() {
  return {Fields()("node", "ws01")("tick", 3)("state", "available")("available", true)("running", 2)(
              "ap_length", 60.0),
          Fields()("node", "ws02")("tick", 3)("state", "available")("available", false)("running", Value()),
          Fields()("node", "ws02")("blocks", Value::List{})("blocked", true)("complaints", Value::List{}),
          Fields()("tick", 3)("jobs", Value::List{Fields()("id", 2)("name", "spin")("tasks", 10)(
                                          "tasks_left", 4)("task_time", 0.5)("measured", true)}),
          Fields()("id", 0)("strategy", "TSK")("assignments", Fields()("ws01", 2)("ws02", Value())),
          Fields()("id", 1)("strategy", "SRT")("assignments", Fields()("ws01", 2)("ws02", 2)),
          Fields()("obeyed", 1)("schedulers", Fields()("1", Fields()("estimate", 12.5)))(
              "retreats", Value::List{Fields()("time", 5.0)("node", "ws01")("job", 1)("by", "owner")})};
}

TEST_CASE(
    "live state: nodes with their state and job, owner blocks shown, the queue's progress, the obeyed "
    "scheduler") {
  const auto s = live_state(100, states());
  REQUIRE(s["nodes"].size() == 2);
  CHECK(s["nodes"][0]["name"] == "ws01");
  CHECK(s["nodes"][0]["job"] == 2);
  CHECK(s["nodes"][1]["state"] == "owner-blocked");
  REQUIRE(s["jobs"].size() == 1);
  CHECK(s["jobs"][0]["progress"].get<double>() == doctest::Approx(0.6));
  CHECK(s["obeyed"]["id"] == 1);
  CHECK(s["obeyed"]["strategy"] == "SRT");
  CHECK(s["schedulers"][1]["estimated_mean_turnaround_seconds"] == 12.5);
  CHECK(s["retreats"][0]["by"] == "owner");
}

TEST_CASE("live state: each node says why it is in its state and what it is expected to do next") {
  std::vector<Value> s = {
      // Runs job 5; the obeyed scheduler gave it job 6: a decision not yet carried out.
      Fields()("node", "ws01")("state", "available")("available", true)("running", 5)("ap_length", 0.0)(
          "fraction", 1.0)("history", 10),
      // Always available in its history, no job.
      Fields()("node", "ws02")("state", "available")("available", true)("running", Value())("ap_length", 0.0)(
          "fraction", 1.0)("history", 10),
      // Just started: no history.
      Fields()("node", "ws03")("state", "available")("available", true)("running", Value())("ap_length", 0.0)(
          "fraction", 1.0)("history", 0),
      Fields()("node", "ws04")("state", "unavailable")("available", false)("running", Value())(
          "ap_length", 600.0)("fraction", 0.5)("history", 10),
      Fields()("node", "ws05")("state", "available")("available", false)("running", Value())(
          "ap_length", 0.0)("fraction", 1.0)("history", 10),
      Fields()("node", "ws05")("blocks", Value::List{Value::List{Value(90.0), Value(1300.0)}})(
          "blocked", true)("complaints", Value::List{}),
      // Its agent said why (its ("nodewhy", ...) record, carried by its monitor).
      Fields()("node", "ws06")("state", "unavailable")("available", false)("running", Value())(
          "ap_length", 0.0)("fraction", 0.5)("history", 10)("reason",
                                                            "1-min load 2.31 >= 0.70, own piranhas excluded"),
      Fields()("node", "ws07")("state", "down")("available", false)("running", Value())("reason",
                                                                                        "agent stopped"),
      Fields()("id", 0)("strategy", "SRT")("assignments", Fields()("ws01", 6)("ws02", Value())),
      Fields()("obeyed", 0)("schedulers", Fields())(
          "ended", Value::List{Fields()("id", 4)("name", "crash")("arrival", 10.0)("end", 40.0)(
                       "turnaround", 30.0)("owner_retreats", 2)("scheduler_retreats", 0)})};
  const auto j = live_state(100, s);
  REQUIRE(j["nodes"].size() == 7);
  const auto& ws01 = j["nodes"][0];
  CHECK(ws01["job"] == 5);
  CHECK(ws01["assigned"] == 6);
  CHECK(ws01["starting"] == true);
  CHECK(ws01["next"] == "assigned job 6, starting (job 5 still runs)");
  CHECK(ws01["why"] == "available to Piranha (its owner is away); runs job 5");
  CHECK(j["nodes"][1]["starting"] == false);
  CHECK(j["nodes"][1]["next"] == "always idle in its recent history: expected to stay available");
  CHECK(j["nodes"][2]["next"] == "no availability history yet: nothing predicted");
  CHECK(j["nodes"][3]["why"] == "its owner is using it (its agent reports it unavailable)");
  CHECK(j["nodes"][3]["next"] == "available 50 % of its recent history, in periods of about 10 min");
  CHECK(j["nodes"][4]["state"] == "owner-blocked");
  CHECK(j["nodes"][4]["why"] == "its owner blocked it (piranha owner block) for another 20 min");
  CHECK(j["nodes"][4]["next"] == "back to Piranha when the block ends, in 20 min");
  CHECK(j["nodes"][3]["reason"] == "");
  CHECK(j["nodes"][5]["reason"] == "1-min load 2.31 >= 0.70, own piranhas excluded");
  CHECK(j["nodes"][5]["why"] ==
        "its agent reports it unavailable: 1-min load 2.31 >= 0.70, own piranhas excluded");
  CHECK(j["nodes"][6]["why"] == "its agent reports it down: agent stopped");
  REQUIRE(j["finished"].size() == 1);
  CHECK(j["finished"][0]["id"] == 4);
  CHECK(j["finished"][0]["turnaround"] == 30.0);
  CHECK(j["finished"][0]["owner_retreats"] == 2);
}

TEST_CASE("live state: a node whose agent missed a beat is shown suspect, as `piranha nodes` shows it") {
  auto with = states();
  with[0] = Fields()("node", "ws01")("tick", 3)("state", "available")("suspect", true)("available", true)(
      "running", 2)("ap_length", 60.0);
  const auto s = live_state(100, with);
  CHECK(s["nodes"][0]["state"] == "suspect");
  CHECK(s["nodes"][0]["why"] ==
        "its agent has missed a beat (a cut link, or a frozen agent?); it last reported available");
  CHECK(s["nodes"][1]["state"] == "owner-blocked");
  with[0] = Fields()("node", "ws01")("tick", 3)("state", "down")("suspect", true)("available", false);
  CHECK(live_state(100, with)["nodes"][0]["state"] == "down");
}

TEST_CASE(
    "live page: the page, its state as JSON, events, 404 for other paths, a client leaving mid-stream") {
  LivePage page("127.0.0.1:0");
  REQUIRE(page.port() > 0);
  page.publish(live_state(100, states()));
  httplib::Client c("127.0.0.1", page.port());
  auto home = c.Get("/");
  REQUIRE(home);
  CHECK(home->status == 200);
  CHECK(home->body.find("EventSource(\"/events\")") != std::string::npos);
  CHECK(home->body.find("src=") == std::string::npos);  // no external assets
  auto api = c.Get("/api/state");
  REQUIRE(api);
  CHECK(nlohmann::json::parse(api->body)["nodes"][0]["name"] == "ws01");
  auto missing = c.Get("/nodes/ws01");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(missing->body.find("no such page: /nodes/ws01") == 0);
  // A client that reads one event and hangs up.
  std::string first;
  httplib::Client stream("127.0.0.1", page.port());
  stream.Get("/events", [&](const char* data, std::size_t n) {
    first.append(data, n);
    return first.find("\n\n") == std::string::npos;  // false: leave after the first event
  });
  CHECK(first.rfind("data: {", 0) == 0);
  page.publish(live_state(101, {}));
  auto again = c.Get("/api/state");
  REQUIRE(again);
  CHECK(nlohmann::json::parse(again->body)["nodes"].empty());
}

TEST_CASE("live page: /history has the earlier runs' records and every state published since") {
  LivePage page("127.0.0.1:0");
  const std::vector<EvalRecord> records = {
      {"span", 50,
       R"({"node":"ws01","state":"unavailable","available":false,"job":null,"start":20,"end":50})"}};
  page.seed(records);
  page.publish(live_state(100, states()));
  httplib::Client c("127.0.0.1", page.port());
  auto all = c.Get("/history");
  REQUIRE(all);
  CHECK(all->status == 200);
  const auto h = nlohmann::json::parse(all->body);
  REQUIRE(h["nodes"]["ws01"].size() == 2);
  CHECK(h["nodes"]["ws01"][0][2] == "unavailable");  // seeded
  CHECK(h["nodes"]["ws01"][1][0] == 100.0);          // published
  CHECK(h["nodes"]["ws02"][0][2] == "owner-blocked");
  CHECK(h["marks"][0]["kind"] == "retreat");
  auto recent = c.Get("/history?since=60");
  REQUIRE(recent);
  CHECK(nlohmann::json::parse(recent->body)["nodes"]["ws01"].size() == 1);
  CHECK(nlohmann::json::parse(recent->body)["since"] == 60.0);
  auto bad = c.Get("/history?since=soon");  // not a number: everything
  REQUIRE(bad);
  CHECK(nlohmann::json::parse(bad->body)["nodes"]["ws01"].size() == 2);
}

TEST_CASE(
    "live page: event streams past its cap are refused with a message, and every other request served") {
  LivePage page("127.0.0.1:0");
  page.publish(live_state(100, states()));
  std::vector<std::unique_ptr<RawHttp>> streams;
  for (int i = 0; i < LivePage::kMaxStreams; ++i) {
    CAPTURE(i);
    streams.push_back(std::make_unique<RawHttp>(page.port(), RawHttp::get("/events")));
    REQUIRE(streams.back()->wait_for("data: {", kAnswer));
  }
  for (int i = 0; i < 3; ++i) {
    RawHttp refused(page.port(), RawHttp::get("/events"));
    REQUIRE(refused.wait_closed(kAnswer));
    CHECK(refused.status() == 503);
    CHECK(refused.body().find("the live page serves at most " + std::to_string(LivePage::kMaxStreams) +
                              " event streams at once") == 0);
  }
  // The page and its state are served meanwhile, many times over.
  for (int i = 0; i < 20; ++i) {
    RawHttp home(page.port(), RawHttp::get("/"));
    REQUIRE(home.wait_closed(kAnswer));
    CHECK(home.status() == 200);
    RawHttp api(page.port(), RawHttp::get("/api/state"));
    REQUIRE(api.wait_closed(kAnswer));
    CHECK(api.status() == 200);
    CHECK(nlohmann::json::parse(api.body())["nodes"][0]["name"] == "ws01");
  }
  // A reader that leaves gives its stream back (noticed at the next write,
  // within a second or so).
  streams.pop_back();
  const auto deadline = std::chrono::steady_clock::now() + kAnswer;
  bool again = false;
  while (!again && std::chrono::steady_clock::now() < deadline) {
    RawHttp next(page.port(), RawHttp::get("/events"));
    again = next.wait_for("data: {", 1s);  // or refused at once, while the slot is still held
    if (!again) std::this_thread::sleep_for(10ms);
  }
  CHECK(again);
}

TEST_CASE("live page: a reply that quotes the request is valid UTF-8, whatever bytes the request had") {
  LivePage page("127.0.0.1:0");
  struct Case {
    std::string path, quoted;
  };
  const std::string bad = "\xEF\xBF\xBD";  // U+FFFD
  for (const Case& c :
       {Case{"/%FF%FEok%C3%28", "/" + bad + bad + "ok" + bad + "("},
        Case{"/\xC0\xAF\xED\xA0\x80x", "/" + bad + bad + bad + bad + bad + "x"},
        Case{"/\xF4\x90\x80\x80", "/" + bad + bad + bad + bad},
        Case{"/caf%C3%A9/\xE2\x82\xAC/\xF0\x9F\x90\x9F", "/caf\xC3\xA9/\xE2\x82\xAC/\xF0\x9F\x90\x9F"},
        Case{"/cut%E2%82", "/cut" + bad + bad}}) {
    CAPTURE(c.path);
    RawHttp reply(page.port(), RawHttp::get(c.path));
    REQUIRE(reply.wait_closed(kAnswer));
    CHECK(reply.status() == 404);
    CHECK(reply.body() ==
          "no such page: " + c.quoted + " (the NPS serves /, /api/state, /history and /events)\n");
    CHECK_NOTHROW(nlohmann::json(reply.body()).dump());  // throws on bytes that are not UTF-8
  }
}

TEST_CASE(
    "live page: with a token, a request without it is refused, and one with it as a header or a cookie "
    "served") {
  const std::string token = "s3cret-token-0123456789";
  LivePage page("127.0.0.1:0", token);
  page.publish(live_state(100, states()));
  const std::string cookie = "piranha_nps_" + std::to_string(page.port());
  // No token, a wrong one, another page's cookie: 401 with a message, and no event stream taken.
  for (const std::string& extra :
       {std::string(), std::string("Authorization: Bearer s3cret-token-012345678X\r\n"),
        std::string("Authorization: Bearer \r\n"), "Cookie: piranha_nps_1=" + token + "\r\n",
        "Cookie: " + cookie + "=" + token + "x\r\n"}) {
    for (const char* path : {"/", "/api/state", "/history", "/events", "/nowhere", "/?token=s3cret"}) {
      CAPTURE(extra);
      CAPTURE(path);
      RawHttp refused(page.port(), RawHttp::get(path, extra));
      REQUIRE(refused.wait_closed(kAnswer));
      CHECK(refused.status() == 401);
      CHECK(refused.body().find("this live page asks for its token") == 0);
      CHECK(refused.text().find("Set-Cookie") == std::string::npos);
    }
  }
  // The first visit: the token in the address gives the cookie, and the
  // page is reloaded without the token in its address.
  RawHttp first(page.port(), RawHttp::get("/?token=" + token));
  REQUIRE(first.wait_closed(kAnswer));
  CHECK(first.status() == 303);
  CHECK(first.text().find("\r\nLocation: /\r\n") != std::string::npos);
  CHECK(first.text().find("\r\nSet-Cookie: " + cookie + "=" + token +
                          "; Path=/; HttpOnly; SameSite=Strict\r\n") != std::string::npos);
  for (const std::string& extra : {"Authorization: Bearer " + token + "\r\n",
                                   "Cookie: theme=dark; " + cookie + "=" + token + "; lang=en\r\n"}) {
    CAPTURE(extra);
    RawHttp home(page.port(), RawHttp::get("/", extra));
    REQUIRE(home.wait_closed(kAnswer));
    CHECK(home.status() == 200);
    RawHttp api(page.port(), RawHttp::get("/api/state", extra));
    REQUIRE(api.wait_closed(kAnswer));
    CHECK(nlohmann::json::parse(api.body())["nodes"][0]["name"] == "ws01");
    RawHttp history(page.port(), RawHttp::get("/history?since=0", extra));
    REQUIRE(history.wait_closed(kAnswer));
    CHECK(nlohmann::json::parse(history.body())["nodes"].contains("ws01"));
    RawHttp stream(page.port(), RawHttp::get("/events", extra));
    CHECK(stream.wait_for("data: {", kAnswer));
  }
  // Without a token, the page asks for none.
  LivePage open_page("127.0.0.1:0");
  RawHttp home(open_page.port(), RawHttp::get("/"));
  REQUIRE(home.wait_closed(kAnswer));
  CHECK(home.status() == 200);
}

TEST_CASE("live page: the token file, made when missing and refused when others may read it") {
  const auto dir = std::filesystem::temp_directory_path() / ("live_page_token_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "page.token").string();
  bool made = false;
  const std::string token = page_token(file, &made);
  CHECK(made);
  CHECK(token.size() == 32);
  CHECK(token.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK((std::filesystem::status(file).permissions() & std::filesystem::perms::all) ==
        (std::filesystem::perms::owner_read | std::filesystem::perms::owner_write));
  // Read back as it is, not made again.
  CHECK(page_token(file, &made) == token);
  CHECK_FALSE(made);
  CHECK(page_token(file, &made) != page_token((dir / "other.token").string(), &made));
  std::filesystem::permissions(file, std::filesystem::perms::group_read, std::filesystem::perm_options::add);
  CHECK_THROWS_WITH_AS(
      page_token(file, &made),
      ("--http-token: " + file +
       ": a token file that its group or others may read (mode 0640) is not used: chmod 600 " + file)
          .c_str(),
      piranha::InputError);
  std::filesystem::permissions(file, std::filesystem::perms::group_read,
                               std::filesystem::perm_options::remove);
  for (const char* text : {"short\n", "  with spaces inside it, which a URL does not take\n", "\n"}) {
    CAPTURE(text);
    std::ofstream(file, std::ios::trunc) << text;
    CHECK_THROWS_AS(page_token(file, &made), piranha::InputError);
  }
  std::ofstream(file, std::ios::trunc) << "  an-operators.own_token~0123  \n";
  CHECK(page_token(file, &made) == "an-operators.own_token~0123");
  CHECK_THROWS_AS(page_token((dir / "no" / "such" / "dir").string(), &made), piranha::InputError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("live page: a malformed address is refused with a message") {
  CHECK_THROWS_WITH_AS(LivePage("8080"), "--http: \"8080\" is not HOST:PORT (e.g. 127.0.0.1:8080)",
                       piranha::InputError);
  CHECK_THROWS_WITH_AS(LivePage("127.0.0.1:http"),
                       "--http: \"127.0.0.1:http\": the port must be a number from 0 to 65535",
                       piranha::InputError);
}

TEST_CASE("live page: one closed as soon as it is made is closed, twenty times over") {
  // The module returns once its server listens: a close before that would
  // wait for ever (cpp-httplib's stop does not reach a server not yet
  // listening). Each page is reachable while it exists.
  for (int i = 0; i < 20; ++i) {
    LivePage page("127.0.0.1:0");
    REQUIRE(page.port() > 0);
    if (i % 5 == 0) {
      httplib::Client client("127.0.0.1", page.port());
      auto res = client.Get("/api/state");
      REQUIRE(res);
      CHECK(res->status == 200);
    }
  }
}

}  // namespace
}  // namespace piranha::nps
