#include "piranha/tuplespace/fiber_client.h"

#include <doctest/doctest.h>
#include <time.h>

#include <algorithm>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/operations.hpp>
#include <chrono>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "piranha/base/clock.h"
#include "piranha/tuplespace/embedded.h"
#include "piranha/tuplespace/server.h"

namespace ts = piranha::ts;
using namespace std::chrono_literals;
using piranha::Clock;
using ts::formal;

namespace {

// Fibers that record, rather than propagate, what they throw: an exception
// escaping a fiber terminates the process.
class Fibers {
 public:
  void spawn(std::function<void()> fn) {
    fibers_.emplace_back([this, fn = std::move(fn)] {
      try {
        fn();
      } catch (const std::exception& e) {
        errors_.push_back(e.what());
      }
    });
  }
  void join() {
    for (auto& f : fibers_)
      if (f.joinable()) f.join();
  }
  ~Fibers() { join(); }
  const std::vector<std::string>& errors() const { return errors_; }

 private:
  std::vector<boost::fibers::fiber> fibers_;
  std::vector<std::string> errors_;
};

// A fresh in-process server for one test, kept until the process exits so
// that a test's leftover fibers never outlive the server they talk to.
ts::EmbeddedServer& fresh_server(ts::ServerOptions options = {}) {
  ts::default_context();  // constructed first, so destroyed after the servers
  static std::vector<std::unique_ptr<ts::EmbeddedServer>> servers;
  options.bind.clear();  // only EmbeddedServer's own inproc endpoint
  return *servers.emplace_back(std::make_unique<ts::EmbeddedServer>(std::move(options)));
}

// A Server bound to tcp://127.0.0.1:* and run on its own std::thread; kept,
// like fresh_server's, until the process exits.
ts::Server& fresh_tcp_server() {
  struct Running {
    ts::Server server;
    std::thread loop;
    explicit Running(ts::ServerOptions o) : server(std::move(o)), loop([this] { server.run(); }) {}
    ~Running() {
      server.stop();
      loop.join();
    }
  };
  ts::default_context();  // constructed first, so destroyed after the servers
  static std::vector<std::unique_ptr<Running>> servers;
  ts::ServerOptions options;
  options.bind = {"tcp://127.0.0.1:*"};
  return servers.emplace_back(std::make_unique<Running>(std::move(options)))->server;
}

// Waits (this fiber only) until pred holds; false after `limit`.
bool eventually(const std::function<bool()>& pred, std::chrono::milliseconds limit = 20s) {
  auto deadline = Clock::now() + limit;
  while (!pred()) {
    if (Clock::now() > deadline) return false;
    boost::this_fiber::sleep_for(1ms);
  }
  return true;
}

std::uint64_t waiters(ts::FiberClient& c, std::string_view space) {
  auto s = c.stats(space);
  return s ? s->waiters : 0;
}

std::int64_t ms_since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0).count();
}

std::vector<std::int64_t> iota(std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), 0);
  return v;
}

// The code of the TupleSpaceError fn throws, or "no error".
std::string error_code(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const ts::TupleSpaceError& e) {
    return std::string(ts::code_to_wire(e.code()));
  }
  return "no error";
}

}  // namespace

TEST_CASE("FiberClient: 50 fibers blocked in in() on one connection are each served once") {
  ts::EmbeddedServer& server = fresh_server();
  ts::FiberClient client(server.endpoint());
  ts::FiberSpace jobs = client.space("jobs");
  std::vector<std::int64_t> got;
  Fibers takers;
  for (int i = 0; i < 50; ++i)
    takers.spawn([&] { got.push_back(jobs.in("job", formal<std::int64_t>).get<std::int64_t>(1)); });
  // All 50 are parked at the server at the same time, over one connection.
  REQUIRE(eventually([&] { return waiters(client, "jobs") == 50; }));
  CHECK(got.empty());

  Fibers producer;
  producer.spawn([&] {
    for (std::int64_t i = 0; i < 50; ++i) jobs.out("job", i);
  });
  producer.join();
  takers.join();
  CHECK(producer.errors().empty());
  CHECK(takers.errors().empty());
  std::sort(got.begin(), got.end());
  CHECK(got == iota(50));
  auto s = jobs.stats();
  REQUIRE(s);
  CHECK(s->tuples == 0);
  CHECK(s->waiters == 0);
}

TEST_CASE("FiberClient: a blocked in() blocks only its own fiber") {
  ts::FiberClient client(fresh_server().endpoint());
  ts::FiberSpace s = client.space("gate");
  std::vector<std::string> log;
  Fibers f;
  f.spawn([&] {
    auto t = s.in_for(60s, "gate", formal<std::int64_t>);
    log.push_back(t ? "gate passed" : "gate timed out");
  });
  f.spawn([&] {
    for (std::int64_t i = 0; i < 20; ++i) {
      s.out("work", i);
      if (!s.inp("work", i)) log.push_back("work lost");
    }
    log.push_back("work done");
    s.out("gate", 1);
  });
  f.join();
  CHECK(f.errors().empty());
  CHECK(log == std::vector<std::string>{"work done", "gate passed"});
}

TEST_CASE("FiberClient: in_many_wait blocks only its own fiber, and takes what piled up at once") {
  ts::FiberClient client(fresh_server().endpoint());
  ts::FiberSpace s = client.space("collect");
  std::vector<std::size_t> batches;
  Fibers f;
  f.spawn([&] {
    std::size_t got = 0;
    while (got < 6) {
      auto rs = s.in_many_for(10, 20s, "r", formal<std::int64_t>);
      if (rs.empty()) break;  // 20 s and nothing: fails below
      batches.push_back(rs.size());
      got += rs.size();
      // Busy elsewhere for a while: the rest piles up meanwhile.
      if (batches.size() == 1) boost::this_fiber::sleep_for(100ms);
    }
  });
  f.spawn([&] {
    s.out("r", std::int64_t{0});                         // answers the collector's waiting request alone
    for (std::int64_t i = 1; i < 6; ++i) s.out("r", i);  // written while it is busy
  });
  f.join();
  CHECK(f.errors().empty());
  // The first tuple alone, then the five that piled up, in one request.
  CHECK(batches == std::vector<std::size_t>{1, 5});
  auto t0 = Clock::now();
  CHECK(s.in_many_for(10, 80ms, "r", formal<std::int64_t>).empty());
  CHECK(ms_since(t0) >= 70);
  auto leased =
      client.in_many_leased("collect", ts::detail::template_of("r", formal<std::int64_t>), 5, 50ms, 10s);
  CHECK(leased.empty());
}

TEST_CASE("FiberClient: many fibers interleaving requests each get their own replies") {
  ts::FiberClient client(fresh_server().endpoint());
  ts::FiberSpace s = client.space("mix");
  int wrong = 0, done = 0;
  Fibers f;
  for (std::int64_t id = 0; id < 20; ++id) {
    f.spawn([&, id] {
      for (std::int64_t i = 0; i < 50; ++i) {
        s.out("k", id, i);
        if (s.rd("k", id, formal<std::int64_t>).get<std::int64_t>(2) != i) ++wrong;
        std::int64_t v = -1;
        s.in("k", id, ts::bind(v));
        if (v != i) ++wrong;
        ++done;
      }
    });
  }
  f.join();
  CHECK(f.errors().empty());
  CHECK(wrong == 0);
  CHECK(done == 1000);
}

TEST_CASE("FiberClient: bounded waits return nullopt after their timeout") {
  ts::FiberClient client(fresh_server().endpoint());
  ts::FiberSpace s = client.space("timeouts");

  auto t0 = Clock::now();
  CHECK_FALSE(s.in_for(150ms, "nothing", formal<std::int64_t>));
  CHECK(ms_since(t0) >= 140);  // the server counts whole milliseconds

  t0 = Clock::now();
  CHECK_FALSE(s.rd_for(100ms, "nothing", formal<std::int64_t>));
  CHECK(ms_since(t0) >= 90);

  CHECK_FALSE(s.inp("nothing", formal<std::int64_t>));
  CHECK_FALSE(s.rdp("nothing", formal<std::int64_t>));

  // Fibers time out independently; none is answered with another's timeout.
  std::vector<std::int64_t> timed_out_after(5, -1);
  Fibers f;
  for (int i = 0; i < 5; ++i) {
    f.spawn([&, i] {
      auto start = Clock::now();
      if (!s.in_for(std::chrono::milliseconds(50 * (i + 1)), "nothing", i))
        timed_out_after[i] = ms_since(start);
    });
  }
  f.join();
  CHECK(f.errors().empty());
  for (int i = 0; i < 5; ++i) CHECK(timed_out_after[i] >= 50 * (i + 1) - 10);

  t0 = Clock::now();
  CHECK_FALSE(client.next_event(60ms));
  CHECK(ms_since(t0) >= 55);
}

TEST_CASE("FiberClient: the dispatcher does not burn a core while a reply is slow") {
  ts::FiberClient client(fresh_server().endpoint());
  auto cpu = [] {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) / 1e9;
  };
  double cpu0 = cpu();
  auto t0 = Clock::now();
  CHECK_FALSE(client.space("slow").in_for(400ms, "nothing", formal<std::int64_t>));
  double wall = std::chrono::duration<double>(Clock::now() - t0).count();
  double used = cpu() - cpu0;
  // Busy polling would use about all of `wall` (less only when descheduled);
  // the backed-off dispatcher uses a few percent.
  CHECK(used < 0.5 * wall);
  MESSAGE("thread CPU while waiting: " << used * 1e3 << " ms of " << wall * 1e3 << " ms");
}

TEST_CASE("FiberClient: take under a lease, ack it, and let another expire") {
  ts::FiberClient client(fresh_server().endpoint());
  ts::FiberSpace s = client.space("leases");

  s.out("task", 1);
  ts::Leased l = s.take(10s, "task", formal<std::int64_t>);
  CHECK(l.tuple == ts::Tuple::of("task", 1));
  CHECK(l.lease != 0);
  CHECK(s.stats()->leases == 1);
  s.renew(l, 20s);
  s.ack(l);
  CHECK(s.stats()->leases == 0);
  CHECK(s.stats()->tuples == 0);
  CHECK(error_code([&] { s.ack(l); }) == "unknown_lease");

  // An unacked lease returns its tuple when it ends.
  s.out("task", 2);
  std::int64_t id = 0;
  ts::Leased short_lease = s.take(100ms, "task", ts::bind(id));
  CHECK(id == 2);
  auto t0 = Clock::now();
  auto back = s.in_for(20s, "task", formal<std::int64_t>);
  REQUIRE(back);
  CHECK(back->get<std::int64_t>(1) == 2);
  CHECK(ms_since(t0) >= 50);  // not before the lease could have ended
  CHECK(error_code([&] { s.renew(short_lease, 1s); }) == "unknown_lease");

  CHECK_FALSE(s.take_for(20ms, 1s, "task", formal<std::int64_t>));
}

TEST_CASE("FiberClient: an error reply throws in the fiber that asked, others carry on") {
  ts::FiberClient client(fresh_server().endpoint());
  ts::FiberSpace s = client.space("errors");
  std::int64_t waited_for = -1;
  std::string acker_saw;
  int rounds = 0;
  Fibers f;
  f.spawn([&] { waited_for = s.in("w", formal<std::int64_t>).get<std::int64_t>(1); });
  f.spawn([&] {
    if (!eventually([&] { return waiters(client, "errors") == 1; })) return;
    acker_saw = error_code([&] { client.ack(987654321); });
  });
  f.spawn([&] {
    for (std::int64_t i = 0; i < 20; ++i) {
      s.out("r", i);
      s.in("r", i);
      ++rounds;
    }
  });
  f.spawn([&] {
    // Release the waiter only once the error has been delivered.
    if (eventually([&] { return !acker_saw.empty(); })) s.out("w", 5);
  });
  f.join();
  CHECK(f.errors().empty());
  CHECK(acker_saw == "unknown_lease");
  CHECK(waited_for == 5);
  CHECK(rounds == 20);
}

TEST_CASE("FiberClient: an unreadable request's error goes to that request, not to a parked in()") {
  ts::ServerOptions options;
  options.max_message_bytes = 1024;
  Fibers f;  // outlives the client, whose destructor frees a fiber left waiting
  ts::FiberClient client(fresh_server(options).endpoint());
  ts::FiberSpace s = client.space("big");
  std::int64_t waited_for = -1;
  f.spawn([&] { waited_for = s.in("w", formal<std::int64_t>).get<std::int64_t>(1); });
  REQUIRE(eventually([&] { return waiters(client, "big") == 1; }));
  // The server answers this with request id 0: it does not read the id.
  std::string big_saw;
  f.spawn([&] { big_saw = error_code([&] { s.out("blob", std::string(4096, 'x')); }); });
  REQUIRE(eventually([&] { return !big_saw.empty(); }));
  CHECK(big_saw == "too_large");
  s.out("w", 7);
  f.join();
  CHECK(f.errors().empty());
  CHECK(waited_for == 7);
}

TEST_CASE("FiberClient: watch events reach a fiber waiting in next_event") {
  ts::EmbeddedServer& server = fresh_server();
  ts::FiberClient client(server.endpoint());
  ts::FiberClient other(server.endpoint());
  ts::FiberSpace s = client.space("watched");
  ts::WatchId w = s.watch("ev", formal<std::int64_t>);
  std::vector<ts::WatchEvent> events;
  Fibers f;
  f.spawn([&] {
    for (int i = 0; i < 2; ++i)
      if (auto e = client.next_event(20s)) events.push_back(std::move(*e));
  });
  f.spawn([&] {
    ts::FiberSpace o = other.space("watched");
    o.out("ev", 1);
    o.out("unwatched", 1);
    o.in("ev", formal<std::int64_t>);
  });
  f.join();
  CHECK(f.errors().empty());
  REQUIRE(events.size() == 2);
  CHECK(events[0].watch == w);
  CHECK(events[0].kind == ts::WatchEventKind::Written);
  CHECK(events[0].space == "watched");
  CHECK(events[0].tuple == ts::Tuple::of("ev", 1));
  CHECK(events[1].kind == ts::WatchEventKind::Taken);
  CHECK(events[1].tuple == ts::Tuple::of("ev", 1));

  // An event that arrives while nobody waits is kept for the next caller.
  other.space("watched").out("ev", 2);
  auto e = client.next_event(20s);
  REQUIRE(e);
  CHECK(e->tuple == ts::Tuple::of("ev", 2));

  client.unwatch(w);
  CHECK(error_code([&] { client.unwatch(w); }) == "unknown_watch");
  other.space("watched").out("ev", 3);
  CHECK_FALSE(client.next_event(50ms));
}

TEST_CASE("FiberClient: eval runs fn on a fiber of this thread and writes its result") {
  ts::FiberClient client(fresh_server().endpoint());
  ts::FiberSpace s = client.space("eval");
  std::thread::id fn_thread;
  boost::fibers::fiber::id fn_fiber;
  auto done = s.eval([&] {
    fn_thread = std::this_thread::get_id();
    fn_fiber = boost::this_fiber::get_id();
    return ts::Tuple::of("result", 42);
  });
  done.get();
  CHECK(fn_thread == std::this_thread::get_id());
  CHECK(fn_fiber != boost::this_fiber::get_id());
  auto r = s.inp("result", formal<std::int64_t>);
  REQUIRE(r);
  CHECK(r->get<std::int64_t>(1) == 42);

  // fn may itself block on the space: it waits on its own fiber.
  auto square = s.eval([&] {
    std::int64_t x = s.in("input", formal<std::int64_t>).get<std::int64_t>(1);
    return ts::Tuple::of("square", x * x);
  });
  s.out("input", 7);
  square.get();
  CHECK(s.in_for(10s, "square", std::int64_t{49}));

  auto failing = s.eval([]() -> ts::Tuple { throw std::runtime_error("boom"); });
  CHECK_THROWS_WITH(failing.get(), "boom");
}

TEST_CASE("FiberClient: destroying the client wakes waiting fibers with closed") {
  ts::EmbeddedServer& server = fresh_server();
  ts::FiberClient observer(server.endpoint());
  auto client = std::make_unique<ts::FiberClient>(server.endpoint());
  std::string in_saw, event_saw;
  Fibers f;
  f.spawn([&] { in_saw = error_code([&] { client->space("d").in("never", formal<std::int64_t>); }); });
  f.spawn([&] { event_saw = error_code([&] { client->next_event(); }); });
  REQUIRE(eventually([&] { return waiters(observer, "d") == 1; }));
  auto late = client->space("d").eval([] { return ts::Tuple::of("late", 1); });
  client.reset();
  f.join();
  CHECK(f.errors().empty());
  CHECK(in_saw == "closed");
  CHECK(event_saw == "closed");
  CHECK(error_code([&] { late.get(); }) == "closed");
  // Nothing was written on the destroyed client's behalf.
  CHECK_FALSE(observer.space("d").inp("late", formal<std::int64_t>));
}

TEST_CASE("FiberClient: the constructor throws unreachable without blocking other fibers") {
  ts::ClientOptions options;
  options.connect_timeout = 200ms;
  int ticks = 0;
  bool stop = false;
  boost::fibers::fiber ticker([&] {
    while (!stop) {
      ++ticks;
      boost::this_fiber::sleep_for(1ms);
    }
  });
  auto t0 = Clock::now();
  // Nothing listens on port 1: ZeroMQ keeps retrying and no hello arrives.
  CHECK(error_code([&] { ts::FiberClient c("tcp://127.0.0.1:1", options); }) == "unreachable");
  CHECK(ms_since(t0) >= 190);
  CHECK(ticks > 0);
  stop = true;
  ticker.join();
}

TEST_CASE("FiberClient: the typed FiberSpace API over an in-process server") {
  ts::EmbeddedServer& server = fresh_server();
  ts::FiberClient client(server.endpoint());
  ts::FiberSpace s = client.space("typed");
  CHECK(s.name() == "typed");
  CHECK(&s.connection() == &client);
  CHECK(client.endpoint() == server.endpoint());
  s.out_many({ts::Tuple::of("row", 1, 1.5), ts::Tuple::of("row", 2, 2.5), ts::Tuple::of("row", 3, 3.5)});
  std::int64_t n = 0;
  double x = 0;
  s.rd("row", ts::bind(n), ts::bind(x));
  CHECK(n == 1);
  CHECK(x == 1.5);
  CHECK(s.rdp("row", 2, formal<double>));
  auto two = s.in_many(2, "row", formal<std::int64_t>, formal<double>);
  REQUIRE(two.size() == 2);
  CHECK(two[0] == ts::Tuple::of("row", 1, 1.5));
  CHECK(two[1] == ts::Tuple::of("row", 2, 2.5));
  CHECK(s.stats()->tuples == 1);
  auto all = client.stats();
  CHECK(std::any_of(all.begin(), all.end(), [](const ts::SpaceStats& st) { return st.name == "typed"; }));
  CHECK(client.remove("typed"));
  CHECK_FALSE(client.remove("typed"));
  CHECK_FALSE(client.stats("typed"));
}

TEST_CASE("FiberClient over TCP: fibers served by a Server on another thread") {
  const std::string endpoint = fresh_tcp_server().endpoints().at(0);
  ts::FiberClient client(endpoint);
  ts::FiberSpace s = client.space("tcp");
  std::vector<std::int64_t> got;
  Fibers takers;
  for (int i = 0; i < 20; ++i)
    takers.spawn([&] { got.push_back(s.in("n", formal<std::int64_t>).get<std::int64_t>(1)); });
  REQUIRE(eventually([&] { return waiters(client, "tcp") == 20; }));

  // A blocking Client on another thread writes them all at once.
  std::thread producer([&] {
    ts::Client c(endpoint);
    std::vector<ts::Tuple> batch;
    for (std::int64_t i = 0; i < 20; ++i) batch.push_back(ts::Tuple::of("n", i));
    c.space("tcp").out_many(batch);
  });
  takers.join();
  producer.join();
  CHECK(takers.errors().empty());
  std::sort(got.begin(), got.end());
  CHECK(got == iota(20));
  s.out("leftover", 1);
  CHECK(client.remove("tcp"));
}

TEST_CASE("FiberClient: rd_many, take_many and completion") {
  ts::FiberClient client(fresh_server().endpoint());
  ts::FiberSpace s = client.space("complete");
  for (int i = 0; i < 4; ++i) s.out("task", i);
  auto copies = s.rd_many(10, "task", formal<std::int64_t>);
  REQUIRE(copies.size() == 4);
  CHECK(copies[3] == ts::Tuple::of("task", 3));
  CHECK(s.stats()->tuples == 4);

  auto tasks = s.take_many(3, 30s, "task", formal<std::int64_t>);
  REQUIRE(tasks.size() == 3);
  CHECK(tasks[0].tuple == ts::Tuple::of("task", 0));
  CHECK(s.stats()->leases == 3);
  CHECK(s.complete(tasks[0], ts::Tuple::of("result", 0)));
  CHECK_FALSE(s.complete(tasks[0], ts::Tuple::of("result", 0)));  // not twice

  // Posted completions, one of them refused, from several fibers at once.
  s.ack(tasks[2]);
  Fibers fibers;
  for (int i : {1, 2})
    fibers.spawn([&, i] { s.complete_posted(tasks[i], ts::Tuple::of("result", std::int64_t{i})); });
  fibers.join();
  CHECK(fibers.errors().empty());
  client.flush();
  CHECK(client.take_lost_leases() == std::vector<ts::LeaseId>{tasks[2].lease});
  CHECK(client.take_lost_leases().empty());
  auto results = s.rd_many(10, "result", formal<std::int64_t>);
  REQUIRE(results.size() == 2);
  CHECK(results[0] == ts::Tuple::of("result", 0));
  CHECK(results[1] == ts::Tuple::of("result", 1));
  CHECK(s.stats()->leases == 0);

  // A posted completion's other errors are thrown by flush.
  client.complete_posted(tasks[1].lease, "", {});
  CHECK(error_code([&] { client.flush(); }) == "bad_request");
  CHECK(error_code([&] { client.flush(); }) == "no error");
  CHECK(error_code([&] {
          client.in_many_leased("complete", ts::Template({ts::Field::formal(ts::Type::Int)}), 1, 0ms, 0ms);
        }) == "bad_request");
}

TEST_CASE("FiberClient: the destructor waits for posted completions") {
  ts::EmbeddedServer& server = fresh_server();
  ts::FiberClient master(server.endpoint());
  master.space("posted").out("task", 1);
  {
    ts::FiberClient worker(server.endpoint());
    ts::Leased t = worker.space("posted").take(30s, "task", formal<std::int64_t>);
    worker.space("posted").complete_posted(t, ts::Tuple::of("result", 1));
  }
  auto r = master.space("posted").in_for(20s, "result", formal<std::int64_t>);
  REQUIRE(r);
  CHECK(*r == ts::Tuple::of("result", 1));
}
