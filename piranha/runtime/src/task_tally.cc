#include "piranha/runtime/task_tally.h"

#include <algorithm>
#include <cstdio>

namespace piranha {

ts::Tuple done_record(const std::string& node, double started, double seconds, std::int64_t tasks) {
  if (tasks == 1) return ts::Tuple::of(kDoneTag, node, started, seconds);
  return ts::Tuple::of(kDoneTag, node, started, seconds, tasks);
}
ts::Template done_template() {
  return ts::detail::template_of(std::string(kDoneTag), ts::formal<std::string>, ts::formal<double>,
                                 ts::formal<double>);
}
ts::Template batch_done_template() {
  return ts::detail::template_of(std::string(kDoneTag), ts::formal<std::string>, ts::formal<double>,
                                 ts::formal<double>, ts::formal<std::int64_t>);
}
ts::Tuple retreat_record(const std::string& node, double time, std::int64_t tasks_held, RetreatCause cause) {
  return ts::Tuple::of(kRetreatTag, node, time, tasks_held, static_cast<std::int64_t>(cause));
}
ts::Template retreat_template() {
  return ts::detail::template_of(std::string(kRetreatTag), ts::formal<std::string>, ts::formal<double>,
                                 ts::formal<std::int64_t>, ts::formal<std::int64_t>);
}

bool TaskTally::add(const ts::Tuple& r) {
  bool one = done_template().matches(r);
  if (one || batch_done_template().matches(r)) {
    double s = std::max(0.0, r.get<double>(3));
    std::int64_t tasks = one ? 1 : std::max<std::int64_t>(0, r.get<std::int64_t>(4));
    done_ += tasks;
    seconds_ += s;
    auto& n = nodes_[r.get<std::string>(1)];
    n.tasks += tasks;
    n.seconds += s;
    return true;
  }
  if (retreat_template().matches(r)) {
    const bool owner = r.get<std::int64_t>(4) == static_cast<std::int64_t>(RetreatCause::Owner);
    auto& n = nodes_[r.get<std::string>(1)];
    ++retreats_;
    ++n.retreats;
    owner_retreats_ += owner;
    n.owner_retreats += owner;
    return true;
  }
  return false;
}

sys::JobStat TaskTally::stat(std::int64_t job_id, std::int64_t tasks_put, double now) const {
  return sys::JobStat{job_id, done_, std::max<std::int64_t>(0, tasks_put - done_), mean_task_seconds(), now};
}

namespace {
std::string plural(std::int64_t n, const char* word) {
  return std::to_string(n) + " " + word + (n == 1 ? "" : "s");
}
}  // namespace

std::string TaskTally::summary() const {
  char mean[64];
  double m = mean_task_seconds();
  if (m < 1e-3)
    std::snprintf(mean, sizeof mean, "%.1f us", m * 1e6);
  else if (m < 1)
    std::snprintf(mean, sizeof mean, "%.2f ms", m * 1e3);
  else
    std::snprintf(mean, sizeof mean, "%.2f s", m);
  std::string s = plural(done_, "task") + ", mean " + mean + ", " + plural(retreats_, "retreat");
  if (owner_retreats_) s += " (" + std::to_string(owner_retreats_) + " for the owner)";
  const char* sep = "; ";
  for (const auto& [node, w] : nodes_) {
    s += sep + node + " " + plural(w.tasks, "task");
    if (w.retreats) s += " (" + plural(w.retreats, "retreat") + ")";
    sep = ", ";
  }
  return s;
}

}  // namespace piranha
