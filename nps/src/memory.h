// Memory: the NPS node types' state that outlives one trellis (node_types.h).
// Internal to the NPS library.
#pragma once

#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "piranha/nps/node_types.h"
#include "piranha/nps/shadow.h"
#include "piranha/scheduler/decision.h"
#include "piranha/scheduler/node_history.h"
#include "piranha/scheduler/predictor.h"
#include "piranha/scheduler/random.h"
#include "piranha/scheduler/strategy.h"
#include "piranha/trellis/value.h"

namespace piranha::nps {

// One node's availability history and the predictor fed from it.
struct MonitorMemory {
  std::string predictor_name;
  std::int64_t window = 0;
  std::unique_ptr<sched::Predictor> predictor;
  std::unique_ptr<sched::NodeHistory> history;
  std::map<std::int64_t, std::optional<JobId>> decisions;  // scheduler id -> its last command
  // `decisions` as the state shows it ("id" -> job or null), rebuilt only
  // when a command changes it: the state built at every tick shares it
  // (no allocation), and comparing that state with the last finds this
  // field equal at once.
  trellis::Value decisions_value = trellis::Value::Map{};
  // The node's attributes as last seen, and as the state shows them
  // (attributes_value; null: none published), rebuilt only when they change.
  std::optional<sched::NodeAttributes> attributes;
  trellis::Value attributes_value;
  std::optional<std::int64_t> obeys;  // the scheduler an evaluator's switch made it obey
  trellis::Value state;               // the state it last returned, updated in place at the next tick
  // The state before that: once the trellis and the superiors have let go
  // of it, the next state is written into its map (update_monitor_state).
  trellis::Value spare;
};

struct SchedulerMemory {
  std::string strategy_name;
  std::unique_ptr<sched::Strategy> strategy;
  std::unique_ptr<sched::Rng> rng;
  sched::Decider decider;
  // What it last decided for a node, and when it last commanded the node's monitor.
  struct Decided {
    std::optional<JobId> job;
    std::int64_t sent_tick = 0;
  };
  // By node: hashed, since a scheduler of a large pool looks up every node on every tick.
  std::unordered_map<std::string, Decided, NameHash, std::equal_to<>> decided;
  // Per inferior of the scheduler's node, by position: the node its monitor
  // last reported and that node's entry in `decided` (null: none yet), so
  // that a tick finds every node's entry without hashing its name. Entries
  // of `decided` are never removed while it lives, so the pointers hold; a
  // position whose monitor reports another node is looked up again.
  struct Slot {
    std::string node;
    Decided* decided = nullptr;
  };
  std::vector<Slot> slots;
  // `decided` as the state shows it: node -> job or null. A map Value, so
  // that the state shares it rather than copying it at every tick.
  trellis::Value assignments = trellis::Value::Map{};
  std::optional<double> next_due;
  std::int64_t last_tick = -1;
  std::vector<std::pair<JobId, bool>> last_queue;  // (job, measured) at the last decision, for on_events
  std::int64_t decisions = 0;
};

struct EvaluatorMemory {
  struct PerScheduler {
    std::string strategy;
    double period = 1;
    bool on_events = false;
    std::int64_t decisions = 0, changes = 0, last_count = -1;
    std::map<std::string, std::optional<JobId>, std::less<>> last;
    std::optional<double> estimate;  // replayed mean turnaround (s)
  };
  // What a node shows now, since `start`.
  struct OpenSpan {
    std::string state;
    bool available = false;
    std::optional<JobId> job;
    double start = 0;
  };
  struct PerNode {
    std::int64_t last_tick = -1;
    std::optional<OpenSpan> open;
    double available_seconds = 0, observed_seconds = 0;  // closed spans
    std::int64_t owner_retreats = 0, scheduler_retreats = 0;
    std::string predictor = "REC_HIST";
    std::int64_t window = 10;
    std::optional<double> accuracy;  // fraction of AP predictions matched
    std::int64_t accuracy_points = 0;
    // Its entry in the evaluator's state, and what it was built from
    // (Evaluator::state): rebuilt when these change, and otherwise, on a
    // large pool, only in its turn.
    struct EntryInputs {
      double available_seconds = 0, observed_seconds = 0;
      std::int64_t owner_retreats = 0, scheduler_retreats = 0, accuracy_points = 0;
      std::optional<double> accuracy;
      std::optional<std::pair<double, bool>> open;  // start, available
      friend bool operator==(const EntryInputs&, const EntryInputs&) = default;
    };
    trellis::Value entry;
    EntryInputs entry_inputs;
  };
  struct Retreat {
    double time = 0;
    std::string node;
    JobId job = 0;
    std::string by;  // "owner" or "scheduler"
  };
  struct Ended {
    JobId id = 0;
    std::string name;
    double arrival = 0, end = 0;
    std::int64_t owner_retreats = 0, scheduler_retreats = 0;
  };
  bool loaded = false;  // the pool's records have been read back
  double first_time = -1;
  std::int64_t obeyed = 0;
  std::map<std::int64_t, PerScheduler> schedulers;
  std::map<std::string, PerNode, std::less<>> nodes;
  std::vector<ObservedSpan> spans;  // closed spans of every node, for replays
  std::map<JobId, ObservedJob> jobs;
  // job -> its retreats (all, the owner's) as the job counts them (pool.h's JobInfo)
  std::map<JobId, std::pair<std::int64_t, std::int64_t>> retreats;
  std::vector<Retreat> recent;      // the latest retreats, newest last
  std::vector<Ended> recent_ended;  // the latest ended jobs, newest last
  std::int64_t switches = 0;
  std::uint64_t states_built = 0;       // Evaluator::state's calls: whose turn it is
  std::optional<double> observed_mean;  // ended jobs' mean turnaround (s)
  bool estimate_due = false;
  std::size_t record_count = 0;        // records the pool keeps (as far as the evaluator knows)
  double next_prune = 0;               // when the retention is next applied
  std::size_t prune_at_count = 0;      // or when record_count exceeds this
  std::future<ReplayOutcome> pending;  // a round of replays running on its own thread
};

class Memory {
 public:
  // Each enabler's tick, by node name: a rebuilt trellis goes on counting
  // where the last stopped, so schedulers (which act on a tick newer than
  // the last they saw) do not stall after a rebuild.
  std::map<std::string, std::int64_t, std::less<>> enabler_ticks;
  std::map<std::string, MonitorMemory, std::less<>> monitors;  // by node
  std::map<std::int64_t, SchedulerMemory> schedulers;          // by id
  EvaluatorMemory evaluator;
};

}  // namespace piranha::nps
