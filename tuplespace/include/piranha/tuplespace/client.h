// Client: a blocking connection to a tuple-space server, and Space, the typed
// handle most code uses.
//
//   ts::Client client("tcp://127.0.0.1:7070");
//   ts::Space space = client.space("jobs");
//   space.out("task", 7, ts::Blob(row));
//   auto t = space.in("task", ts::formal<std::int64_t>, ts::formal<ts::Blob>);
//
// A Client is one ZeroMQ DEALER connection with heartbeats. It is not
// thread-safe: use one per thread (or a FiberClient for many fibers). Errors
// the server reports are thrown as TupleSpaceError.
//
// out() is posted, as Linda's out is non-blocking: it returns once the tuple
// is queued for the server, without waiting for the reply. The server handles
// one connection's requests in order, so by the time any later call on this
// Client returns (or flush() returns), every earlier out is stored; a tuple
// another process takes because of something this client wrote later is
// therefore always there. An error for a posted out (rare: field types are
// checked at compile time and sizes before sending) is thrown by the next
// call that returns after it arrives (never one that took tuples, which
// would lose them), or by flush(). The destructor flushes, so nothing posted is lost when a
// program ends normally.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "piranha/tuplespace/fields.h"
#include "piranha/tuplespace/protocol.h"

namespace piranha::ts {

// An error reply from the server, or a failure to reach it. code() is the
// wire error code ("unknown_lease", ...) or "unreachable".
class TupleSpaceError : public std::runtime_error {
 public:
  TupleSpaceError(std::string code, const std::string& message)
      : std::runtime_error(message), code_(std::move(code)) {}
  const std::string& code() const { return code_; }

 private:
  std::string code_;
};

// A tuple taken under a lease: ack() it when done, or it returns to the space
// when the lease ends.
struct Leased {
  Tuple tuple;
  LeaseId lease = 0;
};

// A watch event: a tuple matching a watched template was written or taken.
struct WatchEvent {
  WatchId watch = 0;
  WatchEventKind kind = WatchEventKind::Written;
  std::string space;
  Tuple tuple;
};

struct ClientOptions {
  // How long the constructor waits for the server's hello before throwing.
  std::chrono::milliseconds connect_timeout{5000};
  // ZeroMQ heartbeats, so the server notices a dead client (and its leases
  // return) even when the TCP connection does not close.
  int heartbeat_interval_ms = 1000;
  int heartbeat_timeout_ms = 5000;
};

template <class Connection>
class BasicSpace;

class Client;
using Space = BasicSpace<Client>;

class Client {
 public:
  // Connects and checks the server answers. Throws TupleSpaceError with code
  // "unreachable" when no server answers within connect_timeout.
  explicit Client(std::string endpoint, ClientOptions options = {});
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // A handle to a named space; spaces exist from their first use.
  Space space(std::string name);

  const std::string& endpoint() const { return endpoint_; }

  // The untyped operations behind Space. timeout: kForever waits for ever,
  // 0 never waits. lease > 0 takes under a lease (in only).
  //
  // out posts (see above); throws TupleSpaceError("too_large") at once when
  // the request exceeds the server's limit.
  void out(std::string_view space, const Tuple& t);
  // Waits until every posted out is stored; throws the first error any of
  // them got.
  void flush();
  void out_many(std::string_view space, const std::vector<Tuple>& ts);
  std::optional<Leased> in(std::string_view space, const Template& t, Millis timeout = kForever,
                           Millis lease = 0);
  std::optional<Tuple> rd(std::string_view space, const Template& t, Millis timeout = kForever);
  std::vector<Tuple> in_many(std::string_view space, const Template& t, std::size_t max);
  // Throw TupleSpaceError("unknown_lease") when the lease already ended.
  void ack(LeaseId lease);
  void renew(LeaseId lease, Millis duration);
  WatchId watch(std::string_view space, const Template& t);
  void unwatch(WatchId id);
  // The next watch event, waiting up to `timeout` (kForever: no limit).
  std::optional<WatchEvent> next_event(Millis timeout = kForever);
  // False when the space did not exist.
  bool remove(std::string_view space);
  std::vector<SpaceStats> stats();
  std::optional<SpaceStats> stats(std::string_view space);

  // Runs fn on a new thread with its own connection and outs its result into
  // `space` (Linda's eval). The future completes when the tuple is written and
  // rethrows fn's exception.
  std::future<void> eval(std::string space, std::function<Tuple()> fn);

 private:
  // Sends frame_ and returns its reply; `takes` marks calls that take tuples.
  Reply call(bool takes = false);
  void send_frame();
  void receive_until(std::uint64_t rid, Reply& out, Millis timeout_ms);
  void throw_deferred();
  struct Socket;
  std::string endpoint_;
  ClientOptions options_;
  std::unique_ptr<Socket> socket_;
  std::uint64_t next_id_ = 1;
  std::string frame_;
  std::deque<WatchEvent> events_;
  std::size_t max_message_bytes_ = kDefaultMaxMessageBytes;  // from the server's hello
  std::deque<std::uint64_t> posted_;  // ids of outs not yet acknowledged, oldest first
  std::optional<TupleSpaceError> deferred_;  // the first error a posted out got
};

// A typed handle to one space over a connection (Client or FiberClient).
// Arguments are actuals (plain values), formals (ts::formal<T>) or bindings
// (ts::bind(x)); see fields.h.
template <class Connection>
class BasicSpace {
 public:
  BasicSpace(Connection& c, std::string name) : c_(&c), name_(std::move(name)) {}

  const std::string& name() const { return name_; }
  Connection& connection() const { return *c_; }

  // Writes one tuple: space.out("task", 3, 2.5).
  template <class... A>
  void out(A&&... fields) {
    c_->out(name_, detail::tuple_of(std::forward<A>(fields)...));
  }
  void out_many(const std::vector<Tuple>& ts) { c_->out_many(name_, ts); }

  // Takes the oldest matching tuple, waiting as long as it takes.
  template <class... A>
  Tuple in(A&&... args) {
    return *take_impl(kForever, 0, std::forward<A>(args)...);
  }
  // Reads (copies) the oldest matching tuple, waiting as long as it takes.
  template <class... A>
  Tuple rd(A&&... args) {
    return *read_impl(kForever, std::forward<A>(args)...);
  }
  // Non-blocking forms: nullopt when nothing matches now.
  template <class... A>
  std::optional<Tuple> inp(A&&... args) {
    return take_impl(0, 0, std::forward<A>(args)...);
  }
  template <class... A>
  std::optional<Tuple> rdp(A&&... args) {
    return read_impl(0, std::forward<A>(args)...);
  }
  // Bounded waits: nullopt when nothing matched within `timeout`.
  template <class... A>
  std::optional<Tuple> in_for(std::chrono::milliseconds timeout, A&&... args) {
    return take_impl(timeout.count(), 0, std::forward<A>(args)...);
  }
  template <class... A>
  std::optional<Tuple> rd_for(std::chrono::milliseconds timeout, A&&... args) {
    return read_impl(timeout.count(), std::forward<A>(args)...);
  }
  // Takes under a lease of `lease` length, waiting as long as it takes.
  template <class... A>
  Leased take(std::chrono::milliseconds lease, A&&... args) {
    auto t = c_->in(name_, detail::template_of(args...), kForever, lease.count());
    detail::bind_all(t->tuple, args...);
    return std::move(*t);
  }
  // Takes under a lease, waiting at most `timeout`.
  template <class... A>
  std::optional<Leased> take_for(std::chrono::milliseconds timeout, std::chrono::milliseconds lease,
                                 A&&... args) {
    auto t = c_->in(name_, detail::template_of(args...), timeout.count(), lease.count());
    if (t) detail::bind_all(t->tuple, args...);
    return t;
  }
  void ack(const Leased& l) { c_->ack(l.lease); }
  void renew(const Leased& l, std::chrono::milliseconds d) { c_->renew(l.lease, d.count()); }

  // Takes up to `max` matching tuples now, oldest first.
  template <class... A>
  std::vector<Tuple> in_many(std::size_t max, A&&... args) {
    return c_->in_many(name_, detail::template_of(std::forward<A>(args)...), max);
  }
  // Watches a template; events arrive through the connection's next_event().
  template <class... A>
  WatchId watch(A&&... args) {
    return c_->watch(name_, detail::template_of(std::forward<A>(args)...));
  }
  // Linda's eval: fn runs concurrently and its result tuple is written here.
  auto eval(std::function<Tuple()> fn) { return c_->eval(name_, std::move(fn)); }

  std::optional<SpaceStats> stats() { return c_->stats(name_); }

 private:
  template <class... A>
  std::optional<Tuple> take_impl(Millis timeout, Millis lease, A&&... args) {
    auto t = c_->in(name_, detail::template_of(args...), timeout, lease);
    if (!t) return std::nullopt;
    detail::bind_all(t->tuple, args...);
    return std::move(t->tuple);
  }
  template <class... A>
  std::optional<Tuple> read_impl(Millis timeout, A&&... args) {
    auto t = c_->rd(name_, detail::template_of(args...), timeout);
    if (t) detail::bind_all(*t, args...);
    return t;
  }

  Connection* c_;
  std::string name_;
};

inline Space Client::space(std::string name) { return Space(*this, std::move(name)); }

}  // namespace piranha::ts
