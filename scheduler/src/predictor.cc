#include "piranha/scheduler/predictor.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "piranha/scheduler/mix_predictor.h"

namespace piranha::sched {

Calendar Calendar::for_step_seconds(std::int64_t step_seconds) {
  const double s = static_cast<double>(std::max<std::int64_t>(step_seconds, 1));
  return {std::max<std::int64_t>(1, std::llround(86400.0 / s)),
          std::max<std::int64_t>(1, std::llround(604800.0 / s))};
}

void Predictor::observe(std::size_t, const NodeHistory&) {}

const std::vector<std::string>& paper_predictors() {
  static const std::vector<std::string> names{"REC_HIST", "DTD_HIST", "WTW_HIST",
                                              "L_BURST",  "X_BURST",  "AVAIL"};
  return names;
}

const std::vector<std::string>& all_predictors() {
  static const std::vector<std::string> names{"REC_HIST", "DTD_HIST", "WTW_HIST", "L_BURST",
                                              "X_BURST",  "AVAIL",    "MIX"};
  return names;
}

SimplePredictor::SimplePredictor(Kind kind, std::int64_t window, const Calendar& calendar)
    : Predictor(window), kind_(kind), calendar_(calendar) {}

std::string SimplePredictor::name() const {
  return paper_predictors()[static_cast<std::size_t>(kind_)];
}

std::int64_t SimplePredictor::lookback() const {
  switch (kind_) {
    case Kind::DtdHist: return calendar_.day;
    case Kind::WtwHist: return calendar_.week;
    default: return window_;
  }
}

double SimplePredictor::predict(std::size_t, const NodeHistory& history) const {
  return predict(history);
}

double SimplePredictor::predict(const NodeHistory& h) const {
  const std::int64_t t = h.now(), w = window_;
  // History windows never reach past now: a strategy sees only steps < t.
  auto past = [&](std::int64_t back) { return h.average_ap_length(t - back, std::min(t - back + w, t)); };
  switch (kind_) {
    case Kind::RecHist: return past(w);
    case Kind::DtdHist: return past(calendar_.day);
    case Kind::WtwHist: return past(calendar_.week);
    case Kind::LBurst: {
      auto l = h.last_ap();
      return l ? static_cast<double>(std::min(*l, w)) : static_cast<double>(w);
    }
    case Kind::XBurst: {
      auto x = h.burst_average();
      return x ? std::min(*x, static_cast<double>(w)) : static_cast<double>(w);
    }
    case Kind::Avail: return static_cast<double>(w);
  }
  return 0;
}

std::unique_ptr<Predictor> make_predictor(std::string_view name, std::int64_t window,
                                          const Calendar& calendar, std::size_t nodes) {
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  const auto& simple = paper_predictors();
  if (auto it = std::find(simple.begin(), simple.end(), upper); it != simple.end())
    return std::make_unique<SimplePredictor>(static_cast<SimplePredictor::Kind>(it - simple.begin()), window,
                                             calendar);
  if (upper == "MIX") return std::make_unique<MixPredictor>(window, calendar, nodes);
  std::string known;
  for (const auto& n : all_predictors()) known += (known.empty() ? "" : ", ") + n;
  throw InputError("predictor \"" + std::string(name) + "\"", "unknown predictor (known: " + known + ")");
}

}  // namespace piranha::sched
