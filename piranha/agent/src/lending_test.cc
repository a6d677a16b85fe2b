#include "piranha/agent/lending.h"

#include <doctest/doctest.h>

#include "piranha/access/sealed_key.h"

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

TEST_CASE("loan_credentials: the loan's key pair, opened by the agent it was sealed to, and the server key") {
  const ts::CurveKeyPair b1 = ts::new_curve_key_pair(), b2 = ts::new_curve_key_pair();
  const ts::CurveKeyPair loan_key = ts::new_curve_key_pair(), server = ts::new_curve_key_pair();
  sys::CampusLoan loan = kLoans[0];
  CHECK_FALSE(loan_credentials(loan, "b1", b1));  // no key: a borrower without --auth
  loan.key = sys::LoanKey{server.public_key,
                          {{"b1", seal_secret_key(b1.public_key, loan_key.secret_key)},
                           {"b2", seal_secret_key(b2.public_key, loan_key.secret_key)}}}
                 .to_text();
  const auto c = loan_credentials(loan, "b1", b1);
  REQUIRE(c);
  CHECK(c->server_key == server.public_key);
  CHECK(c->key.secret_key == loan_key.secret_key);
  CHECK(c->key.public_key == loan_key.public_key);
  CHECK(loan_credentials(loan, "b2", b2) == c);
  // b1's sealed key does not open with b2's key pair, and a node it is not sealed to has none.
  CHECK_THROWS_WITH(loan_credentials(loan, "b1", b2),
                    "the loan's key for this node does not open with this agent's key");
  CHECK_THROWS_WITH(loan_credentials(loan, "b3", b1),
                    "the loan's key is not sealed to this node (has the campus read its agentkey?)");
  CHECK_THROWS_WITH(loan_credentials(loan, "b1", std::nullopt),
                    "the loan has a key, and this agent has none to open it with");
  loan.key = "not-a-key b1";
  CHECK_THROWS_WITH(loan_credentials(loan, "b1", b1), "the loan's key is malformed");
}
