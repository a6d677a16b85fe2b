// The agent's decision (decide.h), rule by rule, without processes or
// clocks: the test plays the agent's shell, handing decide() what it would
// have seen and setting the piranhas as carrying out the actions would.
#include "piranha/agent/decide.h"

#include <doctest/doctest.h>

#include <initializer_list>

#include "piranha/runtime/job.h"  // kExitCutOff

namespace piranha {
namespace {

constexpr double kWall0 = 1'000'000'000;  // wall time at the test's second 0

// Second `s` of the test on both clocks.
Instant at(double s) {
  return Instant{
      Clock::time_point{} + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s)),
      kWall0 + s};
}

AgentSettings fcfs() {
  AgentSettings s;
  s.node = "n1";
  s.policy = NativePolicyKind::Fcfs;
  s.scheduler_stale_seconds = 10;
  s.max_failures = 3;
  return s;
}

const Verdict kIdle{true, "idle"};
const Verdict kBusy{false, "1-min load 0.93 >= 0.70"};

sys::JobLaunch launch(std::int64_t id) {
  return sys::JobLaunch{id, "/jobs/j" + std::to_string(id), {"x"}, "/"};
}

PoolView jobs(std::initializer_list<std::int64_t> ids) {
  PoolView v;
  for (auto id : ids) v.live.push_back(launch(id));
  return v;
}

// `v` with scheduler 0 assigning `job` (0: none) at `epoch`, its heartbeat
// written at second `beat`.
PoolView assigned(PoolView v, std::int64_t job, double beat, std::int64_t epoch = 1) {
  v.assignment = sys::Assignment{0, epoch, "n1", job};
  v.scheduler = sys::SchedulerHeartbeat{0, kWall0 + beat};
  return v;
}

Piranhas running(std::int64_t job, std::size_t count = 1) {
  return Piranhas{count, job, false, std::nullopt};
}

PiranhaExit exit_of(std::int64_t job, ExitStatus status, std::string stderr_tail = "") {
  PiranhaExit e;
  e.job_id = job;
  e.pid = 4242;
  e.status = status;
  e.stderr_tail = std::move(stderr_tail);
  return e;
}
const ExitStatus kClean{0, 0}, kFailed{1, 0}, kKilled{0, 9}, kCutOff{kExitCutOff, 0};

// The agent's decision with the test as its shell: `piranhas` is what the
// host has, which the test sets as carrying out the actions would.
struct Node {
  explicit Node(AgentSettings s = fcfs()) : state(std::move(s)) {}
  AgentState state;
  Piranhas piranhas;

  Actions decide(Observations seen, double t) {
    seen.piranhas = piranhas;
    return piranha::decide(seen, state, at(t));
  }
  Actions sense(const Verdict& v, double t, double changed = -1) {
    Observations o;
    o.verdict = v;
    o.verdict_at = at(changed < 0 ? t : changed).steady;
    return decide(o, t);
  }
  Actions see(const PoolView& v, double t) {
    Observations o;
    o.view = v;
    return decide(o, t);
  }
  Actions exited(const PiranhaExit& e, double t, std::map<std::int64_t, std::int64_t> tasks_here = {}) {
    Observations o;
    o.exits = {e};
    o.tasks_here = std::move(tasks_here);
    return decide(o, t);
  }
  Actions tick(double t) { return decide({}, t); }
};

// A node that has begun, is available and sees `view`; nothing runs yet.
Node idle_node(const PoolView& view, AgentSettings s = fcfs()) {
  Node n(std::move(s));
  n.sense(kIdle, 0);
  n.see(view, 0);
  return n;
}

template <class A>
std::vector<A> only(const Actions& actions) {
  std::vector<A> out;
  for (const auto& a : actions)
    if (auto x = std::get_if<A>(&a)) out.push_back(*x);
  return out;
}

}  // namespace

TEST_CASE(
    "decide: the first decision publishes the node's state and that it runs nothing, on its policy's word") {
  Node n;
  CHECK(n.tick(0) ==
        Actions{act::SetNodeState{sys::NodeState::Unavailable}, act::PublishRun{std::nullopt, "FCFS"}});
  CHECK(n.tick(1).empty());
}

TEST_CASE("availability: each change of the source's verdict is reported, the period that ends recorded") {
  Node n;
  n.tick(0);
  CHECK(n.sense(kIdle, 1) ==
        Actions{act::NoteAvailability{true, "idle"}, act::SetNodeState{sys::NodeState::Available}});
  CHECK(n.sense(kIdle, 2).empty());  // no change
  CHECK(n.sense(kBusy, 5) == Actions{act::RecordPeriod{kWall0 + 1, kWall0 + 5},
                                     act::NoteAvailability{false, kBusy.reason},
                                     act::SetNodeState{sys::NodeState::Unavailable}});
  CHECK(n.sense(kBusy, 6).empty());
}

TEST_CASE("availability: an owner block makes the node unavailable whatever the source says, until it ends") {
  Node n;
  n.sense(kIdle, 0);
  PoolView blocked = jobs({});
  blocked.owner_blocked = true;
  CHECK(n.see(blocked, 2) == Actions{act::RecordPeriod{kWall0, kWall0 + 2},
                                     act::NoteAvailability{false, "owner block"},
                                     act::SetNodeState{sys::NodeState::OwnerBlocked}});
  CHECK(n.sense(kIdle, 3).empty());  // the source alone cannot end it
  CHECK(n.see(jobs({}), 4) ==
        Actions{act::NoteAvailability{true, "idle"}, act::SetNodeState{sys::NodeState::Available}});

  // A block beginning and ending while the source says busy changes the
  // node's state, and is reported, though the node stays unavailable.
  n.sense(kBusy, 5);
  CHECK(n.see(blocked, 6) == Actions{act::NoteAvailability{false, "owner block"},
                                     act::SetNodeState{sys::NodeState::OwnerBlocked}});
  CHECK(n.see(jobs({}), 7) ==
        Actions{act::NoteAvailability{false, kBusy.reason}, act::SetNodeState{sys::NodeState::Unavailable}});
}

TEST_CASE("feed: without a scheduler the native policy chooses among the live jobs, and a piranha starts") {
  Node n;
  n.sense(kIdle, 0);
  // FCFS: the earliest arrived, ties by id.
  CHECK(n.see(jobs({5, 3}), 1) ==
        Actions{act::NoteTarget{3, "FCFS"}, act::PublishRun{3, "FCFS"}, act::Start{launch(3), 1}});
  // The job chosen is kept while it is live.
  n.piranhas = running(3);
  CHECK(n.see(jobs({5, 3, 1}), 2).empty());
}

TEST_CASE("feed: `cores` piranhas start, only once none runs, and none while the server is away") {
  AgentSettings s = fcfs();
  s.cores = 4;
  Node n = idle_node(jobs({}), s);
  Observations o;
  o.view = jobs({1});
  o.server_away = true;
  CHECK(only<act::Start>(n.decide(o, 1)).empty());
  CHECK(n.tick(2) == Actions{act::Start{launch(1), 4}});
  n.piranhas = running(1, 4);
  CHECK(n.tick(3).empty());
}

TEST_CASE("feed: the node's own piranhas start only once a campus loan's lent piranhas are gone") {
  Node n = idle_node(jobs({}));
  Observations o;
  o.view = assigned(jobs({1}), 1, 1);
  o.lent_running = 1;  // retreating: lent_job() gives way to job 1
  CHECK(only<act::Start>(n.decide(o, 1)).empty());
  Observations gone;
  CHECK(n.decide(gone, 2) == Actions{act::Start{launch(1), 1}});
}

TEST_CASE("feed: scheduler 0's assignment is obeyed while its heartbeat is fresh, the job only if live") {
  Node n = idle_node(jobs({1, 2}));
  n.piranhas = running(1);
  // The scheduler's word: job 2. Job 1's piranha gives way, now.
  CHECK(n.see(assigned(jobs({1, 2}), 2, 20), 21) ==
        Actions{act::ObeyScheduler{1}, act::NoteTarget{2, "scheduler"}, act::PublishRun{2, "scheduler 0"},
                act::Retreat{1, at(21).steady, "assignment", 2}});
  n.piranhas = {};
  CHECK(n.tick(22) == Actions{act::Start{launch(2), 1}});
  n.piranhas = running(2);
  // A job that is not live, or no job, means none.
  CHECK(only<act::NoteTarget>(n.see(assigned(jobs({1, 2}), 9, 22, 2), 22)) ==
        std::vector{act::NoteTarget{std::nullopt, "scheduler"}});
  n.see(assigned(jobs({1, 2}), 2, 23, 3), 23);
  CHECK(only<act::NoteTarget>(n.see(assigned(jobs({1, 2}), 0, 24, 4), 24)) ==
        std::vector{act::NoteTarget{std::nullopt, "scheduler"}});
}

TEST_CASE("feed: the native policy again once scheduler 0's heartbeat is stale or gone") {
  Node n = idle_node(jobs({1, 2}));
  n.see(assigned(jobs({1, 2}), 2, 20), 20);
  n.piranhas = running(2);
  // Fresh up to scheduler_stale_seconds (10) old.
  CHECK(n.see(assigned(jobs({1, 2}), 2, 20), 30).empty());
  CHECK(n.see(assigned(jobs({1, 2}), 2, 20), 30.5) ==
        Actions{act::LeaveScheduler{false}, act::NoteTarget{1, "FCFS"}, act::PublishRun{1, "FCFS"},
                act::Retreat{2, at(30.5).steady, "policy", 1}});
  n.see(assigned(jobs({1, 2}), 2, 31), 31);
  PoolView gone = assigned(jobs({1, 2}), 2, 31);
  gone.scheduler.reset();
  CHECK(only<act::LeaveScheduler>(n.see(gone, 32)) == std::vector{act::LeaveScheduler{true}});
  // An assignment whose scheduler has been silent since it was made is not obeyed.
  Node m = idle_node(jobs({}));
  CHECK(only<act::NoteTarget>(m.see(assigned(jobs({1, 2}), 2, 0), 11)) ==
        std::vector{act::NoteTarget{1, "FCFS"}});
}

TEST_CASE("feed: who decides is published when it changes, even if the job does not") {
  Node n = idle_node(jobs({1}));
  n.piranhas = running(1);
  CHECK(n.see(assigned(jobs({1}), 1, 5), 5) ==
        Actions{act::ObeyScheduler{1}, act::PublishRun{1, "scheduler 0"}});
}

TEST_CASE("retreat: the piranhas retreat when the node turns unavailable, timed from the change") {
  Node n = idle_node(jobs({1}));
  n.piranhas = running(1);
  // The source's verdict changed at second 4.9, seen at 5.
  CHECK(only<act::Retreat>(n.sense(kBusy, 5, 4.9)) ==
        std::vector{act::Retreat{1, at(4.9).steady, "unavailable", std::nullopt}});
  n.piranhas.retreating = true;
  CHECK(n.tick(6).empty());
  // Its exit reports the retreat's cause and latency.
  PiranhaExit e = exit_of(1, kClean);
  e.retreated = true;
  e.retreat_latency = std::chrono::duration<double>(0.125);
  n.piranhas = {};
  CHECK(n.exited(e, 7) == Actions{act::NoteRetreated{1, 4242, "unavailable", 125.0, false}});
  // Available again: a piranha starts.
  CHECK(only<act::Start>(n.sense(kIdle, 8)) == std::vector{act::Start{launch(1), 1}});
}

TEST_CASE("retreat: the piranhas of a job the policy no longer chooses give way") {
  Node n = idle_node(jobs({1, 2}));
  n.piranhas = running(1);
  CHECK(only<act::Retreat>(n.see(jobs({2}), 3)) == std::vector{act::Retreat{1, at(3).steady, "policy", 2}});
  n.piranhas = running(2);
  CHECK(only<act::Retreat>(n.see(jobs({}), 4)) ==
        std::vector{act::Retreat{2, at(4).steady, "policy", std::nullopt}});
  // Job 2 has ended: its piranha left because of that, which the job counts
  // as no retreat, and nor does the agent.
  PiranhaExit e = exit_of(2, kClean);
  e.retreated = true;
  n.piranhas = {};
  CHECK(n.exited(e, 5) == Actions{act::NoteExit{2, "exit status 0"}});
}

TEST_CASE("retreat: in suspend mode piranhas are suspended, resumed if the node is back within suspend_max") {
  AgentSettings s = fcfs();
  s.mode = RetreatMode::Suspend;
  s.suspend_max = std::chrono::seconds(30);
  Node n = idle_node(jobs({1}), s);
  n.piranhas = running(1);
  CHECK(only<act::Suspend>(n.sense(kBusy, 10, 9.5)) == std::vector{act::Suspend{1}});
  n.piranhas.suspended_since = at(10).steady;
  CHECK(next_due(n.state, n.piranhas, at(10).steady) == at(40).steady);
  CHECK(n.tick(39.9).empty());
  SUBCASE("back in time: resumed") {
    CHECK(n.sense(kIdle, 20) == Actions{act::NoteAvailability{true, "idle"},
                                        act::SetNodeState{sys::NodeState::Available}, act::Resume{1}});
  }
  SUBCASE("not back: they retreat, timed from the change") {
    CHECK(n.tick(40) == Actions{act::Retreat{1, at(9.5).steady, "unavailable", std::nullopt}});
  }
}

TEST_CASE("failures: a clean exit waits a second before another start, a cut-off two, and neither counts") {
  Node n = idle_node(jobs({1}));
  n.piranhas = {};
  CHECK(n.exited(exit_of(1, kClean), 10) == Actions{act::NoteExit{1, "exit status 0"}});
  CHECK(next_due(n.state, n.piranhas, at(10).steady) == at(11).steady);
  CHECK(n.tick(10.9).empty());
  CHECK(n.tick(11) == Actions{act::Start{launch(1), 1}});
  CHECK(n.exited(exit_of(1, kCutOff), 20) == Actions{act::NoteExit{1, "exit status 75"}, act::NoteCutOff{1}});
  CHECK(n.tick(21.9).empty());
  CHECK(n.tick(22) == Actions{act::Start{launch(1), 1}});
  CHECK(n.state.failures.count(1) == 0);
}

TEST_CASE("failures: the first two in a row restart at once, later ones after 2, 4, ... 60 s") {
  AgentSettings s = fcfs();
  s.max_failures = 100;
  Node n = idle_node(jobs({1}), s);
  double t = 0;
  std::vector<long> waits;
  for (int i = 0; i < 10; ++i) {
    auto failure = only<act::NoteFailure>(n.exited(exit_of(1, kKilled), t));
    REQUIRE(failure.size() == 1);
    CHECK(failure[0].in_a_row == i + 1);
    CHECK(failure[0].status == "killed by signal 9 (SIGKILL)");
    waits.push_back(static_cast<long>(failure[0].wait.count()));
    t += static_cast<double>(failure[0].wait.count());
    CHECK(n.tick(t) == Actions{act::Start{launch(1), 1}});
  }
  CHECK(waits == std::vector<long>{0, 0, 2, 4, 8, 16, 32, 60, 60, 60});
}

TEST_CASE(
    "failures: at max_failures in a row the job is held with its exit status and the end of its stderr") {
  Node n = idle_node(jobs({1, 2}));
  n.exited(exit_of(1, kFailed), 1);
  n.exited(exit_of(1, kFailed), 2);
  const auto held = n.exited(exit_of(1, kFailed, "flaky_job: failed on purpose\n"), 3);
  CHECK(only<act::Hold>(held) ==
        std::vector{act::Hold{
            1, "exit status 1 (3 failures in a row on n1); stderr ends:\nflaky_job: failed on purpose\n"}});
  // The node moves on at once, to the next job.
  CHECK(only<act::Start>(held).empty());
  CHECK(only<act::Start>(n.see(jobs({1, 2}), 4)) == std::vector{act::Start{launch(2), 1}});
}

TEST_CASE("failures: a held job is not run until a view read after the hold was written says it is live") {
  AgentSettings s = fcfs();
  s.max_failures = 1;
  Node n = idle_node(jobs({1}), s);
  CHECK(only<act::Hold>(n.exited(exit_of(1, kFailed), 1)).size() == 1);
  // A view read before the hold was written still lists the job: not run.
  CHECK(n.see(jobs({1}), 2) == Actions{});
  // Read after it was written and still live: released.
  PoolView released = jobs({1});
  released.holds_written = 1;
  CHECK(n.see(released, 3) ==
        Actions{act::NoteTarget{1, "FCFS"}, act::PublishRun{1, "FCFS"}, act::Start{launch(1), 1}});
}

TEST_CASE("failures: useful work since the previous failure starts the count again") {
  // Killed five times, more than max_failures (3), each time after tasks
  // done here: never held, always restarted at once.
  Node n = idle_node(jobs({1}));
  for (int k = 1; k <= 5; ++k) {
    auto failure = only<act::NoteFailure>(n.exited(exit_of(1, kKilled), k, {{1, 10 * k}}));
    REQUIRE(failure.size() == 1);
    CHECK(failure[0].in_a_row == 1);
    CHECK(failure[0].wait == std::chrono::seconds(0));
  }
  // Without more work, the count goes on.
  CHECK(only<act::NoteFailure>(n.exited(exit_of(1, kKilled), 6, {{1, 50}}))[0].in_a_row == 2);
  CHECK(only<act::Hold>(n.exited(exit_of(1, kKilled), 7, {{1, 50}})).size() == 1);
}

TEST_CASE("failures: useful work counts from the tasks done here when a piranha starts") {
  Node n = idle_node(jobs({1}));
  n.exited(exit_of(1, kKilled), 1);  // before the feeder said what was done here
  // A piranha starts (again) when 30 tasks are known done here: only more count.
  Observations o;
  o.tasks_here = {{1, 30}};
  REQUIRE(only<act::Start>(n.decide(o, 2)).size() == 1);
  CHECK(only<act::NoteFailure>(n.exited(exit_of(1, kKilled), 3, {{1, 30}}))[0].in_a_row == 2);
}

TEST_CASE("failures: a job whose program cannot be started is held at once") {
  Node n = idle_node(jobs({1}));
  CHECK(cannot_start(1, "/jobs/j1: No such file or directory", n.state) ==
        Actions{act::Hold{1, "cannot start its program on n1: /jobs/j1: No such file or directory"}});
  CHECK(n.tick(2).empty());
}

TEST_CASE("stopping: every piranha retreats and none starts, and once none runs the node is marked down") {
  Node n = idle_node(jobs({1}));
  n.piranhas = running(1);
  Observations stop;
  stop.stopping = true;
  CHECK(n.decide(stop, 10) == Actions{act::Retreat{1, at(10).steady, "agent stopping", std::nullopt}});
  n.piranhas.retreating = true;
  CHECK(n.decide(stop, 10.1).empty());
  PiranhaExit e = exit_of(1, kClean);
  e.retreated = true;
  e.retreat_latency = std::chrono::duration<double>(0.25);
  stop.exits = {e};
  n.piranhas = {};
  CHECK(n.decide(stop, 10.2) == Actions{act::NoteRetreated{1, 4242, "agent stopping", 250.0, false},
                                        act::RecordPeriod{kWall0, kWall0 + 10.2},
                                        act::SetNodeState{sys::NodeState::Down}});
  stop.exits.clear();
  CHECK(n.decide(stop, 10.3).empty());
}

TEST_CASE("next_due: the earliest restart delay still to run, none once they have run") {
  Node n = idle_node(jobs({1, 2}));
  n.exited(exit_of(1, kClean), 10);     // job 1: not before 11
  n.exited(exit_of(2, kCutOff), 10.5);  // job 2: not before 12.5
  CHECK(next_due(n.state, n.piranhas, at(10.5).steady) == at(11).steady);
  CHECK(next_due(n.state, n.piranhas, at(11).steady) == at(12.5).steady);
  CHECK_FALSE(next_due(n.state, n.piranhas, at(12.5).steady));
}

}  // namespace piranha

namespace piranha {
namespace {

// `v` with job `id` requiring `text`.
PoolView requiring(PoolView v, std::int64_t id, const std::string& text) {
  v.requirements[id] = text;
  return v;
}

AgentSettings with_labels(AgentSettings s, std::vector<std::string> labels) {
  s.attributes = sched::NodeAttributes{8, std::int64_t{16} << 30, "x86_64", std::move(labels)};
  return s;
}

}  // namespace

TEST_CASE("requirements: the native policy never starts a job whose requirement the node does not satisfy") {
  // FCFS would take job 1; it requires a gpu this node has not.
  const PoolView view = requiring(jobs({1, 2}), 1, "label=gpu");
  Node plain = idle_node(view, with_labels(fcfs(), {"fast-disk"}));
  CHECK(only<act::Start>(plain.tick(1)) == std::vector{act::Start{launch(2), 1}});
  // A node with the label takes it.
  Node gpu = idle_node(view, with_labels(fcfs(), {"gpu"}));
  CHECK(only<act::Start>(gpu.tick(1)) == std::vector{act::Start{launch(1), 1}});
  // Alone in the pool, the job waits: nothing starts.
  Node alone = idle_node(requiring(jobs({1}), 1, "memory>=64G"), with_labels(fcfs(), {"gpu"}));
  CHECK(only<act::Start>(alone.tick(1)).empty());
  CHECK_FALSE(alone.state.target);
  // A node that published no attributes runs only jobs without requirements;
  // an unreadable requirement, none.
  Node bare = idle_node(requiring(requiring(jobs({1, 2, 3}), 1, "label=gpu"), 2, "colour=red"));
  CHECK(only<act::Start>(bare.tick(1)) == std::vector{act::Start{launch(3), 1}});
}

TEST_CASE("requirements: an assignment of a job the node does not satisfy is obeyed as no job") {
  Node n = idle_node(jobs({}), with_labels(fcfs(), {}));
  CHECK(only<act::NoteTarget>(n.see(assigned(requiring(jobs({1, 2}), 2, "label=gpu"), 2, 5), 5)).empty());
  CHECK(only<act::Start>(n.tick(6)).empty());
  CHECK(only<act::NoteTarget>(n.see(assigned(requiring(jobs({1, 2}), 2, "label=gpu"), 1, 7, 2), 7)) ==
        std::vector{act::NoteTarget{1, "scheduler"}});
}

}  // namespace piranha
