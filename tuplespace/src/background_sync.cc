#include "background_sync.h"

#include <unistd.h>

#include <algorithm>
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

void BackgroundSync::request(int fd, std::uint64_t mark) {
  {
    std::lock_guard lock(mu_);
    requested_fd_ = fd;
    requested_mark_ = mark;
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

std::uint64_t BackgroundSync::synced_mark() const {
  std::lock_guard lock(mu_);
  return synced_mark_;
}

void BackgroundSync::forget_mark() {
  std::lock_guard lock(mu_);
  synced_mark_ = 0;
}

void BackgroundSync::loop() {
  std::unique_lock lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || requested_fd_ >= 0; });
    if (requested_fd_ < 0) return;  // stopping, nothing left to do
    int fd = std::exchange(requested_fd_, -1);
    std::uint64_t mark = requested_mark_;
    running_ = true;
    lock.unlock();
    int rc = ::fdatasync(fd);
    int err = errno;
    lock.lock();
    running_ = false;
    ++completed_;
    if (rc != 0 && error_.empty()) error_ = std::string("fdatasync failed: ") + std::strerror(err);
    if (rc == 0) synced_mark_ = std::max(synced_mark_, mark);
    cv_.notify_all();
  }
}

}  // namespace piranha::ts
