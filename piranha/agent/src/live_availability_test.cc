#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/input.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>

#include "piranha/agent/agent_config.h"
#include "piranha/agent/availability_source.h"
#include "piranha/testing/temp_dir.h"

using piranha::Clock;
using piranha::LiveAvailability;
using piranha::LiveOptions;
using piranha::testing::TempDir;
using namespace std::chrono_literals;

namespace {

const Clock::time_point kLiveStart{std::chrono::hours(2)};

// A node made of files: /proc/loadavg, a /proc with one piranha process, a
// FIFO as the keyboard, and a /dev/pts. Wall-clock time is kLiveStart's offset.
struct FakeNode {
  TempDir dir;
  std::int64_t wall_seconds = 1'000'000;

  FakeNode() {
    loadavg(0, 0, 0);
    std::filesystem::create_directories(dir / "proc");
    std::filesystem::create_directories(dir / "pts");
    REQUIRE(::mkfifo((dir / "event0").c_str(), 0600) == 0);
  }
  void loadavg(double l1, double l5, double l15) {
    dir.write("loadavg",
              std::to_string(l1) + " " + std::to_string(l5) + " " + std::to_string(l15) + " 1/99 1234\n");
  }
  // Process 4242, leader of piranha group 4242, has used `seconds` of CPU.
  void piranha_cpu(double seconds) {
    long ticks = std::lround(seconds * static_cast<double>(::sysconf(_SC_CLK_TCK)));
    dir.write("proc/4242/stat", "4242 (piranha) R 1 4242 4242 0 -1 0 0 0 0 0 " + std::to_string(ticks) +
                                    " 0 0 0 20 0 1 0 1 1 1\n");
  }
  LiveOptions options() {
    LiveOptions o;
    o.loadavg_path = dir / "loadavg";
    o.proc_dir = dir / "proc";
    o.input_devices = {dir / "event*"};
    o.terminal_dir = dir / "pts";
    o.x11 = false;
    o.wall_clock = [this] {
      return std::chrono::system_clock::time_point(std::chrono::seconds(wall_seconds));
    };
    return o;
  }
};

}  // namespace

TEST_CASE("live availability: load and input decide, and the poll interval paces evaluation") {
  FakeNode node;
  auto options = node.options();
  options.poll_seconds = 2.5;
  LiveAvailability live(options, kLiveStart);
  CHECK(live.next_evaluation(kLiveStart + 10s) == kLiveStart + 12500ms);

  // The keyboard was "seen" at kLiveStart: not idle long enough yet.
  auto v = live.evaluate(kLiveStart + 30s);
  CHECK_FALSE(v.available);
  CHECK(v.reason == "keyboard/mouse idle 30 s < 60 s");

  v = live.evaluate(kLiveStart + 60s);
  CHECK(v.available);
  CHECK(v.reason == "idle");

  node.loadavg(0.93, 0.2, 0.05);
  v = live.evaluate(kLiveStart + 61s);
  CHECK_FALSE(v.available);
  CHECK(v.reason == "1-min load 0.93 >= 0.70, own piranhas excluded");
  REQUIRE(live.last_reading().load);
  CHECK((*live.last_reading().load)[0] == doctest::Approx(0.93));
}

TEST_CASE("live availability: a key press is readable at once and makes the node unavailable") {
  FakeNode node;
  LiveAvailability live(node.options(), kLiveStart);
  REQUIRE(live.evaluate(kLiveStart + 100s).available);
  REQUIRE(live.fds().size() == 1);

  int kbd = ::open((node.dir / "event0").c_str(), O_WRONLY | O_NONBLOCK);
  REQUIRE(kbd >= 0);
  input_event ev{};
  ev.type = EV_KEY;
  ev.code = KEY_SPACE;
  ev.value = 1;
  REQUIRE(::write(kbd, &ev, sizeof ev) == static_cast<ssize_t>(sizeof ev));
  live.on_readable(live.fds()[0], kLiveStart + 101s);
  auto v = live.evaluate(kLiveStart + 101s);
  CHECK_FALSE(v.available);
  CHECK(v.reason == "keyboard/mouse idle 0 s < 60 s");
  CHECK(live.evaluate(kLiveStart + 161s).available);
  ::close(kbd);
}

TEST_CASE("live availability: the most recent of all input sources counts") {
  FakeNode node;
  std::string tty = node.dir.write("pts/0", "");
  timespec times[2] = {{static_cast<time_t>(node.wall_seconds - 20), 0}, {0, UTIME_OMIT}};
  REQUIRE(::utimensat(AT_FDCWD, tty.c_str(), times, 0) == 0);

  auto options = node.options();
  LiveAvailability live(options, kLiveStart);
  live.evaluate(kLiveStart + 300s);  // keyboard idle 300 s, terminal 20 s
  CHECK(*live.last_reading().input_idle_seconds == doctest::Approx(20));

  options.terminals = false;
  LiveAvailability without_terminals(options, kLiveStart);
  without_terminals.evaluate(kLiveStart + 300s);
  CHECK(*without_terminals.last_reading().input_idle_seconds == doctest::Approx(300));
}

TEST_CASE("live availability: a busy piranha does not make its own node unavailable") {
  FakeNode node;
  auto options = node.options();
  options.input_devices = {};
  options.terminals = false;
  LiveAvailability mine(options, kLiveStart);
  LiveAvailability naive(options, kLiveStart);
  mine.set_piranha_groups({4242});

  // The piranha keeps one CPU busy for 10 minutes; the kernel's averages
  // follow it (plus a little background load).
  for (int s = 0; s <= 600; s += 5) {
    node.piranha_cpu(s);
    double t = s;
    node.loadavg(0.05 + 1 - std::exp(-t / 60), 0.05 + 1 - std::exp(-t / 300), 0.05 + 1 - std::exp(-t / 900));
    mine.evaluate(kLiveStart + std::chrono::seconds(s));
    naive.evaluate(kLiveStart + std::chrono::seconds(s));
  }
  auto v = mine.evaluate(kLiveStart + 600s);
  CHECK(v.available);
  CHECK((*mine.last_reading().load)[0] == doctest::Approx(0.05).epsilon(0.01));
  CHECK(mine.own_load().load()[0] == doctest::Approx(1 - std::exp(-10.0)));
  CHECK_FALSE(naive.evaluate(kLiveStart + 600s).available);

  // When the piranha exits, its CPU leaves /proc; that is not negative work.
  std::filesystem::remove_all(node.dir / "proc/4242");
  mine.evaluate(kLiveStart + 605s);
  CHECK(mine.own_load().load()[0] < 1 - std::exp(-10.0));
  CHECK(mine.own_load().load()[0] > 0.9);
}

TEST_CASE("live availability: make_availability_source builds what the configuration asks for") {
  piranha::AvailabilityConfig live_config;
  live_config.input_devices = {};
  live_config.x11 = false;
  auto live = piranha::make_availability_source(live_config, kLiveStart);
  CHECK(dynamic_cast<LiveAvailability*>(live.get()));

  piranha::AvailabilityConfig trace_config;
  trace_config.sensor = piranha::SensorKind::Trace;
  CHECK_THROWS_AS(piranha::make_availability_source(trace_config, kLiveStart), std::invalid_argument);
  auto trace = std::make_shared<piranha::AvailabilityTrace>();
  trace->length = 10;
  trace->nodes = {"ws01"};
  trace->periods = {{{3, 10}}};
  trace_config.trace = piranha::TraceSensorConfig{"pool.avail.csv", "ws01", 60, 0, trace};
  auto replay = piranha::make_availability_source(trace_config, kLiveStart);
  REQUIRE(dynamic_cast<piranha::TraceAvailability*>(replay.get()));
  CHECK(replay->next_evaluation(kLiveStart) == kLiveStart + 3s);
  CHECK(replay->evaluate(kLiveStart).reason == "trace ws01: unavailable (step 0)");
}
