#include "background_sync.h"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

namespace piranha::ts {

BackgroundSync::BackgroundSync() : thread_([this] { loop(); }) {}

BackgroundSync::~BackgroundSync() {
  {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return requested_fd_ < 0 && !running_; });
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void BackgroundSync::request(int fd) {
  {
    std::lock_guard lock(mu_);
    requested_fd_ = fd;
  }
  cv_.notify_all();
}

void BackgroundSync::wait_idle() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return requested_fd_ < 0 && !running_; });
}

std::string BackgroundSync::take_error() {
  std::lock_guard lock(mu_);
  return std::exchange(error_, std::string());
}

std::uint64_t BackgroundSync::completed() const {
  std::lock_guard lock(mu_);
  return completed_;
}

void BackgroundSync::loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || requested_fd_ >= 0; });
    if (requested_fd_ < 0) return;  // stopping, nothing left to do
    int fd = std::exchange(requested_fd_, -1);
    running_ = true;
    lock.unlock();
    int rc = ::fdatasync(fd);
    int err = errno;
    lock.lock();
    running_ = false;
    ++completed_;
    if (rc != 0 && error_.empty()) error_ = std::string("fdatasync failed: ") + std::strerror(err);
    cv_.notify_all();
  }
}

}  // namespace piranha::ts
