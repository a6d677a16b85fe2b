#include "piranha/tuplespace/server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <map>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <zmq.hpp>

#include "piranha/base/clock.h"
#include "piranha/tuplespace/curve.h"

namespace piranha::ts {

zmq::context_t& default_context() {
  static zmq::context_t ctx(1);
  return ctx;
}

namespace {

// The current time rounded up to the next whole millisecond. Deadlines start
// from it while advance() is given steady_ms() (rounded down), so a timeout or a
// lease never ends before its full length has passed.
Millis deadline_base_ms() {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch()).count();
  return (us + 999) / 1000;
}

// `before_restart`: the lease was granted by an earlier run of a durable server.
std::string unknown_lease(LeaseId id, bool completes, bool before_restart) {
  return "lease " + std::to_string(id) +
         (before_restart ? " was granted before the server restarted: its tuple is back in its space"
                         : " is not held by this client: never granted to it, already acked, or expired") +
         (completes ? "; nothing was written" : "");
}

// At most this many requests are handled before deadlines and monitor events
// are looked at again, so a flood cannot starve timeouts.
constexpr int kBatch = 256;

// At most this many requests are read from the socket and wait to be
// answered (server.h, "Served first").
constexpr int kReadAhead = 4096;

// A durable server commits in the middle of a turn once this much is
// buffered, so that one log record stays bounded.
constexpr std::size_t kMaxCommitBytes = 64u << 20;

// How often a server whose disk is full tries to write its log again.
constexpr Millis kDiskFullRetryMs = 100;

// How long the routing id of a closed connection is remembered. Requests of
// that connection still queued when its close is read are all read within a
// few turns; this is only an upper bound on the memory kept.
constexpr Millis kClosedMemoryMs = 60'000;

// The same refusal is logged at most this often; a client retrying with a
// bad key would otherwise fill the log.
constexpr Millis kRefusalLogEvery = 10'000;
constexpr std::size_t kRefusalLinesKept = 1024;

constexpr int kHandshakeFailed = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

std::string z85_of(const void* bytes) {
  char text[41];
  zmq_z85_encode(text, static_cast<const std::uint8_t*>(bytes), 32);
  return text;
}

// The 32 bytes of a key in Z85 text; `what` names it in the error.
std::string key_bytes(const std::string& z85, const std::string& what) {
  if (!is_z85_key(z85)) throw std::invalid_argument(what + " is not a CURVE key in Z85 text (40 characters)");
  std::string bytes(32, '\0');
  zmq_z85_decode(reinterpret_cast<std::uint8_t*>(bytes.data()), z85.c_str());
  return bytes;
}

// Every frame of a multipart message.
std::vector<zmq::message_t> recv_all(zmq::socket_t& socket) {
  std::vector<zmq::message_t> parts;
  while (true) {
    zmq::message_t m;
    if (!socket.recv(m, zmq::recv_flags::dontwait)) break;
    bool more = m.more();
    parts.push_back(std::move(m));
    if (!more) break;
  }
  return parts;
}

// ServerOptions::io_threads, checked before a context is made with it.
int io_threads_of(const ServerOptions& o) {
  if (o.io_threads < 1 || o.io_threads > 64)
    throw std::invalid_argument("io_threads must be 1 to 64, not " + std::to_string(o.io_threads));
  return o.io_threads;
}

}  // namespace

struct Server::Impl {
  ServerOptions opt;
  // With CURVE the server has a context of its own: a context has one ZAP
  // endpoint, and this server's handler must be the one it reaches. So has
  // a server with more than one I/O thread (the default context has one).
  std::unique_ptr<zmq::context_t> own_context;
  bool curve = false;  // CURVE: every session authenticated, its identity its key's name
  zmq::context_t& context;
  zmq::socket_t router;
  zmq::socket_t monitor;
  zmq::socket_t zap;                                      // CURVE: the ZAP handler's REP socket
  std::unordered_map<std::string, std::string> admitted;  // CURVE: public key bytes -> name
  std::map<std::string, std::pair<Millis, std::uint64_t>> refusals_logged;  // line -> (when, unlogged since)
  int stop_fd = -1;
  std::vector<std::string> endpoints;
  Store store;
  std::unique_ptr<DurableLog> durable;  // after store: detaches from it first
  LeaseId first_lease = 0;              // of this run, when durable
  ServerCounters counters;

  // A durable server's replies and events wait here for their turn's commit.
  struct Outgoing {
    std::string routing_id, frame;
    // A taken tuple that must go back to `space` if it cannot be delivered.
    bool keep_if_undelivered = false;
    std::string space, tuple;
  };
  std::vector<Outgoing> outbox, sending;

  // Durable, while the disk holding the log is full (DurableLog::commit
  // threw LogFullError; its what() here): the changes made stay buffered in
  // the log and their replies in outbox until a commit succeeds, tried every
  // kDiskFullRetryMs. Meanwhile every request but hello, watch and unwatch
  // is refused with disk_full, changing nothing, so no reply depends on a
  // change that is not written. Empty while the disk has room.
  std::string disk_full;
  Millis disk_full_since = 0;
  // Routing ids with replies held in outbox: a refusal for one of them waits
  // behind them, so that a connection's replies keep the order of its requests.
  std::unordered_set<std::string> held_for;

  struct Session {
    ClientId id;
    int fd;
    std::string identity;       // CURVE: the name its key is admitted under
    bool served_first = false;  // its hello asked it (server.h, "Served first")
  };
  std::unordered_map<std::string, Session> sessions;  // by routing id
  std::unordered_map<ClientId, std::string> routing;  // client id -> routing id
  ClientId next_client = 1;
  // Routing ids of sessions whose connection closed, with when it was seen.
  // ZeroMQ gives every new connection a new routing id, so a request from one
  // of these was queued before the close and its sender has given up on it
  // (a client that lost a frozen server re-issues on a new connection): it is
  // ignored, or it would open a session that no close will ever end, and a
  // tuple it took under a lease would stay held for the whole lease.
  std::unordered_map<std::string, Millis> closed;

  // Requests read and not yet answered, in the order read (server.h, "Served
  // first"), and per routing id how many of them are its and its connection's
  // file descriptor (a close seen while they wait must still be told apart).
  struct Unanswered {
    std::string routing_id;
    int fd;
    std::string identity;
    zmq::message_t body;
  };
  std::deque<Unanswered> unanswered;
  std::unordered_map<std::string, std::pair<std::size_t, int>> unanswered_of;

  std::string reply;
  std::vector<Delivery> deliveries;
  // The router had no request left when last read, and nothing was sent
  // since: its ZMQ_FD signals the next request (see run()).
  bool router_quiet = false;

  explicit Impl(ServerOptions o)
      : opt(std::move(o)),
        own_context(io_threads_of(opt) == 1 && opt.curve_secret_key.empty()
                        ? nullptr
                        : std::make_unique<zmq::context_t>(opt.io_threads)),
        curve(!opt.curve_secret_key.empty()),
        context(own_context ? *own_context : default_context()),
        router(context, zmq::socket_type::router),
        monitor(context, zmq::socket_type::pair) {
    if (curve) admit_curve_clients();
    if (!opt.data_dir.empty()) {
      durable = std::make_unique<DurableLog>(DurableLogOptions{.dir = opt.data_dir,
                                                               .fsync = opt.fsync,
                                                               .salvage = opt.salvage,
                                                               .log = opt.notice ? opt.notice : opt.log},
                                             store);
      first_lease = durable->first_lease();
    }
    stop_fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (stop_fd < 0) throw std::runtime_error("server: eventfd failed");
    router.set(zmq::sockopt::router_mandatory, 1);
    router.set(zmq::sockopt::sndhwm, 0);
    router.set(zmq::sockopt::rcvhwm, 0);
    router.set(zmq::sockopt::linger, 0);
    router.set(zmq::sockopt::heartbeat_ivl, opt.heartbeat_interval_ms);
    router.set(zmq::sockopt::heartbeat_timeout, opt.heartbeat_timeout_ms);
    router.set(zmq::sockopt::heartbeat_ttl, opt.heartbeat_timeout_ms);
    // The kernel's keepalive finds a peer whose host vanished without a
    // close, at no cost to this process, for clients that send no heartbeat
    // TTL and servers started with heartbeats off.
    router.set(zmq::sockopt::tcp_keepalive, 1);
    router.set(zmq::sockopt::tcp_keepalive_idle, 30);
    router.set(zmq::sockopt::tcp_keepalive_intvl, 5);
    router.set(zmq::sockopt::tcp_keepalive_cnt, 3);
    // A hard wall well above the reply-with-error limit: frames beyond it make
    // ZeroMQ drop the connection instead of buffering them.
    router.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(opt.max_message_bytes) * 4 + 4096);
    // A name never reused in this process: a monitor endpoint is unbound
    // asynchronously, so a later server at the same address could collide.
    static std::atomic<std::uint64_t> next_monitor{0};
    std::string monitor_ep = "inproc://piranha-ts-monitor-" + std::to_string(next_monitor++);
    if (zmq_socket_monitor(router.handle(), monitor_ep.c_str(), ZMQ_EVENT_DISCONNECTED | kHandshakeFailed) !=
        0)
      throw std::runtime_error("server: cannot monitor the router socket");
    monitor.connect(monitor_ep);
    for (const auto& ep : opt.bind) {
      if (own_context && ep.rfind("inproc://", 0) == 0) {
        ::close(stop_fd);
        throw std::runtime_error("cannot bind " + ep + ": a server with " +
                                 (curve ? "CURVE keys" : "more than one I/O thread") +
                                 " has no inproc:// endpoints");
      }
      try {
        router.bind(ep);
      } catch (const zmq::error_t& e) {
        ::close(stop_fd);
        throw std::runtime_error("cannot bind " + ep + ": " + e.what());
      }
      endpoints.push_back(router.get(zmq::sockopt::last_endpoint));
    }
  }

  ~Impl() {
    zmq_socket_monitor(router.handle(), nullptr, 0);
    if (stop_fd >= 0) ::close(stop_fd);
  }

  // CURVE: the ZAP handler's socket first, so that no handshake happens
  // without it; then the router's keys.
  void admit_curve_clients() {
    if (!curve_available())
      throw std::runtime_error("this libzmq was built without CURVE; no --key is possible");
    for (const auto& c : opt.clients) {
      if (c.name.empty()) throw std::invalid_argument("an admitted client has an empty name");
      std::string bytes = key_bytes(c.public_key, "the key of client \"" + c.name + "\"");
      for (const auto& [k, name] : admitted)
        if (name == c.name) throw std::invalid_argument("two admitted clients are named \"" + c.name + "\"");
      if (!admitted.emplace(bytes, c.name).second)
        throw std::invalid_argument("clients \"" + admitted[bytes] + "\" and \"" + c.name +
                                    "\" have the same key");
    }
    key_bytes(opt.curve_secret_key, "the server's secret key");
    zap = zmq::socket_t(context, zmq::socket_type::rep);
    zap.set(zmq::sockopt::linger, 0);
    zap.bind("inproc://zeromq.zap.01");
    router.set(zmq::sockopt::curve_server, 1);
    router.set(zmq::sockopt::curve_secretkey, opt.curve_secret_key);
    router.set(zmq::sockopt::zap_domain, std::string("piranha"));
  }

  void log(const std::string& line) {
    if (opt.log) opt.log(line);
  }

  // A refusal at the handshake: counted, and logged unless the same line
  // was logged within kRefusalLogEvery.
  void log_refusal(const std::string& line) {
    ++counters.handshakes_refused;
    Millis now = steady_ms();
    // Many different keys or addresses: forget the old lines rather than grow.
    if (refusals_logged.size() >= kRefusalLinesKept) refusals_logged.clear();
    auto [it, fresh] = refusals_logged.try_emplace(line, now, 0);
    if (!fresh && now - it->second.first < kRefusalLogEvery) {
      ++it->second.second;
      return;
    }
    std::uint64_t more = fresh ? 0 : it->second.second;
    it->second = {now, 0};
    auto& out = opt.notice ? opt.notice : opt.log;
    if (out)
      out(line + (more ? " (and " + std::to_string(more) + " more like it since it was last logged)" : ""));
  }

  // One ZAP request (RFC 27): admits a CURVE client whose key is listed,
  // under its name, and refuses any other.
  void answer_zap() {
    std::vector<zmq::message_t> req = recv_all(zap);
    if (req.size() < 6) return;  // not a ZAP request; REP needs no answer to a malformed envelope
    std::string address = req[3].to_string(), mechanism = req[5].to_string();
    std::string user, status = "400", text = "refused";
    if (mechanism == "CURVE" && req.size() >= 7 && req[6].size() == 32) {
      auto it = admitted.find(req[6].to_string());
      std::optional<std::string> other;
      if (it == admitted.end() && opt.access) other = opt.access->admit(z85_of(req[6].data()), store);
      if (it != admitted.end() || other) {
        user = other ? *other : it->second;
        status = "200";
        text = "OK";
      } else {
        text = "key not listed";
        log_refusal("refused a client at " + address + ": its key " + z85_of(req[6].data()) +
                    " is not listed in the auth file");
      }
    } else {
      log_refusal("refused a client at " + address + ": mechanism " + mechanism +
                  " (only CURVE is admitted)");
    }
    zap.send(zmq::str_buffer("1.0"), zmq::send_flags::sndmore);
    zap.send(req[1], zmq::send_flags::sndmore);
    zap.send(zmq::buffer(status), zmq::send_flags::sndmore);
    zap.send(zmq::buffer(text), zmq::send_flags::sndmore);
    zap.send(zmq::buffer(user), zmq::send_flags::sndmore);
    zap.send(zmq::str_buffer(""), zmq::send_flags::none);
  }

  // Sends one frame to a peer, or (durable) queues it until the turn's
  // changes are committed. False when the peer is gone (EHOSTUNREACH) or
  // cannot take it now; a gone peer's session is dropped on disconnect.
  bool send(const std::string& routing_id, const std::string& frame) {
    // A full disk's refusals, hellos and watches depend on no change.
    if (!disk_full.empty() && !held_for.contains(routing_id)) return transmit(routing_id, frame);
    if (durable) {
      outbox.push_back(Outgoing{routing_id, frame, false, {}, {}});
      return true;
    }
    return transmit(routing_id, frame);
  }

  bool transmit(const std::string& routing_id, const std::string& frame) {
    router_quiet = false;
    zmq::message_t id(routing_id.data(), routing_id.size());
    zmq::message_t body(frame.data(), frame.size());
    try {
      if (!router.send(id, zmq::send_flags::sndmore | zmq::send_flags::dontwait)) return false;
      return router.send(body, zmq::send_flags::dontwait).has_value();
    } catch (const zmq::error_t&) {
      return false;
    }
  }

  // Sends to a client by id. False when the client is no longer routable.
  // A taken tuple in `keep` goes back to its space if it cannot be delivered.
  bool send_to(ClientId client, const std::string& frame, const Delivery* keep = nullptr) {
    auto it = routing.find(client);
    if (it == routing.end()) return false;
    if (!durable) return transmit(it->second, frame);
    outbox.push_back(Outgoing{it->second, frame, keep != nullptr, keep ? keep->space : std::string(),
                              keep ? keep->tuple : std::string()});
    if (!disk_full.empty()) held_for.insert(it->second);
    return true;
  }

  // A taken tuple whose taker vanished before it could be answered.
  void keep_tuple(std::string_view space, std::string_view tuple) {
    store.out(space, describe_tuple(tuple), deadline_base_ms());
  }

  // Durable: commits the turn's changes, then sends what waited for them.
  // Undeliverable taken tuples go back to their spaces, which may serve
  // other waiters: repeat until nothing is left.
  void publish() {
    if (!durable) return;
    while (durable->pending() || !outbox.empty()) {
      if (!commit_or_hold()) return;
      sending.clear();
      sending.swap(outbox);
      for (const Outgoing& o : sending)
        if (!transmit(o.routing_id, o.frame) && o.keep_if_undelivered) keep_tuple(o.space, o.tuple);
      flush_deliveries();
    }
  }

  // Durable: commits what is buffered. False when the disk is full: the
  // changes and their replies are then held (see disk_full) for a later try.
  bool commit_or_hold() {
    try {
      durable->commit();
    } catch (const LogFullError& e) {
      if (disk_full.empty()) {
        disk_full_since = steady_ms();
        for (const Outgoing& o : outbox) held_for.insert(o.routing_id);
        auto& out = opt.notice ? opt.notice : opt.log;
        if (out)
          out(std::string(e.what()) + ": the disk is full; holding " + std::to_string(outbox.size()) +
              " replies and refusing requests with disk_full until a write succeeds (tried every " +
              std::to_string(kDiskFullRetryMs) + " ms)");
      }
      disk_full = e.what();
      return false;
    }
    if (!disk_full.empty()) {
      auto& out = opt.notice ? opt.notice : opt.log;
      if (out)
        out(durable->path() + ": written again after " + std::to_string(steady_ms() - disk_full_since) +
            " ms of a full disk (" + std::to_string(counters.refused_disk_full) +
            " requests refused so far); answering again");
      disk_full.clear();
      held_for.clear();
    }
    return true;
  }

  bool lease_before_restart(LeaseId id) const { return durable && id < first_lease; }

  Session& session_for(const std::string& routing_id, int fd, std::string_view identity) {
    auto it = sessions.find(routing_id);
    if (it != sessions.end()) return it->second;
    // A new connection may have been given the file descriptor of one that
    // just closed. ZeroMQ reports that close before this connection's first
    // message, but the loop may not have read the report yet: read it now, so
    // that it cannot later be taken for this session's disconnect.
    drain_monitor();
    ClientId id = next_client++;
    ++counters.sessions_opened;
    routing.emplace(id, routing_id);
    return sessions.emplace(routing_id, Session{id, fd, std::string(identity)}).first->second;
  }

  // Forgets a session: its leased tuples return, its waiters and watches go.
  void drop_session(const std::string& routing_id, std::string_view why) {
    auto it = sessions.find(routing_id);
    if (it == sessions.end()) return;
    ClientId id = it->second.id;
    sessions.erase(it);
    routing.erase(id);
    std::size_t returned = store.drop_client(id, deadline_base_ms());
    ++counters.sessions_dropped;
    log("client " + std::to_string(id) + " " + std::string(why) +
        (returned ? "; " + std::to_string(returned) + " leased tuples returned to their spaces" : ""));
  }

  void drop_fd(int fd) {
    if (fd < 0) return;
    std::vector<std::string> gone;
    for (auto& [rid, s] : sessions)
      if (s.fd == fd) gone.push_back(rid);
    Millis now = steady_ms();
    for (const auto& rid : gone) {
      drop_session(rid, "disconnected");
      closed[rid] = now;
    }
    // A connection whose first requests are still unanswered has no session
    // yet: its close must not be missed (they would open one no close ends).
    for (const auto& [rid, n] : unanswered_of)
      if (n.second == fd) closed[rid] = now;
    std::erase_if(closed, [&](const auto& c) { return now - c.second > kClosedMemoryMs; });
  }

  void drain_monitor() {
    while (true) {
      zmq::message_t event, address;
      if (!monitor.recv(event, zmq::recv_flags::dontwait)) return;
      if (event.more()) (void)monitor.recv(address, zmq::recv_flags::dontwait);
      if (event.size() < 6) continue;
      std::uint16_t kind;
      std::uint32_t value;
      std::memcpy(&kind, event.data(), 2);
      std::memcpy(&value, static_cast<const char*>(event.data()) + 2, 4);
      if (kind == ZMQ_EVENT_DISCONNECTED) drop_fd(static_cast<int>(value));
      // A refused key is logged by the ZAP handler; these never reach it.
      if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
        log_refusal(curve ? "refused a client without a CURVE key (this server admits only listed keys)"
                          : "refused a client with a CURVE key (this server has none: start it with --key)");
      else if (curve &&
               (kind == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL))
        log_refusal(
            "a client's handshake failed (a client without a CURVE key, or without this server's public "
            "key?)");
    }
  }

  void reject(const std::string& routing_id, std::uint64_t rid, Code code, const std::string& message) {
    ++counters.rejected;
    reply.clear();
    encode_error(reply, rid, code, message);
    send(routing_id, reply);
    log("rejected request " + std::to_string(rid) + ": " + std::string(code_to_wire(code)) + ": " + message);
  }

  // What the access policy says of a request of `session`; allowed when the
  // server has none.
  AccessVerdict verdict_on(const Session& session, const Request& r) {
    if (r.op == Op::Hello) {
      if (!curve || !r.served_first || !opt.access || opt.access->served_first(session.identity))
        return AccessVerdict::allow();
      return AccessVerdict::refuse("key \"" + session.identity +
                                   "\" may not ask to be served first (a hello's served_first): that needs "
                                   "a role the server's policy grants it to (docs/security.md)");
    }
    if (!curve) return AccessVerdict::allow();
    if (session.identity.empty()) return AccessVerdict::refuse("this session has no identity");
    if (!opt.access) return AccessVerdict::allow();
    AccessQuery q{session.identity, r, {}};
    if (r.op == Op::Ack) {
      std::vector<LeaseId> one{r.handle};
      for (LeaseId id : r.leases.empty() ? one : r.leases) {
        auto held = store.held(id, session.id);
        // Not held: the store refuses the ack with unknown_lease, changing nothing.
        if (!held) return AccessVerdict::allow();
        q.ended.push_back(*held);
      }
    }
    return opt.access->decide(q, store);
  }

  void handle(const std::string& routing_id, int fd, std::string_view identity, std::string_view frame) {
    ++counters.requests;
    if (frame.size() > opt.max_message_bytes) {
      reject(routing_id, 0, Code::TooLarge,
             "request of " + std::to_string(frame.size()) + " bytes exceeds the limit of " +
                 std::to_string(opt.max_message_bytes) + " bytes");
      return;
    }
    auto decoded = decode_request(frame);
    if (auto* f = std::get_if<DecodeFailure>(&decoded)) {
      reject(routing_id, f->request_id, f->code, f->message);
      return;
    }
    Request& r = std::get<Request>(decoded);
    if (closed.contains(routing_id)) {
      ++counters.from_closed;
      log("ignored request " + std::to_string(r.id) + " of a connection that has closed");
      return;
    }
    if (r.op == Op::Bye) {
      drop_session(routing_id, "said goodbye");
      return;
    }
    Session& session = session_for(routing_id, fd, identity);
    AccessVerdict verdict = verdict_on(session, r);
    if (!verdict.allowed) return reject(routing_id, r.id, Code::NotPermitted, verdict.reason);
    // Hello, watch and unwatch change nothing the log holds.
    if (!disk_full.empty() && r.op != Op::Hello && r.op != Op::Watch && r.op != Op::Unwatch) {
      ++counters.refused_disk_full;
      reply.clear();
      encode_error(reply, r.id, Code::DiskFull,
                   disk_full +
                       ": the server's disk is full; nothing was done (free space on it: the server "
                       "goes on by itself)");
      send(routing_id, reply);
      return;
    }
    Millis now = deadline_base_ms();
    reply.clear();
    bool parked = false;
    switch (r.op) {
      case Op::Bye: return;  // handled above
      case Op::Hello:
        session.served_first = r.served_first;
        encode_ok_hello(reply, r.id, opt.max_message_bytes, opt.pool_name, opt.pool_id);
        break;
      case Op::Out:
        store.out(r.space, std::move(r.tuples[0]), now);
        encode_ok(reply, r.id);
        break;
      case Op::OutMany:
        for (auto& t : r.tuples) store.out(r.space, std::move(t), now);
        encode_ok_count(reply, r.id, r.tuples.size());
        break;
      case Op::In:
      case Op::Rd: {
        WaitSpec spec{session.id, r.id, r.op == Op::In, r.timeout, r.lease};
        if (auto t = store.in(r.space, r.tmpl, spec, now))
          encode_ok_tuple(reply, r.id, t->tuple, t->lease);
        else if (r.timeout == 0)
          encode_timeout(reply, r.id);
        else
          parked = true;  // answered by a delivery
        break;
      }
      case Op::InMany: {
        WaitSpec spec{session.id, r.id, true, r.timeout, r.lease};
        auto taken = store.take_many(r.space, r.tmpl, r.max, spec, now);
        if (taken.empty() && r.timeout != 0) {
          parked = true;  // answered by a delivery
          break;
        }
        if (r.lease > 0) {
          encode_ok_leased_tuples(reply, r.id, taken);
        } else {
          std::vector<std::string> tuples;
          tuples.reserve(taken.size());
          for (auto& t : taken) tuples.push_back(std::move(t.tuple));
          encode_ok_tuples(reply, r.id, tuples);
        }
        break;
      }
      case Op::RdMany: encode_ok_tuples(reply, r.id, store.rd_many(r.space, r.tmpl, r.max)); break;
      case Op::Ack: {
        if (!r.leases.empty()) {
          auto missing = store.complete_all(r.leases, session.id, r.completes ? r.space : std::string_view(),
                                            std::move(r.tuples), now);
          if (missing)
            return reject(routing_id, r.id, Code::UnknownLease,
                          unknown_lease(*missing, true, lease_before_restart(*missing)) +
                              " (no lease of the " + std::to_string(r.leases.size()) + " was ended)");
          encode_ok(reply, r.id);
          break;
        }
        bool held = r.completes ? store.complete(r.handle, session.id, r.space, std::move(r.tuples), now)
                                : store.ack(r.handle, session.id);
        if (!held)
          return reject(routing_id, r.id, Code::UnknownLease,
                        unknown_lease(r.handle, r.completes, lease_before_restart(r.handle)));
        encode_ok(reply, r.id);
        break;
      }
      case Op::Renew:
        if (!store.renew(r.handle, r.lease, session.id, now))
          return reject(routing_id, r.id, Code::UnknownLease,
                        unknown_lease(r.handle, false, lease_before_restart(r.handle)));
        encode_ok(reply, r.id);
        break;
      case Op::Watch: encode_ok_count(reply, r.id, store.watch(r.space, r.tmpl, session.id)); break;
      case Op::Unwatch:
        if (!store.unwatch(r.handle, session.id))
          return reject(routing_id, r.id, Code::UnknownWatch,
                        "watch " + std::to_string(r.handle) + " is not one of this client's watches");
        encode_ok(reply, r.id);
        break;
      case Op::Remove:
        if (!store.remove(r.space))
          return reject(routing_id, r.id, Code::UnknownSpace, "no space named \"" + r.space + "\"");
        encode_ok(reply, r.id);
        break;
      case Op::Stats:
        if (r.all_spaces) {
          encode_ok_stats(reply, r.id, store.stats());
        } else if (auto s = store.stats(r.space)) {
          encode_ok_stats(reply, r.id, {*s});
        } else {
          return reject(routing_id, r.id, Code::UnknownSpace, "no space named \"" + r.space + "\"");
        }
        break;
    }
    for (auto& [space, t] : verdict.also_write) store.out(space, std::move(t), now);
    if (!parked) send(routing_id, reply);
  }

  void flush_deliveries() {
    while (store.has_deliveries()) {
      store.take_deliveries(deliveries);
      for (Delivery& d : deliveries) {
        reply.clear();
        switch (d.kind) {
          case Delivery::Kind::Tuple:
            if (d.form == Delivery::Form::One)
              encode_ok_tuple(reply, d.request_id, d.tuple, d.lease);
            else
              encode_ok_one_of_many(reply, d.request_id, d.tuple, d.lease);
            // A taker that vanished before we could answer must not take the tuple with it.
            if (!send_to(d.client, reply, d.taken && d.lease == 0 ? &d : nullptr) && d.taken && d.lease == 0)
              keep_tuple(d.space, d.tuple);
            continue;
          case Delivery::Kind::Timeout:
            // An in_many's nothing is an empty list.
            if (d.form == Delivery::Form::One)
              encode_timeout(reply, d.request_id);
            else if (d.form == Delivery::Form::List)
              encode_ok_tuples(reply, d.request_id, {});
            else
              encode_ok_leased_tuples(reply, d.request_id, {});
            break;
          case Delivery::Kind::SpaceRemoved:
            encode_error(reply, d.request_id, Code::SpaceRemoved, "the space was removed while waiting");
            break;
          case Delivery::Kind::Event: encode_event(reply, d.watch, d.event, d.space, d.tuple); break;
        }
        send_to(d.client, reply);
      }
    }
  }

  // Answers one request read from the router, and what it delivered.
  void serve(const std::string& routing_id, int fd, std::string_view identity, const zmq::message_t& body) {
    handle(routing_id, fd, identity, std::string_view(static_cast<const char*>(body.data()), body.size()));
    flush_deliveries();
    if (durable && disk_full.empty() && durable->pending_bytes() > kMaxCommitBytes) commit_or_hold();
  }

  // Whether a request of `routing_id` read now is answered at once: its
  // session asked to be served first and none of its requests wait.
  bool served_at_once(const std::string& routing_id) const {
    auto it = sessions.find(routing_id);
    return it != sessions.end() && it->second.served_first && !unanswered_of.contains(routing_id);
  }

  // Reads what waits on the router (at most kReadAhead), answering a
  // served-first session's requests as they come and keeping the others in
  // `unanswered`; then answers at most kBatch of those, oldest first.
  void drain_router() {
    bool ran_out = true;
    // Read while fewer than kReadAhead wait: a connection that pipelines
    // without end (Flood in session_test) must not grow the backlog ahead of
    // everyone else's turn; ZeroMQ's fair queue orders what is read.
    for (int i = 0; i < kReadAhead && unanswered.size() < static_cast<std::size_t>(kReadAhead); ++i) {
      zmq::message_t id;
      if (!router.recv(id, zmq::recv_flags::dontwait)) {
        router_quiet = true;
        ran_out = false;
        break;
      }
      std::string routing_id(static_cast<const char*>(id.data()), id.size());
      zmq::message_t body;
      if (!id.more() || !router.recv(body, zmq::recv_flags::dontwait)) continue;
      // The connection's file descriptor ties the session to disconnect events;
      // inproc peers have none (-1).
      int fd = zmq_msg_get(body.handle(), ZMQ_SRCFD);
      // CURVE: the name the ZAP handler admitted the connection under.
      const char* user = curve ? zmq_msg_gets(body.handle(), "User-Id") : nullptr;
      if (body.more()) {
        zmq::message_t extra;
        while (body.more() && router.recv(extra, zmq::recv_flags::dontwait)) body.swap(extra);
        reject(routing_id, 0, Code::BadRequest, "a request is exactly one frame");
        continue;
      }
      std::string_view identity = user ? std::string_view(user) : std::string_view();
      if (served_at_once(routing_id)) {
        serve(routing_id, fd, identity, body);
        continue;
      }
      // A new connection may have been given the file descriptor of one that
      // just closed, whose close ZeroMQ reported before this first request:
      // read the report before this connection's fd is kept, or that close
      // would be taken for this one's (as session_for() does).
      if (!sessions.contains(routing_id) && !unanswered_of.contains(routing_id)) drain_monitor();
      auto& n = unanswered_of[routing_id];
      ++n.first;
      n.second = fd;
      unanswered.push_back({std::move(routing_id), fd, std::string(identity), std::move(body)});
    }
    for (int i = 0; i < kBatch && !unanswered.empty(); ++i) {
      Unanswered u = std::move(unanswered.front());
      unanswered.pop_front();
      auto it = unanswered_of.find(u.routing_id);
      if (--it->second.first == 0) unanswered_of.erase(it);
      serve(u.routing_id, u.fd, u.identity, u.body);
    }
    // The read ran out with requests perhaps still queued, whose signal
    // libzmq may already have consumed (it processes its commands every so
    // many reads): the next turn must ask ZMQ_EVENTS, not sleep on the fd,
    // even if nothing of this turn was answered (parked requests send
    // nothing).
    if (ran_out) router_quiet = false;
  }

  // One turn waits with ::poll on the sockets' ZMQ_FDs and the stop eventfd,
  // not zmq_poll: zmq_poll asks every socket for its ZMQ_EVENTS before and
  // after sleeping, each a poll(2) and a getpid(2) inside libzmq, and the
  // monitor rarely has anything. A ZMQ_FD only signals a change, so the
  // router's ZMQ_EVENTS is asked before sleeping unless its last read found
  // nothing and nothing was sent since (a send may consume the signal of a
  // request that arrived meanwhile), and the monitor is drained whenever
  // its ZMQ_FD is readable, before any request of the turn is read (a
  // stopped server reads a closed connection's requests and its close at
  // once: see `closed`).
  void run() {
    const int router_fd = router.get(zmq::sockopt::fd);
    const int monitor_fd = monitor.get(zmq::sockopt::fd);
    // The ZAP handler's socket exists only on an authenticating (CURVE)
    // server; its ZMQ_FD, too, signals only a change.
    const bool authenticating = curve;
    const int zap_fd = authenticating ? zap.get(zmq::sockopt::fd) : -1;
    // A ZMQ_FD signals a message only once its socket has been read to the
    // end (libzmq's reader then waits for a signal).
    drain_monitor();
    while (true) {
      long timeout = disk_full.empty() ? 1000 : kDiskFullRetryMs;
      if (auto next = store.next_deadline())
        timeout = std::max<long>(0, std::min<long>(timeout, *next - steady_ms()));
      bool waiting = !router_quiet && (router.get(zmq::sockopt::events) & ZMQ_POLLIN) != 0;
      // Handshakes wait on the ZAP handler; asked every turn (a getsockopt),
      // since answering at most kBatch may leave requests its fd will not
      // signal again.
      bool zap_waiting = authenticating && (zap.get(zmq::sockopt::events) & ZMQ_POLLIN) != 0;
      if (waiting || zap_waiting || !unanswered.empty()) timeout = 0;
      pollfd fds[] = {
          {router_fd, POLLIN, 0}, {monitor_fd, POLLIN, 0}, {stop_fd, POLLIN, 0}, {zap_fd, POLLIN, 0}};
      if (::poll(fds, authenticating ? 4 : 3, static_cast<int>(timeout)) < 0) {
        if (errno != EINTR) throw std::runtime_error(std::string("server: poll: ") + std::strerror(errno));
        continue;  // a signal; stop() has written stop_fd if it was ours
      }
      if (fds[2].revents & POLLIN) {
        std::uint64_t v;
        [[maybe_unused]] auto n = ::read(stop_fd, &v, sizeof v);
        return;
      }
      // Handshakes wait on the ZAP handler: answer before serving requests.
      if (authenticating && (zap_waiting || (fds[3].revents & POLLIN)))
        for (int i = 0; i < kBatch && (zap.get(zmq::sockopt::events) & ZMQ_POLLIN); ++i) answer_zap();
      if (fds[1].revents & POLLIN) drain_monitor();
      // Leases past their deadline end before any request handled now, even
      // requests sent in time that waited (a stopped server): a lease's
      // holder may count on it being over once its deadline has passed.
      store.advance(steady_ms());
      if (waiting || (fds[0].revents & POLLIN) || !unanswered.empty()) drain_router();
      store.advance(steady_ms());
      flush_deliveries();
      publish();
      if (durable) durable->sync_if_due(steady_ms());
    }
  }
};

Server::Server(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Server::~Server() = default;
void Server::run() {
  impl_->run();
}
void Server::stop() {
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(impl_->stop_fd, &one, sizeof one);
}
const std::vector<std::string>& Server::endpoints() const {
  return impl_->endpoints;
}
ServerCounters Server::counters() const {
  return impl_->counters;
}

}  // namespace piranha::ts
