#include <algorithm>
#include <cmath>

#include "piranha/scheduler/random.h"
#include "piranha/scheduler/trace_tools.h"

namespace piranha::sched {
namespace {

constexpr std::int64_t kDay = 1440;

// One node's minutes, true = available; sessions paint unavailable stretches.
class Painter {
 public:
  Painter(std::int64_t length, Rng& rng) : up_(static_cast<std::size_t>(length), true), rng_(rng) {}

  // The owner is present over [a, b): use bursts alternate with idle gaps so
  // that about `busy` of the time is in use.
  void session(std::int64_t a, std::int64_t b, double busy, const SynthOptions& o) {
    const double mean_gap = o.short_gap_share * o.short_gap_mean + (1 - o.short_gap_share) * o.long_gap_mean;
    const double mean_use = mean_gap * busy / (1 - busy);
    bool in_use = rng_.bernoulli(busy);
    for (std::int64_t t = a; t < b;) {
      double len;
      if (in_use)
        len = rng_.exponential(mean_use);
      else
        len = rng_.exponential(rng_.bernoulli(o.short_gap_share) ? o.short_gap_mean : o.long_gap_mean);
      // A pause shorter than a minute does not make the machine available
      // (the paper required 60 s of keyboard idleness); every stretch is >= 1 step.
      const auto steps = std::max<std::int64_t>(1, std::llround(len));
      if (in_use) paint(t, std::min(b, t + steps));
      t += steps;
      in_use = !in_use;
    }
  }

  void paint(std::int64_t a, std::int64_t b) {
    a = std::max<std::int64_t>(a, 0);
    b = std::min<std::int64_t>(b, static_cast<std::int64_t>(up_.size()));
    for (std::int64_t t = a; t < b; ++t) up_[static_cast<std::size_t>(t)] = false;
  }

  std::vector<StepPeriod> periods() const {
    std::vector<StepPeriod> out;
    for (std::size_t t = 0; t < up_.size(); ++t) {
      if (!up_[t]) continue;
      const auto s = static_cast<std::int64_t>(t);
      if (!out.empty() && out.back().end == s)
        out.back().end = s + 1;
      else
        out.push_back({s, s + 1});
    }
    return out;
  }

 private:
  std::vector<bool> up_;
  Rng& rng_;
};

std::int64_t minute_of(double hour) {
  return std::llround(hour * 60);
}

}  // namespace

AvailabilityTrace synthesize_trace(const SynthOptions& o) {
  AvailabilityTrace t;
  t.step_seconds = 60;
  t.length = static_cast<std::int64_t>(o.days) * kDay;
  for (int n = 0; n < o.nodes; ++n) {
    Rng rng(o.seed, 1000 + static_cast<std::uint64_t>(n));
    // The owner's habits, fixed for the whole trace.
    const double arrive = o.arrive_min + (o.arrive_max - o.arrive_min) * rng.uniform01();
    const double leave = o.leave_min + (o.leave_max - o.leave_min) * rng.uniform01();
    const double lunch = o.lunch_min + (o.lunch_max - o.lunch_min) * rng.uniform01();
    const double busy = o.busy_min + (o.busy_max - o.busy_min) * rng.uniform01();
    const bool nightly = rng.bernoulli(o.nightly_share);
    const double nightly_at = 2 + 2 * rng.uniform01();
    const double nightly_len =
        o.nightly_length_min + (o.nightly_length_max - o.nightly_length_min) * rng.uniform01();
    Painter p(t.length, rng);
    for (int d = 0; d < o.days; ++d) {
      const std::int64_t day0 = static_cast<std::int64_t>(d) * kDay;
      const bool weekend = d % 7 >= 5;
      if (nightly)
        p.paint(day0 + minute_of(nightly_at), day0 + minute_of(nightly_at) + std::llround(nightly_len));
      if (weekend) {
        if (rng.bernoulli(o.weekend_visit)) {
          const double at = 10 + 6 * rng.uniform01();
          const double len =
              o.weekend_length_min + (o.weekend_length_max - o.weekend_length_min) * rng.uniform01();
          p.session(day0 + minute_of(at), day0 + minute_of(at) + std::llround(len), busy, o);
        }
        continue;
      }
      if (rng.bernoulli(o.presence)) {
        // Daily jitter of +-20 minutes around the owner's habits.
        const auto jitter = [&] { return std::llround(40 * rng.uniform01()) - 20; };
        const std::int64_t in = day0 + minute_of(arrive) + jitter(), out = day0 + minute_of(leave) + jitter();
        const std::int64_t l0 = day0 + minute_of(lunch) + jitter();
        const std::int64_t l1 =
            l0 +
            std::llround(o.lunch_length_min + (o.lunch_length_max - o.lunch_length_min) * rng.uniform01());
        p.session(in, std::min(l0, out), busy, o);
        if (l1 < out) p.session(l1, out, busy, o);
      }
      if (rng.bernoulli(o.evening_session)) {
        const double at = 20 + 3 * rng.uniform01();
        const double len =
            o.evening_length_min + (o.evening_length_max - o.evening_length_min) * rng.uniform01();
        p.session(day0 + minute_of(at), day0 + minute_of(at) + std::llround(len), busy, o);
      }
    }
    char name[16];
    std::snprintf(name, sizeof name, "ws%02d", n + 1);
    t.nodes.push_back(name);
    t.periods.push_back(p.periods());
  }
  return t;
}

}  // namespace piranha::sched
