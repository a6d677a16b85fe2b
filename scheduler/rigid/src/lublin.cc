// The Lublin–Feitelson workload model (docs/rigid.md, "Synthetic workloads").
#include "piranha/rigid/lublin.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <numbers>
#include <ostream>
#include <stdexcept>
#include <string>

#include "piranha/scheduler/random.h"

namespace piranha::rigid {
namespace {

constexpr int kBuckets = 48;             // half hours of a day
constexpr double kBucketSeconds = 1800;  // seconds in one
constexpr int kDayStart = 11;            // the model's day runs from bucket 11
constexpr double kMaxLogRuntime = 12;    // about two days
constexpr double kMaxLogGap = 13;        // about five days

// The parameters of one job type (the paper's Table 4, the interactive
// widths scaled to the machine as the model's program does).
struct Type {
  double serial, pow2, low, med, hi, prob;  // width: serial share, power-of-two share, log2 two-stage uniform
  double a1, b1, a2, b2, pa, pb;            // log run time: hyper-gamma, p = pa * width + pb
  double aarr, barr, anum, bnum;  // arrivals: log gap gamma(aarr, barr); daily cycle gamma(anum, bnum)
};

Type batch(double log_nodes) {
  return {0.2927, 0.6686, 1.2,    log_nodes - 2, log_nodes,       0.875,  6.57,   0.823,
          639.1,  0.0156, -0.003, 0.6986,        6.0415 * 1.0519, 0.8531, 6.1271, 5.2740};
}

Type interactive(double log_nodes) {
  const double hi = log_nodes - 1.5;
  return {0.1541, 0.625,   1,      hi - 2.5,        hi,     0.705,  3.8351, 0.6605, 7.073,
          0.6856, -0.0118, 0.9156, 6.5510 * 0.9797, 0.6621, 8.9186, 3.6680};
}

// The regularized lower incomplete gamma function P(a, x) by its series.
double gamma_p(double a, double x) {
  if (x <= 0) return 0;
  double term = 1 / a, sum = term;
  for (int n = 1; n < 1000 && term > sum * 1e-16; ++n) {
    term *= x / (a + n);
    sum += term;
  }
  return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

class Model {
 public:
  explicit Model(const LublinOptions& o) : rng_(o.seed, 7), nodes_(o.nodes) {
    const double log_nodes = std::log2(static_cast<double>(o.nodes));
    types_ = {interactive(log_nodes), batch(log_nodes)};
    for (int k = 0; k < 2; ++k) {
      auto& w = arrivals_[static_cast<std::size_t>(k)].weights;
      const Type& t = types_[static_cast<std::size_t>(k)];
      double mean = 0;
      for (int i = kDayStart; i < kBuckets + kDayStart; ++i) {
        const double share = gamma_p(t.anum, (i + 0.5) / t.bnum) - gamma_p(t.anum, (i - 0.5) / t.bnum);
        w[static_cast<std::size_t>((i - 1) % kBuckets)] = share;
        mean += share / kBuckets;
      }
      for (auto& x : w) x /= mean;
    }
    advance(1);  // the batch stream first, as the model's program does
    advance(0);
  }

  LublinJob next() {
    LublinJob j;
    // The type whose next arrival comes first; interactive on a tie.
    const int k = arrivals_[1].time < arrivals_[0].time ? 1 : 0;
    j.interactive = k == 0;
    j.submit = arrivals_[static_cast<std::size_t>(k)].time;
    advance(k);
    const Type& t = types_[static_cast<std::size_t>(k)];
    j.width = width(t);
    j.runtime = runtime(t, j.width);
    return j;
  }

 private:
  struct Arrivals {
    std::array<double, kBuckets> weights{};  // each half hour's share of the arrivals, mean 1
    Time time = 0;
    int bucket = 0;
    double points = 0, remainder = 0;
  };

  double normal() {
    const double u1 = rng_.uniform01(), u2 = rng_.uniform01();
    return std::sqrt(-2 * std::log1p(-u1)) * std::cos(2 * std::numbers::pi * u2);
  }

  // Gamma(shape, scale) by Marsaglia and Tsang; every shape here is > 1.
  double gamma(double shape, double scale) {
    const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      const double x = normal();
      double v = 1 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      const double u = rng_.uniform01();
      if (u < 1 - 0.0331 * x * x * x * x || std::log(u) < 0.5 * x * x + d * (1 - v + std::log(v)))
        return d * v * scale;
    }
  }

  // The next arrival of type k: a gap of exp(gamma) seconds at the busiest
  // hour, stretched through the daily cycle's quieter buckets.
  void advance(int k) {
    Arrivals& a = arrivals_[static_cast<std::size_t>(k)];
    const Type& t = types_[static_cast<std::size_t>(k)];
    double g;
    do g = gamma(t.aarr, t.barr);
    while (g > kMaxLogGap);
    a.points += std::exp(g) / kBucketSeconds;
    double gap = 0;
    while (a.points > a.weights[static_cast<std::size_t>(a.bucket)]) {
      a.points -= a.weights[static_cast<std::size_t>(a.bucket)];
      a.bucket = (a.bucket + 1) % kBuckets;
      gap += kBucketSeconds;
    }
    const double remainder = a.points / a.weights[static_cast<std::size_t>(a.bucket)];
    gap += kBucketSeconds * (remainder - a.remainder);
    a.remainder = remainder;
    a.time = static_cast<Time>(static_cast<double>(a.time) + gap);
  }

  int width(const Type& t) {
    const double u = rng_.uniform01();
    if (u <= t.serial) return 1;
    const bool low = rng_.uniform01() <= t.prob;  // the two-stage uniform's first stage
    const double v = rng_.uniform01();
    double log2w = low ? t.low + (t.med - t.low) * v : t.med + (t.hi - t.med) * v;
    if (u <= t.serial + t.pow2) log2w = std::floor(log2w + 0.5);
    const double w = std::floor(std::exp2(log2w) + 0.5);
    return static_cast<int>(std::clamp(w, 1.0, static_cast<double>(nodes_)));
  }

  Time runtime(const Type& t, int width) {
    const double p = std::clamp(t.pa * width + t.pb, 0.0, 1.0);
    double g;
    do g = rng_.uniform01() <= p ? gamma(t.a1, t.b1) : gamma(t.a2, t.b2);
    while (g > kMaxLogRuntime);
    return static_cast<Time>(std::exp(g));
  }

  sched::Rng rng_;
  int nodes_;
  std::array<Type, 2> types_;  // 0 interactive, 1 batch
  std::array<Arrivals, 2> arrivals_;
};

void check(const LublinOptions& o) {
  if (o.jobs < 1) throw std::invalid_argument("Lublin model: jobs must be >= 1");
  if (o.nodes < 2) throw std::invalid_argument("Lublin model: nodes must be >= 2");
}

}  // namespace

std::vector<LublinJob> lublin_jobs(const LublinOptions& o) {
  check(o);
  Model m(o);
  std::vector<LublinJob> out(o.jobs);
  for (auto& j : out) j = m.next();
  return out;
}

Workload lublin_workload(const LublinOptions& o) {
  Workload w;
  w.source = "lublin(jobs=" + std::to_string(o.jobs) + ",nodes=" + std::to_string(o.nodes) +
             ",seed=" + std::to_string(o.seed) + ")";
  w.max_nodes = o.nodes;
  const auto jobs = lublin_jobs(o);
  w.jobs.reserve(jobs.size());
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    RigidJob j;
    j.id = static_cast<std::int64_t>(i + 1);
    j.submit = jobs[i].submit;
    j.runtime = jobs[i].runtime;
    j.width = jobs[i].width;
    j.line = static_cast<int>(std::min<std::size_t>(i + 7, INT32_MAX));  // after the six header lines
    w.jobs.push_back(j);
  }
  return w;
}

void write_lublin_swf(std::ostream& out, const LublinOptions& o) {
  check(o);
  out << "; Version: 2\n; Computer: Lublin-Feitelson model (piranha swf synth, docs/rigid.md)\n"
      << "; Note: seed " << o.seed << "\n; MaxJobs: " << o.jobs << "\n; MaxRecords: " << o.jobs
      << "\n; MaxNodes: " << o.nodes << "\n";
  Model m(o);
  std::string buf;
  char num[24];
  auto put = [&](std::int64_t v) { buf.append(num, std::to_chars(num, num + sizeof num, v).ptr); };
  for (std::size_t i = 1; i <= o.jobs; ++i) {
    const LublinJob j = m.next();
    put(static_cast<std::int64_t>(i));
    buf += ' ';
    put(j.submit);
    buf += " -1 ";
    put(j.runtime);
    buf += ' ';
    put(j.width);
    buf +=
        j.interactive ? " -1 -1 -1 -1 -1 1 -1 -1 -1 0 -1 -1 -1\n" : " -1 -1 -1 -1 -1 1 -1 -1 -1 1 -1 -1 -1\n";
    if (buf.size() > (1 << 16)) {
      out << buf;
      buf.clear();
    }
  }
  out << buf;
}

}  // namespace piranha::rigid
