// The native policies an agent uses to choose its node's job when no
// external scheduler is directing it (the paper, section 6.1). They are the
// strategy library's FAIR and FCFS (scheduler/strategy.h), invoked through
// its Decider for this one node; nothing of them is written here again.
//
//   FAIR  a node without a job (or whose job ended) takes a uniformly random
//         live job; for every job that arrived since the previous decision,
//         in arrival order, it switches to it with probability 1/q, q the
//         number of live jobs right after that arrival. Over a pool this
//         spreads the nodes evenly over the jobs.
//   FCFS  the earliest arrived live job, ties by id.
//
// A job with a requirement (requirement.h) that the node's attributes do not
// satisfy is never chosen: it stays in the queue (it counts in FAIR's q),
// and the node runs another or none.
//
// Time is the policy's own logical clock, so that clock skew between the
// submitting hosts and this one cannot reorder jobs or make an old job look
// new: `now` is the number of previous choose() calls, and a job's arrival
// is the call at which this policy first saw it live. Jobs first seen at the
// same call are ordered by id, which is submission order (ids come from the
// system space's job counter).
//
// Pure and deterministic given the seed: the agent calls choose() on each
// policy tick with the live jobs it sees in the system space. Not
// thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "piranha/scheduler/requirement.h"

namespace piranha {

struct LiveJob {
  std::int64_t id = 0;
  sched::Requirement requirement{};  // what a node must offer to run it; empty: any node
};

enum class NativePolicyKind { Fair, Fcfs };
std::optional<NativePolicyKind> native_policy_from(std::string_view name);  // "FAIR", "fcfs", ...
std::string_view name(NativePolicyKind k);

// Keeps the strategies out of this header (agent_config.h includes it for
// NativePolicyKind alone).
class NativePolicy {
 public:
  // `seed` seeds the library's Rng (stream 2, as the simulator seeds a strategy).
  NativePolicy(NativePolicyKind kind, std::uint64_t seed);
  ~NativePolicy();
  NativePolicy(NativePolicy&&) noexcept;
  NativePolicy& operator=(NativePolicy&&) noexcept;

  // The job this node should run now, given every live job (any order), the
  // job it runs now (nullopt: none) and what the node offers. nullopt when
  // there is no live job whose requirement `node` satisfies.
  std::optional<std::int64_t> choose(const std::vector<LiveJob>& live, std::optional<std::int64_t> current,
                                     const sched::NodeAttributes& node = {});

  NativePolicyKind kind() const { return kind_; }

 private:
  struct State;
  NativePolicyKind kind_;
  std::unique_ptr<State> state_;
};

}  // namespace piranha
