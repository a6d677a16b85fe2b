// piranha trace synth | import | stats: making and inspecting availability
// traces (docs/scheduling.md, "Files"; docs/trace-model.md).
#include <fstream>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "piranha/scheduler/trace_tools.h"
#include "sched_cli.h"

namespace piranha::apps {
namespace {

using namespace schedcli;

// Writes a trace to `out` (a file, whole or not at all) or stdout.
void emit(const AvailabilityTrace& t, const std::string& out) {
  std::ostringstream s;
  write_trace(s, t);
  if (out.empty() || out == "-")
    std::cout << s.str();
  else
    write_whole_file(out, s.str());
}

struct SynthArgs {
  std::string nodes = "15", days = "21", seed = "1", out;
};

struct ImportArgs {
  std::string from, input, step_seconds = "60", origin = "-1", length = "0", out;
};

struct StatsArgs {
  std::string trace;
  bool json = false;
};

void synth(const SynthArgs& a) {
  sched::SynthOptions o;
  o.nodes = static_cast<int>(to_int("--nodes", a.nodes, 1));
  o.days = static_cast<int>(to_int("--days", a.days, 1));
  o.seed = static_cast<std::uint64_t>(to_int("--seed", a.seed, 0));
  emit(sched::synthesize_trace(o), a.out);
}

void import(const ImportArgs& a) {
  if (a.input.empty()) bad_input("trace import: --input is required");
  const std::int64_t step = to_int("--step-seconds", a.step_seconds, 1);
  std::ifstream in(a.input);
  if (!in) bad_input(a.input + ": cannot open");
  AvailabilityTrace t;
  if (a.from == "ap") {
    const double origin = to_real("--origin", a.origin, -1, 1e18);
    t = sched::import_ap_tuples(in, a.input, step, origin, to_int("--length", a.length, 0));
  } else if (a.from == "matrix") {
    t = sched::import_matrix(in, a.input, step);
  } else {
    bad_input("--from \"" + a.from + "\" is neither ap nor matrix");
  }
  emit(t, a.out);
}

void stats(const StatsArgs& a) {
  if (a.trace.empty()) bad_input("trace stats: --trace is required");
  const AvailabilityTrace t = read_trace(a.trace);
  const auto s = sched::trace_stats(t);
  if (a.json) {
    nlohmann::ordered_json o;
    o["nodes"] = t.nodes.size();
    o["length"] = t.length;
    o["step_seconds"] = t.step_seconds;
    o["available_fraction"] = s.available_fraction;
    o["aps"] = s.aps;
    o["ap_length"] = {{"mean", s.mean_ap},
                      {"p10", s.p10_ap},
                      {"median", s.median_ap},
                      {"p90", s.p90_ap},
                      {"max", s.max_ap}};
    nlohmann::ordered_json hist = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < s.bucket_edges.size(); ++i)
      hist.push_back({{"from", s.bucket_edges[i]}, {"count", s.bucket_counts[i]}});
    o["ap_histogram"] = hist;
    nlohmann::ordered_json per = nlohmann::ordered_json::object();
    for (std::size_t n = 0; n < t.nodes.size(); ++n) per[t.nodes[n]] = s.per_node[n];
    o["per_node"] = per;
    o["weekday_hour"] = s.weekday_hour;
    o["weekend_hour"] = s.weekend_hour;
    std::cout << o.dump() << "\n";
    return;
  }
  std::cout << std::fixed << std::setprecision(1) << a.trace << ": " << t.nodes.size() << " nodes, "
            << t.length << " steps of " << t.step_seconds << " s\n"
            << "available " << 100 * s.available_fraction << "% of node-steps, " << s.aps << " APs\n"
            << "AP length (steps): mean " << s.mean_ap << ", p10 " << s.p10_ap << ", median " << s.median_ap
            << ", p90 " << s.p90_ap << ", max " << s.max_ap << "\n\nAP length   count\n";
  for (std::size_t i = 0; i < s.bucket_edges.size(); ++i) {
    std::string range = i + 1 < s.bucket_edges.size() ? std::to_string(s.bucket_edges[i]) + "-" +
                                                            std::to_string(s.bucket_edges[i + 1] - 1)
                                                      : std::to_string(s.bucket_edges[i]) + "+";
    std::cout << std::left << std::setw(12) << range << std::right << std::setw(6) << s.bucket_counts[i]
              << "\n";
  }
  std::cout << "\nhour  weekday  weekend   (available %, step 0 = Monday 00:00)\n";
  for (std::size_t h = 0; h < 24; ++h)
    std::cout << std::setw(4) << h << std::setw(9) << 100 * s.weekday_hour[h] << std::setw(9)
              << 100 * s.weekend_hour[h] << "\n";
  std::cout << "\nnode      available %\n";
  for (std::size_t n = 0; n < t.nodes.size(); ++n)
    std::cout << std::left << std::setw(10) << t.nodes[n] << std::right << std::setw(8) << 100 * s.per_node[n]
              << "\n";
}

}  // namespace

void add_trace(CLI::App& app) {
  auto* trace = app.add_subcommand("trace", "make and inspect availability traces (*.avail.csv)");
  trace->require_subcommand(1);

  auto sa = std::make_shared<SynthArgs>();
  auto* s = trace->add_subcommand("synth", "generate a workstation-like trace (docs/trace-model.md)");
  int_option(s->add_option("--nodes", sa->nodes, "workstations"), 1)->capture_default_str();
  int_option(s->add_option("--days", sa->days, "days, starting on a Monday"), 1)->capture_default_str();
  int_option(s->add_option("--seed", sa->seed, "random seed"), 0)->capture_default_str();
  s->add_option("--out", sa->out, "output file (default: stdout)");
  s->callback([sa] { guarded([&] { synth(*sa); }); });

  auto ia = std::make_shared<ImportArgs>();
  auto* i =
      trace->add_subcommand("import", "convert recorded (\"ap\", ...) tuples or a 0/1 matrix to a trace");
  i->add_option("--from", ia->from,
                "ap (one tuple per line, seconds) | matrix (node header, one 0/1 row per step)");
  i->add_option("--input", ia->input, "input file");
  int_option(i->add_option("--step-seconds", ia->step_seconds, "seconds per step"), 1)->capture_default_str();
  real_option(i->add_option("--origin", ia->origin, "ap: the time of step 0 (default: the earliest start)"),
              -1, 1e18);
  int_option(i->add_option("--length", ia->length, "ap: trace length in steps (default: the last end)"), 0);
  i->add_option("--out", ia->out, "output file (default: stdout)");
  i->callback([ia] { guarded([&] { import(*ia); }); });

  auto ta = std::make_shared<StatsArgs>();
  auto* st =
      trace->add_subcommand("stats", "availability, AP length distribution and daily profile of a trace");
  st->add_option("--trace", ta->trace, "availability trace (*.avail.csv)");
  st->add_flag("--json", ta->json, "print one JSON object on stdout");
  st->callback([ta] { guarded([&] { stats(*ta); }); });
}

}  // namespace piranha::apps
