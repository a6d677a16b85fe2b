// The piranha program's subcommands; each file registers one.
#pragma once

#include <CLI/CLI.hpp>

namespace piranha::apps {

void add_demo(CLI::App& app);
void add_ts_serve(CLI::App& ts);
void add_ts_stats(CLI::App& ts);
void add_ts_bench(CLI::App& ts);

}  // namespace piranha::apps
