// One client connection to a server (internal, shared by Client and
// FiberClient): a DEALER with the client's heartbeats, reconnect backoff and
// CURVE keys, and a monitor that reports when the connection drops or the
// server refuses the handshake.
//
// A new Connection is a new session on the server. A dropped one is thrown
// away rather than left to ZeroMQ's own reconnection, so nothing queued on it
// can reach the server later, on a session the client no longer knows.
#pragma once

#include <optional>
#include <string>
#include <zmq.hpp>

#include "piranha/tuplespace/client.h"

namespace piranha::ts::detail {

struct Connection {
  zmq::socket_t dealer;
  zmq::socket_t monitor;  // readable when the monitor has something to report

  // Connects (asynchronously: ZeroMQ retries a refused connect with
  // options.reconnect_backoff, doubling up to reconnect_backoff_max). Throws
  // TupleSpaceError(Code::Unreachable) when the endpoint is malformed.
  Connection(const std::string& endpoint, const ClientOptions& options, int linger_ms);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // True when the connection was closed (by the server, or by heartbeats)
  // since the last call. Never blocks.
  bool dropped();

  // Why the server refused the handshake, once it has ("the server at X
  // refused this client's key ..."); a refused connection also drops. Read
  // by dropped(): call it after dropped() returned true.
  const std::optional<std::string>& refusal() const { return refusal_; }

  // Handshakes that failed on this connection so far (libzmq retries one by
  // itself). A mechanism mismatch races: whichever end notices it first
  // closes, and the other sees only a failed handshake. So a client without
  // keys takes two failed handshakes in a row, on this connection or across
  // its replacements, for a refusal, as `refused_twice()` words it.
  int handshake_failures() const { return handshake_failures_; }
  std::string refused_twice() const;

  // After dropped() returned true: the Code::AuthFailed error to fail with
  // when the server refused this client, adding this connection's failed
  // handshakes to `failed_handshakes` (the count across the connections
  // since a session last opened); nullopt when the drop was no refusal.
  std::optional<TupleSpaceError> refused(int& failed_handshakes) const;

 private:
  std::string endpoint_;
  bool curve_ = false;
  int handshake_failures_ = 0;
  std::optional<std::string> refusal_;
};

}  // namespace piranha::ts::detail
