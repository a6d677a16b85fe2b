// The jobs node type (node_types.h): the job descriptors schedulers read.
#include "node_kinds.h"
#include "values.h"

namespace piranha::nps {

Jobs::Jobs(Environment env, const trellis::Params&) : env_(std::move(env)) {}

Value Jobs::calculate(trellis::Context& ctx) {
  Value::List jobs;
  for (const JobInfo& j : env_.pool->jobs()) {
    jobs.push_back(Fields()("id", j.id)("name", j.name)("arrival", j.arrival)("task_time", j.mean_task_time)(
        "measured", j.measured)("tasks", j.tasks)("tasks_left", j.tasks_left)("attained", j.attained)(
        "q", j.queue_length_at_arrival)("retreats", j.retreats)("owner_retreats", j.owner_retreats));
    // Only where there is one, so that a pool without requirements has the states it had.
    if (!j.requirement.empty()) jobs.back().as_map().insert_or_assign("requires", Value(j.requirement));
  }
  return Fields()("tick", newest_tick(ctx))("jobs", std::move(jobs));
}

}  // namespace piranha::nps
