#include "piranha/scheduler/simulator.h"

#include <algorithm>
#include <string>

#include "piranha/base/input_error.h"
#include "piranha/scheduler/decision.h"
#include "piranha/scheduler/node_history.h"
#include "piranha/scheduler/pool_model.h"
#include "piranha/scheduler/predictor.h"

namespace piranha::sched {
namespace {

// Predictions from the nodes' histories, as a strategy sees them at step t.
class HistoryOutlook : public NodeOutlook {
 public:
  HistoryOutlook(const std::vector<NodeHistory>& h, const Predictor& p, std::int64_t window)
      : h_(h), p_(p), window_(window) {}
  double ap_length(std::size_t n) const override { return p_.predict(n, h_[n]); }
  double available_fraction(std::size_t n) const override { return h_[n].available_fraction(window_); }

 private:
  const std::vector<NodeHistory>& h_;
  const Predictor& p_;
  std::int64_t window_;
};

}  // namespace

void validate(const SimOptions& o, const AvailabilityTrace& trace) {
  if (o.period < 1) throw InputError("--period", std::to_string(o.period) + " must be at least 1");
  if (o.window < 1) throw InputError("--window", std::to_string(o.window) + " must be at least 1");
  if (o.window > trace.length)
    throw InputError("--window", std::to_string(o.window) + " is longer than the trace (" +
                                     std::to_string(trace.length) + " steps)");
  if (o.start < 0 || o.start >= trace.length)
    throw InputError("--start", std::to_string(o.start) + " is outside the trace (0.." +
                                    std::to_string(trace.length - 1) + ")");
  if (o.max_steps < 0) throw InputError("--max-steps", std::to_string(o.max_steps) + " must not be negative");
  if (trace.nodes.empty()) throw InputError("--trace", "the trace has no nodes");
  make_predictor(o.predictor, o.window, Calendar{}, 0);  // throws InputError for an unknown name
}

SimResult simulate(const AvailabilityTrace& trace, const std::vector<Job>& jobs, Strategy& strategy,
                   const SimOptions& opt, std::uint64_t seed) {
  PoolModel model(trace, jobs, opt, strategy.name(), seed);
  const std::size_t nodes = model.nodes();

  // Predictions are kept up only for strategies that read them.
  const bool outlook_needed = strategy.uses_outlook();
  std::unique_ptr<Predictor> predictor;
  std::vector<NodeHistory> history;
  std::optional<HistoryOutlook> outlook;
  if (outlook_needed) {
    const std::string name = strategy.predictor().empty() ? opt.predictor : strategy.predictor();
    predictor = make_predictor(name, opt.window, Calendar::for_step_seconds(trace.step_seconds), nodes);
    history.assign(nodes, NodeHistory(std::max(predictor->lookback(), opt.window) + 1));
    outlook.emplace(history, *predictor, opt.window);
  }
  Rng rng(seed, 2);
  InvocationBuilder builder;

  while (model.running()) {
    const std::int64_t t = model.now();
    const bool event = model.arrive();
    // Step 2: the strategy, from the queue and availability at steps < t.
    if (t % opt.period == 0 || (opt.on_events && event)) {
      model.fill(builder);
      model.apply(
          builder.assign(strategy, static_cast<double>(t), outlook ? &*outlook : nullptr, &rng, opt.spill));
    }
    model.step();
    if (outlook_needed)
      for (std::size_t n = 0; n < nodes; ++n) {
        history[n].observe(model.was_available(n));
        predictor->observe(n, history[n]);
      }
    if (opt.progress && t > 0 && t % opt.progress_every == 0) opt.progress(t);
  }
  return model.result();
}

}  // namespace piranha::sched
