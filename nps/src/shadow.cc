// make_replay and estimate_mean_turnaround (shadow.h).
#include "piranha/nps/shadow.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "piranha/nps/simulate.h"
#include "piranha/scheduler/prediction_eval.h"

namespace piranha::nps {

Replay make_replay(const Observation& o, double step, std::int64_t max_steps) {
  Replay r;
  double origin = o.end;
  for (const auto& s : o.spans) origin = std::min(origin, s.start);
  for (const auto& j : o.jobs) origin = std::min(origin, j.arrival);
  r.origin = origin;
  step = std::max(step, (o.end - origin) / static_cast<double>(std::max<std::int64_t>(1, max_steps)));
  r.step = step;
  std::map<JobId, double> held;
  for (const auto& s : o.spans)
    if (s.job && s.available) held[*s.job] += s.end - s.start;
  auto at = [&](double t) { return static_cast<std::int64_t>(std::floor((t - origin) / step)); };
  r.trace.step_seconds = std::max<std::int64_t>(1, std::llround(step));
  r.trace.length = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil((o.end - origin) / step)));
  r.trace.nodes = o.nodes;
  r.trace.periods.resize(o.nodes.size());
  for (std::size_t n = 0; n < o.nodes.size(); ++n) {
    std::vector<StepPeriod> v;
    for (const auto& s : o.spans) {
      if (s.node != o.nodes[n] || !s.available) continue;
      // Steps whose middle, origin + (i + 0.5) * step, lies in [start, end).
      const auto first =
          std::max<std::int64_t>(0, static_cast<std::int64_t>(std::ceil((s.start - origin) / step - 0.5)));
      const auto last = std::min<std::int64_t>(
          r.trace.length, static_cast<std::int64_t>(std::ceil((s.end - origin) / step - 0.5)));
      if (first < last) v.push_back({first, last});
    }
    std::sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.start < b.start; });
    for (const auto& p : v)
      if (!r.trace.periods[n].empty() && p.start <= r.trace.periods[n].back().end)
        r.trace.periods[n].back().end = std::max(r.trace.periods[n].back().end, p.end);
      else
        r.trace.periods[n].push_back(p);
  }
  for (const auto& j : o.jobs) {
    if (j.tasks < 1) continue;
    // A job that ended before it was seen measured still held nodes.
    const double task_time = std::max(j.task_time, held[j.id] / static_cast<double>(j.tasks));
    if (!(task_time > 0)) continue;
    sched::Job s;
    s.id = j.id;
    s.arrival = std::clamp<std::int64_t>(at(j.arrival), 0, r.trace.length - 1);
    const auto k = task_time >= step ? 1 : static_cast<std::int64_t>(std::ceil(step / task_time));
    s.tasks = (j.tasks + k - 1) / k;
    s.task_time = std::max<std::int64_t>(1, std::llround(static_cast<double>(k) * task_time / step));
    r.jobs.push_back(s);
    r.work[j.id] = static_cast<double>(s.tasks * s.task_time) * step;  // as simulated: whole steps
    if (j.end) r.ended.push_back(j.id);
    if (!j.requirement.empty()) r.requirements.requirements[j.id] = j.requirement;
  }
  r.requirements.attributes = o.attributes;
  return r;
}

std::map<JobId, double> replay_turnarounds(const Replay& r, const ShadowPlan& plan, std::uint64_t seed) {
  if (r.ended.empty() || r.trace.nodes.empty()) return {};
  sched::SimOptions o;
  o.period = std::max<std::int64_t>(1, std::llround(plan.period / r.step));
  o.on_events = plan.on_events;
  o.window = std::min(o.window, r.trace.length);  // a short observation predicts over what it has
  // An ended job still unfinished at twice the observation's length counts
  // with that length: the replay's cost stays bounded when live jobs have
  // much work left.
  o.max_steps = 2 * r.trace.length;
  const sched::SimResult result =
      simulate_program(std::nullopt, r.trace, r.jobs, plan.strategy, o, seed, {}, r.requirements);
  std::map<JobId, double> turnaround;
  for (const auto& j : result.jobs)
    turnaround[j.id] = static_cast<double>(j.completion.value_or(result.steps) - j.arrival) * r.step;
  std::map<JobId, double> out;
  for (JobId id : r.ended) out[id] = turnaround[id];
  return out;
}

namespace {
std::optional<double> mean_of(const std::map<JobId, double>& each) {
  if (each.empty()) return std::nullopt;
  double sum = 0;
  for (const auto& [id, t] : each) sum += t;
  return sum / static_cast<double>(each.size());
}
}  // namespace

std::optional<double> estimate_mean_turnaround(const Replay& r, const ShadowPlan& plan, std::uint64_t seed) {
  return mean_of(replay_turnarounds(r, plan, seed));
}

ReplayOutcome run_round(const ReplayRound& round) {
  ReplayOutcome out;
  const Replay replay = make_replay(round.observation, round.step, round.max_steps);
  out.step = replay.step;
  for (JobId id : replay.ended) out.work[id] = replay.work.at(id);
  for (const auto& [id, plan] : round.plans) {
    try {
      out.turnarounds[id] = replay_turnarounds(replay, plan, round.seed);
      out.estimates[id] = mean_of(out.turnarounds[id]);
    } catch (const std::exception&) {
      out.estimates[id] = std::nullopt;  // a strategy the replay cannot run (never one that ran live)
    }
  }
  for (const auto& [node, predictor] : round.predictors) {
    Observation one;
    one.nodes = {node};
    one.end = round.observation.end;
    for (const auto& s : round.observation.spans)
      if (s.node == node) one.spans.push_back(s);
    Replay r = make_replay(one, round.history_step, 1'000'000);
    r.trace.step_seconds = round.step_seconds;
    try {
      const auto scores =
          sched::evaluate_predictors(r.trace, {predictor.first}, predictor.second, {round.tolerance});
      out.accuracy[node] = ReplayOutcome::Accuracy{scores.at(0).fraction(0), scores.at(0).points};
    } catch (const std::exception&) {
      out.accuracy[node] = std::nullopt;  // too little history yet for the predictor's look-back
    }
  }
  return out;
}

}  // namespace piranha::nps
