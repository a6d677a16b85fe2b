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
bool view_becomes(const piranha::Uplink& u, Ok ok) {
  auto give_up = std::chrono::steady_clock::now() + 20s;
  while (std::chrono::steady_clock::now() < give_up) {
    if (auto v = u.view(); v.generation > 0 && ok(v)) return true;
    std::this_thread::sleep_for(2ms);
  }
  return false;
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

TEST_CASE("uplink: heartbeat_news reads only when scheduler 0 comes or goes") {
  using piranha::heartbeat_news;
  const sys::SchedulerHeartbeat h100{0, 100.0}, h101{0, 101.0};
  const double stale = 10;
  // None known: the scheduler has come.
  auto n = heartbeat_news(std::nullopt, true, h100, 100.5, stale);
  CHECK(n.read);
  REQUIRE(n.heartbeat);
  CHECK(n.heartbeat->time == 100.0);
  // A fresh one rewritten (sys::supersede: the new written, the old taken).
  n = heartbeat_news(h100, true, h101, 101.5, stale);
  CHECK_FALSE(n.read);
  CHECK(n.heartbeat->time == 101.0);
  n = heartbeat_news(h101, false, h100, 101.5, stale);
  CHECK_FALSE(n.read);
  CHECK(n.heartbeat->time == 101.0);
  // Events out of order never make the known heartbeat older.
  n = heartbeat_news(h101, true, h100, 101.5, stale);
  CHECK_FALSE(n.read);
  CHECK(n.heartbeat->time == 101.0);
  // Written after the known one went stale: the scheduler is back.
  n = heartbeat_news(h100, true, h101, 100.0 + stale + 5, stale);
  CHECK(n.read);
  CHECK(n.heartbeat->time == 101.0);
  // The newest taken, with no successor: the scheduler may be gone, and
  // none is known until the read says.
  n = heartbeat_news(h101, false, h101, 101.5, stale);
  CHECK(n.read);
  CHECK_FALSE(n.heartbeat);
  n = heartbeat_news(std::nullopt, false, h101, 101.5, stale);
  CHECK(n.read);
  // So one written before that read is over (another NPS starting) is
  // news too.
  n = heartbeat_news(std::nullopt, true, sys::SchedulerHeartbeat{0, 101.6}, 101.7, stale);
  CHECK(n.read);
}

TEST_CASE("uplink: heartbeat_after_read keeps the newer heartbeat and none known taken") {
  using piranha::heartbeat_after_read;
  const sys::SchedulerHeartbeat h100{0, 100.0}, h101{0, 101.0};
  const double none = -INFINITY;
  // Nothing happened during the read: what it found.
  CHECK(heartbeat_after_read(h100, std::nullopt, none)->time == 100.0);
  CHECK(heartbeat_after_read(h101, h100, none)->time == 101.0);
  CHECK_FALSE(heartbeat_after_read(std::nullopt, std::nullopt, none));
  // The read found the older copy of a supersede whose events came
  // meanwhile (h101 written, h100 taken): the newer one stays known.
  CHECK(heartbeat_after_read(h100, h101, 100.0)->time == 101.0);
  CHECK(heartbeat_after_read(h100, h101, none)->time == 101.0);
  // The scheduler withdrew during the read: the copy it found is gone.
  CHECK_FALSE(heartbeat_after_read(h101, std::nullopt, 101.0));
  // ...unless another was written after (a new NPS): that one.
  CHECK(heartbeat_after_read(h100, h101, 100.0)->time == 101.0);
  // A heartbeat taken during the read, older than the one it found, does
  // not hide it.
  CHECK(heartbeat_after_read(h101, std::nullopt, 100.0)->time == 101.0);
}

// The NPS's flush supersedes a node's assignment, then its heartbeat: the
// assignment's event starts a read while the heartbeat is being replaced
// (the new copy written, the old not yet taken), and the read's `rd` finds
// the old copy. The agent must not take the old copy's `taken` event for
// the scheduler's withdrawal (it would fall back to its native policy and
// retreat or start piranhas until the next read).
TEST_CASE("uplink: a read that finds the old copy of a heartbeat being rewritten keeps the scheduler") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  piranha::Uplink uplink(
      settings(server), [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  const double t0 = sys::wall_now();
  const sys::SchedulerHeartbeat old_beat{0, t0}, new_beat{0, t0 + 0.5};
  c.out(sys::kSpace, old_beat.to_tuple());
  REQUIRE(view_becomes(uplink, [&](const auto& v) { return v.scheduler && v.scheduler->time == t0; }));
  // The supersede half done: both copies there, the new one's event seen.
  c.out(sys::kSpace, new_beat.to_tuple());
  REQUIRE(view_becomes(uplink, [&](const auto& v) { return v.scheduler && v.scheduler->time == t0 + 0.5; }));
  // A read now: its `rd` returns the oldest copy.
  c.out(sys::kSpace, sys::Assignment{0, 1, "n1", 0}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.assignment.has_value(); }));
  CHECK(uplink.view().scheduler->time == t0 + 0.5);
  // The supersede's end: the old copy taken. No news, no read. First a
  // second without reads: the assignment's own event can arrive after the
  // read that already found the assignment (a slow machine, a sanitizer)
  // and ask for one more read, which is news, not the take's doing.
  auto generation = uplink.view().generation;
  for (auto quiet_since = std::chrono::steady_clock::now(), give_up = quiet_since + 20s;
       std::chrono::steady_clock::now() - quiet_since < 1s && std::chrono::steady_clock::now() < give_up;) {
    std::this_thread::sleep_for(10ms);
    if (const auto g = uplink.view().generation; g != generation) {
      generation = g;
      quiet_since = std::chrono::steady_clock::now();
    }
  }
  auto taken = c.in(sys::kSpace, sys::scheduler_heartbeat_template(0), 0ms);  // the oldest
  REQUIRE(taken);
  REQUIRE(sys::SchedulerHeartbeat::from_tuple(taken->tuple)->time == t0);
  const auto until = std::chrono::steady_clock::now() + 300ms;
  bool dropped = false;
  while (std::chrono::steady_clock::now() < until) {
    dropped = dropped || !uplink.view().scheduler;
    std::this_thread::sleep_for(1ms);
  }
  CHECK_FALSE(dropped);
  CHECK(uplink.view().generation == generation);
}

TEST_CASE("uplink: scheduler 0's heartbeat beaten at every tick costs no reads, its withdrawal does") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  piranha::Uplink uplink(
      settings(server), [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  const auto beat = [&](double t) {
    sys::supersede(c, sys::scheduler_heartbeat_template(0), sys::SchedulerHeartbeat{0, t}.to_tuple());
  };
  const double t0 = sys::wall_now();
  beat(t0);
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.scheduler.has_value(); }));
  const auto before = uplink.view().generation;
  // Fifty beats, as fifty event ticks of the NPS would give: each is
  // noted (the view's heartbeat is the last), none is read.
  for (int i = 1; i <= 50; ++i) beat(t0 + i * 0.001);
  CHECK(view_becomes(uplink,
                     [&](const auto& v) { return v.scheduler && v.scheduler->time == t0 + 50 * 0.001; }));
  // An assignment still prompts a read, and it comes after the beats' events.
  c.out(sys::kSpace, sys::Assignment{0, 1, "n1", 0}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.assignment.has_value(); }));
  CHECK(uplink.view().generation - before <= 3);
  // Withdrawn, as a stopping NPS does: read at once, and gone from the view.
  REQUIRE(c.in(sys::kSpace, sys::scheduler_heartbeat_template(0), 0ms));
  CHECK(view_becomes(uplink, [](const auto& v) { return !v.scheduler; }));
}

TEST_CASE("uplink: a job queued, marked running and ended reaches the view from its events, read only once") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  piranha::Uplink uplink(
      settings(server), [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  const auto reads = uplink.reads();
  c.out(sys::kSpace, sys::JobLaunch{7, "/bin/true", {}, "/"}.to_tuple());
  c.out(sys::kSpace, sys::JobRecord{7, "true", "job.7", sys::wall_now(), sys::JobState::Queued}.to_tuple());
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.live.size() == 1 && v.live[0].id == 7; }));
  CHECK(uplink.reads() == reads);
  // Marked running: read once, within kFeederSlack, to learn its patience.
  sys::set_job_state(c, 7, sys::JobState::Running);
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (uplink.reads() == reads && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(5ms);
  CHECK(uplink.reads() == reads + 1);
  // Ended: out of the view without a read.
  sys::set_job_state(c, 7, sys::JobState::Done);
  CHECK(view_becomes(uplink, [](const auto& v) { return v.live.empty(); }));
  CHECK(uplink.reads() == reads + 1);
}

TEST_CASE("uplink: running_read_delay is within the feeder's slack and spread over the nodes") {
  double lo = piranha::kFeederSlack, hi = 0, sum = 0;
  const int n = 1000;
  for (int i = 0; i < n; ++i) {
    const double d = piranha::running_read_delay("ws" + std::to_string(i), 42);
    CHECK(d >= 0);
    CHECK(d < piranha::kFeederSlack);
    lo = std::min(lo, d);
    hi = std::max(hi, d);
    sum += d;
  }
  CHECK(piranha::running_read_delay("ws1", 42) == piranha::running_read_delay("ws1", 42));
  CHECK(lo < 0.1 * piranha::kFeederSlack);
  CHECK(hi > 0.9 * piranha::kFeederSlack);
  CHECK(std::abs(sum / n - piranha::kFeederSlack / 2) < 0.1 * piranha::kFeederSlack);
}

TEST_CASE(
    "uplink: a beating scheduler 0 costs no reads past its staleness, and its silence is looked at once, "
    "without a read") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  auto s = settings(server);
  s.scheduler_stale_seconds = 0.5;
  piranha::Uplink uplink(
      s, [](const std::string&) {}, -1);
  REQUIRE(view_becomes(uplink, [](const auto&) { return true; }));
  const auto beat = [&] {
    sys::supersede(c, sys::scheduler_heartbeat_template(0),
                   sys::SchedulerHeartbeat{0, sys::wall_now()}.to_tuple());
  };
  beat();
  REQUIRE(view_becomes(uplink, [](const auto& v) { return v.scheduler.has_value(); }));
  const auto reads = uplink.reads();
  // Beaten for four times its staleness: the events keep it fresh.
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (std::chrono::steady_clock::now() < until) {
    beat();
    std::this_thread::sleep_for(100ms);
  }
  CHECK(uplink.reads() == reads);
  CHECK(uplink.stale_looks() == 0);
  const auto generation = uplink.generation();
  // Silent: its record alone looked at once when it goes stale, and not again; the view's
  // generation moves, so that the agent decides on its staleness.
  const auto give_up = std::chrono::steady_clock::now() + 20s;
  while (uplink.stale_looks() == 0 && std::chrono::steady_clock::now() < give_up)
    std::this_thread::sleep_for(5ms);
  CHECK(uplink.stale_looks() == 1);
  CHECK(uplink.generation() > generation);
  std::this_thread::sleep_for(1500ms);  // three times its staleness: no more looks, no reads
  CHECK(uplink.stale_looks() == 1);
  CHECK(uplink.reads() == reads);
}
