// piranha swf synth: a workload in the Standard Workload Format from the
// Lublin–Feitelson model (docs/rigid.md, "Synthetic workloads").
#include <iostream>
#include <memory>
#include <sstream>

#include "commands.h"
#include "piranha/rigid/lublin.h"
#include "sched_cli.h"

namespace piranha::apps {
namespace {

struct SwfSynthArgs {
  std::string jobs = "10000", nodes = "256", seed = "0", out;
};

void synth(const SwfSynthArgs& a) {
  using namespace schedcli;
  rigid::LublinOptions o;
  o.jobs = static_cast<std::size_t>(to_int("--jobs", a.jobs, 1));
  o.nodes = static_cast<int>(to_int("--nodes", a.nodes, 2));
  o.seed = static_cast<std::uint64_t>(to_int("--seed", a.seed, 0));
  if (a.out.empty() || a.out == "-") {
    rigid::write_lublin_swf(std::cout, o);
    return;
  }
  std::ostringstream s;
  rigid::write_lublin_swf(s, o);
  write_whole_file(a.out, s.str());
}

}  // namespace

void add_swf(CLI::App& app) {
  auto* swf = app.add_subcommand("swf", "workloads in the Standard Workload Format (docs/rigid.md)");
  swf->require_subcommand(1);
  auto a = std::make_shared<SwfSynthArgs>();
  auto* s = swf->add_subcommand("synth", "rigid jobs from the Lublin-Feitelson model (docs/rigid.md)");
  s->add_option("--jobs", a->jobs, "how many jobs")->capture_default_str();
  s->add_option("--nodes", a->nodes, "the machine's size (the widest batch job)")->capture_default_str();
  s->add_option("--seed", a->seed, "random seed")->capture_default_str();
  s->add_option("--out", a->out, "output file (default: stdout)");
  s->callback([a] { schedcli::guarded([&] { synth(*a); }); });
}

}  // namespace piranha::apps
