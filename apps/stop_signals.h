// StopOnSignals: how the long-running commands (agent, nps run) stop.
//
// While an instance lives, SIGINT and SIGTERM are blocked in every thread
// started after it (and in the creating thread), and one thread of its own
// takes them with sigwait() and only sets `stop`. So no call in progress is
// interrupted -- a tuple-space call would fail with EINTR -- and the
// command's loop stops at its next turn. SIGPIPE is ignored. Create it
// before any other thread.
//
// fd() is an eventfd that becomes readable, and stays so, when a signal
// sets `stop`: given to a tuple-space client as ClientOptions::interrupt_fd,
// it ends a wait on a server that is gone at once, rather than after the
// client's request_timeout (30 s), so that a stop is not held up by it.
#pragma once

#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <thread>

namespace piranha::apps {

class StopOnSignals {
 public:
  explicit StopOnSignals(std::atomic<bool>& stop) {
    sigemptyset(&signals_);
    for (int sig : {SIGINT, SIGTERM, SIGUSR2}) sigaddset(&signals_, sig);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    // SIGUSR2 only ends the watcher (the destructor sends it).
    watcher_ = std::thread([this, &stop] {
      int sig = 0;
      while (sigwait(&signals_, &sig) == 0 && sig != SIGUSR2) {
        stop.store(true);
        const std::uint64_t one = 1;
        [[maybe_unused]] const auto n = ::write(fd_, &one, sizeof one);
      }
    });
  }
  ~StopOnSignals() {
    pthread_kill(watcher_.native_handle(), SIGUSR2);
    watcher_.join();
    if (fd_ >= 0) ::close(fd_);
  }
  // Readable once a signal asked to stop (-1 if no eventfd could be made).
  int fd() const { return fd_; }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  sigset_t signals_;
  int fd_ = -1;
  std::thread watcher_;
};

}  // namespace piranha::apps
