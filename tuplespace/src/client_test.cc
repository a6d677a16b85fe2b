#include "piranha/tuplespace/client.h"

#include <doctest/doctest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <zmq.hpp>

#include "piranha/tuplespace/embedded.h"

using namespace piranha::ts;
using namespace std::chrono_literals;

TEST_CASE("a posted out is stored by the time the next call returns") {
  EmbeddedServer server;
  Client writer(server.endpoint());
  Client reader(server.endpoint());
  for (int i = 0; i < 3000; ++i) writer.space("s").out_posted("t", i);  // beyond the post window
  CHECK(writer.stats("s")->tuples == 3000);
  CHECK(reader.space("s").inp("t", 0).has_value());
  CHECK(reader.space("s").inp("t", 2999).has_value());
}

TEST_CASE("a client's destructor flushes its posted outs") {
  EmbeddedServer server;
  {
    Client writer(server.endpoint());
    writer.space("s").out_posted("last words", 1);
  }
  Client reader(server.endpoint());
  CHECK(reader.space("s").inp("last words", formal<std::int64_t>).has_value());
}

TEST_CASE("an error a posted out got is thrown by the next call, once") {
  EmbeddedServer server;
  Client c(server.endpoint());
  std::string long_name(kMaxSpaceNameBytes + 1, 'x');
  c.out_posted(long_name, Tuple::of("t", 1));  // the server rejects the space name
  try {
    c.stats();
    FAIL("the posted out's error was not reported");
  } catch (const TupleSpaceError& e) {
    CHECK(e.code() == Code::BadRequest);
    CHECK(std::string(e.what()).find("space name") != std::string::npos);
  }
  CHECK_NOTHROW(c.flush());
  CHECK(c.stats().empty());
}

TEST_CASE("a client of one pool refuses a server of another, or of none, and a client of none accepts any") {
  ServerOptions o;
  o.bind = {};
  o.pool_name = "lab";
  o.pool_id = "42ab";
  EmbeddedServer lab(o);
  EmbeddedServer unnamed;
  ClientOptions mine;
  mine.pool_from_environment = false;
  mine.pool = "lab";
  Client c(lab.endpoint(), mine);
  CHECK(c.pool_name() == "lab");
  CHECK(c.pool_id() == "42ab");
  mine.pool = "office";
  try {
    Client wrong(lab.endpoint(), mine);
    FAIL("a server of another pool was accepted");
  } catch (const TupleSpaceError& e) {
    CHECK(e.code() == Code::WrongPool);
    CHECK(std::string(e.what()).find("serves pool \"lab\", not this client's pool \"office\"") !=
          std::string::npos);
  }
  CHECK_THROWS_AS(Client(unnamed.endpoint(), mine), TupleSpaceError);
  ClientOptions any;
  any.pool_from_environment = false;
  Client c2(unnamed.endpoint(), any);
  CHECK(c2.pool_name().empty());
  Client c3(lab.endpoint(), any);
  CHECK(c3.pool_name() == "lab");
}

TEST_CASE("a client takes its pool from $PIRANHA_POOL when its options name none") {
  ServerOptions o;
  o.bind = {};
  o.pool_name = "lab";
  EmbeddedServer lab(o);
  ::setenv(kPoolEnv, "office", 1);
  CHECK_THROWS_AS(Client(lab.endpoint()), TupleSpaceError);
  ::setenv(kPoolEnv, "lab", 1);
  CHECK_NOTHROW(Client(lab.endpoint()));
  ::unsetenv(kPoolEnv);
}

TEST_CASE("a posted discard takes what it matches, in order with the posts before it") {
  EmbeddedServer server;
  Client c(server.endpoint());
  const Template one({Field::of(Value(std::string("beat"))), Field::of(Value(std::int64_t{1}))});
  const Template any({Field::of(Value(std::string("beat"))), Field::formal(Type::Int)});
  c.out_posted("s", Tuple::of("beat", 1));
  c.out_posted("s", Tuple::of("beat", 2));
  c.discard_posted("s", one);  // the tuple posted just before
  c.out_posted("s", Tuple::of("beat", 3));
  c.discard_posted("s", any, 1);  // the oldest left: 2
  const auto left = c.rd_many("s", any, 10);
  REQUIRE(left.size() == 1);
  CHECK(left[0] == Tuple::of("beat", 3));
  // Nothing to take is no error, and an error is reported as a discard's.
  c.discard_posted("s", one);
  CHECK_NOTHROW(c.flush());
  c.discard_posted(std::string(kMaxSpaceNameBytes + 1, 'x'), one);
  try {
    c.flush();
    FAIL("the posted discard's error was not reported");
  } catch (const TupleSpaceError& e) {
    CHECK(std::string(e.what()).find("discard (posted earlier)") != std::string::npos);
  }
}

TEST_CASE("a request over the server's size limit is refused before it is sent") {
  ServerOptions o;
  o.bind = {};
  o.max_message_bytes = 4096;
  EmbeddedServer server(o);
  Client c(server.endpoint());
  try {
    c.space("s").out("big", Blob(std::string(8192, 'b')));
    FAIL("no error");
  } catch (const TupleSpaceError& e) {
    CHECK(e.code() == Code::TooLarge);
  }
  c.space("s").out("small", 1);
  CHECK(c.stats("s")->tuples == 1);
}

TEST_CASE("formals bind into variables and typed tuples unpack") {
  EmbeddedServer server;
  Client c(server.endpoint());
  Space s = c.space("s");
  s.out("task", 7, 2.5, std::string("row"), Blob("\x01\x02"), true);
  std::int64_t id = 0;
  double x = 0;
  std::string row;
  Blob b;
  bool flag = false;
  s.rd("task", bind(id), bind(x), bind(row), bind(b), bind(flag));
  CHECK(id == 7);
  CHECK(x == 2.5);
  CHECK(row == "row");
  CHECK(b == Blob("\x01\x02"));
  CHECK(flag);
  auto [tag, n, d, r, bl, f] =
      s.in("task", formal<std::int64_t>, formal<double>, formal<std::string>, formal<Blob>, formal<bool>)
          .as<std::string, std::int64_t, double, std::string, Blob, bool>();
  CHECK(tag == "task");
  CHECK(n == 7);
  CHECK_FALSE(
      s.inp("task", formal<std::int64_t>, formal<double>, formal<std::string>, formal<Blob>, formal<bool>));
}

TEST_CASE("eval runs on another thread and outs its result") {
  EmbeddedServer server;
  Client c(server.endpoint());
  Space s = c.space("s");
  auto done = s.eval([] { return Tuple::of("answer", 42); });
  std::int64_t v = 0;
  s.in("answer", bind(v));
  CHECK(v == 42);
  done.get();
}

TEST_CASE("a client that cannot reach a server says so") {
  ClientOptions o;
  o.connect_timeout = std::chrono::milliseconds(200);
  try {
    Client c("inproc://nobody-here", o);
    FAIL("connected to nothing");
  } catch (const TupleSpaceError& e) {
    CHECK(e.code() == Code::Unreachable);
  }
}

TEST_CASE("rd_many copies matching tuples, oldest first, and leaves them") {
  EmbeddedServer server;
  Client c(server.endpoint());
  Space sys = c.space("sys");
  sys.out("job", 1, std::string("a"));
  sys.out("assign", 0, 1);
  sys.out("job", 2, std::string("b"));
  auto jobs = sys.rd_many(10, "job", formal<std::int64_t>, formal<std::string>);
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0] == Tuple::of("job", 1, "a"));
  CHECK(jobs[1] == Tuple::of("job", 2, "b"));
  CHECK(sys.rd_many(1, "job", formal<std::int64_t>, formal<std::string>).size() == 1);
  CHECK(sys.rd_many(10, "assign", formal<std::int64_t>, formal<std::int64_t>).size() == 1);
  CHECK(sys.stats()->tuples == 3);
  CHECK(c.rd_many("nowhere", Template({Field::formal(Type::Int)}), 5).empty());
  CHECK_FALSE(c.stats("nowhere").has_value());
  CHECK_THROWS_WITH_AS(c.rd_many("sys", Template({Field::formal(Type::Int)}), 0),
                       doctest::Contains("rd_many: max must be 1..1000000"), TupleSpaceError);
}

TEST_CASE("rd_many_each answers as rd_many of each template, in order, with watch events kept") {
  EmbeddedServer server;
  Client c(server.endpoint());
  Client writer(server.endpoint());
  const Template jobs({Field::of(Value(std::string("job"))), Field::formal(Type::Int)});
  const Template stats({Field::of(Value(std::string("stat"))), Field::formal(Type::Int)});
  const Template none({Field::of(Value(std::string("none"))), Field::formal(Type::Int)});
  const WatchId watch = c.watch("sys", jobs);
  writer.out_many("sys", {Tuple::of("job", 1), Tuple::of("stat", 10), Tuple::of("job", 2),
                          Tuple::of("stat", 20), Tuple::of("stat", 30)});
  writer.flush();
  const auto each = c.rd_many_each("sys", {stats, none, jobs, stats}, 2);
  REQUIRE(each.size() == 4);
  CHECK(each[0] == c.rd_many("sys", stats, 2));
  CHECK(each[0] == std::vector<Tuple>{Tuple::of("stat", 10), Tuple::of("stat", 20)});
  CHECK(each[1].empty());
  CHECK(each[2] == std::vector<Tuple>{Tuple::of("job", 1), Tuple::of("job", 2)});
  CHECK(each[3] == each[0]);
  CHECK(c.rd_many_each("sys", {}, 5).empty());
  // The events that came with the answers are kept for next_event.
  std::vector<Tuple> written;
  while (auto e = c.next_event(0ms)) {
    CHECK(e->watch == watch);
    written.push_back(e->tuple);
  }
  CHECK(written == std::vector<Tuple>{Tuple::of("job", 1), Tuple::of("job", 2)});
  // A refused request throws rd_many's error; the answers after it are
  // dropped and the next call gets its own.
  CHECK_THROWS_WITH_AS(c.rd_many_each("sys", {jobs, stats}, 0),
                       doctest::Contains("rd_many: max must be 1..1000000"), TupleSpaceError);
  CHECK(c.rd_many("sys", jobs, 10).size() == 2);
  CHECK(c.rd_many_each("sys", {jobs}, 1) == std::vector<std::vector<Tuple>>{{Tuple::of("job", 1)}});
}

TEST_CASE("take_many takes several tasks, each under its own lease") {
  EmbeddedServer server;
  Client worker(server.endpoint());
  Client other(server.endpoint());
  Space jobs = worker.space("jobs");
  for (int i = 0; i < 5; ++i) jobs.out("task", i);
  auto got = jobs.take_many(3, std::chrono::milliseconds(300), "task", formal<std::int64_t>);
  REQUIRE(got.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(got[i].tuple == Tuple::of("task", i));
    CHECK(got[i].lease != 0);
  }
  CHECK(worker.stats("jobs")->leases == 3);
  jobs.ack(got[0]);
  CHECK(jobs.complete(got[1], Tuple::of("result", 1)));
  // got[2] is neither acked nor completed: it returns when its lease ends.
  auto back = other.space("jobs").in_for(std::chrono::seconds(20), "task", 2);
  REQUIRE(back.has_value());
  CHECK_FALSE(jobs.complete(got[2], Tuple::of("result", 2)));
  CHECK_FALSE(other.space("jobs").rdp("result", 2).has_value());
  CHECK(other.space("jobs").rdp("result", 1).has_value());
  CHECK(jobs.take_many(10, std::chrono::seconds(1), "nothing", formal<std::int64_t>).empty());
  CHECK_THROWS_WITH_AS(worker.in_many_leased("jobs", Template({Field::formal(Type::Int)}), 3, 0ms, 0ms),
                       doctest::Contains("lease must be > 0"), TupleSpaceError);
}

namespace {

// Waits until `space` on the server holds `n` parked requests, as `c` sees
// it (another client than the one that parked them): true within 20 s.
bool parked_in(Client& c, std::string_view space, std::uint64_t n) {
  for (auto end = std::chrono::steady_clock::now() + std::chrono::seconds(20);
       std::chrono::steady_clock::now() < end; std::this_thread::sleep_for(std::chrono::milliseconds(1)))
    if (auto st = c.stats(space); st && st->waiters == n) return true;
  return false;
}

}  // namespace

TEST_CASE("in_many_wait takes what is there at once, or else waits for the first tuple written") {
  EmbeddedServer server;
  Client writer(server.endpoint());
  Client master(server.endpoint());
  Space out = writer.space("results");
  Space in = master.space("results");
  for (int i = 0; i < 3; ++i) out.out("r", i);
  writer.flush();  // outs are posted: all three stored before the master asks
  auto now = in.in_many_wait(10, "r", formal<std::int64_t>);
  REQUIRE(now.size() == 3);
  CHECK(now[2] == Tuple::of("r", 2));

  // Nothing there: it waits, and is answered by the first tuple written,
  // alone; what follows stays for the next request. (20 s rather than for
  // ever in the other threads, so that a failure ends the test.)
  auto waiting =
      std::async(std::launch::async, [&] { return in.in_many_for(10, 20s, "r", formal<std::int64_t>); });
  REQUIRE(parked_in(writer, "results", 1));
  CHECK(waiting.wait_for(0s) == std::future_status::timeout);
  out.out_many({Tuple::of("r", 7), Tuple::of("r", 8)});
  REQUIRE(waiting.wait_for(20s) == std::future_status::ready);
  auto first = waiting.get();
  REQUIRE(first.size() == 1);
  CHECK(first[0] == Tuple::of("r", 7));
  CHECK(in.in_many_wait(10, "r", formal<std::int64_t>) == std::vector<Tuple>{Tuple::of("r", 8)});

  // A bounded wait that runs out answers nothing, not an error.
  auto started = std::chrono::steady_clock::now();
  CHECK(in.in_many_for(10, 60ms, "r", formal<std::int64_t>).empty());
  CHECK(std::chrono::steady_clock::now() - started >= 50ms);  // the server keeps whole milliseconds
  CHECK(master.stats("results")->waiters == 0);

  // Under leases: the tuple comes with its own lease.
  auto leased = std::async(std::launch::async, [&] {
    return master.in_many_leased("results", detail::template_of("r", formal<std::int64_t>), 5, 20s, 30s);
  });
  REQUIRE(parked_in(writer, "results", 1));
  out.out("r", 9);
  REQUIRE(leased.wait_for(20s) == std::future_status::ready);
  auto held = leased.get();
  REQUIRE(held.size() == 1);
  CHECK(held[0].tuple == Tuple::of("r", 9));
  CHECK(held[0].lease != 0);
  CHECK(master.stats("results")->leases == 1);
  CHECK(master.space("results").complete(held[0], Tuple::of("done", 9)));
  CHECK(
      master.in_many_leased("results", detail::template_of("r", formal<std::int64_t>), 5, 50ms, 30s).empty());

  // The space removed under a waiting in_many ends it, as it ends an in.
  auto removed =
      std::async(std::launch::async, [&] { return in.in_many_for(10, 20s, "r", formal<std::int64_t>); });
  REQUIRE(parked_in(writer, "results", 1));
  writer.remove("results");
  REQUIRE(removed.wait_for(20s) == std::future_status::ready);
  CHECK_THROWS_WITH_AS(removed.get(), doctest::Contains("space_removed"), TupleSpaceError);
}

TEST_CASE("with safe takes, in_many_wait waits, then takes each tuple exactly once") {
  EmbeddedServer server;
  Client writer(server.endpoint());
  ClientOptions o;
  o.safe_takes = true;
  Client master(server.endpoint(), o);
  Space in = master.space("results");
  auto waiting =
      std::async(std::launch::async, [&] { return in.in_many_for(100, 20s, "r", formal<std::int64_t>); });
  REQUIRE(parked_in(writer, "results", 1));
  writer.space("results").out("r", 1);
  REQUIRE(waiting.wait_for(20s) == std::future_status::ready);
  CHECK(waiting.get() == std::vector<Tuple>{Tuple::of("r", 1)});
  for (int i = 2; i < 6; ++i) writer.space("results").out("r", i);
  writer.flush();
  CHECK(in.in_many_wait(100, "r", formal<std::int64_t>).size() == 4);
  CHECK(in.in_many_for(100, 30ms, "r", formal<std::int64_t>).empty());
  auto stats = master.stats("results");
  REQUIRE(stats.has_value());
  CHECK(stats->tuples == 0);
  CHECK(stats->leases == 0);  // every safe take's lease was completed
}

TEST_CASE("with safe outs, out and out_many write each tuple once and leave no lease or token") {
  EmbeddedServer server;
  ClientOptions o;
  o.safe_outs = true;
  Client feeder(server.endpoint(), o);
  Client reader(server.endpoint());
  feeder.space("tasks").out("task", 1);
  feeder.out_many("tasks", {Tuple::of("task", 2), Tuple::of("task", 3)});
  feeder.out_many("tasks", {});
  CHECK(reader.space("tasks").rd_many(10, "task", formal<std::int64_t>) ==
        std::vector<Tuple>{Tuple::of("task", 1), Tuple::of("task", 2), Tuple::of("task", 3)});
  auto stats = reader.stats("tasks");
  REQUIRE(stats.has_value());
  CHECK(stats->leases == 0);
  // The tokens went to the client's own space and were taken by the
  // completions that wrote the tuples: it holds none, and no lease.
  std::size_t token_spaces = 0, tokens = 0, leases = 0;
  for (const SpaceStats& st : reader.stats())
    if (st.name.rfind("_taken.", 0) == 0) {
      ++token_spaces;
      tokens += st.tuples;
      leases += st.leases;
    }
  CHECK(token_spaces == 1);
  CHECK(tokens == 0);
  CHECK(leases == 0);
}

TEST_CASE("complete ends the lease and writes the results as one step") {
  EmbeddedServer server;
  Client worker(server.endpoint());
  Client thief(server.endpoint());
  Space jobs = worker.space("jobs");
  jobs.out("task", 7);
  Leased task = jobs.take(std::chrono::seconds(30), "task", formal<std::int64_t>);

  // Only the holder may complete; a refused completion writes nothing.
  CHECK_FALSE(thief.complete(task.lease, "results", {Tuple::of("result", 7, 0.0)}));
  CHECK_FALSE(thief.stats("results").has_value());

  CHECK(jobs.complete(task, {Tuple::of("result", 7, 49.0), Tuple::of("log", 7)}));
  CHECK(worker.stats("jobs")->leases == 0);
  auto results = worker.space("jobs").rd_many(10, "result", formal<std::int64_t>, formal<double>);
  REQUIRE(results.size() == 1);
  CHECK(results[0] == Tuple::of("result", 7, 49.0));
  CHECK(worker.space("jobs").rdp("log", 7).has_value());

  // Completing twice is refused: the result is there exactly once.
  CHECK_FALSE(jobs.complete(task, Tuple::of("result", 7, 49.0)));
  CHECK(worker.space("jobs").rd_many(10, "result", formal<std::int64_t>, formal<double>).size() == 1);
  // Other errors still throw.
  CHECK_THROWS_WITH_AS(worker.complete(task.lease, "", {}), doctest::Contains("space name"), TupleSpaceError);
}

TEST_CASE("a completion after the lease expired writes nothing") {
  EmbeddedServer server;
  Client worker(server.endpoint());
  Client master(server.endpoint());
  worker.space("jobs").out("task", 1);
  Leased task = worker.space("jobs").take(std::chrono::milliseconds(50), "task", formal<std::int64_t>);
  // Another worker picks the task up once the lease has ended and finishes it.
  Leased redo = master.space("jobs").take(std::chrono::seconds(30), "task", 1);
  CHECK(master.space("jobs").complete(redo, Tuple::of("result", 1)));
  // The stale worker's completion is refused.
  CHECK_FALSE(worker.space("jobs").complete(task, Tuple::of("result", 1)));
  CHECK(master.space("jobs").rd_many(10, "result", formal<std::int64_t>).size() == 1);
}

TEST_CASE("posted completions: accepted ones are written, refused ones are reported") {
  EmbeddedServer server;
  Client worker(server.endpoint());
  Client other(server.endpoint());
  Space jobs = worker.space("jobs");
  for (int i = 0; i < 4; ++i) jobs.out("task", i);
  auto tasks = jobs.take_many(4, std::chrono::seconds(30), "task", formal<std::int64_t>);
  REQUIRE(tasks.size() == 4);
  jobs.ack(tasks[1]);  // so its completion will be refused
  for (const Leased& t : tasks) jobs.complete_posted(t, Tuple::of("result", t.tuple.get<std::int64_t>(1)));
  jobs.complete_posted(tasks[3], std::vector<Tuple>{Tuple::of("result", 3)});  // a second time
  // The next call returns only after the server handled them all.
  CHECK(worker.stats("jobs")->leases == 0);
  auto lost = worker.take_lost_leases();
  CHECK(lost == std::vector<LeaseId>{tasks[1].lease, tasks[3].lease});
  CHECK(worker.take_lost_leases().empty());
  auto results = other.space("jobs").rd_many(10, "result", formal<std::int64_t>);
  REQUIRE(results.size() == 3);
  CHECK(results[0] == Tuple::of("result", 0));
  CHECK(results[1] == Tuple::of("result", 2));
  CHECK(results[2] == Tuple::of("result", 3));
}

TEST_CASE("a posted completion of several leases writes all or nothing, and a refusal reports every lease") {
  EmbeddedServer server;
  Client worker(server.endpoint());
  Space jobs = worker.space("jobs");
  for (int i = 0; i < 5; ++i) jobs.out("task", i);
  auto tasks = jobs.take_many(5, std::chrono::seconds(30), "task", formal<std::int64_t>);
  REQUIRE(tasks.size() == 5);
  worker.complete_all_posted({tasks[0].lease, tasks[1].lease}, "jobs",
                             {Tuple::of("result", 0), Tuple::of("result", 1)});
  jobs.ack(tasks[3]);  // so the next batch is refused whole
  worker.complete_all_posted({tasks[2].lease, tasks[3].lease, tasks[4].lease}, "jobs",
                             {Tuple::of("result", 2)});
  worker.flush();
  CHECK(worker.take_lost_leases() == std::vector<LeaseId>{tasks[2].lease, tasks[3].lease, tasks[4].lease});
  CHECK(jobs.rd_many(10, "result", formal<std::int64_t>) ==
        std::vector<Tuple>{Tuple::of("result", 0), Tuple::of("result", 1)});
  // The refused batch ended none of its leases: the held ones complete one by one.
  CHECK(jobs.complete(tasks[2], Tuple::of("result", 2)));
  CHECK_FALSE(jobs.complete(tasks[3], Tuple::of("result", 3)));
  CHECK(jobs.complete(tasks[4], Tuple::of("result", 4)));
  CHECK(worker.stats("jobs")->leases == 0);
  CHECK_THROWS_AS(worker.complete_all_posted({}, "jobs", {}), TupleSpaceError);
}

TEST_CASE("a prefetch takes a tuple under a lease without waiting, and hands it over later") {
  EmbeddedServer server;
  Client worker(server.endpoint());
  Client other(server.endpoint());
  Template task = detail::template_of(std::string("task"), formal<std::int64_t>);
  CHECK_FALSE(worker.prefetching());
  CHECK_FALSE(worker.take_prefetched(std::chrono::seconds(5)).has_value());  // none outstanding

  worker.prefetch("jobs", task, 30s);  // nothing there: answered "nothing" at once
  CHECK(worker.prefetching());
  CHECK_THROWS_AS(worker.prefetch("jobs", task, 30s), std::logic_error);
  worker.flush();  // answered before the task below is written
  other.space("jobs").out("task", 1);
  other.flush();
  CHECK_FALSE(worker.take_prefetched(std::chrono::seconds(5)).has_value());
  CHECK_FALSE(worker.prefetching());

  worker.prefetch("jobs", task, 30s);
  worker.space("jobs").out("note", 1);  // other requests go on meanwhile
  CHECK(worker.space("jobs").rdp("note", formal<std::int64_t>).has_value());
  auto got = worker.take_prefetched(std::chrono::seconds(5));
  REQUIRE(got.has_value());
  CHECK(got->tuple == Tuple::of("task", 1));
  CHECK(worker.stats("jobs")->leases == 1);
  CHECK(worker.complete(got->lease, "jobs", {Tuple::of("result", 1)}));

  // Not taken before the client closes: the tuple goes back.
  {
    Client quitter(server.endpoint());
    other.space("jobs").out("task", 2);
    other.flush();
    quitter.prefetch("jobs", task, 30s);
    quitter.flush();
  }
  auto back = other.space("jobs").in_for(std::chrono::seconds(20), "task", formal<std::int64_t>);
  REQUIRE(back.has_value());
  CHECK(*back == Tuple::of("task", 2));
  CHECK_THROWS_AS(worker.prefetch("jobs", task, 0ms), TupleSpaceError);
}

TEST_CASE("flush waits for posted completions, other errors are thrown, refusals are not") {
  EmbeddedServer server;
  Client worker(server.endpoint());
  worker.space("jobs").out("task", 1);
  Leased task = worker.space("jobs").take(std::chrono::seconds(30), "task", formal<std::int64_t>);
  worker.complete_posted(task.lease + 100, "jobs", {Tuple::of("result", 0)});  // never granted
  CHECK_NOTHROW(worker.flush());
  CHECK(worker.take_lost_leases() == std::vector<LeaseId>{task.lease + 100});

  worker.complete_posted(task.lease, std::string(kMaxSpaceNameBytes + 1, 'x'), {Tuple::of("result", 1)});
  try {
    worker.flush();
    FAIL("the posted completion's error was not reported");
  } catch (const TupleSpaceError& e) {
    CHECK(e.code() == Code::BadRequest);
    CHECK(std::string(e.what()).find("complete (posted earlier)") != std::string::npos);
  }
  CHECK(worker.take_lost_leases().empty());
  CHECK(worker.stats("jobs")->leases == 1);  // the bad request changed nothing
  CHECK(worker.complete(task.lease, "jobs", {Tuple::of("result", 1)}));
}

TEST_CASE("a client's destructor waits for its posted completions") {
  EmbeddedServer server;
  Client master(server.endpoint());
  master.space("jobs").out("task", 5);
  {
    Client worker(server.endpoint());
    Leased t = worker.space("jobs").take(std::chrono::seconds(30), "task", formal<std::int64_t>);
    worker.space("jobs").complete_posted(t, Tuple::of("result", 5));
  }
  auto r = master.space("jobs").in_for(std::chrono::seconds(20), "result", formal<std::int64_t>);
  REQUIRE(r.has_value());
  CHECK(*r == Tuple::of("result", 5));
  CHECK_FALSE(master.space("jobs").inp("task", formal<std::int64_t>).has_value());
}

TEST_CASE("an interrupt ends the pause between two connection attempts at once") {
  // A peer that takes the connection and the client's hello, then closes:
  // the client was connected and dropped at once, and pauses (here 20 s)
  // before it tries again. The interrupt must end the pause, as it ends
  // every other wait of the constructor (ClientOptions::interrupt_fd).
  // Were the drop not seen within the half second below, the interrupt
  // would end the wait for the hello's answer instead: the same outcome.
  zmq::context_t ctx;
  auto peer = std::make_unique<zmq::socket_t>(ctx, zmq::socket_type::router);
  peer->set(zmq::sockopt::linger, 0);
  peer->set(zmq::sockopt::rcvtimeo, 10000);
  peer->bind("tcp://127.0.0.1:*");
  const std::string endpoint = peer->get(zmq::sockopt::last_endpoint);
  struct Interrupt {
    int fd = ::eventfd(0, EFD_CLOEXEC);
    void fire() const {
      std::uint64_t one = 1;
      [[maybe_unused]] auto n = ::write(fd, &one, sizeof one);
    }
    ~Interrupt() { ::close(fd); }
  } interrupt;
  REQUIRE(interrupt.fd >= 0);
  ClientOptions o;
  o.curve_from_environment = false;
  o.interrupt_fd = interrupt.fd;
  o.connect_timeout = std::chrono::seconds(40);
  o.reconnect_backoff = o.reconnect_backoff_max = std::chrono::seconds(20);
  auto outcome = std::async(std::launch::async, [&]() -> std::string {
    try {
      Client c(endpoint, o);
      return "connected";
    } catch (const TupleSpaceError& e) {
      return std::string(code_to_wire(e.code()));
    }
  });
  // However the test ends, the interrupt is written before the future's
  // destructor waits for the client, and the fd closed after.
  struct FireOnExit {
    const Interrupt& interrupt;
    ~FireOnExit() { interrupt.fire(); }
  } fire_on_exit{interrupt};
  zmq::message_t id, hello;
  CHECK(peer->recv(id));
  CHECK(peer->recv(hello));
  peer.reset();  // the connection drops; the client pauses
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  interrupt.fire();
  // At once; 10 s of patience tells "at once" from "after the pause".
  CHECK(outcome.wait_for(std::chrono::seconds(10)) == std::future_status::ready);
  CHECK(outcome.get() == "interrupted");  // waits out the pause when the check above failed
}
