#include "piranha/access/rights.h"

#include <doctest/doctest.h>

#include <map>

using namespace piranha;
using namespace piranha::rights;
namespace ts = piranha::ts;
using ts::Op;

namespace {

// The system space as a test states it.
struct Facts : PoolFacts {
  std::map<std::int64_t, std::string> owners;
  std::map<std::int64_t, std::vector<sys::JobState>> states;
  bool created = true;
  std::optional<std::string> owner_of(std::int64_t job) const override {
    auto it = owners.find(job);
    return it == owners.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  std::vector<sys::JobState> job_states(std::int64_t job) const override {
    auto it = states.find(job);
    return it == states.end() ? std::vector<sys::JobState>{} : it->second;
  }
  bool counter_created() const override { return created; }
};

const std::string kSys(sys::kSpace);

Principal admin{"root", Role::Admin, "", {}};
Principal nps{"nps", Role::Scheduler, "", {}};
Principal ws01{"ws01", Role::Agent, "ws01", {}};
Principal alice{"alice", Role::Job, "", {}};
Principal bob{"bob", Role::Job, "", {}};
Principal owner01{"pat", Role::Owner, "ws01", {}};
Principal uni{"uni", Role::Campus, "", {}};

Facts pool() {
  Facts f;
  f.owners = {{3, "alice"}, {4, "bob"}};
  f.states = {{3, {sys::JobState::Running}}, {4, {sys::JobState::Done}}};
  return f;
}

sys::JobRecord job3(sys::JobState s = sys::JobState::Running) {
  return sys::JobRecord{3, "cmatrix", "job.3", 1000.0, s};
}

Action out(std::string space, ts::Tuple t) {
  Action a;
  a.op = Op::Out;
  a.space = std::move(space);
  a.tuples = {std::move(t)};
  return a;
}
Action take(std::string space, ts::Template t, ts::Millis lease = 0) {
  Action a;
  a.op = Op::In;
  a.space = std::move(space);
  a.tmpl = std::move(t);
  a.lease = lease;
  return a;
}
Action on(Op op, std::string space) {
  Action a;
  a.op = op;
  a.space = std::move(space);
  return a;
}
// Ends leases on `held` (system space), writing `written` there (none: a plain ack).
Action ends(std::vector<ts::Tuple> held, std::optional<std::vector<ts::Tuple>> written) {
  Action a;
  a.op = Op::Ack;
  for (auto& h : held) a.ended.emplace_back(kSys, std::move(h));
  if (written) {
    a.space = kSys;
    a.tuples = std::move(*written);
  }
  return a;
}

bool contains_text(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

bool allowed(const Principal& p, const Action& a, const Facts& f = pool()) {
  return decide(p, a, f).allowed;
}
std::string why(const Principal& p, const Action& a, const Facts& f = pool()) {
  Decision d = decide(p, a, f);
  return d.allowed ? "(allowed)" : d.reason;
}

}  // namespace

TEST_CASE("every role reads the system space, and only owners and the job's piranhas reach a job's space") {
  for (const Principal* p : {&admin, &nps, &ws01, &alice, &bob, &owner01, &uni}) {
    CAPTURE(p->name);
    CHECK(allowed(*p, on(Op::Rd, kSys)));
    CHECK(allowed(*p, on(Op::RdMany, kSys)));
    CHECK(allowed(*p, on(Op::Watch, kSys)));
    CHECK(allowed(*p, on(Op::Stats, "")));
    CHECK(allowed(*p, out("_taken.00ff", ts::Tuple::of("taken", 1))));  // safe takes' markers
  }
  CHECK(allowed(alice, on(Op::Rd, "job.3")));
  CHECK(allowed(alice, out("job.3", ts::Tuple::of("task", 1))));
  CHECK(allowed(alice, on(Op::Remove, "job.3")));
  CHECK(
      why(ws01, take("job.3", ts::Template({ts::Field::formal(ts::Type::String)}), 600000)) ==
      "key \"ws01\" (role agent) may not take from job 3's space (job.3): an agent uses no job's space (its "
      "piranhas have keys of their own) (docs/security.md)");
  CHECK(!allowed(ws01, on(Op::Rd, "job.3")));
  CHECK(!allowed(ws01, out("job.3", ts::Tuple::of("result", 1))));
  CHECK(why(ws01, on(Op::Remove, "job.3")) ==
        "key \"ws01\" (role agent) may not remove job 3's space (job.3): an agent removes a job's space only "
        "once the job has ended (docs/security.md)");
  CHECK(
      why(bob, on(Op::Rd, "job.3")) ==
      "key \"bob\" (role job) may not read job 3's space (job.3): job 3 belongs to key \"alice\"; that needs "
      "its key or admin (docs/security.md)");
  CHECK(why(bob, out("job.3", ts::Tuple::of("result", 1))) ==
        "key \"bob\" (role job) may not write in job 3's space (job.3): job 3 belongs to key \"alice\"; that "
        "needs its key or admin (docs/security.md)");
  CHECK(contains_text(why(bob, on(Op::Remove, "job.3")),
                      "may not remove job 3's space (job.3): job 3 belongs"));
  CHECK(why(bob, on(Op::Rd, "job.9")) ==
        "key \"bob\" (role job) may not read job 9's space (job.9): job 9 has no recorded owner; that needs "
        "admin (docs/security.md)");
  CHECK(!allowed(nps, on(Op::Rd, "job.3")));
  CHECK(!allowed(owner01, out("job.3", ts::Tuple::of("x"))));
  CHECK(allowed(admin, on(Op::Remove, kSys)));
  CHECK(why(alice, on(Op::Remove, kSys)) ==
        "key \"alice\" (role job) may not remove the system space: that needs admin (docs/security.md)");
}

TEST_CASE("other spaces are admins' and those an entry's spaces patterns grant") {
  Principal lab{"lab", Role::Job, "", {"bench.*", "demo"}};
  CHECK(allowed(lab, out("bench.1", ts::Tuple::of("x"))));
  CHECK(allowed(lab, on(Op::Remove, "bench.")));
  CHECK(allowed(lab, on(Op::Rd, "demo")));
  CHECK(!allowed(lab, on(Op::Rd, "demo2")));
  CHECK(!allowed(lab, on(Op::Rd, "benchx")));
  CHECK(why(alice, on(Op::Rd, "scratch")) ==
        "key \"alice\" (role job) may not read space \"scratch\": it is not the system space, a job's space, "
        "nor one of the key's own spaces; that needs admin, or the space in the key's `spaces` in the auth "
        "file (docs/security.md)");
  CHECK(allowed(admin, out("scratch", ts::Tuple::of("x"))));
}

TEST_CASE("an agent writes and takes its own node's records only") {
  double t = 5.0;
  CHECK(allowed(ws01, out(kSys, sys::NodeRecord{"ws01", 2, 1.0, sys::NodeState::Available, t}.to_tuple())));
  CHECK(allowed(ws01, out(kSys, sys::AgentHeartbeat{"ws01", t}.to_tuple())));
  CHECK(allowed(ws01, out(kSys, sys::AvailabilityPeriod{"ws01", 1, 2}.to_tuple())));
  CHECK(allowed(ws01, out(kSys, sys::NodeRun{"ws01", 3, "FAIR", t}.to_tuple())));
  CHECK(allowed(ws01, take(kSys, sys::node_template("ws01"), 10000)));
  CHECK(allowed(ws01, take(kSys, sys::agent_heartbeat_template("ws01"), 10000)));
  CHECK(allowed(ws01, take(kSys, sys::ap_template("ws01"))));

  CHECK(
      why(ws01, out(kSys, sys::NodeRecord{"ws02", 2, 1.0, sys::NodeState::Down, t}.to_tuple())) ==
      "key \"ws01\" (role agent) may not write node ws02's state record: that needs node ws02's agent key or "
      "admin (docs/security.md)");
  CHECK(!allowed(ws01, out(kSys, sys::AgentHeartbeat{"ws02", t}.to_tuple())));
  CHECK(!allowed(ws01, out(kSys, sys::AvailabilityPeriod{"ws02", 1, 2}.to_tuple())));
  CHECK(!allowed(ws01, out(kSys, sys::NodeRun{"ws02", 3, "FAIR", t}.to_tuple())));
  CHECK(!allowed(ws01, out(kSys, sys::SchedulerHeartbeat{0, t}.to_tuple())));
  CHECK(why(ws01, out(kSys, sys::SchedulerServing{0, t}.to_tuple())) ==
        "key \"ws01\" (role agent) may not write a scheduler's serving record: that needs the scheduler role "
        "or admin (docs/security.md)");
  CHECK(!allowed(ws01, out(kSys, sys::Assignment{0, 1, "ws01", 3}.to_tuple())));
  CHECK(!allowed(ws01, out(kSys, sys::OwnerBlock{"ws01", 0, 1}.to_tuple())));
  CHECK(!allowed(ws01, take(kSys, sys::node_template("ws02"), 10000)));
  CHECK(!allowed(ws01, take(kSys, sys::node_template(), 10000)));  // a formal node matches ws02's too
  CHECK(!allowed(ws01, take(kSys, sys::ap_template())));
  CHECK(!allowed(ws01, take(kSys, sys::owner_template("ws01"))));
  CHECK(contains_text(why(ws01, take(kSys, ts::Template({ts::Field::formal(ts::Type::String)}))),
                      "names the record's tag"));
}

TEST_CASE("an agent holds a live job: the record goes back held or unchanged, never away") {
  ts::Tuple running = job3().to_tuple();
  CHECK(allowed(ws01, take(kSys, sys::job_template(3), 10000)));
  CHECK(allowed(ws01, ends({running}, std::vector{job3(sys::JobState::Held).to_tuple()})));
  CHECK(allowed(ws01, ends({running}, std::vector{running})));
  CHECK(allowed(ws01, out(kSys, sys::JobHold{3, "ws01", "exit 1", 5.0}.to_tuple())));
  CHECK(allowed(ws01, take(kSys, sys::jobheld_template(3, "ws01"), 10000)));

  CHECK(!allowed(ws01, take(kSys, sys::job_template(3))));  // live: no take without a lease
  CHECK(contains_text(why(ws01, ends({running}, std::nullopt)), "only by writing the record back"));
  CHECK(!allowed(ws01, ends({running}, std::vector<ts::Tuple>{})));
  CHECK(!allowed(ws01, ends({running}, std::vector{job3(sys::JobState::Cancelled).to_tuple()})));
  CHECK(!allowed(
      ws01,
      ends({running}, std::vector{sys::JobRecord{3, "x", "job.3", 1000.0, sys::JobState::Held}.to_tuple()})));
  CHECK(!allowed(ws01, out(kSys, job3(sys::JobState::Held).to_tuple())));
  CHECK(!allowed(ws01, out(kSys, sys::JobHold{3, "ws02", "exit 1", 5.0}.to_tuple())));
  CHECK(!allowed(ws01, take(kSys, sys::jobheld_template(3), 10000)));  // could be another node's
}

TEST_CASE("an agent records a running job's lost feeder: the record goes back failed, with its own joblost") {
  Facts f = pool();
  ts::Tuple running = job3().to_tuple();
  CHECK(allowed(ws01, ends({running}, std::vector{job3(sys::JobState::Failed).to_tuple()}), f));
  CHECK(allowed(ws01, out(kSys, sys::JobLost{3, "ws01", "feeder lost", 5.0}.to_tuple()), f));
  CHECK(!allowed(ws01, out(kSys, sys::JobLost{3, "ws02", "feeder lost", 5.0}.to_tuple()), f));
  // Only a running job's: a queued or held one has no feeder to lose.
  ts::Tuple held = job3(sys::JobState::Held).to_tuple();
  CHECK(!allowed(ws01, ends({held}, std::vector{job3(sys::JobState::Failed).to_tuple()}), f));
  // The space of an ended job (4), not of a live one (3).
  CHECK(allowed(ws01, on(Op::Remove, "job.4"), f));
  CHECK(!allowed(ws01, on(Op::Remove, "job.3"), f));
}

TEST_CASE("an agent writes how often it beats for its own node only") {
  CHECK(allowed(ws01, out(kSys, sys::AgentBeat{"ws01", 10}.to_tuple())));
  CHECK(allowed(ws01, take(kSys, sys::agentbeat_template("ws01"), 10000)));
  CHECK(!allowed(ws01, out(kSys, sys::AgentBeat{"ws02", 10}.to_tuple())));
  CHECK(!allowed(ws01, take(kSys, sys::agentbeat_template("ws02"), 10000)));
}

TEST_CASE("an agent writes its own node's attributes only, and a job its own jobs' requirements") {
  CHECK(allowed(ws01, out(kSys, sys::NodeAttrs{"ws01", 4, 1 << 30, "x86_64", {"gpu"}}.to_tuple())));
  CHECK(allowed(ws01, take(kSys, sys::nodeattr_template("ws01"), 10000)));
  CHECK(!allowed(ws01, out(kSys, sys::NodeAttrs{"ws02", 4, 1 << 30, "x86_64", {"gpu"}}.to_tuple())));
  CHECK(!allowed(ws01, take(kSys, sys::nodeattr_template("ws02"), 10000)));
  CHECK(!allowed(ws01, out(kSys, sys::JobRequirement{3, "label=gpu"}.to_tuple())));
  CHECK(allowed(alice, out(kSys, sys::JobRequirement{3, "label=gpu"}.to_tuple())));
  CHECK(!allowed(bob, out(kSys, sys::JobRequirement{3, "label=gpu"}.to_tuple())));
}

TEST_CASE("an agent writes why its own node is in its state, and no other's") {
  CHECK(allowed(ws01,
                out(kSys, sys::NodeReason{"ws01", "unavailable", "1-min load 2.31 >= 0.70", 1}.to_tuple())));
  CHECK(allowed(ws01, take(kSys, sys::nodewhy_template("ws01"), 10000)));
  CHECK(!allowed(ws01, out(kSys, sys::NodeReason{"ws02", "available", "idle", 1}.to_tuple())));
  CHECK(!allowed(ws01, take(kSys, sys::nodewhy_template("ws02"), 10000)));
}

TEST_CASE("an agent removes the records of ended jobs only") {
  Facts f = pool();
  for (const auto& tmpl : {sys::launch_template(4), sys::jobstat_template(4), sys::jobwork_template(4),
                           sys::jobtime_template(4), sys::jobexit_template(4), sys::jobheld_template(4),
                           sys::jobowner_template(4), sys::job_template(4)}) {
    CAPTURE(ts::to_string(tmpl));
    CHECK(allowed(ws01, take(kSys, tmpl), f));
  }
  CHECK(contains_text(why(ws01, take(kSys, sys::launch_template(3)), f), "only once job 3 has ended"));
  CHECK(!allowed(ws01, take(kSys, sys::job_template(3)), f));
  CHECK(!allowed(ws01, take(kSys, sys::launch_template(9)), f));  // no record: not known to have ended
  f.states[4].push_back(sys::JobState::Running);                  // a duplicate says otherwise
  CHECK(!allowed(ws01, take(kSys, sys::jobstat_template(4)), f));
  CHECK(allowed(ws01, take(kSys, sys::jobtime_template(3), 10000)));  // its piranhas record start times
  CHECK(allowed(ws01, out(kSys, sys::JobTimes{3, 5.0, 0}.to_tuple())));
}

TEST_CASE("a job changes its own jobs' records only: it cannot cancel another job") {
  ts::Tuple cancelled = job3(sys::JobState::Cancelled).to_tuple();
  CHECK(allowed(alice, take(kSys, sys::job_template(3), 0)));
  CHECK(allowed(alice, out(kSys, cancelled)));
  CHECK(allowed(alice, out(kSys, sys::JobStat{3, 1, 2, 0.5, 5.0}.to_tuple())));
  CHECK(allowed(alice, take(kSys, sys::jobheld_template(3))));
  CHECK(allowed(alice, ends({job3().to_tuple()}, std::vector{cancelled})));

  CHECK(why(bob, take(kSys, sys::job_template(3), 0)) ==
        "key \"bob\" (role job) may not take job 3's record: job 3 belongs to key \"alice\"; that needs its "
        "key "
        "or admin (docs/security.md)");
  CHECK(why(bob, out(kSys, cancelled)) ==
        "key \"bob\" (role job) may not write job 3's record: job 3 belongs to key \"alice\"; that needs its "
        "key "
        "or admin (docs/security.md)");
  CHECK(!allowed(bob, out(kSys, sys::JobStat{3, 1, 2, 0.5, 5.0}.to_tuple())));
  CHECK(!allowed(bob, take(kSys, sys::job_template(), 0)));  // a formal id: every job's
  CHECK(!allowed(bob, out(kSys, sys::JobOwner{5, "bob"}.to_tuple())));
  CHECK(!allowed(alice, out(kSys, sys::JobRecord{3, "x", "job.4", 1.0, sys::JobState::Queued}.to_tuple())));
  CHECK(!allowed(alice, out(kSys, sys::NodeRecord{"ws01", 1, 1, sys::NodeState::Down, 1}.to_tuple())));
  CHECK(!allowed(alice, out(kSys, sys::Assignment{0, 1, "ws01", 3}.to_tuple())));
}

TEST_CASE("a job takes an id from the counter only by advancing it, and becomes the id's owner") {
  Facts f = pool();
  ts::Template counter({ts::Field::of(ts::Value(std::string("jobseq"))), ts::Field::formal(ts::Type::Int)});
  CHECK(allowed(bob, take(kSys, counter, 10000), f));
  CHECK(contains_text(why(bob, take(kSys, counter, 0), f), "only under a lease"));

  Decision d = decide(bob, ends({ts::Tuple::of("jobseq", 5)}, std::vector{ts::Tuple::of("jobseq", 6)}), f);
  CHECK(d.allowed);
  CHECK(d.takes_job_id == 5);
  CHECK(!allowed(bob, ends({ts::Tuple::of("jobseq", 5)}, std::vector{ts::Tuple::of("jobseq", 9)}), f));
  CHECK(!allowed(bob, ends({ts::Tuple::of("jobseq", 5)}, std::nullopt), f));
  CHECK(!allowed(
      bob,
      ends({ts::Tuple::of("jobseq", 5)}, std::vector{ts::Tuple::of("jobseq", 6), ts::Tuple::of("jobseq", 7)}),
      f));
  CHECK(
      contains_text(why(bob, ends({ts::Tuple::of("jobseq", 3)}, std::vector{ts::Tuple::of("jobseq", 4)}), f),
                    "it has an owner already (alice)"));

  // The counter is created once, in one step, by whoever comes first.
  Action create;
  create.op = Op::OutMany;
  create.space = kSys;
  create.tuples = {ts::Tuple::of("jobseq", 1), ts::Tuple::of("jobseq.created")};
  CHECK(!allowed(bob, create, f));
  f.created = false;
  CHECK(allowed(bob, create, f));

  Decision by_admin =
      decide(admin, ends({ts::Tuple::of("jobseq", 7)}, std::vector{ts::Tuple::of("jobseq", 8)}), f);
  CHECK(by_admin.takes_job_id == 7);
}

TEST_CASE("the scheduler writes assignments, its heartbeats, its serving records and evaluator records") {
  CHECK(allowed(nps, out(kSys, sys::Assignment{0, 1, "ws01", 3}.to_tuple())));
  CHECK(allowed(nps, out(kSys, sys::SchedulerHeartbeat{0, 1.0}.to_tuple())));
  CHECK(allowed(nps, out(kSys, sys::EvalRecord{"span", 1.0, "{}"}.to_tuple())));
  CHECK(allowed(nps, take(kSys, sys::assign_template(0, "ws01"))));
  CHECK(allowed(nps, take(kSys, sys::scheduler_heartbeat_template(0))));
  CHECK(allowed(nps, out(kSys, sys::SchedulerServing{0, 1.0}.to_tuple())));
  CHECK(allowed(nps, take(kSys, sys::serving_template(0))));
  CHECK(!allowed(nps, out(kSys, sys::AgentHeartbeat{"ws01", 1.0}.to_tuple())));
  CHECK(!allowed(nps, out(kSys, job3(sys::JobState::Cancelled).to_tuple())));
  CHECK(!allowed(nps, take(kSys, sys::job_template(3), 10000)));
  CHECK(!allowed(nps, take(kSys, sys::eval_template())));
}

TEST_CASE("the scheduler writes the pool's campus state and its lent-job records, and loans are a campus's") {
  CHECK(allowed(nps, out(kSys, sys::SubnetReport{1.0, "{}"}.to_tuple())));
  CHECK(allowed(nps, take(kSys, sys::subnet_template())));
  CHECK(allowed(nps, out(kSys, sys::Lent{"ws01", "a", 3, 1}.to_tuple())));
  CHECK(allowed(nps, take(kSys, sys::lent_template("ws01"))));
  const sys::CampusLoan loan{"uni", "a", "tcp://a:1", 3, 1, "/bin/spin", {}, "/", "", 9};
  CHECK(!allowed(nps, out(kSys, loan.to_tuple())));
  CHECK(!allowed(ws01, out(kSys, sys::Lent{"ws01", "a", 3, 1}.to_tuple())));
  CHECK(allowed(admin, out(kSys, loan.to_tuple())));
}

TEST_CASE("an owner blocks and complains about its own node only") {
  CHECK(allowed(owner01, out(kSys, sys::OwnerBlock{"ws01", 0, 1}.to_tuple())));
  CHECK(allowed(owner01, out(kSys, sys::Complaint{"ws01", 1, "slow"}.to_tuple())));
  CHECK(allowed(owner01, take(kSys, sys::owner_template("ws01"))));
  CHECK(!allowed(owner01, out(kSys, sys::OwnerBlock{"ws02", 0, 1}.to_tuple())));
  CHECK(!allowed(owner01, take(kSys, sys::owner_template("ws02"))));
  CHECK(!allowed(owner01, out(kSys, sys::NodeRecord{"ws01", 1, 1, sys::NodeState::Down, 1}.to_tuple())));
}

TEST_CASE("an admin may do anything") {
  CHECK(allowed(admin, out(kSys, sys::NodeRecord{"ws02", 1, 1, sys::NodeState::Down, 1}.to_tuple())));
  CHECK(allowed(admin, take(kSys, sys::job_template(), 0)));
  CHECK(allowed(admin, ends({job3().to_tuple()}, std::nullopt)));
  CHECK(allowed(admin, on(Op::Remove, "job.3")));
}

TEST_CASE("job spaces are named job.<id> exactly") {
  CHECK(job_of_space("job.17") == 17);
  CHECK(job_of_space("job.0") == std::nullopt);
  CHECK(job_of_space("job.017") == std::nullopt);
  CHECK(job_of_space("job.") == std::nullopt);
  CHECK(job_of_space("job.1x") == std::nullopt);
  CHECK(job_of_space("job.-1") == std::nullopt);
  CHECK(job_of_space("job.99999999999999999999") == std::nullopt);
  CHECK(job_of_space("jobs.1") == std::nullopt);
}

const Principal piranha3 = piranha_of(3, "ws01");

TEST_CASE("a piranha uses its own job's space and records only") {
  CHECK(piranha3.name == "ws01/job.3");
  CHECK(piranha3.role == Role::Piranha);
  auto task = ts::Template({ts::Field::formal(ts::Type::String)});
  CHECK(allowed(piranha3, take("job.3", task, 600000)));
  CHECK(allowed(piranha3, on(Op::Rd, "job.3")));
  CHECK(allowed(piranha3, out("job.3", ts::Tuple::of("result", 1))));
  CHECK(allowed(piranha3, out("_taken.00ff", ts::Tuple::of("taken", 1))));
  // Another job's space: neither read nor written, nor taken from.
  CHECK(why(piranha3, on(Op::Rd, "job.4")) ==
        "key \"ws01/job.3\" (role piranha) may not read job 4's space (job.4): a piranha of job 3 uses job.3 "
        "only (docs/security.md)");
  CHECK(!allowed(piranha3, take("job.4", task, 600000)));
  CHECK(!allowed(piranha3, out("job.4", ts::Tuple::of("result", 1))));
  CHECK(!allowed(piranha3, on(Op::Remove, "job.3")));
  CHECK(!allowed(piranha3, on(Op::Rd, "bench.1")));
  // The system space: its own job's records, read; its jobtime, rewritten.
  Action rd = on(Op::Rd, kSys);
  rd.tmpl = sys::job_template(3);
  CHECK(allowed(piranha3, rd));
  rd.tmpl = sys::jobtime_template(3);
  CHECK(allowed(piranha3, rd));
  rd.tmpl = sys::job_template(4);
  CHECK(why(piranha3, rd) ==
        "key \"ws01/job.3\" (role piranha) may not read job 4's record: a piranha reads only job 3's records "
        "(docs/security.md)");
  rd.tmpl = sys::node_template();
  CHECK(!allowed(piranha3, rd));
  CHECK(!allowed(piranha3, on(Op::Watch, kSys)));  // no template: the whole space
  CHECK(allowed(piranha3, take(kSys, sys::jobtime_template(3), 10000)));
  CHECK(allowed(piranha3, out(kSys, sys::JobTimes{3, 1.0, 0}.to_tuple())));
  CHECK(!allowed(piranha3, out(kSys, sys::JobTimes{4, 1.0, 0}.to_tuple())));
  CHECK(!allowed(piranha3, take(kSys, sys::job_template(3), 10000)));  // no holds
  CHECK(!allowed(piranha3, out(kSys, sys::JobKey{3, "ws01", std::string(40, 'a')}.to_tuple())));
}

TEST_CASE("an agent announces and withdraws keys for its own node's piranhas of live jobs") {
  const std::string key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
  CHECK(allowed(ws01, out(kSys, sys::JobKey{3, "ws01", key}.to_tuple())));
  CHECK(!allowed(ws01, out(kSys, sys::JobKey{3, "ws02", key}.to_tuple())));
  CHECK(!allowed(ws01, out(kSys, sys::JobKey{3, "ws01", "not a key"}.to_tuple())));
  CHECK(why(ws01, out(kSys, sys::JobKey{4, "ws01", key}.to_tuple())) ==
        "key \"ws01\" (role agent) may not write job 4's piranha key on ws01: job 4 has ended "
        "(docs/security.md)");
  CHECK(allowed(ws01, take(kSys, sys::jobkey_template(3, "ws01"))));
  CHECK(!allowed(ws01, take(kSys, sys::jobkey_template(3, "ws02"))));
  CHECK(!allowed(ws01, take(kSys, sys::jobkey_template(3))));
  CHECK(allowed(ws01, take(kSys, sys::jobkey_template(4))));  // retention: job 4 has ended
  // Nobody else announces one: a job key would make piranhas of its own.
  CHECK(!allowed(alice, out(kSys, sys::JobKey{3, "ws01", key}.to_tuple())));
  CHECK(!allowed(nps, out(kSys, sys::JobKey{3, "ws01", key}.to_tuple())));
}

TEST_CASE("a campus writes its own loans, and piranha keys in its own name of live jobs, and nothing else") {
  const std::string key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
  const sys::CampusLoan loan{"uni", "a", "tcp://a:1", 3, 1, "/bin/spin", {}, "/", "", 9};
  CHECK(allowed(uni, out(kSys, loan.to_tuple())));
  CHECK(allowed(uni, take(kSys, sys::loan_template("uni", "a", 3))));
  sys::CampusLoan other = loan;
  other.campus = "rival";
  CHECK(why(uni, out(kSys, other.to_tuple())) ==
        "key \"uni\" (role campus) may not write campus rival's loan: that needs the campus role named rival "
        "or "
        "admin (docs/security.md)");
  CHECK(!allowed(uni, take(kSys, sys::loan_template("rival", "a", 3))));
  CHECK(!allowed(uni, take(kSys, sys::loan_template())));
  CHECK(!allowed(ws01, out(kSys, loan.to_tuple())));
  // On the borrower: its loans' piranha keys, of live jobs, in its own name.
  CHECK(allowed(uni, out(kSys, sys::JobKey{3, "uni", key}.to_tuple())));
  CHECK(allowed(uni, take(kSys, sys::jobkey_template(3, "uni"))));
  CHECK(!allowed(uni, out(kSys, sys::JobKey{3, "ws01", key}.to_tuple())));
  CHECK(!allowed(uni, take(kSys, sys::jobkey_template(3, "ws01"))));
  CHECK(!allowed(uni, take(kSys, sys::jobkey_template(3))));
  CHECK(!allowed(uni, out(kSys, sys::JobKey{3, "uni", "not a key"}.to_tuple())));
  CHECK(why(uni, out(kSys, sys::JobKey{4, "uni", key}.to_tuple())) ==
        "key \"uni\" (role campus) may not write job 4's piranha key on uni: job 4 has ended "
        "(docs/security.md)");
  // Nothing of the pool's own: no job's space, records, nodes or assignments.
  CHECK(!allowed(uni, on(Op::Rd, "job.3")));
  CHECK(!allowed(uni, take(kSys, sys::job_template(3), 10000)));
  CHECK(!allowed(uni, out(kSys, sys::Lent{"ws01", "a", 3, 1}.to_tuple())));
  CHECK(!allowed(uni, out(kSys, sys::NodeRecord{"ws01", 1, 1, sys::NodeState::Down, 1}.to_tuple())));
  CHECK(allowed(uni, on(Op::RdMany, kSys)));
  // The piranha its key is admitted as: job 3's space and records only.
  const Principal lent = piranha_of(3, "uni");
  CHECK(allowed(lent, on(Op::Rd, "job.3")));
  CHECK(!allowed(lent, on(Op::Rd, "job.4")));
}

TEST_CASE("an agent publishes its own node's public key only") {
  const std::string key = "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7";
  CHECK(allowed(ws01, out(kSys, sys::AgentKey{"ws01", key}.to_tuple())));
  CHECK(allowed(ws01, take(kSys, sys::agentkey_template("ws01"))));
  CHECK(why(ws01, out(kSys, sys::AgentKey{"ws02", key}.to_tuple())) ==
        "key \"ws01\" (role agent) may not write node ws02's agent public key: that needs node ws02's agent "
        "key "
        "or admin (docs/security.md)");
  CHECK(!allowed(uni, out(kSys, sys::AgentKey{"ws01", key}.to_tuple())));
}

TEST_CASE("a refusal says in words what was refused and which key or role it needs, and shows no tuple") {
  CHECK(
      why(alice, out(kSys, sys::OwnerBlock{"ws01", 1.79579e9, 1.8e9}.to_tuple())) ==
      "key \"alice\" (role job) may not write an owner block on ws01: that needs the owner role for ws01 or "
      "admin (docs/security.md)");
  CHECK(why(owner01, take(kSys, sys::owner_template("ws02"))) ==
        "key \"pat\" (role owner) may not take an owner block on ws02: that needs the owner role for ws02 or "
        "admin (docs/security.md)");
  CHECK(
      why(bob, out(kSys, sys::Assignment{0, 1, "ws01", 3}.to_tuple())) ==
      "key \"bob\" (role job) may not write a scheduler's assignment: that needs the scheduler role or admin "
      "(docs/security.md)");
  CHECK(
      why(nps, out(kSys, sys::AgentHeartbeat{"ws01", 1.0}.to_tuple())) ==
      "key \"nps\" (role scheduler) may not write node ws01's agent heartbeat: that needs node ws01's agent "
      "key or admin (docs/security.md)");
  CHECK(
      why(ws01, take(kSys, sys::node_template(), 10000)) ==
      "key \"ws01\" (role agent) may not take every node's state record: every node's needs admin (an agent "
      "names its own node, field 1) (docs/security.md)");
  CHECK(why(owner01, out(kSys, sys::JobHold{3, "ws02", "exit 1", 5.0}.to_tuple())) ==
        "key \"pat\" (role owner) may not write job 3's hold by node ws02's agent: that needs node ws02's "
        "agent key, job 3's owner's key or admin (docs/security.md)");
  CHECK(why(ws01, out(kSys, sys::JobOwner{5, "ws01"}.to_tuple())) ==
        "key \"ws01\" (role agent) may not write job 5's owner record: the server writes it as a job id is "
        "taken; removing it needs admin (docs/security.md)");
  // Whatever is refused, to whomever: words, never a tuple's text.
  const std::vector<Action> requests = {
      out(kSys, sys::NodeRecord{"ws02", 2, 1.0, sys::NodeState::Down, 5}.to_tuple()),
      out(kSys, job3(sys::JobState::Cancelled).to_tuple()),
      out(kSys, sys::OwnerBlock{"ws02", 0, 1}.to_tuple()),
      out(kSys, sys::JobKey{4, "ws02", "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"}.to_tuple()),
      out(kSys, ts::Tuple::of("mystery", 1)),
      take(kSys, sys::job_template(), 0),
      take(kSys, sys::jobheld_template(4), 10000),
      take(kSys, ts::Template({ts::Field::formal(ts::Type::String)})),
      ends({job3().to_tuple()}, std::nullopt),
      ends({ts::Tuple::of("jobseq", 5)}, std::vector{ts::Tuple::of("jobseq", 9)}),
      on(Op::Rd, "job.4"),
      on(Op::Remove, kSys)};
  const Principal piranha = piranha_of(3, "ws01");
  for (const Principal* p :
       std::vector<const Principal*>{&nps, &ws01, &alice, &bob, &owner01, &uni, &piranha})
    for (const Action& a : requests) {
      const Decision d = decide(*p, a, pool());
      if (d.allowed) continue;
      CAPTURE(d.reason);
      CHECK(d.reason.rfind("key \"" + p->name + "\" (role " + std::string(name(p->role)) + ") may not ", 0) ==
            0);
      CHECK(d.reason.find("(\"") == std::string::npos);
      CHECK(d.reason.find("?string") == std::string::npos);
      CHECK(contains_text(d.reason, "(docs/security.md)"));
    }
}

TEST_CASE("roles are named in lower case") {
  for (Role r : {Role::Admin, Role::Scheduler, Role::Agent, Role::Job, Role::Owner, Role::Campus})
    CHECK(role_from(name(r)) == r);
  CHECK(role_from("Admin") == std::nullopt);
  CHECK(role_from("piranha") == std::nullopt);  // made by the server, never in an auth file
  CHECK(role_from("root") == std::nullopt);
}
