// The priorities FCFS, TSK, SRT, SPT, SET, LET and ROR: the order each ranks
// the queue by (key() in priorities.cc), shared by the global, FIT, adaptive
// and MIX strategies (internal to the strategy library).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "piranha/scheduler/strategy.h"

namespace piranha::sched {

enum class Priority { FCFS, TSK, SRT, SPT, SET, LET, ROR };

// Orders the queue by one priority; ties by (arrival, id), i.e. queue position.
// Only ROR has state: call begin() once per invocation before top()/order().
class GlobalOrder {
 public:
  explicit GlobalOrder(Priority p, double quantum = 10) : priority_(p), quantum_(quantum) {}

  void begin(const Invocation& inv);
  // The top job's position; kIdle when the queue is empty.
  Slot top(const Invocation& inv) const;
  // Every queue position, best first.
  void order(const Invocation& inv, std::vector<Slot>& out) const;

  Priority priority() const { return priority_; }

 private:
  Priority priority_;
  double quantum_;
  // ROR: the job holding the nodes and since when.
  std::optional<JobView> holder_;
  double since_ = 0;
  Slot holder_slot_ = kIdle;
};

// TSK's top job: the smallest task time, ties by queue position.
Slot tsk_top(std::span<const JobView> queue);

// With job requirements (Invocation::eligible): per node, the first
// position of a ranked list that the node may run (kIdle: none), worked out
// once per node group.
class FirstAllowed {
 public:
  // Forgets what an earlier invocation (or list) worked out.
  void begin(const Invocation& inv);
  Slot of(const Invocation& inv, std::size_t node, std::span<const Slot> ranked);

 private:
  std::vector<Slot> memo_;  // per group; kUnknown until worked out
  static constexpr Slot kUnknown = -2;
};

// A uniformly random job among those node `node` may run (kIdle: none):
// one draw of inv.rng, which without requirements is the draw of
// rng->below(queue size) itself.
Slot random_job(const Invocation& inv, std::size_t node);

}  // namespace piranha::sched
