// piranha ts bench: placeholder until bench/ lands.
#include "commands.h"

namespace piranha::apps {
void add_ts_bench(CLI::App& ts) {
  auto* cmd = ts.add_subcommand("bench", "benchmark the tuple space against raw ZeroMQ and Redis");
  cmd->callback([] { throw CLI::RuntimeError("bench: not built yet", 2); });
}
}  // namespace piranha::apps
