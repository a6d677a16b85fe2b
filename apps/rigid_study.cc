// piranha sim rigid-study: each seed's main experiment on one SWF workload,
// as a self-contained HTML report (docs/rigid.md, "The study").
#include <iostream>
#include <memory>

#include "commands.h"
#include "piranha/rigid/report.h"
#include "sched_cli.h"

namespace piranha::apps {

void add_sim_rigid_study(CLI::App& app) {
  CLI::App* sim = sim_group(app);
  struct Args {
    std::string swf, report;
  };
  auto a = std::make_shared<Args>();
  auto* cmd = sim->add_subcommand(
      "rigid-study", "reproduce seeds 000, 001, 002 and 004 on a 256-node SWF workload as an HTML report");
  cmd->add_option("--swf", a->swf, "the workload, e.g. data/lublin_256.swf");
  cmd->add_option("--report", a->report, "write the HTML report here");
  schedcli::add_progress_flag(*cmd);
  cmd->callback([a] {
    schedcli::guarded([&] {
      if (a->swf.empty()) schedcli::bad_input("sim rigid-study: --swf is required");
      if (a->report.empty()) schedcli::bad_input("sim rigid-study: --report is required");
      const rigid::Workload w = rigid::read_swf(a->swf);
      rigid::check_fits(w, rigid::single_site(256));
      schedcli::Progress progress("sim rigid-study");
      rigid::StudyOptions o;
      o.progress = [&](const std::string& what, double f) { progress.update(f, what); };
      const rigid::StudyResult result = rigid::run_study(w, o);
      progress.finish();
      schedcli::write_whole_file(a->report, rigid::render_study_report(result, rigid::judge(result)));
    });
  });
}

}  // namespace piranha::apps
