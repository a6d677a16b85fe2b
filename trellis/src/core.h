// The propagation rules of the trellis, shared by every way of running it
// (internal). Core owns the nodes placed on one host and knows the whole
// program; it does no I/O and never waits. An engine (deterministic.cc,
// fiber_trellis.cc) decides when each node runs and hands Core the batch of
// activations that arrived for it; Core applies them, runs the node's state
// calculation when the rules say so, and hands every resulting activation
// back to the engine through Sink::deliver, addressed by node index (local
// or remote).
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "piranha/trellis/node.h"
#include "piranha/trellis/program.h"
#include "piranha/trellis/registry.h"
#include "piranha/trellis/stats.h"

namespace piranha::trellis::detail {

// The probe an activation descends from; id 0: none.
struct Trace {
  std::uint64_t id = 0;
  int origin = -1;  // the probed node
  TimePoint started{};
};

struct Activation {
  Cause cause = Cause::Probe;
  int from = -1;  // the sending node; -1: an external entity
  Value data;     // Inferior: the new state; Command: its data; Link: true when Up
  Trace trace;
  // Inferior, from a node on this host: the sender found `data` to differ
  // from the state it sent before, which the receiver has (local deliveries
  // arrive every one, in order), so the receiver need not compare them: a
  // scheduler over thousands of monitors would compare every state twice.
  bool changed = false;
  // Inferior, from a node on this host: the sender's first position among
  // the receiver's inferiors (-1: unknown, looked up), so that a scheduler
  // receiving thousands of states a tick finds each without a hash lookup.
  int position = -1;
};

// One node of the program. Remote nodes have a Cell too (no Node, no state)
// so that indices are the same on every host.
struct Cell {
  int index = 0;
  const NodeSpec* spec = nullptr;
  bool local = false;
  std::unique_ptr<Node> node;
  Value state;
  std::vector<int> inferiors, superiors;
  // Node index -> its first position in inferiors / superiors: a node with
  // thousands of inferiors (a scheduler over a large pool) finds the sender
  // of each activation without a scan.
  std::unordered_map<int, int> inferior_position, superior_position;
  // Parallel to superiors: this node's first position among that superior's inferiors.
  std::vector<int> position_above;
  std::vector<Value> inferior_states;
  std::vector<LinkState> inferior_links, superior_links;
  NodeStats stats;
};

class Sink {
 public:
  virtual ~Sink() = default;
  // Sends `a` to node `to`, which may be on another host.
  virtual void deliver(int to, Activation a) = 0;
  // Notifications, for logs and snapshots; called on the engine's thread.
  virtual void changed(const Cell&) {}
  virtual void commanded(const Cell&, const Command&) {}
  virtual void missed(const DeadlineMiss&) {}
};

class Core {
 public:
  // Places the nodes of `host` (every node when `host` is empty) and makes
  // their Node objects. The program must be valid (validate()).
  Core(Program program, const Registry& types, std::string_view host, std::function<TimePoint()> now,
       Sink& sink);
  Core(const Core&) = delete;
  Core& operator=(const Core&) = delete;

  // Applies `batch` (emptied) to local node `i`; recalculates when at least
  // one activation is a cause (a state equal to the one already known, or a
  // link state already known, is not). Returns the causes that counted (a
  // bit set of Cause), 0 when the node did not recalculate.
  unsigned process(int i, std::vector<Activation>& batch);

  // A fresh trace for a probe of node `origin`, starting now. Thread-safe.
  Trace new_trace(int origin) { return Trace{++last_trace_, origin, now_()}; }

  const Program& program() const { return program_; }
  Cell& cell(int i) { return cells_[static_cast<std::size_t>(i)]; }
  const Cell& cell(int i) const { return cells_[static_cast<std::size_t>(i)]; }
  std::size_t size() const { return cells_.size(); }
  // Index of node `name`; throws std::out_of_range naming it.
  int index(std::string_view name) const;
  // Index of a local node `name`; throws std::out_of_range otherwise.
  int local_index(std::string_view name) const;
  TimePoint now() const { return now_(); }
  // Node figures and misses (links are the engine's to add).
  Report report() const;

 private:
  friend class piranha::trellis::Context;
  void record_top(Cell& c, const Trace& t, TimePoint done);

  Program program_;
  std::function<TimePoint()> now_;
  Sink& sink_;
  std::vector<Cell> cells_;
  std::unordered_map<std::string, int> index_;  // node name -> index
  std::atomic<std::uint64_t> last_trace_{0};    // new_trace() may be called from any thread
  std::uint64_t misses_ = 0;
  std::deque<DeadlineMiss> recent_misses_;
};

}  // namespace piranha::trellis::detail
