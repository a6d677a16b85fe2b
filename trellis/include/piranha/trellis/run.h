// Running a program from the command line: the loop behind
// `piranha trellis run` and the examples.
//
//   trellis::RunOptions o;
//   o.hosts = {"alpha"};           // empty: every host, each linked to the others over ZeroMQ
//   o.print_events = true;
//   return trellis::run_program(program, types, o, std::cout);
#pragma once

#include <chrono>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "piranha/trellis/program.h"
#include "piranha/trellis/registry.h"

namespace piranha::trellis {

struct RunOptions {
  // The hosts to run in this process. Empty: all of the program's hosts,
  // each a FiberTrellis of its own linked to the others over ZeroMQ exactly
  // as separate processes would be (or the whole program when it has no hosts).
  std::vector<std::string> hosts;
  // Write one line per event (state changes, commands, link changes,
  // deadline misses) to `out`, flushed as it happens:
  //   state NODE VALUE | command NODE from SUPERIOR VALUE |
  //   link HOST up|down | miss TOP probe ORIGIN latency_us N
  // prefixed by "HOST: " when the process runs several hosts.
  bool print_events = false;
  // Stop after this long; otherwise run until SIGINT or SIGTERM.
  std::optional<std::chrono::milliseconds> duration;
  // Write the timing report (stats.h) of each host to `out` at the end.
  bool report = true;
};

// Runs until stopped; returns 0. Installs SIGINT and SIGTERM handlers while
// it runs. Throws InputError for an unknown host, std::runtime_error when
// an endpoint cannot be bound.
int run_program(const Program& program, const Registry& types, const RunOptions& options, std::ostream& out);

}  // namespace piranha::trellis
