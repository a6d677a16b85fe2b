#include "piranha/agent/sensors.h"

#include <doctest/doctest.h>
#include <fcntl.h>
#include <linux/input.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>

#include "piranha/testing/temp_dir.h"

using piranha::Clock;
using piranha::InputWatch;
using piranha::testing::TempDir;
using namespace std::chrono_literals;

namespace {

const Clock::time_point t0{std::chrono::hours(1)};

// A FIFO standing in for an evdev device: the agent reads it exactly as it
// reads /dev/input/eventN, and the test writes recorded input_event records.
struct FakeDevice {
  explicit FakeDevice(std::string p) : path(std::move(p)) { REQUIRE(::mkfifo(path.c_str(), 0600) == 0); }
  ~FakeDevice() { close_writer(); }
  // The reader (InputWatch) must have it open first, as with a real device.
  void open_writer() {
    writer = ::open(path.c_str(), O_WRONLY | O_NONBLOCK);
    REQUIRE(writer >= 0);
  }
  void close_writer() {
    if (writer >= 0) ::close(writer);
    writer = -1;
  }
  void send(std::uint16_t type, std::uint16_t code, std::int32_t value) {
    input_event ev{};
    ev.type = type;
    ev.code = code;
    ev.value = value;
    send_bytes(reinterpret_cast<const char*>(&ev), sizeof ev);
  }
  void send_bytes(const char* p, std::size_t n) { REQUIRE(::write(writer, p, n) == static_cast<ssize_t>(n)); }
  std::string path;
  int writer = -1;
};

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

std::chrono::system_clock::time_point wall(std::int64_t seconds) {
  return std::chrono::system_clock::time_point(std::chrono::seconds(seconds));
}

void set_atime(const std::string& path, std::int64_t seconds) {
  timespec times[2] = {{static_cast<time_t>(seconds), 0}, {0, UTIME_OMIT}};
  REQUIRE(::utimensat(AT_FDCWD, path.c_str(), times, 0) == 0);
}

}  // namespace

TEST_CASE("sensors: read_loadavg reads the first three numbers") {
  TempDir dir;
  auto load = piranha::read_loadavg(dir.write("loadavg", "0.52 0.31 0.05 1/234 5678\n"));
  REQUIRE(load);
  CHECK((*load)[0] == 0.52);
  CHECK((*load)[1] == 0.31);
  CHECK((*load)[2] == 0.05);
  CHECK_FALSE(piranha::read_loadavg(dir / "missing"));
  CHECK_FALSE(piranha::read_loadavg(dir.write("bad", "0.52 busy\n")));
  CHECK_FALSE(piranha::read_loadavg(dir.write("empty", "")));
  CHECK(piranha::read_loadavg());  // this machine's /proc/loadavg
}

TEST_CASE("sensors: InputWatch notices a key press at once and resets the idle time") {
  TempDir dir;
  FakeDevice kbd(dir / "event0");
  InputWatch watch({dir / "event*"}, t0);
  REQUIRE(watch.fds().size() == 1);
  CHECK(watch.devices() == std::vector<std::string>{kbd.path});
  const int fd = watch.fds()[0];
  // Opening a device counts as activity: the owner's history is unknown.
  CHECK(*watch.idle_seconds(t0 + 5s) == doctest::Approx(5));

  kbd.open_writer();
  CHECK_FALSE(readable(fd));
  kbd.send(EV_KEY, KEY_A, 1);
  kbd.send(EV_SYN, SYN_REPORT, 0);
  CHECK(readable(fd));  // the agent's poll wakes without waiting for a tick
  CHECK(watch.drain(fd, t0 + 100s));
  CHECK_FALSE(readable(fd));
  CHECK(*watch.idle_seconds(t0 + 103s) == doctest::Approx(3));

  SUBCASE("mouse motion and touch count too") {
    kbd.send(EV_REL, REL_X, 4);
    CHECK(watch.drain(fd, t0 + 200s));
    kbd.send(EV_ABS, ABS_X, 100);
    CHECK(watch.drain(fd, t0 + 300s));
    CHECK(*watch.idle_seconds(t0 + 300s) == 0);
  }
  SUBCASE("sync, misc and LED events are not the owner") {
    kbd.send(EV_SYN, SYN_REPORT, 0);
    kbd.send(EV_MSC, MSC_SCAN, 30);
    kbd.send(EV_LED, LED_CAPSL, 1);
    CHECK_FALSE(watch.drain(fd, t0 + 200s));
    CHECK(*watch.idle_seconds(t0 + 200s) == doctest::Approx(100));
  }
  SUBCASE("a record split across reads is put back together") {
    input_event ev{};
    ev.type = EV_KEY;
    ev.code = KEY_B;
    const char* bytes = reinterpret_cast<const char*>(&ev);
    kbd.send_bytes(bytes, 5);
    CHECK_FALSE(watch.drain(fd, t0 + 200s));
    kbd.send_bytes(bytes + 5, sizeof ev - 5);
    CHECK(watch.drain(fd, t0 + 201s));
    CHECK(*watch.idle_seconds(t0 + 201s) == 0);
  }
  SUBCASE("an unplugged device is closed quietly; rescan picks up a new one") {
    kbd.close_writer();  // end of file, as a vanished device
    CHECK_FALSE(watch.drain(fd, t0 + 200s));
    CHECK(watch.fds().empty());
    // The last activity is remembered.
    CHECK(*watch.idle_seconds(t0 + 200s) == doctest::Approx(100));
    ::unlink(kbd.path.c_str());
    FakeDevice mouse(dir / "event1");
    watch.rescan(t0 + 250s);
    CHECK(watch.devices() == std::vector<std::string>{mouse.path});
    CHECK(*watch.idle_seconds(t0 + 250s) == 0);  // plugging it in was activity
  }
}

TEST_CASE("sensors: InputWatch rescan keeps open devices and ignores unknown fds") {
  TempDir dir;
  FakeDevice a(dir / "event0");
  InputWatch watch({dir / "event*"}, t0);
  auto before = watch.fds();
  watch.rescan(t0 + 10s);
  CHECK(watch.fds() == before);
  CHECK_FALSE(watch.drain(12345, t0 + 10s));

  InputWatch moved = std::move(watch);
  CHECK(moved.fds() == before);
  CHECK(watch.fds().empty());
}

TEST_CASE("sensors: InputWatch without devices knows nothing") {
  TempDir dir;
  InputWatch watch({dir / "event*"}, t0);
  CHECK(watch.fds().empty());
  CHECK_FALSE(watch.idle_seconds(t0 + 100s));
  InputWatch none({}, t0);
  CHECK_FALSE(none.idle_seconds(t0));
}

TEST_CASE("sensors: terminal idle is the most recent pts access time") {
  TempDir dir;
  set_atime(dir.write("0", ""), 1000);
  set_atime(dir.write("3", ""), 1040);
  set_atime(dir.write("ptmx", ""), 1099);  // opened by every new pty: not a terminal
  CHECK(*piranha::terminal_idle_seconds(wall(1100), dir.path()) == doctest::Approx(60));
  // An access time in the future (clock adjusted) is "just now", not negative.
  set_atime(dir / "0", 1200);
  CHECK(*piranha::terminal_idle_seconds(wall(1100), dir.path()) == 0);
}

TEST_CASE("sensors: no terminals, no terminal idle time") {
  TempDir dir;
  dir.write("ptmx", "");
  CHECK_FALSE(piranha::terminal_idle_seconds(wall(1100), dir.path()));
  CHECK_FALSE(piranha::terminal_idle_seconds(wall(1100), dir / "missing"));
}

TEST_CASE("sensors: XIdle reports nothing without a reachable display") {
  std::string saved = std::getenv("DISPLAY") ? std::getenv("DISPLAY") : "";
  ::unsetenv("DISPLAY");
  piranha::XIdle from_env;
  CHECK_FALSE(from_env.idle_seconds());
  CHECK_FALSE(from_env.idle_seconds());  // and keeps saying so
  if (!saved.empty()) ::setenv("DISPLAY", saved.c_str(), 1);

  // A display nobody serves: the libraries load (when installed) and the
  // connection fails cleanly.
  piranha::XIdle nowhere(":97");
  CHECK_FALSE(nowhere.idle_seconds());
}
