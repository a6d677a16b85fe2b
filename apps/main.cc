// piranha: the one command-line program, with subcommands.
#include <iostream>
#include <string>

#include "commands.h"
#include "piranha/base/input_error.h"

int main(int argc, char** argv) {
  CLI::App app{"Piranha " PIRANHA_VERSION ": adaptive master-worker parallelism over a Linda tuple space"};
  app.set_version_flag("--version", "piranha " PIRANHA_VERSION,
                       "print the version (piranha " PIRANHA_VERSION ") and exit");
  app.require_subcommand(1);
  piranha::apps::add_demo(app);
  piranha::apps::add_agent(app);
  piranha::apps::add_submit(app);
  piranha::apps::add_jobs(app);
  piranha::apps::add_nodes(app);
  piranha::apps::add_cancel(app);
  piranha::apps::add_release(app);
  piranha::apps::add_owner(app);
  piranha::apps::add_sim_piranha(app);
  piranha::apps::add_sim_rigid(app);
  piranha::apps::add_sim_rigid_study(app);
  piranha::apps::add_swf(app);
  piranha::apps::add_predict(app);
  piranha::apps::add_trace(app);
  piranha::apps::add_study(app);
  piranha::apps::add_trellis(app);
  piranha::apps::add_nps(app);
  piranha::apps::add_keys(app);
  auto* ts = app.add_subcommand("ts", "the tuple-space server and its tools");
  ts->require_subcommand(1);
  piranha::apps::add_ts_demo(*ts);
  piranha::apps::add_ts_serve(*ts);
  piranha::apps::add_ts_stats(*ts);
  piranha::apps::add_ts_bench(*ts);
  // CLI11 reports an unknown command word only as "a subcommand is required";
  // name it instead.
  CLI::App* level = &app;
  for (int i = 1; i < argc; ++i) {
    std::string word = argv[i];
    if (word.empty() || word[0] == '-') break;
    CLI::App* sub = nullptr;
    for (CLI::App* s : level->get_subcommands([](CLI::App*) { return true; }))
      if (s->get_name() == word) sub = s;
    if (!sub) {
      std::cerr << "piranha: unknown command \"" << word << "\"; see " << argv[0] << " "
                << (level == &app ? "" : level->get_name() + " ") << "--help\n";
      return 2;
    }
    if (sub->get_subcommands([](CLI::App*) { return true; }).empty()) break;
    level = sub;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // A command's own status (CLI::RuntimeError) passes through; a usage
    // error exits 2, as an unknown command word does, not CLI11's 105..
    int rc = app.exit(e);
    return rc == 0 || e.get_name() == "RuntimeError" ? rc : 2;
  } catch (const piranha::InputError& e) {
    // Bad input is exit status 2 whichever command read it.
    std::cerr << "piranha: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "piranha: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
