// Turning the measured figures into the report object (internal).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "phases.h"

namespace piranha::bench {

struct Figures {
  Sizes sizes;
  Machine machine;
  std::string date;                     // ISO 8601, local time
  double load_start = 0, load_end = 0;  // 1-minute load average around the run
  ZmqFigures zmq;
  TupleSpaceFigures ts;
  std::optional<CurveFigures> curve;  // --curve
  MemoryFigures memory;
  DurableFigures durable;
  std::optional<RedisFigures> redis;
  std::vector<std::string> notes;
};

nlohmann::json make_report(const Figures& f);

}  // namespace piranha::bench
