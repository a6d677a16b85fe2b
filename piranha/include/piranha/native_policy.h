// The native policies an agent uses to choose its node's job when no
// external scheduler is directing it (seed 003, section 6.1).
//
//   FAIR  a node without a job (or whose job ended) takes a uniformly random
//         live job; for every job that arrived since the previous decision,
//         in arrival order, it switches to it with probability 1/q, q the
//         number of live jobs after that arrival. Over a pool this spreads
//         the nodes evenly over the jobs.
//   FCFS  the earliest submitted live job, ties by id.
//
// Pure and deterministic given the seed: the agent calls choose() on each
// policy tick with the live jobs it sees in the system space.
#pragma once

#include <cstdint>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace piranha {

struct LiveJob {
  std::int64_t id = 0;
  double submit_time = 0;
};

enum class NativePolicyKind { Fair, Fcfs };
std::optional<NativePolicyKind> native_policy_from(std::string_view name);  // "FAIR", "fcfs", ...
std::string_view name(NativePolicyKind k);

class NativePolicy {
 public:
  NativePolicy(NativePolicyKind kind, std::uint64_t seed) : kind_(kind), rng_(seed) {}

  // The job this node should run now, given every live job (any order) and
  // the job it runs now (nullopt: none). nullopt when there is no live job.
  std::optional<std::int64_t> choose(std::vector<LiveJob> live, std::optional<std::int64_t> current);

  NativePolicyKind kind() const { return kind_; }

 private:
  // A uniform integer in [0, n), independent of the library's distributions
  // so that a seed means the same on every platform.
  std::size_t uniform(std::size_t n);
  NativePolicyKind kind_;
  std::mt19937_64 rng_;
  std::set<std::int64_t> seen_;  // jobs already considered by FAIR
};

}  // namespace piranha
