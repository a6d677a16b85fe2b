// piranha: the one command-line program, with subcommands.
#include <iostream>

#include "commands.h"

int main(int argc, char** argv) {
  CLI::App app{"Piranha: adaptive master-worker parallelism over a Linda tuple space"};
  app.require_subcommand(1);
  piranha::apps::add_demo(app);
  auto* ts = app.add_subcommand("ts", "the tuple-space server and its tools");
  ts->require_subcommand(1);
  piranha::apps::add_ts_serve(*ts);
  piranha::apps::add_ts_stats(*ts);
  piranha::apps::add_ts_bench(*ts);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "piranha: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
