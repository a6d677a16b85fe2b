// A durable server whose disk fills up mid-job, with a real full disk: a
// small tmpfs mounted for the test (root) holds the server's --data, a job
// runs on an agent, and a file written beside the log takes the rest of the
// room. The server must neither stop nor hang: it refuses requests with
// disk_full (naming the file and the reason), loses no acknowledged tuple,
// and once the file is removed the job goes on and ends done.
//
// The case bounds its run time, stops only the processes it started (by
// PID, through Process) and unmounts what it mounted (lazily, so the
// unmount never waits).
#include <doctest/doctest.h>
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <future>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "harness.h"
#include "piranha/runtime/sysspace.h"

namespace piranha::it {
namespace {

namespace sys = piranha::sys;

// A tmpfs of `size` mounted on a new directory `dir`, unmounted by the destructor.
class SmallDisk {
 public:
  SmallDisk(std::string dir, const std::string& size) : dir_(std::move(dir)) {
    ::mkdir(dir_.c_str(), 0755);
    mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, ("size=" + size).c_str()) == 0;
    if (!mounted_) error_ = std::strerror(errno);
  }
  ~SmallDisk() {
    if (mounted_) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return mounted_; }
  const std::string& error() const { return error_; }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_, error_;
  bool mounted_ = false;
};

// Writes `path` until the disk has no room left; returns the bytes written.
std::size_t fill(const std::string& path) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  std::string chunk(4096, 'x');
  std::size_t written = 0;
  while (true) {
    ssize_t n = ::write(fd, chunk.data(), chunk.size());
    if (n <= 0) break;
    written += static_cast<std::size_t>(n);
  }
  ::close(fd);
  return written;
}

std::string always_available(const Scratch& s, const std::string& node) {
  return s.write(node + ".avail.csv",
                 "# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\n"
                 "node,start,end\n" +
                     node + ",0,100000\n");
}

std::optional<sys::JobRecord> job_record(ts::Client& c, std::int64_t id) {
  auto t = c.rd(sys::kSpace, sys::job_template(id), 0ms);
  return t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
}

// Tasks done of job `id` as its feeder last published (-1 when unknown).
std::int64_t tasks_done(ts::Client& c, std::int64_t id) {
  for (const auto& st : sys::list_jobstats(c))
    if (st.id == id) return st.tasks_done;
  return -1;
}

}  // namespace

TEST_CASE(
    "disk full: a durable server whose disk fills up mid-job refuses with disk_full, loses nothing "
    "acknowledged, and the job goes on once there is room") {
  if (::geteuid() != 0) {
    MESSAGE("skipped: mounting a tmpfs needs root");
    return;
  }
  Scratch s;
  SmallDisk disk(s.dir + "/disk", "4m");
  REQUIRE_MESSAGE(disk.mounted(), "could not mount a tmpfs on ", disk.dir(), ": ", disk.error());
  const std::vector<std::string> flags = {"--data", disk.dir() + "/data"};
  auto server = std::make_unique<ServerProcess>(flags);
  const std::string ep = server->endpoint();
  Process agent({bin("piranha"), "agent", "--node", "n1", "--server", ep, "--trace",
                 always_available(s, "n1"), "--piranha-output", s.dir + "/n1.piranhas", "--piranha-priority",
                 "normal"});
  agent.stop_with(SIGTERM);
  // 400 tasks of 20 ms: about 8 s of work on one core, left over the fault.
  Process job({bin("piranha"), "submit", "--server", ep, bin("sleepy_job"), "400", "20"});
  ts::ClientOptions quick = quick_client_options();
  quick.request_timeout = 2s;
  ts::Client c(ep, quick);
  REQUIRE_MESSAGE(wait_until([&] { return tasks_done(c, 1) >= 20; }, 60s), job.err(), agent.err());

  // Acknowledged tuples, then the disk fills up: an out is refused, after
  // the client has sent it again for its deadline. An out whose commit was
  // the first to find no room is held past that deadline instead (its
  // outcome unknown to the client; it is written once there is room), and
  // so is whatever its connection sends after it: the next try is made on
  // a new connection.
  std::int64_t acked = 0, unknown = 0;
  for (; acked < 100; ++acked) c.out("acked", ts::Tuple::of("acked", acked));
  // A task taken under a lease, to be completed while the disk is full.
  ts::ClientOptions patient = quick;
  patient.request_timeout = 60s;
  ts::Client completer(ep, patient);
  completer.out("late", ts::Tuple::of("task", 1));
  auto task = completer.in(
      "late", ts::Template({ts::Field::of(ts::Value(std::string("task"))), ts::Field::formal(ts::Type::Int)}),
      0ms, 60s);
  REQUIRE(task);
  const std::size_t filler = fill(disk.dir() + "/filler");
  std::string refusal;
  auto probe = std::make_unique<ts::Client>(ep, quick);
  REQUIRE(wait_until(
      [&] {
        try {
          probe->out("acked", ts::Tuple::of("acked", acked + unknown));
          ++acked;  // written before the log's next commit found no room
          REQUIRE(unknown == 0);
        } catch (const ts::TupleSpaceError& e) {
          if (e.code() == ts::Code::DeadlineExceeded && unknown == 0) {
            ++unknown;
            probe = std::make_unique<ts::Client>(ep, quick);
            return false;
          }
          CHECK(e.code() == ts::Code::DiskFull);
          refusal = e.what();
          return true;
        }
        return false;
      },
      30s));
  MESSAGE("a ", filler, "-byte file filled the disk; the client got: ", refusal);
  CHECK(contains(refusal, "disk_full: " + disk.dir() + "/data/tuples.log: write at offset"));
  CHECK(contains(refusal, "No space left on device"));
  CHECK(contains(refusal, "nothing was done"));
  CHECK(contains(server->log(), "the disk is full"));
  // Not stopped, not hung: it answers (with disk_full) at once.
  CHECK(server->process().running());
  CHECK(job.running());

  // A call so refused is sent again until its deadline, and a posted
  // completion until flush()'s: both are carried out once there is room.
  ts::Client waiter(ep, patient);
  auto blocked_out = std::async(std::launch::async, [&] { waiter.out("late", ts::Tuple::of("out", 1)); });
  auto completed = std::async(std::launch::async, [&] {
    completer.complete_posted(task->lease, "late", {ts::Tuple::of("result", 1)});
    completer.flush();
    return completer.take_lost_leases();
  });

  // Room again: the held changes are written and the job goes on.
  std::this_thread::sleep_for(3s);  // the fault's length
  CHECK(blocked_out.wait_for(0s) == std::future_status::timeout);
  CHECK(completed.wait_for(0s) == std::future_status::timeout);
  ::unlink((disk.dir() + "/filler").c_str());
  auto freed = Clock::now();
  REQUIRE_MESSAGE(wait_until([&] { return contains(server->log(), "answering again"); }, 10s), server->log());
  double written_ms = ms_since(freed);
  std::int64_t at_free = tasks_done(c, 1);
  REQUIRE_MESSAGE(wait_until([&] { return tasks_done(c, 1) > at_free; }, 60s), agent.err());
  double progress_ms = ms_since(freed);
  REQUIRE(blocked_out.wait_for(30s) == std::future_status::ready);
  CHECK_NOTHROW(blocked_out.get());
  REQUIRE(completed.wait_for(30s) == std::future_status::ready);
  CHECK(completed.get().empty());  // no lease reported lost: the completion was carried out
  MESSAGE("the disk full for 3 s: the server wrote again ", written_ms,
          " ms after the file went, the job made "
          "progress again ",
          progress_ms, " ms after");
  auto rc = job.wait(120s);
  INFO("job: ", job.out(), job.err(), "\nagent: ", agent.err(), "\nserver: ", server->log());
  REQUIRE(rc == 0);
  CHECK(contains(job.out(), "sleepy_job: result OK"));
  auto record = job_record(c, 1);
  REQUIRE(record);
  CHECK(record->state == sys::JobState::Done);
  CHECK(server->process().running());

  // Every acknowledged tuple is in the log, once, and the refused one is not.
  server->process().signal(SIGKILL);
  REQUIRE(server->process().wait() == 128 + SIGKILL);
  server = std::make_unique<ServerProcess>(flags);
  ts::Client after(server->endpoint(), quick_client_options());
  auto kept = after.rd_many(
      "acked",
      ts::Template({ts::Field::of(ts::Value(std::string("acked"))), ts::Field::formal(ts::Type::Int)}), 1000);
  std::set<std::int64_t> numbers;
  for (const auto& t : kept) numbers.insert(t.get<std::int64_t>(1));
  CHECK(numbers.size() == kept.size());
  for (std::int64_t i = 0; i < acked; ++i) CHECK(numbers.count(i) == 1);
  CHECK(static_cast<std::int64_t>(kept.size()) <= acked + unknown);
  auto late = after.rd_many(
      "late", ts::Template({ts::Field::formal(ts::Type::String), ts::Field::formal(ts::Type::Int)}), 10);
  CHECK(late.size() == 2);
  CHECK(std::count(late.begin(), late.end(), ts::Tuple::of("out", 1)) == 1);
  CHECK(std::count(late.begin(), late.end(), ts::Tuple::of("result", 1)) == 1);
}

}  // namespace piranha::it
