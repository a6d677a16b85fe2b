// AvailabilitySource: what the node agent asks "may piranhas run here now?".
//
// Two implementations behind one interface, so that the agent's retreat logic
// runs unchanged against the real machine and against a recorded trace:
//  - LiveAvailability judges the real node: load averages (minus the load the
//    agent's own piranhas cause), evdev input devices, terminals, X display.
//  - TraceAvailability replays one node of an availability trace
//    (docs/scheduling.md, "Files"), sped up, so a day of availability runs in
//    minutes with retreats at exactly the trace's step boundaries.
//
// The agent's loop: poll fds() until next_evaluation(now); on a readable fd
// call on_readable() and then evaluate() at once (an owner's key press must
// start a retreat immediately, not at the next poll); at the deadline call
// evaluate().
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "piranha/agent/availability.h"
#include "piranha/agent/own_load.h"
#include "piranha/agent/sensors.h"
#include "piranha/scheduler/avail_trace.h"

namespace piranha {

struct AvailabilityConfig;

// One per agent; not thread-safe.
class AvailabilitySource {
 public:
  virtual ~AvailabilitySource() = default;

  // The verdict at `now`. `now` must not go backwards between calls.
  virtual Verdict evaluate(Clock::time_point now) = 0;

  // The latest time at which the verdict should next be evaluated: for a
  // trace, the exact real time of the next availability change; live,
  // now + the poll interval. Always > now.
  virtual Clock::time_point next_evaluation(Clock::time_point now) = 0;

  // File descriptors to poll for readability; when one is readable, call
  // on_readable() and then evaluate() at once. The set may change after
  // on_readable() or evaluate(), so fetch it again each time round the loop.
  virtual std::vector<int> fds() { return {}; }
  virtual void on_readable(int /*fd*/, Clock::time_point /*now*/) {}

  // The process groups of the piranhas this agent runs now (each piranha
  // leads its own group). Live: whose CPU to subtract from the load average.
  virtual void set_piranha_groups(std::vector<pid_t> /*pgids*/) {}
};

// Where LiveAvailability reads from; every path is injectable for tests.
struct LiveOptions {
  Thresholds thresholds;    // the paper's defaults
  double poll_seconds = 1;  // next_evaluation() = now + poll_seconds
  std::string loadavg_path = "/proc/loadavg";
  std::string proc_dir = "/proc";                                  // where the piranhas' CPU time is read
  std::vector<std::string> input_devices = {"/dev/input/event*"};  // glob patterns; empty: none
  double rescan_seconds = 10;  // how often to look for hotplugged input devices
  bool terminals = true;       // use terminal access times
  std::string terminal_dir = "/dev/pts";
  bool x11 = true;        // use the X screensaver idle time when a display is reachable
  std::string x_display;  // empty: $DISPLAY
  // Wall clock for terminal access times (which are wall-clock stamps).
  std::function<std::chrono::system_clock::time_point()> wall_clock = [] {
    return std::chrono::system_clock::now();
  };
};

// Judges the real node: Reading{loadavg - OwnLoad, smallest idle time of the
// input devices, terminals and X display} against the thresholds.
class LiveAvailability : public AvailabilitySource {
 public:
  // Opens the input devices present now; their opening counts as activity at
  // `now` (see InputWatch).
  LiveAvailability(LiveOptions options, Clock::time_point now);

  Verdict evaluate(Clock::time_point now) override;
  Clock::time_point next_evaluation(Clock::time_point now) override;
  std::vector<int> fds() override { return input_.fds(); }
  void on_readable(int fd, Clock::time_point now) override { input_.drain(fd, now); }
  void set_piranha_groups(std::vector<pid_t> pgids) override;

  // What the last evaluate() judged, and the piranhas' own load estimate, for
  // logs and tests.
  const Reading& last_reading() const { return reading_; }
  const OwnLoad& own_load() const { return own_; }

 private:
  void sample_own_cpu(Clock::time_point now);

  LiveOptions options_;
  InputWatch input_;
  XIdle x_;
  Clock::time_point next_rescan_;
  OwnLoad own_;
  std::map<pid_t, double> group_cpu_;  // last CPU seconds seen per piranha group
  double own_cpu_total_ = 0;           // CPU consumed by piranhas since the agent started
  std::optional<Clock::time_point> last_cpu_sample_;
  Reading reading_;
};

// Replays one node of an availability trace in real time, sped up.
//
// With time scale f, one trace step lasts step_seconds / f real seconds;
// `origin` is the real time at which trace step `start_step` begins. At the
// end of the trace it wraps around to step 0, like the simulator
// (docs/scheduling.md, "One simulated step"). Times before `origin` count as the start step.
class TraceAvailability : public AvailabilitySource {
 public:
  // Keeps only `node`'s periods. Throws std::invalid_argument when the trace
  // has no such node, time_scale is not > 0, or start_step is not in
  // [0, length).
  TraceAvailability(const AvailabilityTrace& trace, const std::string& node, double time_scale,
                    std::int64_t start_step, Clock::time_point origin);

  // Reason: "trace ws01: available (step 130)" or
  // "trace ws01: unavailable (step 126)", with the trace step at `now`.
  Verdict evaluate(Clock::time_point now) override;

  // The real time of the start of the next step whose availability differs
  // from the current one (found with AvailabilityTrace::next_change, across
  // the wrap-around). For a node whose availability never changes, the time
  // of the next wrap-around.
  Clock::time_point next_evaluation(Clock::time_point now) override;

  // The trace step in effect at `now`, in [0, length).
  std::int64_t step_at(Clock::time_point now) const;

 private:
  std::int64_t elapsed_steps(Clock::time_point now) const;  // steps since origin, >= 0
  Clock::time_point start_of(std::int64_t elapsed) const;   // real start of elapsed step

  AvailabilityTrace trace_;  // the one node
  std::string node_;
  double step_real_seconds_;
  std::int64_t start_step_;
  Clock::time_point origin_;
};

// Builds the source an agent's configuration asks for: TraceAvailability
// (origin `now`) for `sensor: trace`, LiveAvailability otherwise. Throws
// std::invalid_argument for a trace sensor without a loaded trace.
std::unique_ptr<AvailabilitySource> make_availability_source(const AvailabilityConfig& config,
                                                             Clock::time_point now);

}  // namespace piranha
