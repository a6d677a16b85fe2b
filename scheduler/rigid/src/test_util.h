// Small workloads for the rigid tests.
#pragma once

#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "piranha/rigid/pick.h"
#include "piranha/rigid/workload.h"

namespace piranha::rigid::test {

struct Row {
  Time submit, runtime;
  int width;
  Time estimate = kUnknown;
};

// Jobs 1.. in the order given (which must be by submit time).
inline Workload workload(std::initializer_list<Row> rows) {
  Workload w;
  w.source = "test.swf";
  std::int64_t id = 0;
  for (const auto& r : rows) {
    RigidJob j;
    j.id = ++id;
    j.submit = r.submit;
    j.runtime = r.runtime;
    j.width = r.width;
    j.estimate = r.estimate;
    j.line = static_cast<int>(id);
    w.jobs.push_back(j);
  }
  return w;
}

// One site's view at `now` (the vectors must outlive it).
inline SiteView site(int nodes, int free, const std::vector<RunningJob>& running,
                     const std::vector<WaitingJob>& queue, Time now = 0) {
  return SiteView{now, nodes, free, running, queue};
}

}  // namespace piranha::rigid::test
