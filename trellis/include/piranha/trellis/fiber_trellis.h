// FiberTrellis: the nodes of one host, each a Boost.Fiber, linked to the
// program's other hosts over ZeroMQ.
//
//   trellis::FiberTrellis alpha(program, types, {.host = "alpha"});
//   alpha.probe("load_alpha");                 // from any thread
//   trellis::Value s = alpha.state("summary"); // a snapshot, from any thread
//
// Threads. The constructor starts one trellis thread that runs a fiber per
// local node (and one per periodically probed node). A node's fiber waits on
// its channel -- an unbounded fiber channel, so a superior and an inferior
// that send to each other can never block on each other -- takes everything
// that arrived in one go and hands it to the propagation rules (node.h),
// exactly as DeterministicTrellis does, but on the real clock. When the
// program places nodes on other hosts, a link thread owns the ZeroMQ
// sockets: it binds this host's endpoint, connects to every neighbouring
// host (one that holds a superior or inferior of a local node), carries
// activations both ways as msgpack (wire.h), and sends heartbeats.
//
// Links. A neighbouring host is Up once it answers a heartbeat and Down
// after link_timeout_ms of silence (and until it is first heard). Every
// change is delivered to each local node with a neighbour there as an
// activation with Cause::Link; Context::inferior_link() / superior_link()
// then report it. Nothing ever waits for a remote host: activations for a
// Down host are dropped (counted), and when the link comes back Up each
// local node with a superior there sends its current state again, so
// superiors resynchronize (an unchanged state activates nobody).
//
// Timing. Recalculation times, probe-to-top latencies and deadline misses
// are measured as in deterministic mode (stats.h); each link's heartbeat
// round trip is measured too. A trace crossing a link carries the time
// already spent, plus half the link's last round trip for the hop.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/trellis/node.h"
#include "piranha/trellis/program.h"
#include "piranha/trellis/registry.h"
#include "piranha/trellis/stats.h"

namespace piranha::trellis {

// Something that happened on a host, for logs and tools.
struct Event {
  enum class Kind {
    State,    // node changed state to value
    Command,  // node received command value from other ("" = external)
    Link,     // the link to host other is now value ("up" or "down")
    Miss,     // a probe of other reached top node `node` late; value = latency in microseconds
  };
  Kind kind;
  std::string node;
  std::string other;
  Value value;
};

struct FiberOptions {
  // The host whose nodes run here. Empty: every node of the program, which
  // must then have no hosts section (all links are local).
  std::string host;
  // Called for each Event; calls are serialized, but may come from the
  // trellis thread or the link thread. Must not call back into this object.
  std::function<void(const Event&)> on_event;
  // Stack size of each node's fiber.
  std::size_t stack_bytes = 64 * 1024;
};

class FiberTrellis {
 public:
  // Validates the program, builds the local nodes, binds this host's
  // endpoint and starts the threads. Throws InputError for an invalid
  // program or unknown host, std::runtime_error when the endpoint cannot be
  // bound.
  FiberTrellis(const Program& program, const Registry& types, FiberOptions options = {});
  // stop()s.
  ~FiberTrellis();
  FiberTrellis(const FiberTrellis&) = delete;
  FiberTrellis& operator=(const FiberTrellis&) = delete;

  // An external entity probes / commands a local node. Thread-safe; returns
  // at once. Throws std::out_of_range for a node that is not local.
  void probe(std::string_view node);
  void command(std::string_view node, Value data);

  // The latest state of a local node. Thread-safe.
  Value state(std::string_view node) const;
  // The latest states of local nodes `nodes`, in their order, read together
  // (one lock, not one per node: a shell that reads every monitor of a
  // large pool each second would otherwise take the lock the trellis thread
  // needs as often). Thread-safe. Throws std::out_of_range, as state() does,
  // for a node that is not local; then nothing is read.
  std::vector<Value> states(std::span<const std::string> nodes) const;
  // Figures so far: local nodes, links, misses. Thread-safe.
  Report report() const;
  // The link to `host` (Up for this host itself). Thread-safe.
  LinkState link(std::string_view host) const;

  // Stops the fibers and the link thread and joins them. Idempotent. The
  // neighbours see this host go silent.
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace piranha::trellis
