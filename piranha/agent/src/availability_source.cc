#include "piranha/agent/availability_source.h"

#include <stdexcept>

#include "piranha/agent/agent_config.h"

namespace piranha {

std::unique_ptr<AvailabilitySource> make_availability_source(const AvailabilityConfig& config,
                                                             Clock::time_point now) {
  if (config.sensor == SensorKind::Trace) {
    if (!config.trace || !config.trace->trace)
      throw std::invalid_argument("the trace sensor needs a loaded trace (availability.trace.file)");
    const TraceSensorConfig& t = *config.trace;
    return std::make_unique<TraceAvailability>(*t.trace, t.node, t.time_scale, t.start_step, now);
  }
  LiveOptions options;
  options.thresholds = config.thresholds;
  options.poll_seconds = config.poll_seconds;
  options.input_devices = config.input_devices;
  options.terminals = config.terminals;
  options.x11 = config.x11;
  return std::make_unique<LiveAvailability>(std::move(options), now);
}

}  // namespace piranha
