// TaskTally: a job's task statistics, from the records its piranhas write.
//
// Every completed task leaves ("piranha.done", node, started, seconds) in the
// job's space, written atomically with the task's completion, so each task
// is counted exactly once; short tasks completed together in one step leave
// one ("piranha.done", node, started, seconds, tasks) for all of them
// (earliest start, summed times). Every retreat leaves ("piranha.retreat", node,
// time, tasks_held, cause). The feeder's runtime collects both into a
// TaskTally and publishes it as the job's ("jobstat", ...) and ("jobwork",
// ...) tuples: these records are the one count of a job's retreats, which
// its summary, `piranha nps report` and the live page show.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "piranha/runtime/sysspace.h"

namespace piranha {

inline constexpr const char* kDoneTag = "piranha.done";
inline constexpr const char* kRetreatTag = "piranha.retreat";

// The done record of `tasks` tasks completed together: the first form when
// it is one.
ts::Tuple done_record(const std::string& node, double started, double seconds, std::int64_t tasks = 1);
ts::Template done_template();        // one task's
ts::Template batch_done_template();  // several tasks'

// Why a piranha retreated, as its agent said: the agent sends the retreat
// signal (SIGUSR1) with sigqueue and this as its value. A plain SIGUSR1, or
// SIGTERM, is Unknown.
enum class RetreatCause : int {
  Unknown = 0,
  Owner = 1,     // the node stopped being available (its owner, a block, the trace)
  GivesWay = 2,  // the node was given to another job (scheduler 0 or the native policy), or its agent stopped
};

ts::Tuple retreat_record(const std::string& node, double time, std::int64_t tasks_held,
                         RetreatCause cause = RetreatCause::Unknown);
ts::Template retreat_template();

struct NodeWork {
  std::int64_t tasks = 0;
  double seconds = 0;  // summed task times
  std::int64_t retreats = 0;
  std::int64_t owner_retreats = 0;  // of which RetreatCause::Owner
};

class TaskTally {
 public:
  // Adds one record; false (and nothing counted) for a tuple that is neither
  // a done nor a retreat record.
  bool add(const ts::Tuple& record);

  std::int64_t tasks_done() const { return done_; }
  std::int64_t retreats() const { return retreats_; }
  std::int64_t owner_retreats() const { return owner_retreats_; }
  // Mean task time in seconds; 0 before the first task completes.
  double mean_task_seconds() const { return done_ ? seconds_ / static_cast<double>(done_) : 0.0; }
  const std::map<std::string, NodeWork>& per_node() const { return nodes_; }

  // The ("jobstat", ...) record for a job with `tasks_put` tasks put so far.
  sys::JobStat stat(std::int64_t job_id, std::int64_t tasks_put, double now) const;

  // "40000 tasks, mean 0.12 ms, 3 retreats (2 for the owner); ws01 20400 tasks (1 retreat), ws02 19600
  // tasks (2 retreats)"
  std::string summary() const;

 private:
  std::int64_t done_ = 0;
  double seconds_ = 0;
  std::int64_t retreats_ = 0;
  std::int64_t owner_retreats_ = 0;
  std::map<std::string, NodeWork> nodes_;
};

}  // namespace piranha
