// DurableLog in one process: a Store's changes written, a new Store recovered
// from them, and compaction. The crash and damage cases run against real
// server processes in tests/durability_test.cc.
#include "piranha/tuplespace/durable_log.h"

#include <doctest/doctest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "log_format.h"
#include "log_v1_record.h"
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
      log.wait_for_compaction();
    }
    CHECK(log.compactions() > 10);
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
  CHECK(log.compacting());  // started by open, finished off the caller's path
  log.wait_for_compaction();
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

// Damaged log files, the kinds LevelDB's corruption_test.cc and
// fault_injection_test.cc make: a flipped bit in a length, in a payload and
// in the file header, a file cut short at and between records, a torn last
// write, blocks allocated and never written. What a SIGKILL leaves is the
// file as it is while the log is open (the page cache holds every write), so
// a copy taken then is a crash image.
namespace {

namespace lf = piranha::ts::log_format;

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void put_file(const std::string& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

// The offsets of a format-2 file's records, read from their headers.
std::vector<std::uint64_t> record_offsets(std::string_view file) {
  std::vector<std::uint64_t> at;
  for (std::uint64_t o = lf::kFileHeaderSize; o + lf::kHeaderSize <= file.size();
       o += lf::kHeaderSize + lf::get_fixed(file.data() + o + 4, 4))
    at.push_back(o);
  return at;
}

// A log in `dir` given tasks 0..n-1 in space "jobs", one commit each (record
// i + 1 holds task i; record 0 is the run's Boot). With `image`, a copy of
// the log taken before the log is closed (what a SIGKILL leaves) is written
// to image/tuples.log; otherwise the log is closed cleanly.
void write_tasks(const TempDir& dir, std::int64_t n, const TempDir* image = nullptr,
                 std::string_view tail = {}) {
  Store s;
  DurableLog log(in_dir(dir), s);
  for (std::int64_t i = 0; i < n; ++i) {
    s.out("jobs", i + 1 == n && !tail.empty() ? image_of(Tuple::of("task", i, std::string(tail))) : task(i),
          0);
    log.commit();
  }
  if (image) put_file(image->path + "/tuples.log", bytes_of(log.path()));
}

std::string open_error(const TempDir& dir, bool salvage = false) {
  Store s;
  DurableLogOptions o = in_dir(dir);
  o.salvage = salvage;
  try {
    DurableLog log(o, s);
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

struct Reopened {
  Store store;
  std::vector<std::string> lines;
  std::unique_ptr<DurableLog> log;
  explicit Reopened(const TempDir& dir, bool salvage = false) {
    DurableLogOptions o = in_dir(dir);
    o.salvage = salvage;
    o.log = [this](std::string_view line) { lines.emplace_back(line); };
    log = std::make_unique<DurableLog>(o, store);
  }
  std::size_t tasks() const { return tasks_in(store, "jobs").size(); }
  bool logged(std::string_view what) const {
    for (const auto& l : lines)
      if (l.find(what) != std::string::npos) return true;
    return false;
  }
};

bool contains(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

}  // namespace

TEST_CASE(
    "a flipped bit in a record's length in the middle is damage: refused, and --salvage keeps the rest "
    "aside") {
  for (std::uint32_t flip : {std::uint32_t{1} << 24, std::uint32_t{0x7fffffff}}) {
    CAPTURE(flip);
    TempDir dir;
    write_tasks(dir, 50);
    std::string path = dir.path + "/tuples.log";
    std::string file = bytes_of(path);
    std::uint64_t at = record_offsets(file)[21];  // task 20's record
    std::string length;
    lf::put_fixed32(length, static_cast<std::uint32_t>(lf::get_fixed(file.data() + at + 4, 4)) ^ flip);
    file.replace(at + 4, 4, length);
    put_file(path, file);

    std::string err = open_error(dir);
    CHECK(contains(
        err, path + ": offset " + std::to_string(at) + ": a record header whose checksum does not hold"));
    CHECK(contains(err, "refusing to start"));
    CHECK(contains(err, "--salvage"));
    CHECK(bytes_of(path) == file);  // nothing cut

    Reopened r(dir, true);
    CHECK(r.tasks() == 20);
    CHECK(r.logged("salvaged"));
    CHECK(bytes_of(path + ".dropped-" + std::to_string(at)) == file.substr(at));
  }
}

TEST_CASE("a log cut short is damage, at a record boundary or between, after a clean stop or a SIGKILL") {
  TempDir dir, image;
  write_tasks(dir, 100, &image);
  for (const TempDir* d : {&dir, &image}) {
    std::string path = d->path + "/tuples.log";
    std::string file = bytes_of(path);
    std::uint64_t boundary = record_offsets(file)[50];
    for (std::uint64_t cut : {boundary, boundary + 5, file.size() / 2}) {
      CAPTURE(cut);
      put_file(path, file.substr(0, cut));
      std::string err = open_error(*d);
      CHECK(contains(err, "synced"));
      CHECK(contains(err, "refusing to start"));
    }
    put_file(path, file.substr(0, boundary));
    CHECK(Reopened(*d, true).tasks() == 49);  // salvaged: what is left, and nothing to move aside
    CHECK(Reopened(*d).tasks() == 49);        // then a log like any other
    put_file(path, file);
  }
}

TEST_CASE("a flipped bit in the last record, acknowledged under always, is damage after a SIGKILL") {
  TempDir dir, image;
  write_tasks(dir, 100, &image);
  std::string path = image.path + "/tuples.log";
  std::string file = bytes_of(path);
  std::uint64_t last = record_offsets(file).back();
  file[file.size() - 2] ^= 0x04;
  put_file(path, file);
  std::string err = open_error(image);
  CHECK(contains(err, path + ": offset " + std::to_string(last) + ": a checksum mismatch in the payload"));
  CHECK(contains(err, "not what a write cut short leaves"));
  Reopened r(image, true);
  CHECK(r.tasks() == 99);
  CHECK(std::filesystem::exists(path + ".dropped-" + std::to_string(last)));
}

TEST_CASE("a torn last write is moved aside and the records before it are recovered") {
  TempDir dir, image;
  write_tasks(dir, 10, &image, std::string(5000, 'x'));  // the last record spans several sectors
  std::string path = image.path + "/tuples.log";
  const std::string file = bytes_of(path);
  std::uint64_t last = record_offsets(file).back();
  std::string torn;
  SUBCASE("its payload cut short") {
    torn = file.substr(0, file.size() - 3);
  }
  SUBCASE("its header cut short") {
    torn = file.substr(0, last + 5);
  }
  SUBCASE("its last sectors allocated and never written") {
    torn = file;
    std::uint64_t from = (last + 1024) / 512 * 512;
    std::fill(torn.begin() + static_cast<std::ptrdiff_t>(from), torn.end(), '\0');
  }
  SUBCASE("zeros after it, the file extended and never written") {
    torn = file.substr(0, last) + std::string(4096, '\0');
  }
  put_file(path, torn);
  {
    Reopened r(image);
    CHECK(r.tasks() == 9);
    CHECK(r.logged(path + ": offset " + std::to_string(last) + ": "));
    CHECK(r.logged("a torn last write"));
    CHECK(r.log->recovery().dropped_bytes == torn.size() - last);
    CHECK(bytes_of(path + ".dropped-" + std::to_string(last)) == torn.substr(last));
    r.store.out("jobs", task(100), 0);
    r.log->commit();
  }
  Reopened again(image);
  CHECK(again.tasks() == 10);
  CHECK_FALSE(again.logged("torn"));
}

TEST_CASE("a cut at the start of the last commit is seen once the log has been idle, not before") {
  TempDir dir, image;
  Store s;
  DurableLog log(in_dir(dir), s);
  for (std::int64_t i = 0; i < 10; ++i) {
    s.out("jobs", task(i), 0);
    log.commit();
  }
  std::string busy = bytes_of(log.path());
  std::uint64_t last = record_offsets(busy).back();
  // The documented limit: the file header does not yet cover the last commit.
  put_file(image.path + "/tuples.log", busy.substr(0, last));
  CHECK(Reopened(image).tasks() == 9);

  log.sync_if_due(std::chrono::duration_cast<std::chrono::milliseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count() +
                  1000);
  put_file(image.path + "/tuples.log", bytes_of(log.path()).substr(0, last));
  CHECK(contains(open_error(image), "synced"));
}

TEST_CASE("a flipped bit in the file header is damage, and --salvage moves the whole file aside") {
  TempDir dir;
  write_tasks(dir, 5);
  std::string path = dir.path + "/tuples.log";
  std::string file = bytes_of(path);
  file[10] ^= 0x01;
  put_file(path, file);
  CHECK(contains(open_error(dir), path + ": offset 0: a file header whose checksum does not hold"));
  Reopened r(dir, true);
  CHECK(r.tasks() == 0);
  CHECK(bytes_of(path + ".dropped-0") == file);
}

TEST_CASE("a format-1 log is recovered and rewritten in format 2, and damage in it is refused") {
  std::string file(lf::kMagicV1);
  std::string boot = "B";
  lf::put_fixed64(boot, 3);
  file += lf::v1_record(boot);
  for (std::uint64_t i = 0; i < 5; ++i) {
    std::string put = "P";
    lf::put_fixed64(put, i + 1);
    lf::put_fixed32(put, 4);
    put += "jobs";
    std::string bytes = task(static_cast<std::int64_t>(i)).bytes;
    lf::put_fixed32(put, static_cast<std::uint32_t>(bytes.size()));
    put += bytes;
    file += lf::v1_record(put);
  }
  TempDir dir;
  std::string path = dir.path + "/tuples.log";
  SUBCASE("whole") {
    put_file(path, file);
    {
      Reopened r(dir);
      CHECK(r.tasks() == 5);
      CHECK(r.log->recovery().boot == 4);
      CHECK(r.logged("rewrote the format-1 log in format 2"));
      CHECK(bytes_of(path).starts_with(lf::kMagic));
    }
    Reopened again(dir);
    CHECK(again.tasks() == 5);
  }
  SUBCASE("cut short: a format-1 log cannot tell a torn write from damage") {
    put_file(path, file.substr(0, file.size() - 2));
    CHECK(contains(open_error(dir), "a format-1 log cannot tell a torn write from damage"));
    Reopened r(dir, true);
    CHECK(r.tasks() == 4);
    CHECK(bytes_of(path).starts_with(lf::kMagic));
  }
}

TEST_CASE("a new log has a whole file header, and a log shorter than that is damage") {
  TempDir dir;
  { Reopened r(dir); }
  std::string path = dir.path + "/tuples.log";
  CHECK(bytes_of(path).starts_with(lf::kMagic));
  put_file(path, bytes_of(path).substr(0, 12));
  CHECK(contains(open_error(dir), "the file header cut short (12 bytes)"));
  put_file(path, "");  // as a format-1 server's crash while creating it could leave
  CHECK(contains(open_error(dir), "the file header cut short (0 bytes)"));
  CHECK(Reopened(dir, true).tasks() == 0);
  CHECK(bytes_of(path).starts_with(lf::kMagic));
}

TEST_CASE("changes committed while a compaction runs on its thread are in the rewritten log") {
  TempDir dir;
  std::set<std::int64_t> live;
  std::uint64_t during = 0;
  {
    Store s;
    DurableLogOptions o = in_dir(dir, 1u << 20);
    o.fsync = FsyncPolicy::No;
    DurableLog log(o, s);
    const std::string big(2000, 'b');
    std::int64_t next = 0;
    // Until two compactions have finished, each with commits made while it ran
    // (more than LogCompactor::kCatchUpBytes of them, so its thread copies some).
    while (log.compactions() < 2 || during < 2000) {
      s.out("jobs", image_of(Tuple::of("task", next, big)), 0);
      live.insert(next++);
      if (next % 3 == 0) {
        auto taken = s.in("jobs",
                          image_of(Template({Field::of(make_value("task")), Field::formal(Type::Int),
                                             Field::formal(Type::String)})),
                          take_by(), 0);
        REQUIRE(taken.has_value());
        live.erase(decode_tuple(taken->tuple).get<std::int64_t>(1));
      }
      bool was = log.compacting();
      log.commit();
      if (was) ++during;
      REQUIRE(next < 1'000'000);
    }
    MESSAGE(log.compactions(), " compactions, ", during, " commits while one ran, longest pause ",
            log.longest_compaction_pause_us(), " us");
  }
  Store s;
  DurableLog log(in_dir(dir), s);
  std::vector<std::int64_t> ids;
  for (const auto& bytes :
       s.rd_many("jobs",
                 image_of(Template(
                     {Field::of(make_value("task")), Field::formal(Type::Int), Field::formal(Type::String)})),
                 10'000'000))
    ids.push_back(decode_tuple(bytes).get<std::int64_t>(1));
  CHECK(ids == std::vector<std::int64_t>(live.begin(), live.end()));
}

TEST_CASE("a log closed while a compaction runs is whole: the old file is the log until the rename") {
  TempDir dir;
  {
    Store s;
    DurableLog log(in_dir(dir), s);
    s.out("kept", task(-1), 0);
    for (std::int64_t i = 0; i < 2000; ++i) {
      s.out("farm", task(i), 0);
      REQUIRE(s.in("farm", any_task(), take_by(), 0).has_value());
      log.commit();
    }
  }
  for (int round = 0; round < 3; ++round) {
    Store s;
    DurableLog log(in_dir(dir, 1), s);  // every open starts a rewrite
    CHECK(log.compacting());
    s.out("kept", task(round), 0);
    log.commit();
    // Closed at once, the rewrite abandoned wherever it was.
  }
  Store s;
  DurableLog log(in_dir(dir), s);
  CHECK(tasks_in(s, "kept") == std::vector<std::int64_t>{-1, 0, 1, 2});
}

namespace {

// A tmpfs of `size` mounted on `dir` (root only), unmounted (lazily) by the
// destructor: a disk that really fills up.
struct SmallDisk {
  std::string dir;
  bool mounted = false;
  SmallDisk(std::string d, const std::string& size) : dir(std::move(d)) {
    mounted = ::geteuid() == 0 && ::mount("tmpfs", dir.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    if (!mounted) MESSAGE("skipped: mounting a tmpfs needs root");
  }
  ~SmallDisk() {
    if (mounted) ::umount2(dir.c_str(), MNT_DETACH);
  }
  // Writes `name` here until the disk has no room left.
  void fill(const std::string& name) const {
    std::ofstream out(dir + "/" + name, std::ios::binary);
    const std::string chunk(4096, 'x');
    while (out.write(chunk.data(), static_cast<std::streamsize>(chunk.size()))) out.flush();
  }
};

}  // namespace

TEST_CASE(
    "a full disk: commit throws LogFullError, cuts what fitted, keeps the changes, and writes them later") {
  TempDir dir;
  SmallDisk disk(dir.path, "1m");
  if (!disk.mounted) return;
  const std::string big(20'000, 'b');
  DurableLogOptions o = in_dir(dir);
  o.dir = dir.path + "/data";
  std::int64_t written = 0;
  {
    Store s;
    DurableLog log(o, s);
    for (; written < 10; ++written) s.out("jobs", image_of(Tuple::of("task", written, big)), 0);
    log.commit();
    disk.fill("filler");
    const auto size = std::filesystem::file_size(log.path());
    s.out("jobs", image_of(Tuple::of("task", written++, big)), 0);
    CHECK_THROWS_AS(log.commit(), LogFullError);
    CHECK(std::filesystem::file_size(log.path()) == size);  // nothing of the record is left
    CHECK(log.pending());
    s.out("jobs", image_of(Tuple::of("task", written++, big)), 0);
    try {
      log.commit();
      FAIL("a commit on a full disk succeeded");
    } catch (const LogFullError& e) {
      // The offset where the device had no room: inside the record, past what fitted.
      CHECK(std::string(e.what()).find(log.path() + ": write at offset ") == 0);
      CHECK(std::string(e.what()).find("No space left on device") != std::string::npos);
    }
    std::filesystem::remove(dir.path + "/filler");
    log.commit();  // both held changes, in one record
    CHECK_FALSE(log.pending());
    CHECK(std::filesystem::file_size(log.path()) > size + 2 * big.size());
  }
  Store s;
  DurableLog log(o, s);
  std::vector<std::int64_t> ids;
  for (const auto& bytes :
       s.rd_many("jobs",
                 image_of(Template(
                     {Field::of(make_value("task")), Field::formal(Type::Int), Field::formal(Type::String)})),
                 1000))
    ids.push_back(decode_tuple(bytes).get<std::int64_t>(1));
  CHECK(ids.size() == static_cast<std::size_t>(written));
}

TEST_CASE("a rewrite that finds the disk full is abandoned, and the log goes on without it") {
  TempDir dir;
  SmallDisk disk(dir.path, "1m");
  if (!disk.mounted) return;
  DurableLogOptions o = in_dir(dir, 300u << 10);
  o.dir = dir.path + "/data";
  o.fsync = FsyncPolicy::No;
  std::vector<std::string> lines;
  o.log = [&](std::string_view line) { lines.emplace_back(line); };
  const std::string big(10'000, 'k');
  {
    Store s;
    DurableLog log(o, s);
    // 250 KB of live tuples, which a rewrite must copy; the disk then has
    // room for about 150 KB more, less than that.
    for (std::int64_t i = 0; i < 25; ++i) s.out("kept", image_of(Tuple::of("task", i, big)), 0);
    log.commit();
    disk.fill("filler");
    std::filesystem::remove(dir.path + "/filler");
    {
      std::ofstream room(dir.path + "/filler", std::ios::binary);
      const auto free_bytes = std::filesystem::space(dir.path).available;
      std::string fill(free_bytes > (150u << 10) ? free_bytes - (150u << 10) : 0, 'x');
      room.write(fill.data(), static_cast<std::streamsize>(fill.size()));
    }
    // Churn until a rewrite starts (the log past 300 KiB), then until it ends.
    for (std::int64_t i = 0; !log.compacting() && i < 100'000; ++i) {
      s.out("farm", task(i), 0);
      REQUIRE(s.in("farm", any_task(), take_by(), 0).has_value());
      log.commit();
    }
    REQUIRE(log.compacting());
    log.wait_for_compaction();
    CHECK(log.compactions() == 0);
    CHECK_FALSE(std::filesystem::exists(o.dir + "/tuples.log.tmp"));
    bool reported = false;
    for (const auto& l : lines)
      reported = reported || l.find("rewriting the log failed") != std::string::npos;
    CHECK(reported);
    std::filesystem::remove(dir.path + "/filler");
    s.out("farm", task(-1), 0);
    log.commit();
  }
  Store s;
  DurableLog log(o, s);
  CHECK(s.rd_many("kept",
                  image_of(Template({Field::of(make_value("task")), Field::formal(Type::Int),
                                     Field::formal(Type::String)})),
                  1000)
            .size() == 25);
  CHECK(tasks_in(s, "farm") == std::vector<std::int64_t>{-1});
}
