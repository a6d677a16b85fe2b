// StopOnSignals: how the long-running commands (agent, nps run) stop.
//
// While an instance lives, SIGINT and SIGTERM are blocked in every thread
// started after it (and in the creating thread), and one thread of its own
// takes them with sigwait() and only sets `stop`. So no call in progress is
// interrupted -- a tuple-space call would fail with EINTR -- and the
// command's loop stops at its next turn. SIGPIPE is ignored. Create it
// before any other thread.
#pragma once

#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <thread>

namespace piranha::apps {

class StopOnSignals {
 public:
  explicit StopOnSignals(std::atomic<bool>& stop) {
    sigemptyset(&signals_);
    for (int sig : {SIGINT, SIGTERM, SIGUSR2}) sigaddset(&signals_, sig);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    // SIGUSR2 only ends the watcher (the destructor sends it).
    watcher_ = std::thread([this, &stop] {
      int sig = 0;
      while (sigwait(&signals_, &sig) == 0 && sig != SIGUSR2) stop.store(true);
    });
  }
  ~StopOnSignals() {
    pthread_kill(watcher_.native_handle(), SIGUSR2);
    watcher_.join();
  }
  StopOnSignals(const StopOnSignals&) = delete;
  StopOnSignals& operator=(const StopOnSignals&) = delete;

 private:
  sigset_t signals_;
  std::thread watcher_;
};

}  // namespace piranha::apps
