// The Lublin–Feitelson model: deterministic, within its bounds, and near the
// paper's shares over many jobs (generous bounds: a wrong parameter or a
// swapped job type moves them well outside).
#include "piranha/rigid/lublin.h"

#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

namespace piranha::rigid {

TEST_CASE("Lublin model: the same seed gives the same jobs, another seed others") {
  LublinOptions o;
  o.jobs = 200;
  const auto a = lublin_jobs(o), b = lublin_jobs(o);
  o.seed = 1;
  const auto c = lublin_jobs(o);
  bool same = true, differs = false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    same = same && a[i].submit == b[i].submit && a[i].runtime == b[i].runtime && a[i].width == b[i].width;
    differs = differs || a[i].submit != c[i].submit || a[i].runtime != c[i].runtime;
  }
  CHECK(same);
  CHECK(differs);
  o.jobs = 0;
  CHECK_THROWS_AS(lublin_jobs(o), std::invalid_argument);
}

TEST_CASE("Lublin model: widths, run times and arrivals within the model's bounds and shares") {
  LublinOptions o;
  o.jobs = 20000;
  o.nodes = 256;
  const auto jobs = lublin_jobs(o);
  std::size_t serial = 0, pow2 = 0, interactive = 0;
  double area = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = jobs[i];
    REQUIRE(j.width >= 1);
    REQUIRE(j.width <= 256);
    REQUIRE(j.runtime >= 1);
    REQUIRE(j.runtime <= std::exp(12.0));
    if (i > 0) REQUIRE(j.submit >= jobs[i - 1].submit);
    serial += j.width == 1;
    pow2 += j.width > 1 && (j.width & (j.width - 1)) == 0;
    interactive += j.interactive;
    area += static_cast<double>(j.width) * static_cast<double>(j.runtime);
  }
  const auto n = static_cast<double>(jobs.size());
  // Serial: 29% of batch and 15% of interactive jobs; powers of two: most parallel ones.
  CHECK(serial / n > 0.15);
  CHECK(serial / n < 0.32);
  CHECK(pow2 / n > 0.4);
  // Interactive jobs arrive faster: about four in five.
  CHECK(interactive / n > 0.6);
  CHECK(interactive / n < 0.95);
  // The offered load on 256 nodes is of the order of one (seed 0: 0.64; data/lublin_256.swf: 1.06).
  const double load = area / (256.0 * static_cast<double>(jobs.back().submit));
  CHECK(load > 0.2);
  CHECK(load < 2.0);
}

TEST_CASE("Lublin model: the SWF it writes reads back with its MaxNodes") {
  LublinOptions o;
  o.jobs = 50;
  o.nodes = 64;
  std::stringstream s;
  write_lublin_swf(s, o);
  const Workload w = parse_swf(s, "synth.swf");
  CHECK(w.max_nodes == 64);
  REQUIRE(w.jobs.size() == 50);
  const auto jobs = lublin_jobs(o);
  CHECK(w.jobs[49].runtime == jobs[49].runtime);
  CHECK(w.jobs[49].width == jobs[49].width);
}

}  // namespace piranha::rigid
