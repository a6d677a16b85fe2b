// The NPS node classes behind add_nps_types (node_types.h documents their
// parameters, states and commands). Internal to the NPS library.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "memory.h"
#include "piranha/nps/node_types.h"
#include "piranha/nps/retention.h"
#include "piranha/trellis/node.h"

namespace piranha::nps {

class Enabler : public trellis::Node {
 public:
  Enabler(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  Environment env_;
};

class Owner : public trellis::Node {
 public:
  Owner(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  Environment env_;
  std::string node_;
  // What the state was last built from: when the blocks, the complaints and
  // whether one is in force are all unchanged, the state is (most ticks, on
  // most nodes).
  std::vector<Block> blocks_;
  std::vector<Complaint> complaints_;
  bool blocked_ = false;
  // The pool's owners_version() when they were read, and the next moment
  // one of the blocks begins or ends: until then, with the same version,
  // nothing is read again.
  std::optional<std::uint64_t> version_;
  double next_change_ = 0;
};

class Monitor : public trellis::Node {
 public:
  Monitor(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  Environment env_;
  std::string node_;
  std::int64_t obey_;
  MonitorMemory* memory_;
  NodeStatus status_;  // its node as last read (Pool::node_into)
};

// The entry in `m.decided` of `node`, which the scheduler's inferior at
// position `i` reports (null: none), found through `m.slots` when that
// position reported the same node before; equal to m.decided.find(node).
SchedulerMemory::Decided* find_decided(SchedulerMemory& m, std::size_t i, const std::string& node);

// What a monitor's state shows (node_types.h), field by field.
struct MonitorView {
  double ap_length = 0;
  trellis::Value attributes;  // the node's attributes (values.h), null when its agent published none
  bool available = false;
  trellis::Value decisions;
  double fraction = 0;
  std::int64_t history = 0;
  std::string node;
  std::int64_t obeys = 0;
  std::string predictor, reason;
  trellis::Value running;
  std::string state;
  bool suspect = false;
  std::int64_t tick = -1;
  std::int64_t window = 0;
};

// Where each field sits in a monitor's state, a map in key order as
// monitor_state builds it: hints for a scheduler reading thousands of them
// at every tick (Value::get). kCount is the number of fields.
struct MonitorFields {
  static constexpr std::size_t kApLength = 0;
  static constexpr std::size_t kAttributes = 1;
  static constexpr std::size_t kAvailable = 2;
  static constexpr std::size_t kDecisions = 3;
  static constexpr std::size_t kFraction = 4;
  static constexpr std::size_t kHistory = 5;
  static constexpr std::size_t kNode = 6;
  static constexpr std::size_t kObeys = 7;
  static constexpr std::size_t kPredictor = 8;
  static constexpr std::size_t kReason = 9;
  static constexpr std::size_t kRunning = 10;
  static constexpr std::size_t kState = 11;
  static constexpr std::size_t kSuspect = 12;
  static constexpr std::size_t kTick = 13;
  static constexpr std::size_t kWindow = 14;
  static constexpr std::size_t kCount = 15;
};

// The monitor's state showing `v`, built whole.
trellis::Value monitor_state(const MonitorView& v);
// Makes `state` (a monitor's previous state, or null) equal to
// monitor_state(v), field by field, when it has the state's fields, rather
// than building every field again (a monitor's state changes at every
// tick, in two fields). A changed state is written into the map of `spare`
// (the state before the previous one, or null), which becomes the previous
// state: in place when nothing else holds that map any more, as at most
// ticks (the trellis and the scheduler hold the previous one), so that a
// tick allocates and frees no map; into a copy otherwise. A map that
// anything else holds is never changed.
void update_monitor_state(trellis::Value& state, trellis::Value& spare, const MonitorView& v);

// A monitor's decisions as its state shows them: scheduler id (a string)
// -> job or null.
trellis::Value decisions_value(const std::map<std::int64_t, std::optional<JobId>>& decisions);

class Jobs : public trellis::Node {
 public:
  Jobs(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  Environment env_;
};

// What a scheduler reads of one inferior's state, read once per
// recalculation: a scheduler of a large pool has thousands of inferiors.
struct Seen {
  bool jobs = false;     // a jobs node's state
  bool monitor = false;  // a monitor's state
  bool up = true;        // the link to it
  bool null = true;      // no state yet
  std::int64_t tick = -1;
  const std::string* node = nullptr;          // a monitor's node, in its state
  const trellis::Value* decisions = nullptr;  // a monitor's recorded decisions, in its state
};

class Scheduler : public trellis::Node {
 public:
  Scheduler(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  // What it read of each inferior at this recalculation (a buffer kept, not
  // reallocated at every tick: one entry per monitor).
  std::vector<Seen> seen_;
  // Whether every inferior whose link is up has reached `tick`.
  bool ready(const std::vector<Seen>& seen, std::int64_t tick) const;
  void decide(trellis::Context& ctx, const std::vector<Seen>& seen);
  // Commands `monitor` (an inferior index) with this scheduler's decision
  // for its node, whose entry is `decided`.
  void send(trellis::Context& ctx, std::size_t monitor, SchedulerMemory::Decided& decided,
            std::optional<JobId> job, std::optional<std::int64_t> epoch = std::nullopt);

  Environment env_;
  std::int64_t id_;
  double period_;
  bool spill_, on_events_;
  double cold_start_;
  bool probe_;
  SchedulerMemory* memory_;
};

// Probing (docs/nps.md, "The prior"): one node for each job not yet
// measured, in queue order, as long as the measured jobs keep at least one
// node; a node whose current job is one of them keeps it, the others are
// taken from the end of the node list. Per node, the job it probes or nullopt.
// With `may_run` (job requirements: whether node k may run a job), a job is
// probed only on a node that may run it, the last such free one; a job no
// free node may run is probed nowhere.
std::vector<std::optional<JobId>> probe_nodes(std::span<const JobId> unmeasured,
                                              std::span<const std::optional<JobId>> current,
                                              const std::function<bool(std::size_t, JobId)>& may_run = {});

class Evaluator : public trellis::Node {
 public:
  Evaluator(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  // The switching rule (node_types.h, evaluator's `switch`).
  struct SwitchRule {
    std::vector<std::int64_t> among;
    double after_hours = 0;
    std::int64_t after_jobs = 1;
    double margin_percent = 10;
  };
  // The `retention` and `switch` parameters; throw BadParameter.
  static Retention retention_param(const trellis::Value& keep);
  static std::optional<SwitchRule> switch_param(const trellis::Value& rule);
  // Reads the pool's records of earlier runs back into memory (once per NPS).
  void load();
  void write(const std::string& kind, double time, const nlohmann::json& j);
  // Applies the retention: removes the records it lets go from the pool,
  // and what they described from memory.
  void prune(double now);
  void observe_jobs(const trellis::Value& s, std::set<JobId>& live, double now);
  // One monitor's state, seen at inferior `i`.
  void observe_node(std::size_t i, const trellis::Value& s, const std::set<JobId>& live, double now);
  void observe_scheduler(const trellis::Value& s, double now);
  // Replays the observation under every scheduler's strategy and scores
  // the predictors (shadow.h's run_round), at once or on another thread.
  void estimate(double now);
  // Records a round's outcome and applies the switching rule.
  void apply(const ReplayOutcome& outcome, double now);
  // Applies the switching rule to the latest estimates; records a switch.
  void maybe_switch(double now);
  trellis::Value state(std::int64_t tick) const;

  Environment env_;
  // Per inferior: the memory of the node its monitor last reported, found
  // by name once rather than at every tick (a pool of thousands).
  struct Slot {
    std::string node;
    EvaluatorMemory::PerNode* memory = nullptr;
  };
  std::vector<Slot> slots_;
  double tolerance_, step_;
  std::uint64_t seed_;
  bool estimates_;
  bool recording_;  // the pool keeps records: build them
  Retention retention_;
  std::optional<SwitchRule> rule_;
  std::map<JobId, std::string> names_;
  std::string last_switch_;
};

}  // namespace piranha::nps
