// What the picks assume about a running job's end (docs/rigid.md,
// "Predictions"), shared by EASY's shadow and conservative backfilling.
#pragma once

#include <algorithm>

#include "piranha/rigid/pick.h"

namespace piranha::rigid {

// A running job's predicted end: one that has overrun its prediction ends at
// now + 1 at the earliest; one without a prediction never.
inline Time end_of(const RunningJob& r, Time now) {
  return r.predicted_end == kUnknown ? kNever : std::max(r.predicted_end, now + 1);
}

// Saturating now + length; kUnknown length lasts for ever.
inline Time finish(Time now, Time length) {
  return length == kUnknown || length >= kNever - now ? kNever : now + length;
}

}  // namespace piranha::rigid
