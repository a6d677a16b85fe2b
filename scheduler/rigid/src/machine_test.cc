#include "piranha/rigid/machine.h"

#include <doctest/doctest.h>

#include <stdexcept>

#include "piranha/scheduler/random.h"
#include "test_util.h"

namespace piranha::rigid {

TEST_CASE("--sites: node counts, one factor or one per class") {
  const auto m = parse_sites("4,2*2,8*1/0.5");
  REQUIRE(m.sites.size() == 3);
  CHECK(m.classes() == 2);
  CHECK(m.sites[0].factors == std::vector<double>{1, 1});
  CHECK(m.sites[1].factors == std::vector<double>{2, 2});
  CHECK(m.sites[2].factors == std::vector<double>{1, 0.5});
  CHECK(m.total_nodes() == 14);
  CHECK(m.widest() == 8);
  CHECK(to_string(m) == "4,2*2/2,8*1/0.5");
  CHECK(to_string(parse_sites(to_string(m))) == to_string(m));
}

TEST_CASE("--sites: problems name the item") {
  CHECK_THROWS_WITH_AS(parse_sites("4,x"), "--sites: \"x\" does not start with a node count >= 1",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_sites("4*0"), "--sites: \"4*0\" has factor \"0\"; a factor is a number > 0",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_sites("4*1/2,4*1/2/3"),
                       "--sites: \"4*1/2/3\" gives 3 factors; an earlier site gives 2",
                       std::invalid_argument);
  CHECK_THROWS_AS(parse_sites(""), std::invalid_argument);
  CHECK_THROWS_AS(parse_sites("4,"), std::invalid_argument);
}

TEST_CASE("run time at a site: ceil(runtime x factor) of the job's class") {
  CHECK(scaled(10, 1.0) == 10);
  CHECK(scaled(10, 0.25) == 3);
  CHECK(scaled(0, 3.0) == 0);
  CHECK(job_class(7, 1) == 0);
  CHECK(job_class(7, 4) == static_cast<int>(sched::splitmix64(7) % 4));
  const auto m = parse_sites("4*1/3");
  auto w = test::workload({{0, 10, 2}});
  CHECK(runtime_at(m, w.jobs[0], 0) == (job_class(1, 2) == 0 ? 10 : 30));
}

TEST_CASE("a job wider than every site is named by file and line") {
  auto w = test::workload({{0, 10, 2}, {0, 10, 5}});
  CHECK_NOTHROW(check_fits(w, single_site(5)));
  CHECK_THROWS_WITH_AS(check_fits(w, parse_sites("4,3")),
                       "test.swf:2: job 2 needs 5 nodes; the largest site has 4", InputError);
}

}  // namespace piranha::rigid
