// The NPS node classes behind add_nps_types (node_types.h documents their
// parameters, states and commands). Internal to the NPS library.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "memory.h"
#include "piranha/nps/node_types.h"
#include "piranha/trellis/node.h"

namespace piranha::nps {

class Enabler : public trellis::Node {
 public:
  explicit Enabler(const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;
};

class Owner : public trellis::Node {
 public:
  Owner(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  Environment env_;
  std::string node_;
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
};

class Jobs : public trellis::Node {
 public:
  Jobs(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  Environment env_;
};

class Scheduler : public trellis::Node {
 public:
  Scheduler(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  // Whether every inferior whose link is up has reached `tick`.
  bool ready(const trellis::Context& ctx, std::int64_t tick) const;
  void decide(trellis::Context& ctx);
  // Commands `monitor` (an inferior index) with this scheduler's decision for `node`.
  void send(trellis::Context& ctx, std::size_t monitor, const std::string& node, std::optional<JobId> job,
            std::optional<std::int64_t> epoch = std::nullopt);

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
std::vector<std::optional<JobId>> probe_nodes(std::span<const JobId> unmeasured,
                                              std::span<const std::optional<JobId>> current);

class Evaluator : public trellis::Node {
 public:
  Evaluator(Environment env, const trellis::Params& p);
  trellis::Value calculate(trellis::Context& ctx) override;

 private:
  Environment env_;
};

}  // namespace piranha::nps
