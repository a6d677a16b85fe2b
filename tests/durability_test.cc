// A durable server (`piranha ts serve --data DIR`) killed and restarted, in
// the manner of LevelDB's fault_injection_test.cc: real processes, SIGKILL at
// random points under load, a log damaged on purpose. What was acknowledged
// must come back, and nothing that was never written; a torn last write is
// moved aside and reported, any other damage (a flipped bit in a length or in
// the acknowledged last record, a file cut to half) stops the server unless
// it is told to salvage. Leases do not survive a restart: their tuples come back
// and the old lease ids are refused.
#include <doctest/doctest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>

#include "harness.h"

namespace piranha::it {
namespace {

std::vector<std::string> data_flags(const Scratch& dir, std::vector<std::string> more = {}) {
  std::vector<std::string> f = {"--data", dir.dir + "/data"};
  f.insert(f.end(), more.begin(), more.end());
  return f;
}

std::string log_path(const Scratch& dir) {
  return dir.dir + "/data/tuples.log";
}

// The ("n", ?int) tuples in the space, with how often each occurs.
std::map<std::int64_t, int> numbers_in(ts::Client& c) {
  std::map<std::int64_t, int> seen;
  for (const auto& t : c.space("log").rd_many(1'000'000, "n", ts::formal<std::int64_t>))
    ++seen[t.get<std::int64_t>(1)];
  return seen;
}

// Writes 0..count-1 as ("n", i), each acknowledged on its own.
void write_numbers(ts::Client& c, std::int64_t count) {
  for (std::int64_t i = 0; i < count; ++i) {
    c.space("log").out("n", i);
    c.flush();
  }
}

void kill_server(ServerProcess& s) {
  s.process().signal(SIGKILL);
  REQUIRE(s.process().wait() == 128 + SIGKILL);
}

// A durable server in `dir` given 0..count-1, one log record each (every out
// is acknowledged before the next), then killed.
void write_numbers_and_kill(const Scratch& dir, std::int64_t count) {
  ServerProcess server(data_flags(dir));
  ts::Client c(server.endpoint());
  write_numbers(c, count);
  kill_server(server);
}

// Kills `server` and restarts it on `flags` (the same endpoint and data),
// until `done` or `max_kills` kills, each kill landing 10-150 ms (drawn from
// `seed`) after `progress()` grew since the restart before: every kill
// lands while the client is at work. Returns how many kills there were.
int kill_while_busy(std::unique_ptr<ServerProcess>& server, const std::vector<std::string>& flags,
                    const std::atomic<bool>& done, int max_kills, std::uint32_t seed,
                    const std::function<std::int64_t()>& progress) {
  std::mt19937 rng(seed);
  int kills = 0;
  while (!done.load() && kills < max_kills) {
    const std::int64_t before = progress();
    REQUIRE(wait_until([&] { return done.load() || progress() > before; }, 60s));
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(10, 150)(rng)));
    if (done.load()) break;
    kill_server(*server);
    ++kills;
    server = std::make_unique<ServerProcess>(flags);
  }
  return kills;
}

// Checks that `seen` (each number with how often it was seen) holds each of
// 0..count-1 exactly once.
void check_each_once(const std::map<std::int64_t, int>& seen, std::int64_t count) {
  CHECK(static_cast<std::int64_t>(seen.size()) == count);
  CHECK((seen.empty() || (seen.begin()->first == 0 && seen.rbegin()->first == count - 1)));
  int twice = 0;
  for (const auto& [n, times] : seen) twice += times > 1;
  CHECK(twice == 0);
}

// Runs `piranha ts serve` expecting it to refuse to start; returns its stderr.
std::string refused_start(const std::vector<std::string>& flags) {
  std::vector<std::string> argv = {bin("piranha"), "ts", "serve", "--bind", "tcp://127.0.0.1:*"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  Process p(argv);
  auto rc = p.wait(30s);
  REQUIRE_MESSAGE(rc.has_value(), "the server started on a damaged log:\n", p.err());
  CHECK(*rc != 0);
  return p.err();
}

// The offsets of the log's records, walked by their headers (format 2: a
// 24-byte file header, then records of a 12-byte header and a payload whose
// length is the header's bytes 4..7).
std::vector<std::uint64_t> record_offsets(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::uint64_t> at;
  for (std::uint64_t o = 24; o + 12 <= file.size();) {
    at.push_back(o);
    std::uint64_t len = 0;
    for (int i = 0; i < 4; ++i) len |= std::uint64_t{static_cast<unsigned char>(file[o + 4 + i])} << (8 * i);
    o += 12 + len;
  }
  return at;
}

void flip_byte(const std::string& path, std::uint64_t offset, char mask = 0x5A) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  REQUIRE(f.good());
  f.seekg(static_cast<std::streamoff>(offset));
  char b = 0;
  f.read(&b, 1);
  b = static_cast<char>(b ^ mask);
  f.seekp(static_cast<std::streamoff>(offset));
  f.write(&b, 1);
}

}  // namespace

TEST_CASE("a server without --data keeps nothing: restarted, it is empty") {
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  {
    ServerProcess server({"--bind", endpoint});
    ts::Client c(server.endpoint());
    write_numbers(c, 10);
    kill_server(server);
  }
  ServerProcess server({"--bind", endpoint});
  ts::Client c(server.endpoint());
  CHECK(numbers_in(c).empty());
  CHECK(c.stats().empty());
}

TEST_CASE("every tuple comes back after a clean stop and after SIGKILL") {
  Scratch dir;
  {
    ServerProcess server(data_flags(dir));
    ts::Client c(server.endpoint());
    write_numbers(c, 100);
    c.space("other").out("x", "y");
    c.space("log").in("n", 7);  // taken: gone for good
    kill_server(server);
  }
  ServerProcess server(data_flags(dir));
  ts::Client c(server.endpoint());
  auto seen = numbers_in(c);
  INFO("server log:\n", server.log());
  CHECK(seen.size() == 99);
  CHECK(seen.count(7) == 0);
  for (auto& [n, times] : seen) CHECK(times == 1);
  CHECK(stats_of(c, "other").tuples == 1);
  CHECK(server.log().find("recovered 100 tuples from") != std::string::npos);

  SUBCASE("a removed space stays removed") {
    REQUIRE(c.remove("other"));
    server.process().signal(SIGTERM);
    REQUIRE(server.process().wait() == 0);
    ServerProcess again(data_flags(dir));
    ts::Client c2(again.endpoint());
    CHECK(stats_of(c2, "other").tuples == 0);
    CHECK(numbers_in(c2).size() == 99);
  }
}

TEST_CASE("SIGKILL at random points under load loses no acknowledged change and invents none") {
  Scratch dir;
  std::mt19937 rng(std::random_device{}());
  constexpr int kRounds = 6, kWriters = 2;
  constexpr std::int64_t kPerWriter = 1'000'000;
  std::set<std::int64_t> wrote, took, in_flight;
  auto started = Clock::now();
  for (int round = 0; round < kRounds; ++round) {
    std::vector<std::string> flags = data_flags(dir, {"--fsync", round % 2 ? "everysec" : "always"});
    ServerProcess server(flags);
    std::vector<std::unique_ptr<Process>> writers;
    for (int w = 0; w < kWriters; ++w) {
      std::int64_t first = (round * kWriters + w) * kPerWriter;
      writers.push_back(std::make_unique<Process>(
          peer_argv(server.endpoint(), {"write", "log", std::to_string(first), std::to_string(kPerWriter)})));
    }
    for (auto& w : writers) REQUIRE_MESSAGE(w->wait_for_out("wrote"), w->err());
    std::this_thread::sleep_for(std::chrono::milliseconds(std::uniform_int_distribution<int>(10, 400)(rng)));
    kill_server(server);
    for (auto& w : writers) {
      w->signal(SIGKILL);
      w->wait();
      std::istringstream lines(w->out());
      std::string what;
      std::int64_t n = -1, last = -1;
      bool last_took = false;
      while (lines >> what >> n) {
        (what == "wrote" ? wrote : took).insert(n);
        last = n;
        last_took = what == "took";
      }
      // The request in flight at the kill may or may not have been applied.
      if (last >= 0 && !last_took && last % 3 == 0) in_flight.insert(last);  // its take
      in_flight.insert(last + 1);                                            // the next out
    }
  }
  ServerProcess server(data_flags(dir));
  ts::Client c(server.endpoint());
  auto seen = numbers_in(c);
  INFO("server log:\n", server.log());
  MESSAGE(kRounds, " kills, ", wrote.size(), " acknowledged writes, ", took.size(), " acknowledged takes, ",
          seen.size(), " tuples after recovery, ", ms_since(started), " ms");
  REQUIRE(wrote.size() > 0);
  for (std::int64_t n : wrote)
    if (!took.count(n) && !in_flight.count(n))
      CHECK_MESSAGE(seen.count(n) == 1, "acknowledged ", n, " is missing");
  for (std::int64_t n : took) CHECK_MESSAGE(seen.count(n) == 0, "taken ", n, " is back");
  for (auto& [n, times] : seen) {
    CHECK_MESSAGE(times == 1, n, " is there ", times, " times");
    CHECK_MESSAGE((wrote.count(n) || in_flight.count(n)), n, " was never written");
  }
}

TEST_CASE("a torn last write is moved aside and reported, and the rest is recovered") {
  Scratch dir;
  write_numbers_and_kill(dir, 10);
  auto size = std::filesystem::file_size(log_path(dir));
  std::uint64_t last = record_offsets(log_path(dir)).back();
  std::filesystem::resize_file(log_path(dir), size - 3);

  ServerProcess server(data_flags(dir));
  ts::Client c(server.endpoint());
  auto seen = numbers_in(c);
  INFO("server log:\n", server.log());
  CHECK(seen.size() == 9);
  CHECK(seen.count(9) == 0);
  CHECK(server.log().find(log_path(dir) + ": offset " + std::to_string(last) + ": ") != std::string::npos);
  CHECK(server.log().find("torn last write") != std::string::npos);
  CHECK(std::filesystem::file_size(log_path(dir) + ".dropped-" + std::to_string(last)) == size - 3 - last);
  // The server goes on: new writes land after the cut and survive a restart.
  c.space("log").out("n", 100);
  c.flush();
  kill_server(server);
  ServerProcess again(data_flags(dir));
  ts::Client c2(again.endpoint());
  CHECK(numbers_in(c2).size() == 10);
  CHECK(again.log().find("torn last write") == std::string::npos);
}

TEST_CASE("a flipped bit in the acknowledged last record is damage after SIGKILL, not a torn write") {
  Scratch dir;
  write_numbers_and_kill(dir, 100);  // each acknowledged after its fdatasync
  std::uint64_t last = record_offsets(log_path(dir)).back();
  flip_byte(log_path(dir), std::filesystem::file_size(log_path(dir)) - 1);
  std::string err = refused_start(data_flags(dir));
  CHECK(err.find(log_path(dir) + ": offset " + std::to_string(last) +
                 ": a checksum mismatch in the payload") != std::string::npos);
  CHECK(err.find("--salvage") != std::string::npos);
  ServerProcess server(data_flags(dir, {"--salvage"}));
  ts::Client c(server.endpoint());
  CHECK(numbers_in(c).size() == 99);
  CHECK(std::filesystem::exists(log_path(dir) + ".dropped-" + std::to_string(last)));
}

TEST_CASE("damage in the middle of the log stops the server unless told to salvage") {
  Scratch dir;
  write_numbers_and_kill(dir, 10);
  std::uint64_t first = record_offsets(log_path(dir))[1];  // after the run's Boot record
  std::string what;
  SUBCASE("a flipped bit in a payload") {
    flip_byte(log_path(dir), first + 12 + 4);
    what = "a checksum mismatch in the payload";
  }
  SUBCASE("a flipped bit in a length (as 8192 -> 16,785,408)") {
    flip_byte(log_path(dir), first + 4 + 3, 0x01);
    what = "a record header whose checksum does not hold";
  }
  std::string err = refused_start(data_flags(dir));
  CHECK(err.find(log_path(dir) + ": offset " + std::to_string(first) + ": " + what) != std::string::npos);
  CHECK(err.find("--salvage") != std::string::npos);

  ServerProcess server(data_flags(dir, {"--salvage"}));
  ts::Client c(server.endpoint());
  INFO("server log:\n", server.log());
  CHECK(numbers_in(c).empty());
  CHECK(server.log().find("salvaged") != std::string::npos);
  CHECK(std::filesystem::exists(log_path(dir) + ".dropped-" + std::to_string(first)));
}

TEST_CASE("a log cut to half its size is refused, after SIGKILL and after a clean stop") {
  Scratch dir;
  SUBCASE("SIGKILL") {
    write_numbers_and_kill(dir, 200);
  }
  SUBCASE("clean stop") {
    ServerProcess server(data_flags(dir));
    ts::Client c(server.endpoint());
    write_numbers(c, 200);
    server.process().signal(SIGTERM);
    REQUIRE(server.process().wait() == 0);
  }
  auto offsets = record_offsets(log_path(dir));
  std::filesystem::copy_file(log_path(dir), dir.dir + "/whole.log");
  for (std::uint64_t cut : {std::filesystem::file_size(log_path(dir)) / 2, offsets[offsets.size() / 2]}) {
    CAPTURE(cut);
    std::filesystem::copy_file(dir.dir + "/whole.log", log_path(dir),
                               std::filesystem::copy_options::overwrite_existing);
    std::filesystem::resize_file(log_path(dir), cut);
    std::string err = refused_start(data_flags(dir));
    CHECK(err.find("synced") != std::string::npos);
    CHECK(err.find("refusing to start") != std::string::npos);
  }
}

TEST_CASE("a leased tuple is back after a restart and the old lease is refused") {
  Scratch dir;
  std::string old_lease;
  {
    ServerProcess server(data_flags(dir));
    ts::Client c(server.endpoint());
    c.space("jobs").out("task", 1);
    c.flush();
    Process worker(peer_argv(server.endpoint(), {"take", "jobs", "60000"}));
    REQUIRE_MESSAGE(worker.wait_for_out("took 1 lease"), worker.err());
    REQUIRE(stats_of(c, "jobs").leases == 1);
    kill_server(server);
    worker.signal(SIGKILL);
    worker.wait();
    old_lease = worker.out().substr(worker.out().find("lease ") + 6);
  }
  ServerProcess server(data_flags(dir));
  ts::Client c(server.endpoint());
  INFO("server log:\n", server.log());
  ts::SpaceStats s = stats_of(c, "jobs");
  CHECK(s.tuples == 1);
  CHECK(s.leases == 0);

  ts::LeaseId before = std::stoull(old_lease);
  std::int64_t n = 0;
  ts::Leased again = c.space("jobs").take(60s, "task", ts::bind(n));
  CHECK(n == 1);
  CHECK(again.lease != before);  // lease ids are never reused across runs
  CHECK_FALSE(c.complete(before, "jobs", {ts::Tuple::of("result", 1)}));
  try {
    c.ack(before);
    FAIL("the ack of a lease from before the restart was accepted");
  } catch (const ts::TupleSpaceError& e) {
    CHECK(e.code() == ts::Code::UnknownLease);
    CHECK(std::string(e.what()).find("before the server restarted") != std::string::npos);
  }
  CHECK(c.complete(again.lease, "jobs", {ts::Tuple::of("result", 1)}));
  CHECK(stats_of(c, "jobs").tuples == 1);  // the one result, written once
}

TEST_CASE("one server per data directory") {
  Scratch dir;
  ServerProcess server(data_flags(dir));
  std::string err = refused_start(data_flags(dir));
  CHECK(err.find("in use by another server") != std::string::npos);
}

TEST_CASE("safe takes return every tuple exactly once through SIGKILLs and restarts of a durable server") {
  // A consumer with safe_takes takes 0..N-1 (one at a time and in batches,
  // waiting and not)
  // while the server is killed at random points and restarted on the same
  // endpoint and data. Without safe takes a take whose answer is lost may
  // remove a tuple nobody sees; with them nothing is lost or seen twice.
  Scratch dir;
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  auto flags = data_flags(dir, {"--bind", endpoint});
  constexpr std::int64_t kCount = 20000;  // long enough to take for several kills, however fast the takes
  auto server = std::make_unique<ServerProcess>(flags);
  {
    ts::Client writer(endpoint);
    std::vector<ts::Tuple> all;
    for (std::int64_t i = 0; i < kCount; ++i) all.push_back(ts::Tuple::of("n", i));
    writer.out_many("log", all);
  }
  ts::ClientOptions o;
  o.safe_takes = true;
  o.safe_take_lease = 2s;
  ts::Client consumer(endpoint, o);
  std::map<std::int64_t, int> seen;
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  std::atomic<std::int64_t> taken{0};  // seen.size(), for the killer
  auto consume = std::async(std::launch::async, [&] {
    int round = 0;
    while (static_cast<std::int64_t>(seen.size()) < kCount) {
      try {
        if (++round % 3 == 1) {
          auto t = consumer.space("log").in_for(30s, "n", ts::formal<std::int64_t>);
          if (!t) break;
          ++seen[t->get<std::int64_t>(1)];
        } else if (round % 3 == 2) {
          for (const auto& t : consumer.space("log").in_many(7, "n", ts::formal<std::int64_t>))
            ++seen[t.get<std::int64_t>(1)];
        } else {
          // The form that waits for the first one, re-issued after a restart.
          for (const auto& t : consumer.space("log").in_many_for(7, 30s, "n", ts::formal<std::int64_t>))
            ++seen[t.get<std::int64_t>(1)];
        }
      } catch (const ts::TupleSpaceError& e) {
        ++errors;  // reported below; a safe take must not fail on a restart
        MESSAGE("take failed: ", std::string(e.what()));
      }
      taken = static_cast<std::int64_t>(seen.size());
    }
    done = true;
  });
  const int kills = kill_while_busy(server, flags, done, 6, 12345, [&] { return taken.load(); });
  REQUIRE(consume.wait_for(120s) == std::future_status::ready);
  MESSAGE(kills, " kills; consumer reconnects: ", consumer.reconnects());
  CHECK(kills >= 2);
  CHECK(errors.load() == 0);
  check_each_once(seen, kCount);
  ts::Client check(endpoint);
  CHECK(check.space("log").rd_many(1000, "n", ts::formal<std::int64_t>).empty());
}

TEST_CASE("safe outs write every tuple exactly once through SIGKILLs and restarts of a durable server") {
  // A writer with safe_outs writes 0..N-1 (one at a time and in batches)
  // while the server is killed at random points and restarted on the same
  // endpoint and data. Without safe outs a write whose answer is lost throws
  // unknown_outcome, and writing it again may write it twice; with them
  // every number is there once.
  Scratch dir;
  const std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_port());
  auto flags = data_flags(dir, {"--bind", endpoint});
  constexpr std::int64_t kCount = 20000;
  auto server = std::make_unique<ServerProcess>(flags);
  ts::ClientOptions o;
  o.safe_outs = true;
  o.safe_take_lease = 2s;
  ts::Client writer(endpoint, o);
  std::atomic<bool> done{false};
  std::atomic<int> errors{0};
  std::atomic<std::int64_t> written{0};
  auto write = std::async(std::launch::async, [&] {
    std::int64_t next = 0;
    while (next < kCount) {
      try {
        if (next % 2 == 0) {
          writer.space("log").out("n", next);
          ++next;
        } else {
          std::vector<ts::Tuple> batch;
          for (std::int64_t i = next; i < std::min(kCount, next + 7); ++i)
            batch.push_back(ts::Tuple::of("n", i));
          writer.out_many("log", batch);
          next += static_cast<std::int64_t>(batch.size());
        }
        written = next;
      } catch (const ts::TupleSpaceError& e) {
        ++errors;  // reported below; a safe out must not fail on a restart
        MESSAGE("write failed: ", std::string(e.what()));
        break;
      }
    }
    done = true;
  });
  const int kills = kill_while_busy(server, flags, done, 8, 54321, [&] { return written.load(); });
  REQUIRE(write.wait_for(120s) == std::future_status::ready);
  MESSAGE(kills, " kills; writer reconnects: ", writer.reconnects());
  CHECK(kills >= 4);
  CHECK(errors.load() == 0);
  ts::Client check(endpoint);
  std::map<std::int64_t, int> seen;
  for (const auto& t : check.space("log").rd_many(2 * kCount, "n", ts::formal<std::int64_t>))
    ++seen[t.get<std::int64_t>(1)];
  check_each_once(seen, kCount);
  CHECK(stats_of(check, "log").leases == 0);
}

}  // namespace piranha::it
