#include "piranha/runtime/sysspace.h"

#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "piranha/tuplespace/embedded.h"

namespace sys = piranha::sys;
namespace ts = piranha::ts;

TEST_CASE("sysspace: every record survives a round trip through its tuple") {
  sys::JobRecord job{7, "cmatrix", "job.7", 1.5e9, sys::JobState::Running};
  auto j = sys::JobRecord::from_tuple(job.to_tuple());
  REQUIRE(j);
  CHECK(j->id == 7);
  CHECK(j->name == "cmatrix");
  CHECK(j->space == "job.7");
  CHECK(j->state == sys::JobState::Running);
  CHECK(sys::job_template(7).matches(job.to_tuple()));
  CHECK_FALSE(sys::job_template(8).matches(job.to_tuple()));

  sys::JobLaunch l{7, "/bin/cmatrix", {"200", "--grain", "", "x y"}, "/tmp"};
  auto l2 = sys::JobLaunch::from_tuple(l.to_tuple());
  REQUIRE(l2);
  CHECK(l2->args == l.args);
  CHECK(l2->program == "/bin/cmatrix");

  sys::JobHold held{7, "ws01", "exit status 1\nlast line", 3.0};
  auto h2 = sys::JobHold::from_tuple(held.to_tuple());
  REQUIRE(h2);
  CHECK(h2->node == "ws01");
  CHECK(h2->reason == held.reason);
  CHECK(sys::jobheld_template(7).matches(held.to_tuple()));
  CHECK_FALSE(sys::JobHold::from_tuple(job.to_tuple()));
  CHECK(sys::job_state_from("held") == sys::JobState::Held);
  CHECK_FALSE(sys::is_live(sys::JobState::Held));
  CHECK_FALSE(sys::is_finished(sys::JobState::Held));

  sys::JobStat st{7, 10, 90, 0.25, 2.0};
  auto st2 = sys::JobStat::from_tuple(st.to_tuple());
  REQUIRE(st2);
  CHECK(st2->tasks_left == 90);
  CHECK(st2->mean_task_seconds == 0.25);

  sys::JobTimes tm{7, 100.5, 250.25};
  auto tm2 = sys::JobTimes::from_tuple(tm.to_tuple());
  REQUIRE(tm2);
  CHECK(tm2->id == 7);
  CHECK(tm2->start_time == 100.5);
  CHECK(tm2->end_time == 250.25);
  CHECK(sys::jobtime_template(7).matches(tm.to_tuple()));
  CHECK(sys::jobtime_template().matches(tm.to_tuple()));
  CHECK_FALSE(sys::jobtime_template(8).matches(tm.to_tuple()));

  sys::NodeRecord n{"ws01", 4, 1.5, sys::NodeState::OwnerBlocked, 3.0};
  auto n2 = sys::NodeRecord::from_tuple(n.to_tuple());
  REQUIRE(n2);
  CHECK(n2->state == sys::NodeState::OwnerBlocked);
  CHECK(sys::node_template("ws01").matches(n.to_tuple()));

  sys::Assignment a{0, 12, "ws01", 7};
  CHECK(sys::assign_template(0, "ws01").matches(a.to_tuple()));
  CHECK_FALSE(sys::assign_template(1, "ws01").matches(a.to_tuple()));
  CHECK(sys::Assignment::from_tuple(a.to_tuple())->epoch == 12);

  sys::SchedulerHeartbeat h{0, 5.0};
  CHECK(sys::scheduler_heartbeat_template(0).matches(h.to_tuple()));
  CHECK_FALSE(sys::AgentHeartbeat::from_tuple(h.to_tuple()));
  sys::SchedulerServing serving{0, 4.5};
  CHECK(sys::serving_template(0).matches(serving.to_tuple()));
  CHECK_FALSE(sys::serving_template(1).matches(serving.to_tuple()));
  CHECK_FALSE(sys::scheduler_heartbeat_template(0).matches(serving.to_tuple()));
  CHECK(sys::SchedulerServing::from_tuple(serving.to_tuple())->since == 4.5);
  CHECK_FALSE(sys::SchedulerServing::from_tuple(h.to_tuple()));
  sys::AgentHeartbeat ah{"ws01", 5.0};
  CHECK(sys::AgentHeartbeat::from_tuple(ah.to_tuple())->node == "ws01");

  sys::OwnerBlock b{"ws01", 10, 20};
  CHECK(sys::OwnerBlock::from_tuple(b.to_tuple())->covers(15));
  CHECK_FALSE(b.covers(20));
  CHECK(sys::AvailabilityPeriod::from_tuple(sys::AvailabilityPeriod{"ws01", 1, 2}.to_tuple())->end == 2);

  sys::NodeRun r{"ws01", 7, "scheduler 0", 12.5};
  CHECK(sys::running_template("ws01").matches(r.to_tuple()));
  CHECK_FALSE(sys::running_template("ws02").matches(r.to_tuple()));
  auto r2 = sys::NodeRun::from_tuple(r.to_tuple());
  REQUIRE(r2);
  CHECK(r2->node == "ws01");
  CHECK(r2->job_id == 7);
  CHECK(r2->by == "scheduler 0");
  CHECK(r2->since == 12.5);
}

TEST_CASE("sysspace: complaints and evaluator records round-trip and are selected by their templates") {
  sys::Complaint c{"ws01", 12.5, "my build was slow at noon"};
  CHECK(sys::complaint_template().matches(c.to_tuple()));
  CHECK(sys::complaint_template("ws01").matches(c.to_tuple()));
  CHECK_FALSE(sys::complaint_template("ws02").matches(c.to_tuple()));
  auto c2 = sys::Complaint::from_tuple(c.to_tuple());
  REQUIRE(c2);
  CHECK(c2->text == c.text);
  CHECK(c2->time == 12.5);
  sys::EvalRecord e{"span", 3.0, R"({"node":"ws01"})"};
  CHECK(sys::eval_template().matches(e.to_tuple()));
  auto e2 = sys::EvalRecord::from_tuple(e.to_tuple());
  REQUIRE(e2);
  CHECK(e2->kind == "span");
  CHECK(e2->json == e.json);
  CHECK_FALSE(sys::EvalRecord::from_tuple(ts::Tuple::of("eval", "span", 3, "{}")));  // an int time
  CHECK_FALSE(sys::Complaint::from_tuple(ts::Tuple::of("complaint", "ws01", 1.0)));
}

TEST_CASE("sysspace: tuples of another shape are not misread") {
  CHECK_FALSE(sys::JobRecord::from_tuple(ts::Tuple::of("job", 1)));
  CHECK_FALSE(sys::JobRecord::from_tuple(ts::Tuple::of("job", 1, "n", "s", 1.0, "exploded")));
  CHECK_FALSE(sys::JobRecord::from_tuple(ts::Tuple::of("jab", 1, "n", "s", 1.0, "queued")));
  CHECK_FALSE(sys::NodeRecord::from_tuple(ts::Tuple::of("node", "a", 1.0, 1.0, "available", 1.0)));
  CHECK_FALSE(sys::JobStat::from_tuple(ts::Tuple::of(1, 2)));
  CHECK_FALSE(sys::JobTimes::from_tuple(ts::Tuple::of("jobtime", 1, 2, 3)));  // ints, not times
  CHECK_FALSE(sys::JobTimes::from_tuple(sys::JobStat{1, 2, 3, 4.0, 5.0}.to_tuple()));
  CHECK_FALSE(sys::NodeRun::from_tuple(ts::Tuple::of("running", "ws01", 7.0, "FAIR", 1.0)));
}

TEST_CASE("sysspace: state names") {
  for (auto s : {sys::JobState::Queued, sys::JobState::Running, sys::JobState::Done, sys::JobState::Failed,
                 sys::JobState::Cancelled})
    CHECK(sys::job_state_from(sys::name(s)) == s);
  CHECK(sys::is_live(sys::JobState::Queued));
  CHECK_FALSE(sys::is_live(sys::JobState::Done));
  CHECK(sys::name(sys::NodeState::OwnerBlocked) == "owner-blocked");
}

TEST_CASE("sysspace: job times merge to the earliest known start and end, and 0 is not known") {
  sys::JobTimes none{3, 0, 0}, started{3, 10, 0}, earlier{3, 8, 0}, ended{3, 0, 20}, ended_later{3, 0, 25};
  CHECK(none.merged(started).start_time == 10);
  CHECK(started.merged(none).start_time == 10);
  CHECK(started.merged(earlier).start_time == 8);
  CHECK(earlier.merged(started).start_time == 8);
  auto both = started.merged(ended);
  CHECK(both.start_time == 10);
  CHECK(both.end_time == 20);
  // The first recorded end stays: a later writer of the same end state does not move it.
  CHECK(both.merged(ended_later).end_time == 20);
  CHECK(ended_later.merged(both).end_time == 20);
  CHECK(none.merged(none).start_time == 0);
  CHECK(none.merged(none).end_time == 0);
}

TEST_CASE("sysspace: supersede leaves exactly the new tuple, whatever was there") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const auto tmpl = sys::scheduler_heartbeat_template(0);
  sys::supersede(c, tmpl, sys::SchedulerHeartbeat{0, 1.0}.to_tuple());  // none before
  c.out(sys::kSpace, sys::SchedulerHeartbeat{0, 2.0}.to_tuple());       // a stray duplicate
  sys::supersede(c, tmpl, sys::SchedulerHeartbeat{0, 3.0}.to_tuple());
  auto left = c.rd_many(sys::kSpace, tmpl, 10);
  REQUIRE(left.size() == 1);
  CHECK(sys::SchedulerHeartbeat::from_tuple(left[0])->time == 3.0);
  // Another scheduler's heartbeat is not touched.
  c.out(sys::kSpace, sys::SchedulerHeartbeat{1, 5.0}.to_tuple());
  sys::supersede(c, tmpl, sys::SchedulerHeartbeat{0, 4.0}.to_tuple());
  CHECK(c.rd_many(sys::kSpace, sys::scheduler_heartbeat_template(1), 10).size() == 1);
  CHECK(c.rd_many(sys::kSpace, tmpl, 10).size() == 1);
}

TEST_CASE(
    "sysspace: a keyed superseder leaves one tuple per key, the newest, and readers keep one per node") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const auto work = [](std::int64_t job, const char* node, std::int64_t tasks) {
    return sys::JobWork{job, node, tasks, 0.5 * static_cast<double>(tasks), 0, 0}.to_tuple();
  };
  const auto tasks_by_node = [&](std::int64_t job) {
    std::map<std::string, std::vector<std::int64_t>> by;
    for (const auto& t : c.rd_many(sys::kSpace, sys::jobwork_template(job), 100))
      by[t.get<std::string>(2)].push_back(sys::JobWork::from_tuple(t)->tasks);
    for (auto& [node, tasks] : by) std::sort(tasks.begin(), tasks.end());
    return by;
  };
  // A record an earlier writer left (a restarted feeder's) and another job's.
  c.out(sys::kSpace, work(1, "ws01", 1));
  c.out(sys::kSpace, work(2, "ws01", 9));
  sys::KeyedSuperseder w(sys::jobwork_template(1), [](const ts::Tuple& t) { return t.get<std::string>(2); });
  w.write(c, {work(1, "ws01", 2), work(1, "ws02", 1)});  // reads the family first
  c.flush();
  CHECK(tasks_by_node(1) == std::map<std::string, std::vector<std::int64_t>>{{"ws01", {2}}, {"ws02", {1}}});
  // Only the changed key is rewritten, from what it knows (no read).
  w.write(c, {work(1, "ws02", 3)});
  w.write(c, {});
  c.flush();
  CHECK(tasks_by_node(1) == std::map<std::string, std::vector<std::int64_t>>{{"ws01", {2}}, {"ws02", {3}}});
  // A stray copy written behind its back is found once it has forgotten.
  c.out(sys::kSpace, work(1, "ws01", 2));
  w.forget();
  w.write(c, {work(1, "ws01", 4)});
  c.flush();
  CHECK(tasks_by_node(1) == std::map<std::string, std::vector<std::int64_t>>{{"ws01", {4}}, {"ws02", {3}}});
  CHECK(tasks_by_node(2) == std::map<std::string, std::vector<std::int64_t>>{{"ws01", {9}}});
  // A write whose answer was lost is made again, read first: the record it
  // wrote and the one before it both go, and one copy of the new one stays.
  c.out(sys::kSpace, work(1, "ws02", 6));
  w.forget();
  w.write(c, {work(1, "ws02", 6)});
  c.flush();
  CHECK(tasks_by_node(1) == std::map<std::string, std::vector<std::int64_t>>{{"ws01", {4}}, {"ws02", {6}}});

  // In the moment between a new record and the old one's discard, readers
  // find both and keep the one with more tasks.
  c.out(sys::kSpace, work(1, "ws02", 7));
  std::map<std::string, sys::JobWork> listed;
  for (const auto& l : sys::list_jobwork(c, 1)) CHECK(listed.emplace(l.node, l).second);
  REQUIRE(listed.size() == 2);
  CHECK(listed.at("ws01").tasks == 4);
  CHECK(listed.at("ws02").tasks == 7);
  CHECK(listed.at("ws02").seconds == 3.5);
  CHECK(sys::list_jobwork(c).size() == 3);  // job 2's ws01 is another record
}

TEST_CASE("sysspace: list_live_jobs reads the queued and running jobs only, by id") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const sys::JobState states[] = {sys::JobState::Running, sys::JobState::Done,      sys::JobState::Queued,
                                  sys::JobState::Held,    sys::JobState::Cancelled, sys::JobState::Failed};
  for (std::int64_t id = 6; id >= 1; --id)  // written newest id first
    c.out(sys::kSpace, sys::JobRecord{id, "j", "job." + std::to_string(id), 1.0, states[id - 1]}.to_tuple());
  auto live = sys::list_live_jobs(c);
  REQUIRE(live.size() == 2);
  CHECK(live[0].id == 1);
  CHECK(live[0].state == sys::JobState::Running);
  CHECK(live[1].id == 3);
  CHECK(live[1].state == sys::JobState::Queued);
  CHECK(sys::list_jobs(c).size() == 6);
}

TEST_CASE("campus tuples: subnet, loan and lent round-trip and match their templates") {
  const sys::SubnetReport r{12.5, "{}"};
  CHECK(sys::SubnetReport::from_tuple(r.to_tuple())->json == "{}");
  CHECK(sys::subnet_template().matches(r.to_tuple()));
  const sys::CampusLoan l{"campus", "physics", "tcp://a:7000", 4,          3, "/bin/spin", {"-n", "", "9"},
                          "/tmp",   "",        99.5,           "label=gpu"};
  const auto back = sys::CampusLoan::from_tuple(l.to_tuple());
  REQUIRE(back);
  CHECK(back->requirement == "label=gpu");
  CHECK(back->args == l.args);
  CHECK(back->server == "tcp://a:7000");
  CHECK(back->nodes == 3);
  CHECK(back->expires == 99.5);
  CHECK(sys::loan_template().matches(l.to_tuple()));
  CHECK(sys::loan_template("campus", "physics", 4).matches(l.to_tuple()));
  CHECK_FALSE(sys::loan_template("campus", "physics", 5).matches(l.to_tuple()));
  const sys::Lent n{"b1", "physics", 4, 1000};
  CHECK(sys::Lent::from_tuple(n.to_tuple())->borrower == "physics");
  CHECK(sys::lent_template("b1").matches(n.to_tuple()));
  CHECK_FALSE(sys::lent_template("b2").matches(n.to_tuple()));
  CHECK_FALSE(sys::Lent::from_tuple(r.to_tuple()));
}

TEST_CASE(
    "campus credentials: agentkey round-trips, a loan's key text round-trips and rejects other shapes") {
  const sys::AgentKey a{"b1", "rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7"};
  const auto back = sys::AgentKey::from_tuple(a.to_tuple());
  REQUIRE(back);
  CHECK(back->node == "b1");
  CHECK(back->public_key == a.public_key);
  CHECK(sys::agentkey_template().matches(a.to_tuple()));
  CHECK(sys::agentkey_template("b1").matches(a.to_tuple()));
  CHECK_FALSE(sys::agentkey_template("b2").matches(a.to_tuple()));
  CHECK_FALSE(sys::AgentKey::from_tuple(sys::Lent{"b1", "a", 1, 1}.to_tuple()));

  const sys::LoanKey k{"SERVERKEY", {{"b1", "SEALED1"}, {"b2", "SEALED2"}}};
  CHECK(k.to_text() == "SERVERKEY b1 SEALED1 b2 SEALED2");
  CHECK(sys::LoanKey::from_text(k.to_text()) == k);
  CHECK(sys::LoanKey::from_text("SERVERKEY") == sys::LoanKey{"SERVERKEY", {}});
  CHECK_FALSE(sys::LoanKey::from_text(""));
  CHECK_FALSE(sys::LoanKey::from_text("SERVERKEY b1"));
  CHECK_FALSE(sys::LoanKey::from_text("SERVERKEY b1  SEALED1"));
  CHECK_FALSE(sys::LoanKey::from_text("SERVERKEY b1 S1 b1 S2"));  // a node twice
  CHECK_FALSE(sys::LoanKey::from_text("SERVERKEY b1 S1 "));
}

TEST_CASE("sysspace: node attributes and job requirements round-trip, attributes rewritten only on change") {
  for (const sys::NodeAttrs& a :
       {sys::NodeAttrs{"ws01", 8, std::int64_t{16} << 30, "x86_64", {"fast-disk", "gpu"}},
        sys::NodeAttrs{"ws02", 1, 1024, "aarch64", {}}}) {
    auto back = sys::NodeAttrs::from_tuple(a.to_tuple());
    REQUIRE(back);
    CHECK(*back == a);
    CHECK(sys::nodeattr_template(a.node).matches(a.to_tuple()));
  }
  CHECK(sys::NodeAttrs{"ws01", 8, 1, "x86_64", {"fast-disk", "gpu"}}.to_tuple()[5] ==
        ts::Value("fast-disk,gpu"));
  auto r = sys::JobRequirement::from_tuple(sys::JobRequirement{7, "memory>=8G,label=gpu"}.to_tuple());
  REQUIRE(r);
  CHECK(r->id == 7);
  CHECK(r->text == "memory>=8G,label=gpu");
  CHECK_FALSE(sys::JobRequirement::from_tuple(sys::JobExit{7, 0}.to_tuple()));

  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const sys::NodeAttrs a{"ws01", 8, 1 << 30, "x86_64", {"gpu"}};
  CHECK(sys::publish_node_attrs(c, a));
  CHECK_FALSE(sys::publish_node_attrs(c, a));  // the same: not written again
  sys::NodeAttrs changed = a;
  changed.labels.push_back("tpu");
  CHECK(sys::publish_node_attrs(c, changed));
  const auto listed = sys::list_node_attrs(c);
  REQUIRE(listed.size() == 1);
  CHECK(listed[0] == changed);
  c.out(sys::kSpace, sys::JobRequirement{3, "label=gpu"}.to_tuple());
  // Asked together: job 3 has a requirement and no launch record, job 5 a
  // launch record and no requirement, job 4 neither.
  c.out(sys::kSpace, sys::JobLaunch{5, "/bin/true", {"x"}, "/"}.to_tuple());
  const auto found = sys::find_launches(c, {3, 4, 5});
  REQUIRE(found.size() == 3);
  CHECK_FALSE(found[0].launch);
  CHECK(found[0].requirement == "label=gpu");
  CHECK_FALSE(found[1].launch);
  CHECK_FALSE(found[1].requirement);
  REQUIRE(found[2].launch);
  CHECK(found[2].launch->program == "/bin/true");
  CHECK_FALSE(found[2].requirement);
  CHECK(sys::find_launches(c, {}).empty());
  CHECK(sys::requirements_by_job(c) == std::map<std::int64_t, std::string>{{3, "label=gpu"}});
}

TEST_CASE("sysspace: list_jobs waits for a record taken to be rewritten, and not for an orphan launch") {
  using namespace std::chrono_literals;
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const auto record = [](std::int64_t id, sys::JobState state) {
    return sys::JobRecord{id, "spin", "job." + std::to_string(id), 1.0, state}.to_tuple();
  };
  const auto launch = [](std::int64_t id) { return sys::JobLaunch{id, "/bin/spin", {}, "/tmp"}.to_tuple(); };
  c.out_many(sys::kSpace,
             {launch(1), record(1, sys::JobState::Queued), launch(2), record(2, sys::JobState::Done)});

  SUBCASE("a record taken under a lease is listed as it is written back") {
    ts::Client taker(server.endpoint());
    auto taken = taker.in(sys::kSpace, sys::job_template(1), 1s, 10s);
    REQUIRE(taken);
    bool written = false;
    std::thread back([&] {
      std::this_thread::sleep_for(300ms);
      written = taker.complete(taken->lease, sys::kSpace, {record(1, sys::JobState::Running)});
    });
    const auto t0 = std::chrono::steady_clock::now();
    const auto jobs = sys::list_jobs(c);
    const auto waited = std::chrono::steady_clock::now() - t0;
    back.join();
    CHECK(written);
    REQUIRE(jobs.size() == 2);
    CHECK(jobs[0].id == 1);
    CHECK(jobs[0].state == sys::JobState::Running);
    CHECK(jobs[1].id == 2);
    CHECK(waited >= 250ms);
    CHECK(waited < sys::kRewriteWait);
  }
  SUBCASE("a launch record whose job record never comes is waited for once, then left out") {
    c.out(sys::kSpace, launch(3));
    c.out(sys::kSpace, launch(4));
    const auto t0 = std::chrono::steady_clock::now();
    const auto jobs = sys::list_jobs(c);
    const auto waited = std::chrono::steady_clock::now() - t0;
    REQUIRE(jobs.size() == 2);
    CHECK(jobs[0].id == 1);
    CHECK(jobs[1].id == 2);
    // Both orphans within one wait, not one each.
    CHECK(waited >= sys::kRewriteWait - 100ms);
    CHECK(waited < 2 * sys::kRewriteWait);
  }
}

TEST_CASE("sysspace: list_live_jobs with the jobs known live waits for one out for a rewrite") {
  using namespace std::chrono_literals;
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const auto record = [](std::int64_t id, sys::JobState state) {
    return sys::JobRecord{id, "spin", "job." + std::to_string(id), 1.0, state}.to_tuple();
  };
  c.out_many(sys::kSpace, {record(1, sys::JobState::Queued), record(2, sys::JobState::Running),
                           record(3, sys::JobState::Done), record(5, sys::JobState::Queued)});

  SUBCASE("one taken under a lease is listed as it is written back; one that ended is left out at once") {
    ts::Client taker(server.endpoint());
    auto taken = taker.in(sys::kSpace, sys::job_template(1), 1s, 10s);
    REQUIRE(taken);
    // Without the known jobs, the listing misses it.
    const auto plain = sys::list_live_jobs(c);
    REQUIRE(plain.size() == 2);
    CHECK(plain[0].id == 2);
    CHECK(plain[1].id == 5);
    bool written = false;
    std::thread back([&] {
      std::this_thread::sleep_for(300ms);
      written = taker.complete(taken->lease, sys::kSpace, {record(1, sys::JobState::Running)});
    });
    const auto t0 = std::chrono::steady_clock::now();
    const auto jobs = sys::list_live_jobs(c, {1, 2, 3});
    const auto waited = std::chrono::steady_clock::now() - t0;
    back.join();
    CHECK(written);
    REQUIRE(jobs.size() == 3);
    CHECK(jobs[0].id == 1);
    CHECK(jobs[0].state == sys::JobState::Running);
    CHECK(jobs[1].id == 2);
    CHECK(jobs[2].id == 5);
    CHECK(waited >= 250ms);
    CHECK(waited < sys::kRewriteWait);
  }
  SUBCASE("known jobs whose records never come back are waited for once, then left out") {
    const auto t0 = std::chrono::steady_clock::now();
    const auto jobs = sys::list_live_jobs(c, {7, 8, 3});
    const auto waited = std::chrono::steady_clock::now() - t0;
    REQUIRE(jobs.size() == 3);
    CHECK(jobs[0].id == 1);
    CHECK(jobs[1].id == 2);
    CHECK(jobs[2].id == 5);
    CHECK(waited >= sys::kRewriteWait - 100ms);
    CHECK(waited < 2 * sys::kRewriteWait);
  }
}
