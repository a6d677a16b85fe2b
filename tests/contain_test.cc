// A job's program contained (docs/security.md, "Piranhas"): an agent run as
// root with piranha_user starts piranhas as that user, without its own
// supplementary groups and out of reach of its key; each job's piranhas get a
// key of their own that reaches their job's space and records only; and a
// program outside piranha_programs is refused, its job held with the reason.
// Real processes: a server with --key and --auth, `piranha agent`, and a
// probe job (a shell script) registered straight in the system space.
#include <doctest/doctest.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness.h"
#include "piranha/runtime/sysspace.h"
#include "secured_pool.h"

using namespace piranha::it;
namespace sys = piranha::sys;

namespace {

// Root, and a user `nobody`: what these tests need to change identities.
bool can_change_identity() {
  if (::geteuid() != 0 || !::getpwnam("nobody")) {
    MESSAGE("skipped: needs root and a user nobody");
    return false;
  }
  return true;
}

// Registers a queued job of `program` as `owner`'s client `c`: what
// `piranha submit` does, without a feeder.
std::int64_t register_probe_job(ts::Client& c, const std::string& program, std::vector<std::string> args,
                                const std::string& cwd, sys::JobState state = sys::JobState::Queued) {
  sys::JobRecord job;
  job.id = sys::next_job_id(c);
  job.name = "probe";
  job.space = "job." + std::to_string(job.id);
  job.submit_time = sys::wall_now();
  job.state = state;
  c.out(sys::kSpace, sys::JobLaunch{job.id, program, std::move(args), cwd}.to_tuple());
  c.out(sys::kSpace, job.to_tuple());
  c.flush();
  return job.id;
}

// The "Name:\tvalue" line of /proc/PID/status, value only.
std::string status_line(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + ":", 0) == 0) {
      auto v = line.substr(name.size() + 1);
      v.erase(0, v.find_first_not_of(" \t"));
      v.erase(v.find_last_not_of(" \t") + 1);
      return v;
    }
  return "";
}

// The limit `name` of /proc/PID/limits: "soft hard units", single-spaced.
std::string limit_line(pid_t pid, const std::string& name) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/limits");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + " ", 0) == 0) {
      std::istringstream words(line.substr(name.size()));
      std::string out;
      for (std::string w; words >> w;) out += (out.empty() ? "" : " ") + w;
      return out;
    }
  return "";
}

std::vector<std::string> agent_argv(SecuredPool& pool, const std::string& node, const std::string& config,
                                    const std::string& trace) {
  return {bin("piranha"), "agent",   "--node", node,           "--server", pool.endpoint(),      "--config",
          config,         "--trace", trace,    "--time-scale", "60",       "--piranha-priority", "normal"};
}

// The pool's scratch directory opened to the piranhas' user: it may run
// the probe there and write its report, and still not read the keys (0600).
struct ProbeDir {
  explicit ProbeDir(Scratch& s) : dir(s.dir) {
    ::chmod(s.dir.c_str(), 0755);
    reports = s.dir + "/reports";
    ::mkdir(reports.c_str(), 0777);
    ::chmod(reports.c_str(), 0777);
    // What a piranha sees of itself, then a wait to be looked at.
    probe = s.write("probe.sh",
                    "#!/bin/sh\n"
                    "out=" +
                        reports +
                        "/$PIRANHA_JOB_ID.$$\n"
                        "{ echo \"pid $$\"; echo \"key $PIRANHA_KEY\";\n"
                        "  if cat \"$AGENT_KEY\" >/dev/null 2>&1; then echo 'agent key: read'; "
                        "else echo 'agent key: refused'; fi; } > $out.tmp\n"
                        "mv $out.tmp $out\n"
                        "exec sleep 60\n");
    ::chmod(probe.c_str(), 0755);
  }
  // The first report of job `id`'s piranhas ("" while there is none).
  std::string report(std::int64_t id) const {
    std::error_code ec;
    for (const auto& f : std::filesystem::directory_iterator(reports, ec)) {
      auto name = f.path().filename().string();
      if (name.rfind(std::to_string(id) + ".", 0) == 0 && name.find(".tmp") == std::string::npos) {
        std::ifstream in(f.path());
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
      }
    }
    return "";
  }
  std::string dir, reports, probe;
};

std::string field(const std::string& report, const std::string& name) {
  std::istringstream in(report);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(name + " ", 0) == 0) return line.substr(name.size() + 1);
  return "";
}

bool refused(const std::function<void()>& request) {
  try {
    request();
  } catch (const ts::TupleSpaceError& e) {
    return e.code() == ts::Code::NotPermitted;
  }
  return false;
}

const std::string kTrace =
    "# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\nnode,start,end\nws01,0,100000\n";

}  // namespace

TEST_CASE(
    "contain: a piranha runs as piranha_user without the agent's groups, and cannot read the agent's key") {
  if (!can_change_identity()) return;
  SecuredPool pool;
  Scratch& s = pool.scratch();
  ProbeDir probe(s);
  // The agent's key file is the agent's (root's), mode 0600.
  ::setenv("AGENT_KEY", pool.key("ws01").c_str(), 1);
  auto config = s.write("ws01.yaml",
                        "key: ws01.key\nserver_key: server.pub\npiranha_user: nobody\n"
                        "piranha_limits: {address_space_mb: 4096, cpu_seconds: 3600, open_files: 256}\n");
  // The agent has supplementary groups of its own (as the packaged one had
  // `input`): its piranhas must not.
  std::vector<gid_t> saved(64);
  int n_saved = ::getgroups(static_cast<int>(saved.size()), saved.data());
  REQUIRE(n_saved >= 0);
  saved.resize(static_cast<std::size_t>(n_saved));
  const gid_t extra[] = {0, 4, 20};
  REQUIRE(::setgroups(3, extra) == 0);
  Process agent(agent_argv(pool, "ws01", config, s.write("pool.avail.csv", kTrace)));
  agent.stop_with(SIGTERM);
  ::setgroups(saved.size(), saved.data());
  ::unsetenv("AGENT_KEY");

  ts::Client alice(pool.endpoint(), pool.as("alice"));
  auto id = register_probe_job(alice, probe.probe, {}, probe.dir);
  REQUIRE_MESSAGE(wait_until([&] { return !probe.report(id).empty(); }), agent.err(), pool.log());
  const std::string report = probe.report(id);
  INFO("report: ", report, "\nagent: ", agent.err());
  pid_t pid = std::stoi(field(report, "pid"));
  const passwd* nobody = ::getpwnam("nobody");
  const std::string uid = std::to_string(nobody->pw_uid), gid = std::to_string(nobody->pw_gid);
  CHECK(status_line(pid, "Uid") == uid + "\t" + uid + "\t" + uid + "\t" + uid);
  CHECK(status_line(pid, "Gid") == gid + "\t" + gid + "\t" + gid + "\t" + gid);
  CHECK(status_line(pid, "Groups") == "");
  CHECK(status_line(::getpid(), "Uid").rfind("0\t", 0) == 0);  // the agent's user was root
  CHECK(contains(report, "agent key: refused"));
  // Its limits, soft and hard alike.
  CHECK(limit_line(pid, "Max open files") == "256 256 files");
  CHECK(limit_line(pid, "Max cpu time") == "3600 3600 seconds");
  CHECK(limit_line(pid, "Max address space") ==
        std::to_string(4096ULL << 20) + " " + std::to_string(4096ULL << 20) + " bytes");
  // Its PIRANHA_KEY is its job's key, not the agent's: a file of the
  // piranhas' user that only that user reads.
  const std::string key = field(report, "key");
  CHECK(key != pool.key("ws01"));
  struct stat st {};
  REQUIRE(::stat(key.c_str(), &st) == 0);
  CHECK(st.st_uid == nobody->pw_uid);
  CHECK((st.st_mode & 0077) == 0);
}

TEST_CASE("contain: a job's piranha key reaches its own job's space and records, and no other job's") {
  if (!can_change_identity()) return;
  SecuredPool pool;
  Scratch& s = pool.scratch();
  ProbeDir probe(s);
  auto config = s.write("ws01.yaml", "key: ws01.key\nserver_key: server.pub\npiranha_user: nobody\n");
  ts::Client admin(pool.endpoint(), pool.as("admin"));
  // bob's job 1 is not live (no agent runs it) but has a task in its space.
  ts::Client bob(pool.endpoint(), pool.as("bob"));
  auto other = register_probe_job(bob, probe.probe, {}, probe.dir, sys::JobState::Held);
  bob.out("job." + std::to_string(other), ts::Tuple::of("task", 1));
  bob.flush();
  Process agent(agent_argv(pool, "ws01", config, s.write("pool.avail.csv", kTrace)));
  agent.stop_with(SIGTERM);
  ts::Client alice(pool.endpoint(), pool.as("alice"));
  auto id = register_probe_job(alice, probe.probe, {}, probe.dir);
  REQUIRE_MESSAGE(wait_until([&] { return !probe.report(id).empty(); }), agent.err(), pool.log());
  INFO("agent: ", agent.err(), "\nserver: ", pool.log());

  // The key the agent made for job `id`'s piranhas, announced under its name.
  auto pair = ts::load_secret_key(field(probe.report(id), "key"), "the piranha's key");
  auto announced = admin.rd(sys::kSpace, sys::jobkey_template(id, "ws01"), 0ms);
  REQUIRE(announced);
  CHECK(sys::JobKey::from_tuple(*announced)->public_key == pair.public_key);
  ts::ClientOptions o = quick_client_options();
  o.curve =
      ts::CurveClientKeys{pair.public_key, pair.secret_key, ts::load_public_key(pool.pub("server"), "test")};
  o.curve_from_environment = false;
  ts::Client piranha(pool.endpoint(), o);

  const std::string mine = "job." + std::to_string(id), theirs = "job." + std::to_string(other);
  piranha.out(mine, ts::Tuple::of("result", 7));
  CHECK(piranha.rd(
      mine, ts::Template({ts::Field::of(ts::Value(std::string("result"))), ts::Field::formal(ts::Type::Int)}),
      0ms));
  CHECK(piranha.rd(sys::kSpace, sys::job_template(id), 0ms));
  auto task = ts::Template({ts::Field::of(ts::Value(std::string("task"))), ts::Field::formal(ts::Type::Int)});
  CHECK(refused([&] { piranha.rd(theirs, task, 0ms); }));
  CHECK(refused([&] { piranha.in(theirs, task, 0ms); }));
  CHECK(refused([&] { piranha.out(theirs, ts::Tuple::of("result", 666)); }));
  CHECK(refused([&] { piranha.rd(sys::kSpace, sys::job_template(other), 0ms); }));
  CHECK(refused([&] { piranha.rd(sys::kSpace, sys::node_template("ws01"), 0ms); }));
  CHECK(refused([&] { piranha.out(sys::kSpace, sys::JobKey{id, "ws01", pair.public_key}.to_tuple()); }));
  // bob's space is as bob left it.
  CHECK(bob.rd_many(theirs,
                    ts::Template({ts::Field::formal(ts::Type::String), ts::Field::formal(ts::Type::Int)}),
                    10) == std::vector<ts::Tuple>{ts::Tuple::of("task", 1)});
  CHECK(contains(pool.log(), "key \"ws01/job." + std::to_string(id) + "\" (role piranha) may not read job " +
                                 std::to_string(other) + "'s space (" + theirs + ")"));

  // The job ends: its piranhas go, and with them their key and its file.
  Process cancel(pool.cli("alice", {"cancel", std::to_string(id)}));
  REQUIRE_MESSAGE(cancel.wait() == 0, cancel.err());
  CHECK_MESSAGE(wait_until([&] { return !admin.rd(sys::kSpace, sys::jobkey_template(id, "ws01"), 0ms); }),
                agent.err());
  CHECK(wait_until([&] { return !std::filesystem::exists(field(probe.report(id), "key")); }));
}

TEST_CASE("contain: a program outside piranha_programs is refused, and its job held with the reason") {
  SecuredPool pool;
  Scratch& s = pool.scratch();
  auto config = s.write("ws01.yaml",
                        "key: ws01.key\nserver_key: server.pub\npiranha_programs: [" + s.dir + "/jobs/]\n");
  Process agent(agent_argv(pool, "ws01", config, s.write("pool.avail.csv", kTrace)));
  agent.stop_with(SIGTERM);
  ts::Client alice(pool.endpoint(), pool.as("alice"));
  auto id = register_probe_job(alice, "/bin/sh", {"-c", "touch " + s.dir + "/ran"}, s.dir);
  std::optional<sys::JobHold> hold;
  REQUIRE_MESSAGE(wait_until([&] {
                    auto t = alice.rd(sys::kSpace, sys::jobheld_template(id), 0ms);
                    if (t) hold = sys::JobHold::from_tuple(*t);
                    return hold.has_value();
                  }),
                  agent.err());
  INFO("agent: ", agent.err());
  std::string sh = std::filesystem::canonical("/bin/sh").string();
  CHECK(hold->reason == "cannot start its program on ws01: " + sh +
                            " is not among this node's allowed programs (piranha_programs: " + s.dir +
                            "/jobs/)");
  auto job = alice.rd(sys::kSpace, sys::job_template(id), 0ms);
  REQUIRE(job);
  CHECK(sys::JobRecord::from_tuple(*job)->state == sys::JobState::Held);
  CHECK_FALSE(std::filesystem::exists(s.dir + "/ran"));
}

TEST_CASE("contain: an agent not run as root refuses piranha_user at start, and says why") {
  SecuredPool pool;
  Scratch& s = pool.scratch();
  if (::geteuid() == 0) {
    // As root, the same refusal comes from a user that does not exist.
    auto config = s.write("ws01.yaml", "piranha_user: no-such-user-here\n");
    Process agent(
        {bin("piranha"), "agent", "--node", "ws01", "--server", pool.endpoint(), "--config", config});
    CHECK(agent.wait() == 1);
    CHECK(contains(agent.err(), "piranha_user: no user \"no-such-user-here\" on this node"));
    return;
  }
  auto config = s.write("ws01.yaml", "piranha_user: nobody\n");
  Process agent({bin("piranha"), "agent", "--node", "ws01", "--server", pool.endpoint(), "--config", config});
  CHECK(agent.wait() == 1);
  CHECK(contains(agent.err(), "the agent does not run as root"));
}

TEST_CASE(
    "contain: an agent killed with SIGKILL leaves its job keys' directory, and the next agent on the node "
    "removes it") {
  SecuredPool pool;
  Scratch& s = pool.scratch();
  ProbeDir probe(s);
  auto config = s.write("ws01.yaml", "key: ws01.key\nserver_key: server.pub\n");
  const std::string trace = s.write("pool.avail.csv", kTrace);
  std::filesystem::path dir;
  {
    Process agent(agent_argv(pool, "ws01", config, trace));
    ts::Client alice(pool.endpoint(), pool.as("alice"));
    auto id = register_probe_job(alice, probe.probe, {}, probe.dir);
    REQUIRE_MESSAGE(wait_until([&] { return !probe.report(id).empty(); }), agent.err(), pool.log());
    dir = std::filesystem::path(field(probe.report(id), "key")).parent_path();
    INFO("agent: ", agent.err(), "\nkeys: ", dir.string());
    // Named after the agent's process, which made it with the job's key.
    CHECK(dir.filename().string().rfind("piranha-keys-" + std::to_string(agent.pid()) + "-", 0) == 0);
    agent.signal(SIGKILL);
    REQUIRE(agent.wait() == 128 + SIGKILL);
  }
  REQUIRE(std::filesystem::exists(dir));
  Process next(agent_argv(pool, "ws01", config, trace));
  next.stop_with(SIGTERM);
  CHECK_MESSAGE(wait_until([&] { return !std::filesystem::exists(dir); }), next.err());
  CHECK(next.wait_for_err("of job keys left by agents no longer running"));
}
