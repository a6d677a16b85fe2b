#include <cmath>
#include <stdexcept>

#include "piranha/agent/availability_source.h"

namespace piranha {

TraceAvailability::TraceAvailability(const AvailabilityTrace& trace, const std::string& node,
                                     double time_scale, std::int64_t start_step, Clock::time_point origin)
    : node_(node), start_step_(start_step), origin_(origin) {
  auto n = trace.index_of(node);
  if (!n) throw std::invalid_argument("trace has no node '" + node + "'");
  if (!(time_scale > 0) || !std::isfinite(time_scale))
    throw std::invalid_argument("trace time scale must be > 0");
  if (start_step < 0 || start_step >= trace.length)
    throw std::invalid_argument("trace start step " + std::to_string(start_step) + " is not in [0, " +
                                std::to_string(trace.length) + ")");
  trace_.step_seconds = trace.step_seconds;
  trace_.length = trace.length;
  trace_.nodes = {node};
  trace_.periods = {trace.periods[*n]};
  step_real_seconds_ = static_cast<double>(trace.step_seconds) / time_scale;
}

Clock::time_point TraceAvailability::start_of(std::int64_t elapsed) const {
  // Rounded up, so that the returned time is never before the exact boundary
  // and evaluate() at that time already sees the new step.
  double ns = std::ceil(static_cast<double>(elapsed) * step_real_seconds_ * 1e9);
  return origin_ +
         std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(static_cast<std::int64_t>(ns)));
}

std::int64_t TraceAvailability::elapsed_steps(Clock::time_point now) const {
  if (now <= origin_) return 0;
  double seconds = std::chrono::duration<double>(now - origin_).count();
  auto k = static_cast<std::int64_t>(std::floor(seconds / step_real_seconds_));
  // Floating-point division may land one step off near a boundary; start_of()
  // is the single definition of where steps begin.
  while (k > 0 && start_of(k) > now) --k;
  while (start_of(k + 1) <= now) ++k;
  return k;
}

std::int64_t TraceAvailability::step_at(Clock::time_point now) const {
  return (start_step_ + elapsed_steps(now)) % trace_.length;
}

Verdict TraceAvailability::evaluate(Clock::time_point now) {
  std::int64_t step = step_at(now);
  bool available = trace_.available(0, step);
  return {available, "trace " + node_ + ": " + (available ? "available" : "unavailable") + " (step " +
                         std::to_string(step) + ")"};
}

Clock::time_point TraceAvailability::next_evaluation(Clock::time_point now) {
  const std::int64_t elapsed = elapsed_steps(now);
  const std::int64_t step = (start_step_ + elapsed) % trace_.length;
  const std::int64_t length = trace_.length;
  std::int64_t change = trace_.next_change(0, step);
  std::int64_t ahead;  // steps from the current one to the next change
  if (change < length) {
    ahead = change - step;
  } else if (trace_.available(0, 0) != trace_.available(0, step)) {
    ahead = length - step;  // the wrap-around itself is the change
  } else {
    std::int64_t after_wrap = trace_.next_change(0, 0);
    // A node that never changes is re-evaluated once per pass of the trace.
    ahead = length - step + (after_wrap < length ? after_wrap : 0);
  }
  return start_of(elapsed + ahead);
}

}  // namespace piranha
