// Scheduling strategies (the paper, §6, docs/scheduling.md, "Strategies"): the one library
// that the simulator, the agents' native policy and the live scheduler all call.
//
// At each invocation a Strategy maps every node to a job of the queue (or to
// none when the queue is empty). It sees only the queue, the current
// assignment, the predictions for each node (NodeOutlook, computed from
// availability at steps < now) and an injected Rng; it performs no I/O.
//
// Where each strategy is written (scheduler/src/strategies/):
//   priorities.cc  the orders FCFS, TSK, SRT, SPT, SET, LET, ROR rank jobs by
//   global.cc      FCFS, TSK, SRT, ... as strategies: every node the top job
//   fit.cc         xFIT        adaptive.cc  xA(T), e.g. SRTA   mix_fit.cc  xMIX(c)
//   fair.cc        FAIR        rnd.cc       RND                factory.cc  names -> strategies
// Predictors are in scheduler/src/predictor.cc and mix_predictor.cc.
//
// Times are in the caller's time unit: simulation steps in the simulator,
// seconds in the live NPS; now, arrival, task_time, attained, ROR's quantum
// and the outlook's ap_length are all in it. They are real numbers, so a
// live task of 3 µs orders before one of 40 µs; the simulator's integers
// pass through exactly.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/base/input_error.h"
#include "piranha/scheduler/job_list.h"
#include "piranha/scheduler/random.h"

namespace piranha::sched {

// A queued job as a strategy sees it. `task_time` is what the scheduler
// believes (the true time in the simulator by default, a running mean in the
// live system; see task_time.h).
struct JobView {
  JobId id = 0;
  double arrival = 0;
  double task_time = 1;
  std::int64_t tasks = 1;
  std::int64_t tasks_left = 1;
  double attained = 0;  // node-time of service so far
};

// Predictions for each node at the current invocation.
class NodeOutlook {
 public:
  virtual ~NodeOutlook() = default;
  // Predicted average AP length of node n over the next window (the
  // --predictor of the run), in the caller's time unit.
  virtual double ap_length(std::size_t n) const = 0;
  // Predicted fraction of the next window that node n is available.
  virtual double available_fraction(std::size_t n) const = 0;
};

// A position in the queue, or kIdle for "no job".
using Slot = std::int32_t;
inline constexpr Slot kIdle = -1;

// Which nodes may run which queued jobs: a job's requirement against the
// node's attributes (requirement.h, make_eligibility), given to a strategy
// rather than filtered out by each caller. Nodes are in groups (those with
// equal attributes share one), so a strategy may work out what it gives a
// group once rather than per node. Immutable once made.
class Eligibility {
 public:
  // `node_group[n]`: node n's group, < groups; `allowed[g * jobs + j]`:
  // whether the nodes of group g may run queue position j.
  Eligibility(std::vector<std::uint32_t> node_group, std::size_t groups, std::size_t jobs,
              std::vector<std::uint8_t> allowed)
      : node_group_(std::move(node_group)), groups_(groups), jobs_(jobs), allowed_(std::move(allowed)) {}
  bool allows(std::size_t node, Slot job) const {
    return allowed_[node_group_[node] * jobs_ + static_cast<std::size_t>(job)] != 0;
  }
  std::uint32_t group(std::size_t node) const { return node_group_[node]; }
  std::size_t groups() const { return groups_; }

 private:
  std::vector<std::uint32_t> node_group_;
  std::size_t groups_ = 0, jobs_ = 0;
  std::vector<std::uint8_t> allowed_;
};

struct Invocation {
  double now = 0;
  // The queue in (arrival, id) order; jobs leave it when they complete.
  std::span<const JobView> queue;
  // Per node, the queue position of its current job, or kIdle when it has
  // none or its job has completed.
  std::span<const Slot> current;
  const NodeOutlook* outlook = nullptr;  // required only if Strategy::uses_outlook()
  Rng* rng = nullptr;                    // required only if Strategy::uses_rng()
  // Beyond the paper (--spill): global strategies give a job at most as many
  // nodes as it has tasks left; the rest go down the strategy's order, each
  // node keeping its current job where it can, and idle when every job is
  // covered. Other strategies ignore it.
  bool spill = false;
  // FAIR's q (spec §3): per queue position, the queue length right after that
  // job arrived. Empty, or 0 at a position, means the job's 1-based queue
  // position, which is the same whenever no job completed between the
  // arrival and this invocation (always so with --period 1 or --on-events).
  std::span<const std::int64_t> arrival_queue_length = {};
  // Which node may run which job (job requirements); null: every node every
  // job. Every strategy gives a node only a job it may run, the best of
  // those by its own rule, and leaves it idle when it may run none: so a job
  // no node may run waits.
  const Eligibility* eligible = nullptr;
};

// Whether node `n` may run queue position `j` in `inv`.
inline bool may_run(const Invocation& inv, std::size_t n, Slot j) {
  return !inv.eligible || inv.eligible->allows(n, j);
}

class Strategy {
 public:
  virtual ~Strategy() = default;

  // The canonical name, e.g. "SRTA(0.5)", "ROR(10)".
  const std::string& name() const { return name_; }

  // Sets out[n] (out.size() == number of nodes) to the chosen queue position
  // for every node; kIdle for all when the queue is empty. Strategies with
  // memory (ROR's quantum, FAIR's last invocation) keep it between calls: use
  // one instance per run, invoked with non-decreasing `now`.
  virtual void assign(const Invocation& inv, std::span<Slot> out) = 0;

  // Whether assign() reads Invocation::outlook / Invocation::rng.
  virtual bool uses_outlook() const { return false; }
  virtual bool uses_rng() const { return false; }

  // The predictor this strategy's outlook must use ("MIX"), or empty for the
  // run's own --predictor.
  virtual std::string predictor() const { return {}; }

 protected:
  explicit Strategy(std::string name) : name_(std::move(name)) {}

 private:
  std::string name_;
};

// Makes a strategy from its name; case-insensitive, parameter in parentheses:
//   FCFS TSK SRT SPT SET LET        global priorities
//   ROR  ROR(q)                     round robin, integer quantum q >= 1 (default 10)
//   RND  FAIR                       randomized, per node
//   xFIT  (x any of the above global ones; RORFIT(q))   fit by predicted AP length
//   xA(T) (0 <= T <= 1; RORA(T,q))  x where the node's predicted availability >= T, else TSK
//   xMIX(c) (c > 0, default 1)      beyond the paper: x's top job where the node's
//                                   MIX-predicted AP length >= c × its task time, else TSK
// A parameterized name without its parameter takes the default (ROR: q = 10,
// xA: T = 0.5, xMIX: c = 1); the canonical name keeps exactly the parameters given.
// Throws InputError naming the input and the problem for an unknown name
// or a malformed parameter (SRTA(1.5), ROR(0), FCFS(3)): its source is
// `strategy "NAME"`, e.g. `strategy "ROR(0)": quantum 0 must be at least 1`.
std::unique_ptr<Strategy> make_strategy(std::string_view name);

// The canonical name make_strategy would give, without building it.
std::string canonical_strategy_name(std::string_view name);

// Splits a comma-separated list of strategy names, keeping commas inside
// parentheses ("RORA(0.5,20),TSK").
std::vector<std::string> split_strategy_list(std::string_view list);

}  // namespace piranha::sched
