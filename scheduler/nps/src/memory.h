// Memory: the NPS node types' state that outlives one trellis (node_types.h).
// Internal to the NPS library.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "piranha/nps/node_types.h"
#include "piranha/scheduler/decision.h"
#include "piranha/scheduler/node_history.h"
#include "piranha/scheduler/predictor.h"
#include "piranha/scheduler/random.h"
#include "piranha/scheduler/strategy.h"

namespace piranha::nps {

// One node's availability history and the predictor fed from it.
struct MonitorMemory {
  std::string predictor_name;
  std::int64_t window = 0;
  std::unique_ptr<sched::Predictor> predictor;
  std::unique_ptr<sched::NodeHistory> history;
  std::map<std::int64_t, std::optional<JobId>> decisions;  // scheduler id -> its last command
};

struct SchedulerMemory {
  std::string strategy_name;
  std::unique_ptr<sched::Strategy> strategy;
  std::unique_ptr<sched::Rng> rng;
  sched::Decider decider;
  std::map<std::string, std::optional<JobId>, std::less<>> decided;  // node -> job
  std::map<std::string, std::int64_t, std::less<>> sent_tick;        // node -> tick of the last command
  std::optional<double> next_due;
  std::int64_t last_tick = -1;
  std::vector<std::pair<JobId, bool>> last_queue;  // (job, measured) at the last decision, for on_events
  std::int64_t decisions = 0;
};

struct EvaluatorMemory {
  struct PerScheduler {
    std::string strategy;
    std::int64_t decisions = 0, changes = 0, last_count = -1;
    std::map<std::string, std::optional<JobId>, std::less<>> last;
  };
  struct PerNode {
    std::int64_t ticks = 0, available_ticks = 0, last_tick = -1;
  };
  std::map<std::int64_t, PerScheduler> schedulers;
  std::map<std::string, PerNode, std::less<>> nodes;
};

class Memory {
 public:
  std::map<std::string, MonitorMemory, std::less<>> monitors;  // by node
  std::map<std::int64_t, SchedulerMemory> schedulers;          // by id
  EvaluatorMemory evaluator;
};

}  // namespace piranha::nps
