#include "piranha/scheduler/predictor.h"

#include <doctest/doctest.h>

#include <algorithm>

#include "brute_force.h"
#include "piranha/scheduler/mix_predictor.h"
#include "piranha/scheduler/random.h"

using namespace piranha::sched;
using piranha::InputError;

TEST_CASE("Calendar: day and week in steps, rounded") {
  CHECK(Calendar::for_step_seconds(60).day == 1440);
  CHECK(Calendar::for_step_seconds(60).week == 10080);
  CHECK(Calendar::for_step_seconds(7).day == 12343);  // 86400 / 7 = 12342.86
  CHECK(Calendar::for_step_seconds(7).week == 86400);
}

TEST_CASE("predictors: each equals spec §4's definition, over a small calendar") {
  const Calendar cal{50, 150};
  const std::int64_t w = 7;
  std::vector<std::unique_ptr<Predictor>> ps;
  for (const auto& name : paper_predictors()) ps.push_back(make_predictor(name, w, cal, 1));
  std::int64_t keep = 0;
  for (auto& p : ps) keep = std::max(keep, p->lookback());
  CHECK(keep == 150);
  NodeHistory h(keep + 1);
  std::vector<bool> v;
  Rng rng(4);
  bool state = false;
  for (int step = 0; step < 600; ++step) {
    const std::int64_t t = h.now();
    auto aps = brute::ended_aps(v);
    std::vector<double> expect{
        brute::average_ap_length(v, t - w, t),
        brute::average_ap_length(v, t - 50, std::min(t - 50 + w, t)),
        brute::average_ap_length(v, t - 150, std::min(t - 150 + w, t)),
        aps.empty() ? double(w) : double(std::min<std::int64_t>(aps.back(), w)),
        0,
        double(w),
    };
    double x = 0;
    for (std::size_t i = 0; i < aps.size(); ++i) x = i == 0 ? double(aps[0]) : 0.5 * double(aps[i]) + 0.5 * x;
    expect[4] = aps.empty() ? double(w) : std::min(x, double(w));
    for (std::size_t i = 0; i < ps.size(); ++i) {
      INFO(ps[i]->name() << " at " << t);
      REQUIRE(ps[i]->predict(0, h) == doctest::Approx(expect[i]));
    }
    if (rng.bernoulli(0.15)) state = !state;
    h.observe(state);
    v.push_back(state);
  }
}

TEST_CASE("make_predictor: case-insensitive, unknown names are an error naming the input") {
  CHECK(make_predictor("rec_hist", 5, {}, 1)->name() == "REC_HIST");
  CHECK(make_predictor("Mix", 5, {}, 1)->name() == "MIX");
  CHECK_THROWS_WITH_AS(make_predictor("REC", 5, {}, 1),
                       doctest::Contains("predictor \"REC\": unknown predictor (known: "), InputError);
}

TEST_CASE("MIX: learns to trust the expert that is right on a node") {
  // A strict daily rhythm with noise in the recent past: DTD_HIST is always
  // right, REC_HIST often wrong; MIX's weight on DTD must end up the highest.
  const Calendar cal{40, 280};
  const std::int64_t w = 5;
  MixPredictor mix(w, cal, 1);
  NodeHistory h(mix.lookback() + 1);
  Rng rng(9);
  std::vector<bool> day(40);
  for (auto&& b : day) b = rng.bernoulli(0.6);
  for (int step = 0; step < 40 * 30; ++step) {
    h.observe(day[static_cast<std::size_t>(step % 40)]);
    mix.observe(0, h);
  }
  auto wts = mix.weights(0);
  CHECK(wts[1] == doctest::Approx(1.0));  // DTD_HIST
  CHECK(wts[0] < 1.0);
  // And its prediction is then DTD_HIST's.
  SimplePredictor dtd(SimplePredictor::Kind::DtdHist, w, cal);
  CHECK(mix.predict(0, h) == doctest::Approx(dtd.predict(h)));
}
