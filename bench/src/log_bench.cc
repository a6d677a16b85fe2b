// log_bench: the durable log's recovery and compaction on a large log, for
// docs/performance.md ("The durable log").
//
//   log_bench [--dir DIR] [--log-mb N] [--live-mb M] [--tuple-bytes B] [--commits-per-s C] [--json]
//
// Recovery: a log of about N MB is written (fsync no, no compaction: commits
// of 256 outs and 128 takes, so about half of what is written stays live),
// then recovered in a child process of its own, so that its peak resident set
// is its own; its anchors, measured in the same run, are the time to read the
// file once (cat) and the live set's bytes. Compaction: a fresh log under the
// default threshold (rewritten past max(64 MiB, twice its last size)), fsync
// everysec so that a commit's own fdatasync does not hide the rewrite's wait,
// is given M MB of live tuples, then churned (256 outs and 256 takes per
// commit), C commits a second (100: 51,200 requests a second, more than a
// server serves), until it has been rewritten twice more; reported is the longest a
// single commit() or sync_if_due() call took, which is how long requests
// wait: when it finished a rewrite, when a rewrite's thread was running
// (PATH.tmp exists), and when none was under way. Asserts nothing about speed.
// With --json, one object (its "date" the start, UTC) that
// scripts/perf-summary.py reads from docs/perf/ (docs/performance.md,
// "Adding a run").
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "piranha/tuplespace/durable_log.h"
#include "piranha/tuplespace/store.h"

namespace {

using namespace piranha::ts;
using Clock = std::chrono::steady_clock;

struct Args {
  std::string dir = "/tmp/piranha-log-bench";
  std::uint64_t log_mb = 1024;
  std::uint64_t live_mb = 554;
  std::size_t tuple_bytes = 1000;
  std::int64_t commits_per_s = 100;
  bool json = false;
};

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now().time_since_epoch()).count();
}

TupleImage tuple(std::int64_t i, const std::string& blob) {
  return image_of(Tuple::of("t", i, blob));
}

TemplateImage any() {
  return image_of(
      Template({Field::of(make_value("t")), Field::formal(Type::Int), Field::formal(Type::String)}));
}

WaitSpec take() {
  WaitSpec s;
  s.client = 1;
  s.timeout = 0;
  return s;
}

DurableLogOptions options(const std::string& dir, FsyncPolicy fsync, std::uint64_t compact_min) {
  DurableLogOptions o;
  o.dir = dir;
  o.fsync = fsync;
  o.compact_min_bytes = compact_min;
  return o;
}

// Writes a log of about `bytes`, half of what is written staying live; returns the live tuples' bytes.
std::uint64_t write_log(const std::string& dir, std::uint64_t bytes, const std::string& blob) {
  std::filesystem::remove_all(dir);
  Store s;
  DurableLog log(options(dir, FsyncPolicy::No, ~std::uint64_t{0} >> 2), s);
  std::int64_t next = 0;
  while (std::filesystem::file_size(log.path()) < bytes) {
    for (int i = 0; i < 256; ++i) s.out("bench", tuple(next++, blob), 0);
    for (int i = 0; i < 128; ++i) s.in("bench", any(), take(), 0);
    log.commit();
  }
  return s.stats("bench")->bytes;
}

struct Recovery {
  double seconds = 0;
  std::uint64_t tuples = 0;
  double peak_rss_mb = 0;
};

// Recovers DIR in a child process; its time, tuples and peak resident set.
Recovery recover_in_child(const std::string& dir) {
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error("pipe failed");
  pid_t pid = ::fork();
  if (pid == 0) {
    ::close(fds[0]);
    auto t = Clock::now();
    Store s;
    DurableLog log(options(dir, FsyncPolicy::Always, ~std::uint64_t{0} >> 2), s);
    double sec = seconds_since(t);
    std::string line = std::to_string(sec) + " " + std::to_string(log.recovery().tuples) + "\n";
    [[maybe_unused]] auto n = ::write(fds[1], line.data(), line.size());
    ::_exit(0);
  }
  ::close(fds[1]);
  char buf[128] = {};
  [[maybe_unused]] auto n = ::read(fds[0], buf, sizeof buf - 1);
  ::close(fds[0]);
  int status = 0;
  rusage ru{};
  ::wait4(pid, &status, 0, &ru);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("recovery failed");
  Recovery r;
  std::sscanf(buf, "%lf %lu", &r.seconds, &r.tuples);
  r.peak_rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;
  return r;
}

double read_file_seconds(const std::string& path) {
  auto t = Clock::now();
  std::ifstream in(path, std::ios::binary);
  std::vector<char> buf(1 << 20);
  while (in.read(buf.data(), static_cast<std::streamsize>(buf.size())) || in.gcount() > 0) {
  }
  return seconds_since(t);
}

struct Compaction {
  int rewrites = 0;
  double longest_with_rewrite_ms = 0;     // the longest call that finished a rewrite
  double longest_during_rewrite_ms = 0;   // the longest other call while a rewrite's thread ran
  double longest_without_rewrite_ms = 0;  // the longest call with no rewrite under way
  double longest_step_ms = -1;            // as the log reports its rewrite's last step; -1: not reported
  std::uint64_t live_bytes = 0;
  double seconds = 0;
};

Compaction compaction(const std::string& dir, std::uint64_t live_bytes, const std::string& blob,
                      std::int64_t commits_per_s) {
  std::filesystem::remove_all(dir);
  Compaction c;
  int rewrites = 0;
  DurableLogOptions o = options(dir, FsyncPolicy::EverySec, 64u << 20);
  o.log = [&](std::string_view line) {
    if (!line.starts_with("rewrote ")) return;
    if (std::getenv("LOG_BENCH_VERBOSE")) std::cerr << line << "\n";
    ++rewrites;
    // A log that rewrites off the event loop says how long requests waited for its last step.
    if (auto at = line.find("requests waited "); at != std::string_view::npos)
      c.longest_step_ms = std::max(c.longest_step_ms, std::stod(std::string(line.substr(at + 16))));
  };
  Store s;
  DurableLog log(o, s);
  auto started = Clock::now();
  std::int64_t next = 0;
  int target_rewrites = -1;
  for (std::int64_t commit = 0; target_rewrites < 0 || rewrites < target_rewrites; ++commit) {
    // A server's pace: commits_per_s turns of 256 (growing) or 512 requests.
    std::this_thread::sleep_until(started + std::chrono::microseconds(1'000'000 * commit / commits_per_s));
    bool growing = s.stats("bench") ? s.stats("bench")->bytes < live_bytes : true;
    if (!growing && target_rewrites < 0) target_rewrites = rewrites + 2;
    for (int i = 0; i < 256; ++i) s.out("bench", tuple(next++, blob), 0);
    if (!growing)
      for (int i = 0; i < 256; ++i) s.in("bench", any(), take(), 0);
    // A rewrite that never finishes would fill the disk.
    if (std::filesystem::file_size(log.path()) > 8 * live_bytes + (1u << 30))
      throw std::runtime_error(log.path() +
                               " grew past eight times the live set: the rewrites do not finish");
    int before = rewrites;
    // A rewrite under way off the event loop has its snapshot file open.
    bool rewriting = std::filesystem::exists(log.path() + ".tmp");
    auto t = Clock::now();
    log.commit();
    log.sync_if_due(now_ms());
    double ms = seconds_since(t) * 1000;
    double& longest = rewrites > before ? c.longest_with_rewrite_ms
                      : rewriting       ? c.longest_during_rewrite_ms
                                        : c.longest_without_rewrite_ms;
    longest = std::max(longest, ms);
  }
  c.rewrites = rewrites;
  c.live_bytes = s.stats("bench")->bytes;
  c.seconds = seconds_since(started);
  return c;
}

int run(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    std::string k = argv[i];
    auto value = [&] {
      if (i + 1 >= argc) throw std::runtime_error(k + " needs a value");
      return std::string(argv[++i]);
    };
    if (k == "--dir")
      a.dir = value();
    else if (k == "--log-mb")
      a.log_mb = std::stoull(value());
    else if (k == "--live-mb")
      a.live_mb = std::stoull(value());
    else if (k == "--tuple-bytes")
      a.tuple_bytes = std::stoull(value());
    else if (k == "--commits-per-s")
      a.commits_per_s = std::stoll(value());
    else if (k == "--json")
      a.json = true;
    else {
      std::cerr << "usage: log_bench [--dir DIR] [--log-mb N] [--live-mb M] [--tuple-bytes B] "
                   "[--commits-per-s C] [--json]\n";
      return 2;
    }
  }
  std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  const std::string blob(a.tuple_bytes, 'x');
  const std::string recovery_dir = a.dir + "/recovery", compaction_dir = a.dir + "/compaction";

  std::cerr << "log_bench: writing a " << a.log_mb << " MB log\n";
  std::uint64_t live = write_log(recovery_dir, a.log_mb << 20, blob);
  std::uint64_t log_bytes = std::filesystem::file_size(recovery_dir + "/tuples.log");
  double cat_s = read_file_seconds(recovery_dir + "/tuples.log");
  std::cerr << "log_bench: recovering it\n";
  Recovery r = recover_in_child(recovery_dir);
  std::cerr << "log_bench: compaction at " << a.live_mb << " MB of live tuples\n";
  Compaction c = compaction(compaction_dir, a.live_mb << 20, blob, a.commits_per_s);
  std::filesystem::remove_all(a.dir);

  nlohmann::ordered_json report;
  report["date"] = date;
  report["provenance"] = {{"benchmark", "log_bench"}};
  report["config"] = {{"log_mb", a.log_mb},
                      {"live_mb", a.live_mb},
                      {"tuple_bytes", a.tuple_bytes},
                      {"commits_per_s", a.commits_per_s}};
  report["recovery"] = {{"log_bytes", log_bytes},       {"live_bytes", live},
                        {"tuples", r.tuples},           {"seconds", r.seconds},
                        {"peak_rss_mb", r.peak_rss_mb}, {"read_file_seconds", cat_s}};
  report["compaction"] = {{"live_bytes", c.live_bytes},
                          {"rewrites", c.rewrites},
                          {"longest_wait_with_rewrite_ms", c.longest_with_rewrite_ms},
                          {"longest_wait_during_rewrite_ms", c.longest_during_rewrite_ms},
                          {"longest_wait_without_rewrite_ms", c.longest_without_rewrite_ms},
                          {"longest_rewrite_step_ms", c.longest_step_ms},
                          {"seconds", c.seconds}};
  if (a.json) {
    std::cout << report.dump(2) << "\n";
  } else {
    std::printf(
        "recovery of a %.0f MB log (%.0f MB live, %lu tuples): %.2f s, peak RSS %.0f MB; reading the file: "
        "%.2f s\n",
        static_cast<double>(log_bytes) / (1 << 20), static_cast<double>(live) / (1 << 20), r.tuples,
        r.seconds, r.peak_rss_mb, cat_s);
    std::printf(
        "compaction at %.0f MB live: %d rewrites; longest wait %.1f ms finishing a rewrite, %.1f ms while "
        "one ran, "
        "%.1f ms with none under way\n",
        static_cast<double>(c.live_bytes) / (1 << 20), c.rewrites, c.longest_with_rewrite_ms,
        c.longest_during_rewrite_ms, c.longest_without_rewrite_ms);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  try {
    return run(argc, argv, a);
  } catch (const std::exception& e) {
    std::filesystem::remove_all(a.dir);  // a log of a gigabyte or more
    std::cerr << "log_bench: " << e.what() << "\n";
    return 1;
  }
}
