// derive(): the live pool's rules on snapshots made by hand, without a
// server or a clock.
#include "piranha/nps/live_snapshot.h"

#include <doctest/doctest.h>

namespace piranha::nps {
namespace {

constexpr double kNow = 1'000'000;

sys::NodeRecord node(const std::string& name, sys::NodeState state, double updated_at) {
  return sys::NodeRecord{name, 1, 1.0, state, updated_at};
}

sys::JobRecord job(JobId id, double submit_time, sys::JobState state = sys::JobState::Queued) {
  return sys::JobRecord{id, "spin", "job." + std::to_string(id), submit_time, state};
}

// A snapshot read at kNow + `after` whose jobs all have launch records.
LiveSnapshot at(double after, std::vector<sys::JobRecord> jobs = {}) {
  LiveSnapshot s;
  s.time = kNow + after;
  s.jobs = std::move(jobs);
  for (const auto& j : s.jobs) s.launchable.insert(j.id);
  return s;
}

std::vector<JobId> ids(const LiveState& state) {
  std::vector<JobId> out;
  for (const auto& j : state.jobs) out.push_back(j.id);
  return out;
}

const NodeStatus& status(const LiveState& state, const std::string& name) {
  return state.nodes.at(name).status;
}

TEST_CASE("derive: a node is down when neither its record nor its agent's heartbeat is fresh") {
  LivePoolOptions o;
  o.stale_seconds = 30;
  auto s = at(0);
  s.nodes = {node("fresh", sys::NodeState::Available, kNow - 30),
             node("beating", sys::NodeState::Available, kNow - 100),
             node("stale", sys::NodeState::Available, kNow - 30.5),
             node("silent", sys::NodeState::Unavailable, kNow - 100)};
  s.heartbeats = {{"beating", kNow - 5}, {"stale", kNow - 31}};
  const auto state = derive({}, s, o);
  CHECK(status(state, "fresh").state == "available");
  CHECK(status(state, "fresh").available);
  CHECK(status(state, "beating").state == "available");  // its heartbeat is younger than its record
  CHECK(status(state, "beating").available);
  CHECK(status(state, "stale").state == "down");
  CHECK_FALSE(status(state, "stale").available);
  CHECK(status(state, "silent").state == "down");
  CHECK(state.time == kNow);
}

TEST_CASE("derive: a node whose agent missed a beat when the heartbeats were read is suspect, not down") {
  auto s = at(0);
  s.heartbeats_read_at = kNow - 2;  // read whole a moment before the rest
  s.nodes = {node("quiet", sys::NodeState::Available, kNow - 100),
             node("heard", sys::NodeState::Available, kNow - 100),
             node("fast", sys::NodeState::Available, kNow - 100),
             node("gone", sys::NodeState::Available, kNow - 100)};
  // Beats every 10 s by default: 16 s of silence at the read is past 1.5 beats, 14 s is not.
  s.heartbeats = {{"quiet", kNow - 18}, {"heard", kNow - 16}, {"fast", kNow - 4.5}, {"gone", kNow - 31}};
  s.beats = {{"fast", 1}};
  const auto state = derive({}, s, LivePoolOptions{});
  CHECK(status(state, "quiet").suspect);
  CHECK(status(state, "quiet").state == "available");  // its state stands until it is stale
  CHECK(status(state, "quiet").available);
  CHECK_FALSE(status(state, "heard").suspect);
  CHECK(status(state, "fast").suspect);  // 2.5 s of silence at the read, beating every second
  CHECK_FALSE(status(state, "gone").suspect);
  CHECK(status(state, "gone").state == "down");
}

TEST_CASE("derive: a node carries its agent's reason while the reason is of its state and it is fresh") {
  auto s = at(0);
  s.nodes = {
      node("busy", sys::NodeState::Unavailable, kNow), node("changed", sys::NodeState::Available, kNow),
      node("stale", sys::NodeState::Unavailable, kNow - 100), node("quiet", sys::NodeState::Available, kNow)};
  s.reasons = {{"busy", "unavailable", "1-min load 2.31 >= 0.70, own piranhas excluded", kNow},
               {"changed", "unavailable", "keyboard/mouse idle 3 s < 60 s", kNow - 5},  // before its change
               {"stale", "unavailable", "1-min load 0.93 >= 0.70", kNow - 100}};
  const auto state = derive({}, s, LivePoolOptions{});
  CHECK(status(state, "busy").reason == "1-min load 2.31 >= 0.70, own piranhas excluded");
  CHECK(status(state, "changed").reason == "");
  CHECK(status(state, "stale").reason == "");  // down by silence: its agent said nothing of that
  CHECK(status(state, "quiet").reason == "");  // no record (an older agent)
}

TEST_CASE("derive: a node is available only when reported available and under no owner block now") {
  auto s = at(0);
  s.nodes = {node("ws01", sys::NodeState::Available, kNow), node("ws02", sys::NodeState::Available, kNow),
             node("ws03", sys::NodeState::Unavailable, kNow)};
  s.owner_blocks = {{"ws01", kNow - 10, kNow + 10},    // in force
                    {"ws02", kNow - 20, kNow},         // ended at the read
                    {"ws02", kNow + 60, kNow + 120}};  // ahead
  const auto state = derive({}, s, {});
  CHECK_FALSE(status(state, "ws01").available);
  CHECK(status(state, "ws01").state == "available");  // as its agent says
  CHECK(status(state, "ws02").available);
  REQUIRE(state.nodes.at("ws02").blocks.size() == 1);  // only those not ended
  CHECK(state.nodes.at("ws02").blocks[0].start == kNow + 60);
  CHECK(state.nodes.at("ws01").blocks.size() == 1);
  CHECK(status(state, "ws03").state == "unavailable");
  CHECK_FALSE(status(state, "ws03").available);
}

TEST_CASE("derive: a node is open since the first read that found it available, until it is not") {
  auto read = [](double after, sys::NodeState state) {
    auto s = at(after);
    s.nodes = {node("ws01", state, kNow + after)};
    return s;
  };
  auto state = derive({}, read(0, sys::NodeState::Unavailable), {});
  CHECK_FALSE(state.nodes.at("ws01").open_since);
  state = derive(state, read(10, sys::NodeState::Available), {});
  CHECK(state.nodes.at("ws01").open_since == kNow + 10);
  state = derive(state, read(20, sys::NodeState::Available), {});
  CHECK(state.nodes.at("ws01").open_since == kNow + 10);
  state = derive(state, read(30, sys::NodeState::Unavailable), {});
  CHECK_FALSE(state.nodes.at("ws01").open_since);
  // Stale: no longer open, whatever its last record says.
  state = derive(state, read(40, sys::NodeState::Available), {});
  auto s = at(100);
  s.nodes = {node("ws01", sys::NodeState::Available, kNow + 40)};
  state = derive(state, s, {});
  CHECK_FALSE(state.nodes.at("ws01").open_since);
}

TEST_CASE("derive: new nodes join the order by name, and one not listed keeps its last state") {
  auto s = at(0);
  s.nodes = {node("ws02", sys::NodeState::Available, kNow), node("ws01", sys::NodeState::Available, kNow)};
  s.running = {{"ws01", 7, "scheduler 0", kNow - 5}, {"ws02", 0, "FAIR", kNow - 5}};
  s.complaints = {{"ws02", kNow - 50, "slow"}, {"ws02", kNow - 40, "still slow"}};
  auto state = derive({}, s, {});
  CHECK(state.order == std::vector<std::string>{"ws01", "ws02"});
  CHECK(status(state, "ws01").running == 7);
  CHECK(status(state, "ws01").by == "scheduler 0");
  CHECK_FALSE(status(state, "ws02").running);
  CHECK(status(state, "ws02").by == "FAIR");
  REQUIRE(state.nodes.at("ws02").complaints.size() == 2);
  CHECK(state.nodes.at("ws02").complaints[1].text == "still slow");

  // ws00 joins after the others; ws02's records are absent (being
  // rewritten), and ws01's ("running", ...) is.
  s = at(5);
  s.nodes = {node("ws01", sys::NodeState::Unavailable, kNow + 5),
             node("ws00", sys::NodeState::Available, kNow + 5)};
  state = derive(state, s, {});
  CHECK(state.order == std::vector<std::string>{"ws01", "ws02", "ws00"});
  CHECK(status(state, "ws01").state == "unavailable");
  CHECK(status(state, "ws01").running == 7);  // as last seen
  CHECK(status(state, "ws02").available);     // as last seen
  CHECK(state.nodes.at("ws02").complaints.size() == 2);
}

TEST_CASE("derive: live jobs are queued or running, with a program and a feeder not silent, by arrival") {
  LivePoolOptions o;
  o.feeder_silence = 30;
  auto s = at(0, {job(1, 50), job(2, 10, sys::JobState::Running), job(3, 20, sys::JobState::Running),
                  job(4, 10), job(5, 5, sys::JobState::Held), job(6, 5, sys::JobState::Done),
                  job(7, 5, sys::JobState::Running), job(8, 1)});
  s.stats = {{2, 3, 7, 0.5, kNow - 29},  {3, 3, 7, 0.5, kNow - 31},  // its feeder is dead
             {4, 0, 0, 0, kNow - 1000},                              // queued: no feeder to be silent
             {9, 1, 9, 0.5, kNow - 1},                               // heard at its newest jobstat
             {9, 0, 10, 0, kNow - 1000}, {10, 0, 10, 0, 0}};         // its feeder has not reported yet
  s.jobs.push_back(job(9, 60, sys::JobState::Running));
  s.jobs.push_back(job(10, 70, sys::JobState::Running));
  s.launchable.insert({9, 10});
  s.launchable.erase(8);  // registered without a program
  const auto state = derive({}, s, o);
  CHECK(ids(state) == std::vector<JobId>{7, 2, 4, 1, 9, 10});  // by arrival, then id
  REQUIRE(state.jobs.size() == 6);
  CHECK(state.jobs[1].measured);
  CHECK(state.jobs[1].mean_task_time == 0.5);
  CHECK(state.jobs[1].tasks_left == 7);
  CHECK(state.jobs[1].tasks == 10);
  CHECK_FALSE(state.jobs[2].measured);  // no task completed
  CHECK(state.jobs[3].name == "spin");
  CHECK(state.jobs[3].arrival == 50);
  CHECK(state.jobs[4].measured);  // as its newest jobstat says
  CHECK(state.jobs[4].tasks_left == 9);
  CHECK(state.live_records.size() == 6);
  CHECK(state.live_records.at(2).state == sys::JobState::Running);
}

TEST_CASE("derive: a job kept while its record is absent is as last seen, with its statistics") {
  auto s = at(0, {job(1, 10), job(2, 20)});
  s.stats = {{1, 4, 96, 0.01, kNow}};
  s.work = {{1, "ws01", 3, 0.03, 2, 1}, {1, "ws02", 1, 0.01, 1, 0}};
  auto state = derive({}, s, {});
  REQUIRE(ids(state) == std::vector<JobId>{1, 2});
  CHECK(state.jobs[0].attained == doctest::Approx(0.04));
  CHECK(state.jobs[0].retreats == 3);  // the job's own count, summed over its nodes
  CHECK(state.jobs[0].owner_retreats == 1);

  // Job 1's record, jobstat and jobwork are all being rewritten; the shell
  // keeps it (absent_jobs.h). Job 2 is gone without being kept.
  s = at(1);
  s.kept_absent = {1};
  s.launchable = {1};
  state = derive(state, s, {});
  REQUIRE(ids(state) == std::vector<JobId>{1});
  CHECK(state.jobs[0].arrival == 10);
  CHECK(state.jobs[0].measured);
  CHECK(state.jobs[0].tasks_left == 96);
  CHECK(state.jobs[0].attained == doctest::Approx(0.04));
  CHECK(state.jobs[0].retreats == 3);  // as last seen

  // Written back, while one of its jobworks is still being rewritten: the
  // attained service does not shrink.
  s = at(2, {job(1, 10, sys::JobState::Running)});
  s.stats = {{1, 6, 94, 0.01, kNow + 2}};
  s.work = {{1, "ws01", 3, 0.03, 0}};
  state = derive(state, s, {});
  REQUIRE(ids(state) == std::vector<JobId>{1});
  CHECK(state.jobs[0].tasks_left == 94);
  CHECK(state.jobs[0].attained == doctest::Approx(0.04));
  s.work = {{1, "ws01", 5, 0.05, 0}, {1, "ws02", 1, 0.01, 0}};
  state = derive(state, s, {});
  CHECK(state.jobs[0].attained == doctest::Approx(0.06));
  CHECK(state.live_records.at(1).state == sys::JobState::Running);

  // A job the shell keeps but the last state did not know: nothing to keep.
  s = at(3);
  s.kept_absent = {9};
  s.launchable = {9};
  CHECK(derive(state, s, {}).jobs.empty());
}

TEST_CASE("derive: FAIR's queue length is the number of live jobs when a job is first seen") {
  auto state = derive({}, at(0, {job(1, 10)}), {});
  REQUIRE(state.jobs.size() == 1);
  CHECK(state.jobs[0].queue_length_at_arrival == 1);
  state = derive(state, at(1, {job(1, 10), job(2, 11), job(3, 12)}), {});
  REQUIRE(state.jobs.size() == 3);
  CHECK(state.jobs[0].queue_length_at_arrival == 1);
  CHECK(state.jobs[1].queue_length_at_arrival == 3);
  CHECK(state.jobs[2].queue_length_at_arrival == 3);
  // Job 1 leaves; when it comes back (released), it is seen afresh.
  state = derive(state, at(2, {job(2, 11), job(3, 12)}), {});
  CHECK(state.first_queue_length.count(1) == 0);
  state = derive(state, at(3, {job(1, 10), job(2, 11), job(3, 12)}), {});
  CHECK(state.jobs[0].queue_length_at_arrival == 3);
  CHECK(state.jobs[1].queue_length_at_arrival == 3);
}

TEST_CASE("derive: a node's attributes are its nodeattr record's, a job's requirement its jobreq text") {
  auto s = at(0, {job(1, kNow - 5), job(2, kNow - 4)});
  s.nodes = {node("ws01", sys::NodeState::Available, kNow), node("ws02", sys::NodeState::Available, kNow)};
  s.attributes = {sys::NodeAttrs{"ws01", 8, std::int64_t{16} << 30, "x86_64", {"gpu"}}};
  s.requirements = {{2, "label=gpu"}};
  const auto state = derive({}, s, LivePoolOptions{});
  CHECK(status(state, "ws01").attributes ==
        sched::NodeAttributes{8, std::int64_t{16} << 30, "x86_64", {"gpu"}});
  CHECK_FALSE(status(state, "ws02").attributes);
  REQUIRE(state.jobs.size() == 2);
  CHECK(state.jobs[0].requirement.empty());
  CHECK(state.jobs[1].requirement == "label=gpu");
}

}  // namespace
}  // namespace piranha::nps
