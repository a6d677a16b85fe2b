// Jobs as people run them: the examples against a `piranha ts serve` process,
// `piranha submit` / `jobs` / `cancel` / `nodes` / `owner`, a crashing
// feeder, and a retreat whose partial progress the next piranha resumes.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/resource.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>

#include "harness.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/runtime/task_tally.h"

namespace piranha::it {
namespace {

using nlohmann::json;

// argv run with `vars` ("NAME=value") added to the environment.
std::vector<std::string> with_env(std::vector<std::string> vars, std::vector<std::string> argv) {
  vars.insert(vars.begin(), "/usr/bin/env");
  vars.insert(vars.end(), argv.begin(), argv.end());
  return vars;
}

// Waits for p to end and returns its exit status; fails the test if it
// does not end within `timeout`.
int finish(Process& p, std::chrono::milliseconds timeout = 120s) {
  auto rc = p.wait(timeout);
  INFO(p.command(), "\nstdout:\n", p.out(), "\nstderr:\n", p.err());
  REQUIRE_MESSAGE(rc.has_value(), "did not finish");
  return *rc;
}

// `piranha jobs --all --json`, parsed.
json all_jobs(const std::string& server) {
  Process p({bin("piranha"), "jobs", "--all", "--json", "--server", server});
  REQUIRE(finish(p, 30s) == 0);
  return json::parse(p.out());
}

std::optional<json> job(const std::string& server, std::int64_t id) {
  for (const auto& j : all_jobs(server))
    if (j["id"] == id) return j;
  return std::nullopt;
}

std::string state_of(const std::string& server, std::int64_t id) {
  auto j = job(server, id);
  return j ? j->at("state").get<std::string>() : "(none)";
}

// The id in "job 3 submitted: ..." on p's stderr.
std::int64_t submitted_id(Process& p) {
  REQUIRE_MESSAGE(p.wait_for_err("submitted: "), p.err());
  std::smatch m;
  std::string err = p.err();
  REQUIRE(std::regex_search(err, m, std::regex("job (\\d+) submitted: ")));
  return std::stoll(m[1]);
}

}  // namespace

TEST_CASE("cmatrix with two local piranhas against a server process computes the right product") {
  ServerProcess server;
  Process feeder(
      with_env({"PIRANHA_SERVER=" + server.endpoint(), "PIRANHA_LOCAL_PIRANHAS=2"}, {bin("cmatrix"), "40"}));
  CHECK(finish(feeder) == 0);
  CHECK(feeder.out().find("result OK") != std::string::npos);
  auto j = job(server.endpoint(), 1);
  REQUIRE(j);
  CHECK((*j)["state"] == "done");
  CHECK((*j)["tasks_done"] == 1600);
}

TEST_CASE("cmatrix --grain says its job time and how busy the CPUs were, and --sequential needs no server") {
  ServerProcess server;
  Process feeder(with_env({"PIRANHA_SERVER=" + server.endpoint(), "PIRANHA_LOCAL_PIRANHAS=2"},
                          {bin("cmatrix"), "300", "--grain", "7"}));
  CHECK(finish(feeder) == 0);
  // B (300 columns) went in blocks of 109 columns: the piranhas read all three.
  std::smatch m;
  std::string out = feeder.out();
  REQUIRE_MESSAGE(
      std::regex_search(out, m,
                        std::regex("cmatrix 300 --grain 7: result OK: 43 tasks, 0 wrong elements, 0 "
                                   "duplicate results; parallel ([0-9.]+) s, sequential multiply "
                                   "[0-9.]+ s; job ([0-9.]+) s; CPUs busy (n/a|[0-9]+ %)"
                                   "( \\(the host took ([0-9]+) % of the CPUs' time besides\\))? "
                                   "of the parallel time")),
      out);
  CHECK(std::stod(m[2]) >= std::stod(m[1]));  // the job time includes B's distribution
  if (m[3] != "n/a") CHECK(std::stoi(m[3]) <= 100);
  // A virtual machine's host may take some of the CPUs' time (steal): said
  // apart, from 1 % on.
  if (m[4].matched) CHECK((std::stoi(m[5]) >= 1 && std::stoi(m[5]) <= 100));

  Process alone(with_env({"PIRANHA_SERVER=tcp://127.0.0.1:1"}, {bin("cmatrix"), "200", "--sequential"}));
  CHECK(finish(alone, 30s) == 0);
  CHECK_MESSAGE(std::regex_search(alone.out(), std::regex("^cmatrix 200: sequential multiply [0-9.]+ s\n$")),
                alone.out());
}

TEST_CASE("piranha submit runs the feeder with the job's own arguments and the job reaches done") {
  ServerProcess server;
  Process submit(with_env(
      {"PIRANHA_LOCAL_PIRANHAS=2"},
      {bin("piranha"), "submit", "--server", server.endpoint(), bin("cmatrix"), "30", "--grain", "4"}));
  std::int64_t id = submitted_id(submit);
  CHECK(finish(submit) == 0);
  CHECK(submit.err().find("job " + std::to_string(id) + " submitted: cmatrix") != std::string::npos);
  CHECK(submit.out().find("cmatrix 30 --grain 4: result OK") != std::string::npos);

  auto j = job(server.endpoint(), id);
  REQUIRE(j);
  INFO(j->dump());
  CHECK((*j)["state"] == "done");
  CHECK((*j)["name"] == "cmatrix");
  CHECK((*j)["tasks"] == 8);
  CHECK((*j)["tasks_done"] == (*j)["tasks"]);
  CHECK((*j)["tasks_left"] == 0);

  // The table lists live jobs; this one is finished.
  Process table({bin("piranha"), "jobs", "--server", server.endpoint()});
  CHECK(finish(table) == 0);
  CHECK(table.out().find("no queued, running or held jobs (1 finished; --all shows them)") !=
        std::string::npos);
  Process all({bin("piranha"), "jobs", "--all", "--server", server.endpoint()});
  CHECK(finish(all) == 0);
  CHECK(all.out().find("MEAN TASK") != std::string::npos);
  CHECK(all.out().find("ENDED") != std::string::npos);
  CHECK(all.out().find("EXIT") != std::string::npos);
  CHECK((*j)["exit_status"] == 0);
  CHECK(all.out().find("cmatrix") != std::string::npos);
  CHECK(all.out().find("done") != std::string::npos);
}

TEST_CASE("piranha jobs shows a mean task time in the unit that fits") {
  ServerProcess server;
  ts::Client c(server.endpoint());
  for (auto [id, mean] : std::vector<std::pair<std::int64_t, double>>{{1, 12.4e-6}, {2, 0.0042}, {3, 2.5}}) {
    c.out(sys::kSpace,
          sys::JobRecord{id, "j", "job." + std::to_string(id), sys::wall_now(), sys::JobState::Running}
              .to_tuple());
    c.out(sys::kSpace, sys::JobStat{id, 10, 5, mean, sys::wall_now()}.to_tuple());
  }
  Process jobs({bin("piranha"), "jobs", "--server", server.endpoint()});
  REQUIRE(finish(jobs, 30s) == 0);
  CHECK(jobs.out().find("12.4 \u00b5s") != std::string::npos);
  CHECK(jobs.out().find("4.20 ms") != std::string::npos);
  CHECK(jobs.out().find("2.50 s") != std::string::npos);
}

TEST_CASE("piranha submit of a missing program exits 127 and registers nothing, usage errors exit 2") {
  ServerProcess server;
  Process submit({bin("piranha"), "submit", "--server", server.endpoint(), "no-such-piranha-program", "10"});
  CHECK(finish(submit) == 127);
  CHECK(submit.err().find("no-such-piranha-program: no such program") != std::string::npos);
  CHECK(all_jobs(server.endpoint()).empty());

  Process nothing({bin("piranha"), "submit", "--server", server.endpoint()});
  CHECK(finish(nothing) == 2);
  CHECK(nothing.err().find("usage: piranha submit") != std::string::npos);
  Process not_an_id({bin("piranha"), "cancel", "abc", "--server", server.endpoint()});
  CHECK(finish(not_an_id) == 2);
  CHECK(not_an_id.err().find("abc") != std::string::npos);
}

TEST_CASE("the pool commands say clearly when no server answers") {
  std::string nowhere = "tcp://127.0.0.1:" + std::to_string(free_port());
  for (std::vector<std::string> words :
       {std::vector<std::string>{"jobs"}, {"nodes"}, {"cancel", "1"}, {"owner", "list"}, {"submit"}}) {
    std::vector<std::string> argv = {bin("piranha")};
    argv.insert(argv.end(), words.begin(), words.end());
    argv.insert(argv.end(), {"--server", nowhere});
    if (words[0] == "submit") argv.insert(argv.end(), {bin("cmatrix"), "4"});
    Process p(argv);
    CHECK(finish(p, 30s) == 1);
    CHECK(p.err().find("cannot reach the tuple-space server at " + nowhere +
                       "; start one with `piranha ts serve`") != std::string::npos);
  }
}

TEST_CASE("a feeder that crashes leaves its job failed, and submit names the signal") {
  ServerProcess server;
  Process submit({bin("piranha"), "submit", "--server", server.endpoint(), bin("crash_job")});
  std::int64_t id = submitted_id(submit);
  CHECK(finish(submit) == 128 + SIGABRT);
  CHECK(submit.err().find("job " + std::to_string(id) + " failed: crash_job killed by signal 6 (SIGABRT)") !=
        std::string::npos);
  CHECK(state_of(server.endpoint(), id) == "failed");
}

TEST_CASE("piranha cancel stops a running job's feeder and the job ends cancelled") {
  ServerProcess server;
  // No piranha ever comes, so this feeder waits for its results for ever.
  Process submit({bin("piranha"), "submit", "--server", server.endpoint(), bin("cmatrix"), "5"});
  std::int64_t id = submitted_id(submit);
  REQUIRE(wait_until([&] { return state_of(server.endpoint(), id) == "running"; }, 30s));

  Process cancel({bin("piranha"), "cancel", std::to_string(id), "--server", server.endpoint()});
  CHECK(finish(cancel) == 0);
  CHECK(cancel.err().find("job " + std::to_string(id) + " (cmatrix) cancelled") != std::string::npos);
  CHECK(finish(submit, 30s) == 130);
  CHECK(state_of(server.endpoint(), id) == "cancelled");

  Process again({bin("piranha"), "cancel", std::to_string(id), "--server", server.endpoint()});
  CHECK(finish(again) == 0);
  CHECK(again.err().find("already ended: cancelled") != std::string::npos);
  Process unknown({bin("piranha"), "cancel", "99", "--server", server.endpoint()});
  CHECK(finish(unknown) == 1);
  CHECK(unknown.err().find("no job 99") != std::string::npos);
}

TEST_CASE("piranha submit passes SIGTERM on to its feeder and records the job cancelled") {
  ServerProcess server;
  Process submit({bin("piranha"), "submit", "--server", server.endpoint(), bin("cmatrix"), "5"});
  std::int64_t id = submitted_id(submit);
  REQUIRE(wait_until([&] { return state_of(server.endpoint(), id) == "running"; }, 30s));
  submit.signal(SIGTERM);
  CHECK(finish(submit, 30s) == 128 + SIGTERM);
  CHECK(submit.err().find("job " + std::to_string(id) +
                          " cancelled: interrupted; cmatrix killed by signal 15 (SIGTERM)") !=
        std::string::npos);
  CHECK(state_of(server.endpoint(), id) == "cancelled");
}

TEST_CASE("piranha submit --detach prints the job id and the job runs on without it") {
  ServerProcess server;
  Process submit(
      with_env({"PIRANHA_LOCAL_PIRANHAS=2"}, {bin("piranha"), "submit", "--detach", "--server",
                                              server.endpoint(), bin("cmatrix"), "12", "--grain", "3"}));
  CHECK(finish(submit) == 0);
  std::int64_t id = std::stoll(submit.out());
  CHECK(submit.err().find("job " + std::to_string(id) + " submitted: cmatrix (detached; output in ") !=
        std::string::npos);
  CHECK(wait_until([&] { return state_of(server.endpoint(), id) == "done"; }, 120s));
  // The feeder's output goes to the log, stdout's part as it exits.
  const std::string log = "piranha-job-" + std::to_string(id) + ".log";
  auto read_log = [&] {
    std::ifstream in(log);
    return std::string(std::istreambuf_iterator<char>(in), {});
  };
  CHECK(wait_until(
      [&] {
        std::string text = read_log();
        return text.find("done in") != std::string::npos &&
               text.find("cmatrix 12 --grain 3: result OK") != std::string::npos;
      },
      30s));
  std::filesystem::remove(log);
}

TEST_CASE("mandelbrot: a retreating piranha's partial chunk is resumed by the next piranha") {
  ServerProcess server;
  const std::vector<std::string> args = {bin("mandelbrot"), "--width", "800",    "--height", "480",
                                         "--iterations",    "6000",    "--rows", "16"};
  std::vector<std::string> submit_argv = {bin("piranha"), "submit", "--server", server.endpoint()};
  submit_argv.insert(submit_argv.end(), args.begin(), args.end());
  Process submit(submit_argv);
  std::int64_t id = submitted_id(submit);
  REQUIRE(wait_until([&] { return state_of(server.endpoint(), id) == "running"; }, 30s));
  auto piranha_argv = [&](const std::string& node) {
    return with_env({"PIRANHA_ROLE=piranha", "PIRANHA_JOB_ID=" + std::to_string(id),
                     "PIRANHA_SERVER=" + server.endpoint(), "PIRANHA_NODE=" + node},
                    args);
  };

  // A piranha told to retreat mid-chunk puts the chunk back as far as it
  // got. It may, rarely, be told just as it finished a chunk, and on a
  // loaded machine its put-back may miss the quick exit a retreat allows
  // (job_runtime.cc, kQuickExit: its lease then returns the chunk as it was);
  // then the next one is told again.
  ts::Client c(server.endpoint());
  const std::string space = "job." + std::to_string(id);
  auto partial_chunks = [&] {
    std::size_t n = 0;
    for (const auto& t : c.rd_many(
             space,
             ts::Template({ts::Field::of(ts::Value(std::string("task"))), ts::Field::formal(ts::Type::Int),
                           ts::Field::formal(ts::Type::Int), ts::Field::formal(ts::Type::Blob)}),
             1000))
      if (t.get<std::int64_t>(2) > t.get<std::int64_t>(1)) ++n;
    return n;
  };
  for (int attempt = 1; partial_chunks() == 0; ++attempt) {
    REQUIRE_MESSAGE(attempt <= 20, "no piranha left a partial chunk behind");
    Process first(piranha_argv("retreater-" + std::to_string(attempt)));
    // It holds a chunk once the job's space has a lease.
    REQUIRE_MESSAGE(wait_until([&] { return stats_of(c, space).leases > 0; }, 60s), first.err());
    first.signal(SIGUSR1);
    CHECK(finish(first, 60s) == 0);
    // Its chunks are back, put back or returned with its session, before
    // they are counted; and the next piranha's lease is then its own.
    REQUIRE_MESSAGE(wait_until([&] { return stats_of(c, space).leases == 0; }, 60s), first.err());
  }

  Process second(piranha_argv("resumer"));
  CHECK(finish(submit, 180s) == 0);
  CHECK(finish(second, 60s) == 0);
  INFO(submit.out());
  CHECK(submit.out().find("result OK") != std::string::npos);
  std::smatch m;
  std::string out = submit.out();
  REQUIRE(std::regex_search(out, m, std::regex("(\\d+) resumed from partial progress")));
  CHECK(std::stoll(m[1]) > 0);
}

TEST_CASE("spin with two local piranhas does every task once and says so") {
  ServerProcess server;
  Process feeder(with_env({"PIRANHA_SERVER=" + server.endpoint(), "PIRANHA_LOCAL_PIRANHAS=2"},
                          {bin("spin"), "--tasks", "30", "--task-ms", "5"}));
  CHECK(finish(feeder) == 0);
  CHECK(feeder.out().find("spin: every task done once: 30 tasks of 5 ms, wall ") != std::string::npos);
  auto j = job(server.endpoint(), 1);
  REQUIRE(j);
  CHECK((*j)["state"] == "done");
  CHECK((*j)["tasks_done"] == 30);
  // A task burns 5 ms of CPU, so it takes at least that long.
  CHECK((*j)["mean_task_seconds"].get<double>() >= 0.0045);
}

TEST_CASE("spin --sleep: its tasks take their time in wall-clock time, not in CPU time") {
  ServerProcess server;
  rusage before{};
  ::getrusage(RUSAGE_CHILDREN, &before);
  Process feeder(with_env({"PIRANHA_SERVER=" + server.endpoint(), "PIRANHA_LOCAL_PIRANHAS=2"},
                          {bin("spin"), "--tasks", "20", "--task-ms", "100", "--sleep"}));
  CHECK(finish(feeder) == 0);
  rusage after{};
  ::getrusage(RUSAGE_CHILDREN, &after);
  INFO(feeder.out());
  CHECK(feeder.out().find("spin: every task done once: 20 tasks of 100 ms") != std::string::npos);
  auto j = job(server.endpoint(), 1);
  REQUIRE(j);
  CHECK((*j)["mean_task_seconds"].get<double>() >= 0.095);
  // Two piranhas busy-waiting the same 2 s would use about 2 s of CPU.
  auto cpu_s = [](const rusage& r) {
    return static_cast<double>(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
           static_cast<double>(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
  };
  CHECK(cpu_s(after) - cpu_s(before) < 0.5);
}

TEST_CASE("spin: a piranha told to retreat mid-task stops at once and another piranha redoes the task") {
  ServerProcess server;
  Process submit({bin("piranha"), "submit", "--server", server.endpoint(), bin("spin"), "--tasks", "3",
                  "--task-ms", "1000"});
  std::int64_t id = submitted_id(submit);
  REQUIRE(wait_until([&] { return state_of(server.endpoint(), id) == "running"; }, 30s));
  auto piranha_argv = [&](const std::string& node) {
    return with_env({"PIRANHA_ROLE=piranha", "PIRANHA_JOB_ID=" + std::to_string(id),
                     "PIRANHA_SERVER=" + server.endpoint(), "PIRANHA_NODE=" + node},
                    {bin("spin"), "--tasks", "3", "--task-ms", "1000"});
  };
  ts::Client c(server.endpoint());
  Process retreater(piranha_argv("retreater"));
  // It holds a task once the job's space has a lease.
  REQUIRE_MESSAGE(wait_until([&] { return stats_of(c, "job." + std::to_string(id)).leases > 0; }, 60s),
                  retreater.err());
  // As an agent tells it, with the cause as the signal's value (task_tally.h).
  REQUIRE(::sigqueue(retreater.pid(), SIGUSR1, sigval{.sival_int = static_cast<int>(RetreatCause::Owner)}) ==
          0);
  CHECK(finish(retreater, 30s) == 0);

  Process finisher(piranha_argv("finisher"));
  CHECK(finish(submit) == 0);
  CHECK(finish(finisher, 30s) == 0);
  CHECK(submit.out().find("spin: every task done once: 3 tasks of 1000 ms") != std::string::npos);
  std::map<std::string, sys::JobWork> work;
  for (const auto& w : sys::list_jobwork(c, id)) work[w.node] = w;
  // It stopped mid-task (a task is a second of CPU) and completed none.
  CHECK(work["retreater"].retreats == 1);
  CHECK(work["retreater"].owner_retreats == 1);  // the cause its agent gave
  CHECK(work["retreater"].tasks == 0);
  CHECK(work["finisher"].tasks == 3);
}

TEST_CASE("spin: --help, and bad arguments exit 2 naming the problem, without a server") {
  Process help({bin("spin"), "--help"});
  CHECK(finish(help, 30s) == 0);
  CHECK(help.out().find("spin --tasks N --task-ms T") != std::string::npos);
  for (auto [args, problem] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--tasks", "abc", "--task-ms", "5"}, "--tasks \"abc\" must be an integer from 1 to "},
           {{"--tasks", "0", "--task-ms", "5"}, "--tasks \"0\" must be an integer from 1 to "},
           {{"--tasks", "3", "--task-ms", "-1"}, "--task-ms \"-1\" must be an integer from 0 to "},
           {{"--task-ms", "5"}, "--tasks is required"},
           {{"--tasks", "3"}, "--task-ms is required"},
           {{"--tasks"}, "--tasks needs a value"},
           {{"--tasks", "3", "--task-ms", "5", "extra"}, "unknown argument \"extra\""}}) {
    std::vector<std::string> argv = {bin("spin")};
    argv.insert(argv.end(), args.begin(), args.end());
    Process p(argv);
    CHECK(finish(p, 30s) == 2);
    CHECK_MESSAGE(p.err().find("spin: " + problem) != std::string::npos, p.err());
    CHECK(p.err().find("usage: spin --tasks N --task-ms T") != std::string::npos);
  }
}

TEST_CASE("piranha jobs --json: start and end times, and turnaround once the job has ended") {
  ServerProcess server;
  // One piranha, 40 tasks of 50 ms: the job runs for two seconds or more.
  Process submit(
      with_env({"PIRANHA_LOCAL_PIRANHAS=1"}, {bin("piranha"), "submit", "--server", server.endpoint(),
                                              bin("spin"), "--tasks", "40", "--task-ms", "50"}));
  std::int64_t id = submitted_id(submit);
  std::optional<json> running;
  REQUIRE(wait_until(
      [&] {
        running = job(server.endpoint(), id);
        return running && !(*running)["start_time"].is_null();
      },
      60s));
  INFO("while running: ", running->dump());
  CHECK((*running)["state"] == "running");
  CHECK((*running)["end_time"].is_null());
  CHECK((*running)["turnaround_seconds"].is_null());

  CHECK(finish(submit) == 0);
  auto j = job(server.endpoint(), id);
  REQUIRE(j);
  INFO("ended: ", j->dump());
  CHECK((*j)["state"] == "done");
  REQUIRE(!(*j)["start_time"].is_null());
  REQUIRE(!(*j)["end_time"].is_null());
  double submitted = (*j)["submit_time"], start = (*j)["start_time"], end = (*j)["end_time"];
  CHECK(submitted <= start);
  CHECK(start <= end);
  CHECK(start == (*running)["start_time"].get<double>());  // the first piranha's first task, set once
  CHECK((*j)["turnaround_seconds"].get<double>() == doctest::Approx(end - submitted));
  // 40 tasks of 50 ms of CPU, one after another.
  CHECK(end - start >= 2.0);

  Process table({bin("piranha"), "jobs", "--all", "--server", server.endpoint()});
  CHECK(finish(table) == 0);
  CHECK(table.out().find("TURNAROUND") != std::string::npos);
}

TEST_CASE("a cancelled job and a crashed feeder's job get an end time too") {
  ServerProcess server;
  Process crash({bin("piranha"), "submit", "--server", server.endpoint(), bin("crash_job")});
  std::int64_t crashed = submitted_id(crash);
  CHECK(finish(crash) == 128 + SIGABRT);
  // No piranha ever comes to this one.
  Process submit({bin("piranha"), "submit", "--server", server.endpoint(), bin("spin"), "--tasks", "3",
                  "--task-ms", "1"});
  std::int64_t waiting = submitted_id(submit);
  REQUIRE(wait_until([&] { return state_of(server.endpoint(), waiting) == "running"; }, 30s));
  double before_cancel = sys::wall_now();
  Process cancel({bin("piranha"), "cancel", std::to_string(waiting), "--server", server.endpoint()});
  CHECK(finish(cancel) == 0);
  CHECK(finish(submit, 30s) == 130);

  auto c = job(server.endpoint(), crashed), w = job(server.endpoint(), waiting);
  REQUIRE(c);
  REQUIRE(w);
  INFO(c->dump(), "\n", w->dump());
  CHECK((*c)["state"] == "failed");
  CHECK(!(*c)["end_time"].is_null());
  CHECK((*c)["start_time"].is_null());
  CHECK((*w)["state"] == "cancelled");
  CHECK((*w)["start_time"].is_null());
  // The end is when `piranha cancel` marked it, not when the feeder noticed.
  CHECK((*w)["end_time"].get<double>() >= before_cancel);
  CHECK((*w)["end_time"].get<double>() <= sys::wall_now());
  CHECK((*w)["turnaround_seconds"].get<double>() ==
        doctest::Approx((*w)["end_time"].get<double>() - (*w)["submit_time"].get<double>()));
  // The feeders' exit statuses, as submit reported them.
  CHECK((*c)["exit_status"] == 128 + SIGABRT);
  CHECK((*w)["exit_status"] == 130);
}

TEST_CASE("jobstat shows a job's first completed tasks and their mean time within a second") {
  ServerProcess server;
  Process submit(
      with_env({"PIRANHA_LOCAL_PIRANHAS=1"}, {bin("piranha"), "submit", "--server", server.endpoint(),
                                              bin("spin"), "--tasks", "20", "--task-ms", "50"}));
  std::int64_t id = submitted_id(submit);
  // Watch as the NPS would, only much more often.
  ts::Client c(server.endpoint());
  std::optional<sys::JobStat> seen;
  double seen_at = 0;
  REQUIRE(wait_until(
      [&] {
        auto t = c.rd(sys::kSpace, sys::jobstat_template(id), 0ms);
        auto st = t ? sys::JobStat::from_tuple(*t) : std::nullopt;
        if (!st || st->tasks_done == 0 || st->mean_task_seconds <= 0) return false;
        seen = st;
        seen_at = sys::wall_now();
        return true;
      },
      60s));
  auto times = sys::find_jobtimes(c, id);
  REQUIRE(times);
  REQUIRE(times->start_time > 0);
  // The first task started at start_time and took about the mean task time.
  double first_done = times->start_time + seen->mean_task_seconds;
  double delay = seen_at - first_done;
  MESSAGE("jobstat showed ", seen->tasks_done, " task(s), mean ", seen->mean_task_seconds, " s, ", delay,
          " s after the first task completed");
  CHECK(seen->mean_task_seconds >= 0.045);
  CHECK(delay < 1.0);
  CHECK(finish(submit) == 0);
}

TEST_CASE("owner block, list, nodes and allow round trip through the system space") {
  ServerProcess server;
  const std::string& ep = server.endpoint();
  ts::Client c(ep);
  double now = sys::wall_now();
  c.out(sys::kSpace, sys::NodeRecord{"ws01", 4, 1.5, sys::NodeState::Available, now}.to_tuple());
  c.out(sys::kSpace, sys::NodeRecord{"ws02", 2, 1.0, sys::NodeState::Available, now - 3600}.to_tuple());
  c.out(sys::kSpace, sys::NodeRun{"ws01", 7, "scheduler 0", now}.to_tuple());
  c.flush();

  Process for_ten({bin("piranha"), "owner", "block", "ws01", "--for", "10m", "--server", ep});
  CHECK(finish(for_ten) == 0);
  CHECK(for_ten.err().find("node ws01 blocked for piranhas from now until ") != std::string::npos);
  Process forever({bin("piranha"), "owner", "block", "ws01", "--server", ep});
  CHECK(finish(forever) == 0);
  CHECK(forever.err().find("until allowed again") != std::string::npos);
  Process bad({bin("piranha"), "owner", "block", "ws01", "--for", "10x", "--server", ep});
  CHECK(finish(bad) == 2);
  CHECK(bad.err().find("--for \"10x\"") != std::string::npos);
  Process backwards(
      {bin("piranha"), "owner", "block", "ws01", "--from", "+2h", "--until", "+1h", "--server", ep});
  CHECK(finish(backwards) == 2);

  Process list({bin("piranha"), "owner", "list", "--json", "--server", ep});
  REQUIRE(finish(list) == 0);
  auto blocks = json::parse(list.out());
  REQUIRE(blocks.size() == 2);
  int open_ended = 0;
  for (const auto& b : blocks) {
    CHECK(b["node"] == "ws01");
    CHECK(b["status"] == "in force");
    if (b["end"].is_null())
      ++open_ended;
    else
      CHECK(b["end"].get<double>() == doctest::Approx(now + 600).epsilon(0.001));
  }
  CHECK(open_ended == 1);

  Process nodes({bin("piranha"), "nodes", "--json", "--server", ep});
  REQUIRE(finish(nodes) == 0);
  auto ns = json::parse(nodes.out());
  REQUIRE(ns.size() == 2);
  CHECK(ns[0]["node"] == "ws01");
  CHECK(ns[0]["state"] == "available");
  CHECK(ns[0]["blocked_until"].get<double>() > now + 86400);
  CHECK(ns[1]["node"] == "ws02");
  CHECK(ns[1]["state"] == "down");
  CHECK(ns[1]["stale"] == true);
  CHECK(ns[1]["blocked_until"].is_null());
  CHECK(ns[0]["job"] == 7);
  CHECK(ns[0]["by"] == "scheduler 0");
  CHECK(ns[1]["job"].is_null());
  CHECK(ns[1]["by"].is_null());
  Process table({bin("piranha"), "nodes", "--server", ep});
  REQUIRE(finish(table) == 0);
  CHECK(table.out().find("down (stale)") != std::string::npos);
  CHECK(table.out().find("BLOCKED-UNTIL") != std::string::npos);
  CHECK(table.out().find("JOB") != std::string::npos);

  Process allow({bin("piranha"), "owner", "allow", "ws01", "--server", ep});
  CHECK(finish(allow) == 0);
  CHECK(allow.err().find("node ws01 allowed again: removed 2 blocks") != std::string::npos);
  Process empty({bin("piranha"), "owner", "list", "--server", ep});
  CHECK(finish(empty) == 0);
  CHECK(empty.out().find("no owner blocks") != std::string::npos);
}

}  // namespace piranha::it
