// BackgroundSync: fdatasync(2) on a thread of its own, so that a server's
// event loop does not wait for the disk under the `everysec` policy (Redis
// does its everysec fsync the same way, off its main thread).
//
// Ownership: the caller owns the file descriptor and must keep it open until
// wait_idle() has returned (call it before closing or replacing the file).
//
// Errors: a failed fdatasync is remembered; take_error() hands it to the
// owner, who decides (the durable log throws, and the server stops rather than
// acknowledge what may not be on disk).
//
// Thread-safety: every member function is for one owner thread; the sync
// thread is internal.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace piranha::ts {

class BackgroundSync {
 public:
  BackgroundSync();   // starts the sync thread
  ~BackgroundSync();  // waits for a sync in progress, then stops the thread
  BackgroundSync(const BackgroundSync&) = delete;
  BackgroundSync& operator=(const BackgroundSync&) = delete;

  // Asks for an fdatasync of `fd` and returns at once. While one is running,
  // a second request waits for it (at most one waits: it covers every write
  // made before it was asked for). `mark` is the caller's note of what the
  // sync covers (the durable log's end of file when it asked).
  void request(int fd, std::uint64_t mark = 0);

  // Returns once nothing is running or requested.
  void wait_idle();

  // The failure of a sync since the last call ("fdatasync failed: ..."), or "".
  std::string take_error();

  // Syncs completed, failed or not.
  std::uint64_t completed() const;

  // The mark of the last sync that succeeded, 0 before one or after forget_mark().
  std::uint64_t synced_mark() const;
  // Forgets the marks of syncs requested so far (call after wait_idle(), when
  // the file the marks describe is replaced).
  void forget_mark();

 private:
  void loop();
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int requested_fd_ = -1;  // -1: nothing requested
  std::uint64_t requested_mark_ = 0;
  std::uint64_t synced_mark_ = 0;
  bool running_ = false;
  bool stopping_ = false;
  std::string error_;
  std::uint64_t completed_ = 0;
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace piranha::ts
