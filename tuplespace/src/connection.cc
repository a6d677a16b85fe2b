#include "connection.h"

#include <atomic>
#include <chrono>
#include <cstring>

#include "piranha/tuplespace/server.h"

namespace piranha::ts::detail {

Connection::Connection(const std::string& endpoint, const ClientOptions& o, int linger_ms)
    : dealer(default_context(), zmq::socket_type::dealer),
      monitor(default_context(), zmq::socket_type::pair) {
  dealer.set(zmq::sockopt::linger, linger_ms);
  dealer.set(zmq::sockopt::sndhwm, 0);
  dealer.set(zmq::sockopt::rcvhwm, 0);
  dealer.set(zmq::sockopt::heartbeat_ivl, o.heartbeat_interval_ms);
  dealer.set(zmq::sockopt::heartbeat_timeout, o.heartbeat_timeout_ms);
  dealer.set(zmq::sockopt::heartbeat_ttl, o.heartbeat_timeout_ms);
  dealer.set(zmq::sockopt::reconnect_ivl, static_cast<int>(o.reconnect_backoff.count()));
  dealer.set(zmq::sockopt::reconnect_ivl_max, static_cast<int>(o.reconnect_backoff_max.count()));
  // A name never reused in this process, as the server's monitor's.
  static std::atomic<std::uint64_t> next_monitor{0};
  std::string monitor_ep = "inproc://piranha-client-monitor-" + std::to_string(next_monitor++);
  if (zmq_socket_monitor(dealer.handle(), monitor_ep.c_str(), ZMQ_EVENT_DISCONNECTED) != 0)
    throw TupleSpaceError(std::string(errc::kUnreachable), "cannot monitor the connection to " + endpoint);
  monitor.connect(monitor_ep);
  try {
    dealer.connect(endpoint);
  } catch (const zmq::error_t& e) {
    throw TupleSpaceError(std::string(errc::kUnreachable), "cannot connect to " + endpoint + ": " + e.what());
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
    if (event.size() >= 2) std::memcpy(&kind, event.data(), 2);
    if (kind == ZMQ_EVENT_DISCONNECTED) gone = true;
  }
  return gone;
}

Millis steady_now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace piranha::ts::detail
