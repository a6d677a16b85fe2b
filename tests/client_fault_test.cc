// Clients that never hang: a server frozen with SIGSTOP, killed with SIGKILL
// and restarted on the same endpoint, or gone for good. Every call returns
// within its deadline, with a result or a TupleSpaceError whose code says
// what happened; calls that can safely be re-issued survive a restart.
//
// The figures a test prints with MESSAGE (time from the fault's end to the
// client's next successful call) are the ones in docs/performance-history.md.
#include <doctest/doctest.h>

#include <boost/fiber/all.hpp>
#include <csignal>
#include <future>
#include <optional>

#include "harness.h"
#include "piranha/tuplespace/fiber_client.h"

namespace piranha::it {
namespace {

std::string endpoint_on(int port) {
  return "tcp://127.0.0.1:" + std::to_string(port);
}

// A server bound to `endpoint`, so a restarted one is found where the old was.
std::unique_ptr<ServerProcess> serve_on(const std::string& endpoint) {
  return std::make_unique<ServerProcess>(std::vector<std::string>{"--bind", endpoint});
}

void kill_server(ServerProcess& server) {
  server.process().signal(SIGKILL);
  REQUIRE(server.process().wait() == 128 + SIGKILL);
}

// The code of the TupleSpaceError `f` throws, or "" when it returns.
template <class F>
std::string code_of(F&& f) {
  try {
    f();
    return "";
  } catch (const ts::TupleSpaceError& e) {
    return std::string(ts::code_to_wire(e.code()));
  }
}

ts::ClientOptions short_deadline(std::chrono::milliseconds timeout) {
  ts::ClientOptions o;
  o.request_timeout = timeout;
  return o;
}

}  // namespace

TEST_CASE(
    "a call made while the server is SIGSTOPped for 10 s returns once it resumes, and later calls work") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  ts::Client writer(server.endpoint());
  c.space("jobs").out("task", 1);
  c.flush();

  server.process().signal(SIGSTOP);
  auto stopped_at = Clock::now();
  auto read = std::async(std::launch::async, [&] { return c.stats("jobs"); });
  auto write = std::async(std::launch::async, [&] {
    return code_of([&] { writer.out_many("jobs", {ts::Tuple::of("task", 2)}); });
  });
  std::this_thread::sleep_for(10s);
  server.process().signal(SIGCONT);
  auto resumed_at = Clock::now();

  REQUIRE(read.wait_for(40s) == std::future_status::ready);
  double after = ms_since(resumed_at);
  auto stats = read.get();
  MESSAGE("SIGSTOP 10 s: stats answered ", after, " ms after SIGCONT (", ms_since(stopped_at),
          " ms after the call); reconnects: ", c.reconnects());
  REQUIRE(stats.has_value());
  CHECK(stats->tuples >= 1);
  CHECK(c.reconnects() == 1);
  CHECK(after < 5000);

  // out_many changes the space: it is either answered or reported as unknown.
  REQUIRE(write.wait_for(40s) == std::future_status::ready);
  std::string code = write.get();
  INFO("out_many: ", code);
  CHECK((code.empty() || code == "unknown_outcome"));

  c.space("jobs").out("task", 3);
  CHECK(c.space("jobs").in_for(kPatience, "task", 3).has_value());
}

TEST_CASE(
    "with safe outs, an out_many sent to a server SIGSTOPped for 10 s is written once after SIGCONT, without "
    "error") {
  // The request waits in the frozen server's socket buffer; the client
  // notices the silence after 1 s and gives that connection up. Without
  // safe outs the call throws unknown_outcome (the case above); with them it
  // learns from its token whether the tuples were written.
  ServerProcess server;
  ts::ClientOptions o;
  o.safe_outs = true;
  o.heartbeat_timeout_ms = 1000;
  ts::Client feeder(server.endpoint(), o);
  ts::Client reader(server.endpoint());
  std::vector<ts::Tuple> tasks;
  for (std::int64_t i = 0; i < 1000; ++i) tasks.push_back(ts::Tuple::of("task", i));
  feeder.out_many("jobs", {ts::Tuple::of("task", std::int64_t{-1})});  // its token space exists now

  server.process().signal(SIGSTOP);
  auto write =
      std::async(std::launch::async, [&] { return code_of([&] { feeder.out_many("jobs", tasks); }); });
  std::this_thread::sleep_for(10s);
  server.process().signal(SIGCONT);
  auto resumed_at = Clock::now();

  REQUIRE(write.wait_for(40s) == std::future_status::ready);
  CHECK(write.get() == "");
  MESSAGE("safe out_many through a 10 s SIGSTOP: written ", ms_since(resumed_at),
          " ms after SIGCONT; reconnects: ", feeder.reconnects());
  CHECK(feeder.reconnects() >= 1);
  auto got = reader.space("jobs").rd_many(5000, "task", ts::formal<std::int64_t>);
  CHECK(got.size() == 1001);
  CHECK(stats_of(reader, "jobs").leases == 0);
}

TEST_CASE("a safe out to a server that stays connected but never answers ends with deadline_exceeded") {
  // The heartbeat timeout is longer than the test: the frozen server stays
  // connected, so each step's call ends at its own deadline. The safe out
  // tries again with a new token only until its first try's deadline.
  ServerProcess server;
  ts::ClientOptions o;
  o.safe_outs = true;
  o.heartbeat_timeout_ms = 120'000;
  o.request_timeout = 2s;
  ts::Client feeder(server.endpoint(), o);
  feeder.out_many("jobs", {ts::Tuple::of("task", 1)});

  server.process().signal(SIGSTOP);
  auto sent = Clock::now();
  auto write = std::async(std::launch::async, [&] {
    return code_of([&] { feeder.out_many("jobs", {ts::Tuple::of("task", 2)}); });
  });
  bool ended = write.wait_for(20s) == std::future_status::ready;
  double ms = ms_since(sent);
  server.process().signal(SIGCONT);
  REQUIRE(write.wait_for(kPatience) == std::future_status::ready);
  MESSAGE("a safe out to a frozen, connected server gave up after ", ms, " ms (its deadline 2 s)");
  CHECK(ended);
  CHECK(write.get() == "deadline_exceeded");
}

TEST_CASE(
    "a leased take sent to a SIGSTOPped server on a connection the client then gave up holds nothing after "
    "SIGCONT") {
  // The request waits in the stopped server's socket buffer; the client
  // notices the silence, closes that connection and re-issues the take on a
  // new one. On SIGCONT the server reads the old request and, just after it,
  // the old connection's close. The old request must not take the tuple for
  // a session nobody will end: the re-issued take gets it at once.
  ServerProcess server;
  ts::ClientOptions o;
  o.heartbeat_timeout_ms = 1000;
  ts::Client taker(server.endpoint(), o);
  ts::Client writer(server.endpoint());
  writer.space("jobs").out("task", 1);
  writer.flush();

  server.process().signal(SIGSTOP);
  auto took = std::async(std::launch::async,
                         [&] { return taker.space("jobs").take(60s, "task", ts::formal<std::int64_t>); });
  std::this_thread::sleep_for(3s);  // the loss is noticed after 1 s
  server.process().signal(SIGCONT);
  auto resumed_at = Clock::now();

  REQUIRE(took.wait_for(10s) == std::future_status::ready);
  MESSAGE("leased take re-issued after SIGSTOP answered ", ms_since(resumed_at), " ms after SIGCONT");
  ts::Leased leased = took.get();
  CHECK(leased.tuple == ts::Tuple::of("task", 1));
  CHECK(stats_of(writer, "jobs").leases == 1);
  taker.ack(leased.lease);
  CHECK(stats_of(writer, "jobs").leases == 0);
  CHECK(stats_of(writer, "jobs").tuples == 0);
}

TEST_CASE("a connected server that does not answer in time fails the call with deadline_exceeded") {
  ServerProcess server;
  // Heartbeats far longer than the deadline: the connection looks alive.
  ts::ClientOptions o = short_deadline(1s);
  o.heartbeat_timeout_ms = 60000;
  ts::Client c(server.endpoint(), o);
  ts::FiberClient f(server.endpoint(), o);
  server.process().signal(SIGSTOP);
  auto start = Clock::now();
  CHECK(code_of([&] { c.stats(); }) == "deadline_exceeded");
  double took = ms_since(start);
  start = Clock::now();
  CHECK(code_of([&] { f.stats(); }) == "deadline_exceeded");
  double fiber_took = ms_since(start);
  server.process().signal(SIGCONT);
  INFO("Client gave up after ", took, " ms, FiberClient after ", fiber_took, " ms");
  CHECK(took >= 950);
  CHECK(took < 5000);
  CHECK(fiber_took >= 950);
  CHECK(fiber_took < 5000);
  // The late answers are ignored; the connections carry on.
  c.space("jobs").out("task", 1);
  CHECK(c.stats("jobs")->tuples == 1);
  CHECK(f.stats("jobs")->tuples == 1);
  CHECK(c.reconnects() == 0);
}

TEST_CASE("a blocked rd and a blocked leased take are re-issued on a restarted server and answered there") {
  const std::string endpoint = endpoint_on(free_port());
  auto server = serve_on(endpoint);
  ts::Client reader(endpoint), taker(endpoint), plain(endpoint);
  auto read = std::async(std::launch::async,
                         [&] { return reader.space("jobs").rd("task", ts::formal<std::int64_t>); });
  auto took = std::async(std::launch::async,
                         [&] { return taker.space("jobs").take(60s, "task", ts::formal<std::int64_t>); });
  auto taken_plain = std::async(std::launch::async, [&] {
    return code_of([&] { plain.space("jobs").in("task", ts::formal<std::int64_t>); });
  });
  {
    ts::Client probe(endpoint);
    REQUIRE(wait_until([&] { return stats_of(probe, "jobs").waiters == 3; }));
  }

  kill_server(*server);
  auto killed_at = Clock::now();
  server = serve_on(endpoint);
  auto restarted_at = Clock::now();

  // The unleased in may have taken a tuple the restart lost: it says so.
  REQUIRE(taken_plain.wait_for(kPatience) == std::future_status::ready);
  CHECK(taken_plain.get() == "unknown_outcome");

  ts::Client writer(endpoint);
  REQUIRE(wait_until([&] { return stats_of(writer, "jobs").waiters == 2; }));
  double reissued = ms_since(restarted_at);
  writer.space("jobs").out("task", 7);
  writer.space("jobs").out("task", 8);
  REQUIRE(read.wait_for(kPatience) == std::future_status::ready);
  REQUIRE(took.wait_for(kPatience) == std::future_status::ready);
  MESSAGE("SIGKILL and restart (", ms_since(killed_at) - ms_since(restarted_at),
          " ms to restart): blocked rd and take re-issued within ", reissued,
          " ms of the new server answering");
  // Which of the two re-issued requests parked first decides who sees 7.
  ts::Tuple got = read.get();
  CHECK((got == ts::Tuple::of("task", 7) || got == ts::Tuple::of("task", 8)));
  ts::Leased leased = took.get();
  CHECK(leased.tuple.size() == 2);
  CHECK(taker.reconnects() == 1);
  taker.ack(leased.lease);
  CHECK(stats_of(writer, "jobs").leases == 0);
}

TEST_CASE(
    "rd_many_each whose server is killed while its answers are awaited asks again on the restarted one") {
  const std::string endpoint = endpoint_on(free_port());
  Scratch dir;
  auto durable_on = [&] {
    return std::make_unique<ServerProcess>(
        std::vector<std::string>{"--bind", endpoint, "--data", dir.dir + "/data"});
  };
  auto server = durable_on();
  ts::Client c(endpoint);
  c.out_many("sys", {ts::Tuple::of("job", 1), ts::Tuple::of("stat", 10), ts::Tuple::of("stat", 20)});
  c.flush();
  const ts::Template jobs({ts::Field::of(ts::Value(std::string("job"))), ts::Field::formal(ts::Type::Int)});
  const ts::Template stats({ts::Field::of(ts::Value(std::string("stat"))), ts::Field::formal(ts::Type::Int)});
  REQUIRE(c.rd_many_each("sys", {jobs, stats}, 10).size() == 2);

  // Frozen, the server reads nothing: the requests wait unanswered until it
  // is killed and another serves the same log on the same endpoint.
  server->process().signal(SIGSTOP);
  auto read = std::async(std::launch::async, [&] { return c.rd_many_each("sys", {jobs, stats, jobs}, 10); });
  std::this_thread::sleep_for(300ms);
  server->process().signal(SIGKILL);
  server->process().signal(SIGCONT);
  REQUIRE(server->process().wait() == 128 + SIGKILL);
  server = durable_on();

  REQUIRE(read.wait_for(kPatience) == std::future_status::ready);
  const auto each = read.get();
  REQUIRE(each.size() == 3);
  CHECK(each[0] == std::vector<ts::Tuple>{ts::Tuple::of("job", 1)});
  CHECK(each[1] == std::vector<ts::Tuple>{ts::Tuple::of("stat", 10), ts::Tuple::of("stat", 20)});
  CHECK(each[2] == each[0]);
  CHECK(c.reconnects() == 1);
}

TEST_CASE("a posted completion whose answer is lost is reported as a lost lease, not thrown") {
  const std::string endpoint = endpoint_on(free_port());
  auto server = serve_on(endpoint);
  ts::Client c(endpoint);
  ts::FiberClient f(endpoint);
  c.space("jobs").out("task", 1);
  c.space("jobs").out("task", 2);
  ts::Leased mine = c.space("jobs").take(60s, "task", ts::formal<std::int64_t>);
  ts::Leased theirs = f.space("jobs").take(60s, "task", ts::formal<std::int64_t>);

  server->process().signal(SIGSTOP);  // nothing sent now is answered
  c.space("jobs").complete_posted(mine, ts::Tuple::of("result", 1));
  f.space("jobs").complete_posted(theirs, ts::Tuple::of("result", 2));
  kill_server(*server);
  server = serve_on(endpoint);

  CHECK_NOTHROW(c.flush());
  CHECK_NOTHROW(f.flush());
  CHECK(c.take_lost_leases() == std::vector<ts::LeaseId>{mine.lease});
  CHECK(f.take_lost_leases() == std::vector<ts::LeaseId>{theirs.lease});
  // Both carry on with the new server.
  c.space("jobs").out("task", 3);
  CHECK(f.space("jobs").in_for(kPatience, "task", 3).has_value());
}

TEST_CASE("a client whose server never comes back fails with unreachable after its deadline, not before") {
  const std::string endpoint = endpoint_on(free_port());
  auto server = serve_on(endpoint);
  ts::Client c(endpoint, short_deadline(2s));
  ts::Client blocked(endpoint, short_deadline(2s));
  auto read = std::async(std::launch::async, [&] {
    std::string code = code_of([&] { blocked.space("jobs").rd("task", ts::formal<std::int64_t>); });
    return std::pair{code, Clock::now()};
  });
  REQUIRE(wait_until([&] { return stats_of(c, "jobs").waiters == 1; }));
  // Taken before the kill, so that the read cannot have noticed the loss earlier.
  auto killed_at = Clock::now();
  kill_server(*server);

  auto start = Clock::now();
  CHECK(code_of([&] { c.stats(); }) == "unreachable");
  double took = ms_since(start);
  INFO("stats gave up after ", took, " ms");
  CHECK(took >= 1900);
  CHECK(took < 10000);

  REQUIRE(read.wait_for(20s) == std::future_status::ready);
  auto [code, gave_up_at] = read.get();
  double read_took = std::chrono::duration<double, std::milli>(gave_up_at - killed_at).count();
  INFO("the blocked rd gave up ", read_took, " ms after the kill");
  CHECK(code == "unreachable");
  // A blocked read's deadline starts when its connection is lost.
  CHECK(read_took >= 1900);
  CHECK(read_took < 10000);
}

TEST_CASE("watches keep delivering after the server restarts") {
  const std::string endpoint = endpoint_on(free_port());
  auto server = serve_on(endpoint);
  ts::Client watcher(endpoint);
  ts::WatchId id = watcher.space("jobs").watch("task", ts::formal<std::int64_t>);
  {
    ts::Client w(endpoint);
    w.space("jobs").out("task", 1);
  }
  auto first = watcher.next_event(15s);
  REQUIRE(first.has_value());
  CHECK(first->watch == id);

  kill_server(*server);
  server = serve_on(endpoint);
  auto restarted_at = Clock::now();
  auto next = std::async(std::launch::async, [&] { return watcher.next_event(20s); });
  ts::Client writer(endpoint);
  REQUIRE(wait_until([&] { return stats_of(writer, "jobs").watches == 1; }));
  double rewatched = ms_since(restarted_at);
  writer.space("jobs").out("task", 2);
  REQUIRE(next.wait_for(25s) == std::future_status::ready);
  auto event = next.get();
  MESSAGE("SIGKILL and restart: watch re-established within ", rewatched, " ms of the new server answering");
  REQUIRE(event.has_value());
  CHECK(event->watch == id);
  CHECK(event->tuple == ts::Tuple::of("task", 2));
  CHECK(event->kind == ts::WatchEventKind::Written);
}

TEST_CASE("FiberClient: blocked fibers survive a server restart as a Client's calls do") {
  const std::string endpoint = endpoint_on(free_port());
  auto server = serve_on(endpoint);
  ts::FiberClient c(endpoint, short_deadline(10s));
  ts::FiberSpace jobs = c.space("jobs");
  std::optional<ts::Tuple> read;
  std::optional<ts::Leased> took;
  std::string plain_code, stats_code = "not run";
  double reissued = 0;
  ts::WatchId id = jobs.watch("task", ts::formal<std::int64_t>);
  std::optional<ts::WatchEvent> event;

  boost::fibers::fiber reader([&] { read = jobs.rd("task", ts::formal<std::int64_t>); });
  boost::fibers::fiber taker([&] { took = jobs.take(60s, "task", ts::formal<std::int64_t>); });
  boost::fibers::fiber plain(
      [&] { plain_code = code_of([&] { jobs.in("task", ts::formal<std::int64_t>); }); });
  boost::fibers::fiber watcher([&] {
    while (!event || event->tuple != ts::Tuple::of("task", 7)) event = c.next_event(20s);
  });
  // A waiting in_many under leases is re-issued with what is left of its
  // wait; one without leases has an unknown outcome, as the plain in.
  const ts::Template task_t(
      {ts::Field::of(ts::Value(std::string("task"))), ts::Field::formal(ts::Type::Int)});
  std::vector<ts::Leased> collected;
  std::string many_code;
  boost::fibers::fiber collector([&] { collected = c.in_many_leased("jobs", task_t, 5, 30s, 60s); });
  boost::fibers::fiber plain_many([&] { many_code = code_of([&] { c.in_many("jobs", task_t, 5, 30s); }); });
  boost::fibers::fiber driver([&] {
    ts::Client probe(endpoint);
    REQUIRE(wait_until([&] {
      boost::this_fiber::yield();
      return stats_of(probe, "jobs").waiters == 5;
    }));
  });
  driver.join();

  kill_server(*server);
  server = serve_on(endpoint);
  auto restarted_at = Clock::now();
  boost::fibers::fiber writer([&] {
    ts::Client w(endpoint);
    bool ready = wait_until([&] {
      boost::this_fiber::sleep_for(2ms);
      auto s = stats_of(w, "jobs");
      return s.waiters == 3 && s.watches == 1;
    });
    reissued = ms_since(restarted_at);
    CHECK(ready);
    w.space("jobs").out("task", 7);
    w.space("jobs").out("task", 8);
    stats_code = code_of([&] { c.stats(); });
  });
  writer.join();
  reader.join();
  taker.join();
  plain.join();
  watcher.join();
  collector.join();
  plain_many.join();
  MESSAGE("FiberClient, SIGKILL and restart: blocked fibers re-issued within ", reissued,
          " ms of the new server answering");
  CHECK(plain_code == "unknown_outcome");
  CHECK(many_code == "unknown_outcome");
  CHECK(stats_code.empty());
  // Parked again after the rd and the take: 7 went to them, 8 to it.
  REQUIRE(collected.size() == 1);
  CHECK(collected[0].tuple == ts::Tuple::of("task", 8));
  CHECK(collected[0].lease != 0);
  REQUIRE(read.has_value());
  CHECK(*read == ts::Tuple::of("task", 7));
  REQUIRE(took.has_value());
  REQUIRE(event.has_value());
  CHECK(event->watch == id);
  CHECK(c.reconnects() == 1);
}

TEST_CASE("FiberClient: a server that never comes back fails the calls with unreachable") {
  const std::string endpoint = endpoint_on(free_port());
  auto server = serve_on(endpoint);
  ts::FiberClient c(endpoint, short_deadline(2s));
  std::string blocked_code = "not run";
  boost::fibers::fiber blocked(
      [&] { blocked_code = code_of([&] { c.space("jobs").rd("task", ts::formal<std::int64_t>); }); });
  boost::this_fiber::sleep_for(200ms);
  kill_server(*server);
  auto start = Clock::now();
  CHECK(code_of([&] { c.stats(); }) == "unreachable");
  double took = ms_since(start);
  blocked.join();
  INFO("stats gave up after ", took, " ms");
  CHECK(blocked_code == "unreachable");
  CHECK(took >= 1900);
  CHECK(took < 10000);
}

}  // namespace piranha::it
