#include "piranha/agent/lending.h"

#include <doctest/doctest.h>

using namespace piranha;

namespace {

AgentState idle_obeying() {
  AgentState s{AgentSettings{}};
  s.available = true;
  s.obeying_scheduler = true;
  return s;
}

const std::vector<sys::CampusLoan> kLoans{
    {"uni", "a", "tcp://a:1", 7, 2, "/bin/spin", {}, "/", "", 100},
    {"other", "a", "tcp://a:1", 7, 1, "/bin/spin", {}, "/", "", 120},
    {"uni", "c", "tcp://c:1", 3, 1, "/bin/spin", {}, "/", "", 100},
};

}  // namespace

TEST_CASE("lent_job: an idle node obeying scheduler 0 serves the loan its lent record names") {
  const AgentState s = idle_obeying();
  const std::optional<sys::Lent> lent = sys::Lent{"b1", "a", 7, 1};
  const auto job = lent_job(50, s, 0, lent, kLoans);
  REQUIRE(job);
  CHECK(job->borrower == "a");
  CHECK(job->expires == 120);  // the loan that expires last
  CHECK(lent_job(50, s, 0, sys::Lent{"b1", "c", 3, 1}, kLoans)->server == "tcp://c:1");
  CHECK_FALSE(lent_job(50, s, 0, sys::Lent{"b1", "a", 0, 1}, kLoans));  // lent nothing
  CHECK_FALSE(lent_job(50, s, 0, sys::Lent{"b1", "a", 8, 1}, kLoans));  // no such loan
  CHECK_FALSE(lent_job(50, s, 0, std::nullopt, kLoans));                // no record
  CHECK_FALSE(lent_job(130, s, 0, lent, kLoans));                       // expired
}

TEST_CASE("lent_job: the node's own pool first") {
  const std::optional<sys::Lent> lent = sys::Lent{"b1", "a", 7, 1};
  AgentState s = idle_obeying();
  CHECK_FALSE(lent_job(50, s, 1, lent, kLoans));  // its own piranhas run
  s.target = 4;                                   // scheduler 0 gave it a job
  CHECK_FALSE(lent_job(50, s, 0, lent, kLoans));
  s = idle_obeying();
  s.available = false;  // its owner is back
  CHECK_FALSE(lent_job(50, s, 0, lent, kLoans));
  s = idle_obeying();
  s.obeying_scheduler = false;  // its NPS is gone: the native policy, no loans
  CHECK_FALSE(lent_job(50, s, 0, lent, kLoans));
  s = idle_obeying();
  s.stopping = true;
  CHECK_FALSE(lent_job(50, s, 0, lent, kLoans));
}

TEST_CASE("same_foreign_job: the borrower, its server and the job's launch") {
  CHECK(same_foreign_job(kLoans[0], kLoans[1]));
  CHECK_FALSE(same_foreign_job(kLoans[0], kLoans[2]));
  sys::CampusLoan moved = kLoans[0];
  moved.server = "tcp://elsewhere:1";
  CHECK_FALSE(same_foreign_job(kLoans[0], moved));
}

TEST_CASE("lent_job: a loan whose requirement the node does not satisfy is refused") {
  std::vector<sys::CampusLoan> loans{kLoans[0]};
  loans[0].requirement = "label=gpu";
  const std::optional<sys::Lent> lent = sys::Lent{"b1", "a", 7, 1};
  AgentState s = idle_obeying();
  CHECK_FALSE(lent_job(50, s, 0, lent, loans));  // no attributes published: it offers nothing
  s.settings.attributes = sched::NodeAttributes{4, std::int64_t{8} << 30, "x86_64", {"fast"}};
  CHECK_FALSE(lent_job(50, s, 0, lent, loans));
  s.settings.attributes->labels = {"fast", "gpu"};
  REQUIRE(lent_job(50, s, 0, lent, loans));
  CHECK(lent_job(50, s, 0, lent, loans)->requirement == "label=gpu");
}
