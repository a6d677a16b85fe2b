#include "piranha/runtime/node_liveness.h"

#include <doctest/doctest.h>

using piranha::Liveness;
using piranha::node_liveness;

TEST_CASE("node liveness: suspect after one missed beat of the node's own interval, stale after 30 s") {
  // A 10 s beat (the default): heard until 15 s of silence.
  CHECK(node_liveness(100, 100 + 14.9, 10) == Liveness::Heard);
  CHECK(node_liveness(100, 100 + 15, 10) == Liveness::Heard);
  CHECK(node_liveness(100, 100 + 15.1, 10) == Liveness::Suspect);
  CHECK(node_liveness(100, 100 + 30, 10) == Liveness::Suspect);
  CHECK(node_liveness(100, 100 + 30.1, 10) == Liveness::Stale);
  // A 2 s beat: "updated 4 s ago" is two beats missed.
  CHECK(node_liveness(100, 100 + 2.9, 2) == Liveness::Heard);
  CHECK(node_liveness(100, 100 + 4, 2) == Liveness::Suspect);
  // A very fast beat: not suspect within a second.
  CHECK(node_liveness(100, 100 + 0.9, 0.05) == Liveness::Heard);
  CHECK(node_liveness(100, 100 + 1.1, 0.05) == Liveness::Suspect);
  // Without a known interval: the default's.
  CHECK(node_liveness(100, 100 + 14) == Liveness::Heard);
  CHECK(node_liveness(100, 100 + 16) == Liveness::Suspect);
}
