// DeterministicTrellis: a whole program on one thread, with a manual clock,
// recording the order of activations -- the propagation rules without
// fibers, sockets or sleeps, for tests and for replaying a scenario.
//
//   trellis::DeterministicTrellis t(program, types);
//   t.probe("leaf");
//   t.run();                           // until no node has anything to do
//   CHECK(t.state("root") == Value(1));
//   CHECK(t.steps()[0].node == "leaf");
//
// Activations are handled in arrival order: a node that receives an
// activation joins the back of a FIFO run queue (once), and when its turn
// comes it takes everything that arrived for it so far in one recalculation
// -- as a fiber draining its channel does. probe() and command() only queue;
// run() executes. The clock moves only when told (ManualClock, or advance(),
// which also fires the program's periodic probes when they fall due).
// Not thread-safe.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/trellis/node.h"
#include "piranha/trellis/program.h"
#include "piranha/trellis/registry.h"
#include "piranha/trellis/stats.h"

namespace piranha::trellis {

// A clock that moves only when told. Starts at an arbitrary fixed point.
class ManualClock {
 public:
  TimePoint now() const { return now_; }
  void advance(Duration d) { now_ += d; }
  void set(TimePoint t) { now_ = t; }

 private:
  TimePoint now_ = TimePoint{} + std::chrono::hours(1);
};

// One recalculation, in the order they happened.
struct Step {
  std::string node;
  unsigned causes = 0;  // bit set of Cause
  bool changed = false;
  bool has(Cause c) const { return (causes & static_cast<unsigned>(c)) != 0; }
};

class DeterministicTrellis {
 public:
  // Builds every node of `program` (hosts are ignored: all nodes are local).
  // `clock`, when given, must outlive this object; otherwise one is owned.
  // Throws InputError when the program is invalid.
  DeterministicTrellis(const Program& program, const Registry& types, ManualClock* clock = nullptr);
  ~DeterministicTrellis();
  DeterministicTrellis(const DeterministicTrellis&) = delete;
  DeterministicTrellis& operator=(const DeterministicTrellis&) = delete;

  ManualClock& clock() { return *clock_; }

  // An external entity probes `node` (rule c) / commands it with `data`.
  // Throws std::out_of_range for an unknown node.
  void probe(std::string_view node);
  void command(std::string_view node, Value data);
  // Reports the link between `node` and its neighbour `neighbour` as `state`
  // (what a host's link layer does when a neighbour's host goes silent).
  void set_link(std::string_view node, std::string_view neighbour, LinkState state);

  // Runs recalculations until no node has an activation waiting. Returns how
  // many ran. Throws std::runtime_error after `max_steps` (a program whose
  // commands and state changes chase each other for ever).
  std::size_t run(std::size_t max_steps = 10'000'000);
  // Moves the clock forward by `d`, probing each node with probe_every_ms
  // whenever its period falls due (at that instant, then run()).
  void advance(Duration d);

  // The state of `node`. Throws std::out_of_range for an unknown node.
  const Value& state(std::string_view node) const;
  // Recalculations so far, oldest first.
  const std::vector<Step>& steps() const { return steps_; }
  void clear_steps() { steps_.clear(); }
  // The commands `node` received, oldest first (none while not recorded).
  std::vector<Command> commands_received(std::string_view node) const;
  // Whether commands are kept for commands_received(): on by default, for
  // tests; a long simulation turns it off, or its memory grows with every
  // command sent.
  void record_commands(bool on);
  Report report() const;

 private:
  struct Impl;
  std::unique_ptr<ManualClock> own_clock_;
  ManualClock* clock_;
  std::unique_ptr<Impl> impl_;
  std::vector<Step> steps_;
};

}  // namespace piranha::trellis
