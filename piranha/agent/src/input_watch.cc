#include <fcntl.h>
#include <glob.h>
#include <linux/input.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "piranha/agent/sensors.h"

namespace piranha {

InputWatch::InputWatch(std::vector<std::string> patterns, Clock::time_point now)
    : patterns_(std::move(patterns)) {
  rescan(now);
}

InputWatch::~InputWatch() {
  close_all();
}

InputWatch::InputWatch(InputWatch&& other) noexcept
    : patterns_(std::move(other.patterns_)),
      devices_(std::move(other.devices_)),
      last_activity_(other.last_activity_) {
  other.devices_.clear();
}

InputWatch& InputWatch::operator=(InputWatch&& other) noexcept {
  if (this != &other) {
    close_all();
    patterns_ = std::move(other.patterns_);
    devices_ = std::move(other.devices_);
    last_activity_ = other.last_activity_;
    other.devices_.clear();
  }
  return *this;
}

void InputWatch::close_all() {
  for (auto& [fd, device] : devices_) ::close(fd);
  devices_.clear();
}

void InputWatch::rescan(Clock::time_point now) {
  for (const auto& pattern : patterns_) {
    glob_t g{};
    if (::glob(pattern.c_str(), 0, nullptr, &g) == 0) {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) {
        std::string path = g.gl_pathv[i];
        bool open_already = false;
        for (const auto& [fd, device] : devices_) open_already |= device.path == path;
        if (open_already) continue;
        int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        if (fd < 0) continue;
        devices_[fd] = Device{path, {}};
        last_activity_ = now;
      }
    }
    ::globfree(&g);
  }
}

std::vector<int> InputWatch::fds() const {
  std::vector<int> out;
  for (const auto& [fd, device] : devices_) out.push_back(fd);
  return out;
}

std::vector<std::string> InputWatch::devices() const {
  std::vector<std::string> out;
  for (const auto& [fd, device] : devices_) out.push_back(device.path);
  return out;
}

bool InputWatch::drain(int fd, Clock::time_point now) {
  auto it = devices_.find(fd);
  if (it == devices_.end()) return false;
  std::string& partial = it->second.partial;
  bool activity = false;
  char buf[64 * sizeof(input_event)];
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
    if (n <= 0) {
      // End of file or an error such as ENODEV: the device is gone.
      ::close(fd);
      devices_.erase(it);
      break;
    }
    partial.append(buf, static_cast<std::size_t>(n));
    std::size_t whole = partial.size() / sizeof(input_event) * sizeof(input_event);
    for (std::size_t off = 0; off < whole; off += sizeof(input_event)) {
      input_event ev;
      std::copy_n(partial.data() + off, sizeof ev, reinterpret_cast<char*>(&ev));
      // EV_SYN and EV_MSC accompany real input; EV_LED and friends are
      // output, not the owner.
      if (ev.type == EV_KEY || ev.type == EV_REL || ev.type == EV_ABS) activity = true;
    }
    partial.erase(0, whole);
  }
  if (activity) last_activity_ = now;
  return activity;
}

std::optional<double> InputWatch::idle_seconds(Clock::time_point now) const {
  if (!last_activity_) return std::nullopt;
  return std::max(0.0, std::chrono::duration<double>(now - *last_activity_).count());
}

}  // namespace piranha
