// The Piranha programming model: a job is a program with three functions.
//
//   feeder   the master. Puts task tuples into the job's space and collects
//            the results. Runs once, in the process a person (or `piranha
//            submit`) started.
//   piranha  the worker. Takes tasks and computes until there are none or it
//            is told to retreat. Node agents start one per idle core, as the
//            same program with PIRANHA_ROLE=piranha in its environment.
//   retreat  runs for each task a piranha still holds when it had to stop:
//            puts enough back into the space that another piranha can finish
//            the task, possibly with partial progress. Once the server has
//            acknowledged what was put back (or 100 ms have passed, or the
//            server is gone), a retreating piranha's process ends at once:
//            its stdout and stderr are flushed, but static destructors and
//            atexit handlers do not run; each thread they would wait for
//            makes the owner wait too. What must outlive a retreat belongs
//            in the retreat function.
//
//   int feeder(piranha::Feeder& f) {
//     for (std::int64_t i = 0; i < 100; ++i) f.put_task(i);
//     for (int i = 0; i < 100; ++i) f.space().in("result", ts::formal<std::int64_t>, ts::formal<double>);
//     return 0;
//   }
//   void worker(piranha::Piranha& w) {
//     std::int64_t i;
//     while (auto task = w.take_task(ts::bind(i))) w.complete(*task, "result", i, f(i));
//   }
//   PIRANHA_JOB(feeder, worker, nullptr)
//
// The runtime measures every task (take_task to complete), keeps the job's
// ("jobstat", ...) tuple in the system space current, and registers the job
// (("job", ...), ("jobexec", ...)) when nobody did it for it.
//
// Tasks are taken under a lease: a piranha killed outright loses nothing, as
// its tasks return to the space when its connection drops or the lease ends.
// complete() ends the lease and writes the results in one atomic step, so
// every result is written exactly once, however piranhas are killed, and a
// task counts once even when a retreated piranha and its successor both
// touched it.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "piranha/tuplespace/client.h"

namespace piranha {

namespace ts = piranha::ts;

// The tag of task tuples: ("task", ...).
inline constexpr const char* kTaskTag = "task";

// The exit status of a piranha cut off from the server (EX_TEMPFAIL): the
// server stayed unreachable past the job's patience (PIRANHA_PATIENCE_SECONDS,
// default 300 s: feeder_silence.h), or a task's
// lease ran out without a renewal getting through. Its tasks return to the
// space when their leases end; the node's agent does not count it as a
// failure of the job and starts another piranha once the server is back.
inline constexpr int kExitCutOff = 75;

namespace detail {
struct TaskState;
struct PiranhaState;
struct Runtime;
}  // namespace detail

// A task a piranha holds. Copies refer to the same task.
class Task {
 public:
  // The task tuple as taken, tag included: ("task", 7, 3).
  const ts::Tuple& tuple() const;
  // Partial progress a piranha records as it goes, for its retreat function
  // to put back; empty until set.
  const ts::Tuple& progress() const;
  void set_progress(ts::Tuple p);
  // False once completed or put back.
  bool held() const;

 private:
  friend class Piranha;
  friend struct detail::Runtime;
  explicit Task(std::shared_ptr<detail::TaskState> s) : s_(std::move(s)) {}
  std::shared_ptr<detail::TaskState> s_;
};

// The feeder's view of its job. Not thread-safe.
class Feeder {
 public:
  // The job's own tuple space.
  ts::Space& space();
  // The program's arguments (argv[1..]).
  const std::vector<std::string>& args() const;
  std::int64_t job_id() const;

  // Writes the task ("task", fields...) and counts it in tasks_left. Posted
  // (ts::Client::out_posted): a feeder writing many tasks does not wait for
  // each; a refusal is thrown by a later call.
  template <class... A>
  void put_task(A&&... fields) {
    space().out_posted(kTaskTag, std::forward<A>(fields)...);
    count_tasks(1);
  }
  // Writes many tasks in one request; each tuple must start with "task".
  // Throws std::invalid_argument when one does not.
  void put_tasks(const std::vector<ts::Tuple>& tasks);

  struct Impl;
  explicit Feeder(Impl& impl) : impl_(impl) {}

 private:
  void count_tasks(std::int64_t n);
  Impl& impl_;
};

// A piranha (the paper's worker): its view of its job, handed to the job's
// piranha function. Not thread-safe: one per piranha process.
class Piranha {
 public:
  ts::Space& space();
  const std::vector<std::string>& args() const;
  std::int64_t job_id() const;
  // The node this piranha runs on (the agent's node name).
  const std::string& node() const;

  // Takes the oldest task ("task", fields...) whose fields match `fields`
  // (actuals, ts::formal<T>, ts::bind(x), as in Space::in; bindings are set
  // from the task taken). Waits while there is none. Returns nullopt when the
  // piranha should stop: it was told to retreat, or the job has ended.
  template <class... A>
  std::optional<Task> take_task(A&&... fields) {
    auto tmpl = ts::detail::template_of(std::string(kTaskTag), fields...);
    auto t = take(tmpl);
    if (t) ts::detail::bind_all(t->tuple(), std::string(kTaskTag), fields...);
    return t;
  }

  // Completes `task`: its lease ends and `outs` are written to the job's
  // space in one atomic step, and the task's time is recorded. The
  // completion is posted: complete() returns true once it is sent, and the
  // server's answer is read with the piranha's next request, so a task costs
  // one round trip (its take), not two. When the task had already returned to
  // the space (its lease ended: this piranha was cut off or too slow), the
  // server refuses the completion and writes nothing; another piranha does
  // the task, and the refusal is counted and reported when the piranha ends.
  // The same holds when the answer is lost with the connection (a server
  // restart): the results were written or the task returned, so they are
  // written exactly once either way. Short tasks (under 2 ms on average,
  // after the first 8) are taken in leased batches of about 2 ms of work (32
  // to 4096 tasks, under 1 MiB of task tuples past 32), and the completions
  // of a batch's tasks are sent together, as one atomic step, when the batch
  // is done (or its results reach 1 MiB); tasks under 100 ms are otherwise
  // asked for one ahead from the first completed on, so that the next take
  // travels while this task computes. Throws std::logic_error when the task
  // is no longer held.
  bool complete(Task& task, std::vector<ts::Tuple> outs);
  // complete(task, {("result", 7, 2.5)}) written as complete(task, "result", 7, 2.5).
  template <class F, class... A>
  bool complete(Task& task, F&& first, A&&... fields) {
    return complete(task, std::vector<ts::Tuple>{
                              ts::detail::tuple_of(std::forward<F>(first), std::forward<A>(fields)...)});
  }

  // True once the node's agent asked this piranha to retreat, or once it is
  // cut off from the server (see kExitCutOff). Cheap: call it between steps
  // of a long task, and stop (return) when it is true. Also renews the
  // leases of held tasks when they are half used.
  bool should_retreat();

  // For retreat functions: ends `task` and writes `outs` (what another piranha
  // needs to finish it: the task again, or the rest of it plus partial
  // results) in one atomic step. Returns false as complete() does; while
  // retreating it is posted (a retreat must not wait on the server) and
  // returns true, a refusal only counted.
  bool put_back(Task& task, std::vector<ts::Tuple> outs);

  explicit Piranha(detail::PiranhaState& s) : s_(s) {}

 private:
  std::optional<Task> take(const ts::Template& tmpl);
  detail::PiranhaState& s_;
};

struct JobFunctions {
  std::function<int(Feeder&)> feeder;  // its return value is the exit status
  std::function<void(Piranha&)> piranha;
  std::function<void(Piranha&, Task&)> retreat;  // empty: tasks go back unchanged
};

// Runs the program as feeder or piranha, as its environment says:
//   PIRANHA_ROLE=piranha  run as a piranha (set by node agents)
//   PIRANHA_SERVER        the tuple-space server (default tcp://127.0.0.1:7070)
//   PIRANHA_JOB_ID        the job, when `piranha submit` registered it
//   PIRANHA_NODE          the node name (piranhas; default: the host name)
//   PIRANHA_PATIENCE_SECONDS  how long a call waits for a server that does
//                         not answer (default 300): the job goes on through
//                         a freeze, a restart or a cut that short; a feeder
//                         silent longer than this plus 10 s is lost, and
//                         an agent records its job failed (feeder_silence.h)
//   PIRANHA_LOCAL_PIRANHAS=N  feeder only: also start N piranhas of this
//                         program on this host, and serve the tuple space
//                         in-process when PIRANHA_SERVER is not set (a job
//                         runs anywhere, without agents)
// Returns the exit status, except in a piranha that was told to retreat:
// its process ends inside run_job (_Exit with that status, output flushed;
// see "retreat" above). Errors (server unreachable, a function that
// throws) are reported on stderr with the job's name.
int run_job(int argc, char** argv, const JobFunctions& functions);

}  // namespace piranha

// Defines main() for a job: PIRANHA_JOB(feeder, piranha, retreat).
#define PIRANHA_JOB(FEEDER, PIRANHA, RETREAT)                                                 \
  int main(int argc, char** argv) {                                                           \
    return ::piranha::run_job(argc, argv, ::piranha::JobFunctions{FEEDER, PIRANHA, RETREAT}); \
  }
