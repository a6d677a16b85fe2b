// `piranha nps init | check | simulate` run as an operator runs them:
// build/bin/piranha. `nps simulate` must give exactly what `sim piranha`
// gives with the same options, for every strategy of the spec.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Run {
  int status = -1;
  std::string out, err;
};

fs::path scratch() {
  static const fs::path dir = fs::temp_directory_path() / ("nps_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Runs `piranha <args>` through the shell, capturing stdout and stderr;
// `program` is another copy of piranha to run instead.
Run piranha(const std::string& args, const fs::path& program = fs::path(PIRANHA_BIN_DIR) / "piranha") {
  const auto out = scratch() / "out", err = scratch() / "err";
  const std::string cmd = program.string() + " " + args + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(cmd.c_str());
  return Run{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
}

fs::path write(const std::string& name, const std::string& text) {
  const fs::path p = scratch() / name;
  std::ofstream(p) << text;
  return p;
}

const std::string kTrace = std::string(PIRANHA_SOURCE_DIR) + "/data/ws15-3w.avail.csv";

// Seven jobs over the first day of the bundled trace, some long enough to
// meet owners coming back.
fs::path jobs_file() {
  return write("w.jobs.csv",
               "id,arrival,task_time,tasks\n1,0,3,120\n2,5,10,40\n3,5,1,300\n4,60,7,90\n5,200,2,400\n"
               "6,201,15,20\n7,700,4,150\n");
}

// How long a run may go. Under AddressSanitizer `nps simulate` runs about
// forty times slower (its trellis values are maps compared on every step), so
// the runs there stop after 200 steps: every strategy still decides from the
// first step on and is compared number for number, and the regular build
// compares the whole runs.
#if defined(__SANITIZE_ADDRESS__)
const std::string kMaxSteps = " --max-steps 200";
#else
const std::string kMaxSteps = " --max-steps 4000";
#endif

}  // namespace

TEST_CASE("nps simulate equals sim piranha, number for number, for every strategy of the spec") {
  const std::string jobs = jobs_file().string();
  const std::vector<std::string> strategies = {"FCFS",   "TSK",    "SRT",    "SPT",       "SET",
                                               "LET",    "ROR",    "ROR(3)", "RND",       "FAIR",
                                               "SRTFIT", "LETFIT", "TSKFIT", "SRTA(0.5)", "LETA(0.9)"};
  for (const auto& s : strategies) {
    CAPTURE(s);
    // SET and ROR(3) starve a job here: --max-steps keeps their runs short
    // and checks the unfinished ones too.
    const std::string common = " --trace " + kTrace + " --jobs-file " + jobs + " --json" + kMaxSteps;
    Run sim = piranha("sim piranha --strategies '" + s + "'" + common);
    Run nps = piranha("nps simulate --strategy '" + s + "'" + common);
    REQUIRE(sim.status == 0);
    REQUIRE(nps.status == 0);
    auto a = nlohmann::json::parse(sim.out), b = nlohmann::json::parse(nps.out);
    CHECK(a == b);
    CHECK(a["results"].size() >= 1);
  }
}

TEST_CASE("nps simulate equals sim piranha with a period, a window, a predictor, spill and events") {
  const std::string jobs = jobs_file().string();
  for (const std::string opts : {"--period 5", "--window 30 --predictor X_BURST", "--spill",
                                 "--on-events --period 7", "--task-times observed --cold-start 2"}) {
    for (const std::string s : {"SRTFIT", "FAIR", "TSK"}) {
      CAPTURE(opts);
      CAPTURE(s);
      const std::string common =
          " --trace " + kTrace + " --jobs-file " + jobs + " --json" + kMaxSteps + " " + opts;
      Run sim = piranha("sim piranha --strategies " + s + common);
      Run nps = piranha("nps simulate --strategy " + s + common);
      REQUIRE(sim.status == 0);
      REQUIRE(nps.status == 0);
      CHECK(nlohmann::json::parse(sim.out) == nlohmann::json::parse(nps.out));
    }
  }
}

TEST_CASE("nps simulate runs an operator's program, and the standard one printed by nps init") {
  const std::string jobs = jobs_file().string();
  std::string nodes;
  for (int i = 1; i <= 15; ++i)
    nodes += (i > 1 ? "," : "") + std::string(i < 10 ? "ws0" : "ws") + std::to_string(i);
  Run init = piranha("nps init --nodes " + nodes + " --strategy SRT --period 1");
  REQUIRE(init.status == 0);
  const auto program = write("nps.yaml", init.out);
  Run check = piranha("nps check " + program.string());
  CHECK(check.status == 0);
  CHECK(check.out.find("ok") != std::string::npos);
  CHECK(check.out.find("0 SRT (obeyed)") != std::string::npos);
  const std::string common = " --trace " + kTrace + " --jobs-file " + jobs + " --json";
  Run sim = piranha("sim piranha --strategies SRT" + common);
  Run nps = piranha("nps simulate " + program.string() + common);  // the program's own strategy...
  Run over = piranha("nps simulate " + program.string() + " --strategy SRT" + common);
  REQUIRE(nps.status == 0);
  REQUIRE(over.status == 0);
  // ...is overridden by --strategy, whose default is TSK: say SRT to get SRT.
  CHECK(nlohmann::json::parse(sim.out) == nlohmann::json::parse(over.out));
  // It says what its ticks cost, on stderr: one tick per simulated step of every run.
  const auto results = nlohmann::json::parse(over.out)["results"];
  std::int64_t steps = 0;
  for (const auto& r : results) steps += r["steps"].get<std::int64_t>();
  CHECK(steps > 0);
  CHECK(over.err.find("nps simulate: " + std::to_string(steps) + " ticks, mean ") != std::string::npos);
}

TEST_CASE("nps check and nps run name what is wrong, and where") {
  const std::string head =
      "program: t\nnodes:\n  - {name: enabler, type: enabler}\n  - {name: jobs, type: jobs, inferiors: "
      "[enabler]}\n"
      "  - {name: m1, type: monitor, inferiors: [enabler], params: {node: ws01}}\n";
  struct Case {
    std::string body, needle;
  };
  for (const Case& c :
       {Case{"  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, strategy: BEST}}\n",
             "BEST"},
        Case{"  - {name: s0, type: sheduler, inferiors: [jobs, m1], params: {id: 0}}\n", "sheduler"},
        Case{"  - {name: s0, type: scheduler, inferiors: [jobs, m7], params: {id: 0}}\n", "m7"},
        Case{"  - {name: s0, type: scheduler, inferiors: [jobs], params: {id: 0}}\n", "no monitors"},
        Case{"  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0, period: -1}}\n",
             "period"}}) {
    const auto file = write("bad.yaml", head + c.body);
    Run r = piranha("nps check " + file.string());
    CAPTURE(c.body);
    CHECK(r.status == 2);
    CHECK(r.err.find(file.string() + ":6: ") != std::string::npos);
    CHECK(r.err.find(c.needle) != std::string::npos);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  }
  const auto twice =
      write("twice.yaml", head +
                              "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 3}}\n"
                              "  - {name: s1, type: scheduler, inferiors: [jobs, m1], params: {id: 3}}\n");
  Run r = piranha("nps check " + twice.string());
  CHECK(r.status == 2);
  CHECK(r.err.find(twice.string() + ":7: ") != std::string::npos);

  // An evaluator's switching rule must name schedulers it watches.
  const std::string scheduler = "  - {name: s0, type: scheduler, inferiors: [jobs, m1], params: {id: 0}}\n";
  for (const Case& c : {Case{"{after_jobs: 3}", "names no scheduler"}, Case{"{among: [4]}", "scheduler 4"},
                        Case{"{among: [0], when: never}", "unknown key \"when\""}}) {
    const auto file = write("switch.yaml", head + scheduler +
                                               "  - {name: e, type: evaluator, inferiors: [jobs, s0, m1], "
                                               "params: {switch: " +
                                               c.body + "}}\n");
    Run rule = piranha("nps check " + file.string());
    CAPTURE(c.body);
    CHECK(rule.status == 2);
    CHECK(rule.err.find(file.string() + ":7: ") != std::string::npos);
    CHECK(rule.err.find(c.needle) != std::string::npos);
  }
  // nps init writes what nps run does without a file: deciding on events,
  // and nps check is content with it; a long period without events is
  // warned about, with its line, and still ok.
  Run init = piranha("nps init --nodes ws01");
  REQUIRE(init.status == 0);
  CHECK(init.out.find("on_events: true") != std::string::npos);
  CHECK(init.out.find("on_events: false") == std::string::npos);
  Run quiet = piranha("nps check " + write("init.yaml", init.out).string());
  CHECK(quiet.status == 0);
  CHECK(quiet.err.empty());
  Run off = piranha("nps init --nodes ws01 --no-on-events");
  REQUIRE(off.status == 0);
  CHECK(off.out.find("on_events: false") != std::string::npos);
  const auto slow = write("slow.yaml", off.out);
  Run warned = piranha("nps check " + slow.string());
  CHECK(warned.status == 0);
  CHECK(warned.out.find(": ok: ") != std::string::npos);
  CHECK(warned.err.find(slow.string() + ":") == 0);
  CHECK(warned.err.find(": warning: scheduler \"scheduler_0\" decides only every 10 s") != std::string::npos);

  Run bad_http = piranha("nps run --http 8080 --server tcp://127.0.0.1:1");
  CHECK(bad_http.status == 2);
  CHECK(bad_http.err.find("--http: \"8080\" is not HOST:PORT") != std::string::npos);

  // A page other machines can reach needs a token, and says so before it listens.
  for (const std::string host : {"0.0.0.0", "10.1.2.3", "ws01.example"}) {
    CAPTURE(host);
    Run open = piranha("nps run --http " + host + ":0 --server tcp://127.0.0.1:1 --seconds 1");
    CHECK(open.status == 2);
    CHECK(open.err ==
          std::string("piranha: --http ") + host +
              ":0: other machines can reach this address, and anyone who reaches the live page may "
              "read the whole pool's state: give --http-token FILE (a secret the page asks for, "
              "docs/security.md), or serve it on 127.0.0.1 (ssh -L to reach it)\n");
  }
  const fs::path token = scratch() / "page.token";
  fs::remove(token);
  Run exposed = piranha("nps run --http 0.0.0.0:0 --http-token " + token.string() +
                        " --server tcp://127.0.0.1:1 --seconds 0.5");
  CHECK(exposed.err.find("nps: wrote a new token for the live page to " + token.string()) !=
        std::string::npos);
  CHECK(exposed.err.find("nps: the live page is at http://0.0.0.0:") != std::string::npos);
  CHECK(exposed.err.find("(it asks for the token in " + token.string()) != std::string::npos);
  CHECK(slurp(token).size() == 33);
  fs::permissions(token, fs::perms::others_read, fs::perm_options::add);
  Run readable = piranha("nps run --http 0.0.0.0:0 --http-token " + token.string() +
                         " --server tcp://127.0.0.1:1 --seconds 1");
  CHECK(readable.status == 2);
  CHECK(readable.err.find("a token file that its group or others may read (mode 0604)") != std::string::npos);
  Run stray = piranha("nps run --http-token " + token.string() + " --server tcp://127.0.0.1:1 --seconds 1");
  CHECK(stray.status == 2);
  CHECK(stray.err == "piranha: --http-token is for --http\n");

  // A `piranha` whose page module is not where it looks: a clear error, no page.
  const fs::path alone = scratch() / "alone";
  fs::create_directories(alone);
  std::error_code linked;  // a link, not a copy of the whole program, where it can be
  fs::create_hard_link(fs::path(PIRANHA_BIN_DIR) / "piranha", alone / "piranha", linked);
  if (linked) fs::copy_file(fs::path(PIRANHA_BIN_DIR) / "piranha", alone / "piranha");
  const std::string page_run = "nps run --http 127.0.0.1:0 --server tcp://127.0.0.1:1 --seconds 1";
  Run no_module = piranha(page_run, alone / "piranha");
  CHECK(no_module.status > 0);  // exited with an error, not killed
  CHECK(no_module.err.find("the live page's module piranha-nps-page.so is not installed (looked in " +
                           fs::canonical(alone).string()) != std::string::npos);
  // One there that is not the module: it says so.
  std::ofstream(alone / "piranha-nps-page.so") << "not a shared object\n";
  Run bad_module = piranha(page_run, alone / "piranha");
  CHECK(bad_module.status > 0);
  CHECK(bad_module.err.find("piranha-nps-page.so cannot be loaded") != std::string::npos);
  fs::remove_all(alone);

  Run bad = piranha("nps run --strategy 'SRTA(2)' --server tcp://127.0.0.1:1");
  CHECK(bad.status == 2);
  CHECK(bad.err.find("SRTA(2)") != std::string::npos);
  Run missing = piranha("nps run /nonexistent/nps.yaml --server tcp://127.0.0.1:1");
  CHECK(missing.status == 2);
  CHECK(missing.err.find("/nonexistent/nps.yaml") != std::string::npos);
  Run no_trace = piranha("nps simulate --strategy TSK");
  CHECK(no_trace.status == 2);
  CHECK(no_trace.err.find("--trace") != std::string::npos);
}

TEST_CASE("nps simulate: a program must watch exactly the trace's nodes") {
  const std::string jobs = jobs_file().string();
  Run init = piranha("nps init --nodes ws01,ws02");
  REQUIRE(init.status == 0);
  const auto few = write("few.yaml", init.out);
  Run r = piranha("nps simulate " + few.string() + " --trace " + kTrace + " --jobs-file " + jobs);
  CHECK(r.status == 2);
  CHECK(r.err.find("no monitor watches the trace's node(s) ws03") != std::string::npos);
  std::string nodes;
  for (int i = 1; i <= 15; ++i)
    nodes += (i > 1 ? "," : "") + std::string(i < 10 ? "ws0" : "ws") + std::to_string(i);
  Run more = piranha("nps init --nodes " + nodes + ",pc99");
  const auto extra = write("extra.yaml", more.out);
  r = piranha("nps simulate " + extra.string() + " --trace " + kTrace + " --jobs-file " + jobs);
  CHECK(r.status == 2);
  CHECK(r.err.find(extra.string() + ":") != std::string::npos);
  CHECK(r.err.find("\"pc99\", which the trace does not have") != std::string::npos);
}

TEST_CASE("the NPS node types are listed by piranha trellis types") {
  Run r = piranha("trellis types");
  REQUIRE(r.status == 0);
  for (const char* t : {"enabler", "monitor", "jobs", "scheduler", "evaluator", "owner"})
    CHECK(r.out.find(std::string(t) + "\t") != std::string::npos);
}

TEST_CASE("nps simulate-campus: a small campus, its JSON, its table and its errors") {
  const auto campus = write("campus.yaml",
                            "subnets: {count: 4, nodes: 4, skew: 2}\n"
                            "trace: {synth: {days: 1}, start: 540}\n"
                            "jobs: {count: 30, interarrival: 3, tasks: [20, 200], task_time: [1, 5]}\n"
                            "campus: {period: 5, congested: 10, relieved: 3, hold: 10, cooldown: 10}\n");
  Run json = piranha("nps simulate-campus " + campus.string() + " --json");
  REQUIRE(json.status == 0);
  const auto j = nlohmann::json::parse(json.out);
  CHECK(j["subnets"] == 4);
  CHECK(j["nodes"] == 16);
  CHECK(j["jobs"] == 30);
  for (const char* key :
       {"campus_mean_turnaround_s", "isolated_mean_turnaround_s", "flat_mean_turnaround_s", "wall_s"})
    CHECK(j[key].is_number());
  CHECK(j["campus_mean_turnaround_s"] < j["isolated_mean_turnaround_s"]);
  CHECK(j["campus"]["overhead"]["loans_started"] > 0);
  CHECK(json.err.find("campus:") != std::string::npos);  // the runs' lines on stderr

  Run table = piranha("nps simulate-campus " + campus.string() + " --modes campus,flat --quiet");
  REQUIRE(table.status == 0);
  CHECK(table.out.find("campus (lending)") != std::string::npos);
  CHECK(table.out.find("one flat pool") != std::string::npos);
  CHECK(table.out.find("isolated subnets") == std::string::npos);
  CHECK(table.out.find("campus overhead: ") != std::string::npos);
  CHECK(table.err.empty());

  Run mode = piranha("nps simulate-campus " + campus.string() + " --modes campus,nested");
  CHECK(mode.status == 2);
  CHECK(mode.err == "piranha: --modes: unknown mode \"nested\" (expected campus, isolated or flat)\n");
  const auto bad = write("bad.yaml", "subnets: {count: 2, nodes: 3}\ncampus: {period: 1}\n");
  Run period = piranha("nps simulate-campus " + bad.string());
  CHECK(period.status == 2);
  CHECK(period.err ==
        "piranha: " + bad.string() +
            ":2: campus: period 1 must be longer than subnet_nps' period 1 (the campus runs at a "
            "slower rate than its subnets)\n");
  Run missing = piranha("nps simulate-campus /nonexistent/campus.yaml");
  CHECK(missing.status == 2);
  CHECK(missing.err == "piranha: /nonexistent/campus.yaml: cannot open the campus file\n");
}
