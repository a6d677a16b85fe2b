// FiberClient: one tuple-space connection shared by the fibers of one thread.
//
//   ts::FiberClient client("tcp://127.0.0.1:7070");
//   ts::FiberSpace jobs = client.space("jobs");
//   boost::fibers::fiber worker([&] {
//     auto t = jobs.in("task", ts::formal<std::int64_t>);  // blocks this fiber only
//   });
//   jobs.out("task", 7);
//   worker.join();
//
// FiberClient has Client's operations and FiberSpace has Space's typed API.
// Every call blocks only the calling fiber; the thread's other fibers keep
// running, and any number of them may wait in in()/rd()/next_event() at once.
// All requests share ONE ZeroMQ DEALER connection (with Client's socket
// options and heartbeats): each request carries its own id, and the caller
// waits on a fiber future until the reply with that id arrives.
//
// Threading: NOT thread-safe. A FiberClient belongs to the thread that
// created it. Use it from that thread's fibers only (its main fiber
// included) and destroy it on that thread before the thread exits. A call
// from another thread throws std::logic_error.
//
// Faults: as Client's (client.h, "Faults"): deadlines from
// options.request_timeout, a lost connection reopened with backoff, the
// requests in flight re-issued (rd, rd_many, stats, watch, leased takes) or
// failed with "unknown_outcome" (the rest), blocked calls past their deadline
// failed with "unreachable" (no server) or "deadline_exceeded" (a connected
// server did not answer), watches re-established under the same WatchId. The
// dispatcher does this for every waiting fiber at once; a fiber in
// next_event() gets "unreachable" when no server answers within
// request_timeout of the loss. An in/rd/in_many with timeout > 0 is re-issued with
// what is left of its timeout. Two of ClientOptions are Client's alone and
// ignored here: interrupt_fd (no call of a FiberClient ends early for an
// fd; a call ends with its answer or its deadline) and safe_takes (a take
// without a lease whose answer is lost has an unknown outcome, as Client's
// without safe_takes). A refusal with "disk_full" (a durable server's disk
// is full) is not sent again as Client sends it: the call throws it.
//
// Errors: an error reply throws TupleSpaceError(code, message) in the fiber
// that made the request; other fibers are unaffected. Besides Client's, this
// client raises Code::Closed (the client was destroyed while the call
// waited) and Code::BadReply (the server sent a frame that could not be
// decoded; the connection can no longer be trusted, so every waiting and
// later call throws it too).
//
// How replies are received, and what it costs. A dispatcher fiber reads the
// socket and hands each reply to the fiber that waits for it. ZeroMQ cannot
// wake a fiber scheduler, and Boost.Fiber cannot say whether other fibers are
// ready, so the dispatcher yields and times the yield:
//  - No request outstanding and no fiber in next_event(): it sleeps on a
//    fiber condition variable and costs nothing.
//  - The yield came straight back (under 2 us: no other fiber did any work):
//    it blocks the thread in zmq_poll for at most 1 ms, so a reply is seen
//    the moment it arrives, much as with Client. The price, only while a
//    request or next_event() is outstanding: a fiber whose sleep ends, that
//    is readied from another thread, or that busy-waits with yield() runs up
//    to 1 ms late; and a thread whose fibers all wait for a slow reply (an
//    in() served minutes later) wakes about a thousand times a second, a few
//    percent of a core.
//  - Other fibers are busy: it reads without blocking at each turn for 50 us
//    after activity (a request sent, a reply read), then sleeps between
//    reads, doubling the pause from 50 us up to 1 ms, so it never competes
//    with busy fibers and a reply waits at most about 1 ms for them.
// A reader thread blocking in zmq_poll would remove the 1 ms bounds but cost
// a thread per client and a cross-thread hand-off per reply.
//
// Watch events are read only while a fiber waits for a reply or an event;
// between such waits they queue inside ZeroMQ, as with Client.
#pragma once

#include <boost/fiber/future.hpp>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/tuplespace/client.h"

namespace piranha::ts {

class FiberClient;
using FiberSpace = BasicSpace<FiberClient>;

class FiberClient {
 public:
  // Connects, starts the dispatcher fiber and checks the server answers.
  // Blocks the calling fiber only. Throws TupleSpaceError with code
  // "unreachable" when no server answers within options.connect_timeout.
  explicit FiberClient(std::string endpoint, ClientOptions options = {});

  // Closes the connection. Fibers still waiting in a call wake up with
  // TupleSpaceError(Code::Closed); the server forgets their requests when it
  // notices the disconnection. Joins the dispatcher fiber, so the calling
  // fiber may briefly yield. Must run on the owning thread.
  ~FiberClient();

  FiberClient(const FiberClient&) = delete;
  FiberClient& operator=(const FiberClient&) = delete;

  // A typed handle to a named space; spaces exist from their first use. The
  // handle refers to this client and must not outlive it.
  FiberSpace space(std::string name);

  const std::string& endpoint() const { return endpoint_; }
  // How many times this client has opened a new session after losing one.
  std::uint64_t reconnects() const;

  // The untyped operations behind FiberSpace, with Client's contracts.
  // Timeouts and leases as Client's, in the same order (max, timeout,
  // lease): kForever waits for ever, 0 never waits (the server keeps the
  // time). lease > 0 takes under a lease.
  //
  // out waits for the server's answer, as Client::out does: the tuple is
  // stored when it returns, and a refusal is thrown by it.
  void out(std::string_view space, const Tuple& t);
  // As Client::out_posted: sends the tuple and returns without waiting for
  // the answer; a later request of this client is handled after it. Any
  // error it gets (including "unknown_outcome" when the connection is lost
  // before its answer, and "closed") is thrown by the next flush().
  void out_posted(std::string_view space, const Tuple& t);
  void out_many(std::string_view space, const std::vector<Tuple>& ts);
  std::optional<Leased> in(std::string_view space, const Template& t,
                           std::chrono::milliseconds timeout = kForever,
                           std::chrono::milliseconds lease = std::chrono::milliseconds(0));
  std::optional<Tuple> rd(std::string_view space, const Template& t,
                          std::chrono::milliseconds timeout = kForever);
  // As Client::in_many: up to `max` tuples now; with a timeout != 0, when
  // none matches, the first one written within it (empty when none came).
  std::vector<Tuple> in_many(std::string_view space, const Template& t, std::size_t max,
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  // As Client::in_many_leased: the same, each under its own lease of
  // `lease` (> 0).
  std::vector<Leased> in_many_leased(std::string_view space, const Template& t, std::size_t max,
                                     std::chrono::milliseconds timeout, std::chrono::milliseconds lease);
  // As Client::rd_many: copies of up to `max` matching tuples now, oldest first.
  std::vector<Tuple> rd_many(std::string_view space, const Template& t, std::size_t max);
  // Throw TupleSpaceError(Code::UnknownLease) when the lease already ended.
  void ack(LeaseId lease);
  void renew(LeaseId lease, std::chrono::milliseconds duration);
  // As Client::complete: ends `lease` and writes `ts` to `space` in one step
  // of the server; false, having written nothing, when the lease is not held.
  bool complete(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts);
  // As Client::complete_posted: sends the completion and returns without
  // waiting for the answer. A refusal is recorded for take_lost_leases();
  // any other error a posted completion gets (including "closed") is thrown
  // by the next flush().
  void complete_posted(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts);
  // The leases whose posted completion was refused, or whose answer was lost
  // with the connection (as Client::take_lost_leases), that no earlier call
  // reported, in arrival order. Never blocks and never throws.
  std::vector<LeaseId> take_lost_leases();
  // Blocks the calling fiber until every posted out and completion is
  // answered, then throws the first non-refusal error one of them got, if
  // any. The destructor waits the same way (at most connect_timeout).
  void flush();
  WatchId watch(std::string_view space, const Template& t);
  // Throws TupleSpaceError(Code::UnknownWatch) when `id` is not this client's.
  void unwatch(WatchId id);

  // The next watch event of any of this client's watches, waiting up to
  // `timeout` (kForever: no limit; 0: only what has already arrived). When
  // several fibers wait, events go to them in the order they started waiting.
  std::optional<WatchEvent> next_event(std::chrono::milliseconds timeout = kForever);

  // False when the space did not exist.
  bool remove(std::string_view space);
  std::vector<SpaceStats> stats();
  std::optional<SpaceStats> stats(std::string_view space);

  // Linda's eval on a fiber: runs fn on a new (detached) fiber of the calling
  // thread, then writes its result to `space` through this connection. fn
  // starts when the caller next blocks or yields. The future becomes ready
  // once the tuple is written and rethrows fn's exception, or
  // TupleSpaceError(Code::Closed) when the client was destroyed first. fn shares
  // the thread, so a long computation should yield now and then (or use
  // Client::eval, which runs on its own thread). The thread cannot exit while
  // fn runs.
  boost::fibers::future<void> eval(std::string space, std::function<Tuple()> fn);

 private:
  struct Impl;
  std::string endpoint_;
  // Shared with in-flight calls and eval fibers, so a fiber woken by the
  // destructor unwinds through live memory.
  std::shared_ptr<Impl> impl_;
};

inline FiberSpace FiberClient::space(std::string name) {
  return FiberSpace(*this, std::move(name));
}

}  // namespace piranha::ts
