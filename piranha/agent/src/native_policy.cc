#include "piranha/agent/native_policy.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <string>

#include "piranha/scheduler/decision.h"
#include "piranha/scheduler/random.h"
#include "piranha/scheduler/strategy.h"

namespace piranha {

std::optional<NativePolicyKind> native_policy_from(std::string_view s) {
  std::string up;
  for (char c : s) up.push_back(static_cast<char>(std::toupper(static_cast<unsigned char>(c))));
  if (up == "FAIR") return NativePolicyKind::Fair;
  if (up == "FCFS") return NativePolicyKind::Fcfs;
  return std::nullopt;
}

std::string_view name(NativePolicyKind k) {
  return k == NativePolicyKind::Fair ? "FAIR" : "FCFS";
}

struct NativePolicy::State {
  struct Seen {
    std::int64_t arrival = 0;       // the call at which the job was first seen
    std::int64_t queue_length = 0;  // live jobs right after that arrival (FAIR's q)
  };
  std::unique_ptr<sched::Strategy> strategy;
  sched::Rng rng;
  sched::Decider decider;
  std::int64_t calls = 0;
  std::map<std::int64_t, Seen> seen;  // live jobs by id
};

NativePolicy::NativePolicy(NativePolicyKind kind, std::uint64_t seed)
    : kind_(kind), state_(new State{sched::make_strategy(name(kind)), sched::Rng(seed, 2), {}, 0, {}}) {}
NativePolicy::~NativePolicy() = default;
NativePolicy::NativePolicy(NativePolicy&&) noexcept = default;
NativePolicy& NativePolicy::operator=(NativePolicy&&) noexcept = default;

std::optional<std::int64_t> NativePolicy::choose(const std::vector<LiveJob>& live,
                                                 std::optional<std::int64_t> current,
                                                 const sched::NodeAttributes& attributes) {
  State& st = *state_;
  const std::int64_t now = st.calls++;
  std::erase_if(st.seen, [&](const auto& kv) {
    return std::none_of(live.begin(), live.end(), [&](const LiveJob& j) { return j.id == kv.first; });
  });
  // Jobs seen for the first time arrive now, in id order, each lengthening the queue by one.
  std::vector<std::int64_t> arrived;
  for (const LiveJob& j : live)
    if (!st.seen.count(j.id)) arrived.push_back(j.id);
  std::sort(arrived.begin(), arrived.end());
  arrived.erase(std::unique(arrived.begin(), arrived.end()), arrived.end());
  for (std::int64_t id : arrived) {
    const auto q = static_cast<std::int64_t>(st.seen.size()) + 1;
    st.seen[id] = State::Seen{now, q};
  }

  std::vector<sched::QueuedJob> queue;
  for (const auto& [id, seen] : st.seen) {
    sched::QueuedJob j;
    j.id = id;
    j.arrival = static_cast<double>(seen.arrival);
    j.queue_length_at_arrival = seen.queue_length;
    for (const LiveJob& l : live)
      if (l.id == id) j.requirement = l.requirement;
    queue.push_back(j);
  }
  const std::optional<sched::JobId> node[] = {current};
  const sched::NodeAttributes offers[] = {attributes};
  return st.decider
      .decide(*st.strategy, static_cast<double>(now), std::move(queue), node, nullptr, &st.rng, false, offers)
      .front();
}

}  // namespace piranha
