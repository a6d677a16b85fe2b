// `piranha nps simulate`: an NPS program run on the deterministic trellis
// against the Piranha simulator's model (docs/scheduling.md) instead of
// live agents -- a virtual clock, an availability trace for the nodes, a job
// list for the jobs. The node types are the live ones; only the Pool differs
// (SimPool). With the standard program and the same options, every result
// equals `piranha sim piranha`'s, number for number.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "piranha/nps/pool.h"
#include "piranha/scheduler/avail_trace.h"
#include "piranha/scheduler/pool_model.h"
#include "piranha/scheduler/simulator.h"
#include "piranha/trellis/program.h"

namespace piranha::nps {

// The simulator's model as a Pool: nodes are the trace's, in its order;
// jobs are the model's queue; a monitor's assignment sets the node's job
// for the step being simulated. History steps are trace steps (unit 1).
// A pool may also be a *subnet* of the model (a campus, campus_sim.h): some
// of its nodes and the jobs submitted to it, beside the other subnets' pools
// on the same model. Not thread-safe.
class SimPool : public Pool {
 public:
  // The whole model. `model` must outlive this pool.
  SimPool(sched::PoolModel& model, const AvailabilityTrace& trace, std::int64_t start);
  // A subnet: the model's nodes at `nodes` (indices, in this order) and the
  // jobs for which `owns` is true. `model` must outlive this pool.
  SimPool(sched::PoolModel& model, const AvailabilityTrace& trace, std::int64_t start,
          std::vector<std::size_t> nodes, std::function<bool(JobId)> owns);

  double now() const override;
  std::int64_t epoch() const override;
  double history_step() const override { return 1; }
  double history_origin() const override { return 0; }
  std::int64_t step_seconds() const override { return trace_.step_seconds; }
  std::vector<std::string> node_names() const override;
  std::optional<NodeStatus> node(std::string_view name) const override;
  std::vector<bool> steps(std::string_view node, std::int64_t from) const override;
  std::vector<Block> blocks(std::string_view) const override { return {}; }
  std::vector<JobInfo> jobs() const override;
  void assign(std::int64_t scheduler, std::int64_t epoch, std::string_view node,
              std::optional<JobId> job) override;
  void heartbeat(std::int64_t) override { ++heartbeats_; }

  std::int64_t heartbeats() const { return heartbeats_; }

  // What the pool's nodes offer and its jobs require (requirement.h), for a simulation that
  // respects requirements (the evaluator's replays): `attributes` per node of this pool, in its
  // order (empty, or nullopt for a node: it offers nothing), `requirements` per job (a job not
  // there requires nothing). Without them, no node offers anything and no job requires anything.
  void set_requirements(std::vector<std::optional<sched::NodeAttributes>> attributes,
                        std::map<JobId, std::string> requirements) {
    attributes_ = std::move(attributes);
    requirements_ = std::move(requirements);
  }

  // The model's indices of this pool's nodes, in its order.
  const std::vector<std::size_t>& model_nodes() const { return nodes_; }
  // The job scheduler 0 last assigned to this pool's k-th node (nullopt:
  // none, or never assigned).
  std::optional<JobId> assigned(std::size_t k) const { return assigned_[k]; }

 private:
  std::optional<std::size_t> index(std::string_view node) const;
  sched::PoolModel& model_;
  std::vector<std::size_t> nodes_;
  std::function<bool(JobId)> owns_;  // empty: every job
  // node -> (model index, position in nodes_)
  std::unordered_map<std::string, std::pair<std::size_t, std::size_t>, NameHash, std::equal_to<>> index_;
  std::vector<std::optional<JobId>> assigned_;
  const AvailabilityTrace& trace_;
  std::int64_t start_;
  std::int64_t heartbeats_ = 0;
  std::vector<std::optional<sched::NodeAttributes>> attributes_;
  std::map<JobId, std::string> requirements_;
};

// Command-line overrides of an NPS program's scheduler 0 (and of its
// monitors' predictions); unset fields keep the program's values.
struct Overrides {
  std::optional<std::string> strategy;
  std::optional<double> period;
  std::optional<std::int64_t> window;
  std::optional<std::string> predictor;
  std::optional<bool> on_events;
};

// Throws InputError unless every monitor of `program` watches one of
// `nodes` and every one of `nodes` has a monitor.
void check_covers(const trellis::Program& program, const std::vector<std::string>& nodes);

// Applies `o` to `program` (scheduler with id 0 and every monitor).
void apply_overrides(trellis::Program& program, const Overrides& o);

// What a simulated pool's nodes offer and its jobs require (SimPool::set_requirements), by
// node name and job id.
struct SimRequirements {
  std::map<std::string, sched::NodeAttributes> attributes;
  std::map<JobId, std::string> requirements;
};

// One simulated run of `program` (nullopt: the standard program for the
// trace's nodes with `strategy`, options.period, options.window,
// options.predictor, options.spill and options.on_events) with scheduler 0
// running `strategy`. `tick`, when set, is called on the calling thread
// once the trellis is built and again after each tick (one simulated step),
// so that a caller can time the ticks; it must not throw. `requirements`: what
// the nodes offer and the jobs require, which every scheduler of the program
// respects (none by default). Throws InputError for a bad program and
// std::invalid_argument / InputError as simulate() does.
sched::SimResult simulate_program(const std::optional<trellis::Program>& program,
                                  const AvailabilityTrace& trace, const std::vector<sched::Job>& jobs,
                                  const std::string& strategy, const sched::SimOptions& options,
                                  std::uint64_t seed, const std::function<void()>& tick = {},
                                  const SimRequirements& requirements = {});

}  // namespace piranha::nps
