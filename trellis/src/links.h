// The links from one host to its neighbouring hosts (internal): a thread
// that owns the ZeroMQ sockets, carries wire::Messages, sends heartbeats and
// decides when a neighbour is Up or Down. See fiber_trellis.h for the
// contract as nodes see it, wire.h for the bytes.
//
// Sockets: this host binds a ROUTER at its endpoint; to each neighbour it
// connects a DEALER whose routing id is this host's name. Activations and
// pings go out on the DEALER and arrive on the neighbour's ROUTER; pongs
// come back through that ROUTER to the DEALER. Only a pong proves a
// neighbour alive: it shows both directions work (a neighbour heard only on
// the ROUTER may not yet be reachable through the DEALER).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "piranha/trellis/program.h"
#include "piranha/trellis/stats.h"
#include "wire.h"

namespace piranha::trellis::detail {

class Links {
 public:
  struct Hooks {
    // An activation arrived from host `from`; `one_way` estimates the hop.
    std::function<void(int from, wire::Message&&, Duration one_way)> on_activation;
    // The link to `host` changed state.
    std::function<void(int host, LinkState)> on_link;
  };

  // Binds this host's endpoint (throws std::runtime_error when it cannot)
  // and connects to `neighbours` (host indices). Nothing moves, and no hook
  // is called, before start().
  Links(const Program& program, int self, std::vector<int> neighbours, Hooks hooks);
  ~Links();
  Links(const Links&) = delete;
  Links& operator=(const Links&) = delete;

  // Starts the link thread.
  void start();
  // Queues an encoded message for `host`. Thread-safe, never blocks. Dropped
  // when no connection to the host is established.
  void send(int host, std::string bytes);
  LinkState state(int host) const;
  std::vector<LinkStats> stats() const;
  // Stops and joins the link thread. Idempotent.
  void stop();

 private:
  struct Neighbour;
  void loop();
  Neighbour* find(int host);
  void heard(Neighbour& n);

  const Program& program_;
  int self_;
  Hooks hooks_;
  struct Sockets;
  std::unique_ptr<Sockets> sockets_;
  std::vector<std::unique_ptr<Neighbour>> neighbours_;
  int wake_fd_ = -1;
  mutable std::mutex mutex_;  // guards outbox_ and every Neighbour's stats and state
  std::deque<std::pair<int, std::string>> outbox_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;
};

}  // namespace piranha::trellis::detail
