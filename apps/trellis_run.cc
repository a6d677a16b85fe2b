// piranha trellis run | check | types: run, validate and list trellis programs.
#include <iostream>
#include <memory>

#include "commands.h"
#include "piranha/nps/node_types.h"
#include "piranha/trellis/program.h"
#include "piranha/trellis/run.h"
#include "piranha/trellis/standard_types.h"

namespace piranha::apps {
namespace {

trellis::Registry standard_types() {
  trellis::Registry types;
  trellis::add_standard_types(types);
  // Listed and checked here; they act on a pool only under `piranha nps run`.
  nps::add_detached_nps_types(types);
  return types;
}

struct RunArgs {
  std::string file;
  std::vector<std::string> hosts;
  bool print = false;
  bool quiet = false;
  double seconds = 0;
};

}  // namespace

void add_trellis(CLI::App& app) {
  auto* trellis = app.add_subcommand("trellis", "the process trellis: run, check and time trellis programs");
  trellis->require_subcommand(1);
  add_trellis_run(*trellis);
  add_trellis_bench(*trellis);
}

void add_trellis_run(CLI::App& trellis) {
  auto a = std::make_shared<RunArgs>();
  auto* run =
      trellis.add_subcommand("run", "run the part of a trellis program placed on one host (or all of it)");
  run->add_option("program", a->file, "the program's YAML file")->required();
  run->add_option(
      "--host", a->hosts,
      "the host to run here (repeatable); default: every host, linked over ZeroMQ in this process");
  run->add_flag("--print", a->print, "print state changes, commands, link changes and deadline misses");
  run->add_option("--seconds", a->seconds, "stop after this long (default: until SIGINT/SIGTERM)");
  run->add_flag("--quiet", a->quiet, "no timing report at the end");
  run->callback([a] {
    trellis::Registry types = standard_types();
    trellis::Program program = trellis::load_program(a->file, types);
    trellis::RunOptions o;
    o.hosts = a->hosts;
    o.print_events = a->print;
    o.report = !a->quiet;
    if (a->seconds > 0) o.duration = std::chrono::milliseconds(static_cast<long>(a->seconds * 1000));
    trellis::run_program(program, types, o, std::cout);
  });

  auto file = std::make_shared<std::string>();
  auto* check = trellis.add_subcommand("check", "validate a trellis program; errors name the line");
  check->add_option("program", *file, "the program's YAML file")->required();
  check->callback([file] {
    trellis::Registry types = standard_types();
    trellis::Program p = trellis::load_program(*file, types);
    std::cout << *file << ": ok: " << p.nodes.size() << " nodes on "
              << (p.hosts.empty() ? std::string("one host") : std::to_string(p.hosts.size()) + " hosts")
              << "\n";
  });

  auto* list = trellis.add_subcommand("types", "list the node types `trellis run` knows");
  list->callback([] {
    for (const auto& [name, description] : standard_types().types())
      std::cout << name << "\t" << description << "\n";
  });
}

}  // namespace piranha::apps
