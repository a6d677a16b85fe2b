#include "piranha/tuplespace/client.h"

#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <thread>
#include <zmq.hpp>

#include "client_core.h"
#include "connection.h"
#include "piranha/base/clock.h"
#include "piranha/tuplespace/server.h"

namespace piranha::ts {
namespace {

std::string ms_text(Millis ms) {
  return std::to_string(ms) + " ms";
}

// Posted requests allowed in flight before the next post waits for some acknowledgements,
// so a fast producer cannot queue without bound.
constexpr std::size_t kPostWindow = 1024;

// Safe takes: how long past a lease's nominal end the server surely ended it
// (it expires leases once per event-loop turn), and how many markers are
// kept before their space is removed.
constexpr Millis kLeaseEndMargin = 1000;
constexpr std::size_t kMarkersKept = 1024;
constexpr std::size_t kSafeBatch = 4096;

// The pause before a request a full disk refused is sent again.
constexpr Millis kDiskFullPause = 200;

// Holds back an error of a posted request while a safe take settles, so that
// the take's tuples are returned; the error is thrown by the next call.
class DeferredAside {
 public:
  explicit DeferredAside(std::optional<TupleSpaceError>& slot) : slot_(slot), held_(std::move(slot)) {
    slot_.reset();
  }
  ~DeferredAside() {
    if (held_) slot_ = std::move(held_);
  }
  DeferredAside(const DeferredAside&) = delete;
  DeferredAside& operator=(const DeferredAside&) = delete;

 private:
  std::optional<TupleSpaceError>& slot_;
  std::optional<TupleSpaceError> held_;
};

// An interrupt fd is "readable" when a read would not block: data, or a
// pipe whose writer closed it (POLLHUP), or an error.
bool interrupt_signalled(short revents) {
  return (revents & (POLLIN | POLLHUP | POLLERR)) != 0;
}

// A call whose `op` to `endpoint` got no answer within `waited`.
TupleSpaceError no_answer(const std::string& op, const std::string& endpoint, Millis waited) {
  return TupleSpaceError::of(Code::DeadlineExceeded, op + " to " + endpoint + " got no answer within " +
                                                         ms_text(waited) +
                                                         "; whether it was carried out is unknown");
}

TupleSpaceError interrupted() {
  return TupleSpaceError::of(Code::Interrupted,
                             "the call was interrupted (options.interrupt_fd); whether it was carried out is "
                             "unknown");
}

}  // namespace

// One connection (connection.h); a new one is a new session.
struct Client::Socket : detail::Connection {
  Socket(const std::string& endpoint, const ClientOptions& o)
      // Linger: long enough to deliver the goodbye on close, short enough not
      // to hang an exiting program whose server is gone.
      : Connection(endpoint, o, 200) {}
};

TupleSpaceError wrong_pool(const std::string& endpoint, const std::string& server_pool,
                           const std::string& expected) {
  // Without the code's word in front: the sentence is what a person reads.
  return TupleSpaceError(
      Code::WrongPool,
      "the tuple-space server at " + endpoint +
          (server_pool.empty() ? " serves no named pool" : " serves pool \"" + server_pool + "\"") +
          ", not this client's pool \"" + expected + "\" (--pool or $PIRANHA_POOL)");
}

ClientOptions with_environment_keys(ClientOptions options) {
  if (options.curve.empty() && options.curve_from_environment)
    if (auto keys = curve_keys_from_environment()) options.curve = *keys;
  if (options.pool.empty() && options.pool_from_environment)
    if (const char* p = std::getenv(kPoolEnv)) options.pool = p;
  return options;
}

Client::Client(std::string endpoint, ClientOptions options)
    : endpoint_(std::move(endpoint)),
      options_(with_environment_keys(std::move(options))),
      watches_(std::make_unique<detail::WatchTable>()) {
  open_session(steady_ms() + options_.connect_timeout.count());
}

void Client::open_session(Millis deadline) {
  Millis began = steady_ms();
  bool after_loss = socket_ != nullptr;
  Millis backoff = options_.reconnect_backoff.count();
  int failed_handshakes = 0;  // of this call's connections (connection.h)
  while (true) {
    if (socket_) socket_->dealer.set(zmq::sockopt::linger, 0);  // what it holds belongs to the lost session
    socket_.reset();
    socket_ = std::make_unique<Socket>(endpoint_, options_);
    socket_->dropped();  // read to the end once, so that its ZMQ_FD signals the first event
    std::uint64_t rid = next_id_++;
    encode_hello(control_, rid, options_.served_first);
    socket_->dealer.send(zmq::buffer(control_), zmq::send_flags::none);
    Reply r;
    Received got = receive_until(rid, r, deadline, true);
    // A refused hello (served_first asked of a key whose role may not have it).
    if (got == Received::Reply && r.status == Reply::Status::Error)
      throw TupleSpaceError::of(r.code, "the tuple-space server at " + endpoint_ + " refused: " + r.message);
    if (got == Received::Reply && r.max_message_bytes > 0) max_message_bytes_ = r.max_message_bytes;
    if (got == Received::Reply) {
      pool_name_ = r.pool_name;
      pool_id_ = r.pool_id;
      if (!options_.pool.empty() && pool_name_ != options_.pool)
        throw wrong_pool(endpoint_, pool_name_, options_.pool);
    }
    for (auto it = watches_->all().begin(); got == Received::Reply && it != watches_->all().end(); ++it) {
      std::uint64_t wid = next_id_++;
      encode_watch(control_, wid, it->second.space, it->second.tmpl);
      socket_->dealer.send(zmq::buffer(control_), zmq::send_flags::none);
      got = receive_until(wid, r, deadline, true);
      if (got == Received::Reply && r.status == Reply::Status::Error)
        throw TupleSpaceError::of(r.code,
                                  "re-watching " + it->second.space + " after a reconnect: " + r.message);
      it->second.server_id = r.number;
    }
    if (got == Received::Reply) {
      connected_ = true;
      return;
    }
    if (got == Received::Interrupted) throw interrupted();
    if (auto refused = socket_->refused(failed_handshakes)) throw *refused;
    Millis left = deadline - steady_ms();
    if (got == Received::Timeout || left <= 0)
      throw TupleSpaceError::of(Code::Unreachable, "no tuple-space server answered at " + endpoint_ +
                                                       (after_loss ? " after the connection was lost" : "") +
                                                       " within " + ms_text(deadline - began));
    // Connected and dropped again at once: pause before the next try.
    if (interrupted_during(std::min(backoff, left))) throw interrupted();
    backoff = std::min<Millis>(backoff * 2, options_.reconnect_backoff_max.count());
  }
}

bool Client::dropped() {
  // Nothing was reported unless the monitor's ZMQ_FD is readable: one
  // poll(2), where a read of the monitor costs libzmq a poll(2) and a
  // getpid(2) or two. The fd signals a new event only once the monitor has
  // been read to the end, which every read here does, and this client reads
  // the monitor nowhere else (no zmq_poll on it).
  pollfd p{socket_->monitor.get(zmq::sockopt::fd), POLLIN, 0};
  if (::poll(&p, 1, 0) == 0) return false;
  return socket_->dropped();
}

bool Client::interrupted_during(Millis ms) {
  const Millis until = steady_ms() + ms;
  const auto sleep_out = [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(until - steady_ms()));
    return false;
  };
  if (options_.interrupt_fd < 0) return sleep_out();
  for (Millis left = ms; left > 0; left = until - steady_ms()) {
    pollfd p{options_.interrupt_fd, POLLIN, 0};
    int n = ::poll(&p, 1, static_cast<int>(std::min<Millis>(left, std::numeric_limits<int>::max())));
    if (n > 0 && interrupt_signalled(p.revents)) return true;
    // Closed (POLLNVAL), or not an fd poll(2) can wait on: no interrupt can come.
    if (n > 0 || (n < 0 && errno != EINTR)) return sleep_out();
  }
  return false;
}

bool Client::ensure_session(Millis deadline) {
  if (connected_ && dropped()) session_lost();
  if (connected_) return false;
  open_session(deadline);
  ++reconnects_;
  return true;
}

void Client::session_lost() {
  connected_ = false;
  std::size_t outs = 0;
  for (const Posted& p : posted_) {
    // Results stay exactly once either way: see take_lost_leases().
    if (p.completion)
      lose(p);
    else if (p.prefetch)
      prefetch_answered_ = true;  // nothing: what it took returns with the old session
    else
      ++outs;
  }
  if (outs > 0 && !deferred_)
    deferred_ = TupleSpaceError::of(
        Code::UnknownOutcome, "the connection to " + endpoint_ + " was lost with " + std::to_string(outs) +
                                  " posted out(s) unacknowledged; they may or may not have been stored");
  posted_.clear();
  for (const Posted& p : refused_) lose(p);  // their leases return with the old session
  refused_.clear();
}

void Client::resend_refused(bool now) {
  if (refused_.empty() || !connected_ || (!now && steady_ms() < resend_at_)) return;
  for (Posted& p : refused_) {
    socket_->dealer.send(zmq::buffer(p.frame), zmq::send_flags::none);
    posted_.push_back(std::move(p));
  }
  refused_.clear();
}

void Client::send_frame() {
  if (frame_.size() > max_message_bytes_)
    throw TupleSpaceError::of(Code::TooLarge, "request of " + std::to_string(frame_.size()) +
                                                  " bytes exceeds the server's limit of " +
                                                  std::to_string(max_message_bytes_) + " bytes");
  socket_->dealer.send(zmq::buffer(frame_), zmq::send_flags::none);
}

void Client::throw_deferred() {
  if (!deferred_) return;
  TupleSpaceError e = std::move(*deferred_);
  deferred_.reset();
  throw e;
}

Client::~Client() {
  if (!socket_) return;
  // Posted outs must be stored before the session ends.
  if (!posted_.empty()) {
    Reply r;
    try {
      if (receive_until(posted_.back().request_id, r, steady_ms() + options_.close_timeout.count()) ==
          Received::Lost)
        session_lost();
    } catch (const std::exception&) {
    }
    if (!posted_.empty()) {
      std::fprintf(stderr, "piranha: %zu posted request(s) to %s were not acknowledged before close\n",
                   posted_.size(), endpoint_.c_str());
      // The server is not answering: closing does not linger for it.
      socket_->dealer.set(zmq::sockopt::linger, 0);
    }
  }
  if (deferred_) std::fprintf(stderr, "piranha: a posted request failed: %s\n", deferred_->what());
  try {
    // Safe takes' markers are needed no more; handled before the goodbye.
    if (markers_ > 0) {
      encode_remove(control_, next_id_++, taken_space_);
      socket_->dealer.send(zmq::buffer(control_), zmq::send_flags::dontwait);
    }
  } catch (const zmq::error_t&) {
  }
  // Best effort: lets the server drop this session at once (inproc
  // connections have no disconnect event; TCP ones get it a little later).
  try {
    encode_bye(control_, next_id_++);
    socket_->dealer.send(zmq::buffer(control_), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
  }
}

// Waits for the reply to `rid`, queueing watch events that arrive meanwhile.
// A reply that arrived before the connection dropped is still taken.
Client::Received Client::receive_until(std::uint64_t rid, Reply& out, Millis deadline, bool interruptible,
                                       int wake_fd) {
  zmq::message_t msg;
  int interrupt = interruptible ? options_.interrupt_fd : -1;
  // Waits with ::poll on the sockets' ZMQ_FDs rather than zmq_poll, which
  // asks each socket for its ZMQ_EVENTS before and after sleeping (a poll(2)
  // and a getpid(2) each inside libzmq). A ZMQ_FD signals a change: the
  // dealer's is safe to sleep on once a read found nothing (nothing is sent
  // in between), and the monitor is read only when its fd is readable.
  const int dealer_fd = socket_->dealer.get(zmq::sockopt::fd);
  const int monitor_fd = socket_->monitor.get(zmq::sockopt::fd);
  bool monitor_readable = false;
  while (true) {
    if (!socket_->dealer.recv(msg, zmq::recv_flags::dontwait)) {
      if (monitor_readable && socket_->dropped()) return Received::Lost;
      Millis left = deadline < 0 ? -1 : deadline - steady_ms();
      if (deadline >= 0 && left <= 0) return Received::Timeout;
      // An absent fd (-1) is ignored by poll(2).
      pollfd fds[] = {
          {dealer_fd, POLLIN, 0}, {monitor_fd, POLLIN, 0}, {interrupt, POLLIN, 0}, {wake_fd, POLLIN, 0}};
      int timeout = left < 0 ? -1 : static_cast<int>(std::min<Millis>(left, std::numeric_limits<int>::max()));
      if (::poll(fds, 4, timeout) < 0 && errno != EINTR)
        throw TupleSpaceError(Code::Unreachable, std::string("poll: ") + std::strerror(errno));
      if (interrupt >= 0 && interrupt_signalled(fds[2].revents)) return Received::Interrupted;
      if (interrupt >= 0 && (fds[2].revents & POLLNVAL)) interrupt = -1;  // closed: no interrupt can come
      if (wake_fd >= 0 && (fds[3].revents & POLLIN)) return Received::Timeout;
      monitor_readable = (fds[1].revents & POLLIN) != 0;
      continue;
    }
    Reply r = decode_reply(std::string_view(static_cast<const char*>(msg.data()), msg.size()));
    if (r.status == Reply::Status::Event) {
      events_.push_back(
          WatchEvent{watches_->caller_id(r.number), r.event, std::move(r.space), std::move(r.tuples.at(0))});
      if (rid == 0) {  // next_event() is waiting for exactly this
        out = Reply{};
        out.status = Reply::Status::Event;
        return Received::Reply;
      }
      continue;
    }
    // The answer to a posted request: the server answers them in order.
    if (!posted_.empty() && r.request_id == posted_.front().request_id) {
      Posted p = std::move(posted_.front());
      posted_.pop_front();
      if (p.prefetch) {
        prefetch_answered_ = true;
        if (r.status == Reply::Status::Ok && !r.tuples.empty())
          prefetched_ = Leased{std::move(r.tuples[0]), r.number};
      }
      if (r.status == Reply::Status::Error) {
        if (p.completion && r.code == Code::DiskFull) {
          // Not carried out: sent again after a pause (resend_refused).
          if (refused_.empty()) resend_at_ = steady_ms() + kDiskFullPause;
          refused_.push_back(std::move(p));
        } else if (p.completion && r.code == Code::UnknownLease) {
          lose(p);
        } else if (p.prefetch && r.code == Code::DiskFull) {
          // It took nothing: the next take asks again.
        } else if (!deferred_) {
          deferred_.emplace(r.code,
                            std::string(p.completion ? "complete"
                                        : p.prefetch ? "prefetch"
                                                     : p.op) +
                                " (posted earlier): " + std::string(code_to_wire(r.code)) + ": " + r.message,
                            r.message);
        }
      }
      if (r.request_id == rid) {
        out = std::move(r);
        return Received::Reply;
      }
      continue;
    }
    // An error with id 0 answers a request the server could not read: ours.
    if (r.request_id == rid || (r.request_id == 0 && r.status == Reply::Status::Error)) {
      r.request_id = rid;
      out = std::move(r);
      return Received::Reply;
    }
    // A stale reply to an abandoned request: ignore it.
  }
}

Reply Client::call(Retry retry, bool takes, const Blocking* blocking) {
  throw_deferred();
  // The request id sits in the frame already; read it back from next_id_.
  std::uint64_t rid = next_id_ - 1;
  Millis start = steady_ms();
  Millis wait = blocking ? blocking->timeout : 0;
  Millis deadline = wait == kForever.count() ? -1 : start + wait + options_.request_timeout.count();
  ensure_session(deadline < 0 ? start + options_.request_timeout.count() : deadline);
  resend_refused();
  send_frame();
  Reply r;
  Millis full_until = -1;  // when a full disk's refusals stop being sent again
  while (true) {
    Received got = receive_until(rid, r, deadline, true);
    if (got == Received::Reply && r.status == Reply::Status::Error && r.code == Code::DiskFull) {
      // Nothing was carried out: the same request again after a pause.
      if (full_until < 0)
        full_until = deadline < 0 ? steady_ms() + options_.request_timeout.count() : deadline;
      if (steady_ms() + kDiskFullPause < full_until) {
        if (interrupted_during(kDiskFullPause)) throw interrupted();
        ensure_session(full_until);  // a connection lost meanwhile: the request was not carried out
        resend_refused();
        send_frame();
        continue;
      }
    }
    if (got == Received::Reply) break;
    if (got == Received::Interrupted) throw interrupted();
    // Only on this error path: the op, for the message, read back from the frame.
    auto decoded = decode_request(frame_);
    auto* req = std::get_if<Request>(&decoded);
    std::string op = req ? std::string(op_name(req->op)) : "request";
    if (got == Received::Timeout) throw no_answer(op, endpoint_, deadline - start);
    session_lost();
    if (retry == Retry::Fail)
      throw TupleSpaceError::of(Code::UnknownOutcome,
                                "the connection to " + endpoint_ + " was lost before the answer to a " + op +
                                    " that changes the space; it may or may not have been carried out");
    Millis lost_at = steady_ms();
    ensure_session(deadline < 0 ? lost_at + options_.request_timeout.count() : deadline);
    if (retry == Retry::Done) return Reply{};
    if (blocking && blocking->timeout > 0)
      encode_waiting(frame_, rid, blocking->op, blocking->space, *blocking->tmpl,
                     std::max<Millis>(0, blocking->timeout - (steady_ms() - start)), blocking->lease,
                     blocking->max);
    send_frame();
  }
  if (r.status == Reply::Status::Error) throw TupleSpaceError::of(r.code, r.message);
  // A posted out's error that arrived with this reply is thrown now, unless
  // throwing would drop tuples this call took; then the next call throws it.
  if (!takes || r.tuples.empty()) throw_deferred();
  return r;
}

void Client::lose(const Posted& p) {
  if (p.batch.empty())
    lost_leases_.push_back(p.lease);
  else
    lost_leases_.insert(lost_leases_.end(), p.batch.begin(), p.batch.end());
}

void Client::post(bool completion, LeaseId lease, std::vector<LeaseId> batch, bool prefetch, const char* op) {
  std::uint64_t rid = next_id_ - 1;  // encoded in frame_ already
  ensure_session(steady_ms() + options_.request_timeout.count());
  resend_refused();
  send_frame();
  posted_.push_back(
      Posted{rid, completion, lease, std::move(batch), prefetch, op, completion ? frame_ : std::string()});
  if (posted_.size() > kPostWindow) {
    Reply r;
    Millis deadline = steady_ms() + options_.request_timeout.count();
    Received got = receive_until(posted_[kPostWindow / 2].request_id, r, deadline);
    if (got == Received::Lost) session_lost();
    if (got == Received::Timeout)
      throw TupleSpaceError::of(Code::DeadlineExceeded, endpoint_ + " acknowledged no posted out within " +
                                                            ms_text(options_.request_timeout.count()));
  }
}

void Client::out(std::string_view space, const Tuple& t) {
  if (options_.safe_outs) return put_safely(space, {t});
  encode_out(frame_, next_id_++, space, t);
  call(Retry::Fail);
}

void Client::out_posted(std::string_view space, const Tuple& t) {
  throw_deferred();
  encode_out(frame_, next_id_++, space, t);
  post(false, 0);
}

void Client::discard_posted(std::string_view space, const Template& t, std::size_t max) {
  throw_deferred();
  encode_in_many(frame_, next_id_++, space, t, max, 0, 0);
  post(false, 0, {}, false, "discard");
}

void Client::flush() {
  if (!flush_until(steady_ms() + options_.request_timeout.count()))
    throw TupleSpaceError::of(Code::DeadlineExceeded, endpoint_ + " acknowledged " +
                                                          std::to_string(posted_.size()) +
                                                          " posted request(s) not within " +
                                                          ms_text(options_.request_timeout.count()));
  throw_deferred();
}

bool Client::flush_within(std::chrono::milliseconds limit) {
  if (!flush_until(steady_ms() + limit.count())) return false;
  throw_deferred();
  return true;
}

bool Client::flush_until(Millis deadline) {
  while (!posted_.empty() || !refused_.empty()) {
    if (posted_.empty()) {
      // Only completions a full disk refused are left: sent again after their pause.
      Millis pause = resend_at_ - steady_ms();
      if (steady_ms() + std::max<Millis>(pause, 0) >= deadline) break;
      if (pause > 0) std::this_thread::sleep_for(std::chrono::milliseconds(pause));
      resend_refused(true);
      continue;
    }
    Reply r;
    Received got = receive_until(posted_.back().request_id, r, deadline);
    if (got == Received::Lost) session_lost();
    if (got == Received::Timeout) return false;
  }
  // Refused until the deadline: not carried out, and reported as such.
  for (const Posted& p : refused_) lose(p);
  refused_.clear();
  return true;
}

bool Client::call_completion() {
  return detail::unless_refused(Code::UnknownLease, [&] { call(Retry::Fail); });
}

bool Client::complete(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts) {
  encode_complete(frame_, next_id_++, lease, space, ts);
  return call_completion();
}

bool Client::complete_all(const std::vector<LeaseId>& leases, std::string_view space,
                          const std::vector<Tuple>& ts) {
  encode_complete_all(frame_, next_id_++, leases, space, ts);
  return call_completion();
}

void Client::complete_posted(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts) {
  throw_deferred();
  encode_complete(frame_, next_id_++, lease, space, ts);
  post(true, lease);
}

void Client::complete_all_posted(const std::vector<LeaseId>& leases, std::string_view space,
                                 const std::vector<Tuple>& ts) {
  if (leases.empty()) throw TupleSpaceError::of(Code::BadRequest, "complete_all_posted: no lease");
  throw_deferred();
  encode_complete_all(frame_, next_id_++, leases, space, ts);
  post(true, leases.front(), leases);
}

void Client::prefetch(std::string_view space, const Template& t, std::chrono::milliseconds lease) {
  if (prefetching()) throw std::logic_error("prefetch: the last prefetch was not taken");
  detail::require_lease(lease, "prefetch");
  throw_deferred();
  std::uint64_t rid = next_id_++;
  encode_in(frame_, rid, Op::In, space, t, 0, lease.count());
  prefetch_answered_ = false;
  prefetched_.reset();
  post(false, 0, {}, true);
  prefetch_rid_ = rid;
}

std::optional<Leased> Client::take_prefetched(std::chrono::milliseconds limit) {
  if (!prefetching()) return std::nullopt;
  if (!prefetch_answered_) {
    Reply r;
    Received got = receive_until(prefetch_rid_, r, steady_ms() + limit.count(), true);
    // Still outstanding: its answer is read with the next request's, and a
    // tuple it took returns with the session if nobody takes it.
    if (got == Received::Interrupted) throw interrupted();
    if (got == Received::Lost) session_lost();
    if (got == Received::Timeout)
      throw TupleSpaceError::of(Code::DeadlineExceeded,
                                endpoint_ + " did not answer a prefetch within " + ms_text(limit.count()));
  }
  prefetch_rid_ = 0;
  std::optional<Leased> got = std::move(prefetched_);
  prefetched_.reset();
  // An error the prefetch got, unless it took a tuple (which would be lost).
  if (!got) throw_deferred();
  return got;
}

std::vector<LeaseId> Client::take_lost_leases() {
  std::vector<LeaseId> lost;
  lost.swap(lost_leases_);
  return lost;
}

void Client::out_many(std::string_view space, const std::vector<Tuple>& ts) {
  // An empty one has nothing to make exactly once: the server's plain answer.
  if (options_.safe_outs && !ts.empty()) return put_safely(space, ts);
  encode_out_many(frame_, next_id_++, space, ts);
  call(Retry::Fail);
}

std::optional<Leased> Client::in(std::string_view space, const Template& t, std::chrono::milliseconds timeout,
                                 std::chrono::milliseconds lease) {
  if (lease.count() == 0 && options_.safe_takes) return take_safely(space, t, timeout.count());
  encode_in(frame_, next_id_++, Op::In, space, t, timeout.count(), lease.count());
  Blocking b{Op::In, space, &t, timeout.count(), lease.count()};
  return detail::taken_of(call(lease.count() > 0 ? Retry::Resend : Retry::Fail, true, &b));
}

std::optional<Tuple> Client::rd(std::string_view space, const Template& t,
                                std::chrono::milliseconds timeout) {
  encode_in(frame_, next_id_++, Op::Rd, space, t, timeout.count(), 0);
  Blocking b{Op::Rd, space, &t, timeout.count(), 0};
  return detail::read_of(call(Retry::Resend, false, &b));
}

std::vector<Tuple> Client::in_many(std::string_view space, const Template& t, std::size_t max,
                                   std::chrono::milliseconds timeout) {
  if (options_.safe_takes) return take_many_safely(space, t, max, timeout.count());
  encode_in_many(frame_, next_id_++, space, t, max, timeout.count(), 0);
  Blocking b{Op::InMany, space, &t, timeout.count(), 0, max};
  return call(Retry::Fail, true, &b).tuples;
}

std::vector<Leased> Client::in_many_leased(std::string_view space, const Template& t, std::size_t max,
                                           std::chrono::milliseconds timeout,
                                           std::chrono::milliseconds lease) {
  detail::require_lease(lease, "in_many_leased");
  encode_in_many(frame_, next_id_++, space, t, max, timeout.count(), lease.count());
  Blocking b{Op::InMany, space, &t, timeout.count(), lease.count(), max};
  return detail::leased_of(call(Retry::Resend, true, &b));
}

std::vector<Tuple> Client::rd_many(std::string_view space, const Template& t, std::size_t max) {
  encode_rd_many(frame_, next_id_++, space, t, max);
  return call(Retry::Resend).tuples;
}

std::vector<std::vector<Tuple>> Client::rd_many_each(std::string_view space,
                                                     const std::vector<Template>& templates,
                                                     std::size_t max) {
  std::vector<std::vector<Tuple>> out(templates.size());
  if (templates.empty()) return out;
  throw_deferred();
  const Millis start = steady_ms();
  const Millis deadline = start + options_.request_timeout.count();
  ensure_session(deadline);
  resend_refused();
  std::vector<std::uint64_t> ids;
  ids.reserve(templates.size());
  for (const Template& t : templates) {
    encode_rd_many(frame_, next_id_++, space, t, max);
    send_frame();
    ids.push_back(next_id_ - 1);
  }
  std::size_t i = 0;
  for (; i < templates.size(); ++i) {
    Reply r;
    const Received got = receive_until(ids[i], r, deadline, true);
    if (got == Received::Interrupted) throw interrupted();
    if (got == Received::Timeout) throw no_answer("rd_many", endpoint_, deadline - start);
    if (got == Received::Lost) {
      session_lost();
      break;  // this one and the rest again, one by one, on a new session
    }
    if (r.status == Reply::Status::Error) {
      if (r.code == Code::DiskFull) break;  // not carried out: rd_many waits and asks again
      throw TupleSpaceError::of(r.code, r.message);
    }
    out[i] = std::move(r.tuples);
  }
  // Replies to the requests not waited for here arrive later and are
  // dropped as stale (receive_until).
  for (; i < templates.size(); ++i) out[i] = rd_many(space, templates[i], max);
  throw_deferred();
  return out;
}

void Client::ack(LeaseId lease) {
  encode_ack(frame_, next_id_++, lease);
  call(Retry::Fail);
}

void Client::renew(LeaseId lease, std::chrono::milliseconds duration) {
  encode_renew(frame_, next_id_++, lease, duration.count());
  call(Retry::Fail);
}

WatchId Client::watch(std::string_view space, const Template& t) {
  encode_watch(frame_, next_id_++, space, t);
  return watches_->add(space, t, call(Retry::Resend).number);
}

void Client::unwatch(WatchId id) {
  // The watch ends with a lost session and is not re-established.
  encode_unwatch(frame_, next_id_++, watches_->remove(id));
  call(Retry::Done);
}

std::optional<WatchEvent> Client::next_event(std::chrono::milliseconds timeout, int wake_fd) {
  Millis deadline = timeout.count() < 0 ? -1 : steady_ms() + timeout.count();
  while (events_.empty()) {
    Reply r;
    ensure_session(steady_ms() + options_.request_timeout.count());
    Received got = receive_until(0, r, deadline, true, wake_fd);
    if (got == Received::Interrupted) throw interrupted();
    if (got != Received::Lost) break;
    session_lost();
  }
  if (events_.empty()) return std::nullopt;
  WatchEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

bool Client::remove(std::string_view space) {
  encode_remove(frame_, next_id_++, space);
  return detail::unless_refused(Code::UnknownSpace, [&] { call(Retry::Fail); });
}

std::vector<SpaceStats> Client::stats() {
  encode_stats(frame_, next_id_++, "");
  return call(Retry::Resend).stats;
}

std::optional<SpaceStats> Client::stats(std::string_view space) {
  encode_stats(frame_, next_id_++, space);
  return detail::stats_of_one([&] { return call(Retry::Resend).stats; });
}

namespace {
// Safe takes' markers and safe outs' tokens, in the client's taken_space().
Tuple taken_marker(std::uint64_t n) {
  return Tuple::of(std::string("taken"), static_cast<std::int64_t>(n));
}
Template marker_template(std::uint64_t n) {
  return detail::template_of(std::string("taken"), static_cast<std::int64_t>(n));
}
Tuple put_token(std::uint64_t n) {
  return Tuple::of(std::string("put"), static_cast<std::int64_t>(n));
}
Template token_template(std::uint64_t n) {
  return detail::template_of(std::string("put"), static_cast<std::int64_t>(n));
}
}  // namespace

const std::string& Client::taken_space() {
  if (taken_space_.empty()) {
    std::random_device rd;
    std::uint64_t r = (static_cast<std::uint64_t>(rd()) << 32) ^ rd();
    char buf[32];
    std::snprintf(buf, sizeof buf, "_taken.%016llx", static_cast<unsigned long long>(r));
    taken_space_ = buf;
  }
  return taken_space_;
}

bool Client::present_once_settled(const Template& tmpl, std::uint64_t sessions, Millis lease_end) {
  DeferredAside aside(deferred_);
  // Present: written by the completion (a marker), or back in its space
  // because the lease ended unused (a token), either way for good.
  if (rd(taken_space(), tmpl, std::chrono::milliseconds(0))) return true;
  // On the same session the completion was handled before this rd. On a
  // new one, the old session may still hold the lease on the server, its
  // completion not yet handled; once the lease has surely ended, it never
  // will be, and the tuple says what happened.
  if (reconnects_ == sessions) return false;
  if (Millis wait = lease_end - steady_ms(); wait > 0 && interrupted_during(wait)) throw interrupted();
  return rd(taken_space(), tmpl, std::chrono::milliseconds(0)).has_value();
}

void Client::count_markers(std::size_t n) {
  markers_ += n;
  if (markers_ < kMarkersKept) return;
  // No take is unsettled now, so no marker is needed any more.
  DeferredAside aside(deferred_);
  try {
    remove(taken_space_);
    markers_ = 0;
  } catch (const TupleSpaceError&) {
    // Tried again after the next take.
  }
}

std::optional<Leased> Client::take_safely(std::string_view space, const Template& t, Millis timeout) {
  Millis lease = options_.safe_take_lease.count();
  Millis end = timeout == kForever.count() ? kForever.count() : steady_ms() + timeout;
  while (true) {
    Millis left = end == kForever.count() ? kForever.count() : std::max<Millis>(0, end - steady_ms());
    auto got = in(space, t, std::chrono::milliseconds(left), std::chrono::milliseconds(lease));
    if (!got) return std::nullopt;
    Millis lease_end = steady_ms() + lease + kLeaseEndMargin;
    std::uint64_t n = ++taken_seq_;
    std::uint64_t sessions = reconnects_;
    bool kept = false;
    DeferredAside aside(deferred_);  // a posted out's error waits until the take is settled
    try {
      kept = complete(got->lease, taken_space(), {taken_marker(n)});
    } catch (const TupleSpaceError& e) {
      if (e.code() != Code::UnknownOutcome && e.code() != Code::DeadlineExceeded) throw;
      kept = present_once_settled(marker_template(n), sessions, lease_end);
    }
    if (kept) {
      count_markers(1);
      return Leased{std::move(got->tuple), 0};
    }
    // The lease ended first (held too long, or its session was lost): the
    // tuple is back in its space, to be taken again.
  }
}

std::vector<Tuple> Client::take_many_safely(std::string_view space, const Template& t, std::size_t max,
                                            Millis timeout) {
  // Batches small enough to be taken, sent and completed well within the
  // lease even by a slow client: a batch whose leases ran out first is
  // refused whole and would be taken again, and again. Only the first waits.
  std::vector<Tuple> all;
  while (all.size() < max) {
    std::size_t want = std::min(max - all.size(), kSafeBatch);
    std::vector<Tuple> batch = take_batch_safely(space, t, want, all.empty() ? timeout : 0);
    bool short_batch = batch.size() < want;
    for (Tuple& x : batch) all.push_back(std::move(x));
    if (short_batch) break;
  }
  return all;
}

std::vector<Tuple> Client::take_batch_safely(std::string_view space, const Template& t, std::size_t max,
                                             Millis timeout) {
  Millis lease = options_.safe_take_lease.count();
  Millis end = timeout > 0 ? steady_ms() + timeout : timeout;
  while (true) {
    Millis left = end > 0 ? std::max<Millis>(0, end - steady_ms()) : end;
    std::vector<Leased> got =
        in_many_leased(space, t, max, std::chrono::milliseconds(left), std::chrono::milliseconds(lease));
    if (got.empty()) return {};
    Millis lease_end = steady_ms() + lease + kLeaseEndMargin;
    std::uint64_t n = ++taken_seq_;
    std::uint64_t sessions = reconnects_;
    std::vector<LeaseId> leases;
    leases.reserve(got.size());
    for (const Leased& l : got) leases.push_back(l.lease);
    bool kept = false;
    DeferredAside aside(deferred_);  // a posted out's error waits until the batch is settled
    try {
      // All of the batch's leases and one marker, in one step.
      kept = complete_all(leases, taken_space(), {taken_marker(n)});
    } catch (const TupleSpaceError& e) {
      if (e.code() != Code::UnknownOutcome && e.code() != Code::DeadlineExceeded) throw;
      kept = present_once_settled(marker_template(n), sessions, lease_end);
    }
    if (kept) {
      count_markers(1);
      std::vector<Tuple> tuples;
      tuples.reserve(got.size());
      for (Leased& l : got) tuples.push_back(std::move(l.tuple));
      return tuples;
    }
    // Some lease ended first: none was completed, every tuple of the batch
    // is back in its space or will be when its lease ends. Take again.
  }
}

void Client::put_safely(std::string_view space, const std::vector<Tuple>& ts) {
  Millis lease = options_.safe_take_lease.count();
  // Tries end with a call's deadline (request_timeout) from the first: a
  // server that answers but never in time does not keep the call for ever.
  const Millis give_up = steady_ms() + options_.request_timeout.count();
  const auto unwritten = [&] {
    if (steady_ms() < give_up) return;
    throw TupleSpaceError::of(Code::DeadlineExceeded, "a safe out to " + std::string(space) + " on " +
                                                          endpoint_ + " was not written within " +
                                                          ms_text(options_.request_timeout.count()) +
                                                          " (nothing was written)");
  };
  while (true) {
    std::uint64_t n = ++taken_seq_;
    Tuple token = put_token(n);
    try {
      encode_out(frame_, next_id_++, taken_space(), token);
      call(Retry::Fail);
    } catch (const TupleSpaceError& e) {
      // Written or not, this token is not used: the next try writes another.
      if (e.code() != Code::UnknownOutcome && e.code() != Code::DeadlineExceeded) throw;
      if (steady_ms() >= give_up) throw;
      continue;
    }
    auto got =
        in(taken_space(), token_template(n), std::chrono::milliseconds(0), std::chrono::milliseconds(lease));
    if (!got) {
      // Its space was lost (a server without --data restarted), or the old
      // session still holds it: again, with another token.
      unwritten();
      continue;
    }
    Millis lease_end = steady_ms() + lease + kLeaseEndMargin;
    std::uint64_t sessions = reconnects_;
    bool written = false;
    DeferredAside aside(deferred_);  // a posted out's error waits until the out is settled
    try {
      written = complete(got->lease, space, ts);
    } catch (const TupleSpaceError& e) {
      if (e.code() != Code::UnknownOutcome && e.code() != Code::DeadlineExceeded) throw;
      written = !present_once_settled(token_template(n), sessions, lease_end);
    }
    if (written) {
      count_markers(1);
      return;
    }
    // The lease ended first: the token is back, the tuples unwritten.
    unwritten();
  }
}

std::future<void> Client::eval(std::string space, std::function<Tuple()> fn) {
  return std::async(std::launch::async,
                    [endpoint = endpoint_, options = options_, space = std::move(space), fn = std::move(fn)] {
                      Tuple result = fn();
                      Client c(endpoint, options);
                      c.out(space, result);
                    });
}

}  // namespace piranha::ts
