#include "piranha/access/pool_access.h"

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

using namespace piranha;
using namespace piranha::rights;
namespace ts = piranha::ts;

namespace {

const std::string kSystemSpace(sys::kSpace);

std::vector<Principal> principals() {
  return {{"root", Role::Admin, "", {}}, {"nps", Role::Scheduler, "", {}},  {"ws01", Role::Agent, "ws01", {}},
          {"alice", Role::Job, "", {}},  {"bob", Role::Job, "", {"bob.*"}}, {"pat", Role::Owner, "ws01", {}},
          {"uni", Role::Campus, "", {}}};
}

// A store holding job 3 (alice's, running) and job 4 (bob's, done).
void seed(ts::Store& store) {
  for (const auto& t :
       {sys::JobRecord{3, "cmatrix", "job.3", 1.0, sys::JobState::Running}.to_tuple(),
        sys::JobOwner{3, "alice"}.to_tuple(),
        sys::JobRecord{4, "spin", "job.4", 1.0, sys::JobState::Done}.to_tuple(),
        sys::JobOwner{4, "bob"}.to_tuple(), ts::Tuple::of("jobseq", 5), ts::Tuple::of("jobseq.created")})
    store.out(kSystemSpace, ts::image_of(t), 0);
}

ts::Request request(ts::Op op, std::string space) {
  ts::Request r;
  r.op = op;
  r.space = std::move(space);
  return r;
}

}  // namespace

TEST_CASE("the pool's policy reads owners and ended jobs from the server's store") {
  ts::Store store;
  seed(store);
  auto policy = make_pool_access(principals());

  ts::Request r = request(ts::Op::Rd, "job.3");
  CHECK(policy->decide(ts::AccessQuery{"alice", r, {}}, store).allowed);
  ts::AccessVerdict bob = policy->decide(ts::AccessQuery{"bob", r, {}}, store);
  CHECK_FALSE(bob.allowed);
  CHECK(
      bob.reason ==
      "key \"bob\" (role job) may not read job 3's space (job.3): job 3 belongs to key \"alice\"; that needs "
      "its key or admin (docs/security.md)");

  ts::Request prune = request(ts::Op::InMany, kSystemSpace);
  prune.tmpl = ts::image_of(sys::launch_template(4));
  prune.max = 10;
  CHECK(policy->decide(ts::AccessQuery{"ws01", prune, {}}, store).allowed);
  prune.tmpl = ts::image_of(sys::launch_template(3));
  CHECK_FALSE(policy->decide(ts::AccessQuery{"ws01", prune, {}}, store).allowed);

  CHECK_FALSE(policy->decide(ts::AccessQuery{"mallory", r, {}}, store).allowed);
}

TEST_CASE("advancing the job-id counter makes the server write who took the id") {
  ts::Store store;
  seed(store);
  auto policy = make_pool_access(principals());
  std::string held = ts::image_of(ts::Tuple::of("jobseq", 5)).bytes;
  ts::Request r = request(ts::Op::Ack, kSystemSpace);
  r.completes = true;
  r.handle = 1;
  r.tuples = {ts::image_of(ts::Tuple::of("jobseq", 6))};
  ts::AccessVerdict v = policy->decide(ts::AccessQuery{"bob", r, {ts::HeldTuple{kSystemSpace, held}}}, store);
  REQUIRE(v.allowed);
  REQUIRE(v.also_write.size() == 1);
  CHECK(v.also_write[0].first == kSystemSpace);
  CHECK(ts::decode_tuple(v.also_write[0].second.bytes) == sys::JobOwner{5, "bob"}.to_tuple());

  // Once the server has written it, job 5's space is bob's and not alice's.
  store.out(v.also_write[0].first, v.also_write[0].second, 0);
  ts::Request use = request(ts::Op::Out, "job.5");
  use.tuples = {ts::image_of(ts::Tuple::of("task", 1))};
  CHECK(policy->decide(ts::AccessQuery{"bob", use, {}}, store).allowed);
  CHECK_FALSE(policy->decide(ts::AccessQuery{"alice", use, {}}, store).allowed);
  // A second counter handing out 5 again is refused.
  CHECK_FALSE(
      policy->decide(ts::AccessQuery{"alice", r, {ts::HeldTuple{kSystemSpace, held}}}, store).allowed);
}

TEST_CASE("every fuzz corpus request is judged for every role without throwing") {
  namespace fs = std::filesystem;
  const fs::path dir = PIRANHA_FUZZ_CORPUS;
  REQUIRE(fs::is_directory(dir));
  ts::Store store;
  seed(store);
  auto policy = make_pool_access(principals());
  const std::string counter = ts::image_of(ts::Tuple::of("jobseq", 5)).bytes;
  const std::string job =
      ts::image_of(sys::JobRecord{3, "cmatrix", "job.3", 1.0, sys::JobState::Running}.to_tuple()).bytes;
  std::size_t judged = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::string frame((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    auto d = ts::decode_request(frame);
    auto* r = std::get_if<ts::Request>(&d);
    if (!r) continue;
    CAPTURE(entry.path().filename().string());
    for (const auto& p : principals()) {
      for (const auto& held :
           {std::vector<ts::HeldTuple>{}, std::vector<ts::HeldTuple>{{kSystemSpace, counter}},
            std::vector<ts::HeldTuple>{{kSystemSpace, job}, {"job.3", job}}}) {
        ts::AccessVerdict v;
        CHECK_NOTHROW(v = policy->decide(ts::AccessQuery{p.name, *r, held}, store));
        CHECK(v.allowed == v.reason.empty());
        ++judged;
      }
    }
  }
  CHECK(judged > 100);
}

TEST_CASE("the pool's policy admits a key its agent announced, as that job's piranha on that node only") {
  ts::Store store;
  seed(store);
  const std::string key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
  std::vector<Principal> people = principals();
  auto policy = make_pool_access(people);
  CHECK_FALSE(policy->admit(key, store));  // not announced
  store.out(kSystemSpace, ts::image_of(sys::JobKey{3, "ws01", key}.to_tuple()), 0);
  auto identity = policy->admit(key, store);
  REQUIRE(identity);
  CHECK(*identity == "ws01/job.3");
  CHECK_FALSE(policy->admit("ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ", store));

  ts::Request mine = request(ts::Op::Rd, "job.3");
  CHECK(policy->decide(ts::AccessQuery{*identity, mine, {}}, store).allowed);
  ts::Request theirs = request(ts::Op::Rd, "job.4");
  CHECK(policy->decide(ts::AccessQuery{*identity, theirs, {}}, store).reason ==
        "key \"ws01/job.3\" (role piranha) may not read job 4's space (job.4): a piranha of job 3 uses job.3 "
        "only (docs/security.md)");
  // Its reads of the system space are judged on their templates.
  ts::Request nodes = request(ts::Op::RdMany, kSystemSpace);
  nodes.tmpl = ts::image_of(sys::node_template());
  nodes.max = 10;
  CHECK_FALSE(policy->decide(ts::AccessQuery{*identity, nodes, {}}, store).allowed);
  ts::Request record = request(ts::Op::Rd, kSystemSpace);
  record.tmpl = ts::image_of(sys::job_template(3));
  CHECK(policy->decide(ts::AccessQuery{*identity, record, {}}, store).allowed);

  // A name an auth file entry has is never given to a piranha.
  people.push_back({"ws01/job.3", Role::Admin, "", {}});
  CHECK_FALSE(make_pool_access(people)->admit(key, store));
}
