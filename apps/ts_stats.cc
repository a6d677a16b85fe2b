// piranha ts stats: per-space counts and sizes from a running server.
#include <iomanip>
#include <iostream>
#include <memory>

#include "commands.h"
#include "pool_command.h"

namespace piranha::apps {

void add_ts_stats(CLI::App& ts) {
  auto* cmd = ts.add_subcommand("stats", "print per-space tuple counts and sizes of a running server");
  auto endpoint = add_server_option(*cmd, "--server,--connect");
  cmd->callback([endpoint] {
    run_command("ts stats", *endpoint, [&] {
      auto c = connect(*endpoint);
      auto all = c->stats();
      std::cout << std::left << std::setw(32) << "space" << std::right << std::setw(12) << "tuples"
                << std::setw(14) << "bytes" << std::setw(9) << "waiters" << std::setw(8) << "leases"
                << std::setw(9) << "watches"
                << "\n";
      for (const auto& s : all)
        std::cout << std::left << std::setw(32) << s.name << std::right << std::setw(12) << s.tuples
                  << std::setw(14) << s.bytes << std::setw(9) << s.waiters << std::setw(8) << s.leases
                  << std::setw(9) << s.watches << "\n";
      if (all.empty()) std::cout << "(no spaces)\n";
      return 0;
    });
  });
}

}  // namespace piranha::apps
