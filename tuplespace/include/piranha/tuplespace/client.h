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
// Two forms of out, with the same meaning in Client and FiberClient:
//  - out() waits for the server's answer: when it returns the tuple is
//    stored, and a refusal (not_permitted, bad_request) is thrown by it.
//  - out_posted() is Linda's non-blocking out: it returns once the tuple is
//    queued for the server, without waiting for the answer. The server
//    handles one connection's requests in order, so by the time any later
//    call on this Client returns (or flush() returns), every earlier posted
//    out is stored; a tuple another process takes because of something this
//    client wrote later is therefore always there. An error for a posted out
//    (rare: field types are checked at compile time and sizes before
//    sending) is thrown by the next call that returns after it arrives
//    (never one that took tuples, which would lose them), or by flush(). The
//    destructor flushes, so nothing posted is lost when a program ends
//    normally. A writer of many tuples (a feeder's tasks) posts them and
//    pays one round trip for all instead of one each.
//
// Completion. complete(lease, space, tuples) ends a lease and writes result
// tuples in one step of the server: either both happen or, when the lease is
// no longer this client's (expired, returned when the session ended, already
// acked), neither does. A task's results therefore arrive exactly once however
// workers die or stall. complete_posted() is its posted form: it returns at
// once like out_posted(); a refusal is not thrown but recorded, and
// take_lost_leases() reports the refused leases.
//
// Faults. No call waits for ever on a server that is gone or frozen:
//  - Every request has a deadline: options.request_timeout (30 s) after it
//    was sent, plus its own timeout for an in/rd/in_many with timeout > 0. A
//    blocking one (kForever) has no deadline while its connection is alive.
//  - A lost connection (the server closed it, died, or missed heartbeats for
//    heartbeat_timeout_ms: a SIGSTOPped server or a network cut) is noticed
//    through a ZeroMQ socket monitor. The client then opens a new connection,
//    which is a new session on the server (the old session's leases return to
//    their spaces, its parked requests and watches end), retrying with
//    backoff until the call's deadline; a kForever call gets request_timeout
//    from the moment the connection was lost. Past the deadline the call
//    throws "unreachable".
//  - The request in flight when the connection was lost is re-issued on the
//    new session when doing it again cannot do harm: hello, rd, rd_many,
//    stats, watch, and in/in_many_leased under a lease (a tuple the lost
//    request may have taken is held under the old session's lease, so it
//    returns to its space when that session ends). A blocked rd or leased in
//    therefore survives a server restart; an in/rd/in_many with a timeout > 0
//    is re-issued with what is left of it.
//  - Every other request in flight (out, out_many, in and in_many without a
//    lease, ack, renew, complete, remove) may or may not have been carried
//    out: the call throws "unknown_outcome", and so, for posted outs, does
//    the next call or flush(). A completion of unknown outcome still keeps
//    results exactly once: either it was carried out, or its lease returned
//    the task; a posted one is therefore not thrown but reported by
//    take_lost_leases(). unwatch succeeds (the watch ended with the
//    session). A request made after the loss was noticed was never sent and
//    is sent on the new session like any other.
//  - Leases taken on an old session are not carried over: ack/renew/complete
//    of them answer "unknown_lease" (complete returns false).
//  - Watches are re-established on the new session under the same WatchId;
//    events of the gap are not replayed.
//  - A connected server that does not answer within the deadline makes the
//    call throw "deadline_exceeded"; whether the request was carried out is
//    then unknown too.
//  - A durable server whose disk is full refuses requests with "disk_full",
//    carrying nothing out (server.h). A call so refused is sent again every
//    200 ms until its deadline (for a kForever call, request_timeout from
//    the first refusal), then throws the server's disk_full, which names the
//    file and the reason. A posted completion so refused is sent again with
//    the next call or flush() once 200 ms have passed (flush() waits for it
//    up to its deadline, then reports it through take_lost_leases()); a
//    refused prefetch takes nothing; a refused posted out is thrown as any
//    posted out's error. (A FiberClient throws disk_full at once.)
//
// Safe takes (options.safe_takes). A take without a lease whose answer is
// lost (in, in_many) may have removed a tuple nobody will ever see. With
// safe_takes on, every such take is done in two steps that each survive a
// lost connection or a restart of a durable server:
//   1. the tuple is taken under a short lease (safe_take_lease, 5 s), a
//      request that is re-issued when its answer is lost;
//   2. the lease is completed with a marker ("taken", n) written to this
//      client's own space "_taken.<random>", in one atomic step.
// When the answer to step 2 is lost, the marker tells what happened: there,
// the take is done; absent once the lease must have ended (its length plus
// a second after the answer to step 1, waited only when the session changed
// in between), the tuple went back to its space and is taken again. So
// every tuple is returned exactly once however the connection fails, at the
// cost of one more round trip per take (in_many: one per batch of up to
// 4096, all its leases completed at once with one marker; an in_many that
// waits does so for its first batch only). The marker space is removed every 1024 takes and when the
// client is destroyed; a client killed outright leaves it behind (at most
// 1024 small tuples). Should the server stay unreachable past the deadline
// while a take is unsettled, the call throws "unreachable" and the tuple's
// fate is unknown, as without safe_takes; so does an interrupt
// (options.interrupt_fd) that ends the wait for the lease to end: the call
// throws "interrupted". Takes under a lease and every
// other operation are unchanged.
//
// Safe outs (options.safe_outs). An out or out_many whose answer is lost may
// or may not have written its tuples: without safe_outs it throws
// "unknown_outcome". With safe_outs on, each is done in three steps, so a
// lost connection or a restart of a durable server writes them exactly once:
//   1. a token ("put", n) is written to the client's own space (the safe
//      takes' "_taken.<random>"); a token whose out was lost is left there
//      and the next try writes a new one;
//   2. the token is taken under a short lease (safe_take_lease), a request
//      re-issued when its answer is lost;
//   3. the lease is completed, writing the tuples to their space, in one
//      atomic step that also removes the token for good.
// When the answer to step 3 is lost, the token tells what happened: back in
// its space, the lease ended first and nothing was written (the steps are
// done again with a new token, at once); gone once the lease must have
// ended (its length plus a second after the answer to step 2, waited only
// when the session changed in between and the token was not back), the
// tuples were written. The cost is two more round trips per out or
// out_many; posted outs are unchanged (their outcome stays unknown, as
// above). The steps are done again only until request_timeout has passed
// since the first try: then the call throws "deadline_exceeded" (the last
// step's, or one saying nothing was written). The same limits as for safe
// takes: past the deadline the call throws "unreachable" with the tuples'
// fate unknown, an interrupt "interrupted". A FiberClient has no safe outs.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "piranha/tuplespace/curve.h"
#include "piranha/tuplespace/fields.h"
#include "piranha/tuplespace/protocol.h"
#include "piranha/tuplespace/status.h"

namespace piranha::ts {

// An error reply from the server, or a failure to reach it: code() says
// which (status.h), and what() says in English what and where, usually
// starting with the code's wire word ("unknown_lease: lease 7 is not held").
class TupleSpaceError : public std::runtime_error {
 public:
  // what() is `message` as given; so is detail() unless given apart.
  TupleSpaceError(Code code, const std::string& message, std::optional<std::string> detail = std::nullopt)
      : std::runtime_error(message), code_(code), detail_(detail ? std::move(*detail) : message) {}
  // An error whose what() is the code's wire word, ": " and `detail`.
  static TupleSpaceError of(Code code, std::string_view detail) {
    std::string what(code_to_wire(code));
    what += ": ";
    what += detail;
    return TupleSpaceError(code, what, std::string(detail));
  }
  Code code() const { return code_; }
  // The error in its own words, for people: what() without the code's wire
  // word or the request it answered ("out (posted earlier)"). For an error
  // the server sent, its message (a refusal: which key may not do what, and
  // what it needs).
  const std::string& detail() const { return detail_; }

 private:
  Code code_;
  std::string detail_;
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
  // Whether the server is asked to drop this client after
  // heartbeat_timeout_ms of silence (ZeroMQ's heartbeat TTL). Each such
  // client costs the server a timer that libzmq re-arms, in time growing
  // with all its timers, at every heartbeat; a client that holds nothing the
  // server must hurry to return (an agent's uplink) turns it off, and the
  // server then notices it gone when its TCP connection closes or its
  // keepalive fails (server.h).
  bool heartbeat_ttl = true;
  // The deadline of every request (see "Faults" above): how long a request
  // may go unanswered, beyond its own timeout, and how long a lost
  // connection may take to come back.
  std::chrono::milliseconds request_timeout{30000};
  // Pauses between attempts to reconnect: the first, doubling up to the max.
  std::chrono::milliseconds reconnect_backoff{100};
  std::chrono::milliseconds reconnect_backoff_max{2000};
  // How long the destructor waits for posted requests to be acknowledged
  // (they are written to the server's connection either way).
  std::chrono::milliseconds close_timeout{5000};
  // An fd (an eventfd, a pipe) that, while readable (or hung up), makes every
  // call that waits for an answer, an event (next_event), a new session (the
  // constructor, a reconnection, and the pause between two tries) or a safe
  // take's lease to end throw TupleSpaceError(Code::Interrupted) at once (not
  // flush, flush_within or the destructor); whether the request was carried
  // out is then unknown, as for unknown_outcome. -1: none. A retreating
  // piranha uses it so as not to wait on a server that is cut off.
  int interrupt_fd = -1;
  // Takes without a lease survive lost answers (see "Safe takes" above).
  bool safe_takes = false;
  // The lease of a safe take's first step: how long its tuple may be held
  // between the two steps before it returns to its space. Safe outs hold
  // their token under the same lease.
  std::chrono::milliseconds safe_take_lease{5000};
  // out and out_many write exactly once through lost answers (see "Safe
  // outs" above).
  bool safe_outs = false;
  // CURVE (curve.h, docs/security.md): this client's key pair and the
  // server's public key. Empty: when curve_from_environment is true, the
  // constructor reads them from PIRANHA_KEY and PIRANHA_SERVER_KEY (throwing
  // InputError when they cannot be read); a plain connection when
  // those are unset too. A server that refuses the keys (or wants keys this
  // client has not) makes the constructor, or the call that reconnects,
  // throw TupleSpaceError(Code::AuthFailed) at once rather than "unreachable"
  // after the deadline.
  CurveClientKeys curve;
  bool curve_from_environment = true;
  // The pool this client belongs to: a server whose hello names another pool,
  // or none, makes the constructor, or the call that reconnects to it (a
  // Client's; a FiberClient checks at construction only), throw
  // TupleSpaceError(Code::WrongPool) naming both. Empty: when
  // pool_from_environment is true, the constructor takes $PIRANHA_POOL
  // (kPoolEnv); with that unset too, any server is accepted.
  std::string pool;
  bool pool_from_environment = true;
  // Asks the server, in every session's hello, to serve this connection's
  // requests before those of connections that did not ask (server.h, "Served
  // first"): for the few connections a whole pool waits on, the NPS's. An
  // authenticating server grants it to the admin, scheduler and campus roles
  // only; any other key's constructor (or reconnection) throws
  // TupleSpaceError(Code::NotPermitted).
  bool served_first = false;
};

// Where a client finds the pool it belongs to when its options name none.
inline constexpr const char* kPoolEnv = "PIRANHA_POOL";

// `options` with its CURVE keys filled in from PIRANHA_KEY and
// PIRANHA_SERVER_KEY when it has none and curve_from_environment is set, and
// its pool from $PIRANHA_POOL when it has none and pool_from_environment is
// set (what Client and FiberClient do on construction). Throws InputError.
ClientOptions with_environment_keys(ClientOptions options);

// The WrongPool error for a server at `endpoint` whose hello named
// `server_pool` (empty: none) to a client of `expected`; its what() is one
// sentence naming both ("the tuple-space server at X serves pool "a", not
// this client's pool "b" (--pool or $PIRANHA_POOL)").
TupleSpaceError wrong_pool(const std::string& endpoint, const std::string& server_pool,
                           const std::string& expected);

template <class Connection>
class BasicSpace;

namespace detail {
enum class Retry : std::uint8_t;  // client_core.h
class WatchTable;                 // client_core.h
}  // namespace detail

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
  // How many times this client has opened a new session after losing one.
  std::uint64_t reconnects() const { return reconnects_; }
  // The pool the server named in its latest hello (ServerOptions::pool_name
  // and pool_id); empty when it serves none.
  const std::string& pool_name() const { return pool_name_; }
  const std::string& pool_id() const { return pool_id_; }

  // The untyped operations behind Space. Timeouts and leases are
  // std::chrono::milliseconds, always in this order: max (where there is
  // one), then the timeout, then the lease. timeout: kForever waits for
  // ever, 0 never waits. lease > 0 takes under a lease (in only).
  //
  // out waits for the server's answer (see above): the tuple is stored when
  // it returns. Throws the server's refusal, or TupleSpaceError(Code::TooLarge)
  // before sending when the request exceeds the server's limit.
  void out(std::string_view space, const Tuple& t);
  // out_posted posts (see above): returns once the tuple is queued; a refusal
  // is thrown by a later call or flush(). Throws TupleSpaceError(Code::TooLarge)
  // at once, posting nothing, when the request exceeds the server's limit.
  void out_posted(std::string_view space, const Tuple& t);
  // Waits until the server has handled every posted out and posted
  // completion; throws the first error any of them got (a refused
  // completion is not an error: see take_lost_leases()).
  void flush();
  // flush() that waits at most `limit`: false, leaving them posted, when
  // some posted request is still unanswered then.
  bool flush_within(std::chrono::milliseconds limit);
  void out_many(std::string_view space, const std::vector<Tuple>& ts);
  std::optional<Leased> in(std::string_view space, const Template& t,
                           std::chrono::milliseconds timeout = kForever,
                           std::chrono::milliseconds lease = std::chrono::milliseconds(0));
  std::optional<Tuple> rd(std::string_view space, const Template& t,
                          std::chrono::milliseconds timeout = kForever);
  // Takes up to `max` matching tuples, oldest first. With timeout 0 (the
  // default) it never waits: empty when nothing matches. Otherwise, when
  // nothing matches now, it waits up to `timeout` (kForever: as long as it
  // takes) for the first matching tuple written and returns that one alone;
  // empty when the time ran out.
  std::vector<Tuple> in_many(std::string_view space, const Template& t, std::size_t max,
                             std::chrono::milliseconds timeout = std::chrono::milliseconds(0));
  // in_many under leases: takes up to `max` matching tuples, oldest first,
  // waiting for the first as in_many does; each is held under its own lease
  // of `lease` (> 0; TupleSpaceError(Code::BadRequest) otherwise), to be
  // acked, renewed or completed one by one. Empty when nothing matched (in
  // time), or the space does not exist and timeout is 0.
  std::vector<Leased> in_many_leased(std::string_view space, const Template& t, std::size_t max,
                                     std::chrono::milliseconds timeout, std::chrono::milliseconds lease);
  // Copy-collect: copies of up to `max` matching tuples, oldest first, never
  // waiting and leaving them in the space. Empty when nothing matches or the
  // space does not exist. max is 1..kMaxTuplesPerRequest.
  std::vector<Tuple> rd_many(std::string_view space, const Template& t, std::size_t max);
  // rd_many of each template in turn, the requests sent together: the i-th
  // result is what rd_many(space, templates[i], max) would return. The
  // server answers a connection's requests in order, and reads those that
  // arrived together in the same turn, so the whole waits for the server
  // once rather than once a template (what a busy server's reader, such as
  // the NPS at a tick, pays for each request: docs/scale.md). The results
  // are not one snapshot: other connections' requests may be served between
  // them. A request the server refuses for a full disk, and those after a
  // lost connection, are asked again one by one as rd_many asks them;
  // errors and deadlines are rd_many's.
  std::vector<std::vector<Tuple>> rd_many_each(std::string_view space, const std::vector<Template>& templates,
                                               std::size_t max);
  // Throw TupleSpaceError(Code::UnknownLease) when the lease already ended.
  void ack(LeaseId lease);
  void renew(LeaseId lease, std::chrono::milliseconds duration);
  // Atomic completion: if this client still holds `lease`, ends it and writes
  // `ts` (possibly none) to `space`, in order, as one step; returns true.
  // Returns false, having written nothing, when the lease is not held (the
  // server's "unknown_lease"). Other errors throw TupleSpaceError.
  bool complete(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts);
  // complete() of many leases as one step: if this client holds every one,
  // ends them all and writes `ts`; otherwise writes nothing, ends none, and
  // returns false. 1 to kMaxTuplesPerRequest leases.
  bool complete_all(const std::vector<LeaseId>& leases, std::string_view space, const std::vector<Tuple>& ts);
  // The posted form of complete(): returns once the request is queued, like
  // out_posted(), with the same ordering guarantee (a later call on this Client, or
  // flush(), returns only after the server has handled it). A refusal
  // (unknown_lease) is never thrown: the lease is recorded for
  // take_lost_leases(). Other errors are reported as a posted out's are.
  // Throws TupleSpaceError(Code::TooLarge) at once, posting nothing, when the
  // request exceeds the server's limit.
  void complete_posted(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts);
  // The posted form of complete_all(): one request that ends every lease and
  // writes `ts`, or, when some lease is not held, ends none and writes
  // nothing. When it is refused (or its answer is lost with the connection),
  // take_lost_leases() reports every one of `leases`, though the others may
  // still be held: complete those one by one to end them. 1 to kMaxTuplesPerRequest
  // leases.
  void complete_all_posted(const std::vector<LeaseId>& leases, std::string_view space,
                           const std::vector<Tuple>& ts);
  // Posts the removal of up to `max` tuples matching `t` (oldest first) and
  // returns at once, like out_posted(): the take of in_many(t, max) with
  // timeout 0, whose answer is checked only for an error (thrown as a posted
  // out's is) and whose tuples are dropped. It is handled after every
  // request made before it on this Client. Meant for removing a tuple known
  // exactly (a record superseded by a newer one just posted), which a second
  // take cannot harm: like a posted out, when the session is lost before
  // its answer it may or may not have happened, and it is not repeated.
  void discard_posted(std::string_view space, const Template& t, std::size_t max = 1);
  // Prefetching (a piranha asks for its next task while computing this
  // one): sends an in of `t` that does not wait (timeout 0) under a lease of
  // `lease` (> 0), and returns at once, like out_posted(); the answer is
  // read in order with the other posted requests, and take_prefetched()
  // hands it over. One at a time: throws std::logic_error when one is
  // outstanding. A tuple it took returns to its space if the connection is
  // lost before the answer is read (its lease ends with the session), or
  // when this client closes without taking it.
  void prefetch(std::string_view space, const Template& t, std::chrono::milliseconds lease);
  // True from prefetch() until take_prefetched().
  bool prefetching() const { return prefetch_rid_ != 0; }
  // The prefetch's answer, waiting for it at most `limit`: the tuple under
  // its lease, or nullopt when nothing matched, the connection was lost, or
  // none is outstanding. Throws TupleSpaceError(Code::DeadlineExceeded) when no
  // answer came within `limit` (the prefetch stays outstanding; a tuple it
  // took returns when this client closes), TupleSpaceError(Code::Interrupted)
  // when the interrupt fd became readable while it waited (the same), and
  // an error the request got as a posted out's is thrown.
  std::optional<Leased> take_prefetched(std::chrono::milliseconds limit);
  // The leases whose posted completion the server refused (nothing of theirs
  // was written) or whose answer was lost with the connection (it may have
  // been written; if not, the lease returned the task, so the task's results
  // are still written exactly once), in the order this client learnt of
  // them, and forgets them. Only
  // refusals that have arrived are reported; call flush() first to wait for
  // every posted completion. Never blocks and never throws.
  std::vector<LeaseId> take_lost_leases();
  WatchId watch(std::string_view space, const Template& t);
  void unwatch(WatchId id);
  // The next watch event, waiting up to `timeout` (kForever: no limit).
  // With `wake_fd` (an eventfd, a pipe; -1: none), returns nullopt as soon
  // as it is readable, without reading it: one thread can then both wait for
  // events and be woken for other work (the agent's uplink).
  std::optional<WatchEvent> next_event(std::chrono::milliseconds timeout = kForever, int wake_fd = -1);
  // False when the space did not exist.
  bool remove(std::string_view space);
  std::vector<SpaceStats> stats();
  std::optional<SpaceStats> stats(std::string_view space);

  // Runs fn on a new thread with its own connection and outs its result into
  // `space` (Linda's eval). The future completes when the tuple is written and
  // rethrows fn's exception.
  std::future<void> eval(std::string space, std::function<Tuple()> fn);

 private:
  using Retry = detail::Retry;
  // An in/rd that the server may hold: re-encoded with what is left of its
  // timeout when it is re-issued.
  struct Blocking {
    Op op;  // In, Rd or InMany
    std::string_view space;
    const Template* tmpl;
    Millis timeout;
    Millis lease;
    std::size_t max = 0;  // InMany
  };
  // Sends frame_ and returns its reply; `takes` marks calls that take tuples.
  Reply call(Retry retry, bool takes = false, const Blocking* blocking = nullptr);
  // call() of the completion in frame_: false when the server refused it
  // (unknown_lease), having written nothing.
  bool call_completion();
  void send_frame();
  enum class Received : std::uint8_t { Reply, Timeout, Lost, Interrupted };
  // Waits for the reply to `rid` (0: a watch event) until `deadline`
  // (steady ms; -1: none), queueing events and settling posted replies;
  // `interruptible`: also until options_.interrupt_fd is readable.
  // Returns Timeout early when `wake_fd` (-1: none) is readable.
  Received receive_until(std::uint64_t rid, Reply& out, Millis deadline, bool interruptible = false,
                         int wake_fd = -1);
  // Forgets the lost session: posted requests get unknown_outcome.
  void session_lost();
  // True when the connection was closed since the last look; never blocks.
  bool dropped();
  // Opens a new session (and re-watches) by `deadline`, or throws unreachable.
  void open_session(Millis deadline);
  // Sleeps `ms`, or less once options_.interrupt_fd is readable: whether it was.
  bool interrupted_during(Millis ms);
  // Opens a new session if the connection was lost; true if it did.
  bool ensure_session(Millis deadline);
  void throw_deferred();
  // Safe takes (see above).
  std::optional<Leased> take_safely(std::string_view space, const Template& t, Millis timeout);
  std::vector<Tuple> take_many_safely(std::string_view space, const Template& t, std::size_t max,
                                      Millis timeout);
  std::vector<Tuple> take_batch_safely(std::string_view space, const Template& t, std::size_t max,
                                       Millis timeout);
  const std::string& taken_space();
  // Whether the marker or token `tmpl` is in taken_space() for good, after
  // the answer to the completion of its lease was lost: `sessions` is
  // reconnects_ when the completion was sent, `lease_end` the steady time by
  // which its lease has surely ended (waited for only when absent on a new
  // session).
  bool present_once_settled(const Template& tmpl, std::uint64_t sessions, Millis lease_end);
  void count_markers(std::size_t n);
  // Safe outs (see above), of one tuple or more (`ts` not empty).
  void put_safely(std::string_view space, const std::vector<Tuple>& ts);
  struct Socket;
  std::string endpoint_;
  ClientOptions options_;
  std::unique_ptr<Socket> socket_;
  bool connected_ = false;
  std::uint64_t reconnects_ = 0;
  std::uint64_t next_id_ = 1;
  std::string frame_;
  std::string control_;  // hello and re-watch frames, so frame_ survives a reconnect
  std::deque<WatchEvent> events_;
  std::unique_ptr<detail::WatchTable> watches_;
  std::size_t max_message_bytes_ = kDefaultMaxMessageBytes;  // from the server's hello
  std::string pool_name_, pool_id_;                          // from the server's hello
  // A posted request not yet answered: an out, a completion of `lease` (of
  // `batch` when it completes several), or a prefetch.
  struct Posted {
    std::uint64_t request_id;
    bool completion;
    LeaseId lease;
    std::vector<LeaseId> batch;
    bool prefetch = false;
    const char* op = "out";  // what an error of it is called
    std::string frame;       // a completion's request, to send again after a disk_full
  };
  void post(bool completion, LeaseId lease, std::vector<LeaseId> batch = {}, bool prefetch = false,
            const char* op = "out");
  // Records a posted completion's leases as lost (refused, or unknown outcome).
  void lose(const Posted& p);
  std::deque<Posted> posted_;  // oldest first
  // Posted completions a full disk refused, sent again once steady_ms()
  // reaches resend_at_ (resend_refused).
  std::deque<Posted> refused_;
  Millis resend_at_ = 0;
  // Sends the refused completions again when their pause is over, or at
  // once with `now`.
  void resend_refused(bool now = false);
  // Waits until every posted request is answered (sending refused
  // completions again), or `deadline`: false then.
  bool flush_until(Millis deadline);
  std::optional<TupleSpaceError> deferred_;  // the first error a posted request got
  std::vector<LeaseId> lost_leases_;         // posted completions the server refused
  std::uint64_t prefetch_rid_ = 0;           // the outstanding prefetch's request, 0: none
  bool prefetch_answered_ = false;
  std::optional<Leased> prefetched_;  // its answer, once answered
  std::string taken_space_;           // safe takes' markers; empty until the first
  std::uint64_t taken_seq_ = 0;
  std::size_t markers_ = 0;  // markers in taken_space_ now
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

  // Writes one tuple and waits until it is stored: space.out("task", 3, 2.5).
  template <class... A>
  void out(A&&... fields) {
    c_->out(name_, detail::tuple_of(std::forward<A>(fields)...));
  }
  // Writes one tuple without waiting for the server's answer (Client::out_posted).
  template <class... A>
  void out_posted(A&&... fields) {
    c_->out_posted(name_, detail::tuple_of(std::forward<A>(fields)...));
  }
  void out_many(const std::vector<Tuple>& ts) { c_->out_many(name_, ts); }

  // Takes the oldest matching tuple, waiting as long as it takes.
  template <class... A>
  Tuple in(A&&... args) {
    return *take_impl(kForever, std::chrono::milliseconds(0), std::forward<A>(args)...);
  }
  // Reads (copies) the oldest matching tuple, waiting as long as it takes.
  template <class... A>
  Tuple rd(A&&... args) {
    return *read_impl(kForever, std::forward<A>(args)...);
  }
  // Non-blocking forms: nullopt when nothing matches now.
  template <class... A>
  std::optional<Tuple> inp(A&&... args) {
    return take_impl(std::chrono::milliseconds(0), std::chrono::milliseconds(0), std::forward<A>(args)...);
  }
  template <class... A>
  std::optional<Tuple> rdp(A&&... args) {
    return read_impl(std::chrono::milliseconds(0), std::forward<A>(args)...);
  }
  // Bounded waits: nullopt when nothing matched within `timeout`.
  template <class... A>
  std::optional<Tuple> in_for(std::chrono::milliseconds timeout, A&&... args) {
    return take_impl(timeout, std::chrono::milliseconds(0), std::forward<A>(args)...);
  }
  template <class... A>
  std::optional<Tuple> rd_for(std::chrono::milliseconds timeout, A&&... args) {
    return read_impl(timeout, std::forward<A>(args)...);
  }
  // Takes under a lease of `lease` length, waiting as long as it takes.
  template <class... A>
  Leased take(std::chrono::milliseconds lease, A&&... args) {
    auto t = c_->in(name_, detail::template_of(args...), kForever, lease);
    detail::bind_all(t->tuple, args...);
    return std::move(*t);
  }
  // Takes under a lease, waiting at most `timeout`.
  template <class... A>
  std::optional<Leased> take_for(std::chrono::milliseconds timeout, std::chrono::milliseconds lease,
                                 A&&... args) {
    auto t = c_->in(name_, detail::template_of(args...), timeout, lease);
    if (t) detail::bind_all(t->tuple, args...);
    return t;
  }
  void ack(const Leased& l) { c_->ack(l.lease); }
  void renew(const Leased& l, std::chrono::milliseconds d) { c_->renew(l.lease, d); }

  // Atomic completion into this space: ends l's lease and writes the result
  // tuples in one step, or, when the lease is no longer held, writes nothing
  // and returns false.
  //   space.complete(task, ts::Tuple::of("result", id, value));
  template <class... T, class = std::enable_if_t<(std::is_same_v<std::decay_t<T>, Tuple> && ...)>>
  bool complete(const Leased& l, T&&... results) {
    return c_->complete(l.lease, name_, std::vector<Tuple>{std::forward<T>(results)...});
  }
  bool complete(const Leased& l, const std::vector<Tuple>& results) {
    return c_->complete(l.lease, name_, results);
  }
  // The posted forms (see Client::complete_posted and take_lost_leases).
  template <class... T, class = std::enable_if_t<(std::is_same_v<std::decay_t<T>, Tuple> && ...)>>
  void complete_posted(const Leased& l, T&&... results) {
    c_->complete_posted(l.lease, name_, std::vector<Tuple>{std::forward<T>(results)...});
  }
  void complete_posted(const Leased& l, const std::vector<Tuple>& results) {
    c_->complete_posted(l.lease, name_, results);
  }

  // Takes up to `max` matching tuples now, oldest first.
  template <class... A>
  std::vector<Tuple> in_many(std::size_t max, A&&... args) {
    return c_->in_many(name_, detail::template_of(std::forward<A>(args)...), max);
  }
  // Takes at least one and up to `max` matching tuples, oldest first: all
  // that match now, or else the first written, waiting as long as it takes.
  // A master collecting results waits for them this way in one request each.
  template <class... A>
  std::vector<Tuple> in_many_wait(std::size_t max, A&&... args) {
    return c_->in_many(name_, detail::template_of(std::forward<A>(args)...), max, kForever);
  }
  // As in_many_wait, waiting at most `timeout`: empty when none came.
  template <class... A>
  std::vector<Tuple> in_many_for(std::size_t max, std::chrono::milliseconds timeout, A&&... args) {
    return c_->in_many(name_, detail::template_of(std::forward<A>(args)...), max, timeout);
  }
  // Takes up to `max` matching tuples now, oldest first, each under its own
  // lease of `lease` length. Bindings are not filled (there may be many).
  template <class... A>
  std::vector<Leased> take_many(std::size_t max, std::chrono::milliseconds lease, A&&... args) {
    return c_->in_many_leased(name_, detail::template_of(std::forward<A>(args)...), max,
                              std::chrono::milliseconds(0), lease);
  }
  // Copies up to `max` matching tuples now, oldest first, leaving them.
  // Bindings are not filled.
  template <class... A>
  std::vector<Tuple> rd_many(std::size_t max, A&&... args) {
    return c_->rd_many(name_, detail::template_of(std::forward<A>(args)...), max);
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
  std::optional<Tuple> take_impl(std::chrono::milliseconds timeout, std::chrono::milliseconds lease,
                                 A&&... args) {
    auto t = c_->in(name_, detail::template_of(args...), timeout, lease);
    if (!t) return std::nullopt;
    detail::bind_all(t->tuple, args...);
    return std::move(t->tuple);
  }
  template <class... A>
  std::optional<Tuple> read_impl(std::chrono::milliseconds timeout, A&&... args) {
    auto t = c_->rd(name_, detail::template_of(args...), timeout);
    if (t) detail::bind_all(*t, args...);
    return t;
  }

  Connection* c_;
  std::string name_;
};

inline Space Client::space(std::string name) {
  return Space(*this, std::move(name));
}

}  // namespace piranha::ts
