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
  c.out(sys::kSpace, launch.to_tuple());
  c.out(sys::kSpace, job.to_tuple());
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
    // The feeder's takes (its results) must survive a server restart.
    ts::ClientOptions opts;
    opts.safe_takes = true;
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
  // A job held before its feeder started stays held until released.
  if (job.state != sys::JobState::Held) sys::set_job_state(*client, job.id, sys::JobState::Running);
  client->out(sys::kSpace, sys::JobStat{job.id, 0, 0, 0.0, sys::wall_now()}.to_tuple());

  Feeder::Impl impl;
  impl.client = client.get();
  impl.space = std::make_unique<ts::Space>(*client, job.space);
  impl.args = args;
  impl.job_id = job.id;
  Feeder feeder(impl);
  JobReporter reporter(server, job, impl.tasks_put);

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
  sys::JobState final_state = reporter.cancelled() ? sys::JobState::Cancelled
                              : rc == 0            ? sys::JobState::Done
                                                   : sys::JobState::Failed;
  if (reporter.cancelled()) rc = 130;
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

// Turns SIGUSR1 / SIGTERM / SIGINT / SIGHUP into the retreat flag. The
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
        int sig = 0;
        if (sigwait(&set_, &sig) == 0 && sig != SIGUSR2) {
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
  int fd = -1;

 private:
  sigset_t set_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

int run_piranha(int argc, char** argv, const JobFunctions& fns) {
  // First, before any other thread exists, so that all inherit the mask.
  RetreatSignals signals;
  std::string name = std::filesystem::path(argv[0]).filename().string();
  detail::PiranhaState ws;
  ws.args.assign(argv + 1, argv + argc);
  ws.node = env("PIRANHA_NODE").value_or(host_name());
  ws.retreat = &signals.retreat;
  long long lease_s = env_int("PIRANHA_LEASE_SECONDS", 600);
  if (lease_s < 1) throw std::runtime_error("PIRANHA_LEASE_SECONDS must be at least 1");
  ws.lease = std::chrono::seconds(lease_s);
  ts::ClientOptions opts;
  // Whatever a piranha has not had acknowledged when it ends is in its
  // tasks' leases: an exit does not wait for a server that is away (the
  // normal end flushes first; a retreat waits kQuickExit).
  opts.close_timeout = std::chrono::milliseconds(0);
  opts.interrupt_fd = signals.fd;
  opts.heartbeat_timeout_ms =
      static_cast<int>(env_int("PIRANHA_HEARTBEAT_TIMEOUT_MS", opts.heartbeat_timeout_ms));
  if (!env("PIRANHA_JOB_ID")) {
    std::fprintf(stderr, "%s: PIRANHA_ROLE=piranha needs PIRANHA_JOB_ID\n", name.c_str());
    return 2;
  }
  ws.job_id = env_int("PIRANHA_JOB_ID", 0);
  std::string server = sys::server_from_env();
  std::unique_ptr<ts::Client> client;
  try {
    client = std::make_unique<ts::Client>(server, opts);
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() == ts::Code::Interrupted) return 0;  // told to retreat before it connected
    std::fprintf(stderr, "%s (piranha on %s): %s\n", name.c_str(), ws.node.c_str(), e.what());
    return e.code() == ts::Code::Unreachable ? kExitCutOff : 1;
  }
  // A short wait: the record is briefly absent while somebody rewrites it
  // (the feeder marks the job running just as agents start its piranhas).
  auto t = client->rd(sys::kSpace, sys::job_template(ws.job_id), 500ms);
  auto job = t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
  if (!job || !sys::is_live(job->state)) return 0;  // nothing to do any more
  ws.client = client.get();
  ws.request_timeout = opts.request_timeout;
  ws.space = std::make_unique<ts::Space>(*client, job->space);
  Piranha worker(ws);

  int rc = 0;
  try {
    if (fns.piranha) fns.piranha(worker);
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() == ts::Code::Unreachable) {
      ws.cut_off = true;
    } else if (e.code() != ts::Code::SpaceRemoved && e.code() != ts::Code::Interrupted) {
      std::fprintf(stderr, "%s (piranha on %s): %s\n", name.c_str(), ws.node.c_str(), e.what());
      rc = 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s (piranha on %s): %s\n", name.c_str(), ws.node.c_str(), e.what());
    rc = 1;
  }
  if (ws.cut_off) {
    // Nothing held can be put back; the tasks' leases return them.
    std::fprintf(stderr,
                 "%s (piranha on %s): cut off from the server at %s; stopping (its tasks return to the space "
                 "when their leases end, and the agent starts another piranha once the server is back)\n",
                 name.c_str(), ws.node.c_str(), server.c_str());
    return kExitCutOff;
  }
  bool retreating = signals.retreat.load();
  // A task asked for ahead goes back with the others.
  try {
    if (auto next = detail::take_ahead(ws, retreating ? kQuickExit / 2 : ws.request_timeout))
      detail::hold_ahead(ws, std::move(*next));
  } catch (const ts::TupleSpaceError&) {
    // Unanswered, or the server is away: its lease returns it when the piranha ends.
  }
  auto held = ws.held;
  std::int64_t interrupted = 0;  // tasks the piranha had started
  // A retreat must be quick, even with the server slow or cut off: what is
  // not acknowledged by then is in leases that return it anyway.
  auto quick_until = Clock::now() + kQuickExit;
  auto settle = [&] {
    if (!retreating) return client->flush();
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(quick_until - Clock::now());
    if (!client->flush_within(std::max(left, std::chrono::milliseconds(0))))
      std::fprintf(stderr,
                   "%s (piranha on %s): the server did not acknowledge the put-backs within %lld ms; "
                   "their leases return the tasks\n",
                   name.c_str(), ws.node.c_str(), static_cast<long long>(kQuickExit.count()));
  };
  try {
    // Short tasks completed before the piranha stopped, not yet sent.
    detail::send_completions(ws);
    // Refused batches are redone task by task once every answer is in; not
    // by a retreat, which must be quick and waits for the server once, at
    // the end: those tasks' leases return them when the piranha ends.
    if (!retreating) {
      settle();
      detail::settle_completions(ws, true);
    }
    std::vector<ts::LeaseId> back;
    std::vector<ts::Tuple> tuples;
    for (auto& st : held) {
      Task task = detail::Runtime::task(st);
      if (st->started) ++interrupted;
      if (retreating && fns.retreat && st->started) {
        try {
          fns.retreat(worker, task);
        } catch (const std::exception& e) {
          std::fprintf(stderr, "%s (piranha on %s): retreat: %s\n", name.c_str(), ws.node.c_str(), e.what());
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
      client->complete_posted(back.front(), job->space, tuples);
    else if (!back.empty())
      client->complete_all_posted(back, job->space, tuples);
    if (retreating && !ws.job_ended)
      client->out_posted(job->space, retreat_record(ws.node, sys::wall_now(), interrupted));
    settle();
    if (retreating) detail::settle_completions(ws, false);
    if (ws.lost > 0)
      std::fprintf(
          stderr,
          "%s (piranha on %s): %lld completion(s) refused because their leases had ended; other piranhas "
          "do those tasks\n",
          name.c_str(), ws.node.c_str(), static_cast<long long>(ws.lost));
  } catch (const ts::TupleSpaceError& e) {
    // The job ended meanwhile, or the server went away: the held tasks'
    // leases return them in either case.
    if (e.code() != ts::Code::SpaceRemoved)
      std::fprintf(stderr, "%s (piranha on %s): %s\n", name.c_str(), ws.node.c_str(), e.what());
  }
  if (retreating) {
    // Ended here, output flushed (job.h): the ordinary end joins threads
    // that each owe a busy owner up to a clock tick of CPU from their time
    // under SCHED_IDLE. The server ends the session on the disconnect
    // instead of the client's goodbye; whatever was not acknowledged is in
    // leases, which that returns.
    std::cout.flush();
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(rc);
  }
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
