#include "piranha/tuplespace/fiber_client.h"

#include <algorithm>
#include <boost/fiber/condition_variable.hpp>
#include <boost/fiber/fiber.hpp>
#include <boost/fiber/mutex.hpp>
#include <boost/fiber/operations.hpp>
#include <cerrno>
#include <deque>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <zmq.hpp>

#include "client_core.h"
#include "connection.h"
#include "piranha/base/clock.h"
#include "piranha/tuplespace/server.h"

namespace piranha::ts {
namespace {

using std::chrono::microseconds;

// The dispatcher's schedule; fiber_client.h explains the trade-off. A yield
// that returns within kQuietYield means no other fiber did any work: the
// dispatcher then blocks in zmq_poll for at most kMaxPause. Otherwise it polls
// at every turn for kSpin after activity, then sleeps between polls from
// kMinPause doubling up to kMaxPause.
constexpr microseconds kQuietYield{2};
constexpr microseconds kSpin{50};
constexpr microseconds kMinPause{50};
constexpr microseconds kMaxPause{1000};
// Frames routed before yielding, so woken fibers run during a flood.
constexpr int kBatch = 256;

TupleSpaceError error_of(const Reply& r) {
  return TupleSpaceError::of(r.code, r.message);
}

TupleSpaceError client_error(Code code, const std::string& message) {
  return TupleSpaceError::of(code, message);
}

// How often the dispatcher looks for requests past their deadline.
constexpr Millis kDeadlineCheckMs = 20;

}  // namespace

struct FiberClient::Impl : std::enable_shared_from_this<Impl> {
  // A request waiting for its reply. may_park: the server may hold it (in/rd
  // with a timeout), so later requests can be answered first.
  using Retry = detail::Retry;
  // An in/rd with a timeout > 0: re-issued with what is left of it.
  struct Blocking {
    Op op;  // In, Rd or InMany
    std::string space;
    Template tmpl;
    Millis timeout;
    Millis lease;
    std::size_t max = 0;  // InMany
  };
  // What re-issuing an in/rd/in_many needs: only one with a timeout > 0 is re-encoded.
  static std::optional<Blocking> blocking(Op op, std::string_view space, const Template& t, Millis timeout,
                                          Millis lease, std::size_t max = 0) {
    if (timeout <= 0) return std::nullopt;
    return Blocking{op, std::string(space), t, timeout, lease, max};
  }
  struct Pending {
    boost::fibers::promise<Reply> reply;
    bool may_park = false;
    Retry retry = Retry::Fail;
    bool sent = false;  // written to the current connection
    std::string frame;  // kept while it may have to be sent again
    std::optional<Blocking> blocking;
    Millis since = 0;      // when it was submitted
    Millis deadline = -1;  // -1: none while connected (a blocking in/rd)
    // A posted out (lease 0) or completion of `lease`: nobody waits on
    // `reply`; its answer is recorded.
    bool posted = false;
    LeaseId lease = 0;
  };

  const std::thread::id owner = std::this_thread::get_id();
  std::string endpoint;
  ClientOptions options;
  std::unique_ptr<detail::Connection> conn;
  // Sessions: false from the moment a lost connection is noticed until a new
  // one has answered hello; requests made meanwhile wait unsent.
  bool connected = true;
  std::uint64_t hello_rid = 0;  // the new session's hello, while reconnecting
  Millis lost_at = 0;
  Millis backoff = 0;
  std::uint64_t reconnects = 0;
  int failed_handshakes = 0;  // since the last session opened (connection.h)
  Millis next_deadline_check = 0;
  std::string control;  // hello and re-watch frames
  detail::WatchTable watches;
  std::map<std::uint64_t, WatchId> rewatching;  // re-watch request id -> watch
  std::uint64_t next_id = 1;
  std::string frame;                         // the request being sent; never held across a suspension
  std::map<std::uint64_t, Pending> pending;  // by request id, so in sending order
  std::deque<WatchEvent> events;             // arrived, not yet handed out
  struct EventWaiter {
    boost::fibers::promise<WatchEvent> event;
    Millis since;
  };
  std::map<std::uint64_t, EventWaiter> event_waiters;  // in waiting order
  std::uint64_t next_waiter = 1;
  // Set once the connection is unusable ("closed", "bad_reply", ...); every
  // later call throws it.
  std::optional<TupleSpaceError> failure;
  bool stopping = false;
  bool activity = false;                    // a request or waiter arrived since the dispatcher last looked
  std::size_t posted = 0;                   // posted requests not yet answered
  std::vector<LeaseId> lost_leases;         // posted completions the server refused
  std::optional<TupleSpaceError> deferred;  // the first other error a posted request got
  boost::fibers::mutex posted_mutex;        // only for posted_done
  boost::fibers::condition_variable posted_done;
  boost::fibers::mutex mutex;  // only for the condition variable; one thread, no contention
  boost::fibers::condition_variable wake;
  boost::fibers::fiber dispatcher;

  Impl(const std::string& ep, const ClientOptions& o)
      : endpoint(ep), options(o), conn(std::make_unique<detail::Connection>(ep, o, 0)) {
    backoff = options.reconnect_backoff.count();
    dispatcher = boost::fibers::fiber([this] { dispatch(); });
  }

  ~Impl() { close(); }

  // Checks the call is allowed and returns a fresh request id.
  std::uint64_t begin() {
    check_usable();
    return next_id++;
  }

  void check_usable() const {
    if (std::this_thread::get_id() != owner)
      throw std::logic_error("FiberClient used from a thread other than the one that created it");
    if (failure) throw *failure;
  }

  // Sends `frame` as request `rid` and returns the future of its reply.
  // A `posted_lease` makes it a posted request, a completion of that lease
  // (0: an out): its answer is recorded by settle() and the future is never
  // made ready.
  // `wait` is how long the server may hold the request (an in/rd's timeout,
  // else 0); `retry` says what a lost connection does to it.
  boost::fibers::future<Reply> submit(std::uint64_t rid, Retry retry, Millis wait = 0,
                                      std::optional<LeaseId> posted_lease = std::nullopt,
                                      std::optional<Blocking> blocking = std::nullopt) {
    Millis now = steady_ms();
    Pending& p = pending[rid];
    p.may_park = wait != 0;
    p.retry = retry;
    p.posted = posted_lease.has_value();
    p.lease = posted_lease.value_or(0);
    p.since = now;
    p.deadline = wait == kForever.count() ? -1 : now + wait + options.request_timeout.count();
    p.blocking = std::move(blocking);
    boost::fibers::future<Reply> reply = p.reply.get_future();
    // A drop noticed now means this request was never sent on the lost
    // connection: it is sent on the next one, whatever it is.
    if (connected && conn->dropped()) lose_session();
    if (!connected || retry == Retry::Resend) p.frame = frame;
    if (connected) {
      try {
        send(frame);
      } catch (...) {
        pending.erase(rid);
        throw;
      }
      p.sent = true;
    }
    if (p.posted) ++posted;
    kick();
    return reply;
  }

  void send(const std::string& bytes) {
    zmq::message_t msg(bytes.data(), bytes.size());
    try {
      // With unlimited high-water marks a DEALER only refuses while it has no
      // pipe at all; wait for one without blocking the thread.
      while (!conn->dealer.send(msg, zmq::send_flags::dontwait)) {
        boost::this_fiber::sleep_for(std::chrono::milliseconds(1));
        if (failure) throw *failure;
      }
    } catch (const zmq::error_t& e) {
      throw client_error(Code::Unreachable, std::string("cannot send a request: ") + e.what());
    }
  }

  // The connection dropped: settle what was in flight on it (client.h,
  // "Faults") and open a new one. Requests to re-issue wait unsent.
  void lose_session() {
    if (connected) lost_at = steady_ms();
    connected = false;
    const TupleSpaceError unknown_out = client_error(
        Code::UnknownOutcome, "the connection to " + endpoint +
                                  " was lost before the answer to a request that changes the space; it may "
                                  "or may not have been carried out");
    auto unknown = std::make_exception_ptr(unknown_out);
    for (auto it = pending.begin(); it != pending.end();) {
      Pending& p = it->second;
      if (!p.sent || p.retry == Retry::Resend) {
        p.sent = false;
        ++it;
        continue;
      }
      if (p.posted && p.lease == 0) {
        settle(p, nullptr, &unknown_out);
      } else if (p.posted) {
        // Results stay exactly once either way: see take_lost_leases().
        lost_leases.push_back(p.lease);
        if (--posted == 0) posted_done.notify_all();
      } else if (p.retry == Retry::Done) {
        p.reply.set_value(Reply{});
      } else {
        p.reply.set_exception(unknown);
      }
      it = pending.erase(it);
    }
    rewatching.clear();
    if (hello_rid != 0) {
      // Connected and dropped again before hello: pause before the next try.
      boost::this_fiber::sleep_for(std::chrono::milliseconds(backoff));
      backoff = std::min<Millis>(backoff * 2, options.reconnect_backoff_max.count());
    }
    conn.reset();
    conn = std::make_unique<detail::Connection>(endpoint, options, 0);
    hello_rid = next_id++;
    encode_hello(control, hello_rid, options.served_first);
    send(control);
  }

  // The new connection answered hello: re-watch, then send what waited.
  void session_opened() {
    hello_rid = 0;
    failed_handshakes = 0;
    connected = true;
    backoff = options.reconnect_backoff.count();
    ++reconnects;
    for (auto& [id, w] : watches.all()) {
      std::uint64_t rid = next_id++;
      encode_watch(control, rid, w.space, w.tmpl);
      send(control);
      rewatching[rid] = id;
    }
    Millis now = steady_ms();
    for (auto& [rid, p] : pending) {
      if (p.sent) continue;
      if (p.blocking)
        encode_waiting(p.frame, rid, p.blocking->op, p.blocking->space, p.blocking->tmpl,
                       std::max<Millis>(0, p.blocking->timeout - (now - p.since)), p.blocking->lease,
                       p.blocking->max);
      send(p.frame);
      p.sent = true;
      if (p.retry != Retry::Resend) std::string().swap(p.frame);
    }
  }

  // Fails requests and event waits whose deadline passed: "unreachable"
  // while reconnecting, else "deadline_exceeded".
  void expire(Millis now) {
    Millis rt = options.request_timeout.count();
    for (auto it = pending.begin(); it != pending.end();) {
      Pending& p = it->second;
      bool late =
          (p.deadline >= 0 && now >= p.deadline) || (!connected && now >= std::max(p.since, lost_at) + rt);
      if (!late) {
        ++it;
        continue;
      }
      TupleSpaceError e =
          connected
              ? client_error(Code::DeadlineExceeded, "a request to " + endpoint + " got no answer within " +
                                                         std::to_string(now - p.since) +
                                                         " ms; whether it was carried out is unknown")
              : client_error(Code::Unreachable, "no tuple-space server answered at " + endpoint +
                                                    " after the connection was lost, within " +
                                                    std::to_string(rt) + " ms");
      if (p.posted)
        settle(p, nullptr, &e);
      else
        p.reply.set_exception(std::make_exception_ptr(e));
      it = pending.erase(it);
    }
    if (connected) return;
    for (auto it = event_waiters.begin(); it != event_waiters.end();) {
      if (now < std::max(it->second.since, lost_at) + rt) {
        ++it;
        continue;
      }
      it->second.event.set_exception(std::make_exception_ptr(client_error(
          Code::Unreachable, "no tuple-space server answered at " + endpoint +
                                 " after the connection was lost, within " + std::to_string(rt) + " ms")));
      it = event_waiters.erase(it);
    }
  }

  // Records the answer to a posted request.
  void settle(const Pending& p, const Reply* r, const TupleSpaceError* failed) {
    if (r && r->status == Reply::Status::Error && r->code == Code::UnknownLease && p.lease != 0)
      lost_leases.push_back(p.lease);
    else if (r && r->status == Reply::Status::Error && !deferred)
      deferred = error_of(*r);
    else if (failed && !deferred)
      deferred = *failed;
    if (--posted == 0) posted_done.notify_all();
  }

  // Waits (this fiber only) until every posted request is answered, or
  // at most `limit` when given; false on timeout.
  bool wait_posted(std::optional<std::chrono::milliseconds> limit) {
    std::unique_lock<boost::fibers::mutex> lock(posted_mutex);
    auto done = [&] { return posted == 0; };
    if (!limit) {
      posted_done.wait(lock, done);
      return true;
    }
    return posted_done.wait_for(lock, *limit, done);
  }

  // Waits (this fiber only) for the reply to the request just encoded in
  // `frame`; throws the server's error as TupleSpaceError.
  Reply call(std::uint64_t rid, Retry retry, Millis wait = 0,
             std::optional<Blocking> blocking = std::nullopt) {
    // Keeps this object alive should the client be destroyed while we wait.
    auto self = shared_from_this();
    boost::fibers::future<Reply> f = submit(rid, retry, wait, std::nullopt, std::move(blocking));
    Reply r = f.get();
    if (r.status == Reply::Status::Error) throw error_of(r);
    return r;
  }

  void hello(const std::string& endpoint) {
    std::uint64_t rid = begin();
    encode_hello(frame, rid, options.served_first);
    boost::fibers::future<Reply> f = submit(rid, Retry::Resend);
    if (f.wait_for(options.connect_timeout) == boost::fibers::future_status::timeout) {
      pending.erase(rid);  // a late answer is dropped as stale
      throw TupleSpaceError::of(Code::Unreachable,
                                "no tuple-space server answered at " + endpoint + " within " +
                                    std::to_string(options.connect_timeout.count()) + " ms");
    }
    Reply r = f.get();
    if (r.status == Reply::Status::Error) throw error_of(r);
    if (!options.pool.empty() && r.pool_name != options.pool)
      throw wrong_pool(endpoint, r.pool_name, options.pool);
    failed_handshakes = 0;
  }

  std::optional<WatchEvent> next_event(Millis timeout) {
    auto self = shared_from_this();
    check_usable();
    if (events.empty() && timeout == 0) drain();
    if (!events.empty()) {
      WatchEvent e = std::move(events.front());
      events.pop_front();
      return e;
    }
    if (timeout == 0) return std::nullopt;
    std::uint64_t id = next_waiter++;
    EventWaiter& w = event_waiters[id];
    w.since = steady_ms();
    boost::fibers::future<WatchEvent> f = w.event.get_future();
    kick();
    if (timeout > 0 &&
        f.wait_for(std::chrono::milliseconds(timeout)) == boost::fibers::future_status::timeout) {
      event_waiters.erase(id);
      return std::nullopt;
    }
    return f.get();
  }

  // Tells the dispatcher there is something to wait for, now.
  void kick() {
    activity = true;
    wake.notify_one();
  }

  // Fails every waiting call with `e` and makes every later call throw it.
  void fail_all(const TupleSpaceError& e) {
    if (!failure) failure = e;
    auto ex = std::make_exception_ptr(*failure);
    for (auto& [id, p] : pending) {
      if (p.posted)
        settle(p, nullptr, &*failure);
      else
        p.reply.set_exception(ex);
    }
    pending.clear();
    for (auto& [id, w] : event_waiters) w.event.set_exception(ex);
    event_waiters.clear();
  }

  void close() {
    if (stopping) return;
    stopping = true;
    fail_all(TupleSpaceError::of(Code::Closed, "the FiberClient was destroyed"));
    wake.notify_all();
    if (dispatcher.joinable()) dispatcher.join();
    // Best effort: lets the server drop this session at once, which an
    // inproc connection cannot otherwise tell it.
    try {
      std::string bye;
      encode_bye(bye, next_id++);
      conn->dealer.set(zmq::sockopt::linger, 200);
      if (connected) conn->dealer.send(zmq::buffer(bye), zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
    }
    conn.reset();
  }

  // Reads and routes what has arrived, without blocking. Returns the number
  // of frames read.
  int drain() {
    int n = 0;
    zmq::message_t msg;
    try {
      while (n < kBatch && !failure && conn->dealer.recv(msg, zmq::recv_flags::dontwait)) {
        ++n;
        route(std::string_view(static_cast<const char*>(msg.data()), msg.size()));
      }
      // Replies that arrived before the connection dropped are read first.
      if (n < kBatch && !failure && !stopping && conn->dropped()) {
        // Failed handshakes count across connections until a session opens (connection.h).
        if (auto refused = conn->refused(failed_handshakes))
          fail_all(*refused);
        else
          lose_session();
      }
      Millis now = steady_ms();
      if (now >= next_deadline_check) {
        next_deadline_check = now + kDeadlineCheckMs;
        expire(now);
      }
    } catch (const WireError& e) {
      fail_all(
          TupleSpaceError::of(Code::BadReply, std::string("undecodable reply from the server: ") + e.what()));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) fail_all(TupleSpaceError::of(Code::Unreachable, e.what()));
    }
    return n;
  }

  void route(std::string_view bytes) {
    Reply r = decode_reply(bytes);
    if (r.status == Reply::Status::Event) {
      WatchEvent e{watches.caller_id(r.number), r.event, std::move(r.space), std::move(r.tuples.at(0))};
      if (event_waiters.empty()) {
        events.push_back(std::move(e));
      } else {
        event_waiters.begin()->second.event.set_value(std::move(e));
        event_waiters.erase(event_waiters.begin());
      }
      return;
    }
    if (hello_rid != 0 && r.request_id == hello_rid) {
      if (r.status != Reply::Status::Error) session_opened();
      return;
    }
    if (auto w = rewatching.find(r.request_id); w != rewatching.end()) {
      if (auto it = watches.all().find(w->second); it != watches.all().end() && r.status == Reply::Status::Ok)
        it->second.server_id = r.number;
      rewatching.erase(w);
      return;
    }
    auto it = r.request_id == 0 && r.status == Reply::Status::Error ? unreadable_request()
                                                                    : pending.find(r.request_id);
    if (it == pending.end()) return;  // the answer to an abandoned request (a timed-out hello)
    if (it->second.posted)
      settle(it->second, &r, nullptr);
    else
      it->second.reply.set_value(std::move(r));
    pending.erase(it);
  }

  // An error with id 0 answers a request the server could not read. The
  // server answers in order every request it does not park, so it is the
  // oldest outstanding request that cannot be parked; only when every
  // outstanding request is a blocking in/rd is it the oldest of those.
  std::map<std::uint64_t, Pending>::iterator unreadable_request() {
    auto it =
        std::find_if(pending.begin(), pending.end(), [](const auto& kv) { return !kv.second.may_park; });
    return it != pending.end() ? it : pending.begin();
  }

  // Blocks the thread until a frame can be read or `limit` passes.
  void wait_readable(microseconds limit) {
    zmq::pollitem_t items[] = {{conn->dealer.handle(), 0, ZMQ_POLLIN, 0},
                               {conn->monitor.handle(), 0, ZMQ_POLLIN, 0}};
    try {
      zmq::poll(items, 2, std::chrono::duration_cast<std::chrono::milliseconds>(limit));
    } catch (const zmq::error_t& e) {
      if (e.num() != EINTR) fail_all(TupleSpaceError::of(Code::Unreachable, e.what()));
    }
  }

  void dispatch() {
    std::unique_lock<boost::fibers::mutex> lock(mutex);
    Clock::time_point last_activity = Clock::now();
    microseconds pause{0};
    bool quiet = false;  // the last yield found no other fiber with work to do
    while (!stopping) {
      if (pending.empty() && event_waiters.empty()) {
        wake.wait(lock, [&] { return stopping || !pending.empty() || !event_waiters.empty(); });
        continue;
      }
      if (drain() > 0 || activity) {
        activity = false;
        last_activity = Clock::now();
        pause = microseconds(0);
      }
      if (quiet) {
        // Nobody else has work: wait in ZeroMQ, so a reply wakes us at once.
        // Then yield again, which lets the scheduler wake sleepers.
        quiet = false;
        wait_readable(kMaxPause);
        continue;
      }
      Clock::time_point before = Clock::now();
      boost::this_fiber::yield();
      Clock::time_point after = Clock::now();
      quiet = after - before < kQuietYield;
      if (quiet || after - last_activity < kSpin) continue;
      // Other fibers are busy: stay out of their way, a little longer each time.
      pause = pause.count() == 0 ? kMinPause : std::min(pause * 2, kMaxPause);
      wake.wait_for(lock, pause, [&] { return stopping || activity; });
    }
  }
};

FiberClient::FiberClient(std::string endpoint, ClientOptions options)
    : endpoint_(std::move(endpoint)),
      impl_(std::make_shared<Impl>(endpoint_, with_environment_keys(std::move(options)))) {
  try {
    impl_->hello(endpoint_);
  } catch (...) {
    impl_->close();
    throw;
  }
}

FiberClient::~FiberClient() {
  // Posted outs and completions must reach the server before the session ends.
  if (impl_->posted > 0 && !impl_->failure) impl_->wait_posted(impl_->options.connect_timeout);
  impl_->close();
}

std::uint64_t FiberClient::reconnects() const {
  return impl_->reconnects;
}

void FiberClient::out(std::string_view space, const Tuple& t) {
  std::uint64_t rid = impl_->begin();
  encode_out(impl_->frame, rid, space, t);
  impl_->call(rid, Impl::Retry::Fail);
}

void FiberClient::out_posted(std::string_view space, const Tuple& t) {
  std::uint64_t rid = impl_->begin();
  encode_out(impl_->frame, rid, space, t);
  impl_->submit(rid, Impl::Retry::Fail, 0, LeaseId{0});
}

void FiberClient::out_many(std::string_view space, const std::vector<Tuple>& ts) {
  std::uint64_t rid = impl_->begin();
  encode_out_many(impl_->frame, rid, space, ts);
  impl_->call(rid, Impl::Retry::Fail);
}

std::optional<Leased> FiberClient::in(std::string_view space, const Template& t,
                                      std::chrono::milliseconds timeout, std::chrono::milliseconds lease) {
  std::uint64_t rid = impl_->begin();
  encode_in(impl_->frame, rid, Op::In, space, t, timeout.count(), lease.count());
  Reply r = impl_->call(rid, lease.count() > 0 ? Impl::Retry::Resend : Impl::Retry::Fail, timeout.count(),
                        Impl::blocking(Op::In, space, t, timeout.count(), lease.count()));
  return detail::taken_of(std::move(r));
}

std::optional<Tuple> FiberClient::rd(std::string_view space, const Template& t,
                                     std::chrono::milliseconds timeout) {
  std::uint64_t rid = impl_->begin();
  encode_in(impl_->frame, rid, Op::Rd, space, t, timeout.count(), 0);
  Reply r = impl_->call(rid, Impl::Retry::Resend, timeout.count(),
                        Impl::blocking(Op::Rd, space, t, timeout.count(), 0));
  return detail::read_of(std::move(r));
}

std::vector<Tuple> FiberClient::in_many(std::string_view space, const Template& t, std::size_t max,
                                        std::chrono::milliseconds timeout) {
  std::uint64_t rid = impl_->begin();
  encode_in_many(impl_->frame, rid, space, t, max, timeout.count(), 0);
  return impl_
      ->call(rid, Impl::Retry::Fail, timeout.count(),
             Impl::blocking(Op::InMany, space, t, timeout.count(), 0, max))
      .tuples;
}

std::vector<Leased> FiberClient::in_many_leased(std::string_view space, const Template& t, std::size_t max,
                                                std::chrono::milliseconds timeout,
                                                std::chrono::milliseconds lease) {
  detail::require_lease(lease, "in_many_leased");
  std::uint64_t rid = impl_->begin();
  encode_in_many(impl_->frame, rid, space, t, max, timeout.count(), lease.count());
  Reply r = impl_->call(rid, Impl::Retry::Resend, timeout.count(),
                        Impl::blocking(Op::InMany, space, t, timeout.count(), lease.count(), max));
  return detail::leased_of(std::move(r));
}

std::vector<Tuple> FiberClient::rd_many(std::string_view space, const Template& t, std::size_t max) {
  std::uint64_t rid = impl_->begin();
  encode_rd_many(impl_->frame, rid, space, t, max);
  return impl_->call(rid, Impl::Retry::Resend).tuples;
}

bool FiberClient::complete(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts) {
  std::uint64_t rid = impl_->begin();
  encode_complete(impl_->frame, rid, lease, space, ts);
  return detail::unless_refused(Code::UnknownLease, [&] { impl_->call(rid, Impl::Retry::Fail); });
}

void FiberClient::complete_posted(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts) {
  std::uint64_t rid = impl_->begin();
  encode_complete(impl_->frame, rid, lease, space, ts);
  impl_->submit(rid, Impl::Retry::Fail, 0, lease);
}

std::vector<LeaseId> FiberClient::take_lost_leases() {
  std::vector<LeaseId> lost;
  lost.swap(impl_->lost_leases);
  return lost;
}

void FiberClient::flush() {
  auto self = impl_;  // the client may be destroyed by another fiber meanwhile
  self->check_usable();
  self->wait_posted(std::nullopt);
  if (self->deferred) {
    TupleSpaceError e = std::move(*self->deferred);
    self->deferred.reset();
    throw e;
  }
}

void FiberClient::ack(LeaseId lease) {
  std::uint64_t rid = impl_->begin();
  encode_ack(impl_->frame, rid, lease);
  impl_->call(rid, Impl::Retry::Fail);
}

void FiberClient::renew(LeaseId lease, std::chrono::milliseconds duration) {
  std::uint64_t rid = impl_->begin();
  encode_renew(impl_->frame, rid, lease, duration.count());
  impl_->call(rid, Impl::Retry::Fail);
}

WatchId FiberClient::watch(std::string_view space, const Template& t) {
  std::uint64_t rid = impl_->begin();
  encode_watch(impl_->frame, rid, space, t);
  return impl_->watches.add(space, t, impl_->call(rid, Impl::Retry::Resend).number);
}

void FiberClient::unwatch(WatchId id) {
  std::uint64_t rid = impl_->begin();
  // The watch ends with a lost session and is not re-established.
  encode_unwatch(impl_->frame, rid, impl_->watches.remove(id));
  impl_->call(rid, Impl::Retry::Done);
}

std::optional<WatchEvent> FiberClient::next_event(std::chrono::milliseconds timeout) {
  return impl_->next_event(timeout.count());
}

bool FiberClient::remove(std::string_view space) {
  std::uint64_t rid = impl_->begin();
  encode_remove(impl_->frame, rid, space);
  return detail::unless_refused(Code::UnknownSpace, [&] { impl_->call(rid, Impl::Retry::Fail); });
}

std::vector<SpaceStats> FiberClient::stats() {
  std::uint64_t rid = impl_->begin();
  encode_stats(impl_->frame, rid, "");
  return impl_->call(rid, Impl::Retry::Resend).stats;
}

std::optional<SpaceStats> FiberClient::stats(std::string_view space) {
  std::uint64_t rid = impl_->begin();
  encode_stats(impl_->frame, rid, space);
  return detail::stats_of_one([&] { return impl_->call(rid, Impl::Retry::Resend).stats; });
}

boost::fibers::future<void> FiberClient::eval(std::string space, std::function<Tuple()> fn) {
  impl_->check_usable();
  boost::fibers::packaged_task<void()> task(
      [client = std::weak_ptr<Impl>(impl_), space = std::move(space), fn = std::move(fn)] {
        Tuple result = fn();
        auto impl = client.lock();
        if (!impl) throw TupleSpaceError::of(Code::Closed, "the FiberClient was destroyed");
        std::uint64_t rid = impl->begin();
        encode_out(impl->frame, rid, space, result);
        impl->call(rid, Impl::Retry::Fail);
      });
  boost::fibers::future<void> done = task.get_future();
  boost::fibers::fiber(std::move(task)).detach();
  return done;
}

}  // namespace piranha::ts
