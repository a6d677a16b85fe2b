// DurableLog in one process: a Store's changes written, a new Store recovered
// from them, and compaction. The crash and damage cases run against real
// server processes in tests/durability_test.cc.
#include "piranha/tuplespace/durable_log.h"

#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>

#include "piranha/base/input_error.h"

using namespace piranha::ts;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "piranha-log-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()) != nullptr);
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

DurableLogOptions in_dir(const TempDir& dir, std::uint64_t compact_min_bytes = 64u << 20) {
  DurableLogOptions o;
  o.dir = dir.path;
  o.compact_min_bytes = compact_min_bytes;
  return o;
}

TupleImage task(std::int64_t i) {
  return image_of(Tuple::of("task", i));
}

TemplateImage any_task() {
  return image_of(Template({Field::of(make_value("task")), Field::formal(Type::Int)}));
}

WaitSpec take_by(ClientId client = 1, Millis lease = 0) {
  WaitSpec s;
  s.client = client;
  s.timeout = 0;
  s.lease = lease;
  return s;
}

// The ids of the ("task", i) tuples in `space`, oldest first.
std::vector<std::int64_t> tasks_in(const Store& s, std::string_view space) {
  std::vector<std::int64_t> ids;
  for (const auto& bytes : s.rd_many(space, any_task(), 1'000'000))
    ids.push_back(decode_tuple(bytes).get<std::int64_t>(1));
  return ids;
}

}  // namespace

TEST_CASE("a recovered store holds what was written and not taken, leased tuples included, in order") {
  TempDir dir;
  LeaseId lease = 0;
  {
    Store s;
    DurableLog log(in_dir(dir), s);
    CHECK(log.recovery().boot == 1);
    for (std::int64_t i = 0; i < 6; ++i) s.out("jobs", task(i), 0);
    s.out("gone", task(99), 0);
    CHECK(s.in("jobs", any_task(), take_by(), 0)->tuple == task(0).bytes);  // taken for good
    lease = s.in("jobs", any_task(), take_by(1, 1000), 0)->lease;           // leased: survives
    CHECK(lease >= log.first_lease());
    LeaseId acked = s.in("jobs", any_task(), take_by(1, 1000), 0)->lease;  // task 2, acked
    CHECK(s.ack(acked, 1));
    LeaseId returned = s.in("jobs", any_task(), take_by(2, 1000), 0)->lease;  // task 3
    CHECK(returned != 0);
    CHECK(s.drop_client(2, 0) == 1);  // task 3 comes back as the newest
    CHECK(s.remove("gone"));
    log.commit();
  }
  Store s;
  DurableLog log(in_dir(dir), s);
  CHECK(log.recovery().boot == 2);
  CHECK(log.recovery().tuples == 4);
  CHECK(tasks_in(s, "jobs") == std::vector<std::int64_t>{1, 4, 5, 3});
  CHECK_FALSE(s.stats("gone").has_value());
  CHECK(log.first_lease() > lease);
  CHECK_FALSE(s.ack(lease, 1));
  // New tuples are numbered after every recovered one.
  s.out("jobs", task(7), 0);
  CHECK(tasks_in(s, "jobs").back() == 7);
}

TEST_CASE("the log is rewritten as a snapshot once it outgrows its live tuples") {
  TempDir dir;
  std::uintmax_t biggest = 0;
  {
    Store s;
    DurableLog log(in_dir(dir, 4096), s);
    s.out("kept", task(-1), 0);
    for (std::int64_t i = 0; i < 2000; ++i) {
      s.out("farm", task(i), 0);
      REQUIRE(s.in("farm", any_task(), take_by(), 0).has_value());
      log.commit();
      biggest = std::max(biggest, std::filesystem::file_size(log.path()));
    }
  }
  CHECK(biggest < 3 * 4096);
  Store s;
  DurableLog log(in_dir(dir), s);
  CHECK(tasks_in(s, "kept") == std::vector<std::int64_t>{-1});
  CHECK(tasks_in(s, "farm").empty());
}

TEST_CASE("a log recovered above the compaction threshold is rewritten at open") {
  TempDir dir;
  {
    Store s;
    DurableLog log(in_dir(dir), s);  // 64 MiB: no rewrite while it churns
    s.out("kept", task(-1), 0);
    for (std::int64_t i = 0; i < 2000; ++i) {
      s.out("farm", task(i), 0);
      REQUIRE(s.in("farm", any_task(), take_by(), 0).has_value());
      log.commit();
    }
    CHECK(std::filesystem::file_size(log.path()) > 20 * 4096);
  }
  Store s;
  DurableLog log(in_dir(dir, 4096), s);
  CHECK(std::filesystem::file_size(log.path()) < 4096);
  CHECK(tasks_in(s, "kept") == std::vector<std::int64_t>{-1});
}

TEST_CASE("fsync policies by name") {
  CHECK(parse_fsync_policy("always") == FsyncPolicy::Always);
  CHECK(parse_fsync_policy("everysec") == FsyncPolicy::EverySec);
  CHECK(parse_fsync_policy("no") == FsyncPolicy::No);
  CHECK_THROWS_WITH_AS(parse_fsync_policy("sometimes"),
                       "fsync policy \"sometimes\": expected always, everysec or no", piranha::InputError);
  CHECK(fsync_policy_name(FsyncPolicy::EverySec) == "everysec");
}

TEST_CASE("under everysec a due sync runs in the background, also across a rewrite, and the log recovers") {
  TempDir dir;
  {
    Store s;
    DurableLogOptions o = in_dir(dir, 4096);
    o.fsync = FsyncPolicy::EverySec;
    DurableLog log(o, s);
    // sync_if_due takes the steady clock in ms, as the server passes it.
    std::int64_t now = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now().time_since_epoch())
                           .count();
    for (std::int64_t i = 0; i < 2000; ++i) {  // several rewrites on the way
      s.out("farm", task(i), 0);
      log.commit();
      now += 10;
      log.sync_if_due(now);  // due every 100 commits
    }
    // Requests made while one runs fold into one; at least one completes.
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (log.background_syncs() == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    CHECK(log.background_syncs() >= 1);
    CHECK(log.background_syncs() <= 20);
    log.sync_if_due(now + 1000);  // nothing new written: not due
  }
  Store s;
  DurableLog log(in_dir(dir), s);
  CHECK(tasks_in(s, "farm").size() == 2000);
}
