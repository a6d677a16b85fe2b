#include "piranha/tuplespace/client.h"

#include <cstdio>
#include <zmq.hpp>

#include "piranha/tuplespace/server.h"

namespace piranha::ts {
namespace {

Millis now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct Client::Socket {
  zmq::socket_t s;
  explicit Socket(const std::string& endpoint, const ClientOptions& o)
      : s(default_context(), zmq::socket_type::dealer) {
    // Long enough to deliver the goodbye on close, short enough not to hang
    // an exiting program whose server is gone.
    s.set(zmq::sockopt::linger, 200);
    s.set(zmq::sockopt::sndhwm, 0);
    s.set(zmq::sockopt::rcvhwm, 0);
    s.set(zmq::sockopt::heartbeat_ivl, o.heartbeat_interval_ms);
    s.set(zmq::sockopt::heartbeat_timeout, o.heartbeat_timeout_ms);
    s.set(zmq::sockopt::heartbeat_ttl, o.heartbeat_timeout_ms);
    try {
      s.connect(endpoint);
    } catch (const zmq::error_t& e) {
      throw TupleSpaceError("unreachable", "cannot connect to " + endpoint + ": " + e.what());
    }
  }
};

Client::Client(std::string endpoint, ClientOptions options)
    : endpoint_(std::move(endpoint)), options_(options), socket_(std::make_unique<Socket>(endpoint_, options_)) {
  std::uint64_t rid = next_id_++;
  encode_hello(frame_, rid);
  socket_->s.send(zmq::buffer(frame_), zmq::send_flags::none);
  Reply r;
  receive_until(rid, r, options_.connect_timeout.count());
  if (r.request_id != rid)
    throw TupleSpaceError("unreachable", "no tuple-space server answered at " + endpoint_ + " within " +
                                             std::to_string(options_.connect_timeout.count()) + " ms");
  if (r.max_message_bytes > 0) max_message_bytes_ = r.max_message_bytes;
}

namespace {
// Posted outs allowed in flight before out() waits for some acknowledgements,
// so a fast producer cannot queue without bound.
constexpr std::size_t kPostWindow = 1024;
}  // namespace

void Client::send_frame() {
  if (frame_.size() > max_message_bytes_)
    throw TupleSpaceError(std::string(errc::kTooLarge),
                          std::string(errc::kTooLarge) + ": request of " + std::to_string(frame_.size()) +
                              " bytes exceeds the server's limit of " + std::to_string(max_message_bytes_) +
                              " bytes");
  socket_->s.send(zmq::buffer(frame_), zmq::send_flags::none);
}

void Client::throw_deferred() {
  if (!deferred_) return;
  TupleSpaceError e = std::move(*deferred_);
  deferred_.reset();
  throw e;
}

Client::~Client() {
  // Posted outs must be stored before the session ends.
  if (!posted_.empty()) {
    Reply r;
    try {
      receive_until(posted_.back().request_id, r, options_.connect_timeout.count());
    } catch (const std::exception&) {
    }
    if (!posted_.empty())
      std::fprintf(stderr, "piranha: %zu posted request(s) to %s were not acknowledged before close\n",
                   posted_.size(), endpoint_.c_str());
  }
  if (deferred_) std::fprintf(stderr, "piranha: a posted request failed: %s\n", deferred_->what());
  // Best effort: lets the server drop this session at once (inproc
  // connections have no disconnect event; TCP ones get it a little later).
  try {
    encode_bye(frame_, next_id_++);
    socket_->s.send(zmq::buffer(frame_), zmq::send_flags::dontwait);
  } catch (const zmq::error_t&) {
  }
}

// Waits for the reply to `rid`, queueing watch events that arrive meanwhile.
// On timeout leaves out.request_id != rid.
void Client::receive_until(std::uint64_t rid, Reply& out, Millis timeout_ms) {
  Millis deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
  zmq::message_t msg;
  while (true) {
    if (deadline >= 0) {
      Millis left = deadline - now_ms();
      zmq::pollitem_t item{socket_->s.handle(), 0, ZMQ_POLLIN, 0};
      if (left < 0 || zmq::poll(&item, 1, std::chrono::milliseconds(left)) == 0) {
        out.request_id = 0;
        return;
      }
    }
    if (!socket_->s.recv(msg)) continue;
    Reply r = decode_reply(std::string_view(static_cast<const char*>(msg.data()), msg.size()));
    if (r.status == Reply::Status::Event) {
      events_.push_back(WatchEvent{r.number, r.event, std::move(r.space), std::move(r.tuples.at(0))});
      if (rid == 0) {  // next_event() is waiting for exactly this
        out = Reply{};
        out.status = Reply::Status::Event;
        return;
      }
      continue;
    }
    // The answer to a posted request: the server answers them in order.
    if (!posted_.empty() && r.request_id == posted_.front().request_id) {
      Posted p = posted_.front();
      posted_.pop_front();
      if (r.status == Reply::Status::Error) {
        if (p.completion && r.code == errc::kUnknownLease)
          lost_leases_.push_back(p.lease);
        else if (!deferred_)
          deferred_.emplace(r.code, std::string(p.completion ? "complete" : "out") +
                                        " (posted earlier): " + r.code + ": " + r.message);
      }
      if (r.request_id == rid) {
        out = std::move(r);
        return;
      }
      continue;
    }
    // An error with id 0 answers a request the server could not read: ours.
    if (r.request_id == rid || (r.request_id == 0 && r.status == Reply::Status::Error)) {
      r.request_id = rid;
      out = std::move(r);
      return;
    }
    // A stale reply to an abandoned request: ignore it.
  }
}

Reply Client::call(bool takes) {
  throw_deferred();
  // The request id sits in the frame already; read it back from next_id_.
  std::uint64_t rid = next_id_ - 1;
  send_frame();
  Reply r;
  receive_until(rid, r, kForever);
  if (r.status == Reply::Status::Error) throw TupleSpaceError(r.code, r.code + ": " + r.message);
  // A posted out's error that arrived with this reply is thrown now, unless
  // throwing would drop tuples this call took; then the next call throws it.
  if (!takes || r.tuples.empty()) throw_deferred();
  return r;
}

void Client::post(bool completion, LeaseId lease) {
  std::uint64_t rid = next_id_ - 1;  // encoded in frame_ already
  send_frame();
  posted_.push_back(Posted{rid, completion, lease});
  if (posted_.size() > kPostWindow) {
    Reply r;
    receive_until(posted_[kPostWindow / 2].request_id, r, kForever);
  }
}

void Client::out(std::string_view space, const Tuple& t) {
  throw_deferred();
  encode_out(frame_, next_id_++, space, t);
  post(false, 0);
}

void Client::flush() {
  if (!posted_.empty()) {
    Reply r;
    receive_until(posted_.back().request_id, r, kForever);
  }
  throw_deferred();
}

bool Client::complete(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts) {
  encode_complete(frame_, next_id_++, lease, space, ts);
  try {
    call();
    return true;
  } catch (const TupleSpaceError& e) {
    if (e.code() == errc::kUnknownLease) return false;
    throw;
  }
}

void Client::complete_posted(LeaseId lease, std::string_view space, const std::vector<Tuple>& ts) {
  throw_deferred();
  encode_complete(frame_, next_id_++, lease, space, ts);
  post(true, lease);
}

std::vector<LeaseId> Client::take_lost_leases() {
  std::vector<LeaseId> lost;
  lost.swap(lost_leases_);
  return lost;
}

void Client::out_many(std::string_view space, const std::vector<Tuple>& ts) {
  encode_out_many(frame_, next_id_++, space, ts);
  call();
}

std::optional<Leased> Client::in(std::string_view space, const Template& t, Millis timeout, Millis lease) {
  encode_in(frame_, next_id_++, Op::In, space, t, timeout, lease);
  Reply r = call(true);
  if (r.status == Reply::Status::Timeout) return std::nullopt;
  return Leased{std::move(r.tuples.at(0)), r.number};
}

std::optional<Tuple> Client::rd(std::string_view space, const Template& t, Millis timeout) {
  encode_in(frame_, next_id_++, Op::Rd, space, t, timeout, 0);
  Reply r = call();
  if (r.status == Reply::Status::Timeout) return std::nullopt;
  return std::move(r.tuples.at(0));
}

std::vector<Tuple> Client::in_many(std::string_view space, const Template& t, std::size_t max) {
  encode_in_many(frame_, next_id_++, space, t, max);
  return call(true).tuples;
}

std::vector<Leased> Client::in_many_leased(std::string_view space, const Template& t, std::size_t max,
                                           Millis lease) {
  if (lease <= 0)
    throw TupleSpaceError(std::string(errc::kBadRequest),
                          "bad_request: in_many_leased: lease must be > 0 ms");
  encode_in_many(frame_, next_id_++, space, t, max, lease);
  Reply r = call(true);
  if (r.leases.size() != r.tuples.size())
    throw TupleSpaceError("bad_reply", "bad_reply: in_many under a lease answered without lease ids");
  std::vector<Leased> taken;
  taken.reserve(r.tuples.size());
  for (std::size_t i = 0; i < r.tuples.size(); ++i)
    taken.push_back(Leased{std::move(r.tuples[i]), r.leases[i]});
  return taken;
}

std::vector<Tuple> Client::rd_many(std::string_view space, const Template& t, std::size_t max) {
  encode_rd_many(frame_, next_id_++, space, t, max);
  return call().tuples;
}

void Client::ack(LeaseId lease) {
  encode_ack(frame_, next_id_++, lease);
  call();
}

void Client::renew(LeaseId lease, Millis duration) {
  encode_renew(frame_, next_id_++, lease, duration);
  call();
}

WatchId Client::watch(std::string_view space, const Template& t) {
  encode_watch(frame_, next_id_++, space, t);
  return call().number;
}

void Client::unwatch(WatchId id) {
  encode_unwatch(frame_, next_id_++, id);
  call();
}

std::optional<WatchEvent> Client::next_event(Millis timeout) {
  if (events_.empty()) {
    Reply r;
    receive_until(0, r, timeout);
  }
  if (events_.empty()) return std::nullopt;
  WatchEvent e = std::move(events_.front());
  events_.pop_front();
  return e;
}

bool Client::remove(std::string_view space) {
  encode_remove(frame_, next_id_++, space);
  try {
    call();
    return true;
  } catch (const TupleSpaceError& e) {
    if (e.code() == errc::kUnknownSpace) return false;
    throw;
  }
}

std::vector<SpaceStats> Client::stats() {
  encode_stats(frame_, next_id_++, "");
  return call().stats;
}

std::optional<SpaceStats> Client::stats(std::string_view space) {
  encode_stats(frame_, next_id_++, space);
  try {
    auto all = call().stats;
    if (all.empty()) return std::nullopt;
    return all.front();
  } catch (const TupleSpaceError& e) {
    if (e.code() == errc::kUnknownSpace) return std::nullopt;
    throw;
  }
}

std::future<void> Client::eval(std::string space, std::function<Tuple()> fn) {
  return std::async(std::launch::async, [endpoint = endpoint_, options = options_, space = std::move(space),
                                         fn = std::move(fn)] {
    Tuple result = fn();
    Client c(endpoint, options);
    c.out(space, result);
  });
}

}  // namespace piranha::ts
