#include "connection.h"

#include <atomic>
#include <chrono>
#include <cstring>

#include "piranha/tuplespace/server.h"

namespace piranha::ts::detail {

namespace {

constexpr int kHandshakeFailed = ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

}  // namespace

Connection::Connection(const std::string& endpoint, const ClientOptions& o, int linger_ms)
    : dealer(default_context(), zmq::socket_type::dealer),
      monitor(default_context(), zmq::socket_type::pair),
      endpoint_(endpoint),
      curve_(!o.curve.empty()) {
  dealer.set(zmq::sockopt::linger, linger_ms);
  dealer.set(zmq::sockopt::sndhwm, 0);
  dealer.set(zmq::sockopt::rcvhwm, 0);
  dealer.set(zmq::sockopt::heartbeat_ivl, o.heartbeat_interval_ms);
  dealer.set(zmq::sockopt::heartbeat_timeout, o.heartbeat_timeout_ms);
  dealer.set(zmq::sockopt::heartbeat_ttl, o.heartbeat_ttl ? o.heartbeat_timeout_ms : 0);
  dealer.set(zmq::sockopt::reconnect_ivl, static_cast<int>(o.reconnect_backoff.count()));
  dealer.set(zmq::sockopt::reconnect_ivl_max, static_cast<int>(o.reconnect_backoff_max.count()));
  if (curve_) {
    dealer.set(zmq::sockopt::curve_publickey, o.curve.public_key);
    dealer.set(zmq::sockopt::curve_secretkey, o.curve.secret_key);
    dealer.set(zmq::sockopt::curve_serverkey, o.curve.server_key);
  }
  // A name never reused in this process, as the server's monitor's.
  static std::atomic<std::uint64_t> next_monitor{0};
  std::string monitor_ep = "inproc://piranha-client-monitor-" + std::to_string(next_monitor++);
  if (zmq_socket_monitor(dealer.handle(), monitor_ep.c_str(), ZMQ_EVENT_DISCONNECTED | kHandshakeFailed) != 0)
    throw TupleSpaceError(Code::Unreachable, "cannot monitor the connection to " + endpoint);
  monitor.connect(monitor_ep);
  try {
    dealer.connect(endpoint);
  } catch (const zmq::error_t& e) {
    throw TupleSpaceError(Code::Unreachable, "cannot connect to " + endpoint + ": " + e.what());
  }
}

Connection::~Connection() {
  zmq_socket_monitor(dealer.handle(), nullptr, 0);
}

bool Connection::dropped() {
  zmq::message_t event, address;
  bool gone = false;
  while (monitor.recv(event, zmq::recv_flags::dontwait)) {
    if (event.more()) (void)monitor.recv(address, zmq::recv_flags::dontwait);
    std::uint16_t kind = 0;
    std::uint32_t value = 0;
    if (event.size() >= 6) {
      std::memcpy(&kind, event.data(), 2);
      std::memcpy(&value, static_cast<const char*>(event.data()) + 2, 4);
    }
    if (kind == ZMQ_EVENT_DISCONNECTED) gone = true;
    if (kind & kHandshakeFailed) ++handshake_failures_;
    // Without CURVE a mismatch is a refusal, and so are two failed
    // handshakes (see handshake_failures()): one alone may be a server
    // going away.
    bool mismatch =
        kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL && value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH;
    if (!curve_ && !mismatch && handshake_failures_ >= 2 && !refusal_) refusal_ = refused_twice();
    if ((kind & kHandshakeFailed) && (curve_ || mismatch) && !refusal_) {
      const std::string server = "the server at " + endpoint_;
      if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
        refusal_ = server + " refused this client's key (not listed in its auth file?)";
      else if (mismatch)
        refusal_ = curve_
                       ? server + " does not use CURVE, but this client has a key (--key or PIRANHA_KEY): " +
                             "was the server started without --key and --auth?"
                       : server + " requires CURVE authentication: give this client its key with --key " +
                             "and --server-key, or PIRANHA_KEY and PIRANHA_SERVER_KEY (docs/security.md)";
      else if (kind == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL)
        refusal_ = "the CURVE handshake with " + server + " failed (ZMTP protocol error " +
                   std::to_string(value) + ")";
      else
        refusal_ =
            "the CURVE handshake with " + server +
            " failed: is the server's public key (--server-key or PIRANHA_SERVER_KEY) the right one, and "
            "was the server started with --key?";
    }
  }
  return gone;
}

std::optional<TupleSpaceError> Connection::refused(int& failed_handshakes) const {
  failed_handshakes += handshake_failures_;
  if (refusal_) return TupleSpaceError::of(Code::AuthFailed, *refusal_);
  if (failed_handshakes >= 2) return TupleSpaceError::of(Code::AuthFailed, refused_twice());
  return std::nullopt;
}

std::string Connection::refused_twice() const {
  return "the server at " + endpoint_ +
         " closed the connection during the handshake twice, so it requires CURVE authentication, probably: "
         "give "
         "this client its key with --key and --server-key, or PIRANHA_KEY and PIRANHA_SERVER_KEY "
         "(docs/security.md)";
}

}  // namespace piranha::ts::detail
