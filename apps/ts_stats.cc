// piranha ts stats: per-space counts and sizes from a running server.
#include <iomanip>
#include <iostream>
#include <memory>

#include "commands.h"
#include "piranha/tuplespace/client.h"

namespace piranha::apps {

void add_ts_stats(CLI::App& ts) {
  auto endpoint = std::make_shared<std::string>("tcp://127.0.0.1:7070");
  auto* cmd = ts.add_subcommand("stats", "print per-space tuple counts and sizes of a running server");
  cmd->add_option("--connect", *endpoint, "server endpoint")->capture_default_str();
  cmd->callback([endpoint] {
    ts::Client c(*endpoint);
    auto all = c.stats();
    std::cout << std::left << std::setw(32) << "space" << std::right << std::setw(12) << "tuples" << std::setw(14)
              << "bytes" << std::setw(9) << "waiters" << std::setw(8) << "leases" << std::setw(9) << "watches"
              << "\n";
    for (const auto& s : all)
      std::cout << std::left << std::setw(32) << s.name << std::right << std::setw(12) << s.tuples << std::setw(14)
                << s.bytes << std::setw(9) << s.waiters << std::setw(8) << s.leases << std::setw(9) << s.watches
                << "\n";
    if (all.empty()) std::cout << "(no spaces)\n";
  });
}

}  // namespace piranha::apps
