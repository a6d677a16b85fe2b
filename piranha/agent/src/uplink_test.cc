#include "piranha/agent/uplink.h"

#include <doctest/doctest.h>

#include <cmath>
#include <thread>

#include "piranha/runtime/feeder_silence.h"
#include "piranha/tuplespace/embedded.h"

using namespace std::chrono_literals;
namespace sys = piranha::sys;
namespace ts = piranha::ts;

namespace {

// Waits (up to 20 s, far beyond any fair delay) until `ok` holds for the
// uplink's view.
template <class Ok>
bool within_20s(Ok ok) {
  auto give_up = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < give_up) {
    if (ok()) return true;
    std::this_thread::sleep_for(2ms);
  }
  return false;
}

template <class Ok>
bool view_becomes(const piranha::Uplink& u, Ok ok) {
  return within_20s([&] {
    auto v = u.view();
    return v.generation > 0 && ok(v);
  });
}

piranha::AgentSettings settings(const ts::EmbeddedServer& server) {
  piranha::AgentSettings s;
  s.node = "n1";
  s.server = server.endpoint();
  s.tick = std::chrono::hours(1);  // no safety-net read within the test: only watches and timers
  return s;
}

}  // namespace

TEST_CASE("uplink: a new job, an assignment and an owner block reach the view without waiting for a tick") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  piranha::Uplink uplink(
      settings(server), [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));

  c.out(sys::kSpace, sys::JobLaunch{7, "/bin/true", {}, "/"}.to_tuple());
  c.out(sys::kSpace, sys::JobRecord{7, "true", "job.7", sys::wall_now(), sys::JobState::Queued}.to_tuple());
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.size() == 1 && v.live[0].id == 7; }));

  c.out(sys::kSpace, sys::Assignment{0, 5, "n1", 7}.to_tuple());
  CHECK(view_becomes(uplink, [](const auto& v) { return v.assignment && v.assignment->job_id == 7; }));

  c.out(sys::kSpace, sys::OwnerBlock{"n1", 0, 253402300799.0}.to_tuple());
  CHECK(view_becomes(uplink, [](const auto& v) { return v.owner_blocked; }));

  // A job that ends leaves the view.
  sys::set_job_state(c, 7, sys::JobState::Cancelled);
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.empty(); }));
}

TEST_CASE("uplink: an owner block written ahead of time is read when it begins and when it ends") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  piranha::Uplink uplink(
      settings(server), [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  double now = sys::wall_now();
  c.out(sys::kSpace, sys::OwnerBlock{"n1", now + 0.3, now + 0.6}.to_tuple());
  CHECK(view_becomes(uplink, [](const auto& v) { return v.owner_blocked; }));
  CHECK(view_becomes(uplink, [](const auto& v) { return !v.owner_blocked; }));
  CHECK(sys::wall_now() >= now + 0.6);
}

TEST_CASE("uplink: the tasks a job completed here are noted as the feeder publishes them") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  piranha::Uplink uplink(
      settings(server), [](const std::string&) {}, -1);
  c.out(sys::kSpace, sys::JobLaunch{3, "/bin/true", {}, "/"}.to_tuple());
  c.out(sys::kSpace, sys::JobRecord{3, "true", "job.3", sys::wall_now(), sys::JobState::Running}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.live.size() == 1; }));
  sys::replace(c, sys::jobwork_template(3, "n1"), sys::JobWork{3, "n1", 40, 1.0, 0}.to_tuple());
  CHECK(
      view_becomes(uplink, [](const auto& v) { return v.tasks_here.count(3) && v.tasks_here.at(3) == 40; }));
}

TEST_CASE("uplink: a job whose record is absent stays live while its launch record is there, and not after") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  piranha::Uplink uplink(
      settings(server), [](const std::string&) {}, -1);
  c.out(sys::kSpace, sys::JobLaunch{4, "/bin/true", {}, "/"}.to_tuple());
  c.out(sys::kSpace, sys::JobRecord{4, "true", "job.4", sys::wall_now(), sys::JobState::Queued}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.live.size() == 1; }));
  // The record taken, as a rewrite takes it; then a read.
  REQUIRE(c.in(sys::kSpace, sys::job_template(4), 0ms));
  auto read = uplink.generation();
  uplink.read_soon();
  REQUIRE(view_becomes(uplink, [&](const auto& v) { return v.generation > read; }));
  CHECK(uplink.view().live.size() == 1);
  // Gone for good: the launch record too (a server restarted without its
  // data). The next read lets the job go.
  REQUIRE(c.in(sys::kSpace, sys::launch_template(4), 0ms));
  read = uplink.generation();
  uplink.read_soon();
  CHECK(view_becomes(uplink, [&](const auto& v) { return v.generation > read && v.live.empty(); }));
}

TEST_CASE("uplink: a newer assignment is taken from its watch event, an older one or a taken one is not") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  piranha::Uplink uplink(
      settings(server), [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.generation > 0; }));
  sys::Superseder nps(sys::assign_template(0, "n1"));
  nps.write(c, sys::Assignment{0, 5, "n1", 7}.to_tuple());
  c.flush();
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.assignment && v.assignment->epoch == 5; }));
  nps.write(c, sys::Assignment{0, 6, "n1", 0}.to_tuple());
  c.flush();
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.assignment && v.assignment->epoch == 6; }));
  // Another node's, and an older one of this node's (a stray), change
  // nothing (the jobwork after them shows their events were handled), and
  // a read keeps the newest.
  c.out(sys::kSpace, sys::Assignment{0, 9, "n2", 7}.to_tuple());
  c.out(sys::kSpace, sys::Assignment{0, 3, "n1", 8}.to_tuple());
  c.out(sys::kSpace, sys::JobWork{7, "n1", 4, 1.0, 0}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.tasks_here.contains(7); }));
  CHECK(uplink.view().assignment->epoch == 6);
  const auto read = uplink.generation();
  uplink.read_soon();
  REQUIRE(view_becomes(uplink, [&](const auto& v) { return v.generation > read; }));
  const auto v = uplink.view();
  REQUIRE(v.assignment);
  CHECK(v.assignment->epoch == 6);
  CHECK(v.assignment->job_id == 0);
  // The superseded one is gone from the space: the NPS's write was two posted requests.
  CHECK(c.rd_many(sys::kSpace, sys::assign_template(0, "n1"), 10).size() == 2);  // 6, and the stray 3
}

TEST_CASE("uplink: a new job whose record is being rewritten when the agent reads is live at once") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  piranha::Uplink uplink(
      settings(server), [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  // Registered, and its record taken at once, as the feeder's rewrite to
  // "running" takes it: the read the registration prompts finds no record.
  // Before, the job waited for the rewrite's own event (milliseconds, or,
  // were that lost, the next tick: an hour here).
  c.out(sys::kSpace, sys::JobLaunch{5, "/bin/true", {}, "/"}.to_tuple());
  c.out(sys::kSpace, sys::JobRecord{5, "true", "job.5", sys::wall_now(), sys::JobState::Queued}.to_tuple());
  REQUIRE(c.in(sys::kSpace, sys::job_template(5), 0ms));
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.size() == 1 && v.live[0].id == 5; }));
  // A full read (an assignment prompts one) while the record is still
  // absent keeps it.
  c.out(sys::kSpace, sys::Assignment{0, 1, "n1", 99}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.assignment && v.assignment->epoch == 1; }));
  CHECK(uplink.view().live.size() == 1);
  // Written back, it stays; cancelled, it goes.
  c.out(sys::kSpace, sys::JobRecord{5, "true", "job.5", sys::wall_now(), sys::JobState::Running}.to_tuple());
  c.out(sys::kSpace, sys::Assignment{0, 2, "n1", 99}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.assignment && v.assignment->epoch == 2; }));
  CHECK(uplink.view().live.size() == 1);
  sys::set_job_state(c, 5, sys::JobState::Cancelled);
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.empty(); }));
}

// A server in this process, a client of it, and an uplink that has read.
struct Linked {
  ts::EmbeddedServer server;
  ts::Client c{server.endpoint()};
  piranha::Uplink uplink{settings(server), [](const std::string&) {}, -1};
  Linked() {
    REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  }
};

TEST_CASE_FIXTURE(
    Linked,
    "uplink: a running job whose feeder is silent stays live until its patience is over, then is "
    "recorded failed, feeder lost") {
  // Job 1's feeder last wrote long ago, with a patience of 1 s; job 2's
  // writes now, with the default patience. The jobstats first: every read
  // that finds the jobs finds them too.
  const double now = sys::wall_now();
  c.out(sys::kSpace, sys::JobPatience{1, 1}.to_tuple());
  c.out(sys::kSpace, sys::JobStat{1, 3, 7, 0.1, now - piranha::kFeederSilence - 5}.to_tuple());
  c.out(sys::kSpace, sys::JobStat{2, 3, 7, 0.1, now}.to_tuple());
  for (std::int64_t id : {1, 2}) {
    c.out(sys::kSpace, sys::JobLaunch{id, "/bin/true", {}, "/"}.to_tuple());
    c.out(sys::kSpace,
          sys::JobRecord{id, "true", "job." + std::to_string(id), now, sys::JobState::Running}.to_tuple());
  }
  c.out("job.1", ts::Tuple::of("task", 1));
  // Silent, not yet lost: its silence counts from when the uplink found the
  // server (a moment ago), not from the jobstat's time.
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.size() == 2; }));
  // A jobstat is not watched: the uplink reads again when job 1's feeder
  // would count as lost (1 s + kFeederSlack after the uplink connected).
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.size() == 1 && v.live[0].id == 2; }));
  auto rec = sys::JobRecord::from_tuple(c.rd(sys::kSpace, sys::job_template(1), 0ms).value());
  CHECK(rec->state == sys::JobState::Failed);
  auto lost = sys::losses_by_job(c);
  REQUIRE(lost.count(1) == 1);
  CHECK(lost[1].node == "n1");
  CHECK(lost[1].reason.find("feeder lost") == 0);
  CHECK(sys::find_jobtimes(c, 1)->end_time == doctest::Approx(lost[1].time));
  CHECK_FALSE(
      c.rd("job.1",
           ts::Template({ts::Field::of(ts::Value(std::string("task"))), ts::Field::formal(ts::Type::Int)}),
           0ms));  // its space removed
}

TEST_CASE(
    "uplink: a running job first read before its patience was written is lost after that patience, not "
    "the default") {
  // The feeder's patience record came after a read that found the job
  // running (a CI run once had it so): the default (300 s) was kept for good
  // and the silent feeder was not lost within a minute. Here the uplink's
  // first read finds the job so.
  ts::EmbeddedServer server;
  ts::Client c{server.endpoint()};
  const double now = sys::wall_now();
  c.out(sys::kSpace, sys::JobStat{1, 3, 7, 0.1, now - piranha::kFeederSilence - 5}.to_tuple());
  c.out(sys::kSpace, sys::JobLaunch{1, "/bin/true", {}, "/"}.to_tuple());
  c.out(sys::kSpace, sys::JobRecord{1, "true", "job.1", now, sys::JobState::Running}.to_tuple());
  piranha::Uplink uplink{settings(server), [](const std::string&) {}, -1};
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.live.size() == 1; }));
  c.out(sys::kSpace, sys::JobPatience{1, 1}.to_tuple());
  c.out(sys::kSpace, sys::Assignment{0, 1, "n1", 99}.to_tuple());  // prompts a full read
  // Lost 1 s + kFeederSlack after the uplink found the server.
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.empty(); }));
  CHECK(sys::losses_by_job(c).count(1) == 1);
}

TEST_CASE("uplink: heartbeat_look reads only when scheduler 0 comes back or may be gone") {
  using piranha::heartbeat_look;
  const sys::SchedulerHeartbeat h100{0, 100.0}, h101{0, 101.0};
  const double stale = 10;
  // None known, a fresh one found: the scheduler has come.
  auto l = heartbeat_look(std::nullopt, h100, 100.5, stale);
  CHECK(l.read);
  CHECK(l.changed);
  REQUIRE(l.heartbeat);
  CHECK(l.heartbeat->time == 100.0);
  // A fresh one rewritten: noted, no read.
  l = heartbeat_look(h100, h101, 101.5, stale);
  CHECK_FALSE(l.read);
  CHECK(l.changed);
  CHECK(l.heartbeat->time == 101.0);
  // The same one, or the older copy of a supersede half done: nothing.
  l = heartbeat_look(h101, h101, 101.5, stale);
  CHECK_FALSE(l.read);
  CHECK_FALSE(l.changed);
  l = heartbeat_look(h101, h100, 101.5, stale);
  CHECK_FALSE(l.changed);
  CHECK(l.heartbeat->time == 101.0);
  // A fresh one after the known one went stale: the scheduler is back.
  l = heartbeat_look(h100, h101, 100.0 + stale + 0.5, stale);
  CHECK(l.read);
  CHECK(l.heartbeat->time == 101.0);
  // A newer one, itself stale (a scheduler's last beat, seen late): noted, no read.
  l = heartbeat_look(h100, h101, 101.0 + stale + 5, stale);
  CHECK_FALSE(l.read);
  CHECK(l.changed);
  // None where one was known: the scheduler may be gone, the read says.
  l = heartbeat_look(h101, std::nullopt, 101.5, stale);
  CHECK(l.read);
  // None, none known: nothing.
  l = heartbeat_look(std::nullopt, std::nullopt, 101.5, stale);
  CHECK_FALSE(l.read);
  CHECK_FALSE(l.changed);
  CHECK_FALSE(l.heartbeat);
}

TEST_CASE("uplink: heartbeat_after_read keeps the newer heartbeat, and none found is none") {
  using piranha::heartbeat_after_read;
  const sys::SchedulerHeartbeat h100{0, 100.0}, h101{0, 101.0};
  CHECK(heartbeat_after_read(h100, std::nullopt)->time == 100.0);
  CHECK(heartbeat_after_read(h101, h100)->time == 101.0);
  // The read found the older copy of a supersede whose newer copy a look
  // found: the newer one stays known.
  CHECK(heartbeat_after_read(h100, h101)->time == 101.0);
  // The scheduler withdrew it.
  CHECK_FALSE(heartbeat_after_read(std::nullopt, h101));
  CHECK_FALSE(heartbeat_after_read(std::nullopt, std::nullopt));
}

TEST_CASE("uplink: heartbeat_look_delay is within 0.4 to 0.6 of the staleness and spread over the nodes") {
  const double stale = 10;
  double lo = stale, hi = 0, sum = 0;
  const int n = 1000;
  for (int i = 0; i < n; ++i) {
    const double d = piranha::heartbeat_look_delay("ws" + std::to_string(i), stale);
    CHECK(d >= 0.4 * stale);
    CHECK(d < 0.6 * stale);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
    sum += d;
  }
  CHECK(piranha::heartbeat_look_delay("ws1", stale) == piranha::heartbeat_look_delay("ws1", stale));
  CHECK(lo < 0.42 * stale);
  CHECK(hi > 0.58 * stale);
  CHECK(std::abs(sum / n - 0.5 * stale) < 0.02 * stale);
}

// The NPS's flush supersedes a node's assignment, then its heartbeat: an
// assignment's read may come while the heartbeat is being replaced (the
// new copy written, the old not yet taken), and the read's `rd` finds the
// old copy. The agent keeps the newer one a look found.
TEST_CASE("uplink: a read that finds the old copy of a heartbeat being rewritten keeps the newer one") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  auto s = settings(server);
  s.scheduler_stale_seconds = 2;  // a look every 0.8 to 1.2 s
  piranha::Uplink uplink(
      s, [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  const double t0 = sys::wall_now();
  const sys::SchedulerHeartbeat old_beat{0, t0}, new_beat{0, t0 + 0.5};
  c.out(sys::kSpace, old_beat.to_tuple());
  REQUIRE(view_becomes(uplink, [&](const auto& v) { return v.scheduler && v.scheduler->time == t0; }));
  // The supersede half done: both copies there. A look finds the new one
  // (`rd` of the whole template finds the oldest: take it for the look,
  // then put it back).
  c.out(sys::kSpace, new_beat.to_tuple());
  auto held = c.in(sys::kSpace, ts::Template::exactly(old_beat.to_tuple()), 0ms);
  REQUIRE(held);
  REQUIRE(view_becomes(uplink, [&](const auto& v) { return v.scheduler && v.scheduler->time == t0 + 0.5; }));
  c.out(sys::kSpace, old_beat.to_tuple());
  // A read now (an owner block, long over, is written): its `rd` returns
  // the oldest copy; the view keeps the newer.
  const auto reads = uplink.reads();
  c.out(sys::kSpace, sys::OwnerBlock{"n1", 0, 1}.to_tuple());
  within_20s([&] { return uplink.reads() != reads; });
  CHECK(uplink.reads() > reads);
  CHECK(uplink.view().scheduler->time == t0 + 0.5);
}

TEST_CASE(
    "uplink: scheduler 0 beaten at every tick costs no reads, and its serving record taken is read at once") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  auto s = settings(server);
  s.scheduler_stale_seconds = 60;  // the next look 24 s away at the earliest
  piranha::Uplink uplink(
      s, [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  const auto beat = [&](double t) {
    sys::supersede(c, sys::scheduler_heartbeat_template(0), sys::SchedulerHeartbeat{0, t}.to_tuple());
  };
  const double t0 = sys::wall_now();
  const auto reads = uplink.reads();
  // As the NPS starts: its heartbeat, then its serving record, whose event
  // makes the agent read.
  beat(t0);
  sys::supersede(c, sys::serving_template(0), sys::SchedulerServing{0, t0}.to_tuple());
  REQUIRE(view_becomes(uplink, [&](const auto& v) { return v.scheduler && v.scheduler->time == t0; }));
  CHECK(uplink.reads() == reads + 1);
  const auto before = uplink.view().generation;
  // Fifty beats, as fifty event ticks of the NPS would give: no event
  // reaches the agent, so nothing is read and the view does not move.
  for (int i = 1; i <= 50; ++i) beat(t0 + i * 0.001);
  std::this_thread::sleep_for(300ms);
  CHECK(uplink.view().generation == before);
  CHECK(uplink.reads() == reads + 1);
  CHECK(uplink.looks() == 0);
  // A killed NPS's record left behind, taken by a restarted one that wrote
  // its own (newer) first: the going of the older one is no news.
  const sys::SchedulerServing killed{0, t0 - 100};
  c.out(sys::kSpace, killed.to_tuple());  // written: news (read)
  within_20s([&] { return uplink.reads() != reads + 1; });
  REQUIRE(uplink.reads() == reads + 2);
  REQUIRE(c.in(sys::kSpace, ts::Template::exactly(killed.to_tuple()), 0ms));
  std::this_thread::sleep_for(300ms);
  CHECK(uplink.reads() == reads + 2);
  // Withdrawn, as a stopping NPS does (the heartbeat, then the serving
  // record): read at once, and gone from the view.
  REQUIRE(c.in(sys::kSpace, sys::scheduler_heartbeat_template(0), 0ms));
  REQUIRE(c.in(sys::kSpace, sys::serving_template(0), 0ms));
  CHECK(view_becomes(uplink, [](const auto& v) { return !v.scheduler; }));
  CHECK(uplink.reads() == reads + 3);
}

TEST_CASE_FIXTURE(
    Linked, "uplink: new jobs reach the view from their events with their launch records and requirements") {
  const auto reads = uplink.reads();
  // Job 5 with a requirement, job 6 without, job 7 registered without a
  // program (never in the view); their records written together, as the
  // events of one wait.
  const double now = sys::wall_now();
  c.out(sys::kSpace, sys::JobRequirement{5, "label=gpu"}.to_tuple());
  for (std::int64_t id : {5, 6}) c.out(sys::kSpace, sys::JobLaunch{id, "/bin/true", {}, "/"}.to_tuple());
  std::vector<ts::Tuple> records;
  for (std::int64_t id : {5, 6, 7})
    records.push_back(
        sys::JobRecord{id, "true", "job." + std::to_string(id), now, sys::JobState::Queued}.to_tuple());
  c.out_many(sys::kSpace, records);
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.live.size() == 2; }));
  const auto v = uplink.view();
  CHECK(v.live[0].id == 5);
  CHECK(v.live[1].id == 6);
  CHECK(v.requirements == std::map<std::int64_t, std::string>{{5, "label=gpu"}});
  CHECK(uplink.reads() == reads);
}

TEST_CASE_FIXTURE(
    Linked,
    "uplink: a job queued, marked running and ended reaches the view from its events, read only once") {
  const auto reads = uplink.reads();
  c.out(sys::kSpace, sys::JobLaunch{7, "/bin/true", {}, "/"}.to_tuple());
  c.out(sys::kSpace, sys::JobRecord{7, "true", "job.7", sys::wall_now(), sys::JobState::Queued}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.live.size() == 1 && v.live[0].id == 7; }));
  CHECK(uplink.reads() == reads);
  // Marked running, its patience written first as a feeder does: its
  // patience looked at once, alone, within kFeederSlack; no read (at 10,000
  // nodes a read each was most of the server's work as a job started).
  const auto patience_looks = uplink.patience_looks();
  c.out(sys::kSpace, sys::JobPatience{7, 600}.to_tuple());
  sys::set_job_state(c, 7, sys::JobState::Running);
  within_20s([&] { return uplink.patience_looks() != patience_looks; });
  CHECK(uplink.patience_looks() == patience_looks + 1);
  std::this_thread::sleep_for(1500ms);  // found: not looked at again
  CHECK(uplink.patience_looks() == patience_looks + 1);
  CHECK(uplink.reads() == reads);
  // Ended: out of the view without a read.
  sys::set_job_state(c, 7, sys::JobState::Done);
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.empty(); }));
  CHECK(uplink.reads() == reads);
}

TEST_CASE_FIXTURE(
    Linked,
    "uplink: a running job's patience written after the job was marked running is looked for each second, "
    "and its silent feeder lost after it") {
  const auto reads = uplink.reads();
  const double now = sys::wall_now();
  c.out(sys::kSpace, sys::JobStat{1, 3, 7, 0.1, now - piranha::kFeederSilence - 5}.to_tuple());
  c.out(sys::kSpace, sys::JobLaunch{1, "/bin/true", {}, "/"}.to_tuple());
  c.out(sys::kSpace, sys::JobRecord{1, "true", "job.1", now, sys::JobState::Running}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.live.size() == 1; }));
  // Absent: looked for again every second, without a read.
  CHECK(within_20s([&] { return uplink.patience_looks() >= 3; }));
  CHECK(uplink.reads() == reads);
  // Written: the next look finds it, and the feeder (silent since the
  // uplink saw the job marked running) is lost 1 s + kFeederSlack after.
  c.out(sys::kSpace, sys::JobPatience{1, 1}.to_tuple());
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.empty(); }));
  CHECK(sys::losses_by_job(c).count(1) == 1);
}

TEST_CASE("uplink: patience_after_look keeps what was found, the default only after kPatienceLooks misses") {
  using piranha::patience_after_look;
  CHECK(patience_after_look(7.0, 0) == 7.0);
  CHECK(patience_after_look(7.0, piranha::kPatienceLooks + 5) == 7.0);
  CHECK_FALSE(patience_after_look(std::nullopt, 0));
  CHECK_FALSE(patience_after_look(std::nullopt, piranha::kPatienceLooks - 2));
  // The kPatienceLooks-th look in a row to find none.
  CHECK(patience_after_look(std::nullopt, piranha::kPatienceLooks - 1) == piranha::kFeederPatience);
}

TEST_CASE("uplink: patience_look_delay is within the feeder's slack and spread over the nodes") {
  double lo = piranha::kFeederSlack, hi = 0, sum = 0;
  const int n = 1000;
  for (int i = 0; i < n; ++i) {
    const double d = piranha::patience_look_delay("ws" + std::to_string(i), 42);
    CHECK(d >= 0);
    CHECK(d < piranha::kFeederSlack);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
    sum += d;
  }
  CHECK(piranha::patience_look_delay("ws1", 42) == piranha::patience_look_delay("ws1", 42));
  CHECK(lo < 0.1 * piranha::kFeederSlack);
  CHECK(hi > 0.9 * piranha::kFeederSlack);
  CHECK(std::abs(sum / n - piranha::kFeederSlack / 2) < 0.1 * piranha::kFeederSlack);
}

TEST_CASE(
    "uplink: a beating scheduler 0 is looked at alone, its silence once as it goes stale, its return read") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  auto s = settings(server);
  // A look every 1.2 to 1.8 s: a heartbeat found fresh is 1.2 s from
  // stale at the next look, room for a sanitizer on a busy machine.
  s.scheduler_stale_seconds = 3;
  piranha::Uplink uplink(
      s, [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  double written = 0;  // the last beat's time
  const auto beat = [&] {
    written = sys::wall_now();
    sys::supersede(c, sys::scheduler_heartbeat_template(0), sys::SchedulerHeartbeat{0, written}.to_tuple());
  };
  beat();
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.scheduler.has_value(); }));
  // Beaten until a look has found a newer one: the first, learnt by a read
  // up to a look's time after it was written, may go stale before the next
  // look (then a look finds the scheduler back, and reads).
  const double first = uplink.view().scheduler->time;
  const auto refreshed = std::chrono::steady_clock::now() + 20s;
  while (uplink.view().scheduler->time == first && std::chrono::steady_clock::now() < refreshed) {
    beat();
    std::this_thread::sleep_for(50ms);
  }
  REQUIRE(uplink.view().scheduler->time > first);
  const auto reads = uplink.reads();
  const auto looks = uplink.looks();
  const auto stale_looks = uplink.stale_looks();
  // Beaten for twice its staleness: the looks keep it fresh.
  const auto until = std::chrono::steady_clock::now() + 6s;
  while (std::chrono::steady_clock::now() < until) {
    beat();
    std::this_thread::sleep_for(50ms);
  }
  CHECK(uplink.reads() == reads);
  CHECK(uplink.stale_looks() == stale_looks);
  CHECK(uplink.looks() - looks >= 3);  // at least one per 1.8 s, no more than one per 1.2 s
  CHECK(uplink.looks() - looks <= 6);
  CHECK(sys::wall_now() - uplink.view().scheduler->time < 2.5);
  // The next look (within 1.8 s, before the one it knows goes stale) finds the last beat.
  const double last = written;
  REQUIRE(view_becomes(uplink, [&](const auto& v) { return v.scheduler && v.scheduler->time == last; }));
  CHECK(uplink.stale_looks() == stale_looks);
  const auto generation = uplink.generation();
  // Silent: looked at once as it goes stale; the view's generation moves,
  // so that the agent decides on its staleness.
  within_20s([&] { return uplink.stale_looks() != stale_looks; });
  CHECK(uplink.stale_looks() == stale_looks + 1);
  CHECK(uplink.generation() > generation);
  std::this_thread::sleep_for(4s);  // more than two looks' time: looks, but no stale look again, no reads
  CHECK(uplink.stale_looks() == stale_looks + 1);
  CHECK(uplink.reads() == reads);
  CHECK(uplink.view().scheduler->time == last);  // the last beat, now stale
  // Back: the next look finds it fresh, and the uplink reads (reads() counts
  // a read as it starts; the view has the heartbeat once it is done).
  beat();
  CHECK(view_becomes(uplink, [&](const auto& v) { return v.scheduler && v.scheduler->time > last; }));
  CHECK(uplink.reads() == reads + 1);
}
