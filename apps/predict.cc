// piranha predict: how often each availability predictor gets the next
// window's average AP length right (docs/scheduling.md, "Availability prediction" and "Output").
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "piranha/scheduler/prediction_eval.h"
#include "piranha/scheduler/predictor.h"
#include "sched_cli.h"

namespace piranha::apps {
namespace {

struct PredictArgs {
  std::string trace, window = "10", tolerance = "0.1", stride = "0";
  std::string predictors = "REC_HIST,DTD_HIST,WTW_HIST,L_BURST,X_BURST,AVAIL";
  bool json = false;
};

void run(const PredictArgs& a) {
  using namespace schedcli;
  if (a.trace.empty()) bad_input("predict: --trace is required");
  const std::int64_t window = to_int("--window", a.window, 1);
  const double tolerance = to_real("--tolerance", a.tolerance, 0, 1e9);
  const std::int64_t stride = to_int("--stride", a.stride, 0);
  const auto names = split_list(a.predictors);
  if (names.empty()) bad_input("--predictors is empty");
  for (const auto& n : names) sched::make_predictor(n, 1, {}, 0);  // names checked before the trace is read
  const AvailabilityTrace trace = read_trace(a.trace);
  const auto scores = sched::evaluate_predictors(trace, names, window, {tolerance}, stride);
  if (a.json) {
    nlohmann::ordered_json out;
    out["window"] = window;
    out["tolerance"] = tolerance;
    nlohmann::ordered_json ps = nlohmann::ordered_json::object();
    for (const auto& s : scores)
      ps[s.predictor] = {{"fraction_matched", s.fraction(0)}, {"points", s.points}};
    out["predictors"] = ps;
    std::cout << out.dump() << "\n";
    return;
  }
  std::cout << "window " << window << ", tolerance " << tolerance << "\n"
            << std::left << std::setw(12) << "predictor" << std::right << std::setw(18) << "fraction matched"
            << std::setw(10) << "points"
            << "\n";
  for (const auto& s : scores)
    std::cout << std::left << std::setw(12) << s.predictor << std::right << std::fixed << std::setprecision(4)
              << std::setw(18) << s.fraction(0) << std::setw(10) << s.points << "\n";
}

}  // namespace

void add_predict(CLI::App& app) {
  auto a = std::make_shared<PredictArgs>();
  auto* cmd = app.add_subcommand("predict", "score availability predictors on a trace (docs/scheduling.md)");
  cmd->add_option("--trace", a->trace, "availability trace (*.avail.csv)");
  schedcli::int_option(cmd->add_option("--window", a->window, "window length n (steps)"), 1)
      ->capture_default_str();
  schedcli::real_option(cmd->add_option("--tolerance", a->tolerance, "relative tolerance, e.g. 0.1"), 0, 1e9)
      ->capture_default_str();
  cmd->add_option("--predictors", a->predictors, "comma-separated predictors (also MIX)")
      ->capture_default_str();
  schedcli::int_option(
      cmd->add_option("--stride", a->stride, "steps between evaluation points (0: the window)"), 0)
      ->capture_default_str();
  cmd->add_flag("--json", a->json, "print one JSON object on stdout");
  cmd->callback([a] { schedcli::guarded([&] { run(*a); }); });
}

}  // namespace piranha::apps
