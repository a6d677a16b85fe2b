// LivePool against a tuple-space server in this process: the evaluator's
// records, read back at start, appended by flush(), and forgotten -- removed
// from the space -- by flush() too; which writes are news, for an event
// tick; and a job whose records are being rewritten (absent for a moment).
#include "piranha/nps/live_pool.h"

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <thread>

#include "piranha/tuplespace/embedded.h"

namespace piranha::nps {
namespace {

using namespace std::chrono_literals;

std::vector<std::string> jsons(ts::Client& c) {
  std::vector<std::string> out;
  for (const auto& r : sys::list_eval_records(c)) out.push_back(r.json);
  return out;
}

// The job of each of scheduler 0's assignments in the space, by node, with
// how many each node has.
std::map<std::string, std::vector<std::int64_t>> assigned(ts::Client& c) {
  std::map<std::string, std::vector<std::int64_t>> out;
  for (const auto& t : c.rd_many(sys::kSpace, sys::assign_template(0), 100))
    if (auto a = sys::Assignment::from_tuple(t)) out[a->node].push_back(a->job_id);
  return out;
}

TEST_CASE("live pool: each node keeps one assignment, the newest, when flush() supersedes them posted") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  // Left by an NPS before this one: ws1's is superseded, ws3's is kept.
  c.out(sys::kSpace, sys::Assignment{0, 1, "ws1", 4}.to_tuple());
  c.out(sys::kSpace, sys::Assignment{0, 1, "ws3", 4}.to_tuple());
  LivePool pool;
  pool.start(c);
  pool.assign(0, 10, "ws1", 5);
  pool.assign(0, 10, "ws2", std::nullopt);
  CHECK(pool.latest_heartbeat().first == 0);
  const auto before = std::chrono::steady_clock::now();
  pool.heartbeat(0);
  const auto after = std::chrono::steady_clock::now();
  // The decision's moment, kept for the shell's tick timer.
  const auto [calls, at] = pool.latest_heartbeat();
  CHECK(calls == 1);
  CHECK(at >= before);
  CHECK(at <= after);
  pool.flush(c);
  using Jobs = std::map<std::string, std::vector<std::int64_t>>;
  CHECK(assigned(c) == Jobs{{"ws1", {5}}, {"ws2", {0}}, {"ws3", {4}}});
  pool.assign(0, 11, "ws1", 6);
  pool.assign(0, 11, "ws2", 5);
  pool.flush(c);
  CHECK(assigned(c) == Jobs{{"ws1", {6}}, {"ws2", {5}}, {"ws3", {4}}});
  // Someone else wrote one for ws2 meanwhile: not known, so it stays (agents
  // take the highest epoch) until the next read of the assignments, which a
  // lost session brings.
  c.out(sys::kSpace, sys::Assignment{0, 12, "ws2", 9}.to_tuple());
  pool.assign(0, 13, "ws1", 7);
  pool.flush(c);
  CHECK(assigned(c) == Jobs{{"ws1", {7}}, {"ws2", {5, 9}}, {"ws3", {4}}});
  CHECK(c.rd_many(sys::kSpace, sys::scheduler_heartbeat_template(0), 10).size() == 1);
}

TEST_CASE("live pool: forgotten records are removed from the space, and one never sent is never written") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  for (int i = 0; i < 3; ++i)
    c.out(sys::kSpace, sys::EvalRecord{"span", 10.0 + i, "{\"n\":" + std::to_string(i) + "}"}.to_tuple());
  // A record of another kind at the same time, and an exact twin: only the
  // one forgotten goes.
  c.out(sys::kSpace, sys::EvalRecord{"job", 10.0, "{\"n\":0}"}.to_tuple());
  c.flush();
  LivePool pool;
  pool.start(c);
  REQUIRE(pool.records().size() == 4);
  pool.record({"span", 20, "{\"n\":3}"});
  pool.record({"span", 21, "{\"n\":4}"});
  pool.flush(c);
  CHECK(sys::list_eval_records(c).size() == 6);
  // Forget the oldest span and the one written last; add one and forget it
  // before it is ever sent.
  pool.record({"span", 22, "{\"n\":5}"});
  const auto records = pool.records();
  REQUIRE(records.size() == 7);
  CHECK(records[0].kind == "span");
  const std::size_t gone[] = {0, 5, 6};
  pool.forget(gone);
  CHECK(pool.records().size() == 4);
  CHECK(pool.pending());
  pool.flush(c);
  CHECK(jsons(c) == std::vector<std::string>{"{\"n\":0}", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}"});
  CHECK(sys::list_eval_records(c)[0].kind == "job");
  CHECK_FALSE(pool.pending());
}

TEST_CASE(
    "live pool: news is a job arriving, ending or first measured, or a node joining or changing state") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  LivePool pool;
  pool.start(c);
  pool.refresh(c);
  auto write = [&](const ts::Tuple& t) {
    c.out(sys::kSpace, t);
    c.flush();
  };
  const double now = sys::wall_now();
  auto node = [&](sys::NodeState state, double at) {
    write(sys::NodeRecord{"ws01", 1, 1.0, state, at}.to_tuple());
  };
  node(sys::NodeState::Available, now);
  CHECK(pool.news(c, 1000ms));  // a node registered
  pool.refresh(c);
  CHECK(pool.node_names() == std::vector<std::string>{"ws01"});
  node(sys::NodeState::Available, now + 1);  // its agent's heartbeat
  CHECK_FALSE(pool.news(c, 200ms));
  node(sys::NodeState::Unavailable, now + 2);
  CHECK(pool.news(c, 1000ms));
  pool.refresh(c);

  write(sys::JobLaunch{1, "/bin/true", {}, "/"}.to_tuple());
  sys::JobRecord job{1, "spin", "job.1", now, sys::JobState::Queued};
  write(job.to_tuple());
  CHECK(pool.news(c, 1000ms));  // an arrival
  pool.refresh(c);
  REQUIRE(pool.jobs().size() == 1);
  job.state = sys::JobState::Running;
  write(job.to_tuple());  // its feeder started: still the same queue
  write(sys::JobStat{1, 0, 100, 0, now}.to_tuple());
  CHECK_FALSE(pool.news(c, 200ms));
  write(sys::JobStat{1, 2, 98, 0.01, now}.to_tuple());
  CHECK(pool.news(c, 1000ms));  // first measured
  pool.refresh(c);
  CHECK(pool.jobs()[0].measured);
  write(sys::JobStat{1, 5, 95, 0.01, now}.to_tuple());
  CHECK_FALSE(pool.news(c, 200ms));
  job.state = sys::JobState::Done;
  write(job.to_tuple());
  CHECK(pool.news(c, 1000ms));  // it ended

  // An availability period read by news() is not lost to refresh().
  write(sys::AvailabilityPeriod{"ws01", now - 600, now - 300}.to_tuple());
  CHECK_FALSE(pool.news(c, 200ms));
  pool.refresh(c);
  const auto from = static_cast<std::int64_t>((now - 600 - pool.history_origin()) / pool.history_step()) + 1;
  const auto steps = pool.steps("ws01", from);
  REQUIRE(steps.size() >= 4);
  CHECK(steps[0]);
  CHECK(steps[3]);
}

// The node and running records are read whole only every few seconds; in
// between their watches bring what changed, so the job a node takes is seen
// at the next refresh (the evaluator's span on it starts then).
// owners_version() (pool.h): a new number when a block is written, and
// when one ends (it is no longer listed), not at refreshes in between.
TEST_CASE("live pool: the owners' version changes when a block is written and when it ends, not in between") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const double now = sys::wall_now();
  c.out(sys::kSpace, sys::NodeRecord{"ws01", 1, 1.0, sys::NodeState::Available, now}.to_tuple());
  c.flush();
  LivePool pool;
  pool.start(c);
  pool.refresh(c);
  const auto first = pool.owners_version();
  REQUIRE(first);
  pool.refresh(c);
  CHECK(pool.owners_version() == first);
  // A block in force for another second and a half: its watch's event makes
  // the next refresh read it.
  c.out(sys::kSpace, sys::OwnerBlock{"ws01", now - 10, now + 1.5}.to_tuple());
  c.flush();
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (pool.blocks("ws01").empty() && std::chrono::steady_clock::now() < deadline) {
    pool.news(c, 100ms);
    pool.refresh(c);
  }
  REQUIRE(pool.blocks("ws01").size() == 1);
  const auto written = pool.owners_version();
  CHECK(written != first);
  pool.refresh(c);
  if (sys::wall_now() < now + 1.5) CHECK(pool.owners_version() == written);
  // Once it has ended, the refresh that stops listing it changes the number.
  while (!pool.blocks("ws01").empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(100ms);
    pool.refresh(c);
  }
  REQUIRE(pool.blocks("ws01").empty());
  CHECK(pool.owners_version() != written);
}

TEST_CASE("live pool: a node's state and the job it runs are seen at the next refresh, between whole reads") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const double now = sys::wall_now();
  auto write = [&](const ts::Tuple& t) {
    c.out(sys::kSpace, t);
    c.flush();
  };
  write(sys::NodeRecord{"ws01", 1, 1.0, sys::NodeState::Available, now}.to_tuple());
  write(sys::NodeRun{"ws01", 0, "FAIR", now}.to_tuple());
  LivePool pool;
  pool.start(c);
  pool.refresh(c);  // the whole read
  REQUIRE(pool.node("ws01"));
  CHECK(pool.node("ws01")->running == std::nullopt);
  // The agent takes a job and changes state.
  write(sys::NodeRun{"ws01", 7, "scheduler 0", now + 1}.to_tuple());
  write(sys::NodeRecord{"ws01", 1, 1.0, sys::NodeState::Unavailable, now + 1}.to_tuple());
  // The watch events come after the writes' replies: wait for the state
  // change (news), which comes after the running record's event.
  CHECK(pool.news(c, 5000ms));
  pool.refresh(c);
  const auto n = pool.node("ws01");
  REQUIRE(n);
  CHECK(n->running == std::optional<JobId>(7));
  CHECK(n->by == "scheduler 0");
  CHECK(n->state == "unavailable");
}

TEST_CASE("live pool: a job is scheduled once it has a launch record, with its requirement, read once") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const double now = sys::wall_now();
  // Job 1 registered without a program; job 2 with one and a requirement;
  // job 3 with one and none.
  c.out(sys::kSpace, sys::JobRequirement{2, "label=gpu"}.to_tuple());
  for (std::int64_t id : {2, 3}) c.out(sys::kSpace, sys::JobLaunch{id, "/bin/true", {}, "/"}.to_tuple());
  for (std::int64_t id : {1, 2, 3})
    c.out(sys::kSpace,
          sys::JobRecord{id, "spin", "job", now + static_cast<double>(id), sys::JobState::Queued}.to_tuple());
  c.flush();
  LivePool pool;
  pool.start(c);
  pool.refresh(c);
  const auto jobs = pool.jobs();
  REQUIRE(jobs.size() == 2);
  CHECK(jobs[0].id == 2);
  CHECK(jobs[0].requirement == "label=gpu");
  CHECK(jobs[1].id == 3);
  CHECK(jobs[1].requirement.empty());
  // Read once: job 2 stays launchable, with its requirement, when its
  // records are gone from the space (only a job's end removes them).
  REQUIRE(c.in(sys::kSpace, sys::launch_template(2), 0ms));
  REQUIRE(c.in(sys::kSpace, sys::jobreq_template(2), 0ms));
  pool.refresh(c);
  REQUIRE(pool.jobs().size() == 2);
  CHECK(pool.jobs()[0].requirement == "label=gpu");
  // Job 1's program written later: scheduled from the next refresh.
  c.out(sys::kSpace, sys::JobLaunch{1, "/bin/true", {}, "/"}.to_tuple());
  pool.refresh(c);
  REQUIRE(pool.jobs().size() == 3);
  CHECK(pool.jobs()[0].id == 1);
}

TEST_CASE(
    "live pool: a job whose record is being rewritten stays, for the grace and while it can be launched") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  const double now = sys::wall_now();
  for (std::int64_t id : {1, 2}) {
    c.out(sys::kSpace, sys::JobLaunch{id, "/bin/true", {}, "/"}.to_tuple());
    c.out(sys::kSpace,
          sys::JobRecord{id, "spin", "job", now + static_cast<double>(id), sys::JobState::Queued}.to_tuple());
  }
  c.flush();
  LivePool pool;
  LivePoolOptions no_grace;
  no_grace.absent_grace = 0;
  LivePool impatient(no_grace);
  for (LivePool* p : {&pool, &impatient}) {
    p->start(c);
    p->refresh(c);
    REQUIRE(p->jobs().size() == 2);
  }
  auto ids = [](const LivePool& p) {
    std::vector<JobId> out;
    for (const auto& j : p.jobs()) out.push_back(j.id);
    return out;
  };
  // Job 1's feeder is marking it running: its record is taken, not yet
  // written back.
  auto taken = c.in(sys::kSpace, sys::job_template(1), 0ms, 10s);
  REQUIRE(taken);
  pool.refresh(c);
  impatient.refresh(c);
  CHECK(ids(pool) == std::vector<JobId>{1, 2});
  CHECK(ids(impatient) == std::vector<JobId>{2});
  CHECK(pool.jobs()[0].arrival == doctest::Approx(now + 1));
  // Gone for longer than a short grace: let go.
  LivePoolOptions short_grace;
  short_grace.absent_grace = 0.3;
  LivePool brief(short_grace);
  brief.start(c);
  brief.refresh(c);  // job 1 already absent at the first read: never known
  CHECK(ids(brief) == std::vector<JobId>{2});
  // Written back: as it says now.
  REQUIRE(c.complete(taken->lease, sys::kSpace,
                     {sys::JobRecord{1, "spin", "job", now + 1, sys::JobState::Running}.to_tuple()}));
  pool.refresh(c);
  brief.refresh(c);
  CHECK(ids(pool) == std::vector<JobId>{1, 2});
  CHECK(ids(brief) == std::vector<JobId>{1, 2});
  taken = c.in(sys::kSpace, sys::job_template(1), 0ms, 10s);
  REQUIRE(taken);
  brief.refresh(c);
  CHECK(ids(brief) == std::vector<JobId>{1, 2});
  std::this_thread::sleep_for(400ms);
  brief.refresh(c);
  CHECK(ids(brief) == std::vector<JobId>{2});
  REQUIRE(c.complete(taken->lease, sys::kSpace,
                     {sys::JobRecord{1, "spin", "job", now + 1, sys::JobState::Running}.to_tuple()}));

  // Its jobstat and a jobwork taken for a rewrite: as last seen.
  c.out(sys::kSpace, sys::JobStat{1, 4, 96, 0.01, now}.to_tuple());
  c.out(sys::kSpace, sys::JobWork{1, "ws01", 4, 0.04, 0}.to_tuple());
  c.flush();
  // The work record comes from its watch: a round trip after the write
  // makes sure its event has arrived (below, after the completions, too).
  (void)c.stats(sys::kSpace);
  pool.refresh(c);
  REQUIRE(ids(pool) == std::vector<JobId>{1, 2});
  CHECK(pool.jobs()[0].measured);
  CHECK(pool.jobs()[0].tasks_left == 96);
  CHECK(pool.jobs()[0].attained == doctest::Approx(0.04));
  auto stat = c.in(sys::kSpace, sys::jobstat_template(1), 0ms, 10s);
  auto work = c.in(sys::kSpace, sys::jobwork_template(1), 0ms, 10s);
  REQUIRE(stat);
  REQUIRE(work);
  pool.refresh(c);
  CHECK(pool.jobs()[0].measured);
  CHECK(pool.jobs()[0].tasks_left == 96);
  CHECK(pool.jobs()[0].attained == doctest::Approx(0.04));
  REQUIRE(c.complete(stat->lease, sys::kSpace, {sys::JobStat{1, 6, 94, 0.01, now}.to_tuple()}));
  REQUIRE(c.complete(work->lease, sys::kSpace, {sys::JobWork{1, "ws01", 6, 0.06, 0}.to_tuple()}));
  // The work records come from their watch (as the node records do): the
  // server sends the event just after the completion's answer, so a round
  // trip makes sure it has arrived before the tick reads its events.
  (void)c.stats(sys::kSpace);
  pool.refresh(c);
  CHECK(pool.jobs()[0].tasks_left == 94);
  CHECK(pool.jobs()[0].attained == doctest::Approx(0.06));
  // Taken again, and its launch record gone too (a cancel's cleanup): let go.
  taken = c.in(sys::kSpace, sys::job_template(1), 0ms, 10s);
  REQUIRE(taken);
  REQUIRE(c.in(sys::kSpace, sys::launch_template(1), 0ms));
  pool.refresh(c);
  CHECK(ids(pool) == std::vector<JobId>{2});
  // Job 2 taken and written back ended: gone at once.
  taken = c.in(sys::kSpace, sys::job_template(2), 0ms, 10s);
  REQUIRE(taken);
  pool.refresh(c);
  CHECK(ids(pool) == std::vector<JobId>{2});
  REQUIRE(c.complete(taken->lease, sys::kSpace,
                     {sys::JobRecord{2, "spin", "job", now + 2, sys::JobState::Cancelled}.to_tuple()}));
  pool.refresh(c);
  CHECK(pool.jobs().empty());
}

}  // namespace
}  // namespace piranha::nps
