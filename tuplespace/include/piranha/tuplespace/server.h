// Server: the tuple-space server's event loop.
//
// One thread owns the Store (no locks on the hot path). Clients talk to a
// ZeroMQ ROUTER socket; each connection is one client session. A session whose
// connection closes, or stops answering ZeroMQ heartbeats, is dropped: its
// leased tuples return to their spaces and its parked requests are forgotten.
//
// With a data directory (ServerOptions::data_dir) the server is durable: it
// recovers its tuples from DIR at start (see durable_log.h) and logs every
// change. Replies and events of one event-loop turn are held until that
// turn's changes are committed (group commit), so nothing is acknowledged
// before it is in the log. Leases, parked requests and watches are session
// state and do not survive a restart: leased tuples are back in their spaces,
// and an ack, renew or completion of a lease granted before the restart gets
// "unknown_lease" (nothing written), so results stay exactly once. Without a
// data directory nothing is written and replies go out at once.
//
// A full disk (the log's write fails with ENOSPC or EDQUOT) does not stop a
// durable server: the turn's changes stay buffered and their replies held,
// the write is tried again every 100 ms, and meanwhile every request but
// hello, watch and unwatch is answered at once with disk_full (naming the
// file and the system's reason) and changes nothing. Once a write succeeds the held
// replies go out and requests are served again. Any other failure of the
// log stops the server (run() throws).
//
// Served first: the server reads the requests waiting on its socket (until
// 4,096 wait to be answered) before answering the ones it read, ZeroMQ's fair queue
// among connections. A session whose hello asked for it (served_first,
// protocol.h) has its requests answered as soon as they are read, ahead of
// those read before them; the others are answered in the order they were
// read, at most 256 a turn. Each connection's own requests keep their order:
// a session's request waits behind its own earlier ones wherever they are.
// It is for the few connections a whole pool waits on (the NPS's, whose
// reading would otherwise queue behind one request of every agent). An
// authenticating server grants it only to keys its AccessPolicy lets
// (served_first(); the pool's: admin, scheduler and campus), refusing the
// hello of any other with not_permitted.
//
// With a CURVE secret key (ServerOptions::curve_secret_key) every connection
// is encrypted and only the clients whose public keys are listed in
// ServerOptions::clients are admitted (and those its AccessPolicy admits:
// access.h): a ZAP handler in the server's own event loop checks each
// handshake, and logs each refusal. Each session then
// has an identity, the name its key is listed under, and an AccessPolicy
// (access.h) decides each of its requests (docs/security.md). Such a server
// has a ZeroMQ context of its own (one context has one ZAP handler), so it
// cannot bind inproc:// endpoints; so has a server with more than one I/O
// thread (ServerOptions::io_threads).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/tuplespace/access.h"
#include "piranha/tuplespace/durable_log.h"
#include "piranha/tuplespace/protocol.h"

namespace zmq {
class context_t;
}

namespace piranha::ts {

struct ServerOptions {
  // Endpoints to bind: tcp://host:port (port * picks a free one), ipc://path,
  // inproc://name (reachable only from this process).
  std::vector<std::string> bind = {"tcp://127.0.0.1:7070"};
  // Requests above this size get error "too_large" and are not processed.
  std::size_t max_message_bytes = kDefaultMaxMessageBytes;
  // ZeroMQ heartbeats: a peer silent for heartbeat_timeout_ms is disconnected.
  // 0: the server sends none of its own; a client is then dropped after the
  // TTL its own heartbeats ask for (ClientOptions::heartbeat_ttl), or when
  // its TCP connection closes or TCP keepalive (30 s idle, then 3 probes 5 s
  // apart) finds its host gone. libzmq re-arms a timer per heartbeat in time
  // that grows with the connections: a pool of thousands of agents runs
  // the server with 0 (docs/scale.md).
  int heartbeat_interval_ms = 1000;
  int heartbeat_timeout_ms = 5000;
  // ZeroMQ I/O threads for the server's connections (1 to 64): they read
  // and write the sockets, the server's own thread serves the requests.
  // 1 shares the process's default_context(); more gives the server a
  // context of its own (as CURVE does: no inproc:// endpoints then). With
  // thousands of connections one I/O thread is the server's busiest thread,
  // and a burst of events to every agent delays the requests read behind
  // it; on a machine whose cores are all busy a second one did not help
  // (docs/scale.md, limit 22).
  int io_threads = 1;
  // Durability: empty keeps everything in memory; else the data directory.
  std::string data_dir;
  FsyncPolicy fsync = FsyncPolicy::Always;
  // Start from a damaged log, keeping what precedes the damage (the rest is moved aside).
  bool salvage = false;
  // CURVE: the server's secret key in Z85 text (curve.h); empty for plain
  // connections that anyone who reaches an endpoint may use.
  std::string curve_secret_key;
  // With curve_secret_key, the clients admitted: a name (the session's
  // identity) and a public key in Z85 text each, names and keys unique.
  struct AdmittedClient {
    std::string name;
    std::string public_key;
  };
  std::vector<AdmittedClient> clients;
  // With curve_secret_key, decides every request of every session (except
  // hello and bye); null lets every admitted client do everything.
  std::shared_ptr<AccessPolicy> access;
  // The pool this server serves (Piranha's `ts serve --pool`, docs/protocol.md
  // "hello"): a name people chose and an id made when the pool was, both
  // told to every client in its hello reply, so that a client of another
  // pool refuses this server (ClientOptions::pool). Empty name: none.
  std::string pool_name;
  std::string pool_id;
  // One line per notable event (connections, rejected requests). Null: quiet.
  std::function<void(std::string_view)> log;
  // Recovery, a damaged log tail, compaction, refused handshakes. Null:
  // sent to `log`.
  std::function<void(std::string_view)> notice;
};

// Counters, for tests and `piranha ts stats`.
struct ServerCounters {
  std::uint64_t requests = 0;
  std::uint64_t rejected = 0;  // requests answered with an error
  std::uint64_t sessions_opened = 0;
  std::uint64_t sessions_dropped = 0;
  // requests read after their connection's close was seen, not carried out
  std::uint64_t from_closed = 0;
  std::uint64_t handshakes_refused = 0;  // CURVE: keys not listed, or no key
  std::uint64_t refused_disk_full = 0;   // requests answered disk_full (not in `rejected`)
};

class Server {
 public:
  // Recovers from data_dir when set, then binds every endpoint. Throws
  // std::runtime_error naming the endpoint when one cannot be bound, and the
  // file and offset when the data directory cannot be used;
  // std::invalid_argument for a malformed key or client list, or io_threads
  // out of range. Without CURVE and with one I/O thread it uses
  // default_context(), so inproc endpoints are reachable by clients of this
  // process.
  explicit Server(ServerOptions options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Serves until stop() is called. Call from one thread only. Throws
  // std::runtime_error when the log cannot be written or synced for another
  // reason than a full disk (an I/O error): the server stops rather than
  // acknowledge what is not durable.
  void run();

  // Makes run() return soon. Safe from any thread and from a signal handler.
  void stop();

  // The bound endpoints, with wildcard ports resolved (tcp://127.0.0.1:41234).
  const std::vector<std::string>& endpoints() const;

  // A snapshot of the counters; call from the run() thread or after it returns.
  ServerCounters counters() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The process-wide ZeroMQ context shared by servers and clients, so that
// inproc:// endpoints connect. It is a function-local static: a Server or
// client with static storage duration must call default_context() before it
// is constructed, so that the context outlives it.
zmq::context_t& default_context();

}  // namespace piranha::ts
