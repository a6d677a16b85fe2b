// Node types every trellis host knows (the ones `piranha trellis run` offers):
//
//   counter   a recalculation caused by a probe: state += step (params:
//             step = 1; probes that arrive together count once); a command
//             with an integer sets the state to it. State: an integer.
//   constant  any activation: state = params.value.
//   sum       state = the sum of its inferiors' numeric states whose links
//             are up (an integer when all are integers, else a double).
//             With params.relay: true it also passes each command on to
//             every inferior.
//   watch     state = a map from inferior name to its state, or the string
//             "down" while the link to it is down.
//   relay     a command: state = its data, and the same command goes to
//             every inferior (a command bus down the trellis).
//   limit     state = the sum of its inferiors' numeric states; when it is at
//             least params.limit, commands every inferior with params.reset
//             (default 0) -- a sensor-actuator loop in one node.
#pragma once

#include "piranha/trellis/registry.h"

namespace piranha::trellis {

// Adds the types above to `types`.
void add_standard_types(Registry& types);

}  // namespace piranha::trellis
