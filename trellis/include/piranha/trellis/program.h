// Program: a trellis program's topology, and its YAML form.
//
//   program: cluster            # a name, for reports
//   deadline_ms: 5              # optional soft deadline: probe -> top
//   heartbeat_ms: 100           # optional, link heartbeat period
//   link_timeout_ms: 1000       # optional, silence after which a link is Down
//   hosts:                      # optional; without it every node is local
//     alpha: tcp://127.0.0.1:7301
//     beta:  tcp://127.0.0.1:7302
//   nodes:
//     - name: load_alpha
//       type: load              # a type registered in the Registry
//       host: alpha             # required when there are hosts
//       probe_every_ms: 500     # optional: the host probes this node periodically
//       params: {threshold: 2}  # optional: handed to the type as Params
//     - name: summary
//       type: summary
//       host: beta
//       inferiors: [load_alpha] # the nodes it watches (and may command)
//
// Loading validates everything and reports the first error as an InputError
// (piranha/base/input_error.h) naming the line: malformed YAML, unknown keys, unknown type, duplicate node
// name, missing inferior, unknown host, bad or unknown parameter, and cycles
// in the inferior-superior graph (the cycle is named: a -> b -> a).
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/base/input_error.h"
#include "piranha/trellis/node.h"
#include "piranha/trellis/value.h"

namespace piranha::trellis {

class Registry;

struct NodeSpec {
  std::string name;
  std::string type;
  std::string host;  // empty when the program has no hosts
  std::vector<std::string> inferiors;
  Value::Map params;
  std::optional<std::chrono::milliseconds> probe_every;
  // Where it was written (1-based; 0 for programs built in code).
  int line = 0;
  std::map<std::string, int, std::less<>> param_lines;
  std::vector<int> inferior_lines;
};

struct HostSpec {
  std::string name;
  std::string endpoint;  // a ZeroMQ endpoint this host binds, e.g. tcp://127.0.0.1:7301
  int line = 0;
};

struct Program {
  std::string name;
  std::string source = "<program>";  // file name, for messages
  std::vector<HostSpec> hosts;
  std::vector<NodeSpec> nodes;
  // Soft deadline for a probe's effect to reach a top node (one with no superiors).
  std::optional<Duration> deadline;
  std::chrono::milliseconds heartbeat{100};
  std::chrono::milliseconds link_timeout{1000};

  // Index of the node or host named `name`, or -1.
  int node_index(std::string_view name) const;
  int host_index(std::string_view name) const;
};

// Parses and validates YAML text. `source` names it in messages.
// Throws InputError.
Program parse_program(std::string_view yaml, const Registry& types, std::string source = "<program>");
// Reads and parses a file. Throws InputError (also when it cannot be read).
Program load_program(const std::string& path, const Registry& types);
// Checks a program built in code (or edited after parsing); parse_program
// already calls it. Throws InputError.
void validate(const Program& program, const Registry& types);

}  // namespace piranha::trellis
