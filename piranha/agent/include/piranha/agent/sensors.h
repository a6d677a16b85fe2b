// Linux availability sensors: load average, input devices, terminals and the
// X display. Each is small, reads one source, and reports "don't know"
// (nullopt) rather than failing: a node without a keyboard, without X or
// without permission to read /dev/input is judged on what remains.
//
// None of these is thread-safe; the node agent owns them on one thread.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "piranha/agent/availability.h"

namespace piranha {

// The 1-, 5- and 15-minute load averages from `path` (the format of
// /proc/loadavg: three decimal numbers first). nullopt when the file cannot be
// read or does not start with three numbers.
std::optional<std::array<double, 3>> read_loadavg(const std::string& path = "/proc/loadavg");

// InputWatch: owner activity on evdev input devices (keyboard, mouse, touch).
//
// Opens every path matching the glob patterns O_RDONLY | O_NONBLOCK. The agent
// polls fds() so that a key press is noticed at once, calls drain() for each
// readable one, and asks idle_seconds() when judging. A device that cannot be
// opened (no permission) is skipped; one that reports an error or end of file
// (unplugged) is closed quietly and leaves fds(); rescan() picks up devices
// that appeared since. Owns its file descriptors; movable, not copyable.
class InputWatch {
 public:
  // Opens the devices present now. Opening a device counts as activity at
  // `now`: evdev keeps no history, so the agent cannot tell how long the owner
  // has been idle, and a newly plugged device means someone is there.
  explicit InputWatch(std::vector<std::string> patterns = {"/dev/input/event*"},
                      Clock::time_point now = Clock::now());
  ~InputWatch();
  InputWatch(InputWatch&& other) noexcept;
  InputWatch& operator=(InputWatch&& other) noexcept;
  InputWatch(const InputWatch&) = delete;
  InputWatch& operator=(const InputWatch&) = delete;

  // Re-globs the patterns and opens devices not open yet (hotplug). Devices
  // already open are kept as they are.
  void rescan(Clock::time_point now = Clock::now());

  // The open devices' file descriptors, to poll for readability. Valid until
  // the next drain(), rescan() or destruction.
  std::vector<int> fds() const;

  // The paths of the open devices, for diagnostics.
  std::vector<std::string> devices() const;

  // Reads everything `fd` has, in whole `struct input_event` records (a
  // partial record is kept for the next read), and records `now` as the time
  // of the last activity when any key, relative or absolute event arrived.
  // Returns true when such activity was seen. On error or end of file the
  // device is closed and removed. An fd that is not one of fds() is ignored.
  bool drain(int fd, Clock::time_point now);

  // Seconds since the last activity on any device ever opened; nullopt when
  // no device was ever opened.
  std::optional<double> idle_seconds(Clock::time_point now) const;

 private:
  struct Device {
    std::string path;
    std::string partial;  // bytes of an incomplete input_event record
  };
  void close_all();

  std::vector<std::string> patterns_;
  std::map<int, Device> devices_;  // by file descriptor
  std::optional<Clock::time_point> last_activity_;
};

// Seconds since the owner last typed at any terminal: the smallest
// (now - access time) over the numbered entries of `dir` (the pseudo-terminal
// devices; the kernel updates a tty's access time on input). Clamped at 0.
// nullopt when there is no such entry or `dir` cannot be read.
std::optional<double> terminal_idle_seconds(std::chrono::system_clock::time_point now,
                                            const std::string& dir = "/dev/pts");

// XIdle: the X server's idle time (MIT-SCREEN-SAVER extension), which sees
// every keyboard and mouse event of a graphical session.
//
// libX11 and libXss are loaded with dlopen() at run time, so there is no build
// dependency and no failure where X is absent. Connects to $DISPLAY (or to
// `display` when given) on first use and retries at most every 30 seconds
// while unreachable. A lost connection (X server gone) makes it report nullopt
// and reconnect later instead of letting Xlib exit the process; for that it
// needs XSetIOErrorExitHandler (libX11 >= 1.7) and stays unused without it.
// Owns the connection; not copyable.
class XIdle {
 public:
  // `display` empty means $DISPLAY.
  explicit XIdle(std::string display = "");
  ~XIdle();
  XIdle(const XIdle&) = delete;
  XIdle& operator=(const XIdle&) = delete;

  // Milliseconds since the last X input event, in seconds; nullopt when the
  // libraries, the display or the extension are unavailable.
  std::optional<double> idle_seconds();

 private:
  struct Connection;
  std::string display_;
  std::unique_ptr<Connection> conn_;
  std::optional<Clock::time_point> last_attempt_;
};

}  // namespace piranha
