// run_job: the program's main as feeder or as piranha.
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "piranha/runtime/child.h"
#include "piranha/runtime/feeder_silence.h"
#include "piranha/runtime/job_reporter.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/runtime/task_tally.h"
#include "piranha/tuplespace/embedded.h"
#include "runtime_state.h"

using namespace std::chrono_literals;

namespace piranha {
namespace detail {

// What run_job needs of Task's and Piranha's insides.
struct Runtime {
  static Task task(std::shared_ptr<TaskState> s) { return Task(std::move(s)); }
};

}  // namespace detail

namespace {

// How long a retreating piranha waits in all for the server's
// acknowledgements of its put-backs before it exits (a server that answers
// at all answers within a few milliseconds).
constexpr std::chrono::milliseconds kQuickExit{100};
// How long a piranha's handshake may be refused before it gives up: its
// agent announces the piranha's key (("jobkey", ...)) as it starts it, and
// the piranha may reach the server first.
constexpr std::chrono::seconds kKeyAnnounceWait{10};

std::optional<std::string> env(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  return std::string(v);
}

// An integer environment variable; `fallback` when unset, an error when
// malformed.
long long env_int(const char* name, long long fallback) {
  auto v = env(name);
  if (!v) return fallback;
  char* end = nullptr;
  long long n = std::strtoll(v->c_str(), &end, 10);
  if (*end != '\0') throw std::runtime_error(std::string(name) + "=\"" + *v + "\" is not an integer");
  return n;
}

// How long the job's processes wait for a server that does not answer
// (feeder_silence.h): PIRANHA_PATIENCE_SECONDS, else kFeederPatience.
std::chrono::milliseconds patience() {
  long long s = env_int("PIRANHA_PATIENCE_SECONDS", static_cast<long long>(kFeederPatience));
  if (s < 1) throw std::runtime_error("PIRANHA_PATIENCE_SECONDS must be at least 1");
  return std::chrono::seconds(s);
}

// What a job's clients do about a server that does not answer: wait up to
// the job's patience, a call at a time (a frozen or restarting server still
// holds the job's tasks and results), and try to reconnect at least every
// second, so that work resumes within a second or two of its answering again.
void set_patience(ts::ClientOptions& o) {
  o.request_timeout = patience();
  o.reconnect_backoff_max = std::chrono::milliseconds(1000);
}

std::string host_name() {
  char buf[HOST_NAME_MAX + 1] = {};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

std::string self_path(const char* argv0) {
  std::error_code ec;
  auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(argv0) : p.string();
}

// The job this feeder runs: the one `piranha submit` registered for it, or
// a new registration.
sys::JobRecord adopt_or_register(ts::Client& c, const std::string& name, const std::string& program,
                                 const std::vector<std::string>& args) {
  if (auto id = env("PIRANHA_JOB_ID")) {
    long long n = env_int("PIRANHA_JOB_ID", 0);
    auto t = c.rd(sys::kSpace, sys::job_template(n), 0ms);
    auto rec = t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
    if (!rec) throw std::runtime_error("PIRANHA_JOB_ID=" + *id + ": no such job in the system space");
    return *rec;
  }
  sys::JobRecord job;
  job.id = sys::next_job_id(c);
  job.name = name;
  job.space = "job." + std::to_string(job.id);
  job.submit_time = sys::wall_now();
  job.state = sys::JobState::Queued;
  sys::JobLaunch launch{job.id, program, args, std::filesystem::current_path().string()};
  // In one request, the job's record last (as piranha submit writes them).
  c.out_many(sys::kSpace, {launch.to_tuple(), job.to_tuple()});
  c.flush();
  return job;
}

int run_feeder(int argc, char** argv, const JobFunctions& fns) {
  std::string name = std::filesystem::path(argv[0]).filename().string();
  std::vector<std::string> args(argv + 1, argv + argc);
  std::string program = self_path(argv[0]);
  long long local_n = env_int("PIRANHA_LOCAL_PIRANHAS", 0);
  if (local_n < 0 || local_n > 256) throw std::runtime_error("PIRANHA_LOCAL_PIRANHAS must be 0..256");
  int local = static_cast<int>(local_n);

  std::unique_ptr<ts::EmbeddedServer> embedded;
  std::string server = sys::server_from_env();
  if (local > 0 && !env("PIRANHA_SERVER")) {
    // The job alone on this host: a server of its own, without keys, for
    // this process and the piranhas it starts.
    ::unsetenv(ts::kKeyEnv);
    ::unsetenv(ts::kServerKeyEnv);
    ts::ServerOptions o;
    o.bind = {"tcp://127.0.0.1:*"};
    embedded = std::make_unique<ts::EmbeddedServer>(o);
    server = embedded->server().endpoints().front();
  }
  std::unique_ptr<ts::Client> client;
  try {
    // The feeder's takes (its results) and its writes (its tasks, the job's
    // records) must survive a lost connection and a server restart: each
    // exactly once.
    ts::ClientOptions opts;
    opts.safe_takes = true;
    opts.safe_outs = true;
    set_patience(opts);
    client = std::make_unique<ts::Client>(server, opts);
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() == ts::Code::AuthFailed)
      std::fprintf(stderr, "%s: %s\n", name.c_str(), e.what());
    else
      std::fprintf(stderr,
                   "%s: cannot reach the tuple-space server at %s (start one with `piranha ts serve`, set "
                   "PIRANHA_SERVER, or set PIRANHA_LOCAL_PIRANHAS=N to run on this host alone)\n",
                   name.c_str(), server.c_str());
    return 1;
  }
  sys::JobRecord job = adopt_or_register(*client, name, program, args);
  if (job.state == sys::JobState::Cancelled) {
    std::fprintf(stderr, "%s: job %lld was cancelled before it started\n", name.c_str(),
                 static_cast<long long>(job.id));
    return 130;
  }
  if (sys::is_finished(job.state)) {
    std::fprintf(stderr, "%s: job %lld has already ended (%s)\n", name.c_str(),
                 static_cast<long long>(job.id), std::string(sys::name(job.state)).c_str());
    return 1;
  }
  // Before the job is marked running, so that an agent that sees it running
  // finds how long its feeder may be silent before it counts as lost (an
  // agent that read before this was written took the default, 300 s).
  const double patience_s = std::chrono::duration<double>(patience()).count();
  client->out(sys::kSpace, sys::JobPatience{job.id, patience_s}.to_tuple());
  // A job held before its feeder started stays held until released.
  if (job.state != sys::JobState::Held) sys::set_job_state(*client, job.id, sys::JobState::Running);
  client->out(sys::kSpace, sys::JobStat{job.id, 0, 0, 0.0, sys::wall_now()}.to_tuple());

  Feeder::Impl impl;
  impl.client = client.get();
  impl.space = std::make_unique<ts::Space>(*client, job.space);
  impl.args = args;
  impl.job_id = job.id;
  Feeder feeder(impl);
  JobReporter reporter(server, job, impl.tasks_put, patience());

  std::vector<std::unique_ptr<ChildProcess>> piranhas;
  for (int i = 0; i < local; ++i) {
    SpawnOptions o;
    o.argv = {program};
    o.argv.insert(o.argv.end(), args.begin(), args.end());
    o.env = {{"PIRANHA_ROLE", "piranha"},
             {"PIRANHA_SERVER", server},
             {"PIRANHA_JOB_ID", std::to_string(job.id)},
             {"PIRANHA_NODE", "local-" + std::to_string(i + 1)}};
    o.own_process_group = true;
    o.die_with_parent = true;
    piranhas.push_back(std::make_unique<ChildProcess>(o));
  }

  auto started = Clock::now();
  int rc = 0;
  std::string failure;
  try {
    rc = fns.feeder(feeder);
    client->flush();
  } catch (const std::exception& e) {
    rc = 1;
    failure = e.what();
  }
  double elapsed = std::chrono::duration<double>(Clock::now() - started).count();
  reporter.stop();
  sys::JobState final_state = reporter.cancelled()          ? sys::JobState::Cancelled
                              : rc == 0 && !reporter.lost() ? sys::JobState::Done
                                                            : sys::JobState::Failed;
  if (reporter.cancelled()) rc = 130;
  if (reporter.lost()) {
    // An agent found this feeder silent past its patience and failed the
    // job (its space is gone): the job's end is recorded already.
    std::fprintf(stderr, "%s: job %lld was recorded failed while this feeder was silent: %s\n", name.c_str(),
                 static_cast<long long>(job.id), reporter.lost_reason().c_str());
    rc = 1;
  }
  try {
    double ended = sys::wall_now();
    sys::set_job_state(*client, job.id, final_state);
    sys::record_job_times(*client, sys::JobTimes{job.id, 0, ended});
    client->out(sys::kSpace, sys::JobExit{job.id, rc}.to_tuple());
    // Ends the piranhas' waits: the job is over.
    client->remove(job.space);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: job %lld: could not record its end: %s\n", name.c_str(),
                 static_cast<long long>(job.id), e.what());
  }
  for (auto& p : piranhas)
    if (!p->wait(std::chrono::seconds(5))) p->signal(SIGKILL);
  std::fflush(stdout);  // the job's own output comes before the runtime's summary
  if (final_state == sys::JobState::Failed && !failure.empty())
    std::fprintf(stderr, "%s: job %lld failed: %s\n", name.c_str(), static_cast<long long>(job.id),
                 failure.c_str());
  std::fprintf(stderr, "%s: job %lld %s in %.2f s: %s\n", name.c_str(), static_cast<long long>(job.id),
               std::string(sys::name(final_state)).c_str(), elapsed, reporter.tally().summary().c_str());
  return rc;
}

// Turns SIGUSR1 / SIGTERM / SIGINT / SIGHUP into the retreat flag, and the
// value of the first SIGUSR1 sent with sigqueue into its cause. The
// signals are blocked in every thread and taken by this one, so no blocking
// call elsewhere is interrupted. SIGUSR2 only wakes the thread to end it.
// The flag is also an eventfd, readable from the retreat on: the piranha's
// client (ClientOptions::interrupt_fd) then stops waiting on the server, so
// a piranha blocked on a slow or cut-off server retreats at once.
class RetreatSignals {
 public:
  RetreatSignals() {
    fd = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    sigemptyset(&set_);
    for (int s : {SIGUSR1, SIGTERM, SIGINT, SIGHUP, SIGUSR2}) sigaddset(&set_, s);
    pthread_sigmask(SIG_BLOCK, &set_, nullptr);
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        siginfo_t info{};
        const int sig = sigwaitinfo(&set_, &info);
        if (sig > 0 && sig != SIGUSR2) {
          int unknown = 0;
          if (sig == SIGUSR1 && info.si_code == SI_QUEUE)
            cause.compare_exchange_strong(unknown, info.si_value.sival_int);
          retreat.store(true);
          std::uint64_t one = 1;
          if (fd >= 0) [[maybe_unused]]
            auto n = ::write(fd, &one, sizeof one);
        }
      }
    });
  }
  ~RetreatSignals() {
    stop_.store(true);
    pthread_kill(thread_.native_handle(), SIGUSR2);
    thread_.join();
    if (fd >= 0) ::close(fd);
  }
  std::atomic<bool> retreat{false};
  std::atomic<int> cause{0};  // a RetreatCause
  int fd = -1;

 private:
  sigset_t set_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// One piranha's run: who it is, for its messages, and what it holds.
struct PiranhaRun {
  std::string name;  // the program's name
  std::string server;
  detail::PiranhaState ws;
  ts::ClientOptions options;
  std::unique_ptr<ts::Client> client;
  std::optional<sys::JobRecord> job;

  // Prints "NAME (piranha on NODE): what" on stderr.
  void complain(const std::string& what) const {
    std::fprintf(stderr, "%s (piranha on %s): %s\n", name.c_str(), ws.node.c_str(), what.c_str());
  }
};

// Reads the piranha's settings from its arguments and environment: 2 when
// they name no job.
std::optional<int> read_settings(PiranhaRun& run, int argc, char** argv, RetreatSignals& signals) {
  detail::PiranhaState& ws = run.ws;
  ws.args.assign(argv + 1, argv + argc);
  ws.node = env("PIRANHA_NODE").value_or(host_name());
  ws.retreat = &signals.retreat;
  ws.retreat_cause = &signals.cause;
  long long lease_s = env_int("PIRANHA_LEASE_SECONDS", 600);
  if (lease_s < 1) throw std::runtime_error("PIRANHA_LEASE_SECONDS must be at least 1");
  ws.lease = std::chrono::seconds(lease_s);
  // Whatever a piranha has not had acknowledged when it ends is in its
  // tasks' leases: an exit does not wait for a server that is away (the
  // normal end flushes first; a retreat waits kQuickExit).
  run.options.close_timeout = std::chrono::milliseconds(0);
  run.options.interrupt_fd = signals.fd;
  run.options.heartbeat_timeout_ms =
      static_cast<int>(env_int("PIRANHA_HEARTBEAT_TIMEOUT_MS", run.options.heartbeat_timeout_ms));
  set_patience(run.options);
  if (!env("PIRANHA_JOB_ID")) {
    std::fprintf(stderr, "%s: PIRANHA_ROLE=piranha needs PIRANHA_JOB_ID\n", run.name.c_str());
    return 2;
  }
  ws.job_id = env_int("PIRANHA_JOB_ID", 0);
  run.server = sys::server_from_env();
  return std::nullopt;
}

// Connects and finds the job. The exit status when there is nothing to run:
// told to retreat before it connected, the server unreachable, or the job no
// longer live.
std::optional<int> connect_to_job(PiranhaRun& run) {
  detail::PiranhaState& ws = run.ws;
  const auto refused_until = Clock::now() + kKeyAnnounceWait;
  for (auto pause = std::chrono::milliseconds(20);;
       pause = std::min(pause * 2, std::chrono::milliseconds(500))) {
    try {
      run.client = std::make_unique<ts::Client>(run.server, run.options);
      break;
    } catch (const ts::TupleSpaceError& e) {
      if (e.code() == ts::Code::Interrupted) return 0;  // told to retreat before it connected
      if (e.code() == ts::Code::AuthFailed && Clock::now() + pause < refused_until && !ws.retreat->load()) {
        std::this_thread::sleep_for(pause);
        continue;
      }
      run.complain(e.what());
      return e.code() == ts::Code::Unreachable ? kExitCutOff : 1;
    }
  }
  // A short wait: the record is briefly absent while somebody rewrites it
  // (the feeder marks the job running just as agents start its piranhas).
  auto t = run.client->rd(sys::kSpace, sys::job_template(ws.job_id), 500ms);
  run.job = t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
  if (!run.job || !sys::is_live(run.job->state)) return 0;  // nothing to do any more
  ws.client = run.client.get();
  ws.request_timeout = run.options.request_timeout;
  ws.space = std::make_unique<ts::Space>(*run.client, run.job->space);
  return std::nullopt;
}

// Runs the job's piranha function and classifies how it ended: its exit
// status (1 for an error worth reporting), with ws.cut_off set when the
// server was unreachable. The job's end (its space removed) and a retreat's
// interruption are normal ends.
int run_function(PiranhaRun& run, Piranha& worker, const JobFunctions& fns) {
  try {
    if (fns.piranha) fns.piranha(worker);
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() == ts::Code::Unreachable) {
      run.ws.cut_off = true;
    } else if (e.code() != ts::Code::SpaceRemoved && e.code() != ts::Code::Interrupted) {
      run.complain(e.what());
      return 1;
    }
  } catch (const std::exception& e) {
    run.complain(e.what());
    return 1;
  }
  return 0;
}

// Waits for the server to acknowledge what was posted: as long as it takes
// (the client's deadline) at a normal end; until `quick_until` in a retreat,
// which must be quick even with the server slow or cut off (what is not
// acknowledged by then is in leases that return it anyway).
void settle(PiranhaRun& run, bool retreating, Clock::time_point quick_until) {
  if (!retreating) return run.client->flush();
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(quick_until - Clock::now());
  if (!run.client->flush_within(std::max(left, std::chrono::milliseconds(0))))
    run.complain("the server did not acknowledge the put-backs within " + std::to_string(kQuickExit.count()) +
                 " ms; their leases return the tasks");
}

// Puts back every held task (after the retreat function, in a retreat, for
// each one the piranha had started), in one posted request, and in a retreat
// writes the retreat record, which counts the started ones.
void put_back_held(PiranhaRun& run, Piranha& worker, const JobFunctions& fns, bool retreating) {
  detail::PiranhaState& ws = run.ws;
  auto held = ws.held;
  std::int64_t interrupted = 0;  // tasks the piranha had started
  std::vector<ts::LeaseId> back;
  std::vector<ts::Tuple> tuples;
  for (auto& st : held) {
    Task task = detail::Runtime::task(st);
    if (st->started) ++interrupted;
    if (retreating && fns.retreat && st->started) {
      try {
        fns.retreat(worker, task);
      } catch (const std::exception& e) {
        run.complain(std::string("retreat: ") + e.what());
      }
    }
    if (st->held) {
      st->held = false;
      back.push_back(st->lease);
      tuples.push_back(st->tuple);
    }
  }
  // Whatever the retreat function did not put back goes back as it was,
  // all in one posted request: a retreat must be quick. Should it be
  // refused (a lease had ended), the rest return when the piranha's
  // session ends, a moment later.
  if (back.size() == 1)
    run.client->complete_posted(back.front(), run.job->space, tuples);
  else if (!back.empty())
    run.client->complete_all_posted(back, run.job->space, tuples);
  if (retreating && !ws.job_ended)
    run.client->out_posted(
        run.job->space,
        retreat_record(ws.node, sys::wall_now(), interrupted,
                       static_cast<RetreatCause>(ws.retreat_cause ? ws.retreat_cause->load() : 0)));
}

// After the piranha function: sends what it completed, puts back what it
// still holds (the task asked for ahead among them), and waits for the
// server's acknowledgements, briefly in a retreat.
void wind_up(PiranhaRun& run, Piranha& worker, const JobFunctions& fns, bool retreating) {
  detail::PiranhaState& ws = run.ws;
  try {
    if (auto next = detail::take_ahead(ws, retreating ? kQuickExit / 2 : ws.request_timeout))
      detail::hold_ahead(ws, std::move(*next));
  } catch (const ts::TupleSpaceError&) {
    // Unanswered, or the server is away: its lease returns it when the piranha ends.
  }
  auto quick_until = Clock::now() + kQuickExit;
  try {
    // Short tasks completed before the piranha stopped, not yet sent.
    detail::send_completions(ws);
    // Refused batches are redone task by task once every answer is in; not
    // by a retreat, which must be quick and waits for the server once, at
    // the end: those tasks' leases return them when the piranha ends.
    if (!retreating) {
      settle(run, retreating, quick_until);
      detail::settle_completions(ws, true);
    }
    put_back_held(run, worker, fns, retreating);
    settle(run, retreating, quick_until);
    if (retreating) detail::settle_completions(ws, false);
    if (ws.lost > 0)
      run.complain(std::to_string(ws.lost) +
                   " completion(s) refused because their leases had ended; other piranhas do those tasks");
  } catch (const ts::TupleSpaceError& e) {
    // The job ended meanwhile, or the server went away: the held tasks'
    // leases return them in either case.
    if (e.code() != ts::Code::SpaceRemoved) run.complain(e.what());
  }
}

// Ends a retreating piranha here, output flushed (job.h): the ordinary end
// joins threads that each owe a busy owner up to a clock tick of CPU from
// their time under SCHED_IDLE. The server ends the session on the
// disconnect instead of the client's goodbye; whatever was not acknowledged
// is in leases, which that returns.
[[noreturn]] void exit_at_once(int rc) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(rc);
}

int run_piranha(int argc, char** argv, const JobFunctions& fns) {
  // First, before any other thread exists, so that all inherit the mask.
  RetreatSignals signals;
  PiranhaRun run;
  run.name = std::filesystem::path(argv[0]).filename().string();
  if (std::optional<int> bad = read_settings(run, argc, argv, signals)) return *bad;
  if (std::optional<int> nothing_to_run = connect_to_job(run)) return *nothing_to_run;
  Piranha worker(run.ws);
  int rc = run_function(run, worker, fns);
  if (run.ws.cut_off) {
    // Nothing held can be put back; the tasks' leases return them.
    run.complain("cut off from the server at " + run.server +
                 "; stopping (its tasks return to the space when their leases end, and the agent starts "
                 "another piranha once the server is back)");
    return kExitCutOff;
  }
  bool retreating = signals.retreat.load();
  wind_up(run, worker, fns, retreating);
  if (retreating) exit_at_once(rc);
  return rc;
}

}  // namespace

int run_job(int argc, char** argv, const JobFunctions& functions) {
  try {
    if (env("PIRANHA_ROLE").value_or("feeder") == "piranha") return run_piranha(argc, argv, functions);
    return run_feeder(argc, argv, functions);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", argc > 0 ? argv[0] : "piranha job", e.what());
    return 1;
  }
}

}  // namespace piranha
