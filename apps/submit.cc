// piranha submit: registers a job in the system space and runs its feeder.
//
//   piranha submit [--server S] [--detach] [--require REQ] PROGRAM [ARGS...]
//
// The job is registered before the feeder starts (its ("jobreq", ...) and
// ("jobexec", ...) first, so an agent that sees the ("job", ...) tuple can
// always start piranhas, and only on nodes that satisfy the requirement), then
// PROGRAM runs here as the feeder with PIRANHA_JOB_ID and PIRANHA_SERVER set.
// The feeder records the job's end itself; when it cannot (it crashed, was
// killed, or never connected), this command records it, so no job stays
// queued or running without a feeder. While the feeder runs, a hold of the
// job is printed as it happens (why, and how to release it), and a job held
// past --hold-timeout is given up: its feeder is stopped, the job recorded
// cancelled, and the command exits with kHeldTooLong. When stderr is a
// terminal, or with --progress, a line every 5 s says how far the job is and
// the time it has left at its pace of the last 30 s.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <csignal>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "commands.h"
#include "piranha/base/clock.h"
#include "piranha/base/progress.h"
#include "piranha/runtime/child.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/scheduler/requirement.h"
#include "pool_command.h"

using namespace std::chrono_literals;

extern char** environ;

namespace piranha::apps {
namespace {

struct SubmitArgs {
  std::shared_ptr<std::string> server;
  bool detach = false;
  bool progress = false;        // --progress: progress lines on stderr even when it is not a terminal
  double hold_timeout = 0;      // --hold-timeout: seconds a hold is waited out; 0: as long as it lasts
  std::int64_t registered = 0;  // --registered ID: the detached supervisor of a job already registered
  std::string require;          // --require: what a node must offer (requirement.h)
  std::vector<std::string> command;
};

// The last termination signal this process received, to pass on to the feeder.
volatile std::sig_atomic_t g_pending = 0;
void remember_signal(int sig) {
  g_pending = sig;
}

const char* const kUsage = "usage: piranha submit [--server S] [--detach] [--require REQ] PROGRAM [ARGS...]";

std::string base_name(const std::string& program) {
  return std::filesystem::path(program).filename().string();
}

// The exit status of a job given up after being held past --hold-timeout.
constexpr int kHeldTooLong = 3;

// Tells the person who submitted a job of its holds and releases while its
// feeder runs, from a watch of the job's record (each state it is written
// with, however briefly), and a read every 10 s should an event be lost
// (a reconnection).
class HoldWatch {
 public:
  HoldWatch(ts::Client& c, std::int64_t id, double timeout) : c_(c), id_(id), timeout_(timeout) {
    try {
      c_.watch(sys::kSpace, sys::job_template(id_));
    } catch (const ts::TupleSpaceError&) {
      // The reads alone, then.
    }
  }

  // Takes the events that came; false once the job has been held for
  // longer than the timeout (said in a line). A server that does not answer
  // is looked at again later: the feeder's own patience decides.
  bool look(Clock::time_point now) {
    try {
      for (auto e = c_.next_event(0ms); e; e = c_.next_event(0ms))
        if (e->kind == ts::WatchEventKind::Written)
          if (auto rec = sys::JobRecord::from_tuple(e->tuple)) saw(rec->state, now);
      if (now >= next_read_) {
        next_read_ = now + 10s;
        if (auto t = c_.rd(sys::kSpace, sys::job_template(id_), 0ms))
          if (auto rec = sys::JobRecord::from_tuple(*t)) saw(rec->state, now);
      }
    } catch (const ts::TupleSpaceError&) {
    }
    if (held_since_ && timeout_ > 0 && now - *held_since_ > std::chrono::duration<double>(timeout_)) {
      std::cerr << "job " << id_ << " held for more than " << timeout_
                << " s (--hold-timeout): giving up; it is cancelled\n";
      return false;
    }
    return true;
  }

 private:
  void saw(sys::JobState state, Clock::time_point now) {
    if (state != sys::JobState::Held) {
      // An end (a cancel) is said when the feeder has ended.
      if (held_since_ && !sys::is_finished(state))
        std::cerr << "job " << id_ << " released: " << sys::name(state) << " again\n";
      held_since_.reset();
    } else if (!held_since_) {
      held_since_ = now;
      say_held();
    }
  }

  void say_held() {
    std::optional<sys::JobHold> hold;
    try {
      for (const auto& t : c_.rd_many(sys::kSpace, sys::jobheld_template(id_), 100))
        if (auto h = sys::JobHold::from_tuple(t); h && (!hold || h->time > hold->time)) hold = h;
    } catch (const ts::TupleSpaceError&) {
    }
    std::cerr << "job " << id_ << " held"
              << (hold ? " by " + hold->node + ": " + hold->reason : std::string(" (no reason recorded)"))
              << "\n";
    std::cerr << "  its feeder waits; once the cause is fixed: piranha release " << id_
              << " (or piranha cancel " << id_ << ")";
    if (timeout_ > 0) std::cerr << "; given up after " << timeout_ << " s held (--hold-timeout)";
    std::cerr << "\n";
  }

  ts::Client& c_;
  std::int64_t id_;
  double timeout_;
  Clock::time_point next_read_{};
  std::optional<Clock::time_point> held_since_;
};

// "job 7: 420 of 1000 tasks done (42 %), 35.2 tasks/s, about 16 s left".
std::string progress_line(std::int64_t id, const sys::JobStat& st, const ProgressMeter& meter) {
  const std::int64_t total = st.tasks_done + st.tasks_left;
  std::string line = "job " + std::to_string(id) + ": " + std::to_string(st.tasks_done) + " of " +
                     std::to_string(total) + " tasks done";
  char part[64];
  if (total > 0) {
    std::snprintf(part, sizeof part, " (%.0f %%)", 100.0 * static_cast<double>(st.tasks_done) / total);
    line += part;
  }
  if (auto rate = meter.rate()) {
    std::snprintf(part, sizeof part, *rate >= 10 ? ", %.0f tasks/s" : ", %.2f tasks/s", *rate);
    line += part;
  }
  const auto left = meter.seconds_left(static_cast<double>(st.tasks_left));
  return line + (left ? ", about " + time_left_words(*left) + " left" : ", time left not known yet");
}

// Tells the person who submitted a job how far it is, from its ("jobstat",
// ...) records (the feeder's own counts), read every second: a line every
// 5 s while the count moves, when `shown`.
class ProgressWatch {
 public:
  ProgressWatch(ts::Client& c, std::int64_t id, bool shown) : c_(c), id_(id), shown_(shown) {}

  void look(Clock::time_point now) {
    if (!shown_ || now < next_read_) return;
    next_read_ = now + 1s;
    std::optional<sys::JobStat> st;
    try {
      // The newest of its records counts (a feeder restarted may leave two).
      for (const auto& t : c_.rd_many(sys::kSpace, sys::jobstat_template(id_), 16))
        if (auto s = sys::JobStat::from_tuple(t); s && (!st || s->updated_at > st->updated_at)) st = s;
    } catch (const ts::TupleSpaceError&) {
      return;
    }
    if (!st) return;
    meter_.observe(std::chrono::duration<double>(now - begin_).count(), static_cast<double>(st->tasks_done));
    if (now < next_line_ || st->tasks_done == said_) return;
    next_line_ = now + 5s;
    said_ = st->tasks_done;
    std::cerr << progress_line(id_, *st, meter_) << "\n";
  }

 private:
  ts::Client& c_;
  std::int64_t id_;
  bool shown_;
  Clock::time_point begin_ = Clock::now(), next_read_{}, next_line_ = Clock::now() + 5s;
  std::int64_t said_ = -1;
  ProgressMeter meter_;
};

// Starts PROGRAM as the feeder, passing on SIGINT, SIGTERM and SIGHUP, and
// waits for it, looking at the job's holds meanwhile. `interrupted` says
// whether a signal was passed on; `held_too_long` whether the job was held
// past `watch`'s timeout (the feeder is then sent SIGTERM, as if
// interrupted).
ExitStatus run_feeder(const std::string& path, const SubmitArgs& a, std::int64_t id, HoldWatch& watch,
                      ProgressWatch& progress, bool& interrupted, bool& held_too_long) {
  SpawnOptions o;
  o.die_with_parent = !a.detach;
  o.argv = a.command;
  o.argv[0] = path;
  o.env = {{"PIRANHA_JOB_ID", std::to_string(id)}, {"PIRANHA_SERVER", *a.server}};
  struct sigaction sa {};
  sa.sa_handler = remember_signal;
  sigemptyset(&sa.sa_mask);
  for (int s : {SIGINT, SIGTERM, SIGHUP}) sigaction(s, &sa, nullptr);
  ChildProcess feeder(o);
  interrupted = false;
  held_too_long = false;
  while (true) {
    progress.look(Clock::now());
    if (!held_too_long && !watch.look(Clock::now())) {
      held_too_long = interrupted = true;
      feeder.signal(SIGTERM);
    }
    if (int sig = g_pending) {
      g_pending = 0;
      interrupted = true;
      feeder.signal(sig);
    }
    if (auto st = feeder.wait(std::chrono::milliseconds(100))) {
      // A terminal's Ctrl-C reaches the feeder (same process group) as well
      // as this process: it was an interruption even if the feeder went first.
      if (g_pending) interrupted = true;
      if (!held_too_long) watch.look(Clock::now());  // what happened in its last moments, in order
      return *st;
    }
  }
}

// Records the end of a job whose feeder did not: failed, or cancelled when
// the person interrupted it. Returns whether this command recorded it.
bool settle(ts::Client& c, const sys::JobRecord& job, const std::string& name, const ExitStatus& status,
            bool interrupted) {
  // Wait a little: a concurrent set_job_state (cancel) may hold the tuple.
  // Taken under a lease and rewritten by completing it, so that a server
  // restart in between cannot lose the record.
  auto t = c.in(sys::kSpace, sys::job_template(job.id), 2s, 10s);
  if (!t) {
    std::cerr << "piranha submit: job " << job.id << " is no longer in the system space\n";
    return false;
  }
  auto rec = sys::JobRecord::from_tuple(t->tuple);
  if (!rec || sys::is_finished(rec->state)) {
    c.complete(t->lease, sys::kSpace, {t->tuple});  // the feeder recorded the end: leave it
    return false;
  }
  bool never_ran = rec->state == sys::JobState::Queued;
  rec->state = interrupted ? sys::JobState::Cancelled : sys::JobState::Failed;
  if (!c.complete(t->lease, sys::kSpace, {rec->to_tuple()})) {
    std::cerr << "piranha submit: job " << job.id << ": its record was held too long to be rewritten\n";
    return false;
  }
  sys::record_job_times(c, sys::JobTimes{job.id, 0, sys::wall_now()});
  c.out(sys::kSpace, sys::JobExit{job.id, status.shell_code()}.to_tuple());
  c.flush();
  c.remove(rec->space);  // ends the waits of its piranhas, as the feeder would have
  std::string how = status.signal      ? name + " " + status.describe()
                    : status.code != 0 ? name + " exited with status " + std::to_string(status.code)
                    : never_ran        ? name + " exited without running the job (is it a Piranha job?)"
                                       : name + " exited before recording the job's end";
  if (never_ran && status.code != 0) how += " before it connected to the job";
  std::cerr << "job " << job.id << " " << sys::name(rec->state) << ": "
            << (interrupted ? "interrupted; " : "") << how << "\n";
  return true;
}

// --detach: starts `piranha submit --registered ID ...` in a session of its
// own, with its output (and the feeder's) appended to `log`.
void start_detached(const SubmitArgs& a, std::int64_t id, const std::string& log) {
  std::vector<std::string> argv = {"/proc/self/exe", "submit",       "--server",
                                   *a.server,        "--registered", std::to_string(id)};
  if (a.hold_timeout > 0) argv.insert(argv.end(), {"--hold-timeout", std::to_string(a.hold_timeout)});
  argv.insert(argv.end(), a.command.begin(), a.command.end());
  std::vector<char*> args;
  for (auto& s : argv) args.push_back(s.data());
  args.push_back(nullptr);
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&files, 1, 2);
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  pid_t pid = 0;
  int rc = posix_spawn(&pid, args[0], &files, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) throw CommandFailure(1, "cannot start the detached feeder: " + std::string(std::strerror(rc)));
}

int submit(const SubmitArgs& a) {
  // Bad requirement text is bad input (exit status 2): nothing is registered.
  const sched::Requirement requirement = sched::parse_requirement(a.require, "--require");
  if (a.command.empty()) throw CommandFailure(2, std::string("no program to run\n") + kUsage);
  const std::string& program = a.command[0];
  if (program.size() > 1 && program[0] == '-')
    throw CommandFailure(2, "unknown option \"" + program + "\"\n" + kUsage);
  auto path = find_program(program);
  if (!path)
    throw CommandFailure(127, program + ": no such program, or not executable" +
                                  (program.find('/') == std::string::npos ? " (looked in PATH)" : "") +
                                  "; nothing submitted");
  auto client = connect(*a.server);

  sys::JobRecord job;
  if (a.registered > 0) {
    auto t = client->rd(sys::kSpace, sys::job_template(a.registered), 0ms);
    auto rec = t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
    if (!rec) throw CommandFailure(1, "--registered " + std::to_string(a.registered) + ": no such job");
    job = *rec;
  } else {
    job.id = sys::next_job_id(*client);
    job.name = base_name(program);
    job.space = "job." + std::to_string(job.id);
    job.submit_time = sys::wall_now();
    job.state = sys::JobState::Queued;
    std::vector<std::string> args(a.command.begin() + 1, a.command.end());
    sys::JobLaunch launch{job.id, *path, args, std::filesystem::current_path().string()};
    // In one request, the job's record last: an agent that sees the job can
    // start it, and no launch record is left without its job (list_jobs).
    std::vector<ts::Tuple> records;
    if (!requirement.empty()) records.push_back(sys::JobRequirement{job.id, requirement.text()}.to_tuple());
    records.push_back(launch.to_tuple());
    records.push_back(job.to_tuple());
    client->out_many(sys::kSpace, records);
    client->flush();
  }

  if (a.detach) {
    std::string log =
        (std::filesystem::current_path() / ("piranha-job-" + std::to_string(job.id) + ".log")).string();
    try {
      start_detached(a, job.id, log);
    } catch (const CommandFailure&) {
      settle(*client, job, job.name, ExitStatus{1, 0}, false);
      throw;
    }
    std::cerr << "job " << job.id << " submitted: " << job.name << " (detached; output in " << log << ")\n";
    std::cout << job.id << "\n";
    return 0;
  }
  if (a.registered == 0)
    std::cerr << "job " << job.id << " submitted: " << job.name
              << (requirement.empty() ? "" : " (requires " + requirement.text() + ")") << "\n";

  bool interrupted = false, held_too_long = false;
  ExitStatus status;
  HoldWatch watch(*client, job.id, a.hold_timeout);
  ProgressWatch progress(*client, job.id, a.progress || ::isatty(STDERR_FILENO));
  try {
    status = run_feeder(*path, a, job.id, watch, progress, interrupted, held_too_long);
  } catch (const std::exception& e) {
    settle(*client, job, job.name, ExitStatus{127, 0}, false);
    throw CommandFailure(127, e.what());
  }
  bool recorded = false;
  try {
    recorded = settle(*client, job, job.name, status, interrupted);
  } catch (const ts::TupleSpaceError& e) {
    std::cerr << "piranha submit: job " << job.id << ": could not check how it ended: " << e.what() << "\n";
  }
  if (held_too_long) return kHeldTooLong;
  // A program that is no job "succeeded" at nothing: the job failed.
  if (recorded && status.ok()) return 1;
  if (!recorded) {
    // Cancelled by someone else (`piranha cancel`): said, and never status 0.
    try {
      auto t = client->rd(sys::kSpace, sys::job_template(job.id), 2s);
      auto rec = t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
      if (rec && rec->state == sys::JobState::Cancelled) {
        std::cerr << "job " << job.id << " cancelled\n";
        if (status.ok()) return 130;
      }
    } catch (const ts::TupleSpaceError&) {
    }
  }
  return status.shell_code();
}

}  // namespace

void add_submit(CLI::App& app) {
  auto a = std::make_shared<SubmitArgs>();
  auto* cmd = app.add_subcommand("submit", "start a job's feeder (PROGRAM ARGS...) and register the job");
  a->server = add_server_option(*cmd);
  cmd->add_flag(
      "--detach", a->detach,
      "run the feeder in the background (output in ./piranha-job-ID.log); print the job id and exit");
  cmd->add_option("--hold-timeout", a->hold_timeout,
                  "give a job up once it has been held this long (seconds): its feeder is stopped, the job "
                  "cancelled, and the exit status is 3; default 0: wait for `piranha release` as long as it "
                  "takes (a hold is printed as it happens either way)")
      ->type_name("SECONDS")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_flag("--progress", a->progress,
                "print the job's progress (tasks done, rate, time left) on stderr every 5 s even when it is "
                "not a terminal (on a terminal it is printed anyway)");
  cmd->add_option("--require", a->require,
                  "run the job's piranhas only on nodes that offer all of these, comma-separated: cores>=N, "
                  "memory>=SIZE (K, M, G), arch=NAME, label=NAME; e.g. 'memory>=8G,label=gpu' (docs/jobs.md)")
      ->type_name("REQ");
  cmd->add_option("--registered", a->registered, "(internal) supervise the feeder of this registered job")
      ->group("");
  // Everything from PROGRAM on is the job's own command line, untouched.
  cmd->prefix_command();
  cmd->footer(
      "PROGRAM runs here as the feeder, with PIRANHA_JOB_ID and PIRANHA_SERVER set; agents start its "
      "piranhas. A hold of the job (its piranhas failing on some node) is printed as it happens, with its "
      "reason; its progress (tasks done, tasks a second, time left) every 5 s on a terminal or with "
      "--progress. Exits with the feeder's status (128+N when signal N ended it; 130 when the job was "
      "cancelled); 3 when the job was held past --hold-timeout; 127 when PROGRAM cannot be run; 1 when "
      "the server cannot be reached.");
  cmd->callback([a, cmd] {
    a->command = cmd->remaining();
    run_command("submit", *a->server, [&] { return submit(*a); });
  });
}

}  // namespace piranha::apps
