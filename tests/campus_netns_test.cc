// The live campus (docs/nps.md, "The live campus") across network namespaces, as issue 32 shows
// it: three subnets a, b and c, each in a namespace of its own with its `piranha ts serve`, three
// agents (always-available traces, --campus-loans) and its `nps run` (b and c lending to a), and
// `piranha nps campus` in a fourth namespace, k, which holds the bridge the subnets' veths are
// ports of. This process reaches the servers through a veth of its own on that bridge. Cutting
// the a–b path alone is isolating a's and b's bridge ports from each other (`bridge link set
// ... isolated on`): frames between them are dropped silently, as by a broken link, while both
// still reach c, k and this process.
//
// Each case builds the whole campus (a few seconds), bounds every wait, stops only the processes
// it started (by PID, through Process) and deletes the namespaces and links it made, also when it
// fails. Jobs are `spin --sleep`: nine nodes on this host's cores each behave as a machine.
#include <doctest/doctest.h>
#include <signal.h>
#include <unistd.h>

#include <map>
#include <memory>

#include "harness.h"
#include "piranha/runtime/sysspace.h"

using namespace piranha::it;
namespace sys = piranha::sys;
using piranha::Clock;

namespace {

constexpr const char* kIp = "/usr/sbin/ip";

// Runs `argv` to its end (20 s at most); whether it exited 0. Its stderr goes to `errors`.
bool run(const std::vector<std::string>& argv, std::string* errors = nullptr) {
  Process p(argv);
  const auto rc = p.wait(20s);
  if (errors && rc != 0) *errors += p.command() + ": " + p.err() + "\n";
  return rc == 0;
}

// The namespaces and links of one campus, named after this process (so that two runs on one host
// do not meet), on 10.215.N.0/24: subnet a at .1, b at .2, c at .3, the campus's namespace k at
// .254 on its bridge, this process at .100. Removed with everything in them when it goes.
class CampusNet {
 public:
  CampusNet() {
    const std::string pid = std::to_string(::getpid());
    prefix_ = "cn" + pid;
    net_ = "10.215." + std::to_string(::getpid() % 200 + 20) + ".";
    k = prefix_ + "k";
    ok = step({kIp, "netns", "add", k}) && step({kIp, "-n", k, "link", "set", "lo", "up"}) &&
         step({kIp, "-n", k, "link", "add", "br0", "type", "bridge"}) &&
         step({kIp, "-n", k, "addr", "add", net_ + "254/24", "dev", "br0"}) &&
         step({kIp, "-n", k, "link", "set", "br0", "up"});
    for (const char* s : {"a", "b", "c"}) ok = ok && add_subnet(s);
    // This process's port: its end stays here, the other joins the bridge.
    const std::string here = prefix_ + "h", there = prefix_ + "hk";
    ok = ok && step({kIp, "link", "add", here, "type", "veth", "peer", "name", there}) &&
         step({kIp, "link", "set", there, "netns", k}) &&
         step({kIp, "-n", k, "link", "set", there, "master", "br0", "up"}) &&
         step({kIp, "addr", "add", net_ + "100/24", "dev", here}) && step({kIp, "link", "set", here, "up"});
  }
  ~CampusNet() {
    // Each veth pair goes with the namespace holding one of its ends.
    for (const char* s : {"a", "b", "c", "k"}) run({kIp, "netns", "del", prefix_ + s});
    run({kIp, "link", "del", prefix_ + "h"});
  }
  CampusNet(const CampusNet&) = delete;
  CampusNet& operator=(const CampusNet&) = delete;

  // The namespace of subnet `s` ("a", "b", "c").
  std::string ns(const std::string& s) const { return prefix_ + s; }
  // Subnet `s`'s server's endpoint.
  std::string endpoint(const std::string& s) const {
    return "tcp://" + net_ + std::to_string(s[0] - 'a' + 1) + ":7070";
  }
  // `argv` run in namespace `ns`.
  static std::vector<std::string> in(const std::string& ns, std::vector<std::string> argv) {
    argv.insert(argv.begin(), {kIp, "netns", "exec", ns});
    return argv;
  }
  // Cuts (true) or restores the path between subnets a and b alone.
  bool cut_a_b(bool cut) {
    for (const char* s : {"a", "b"})
      if (!step(in(k, {"/usr/sbin/bridge", "link", "set", "dev", prefix_ + s + "k", "isolated",
                       cut ? "on" : "off"})))
        return false;
    return true;
  }

  bool ok = false;
  std::string k;       // the campus's namespace
  std::string errors;  // what failed, for the failure message

 private:
  bool step(const std::vector<std::string>& argv) { return run(argv, &errors); }
  // Namespace PREFIXs, its veth's end PREFIXs there and PREFIXsk a port of k's bridge.
  bool add_subnet(const std::string& s) {
    const std::string name = ns(s), end = prefix_ + s, port = prefix_ + s + "k";
    const std::string ip = net_ + std::to_string(s[0] - 'a' + 1);
    return step({kIp, "netns", "add", name}) && step({kIp, "-n", name, "link", "set", "lo", "up"}) &&
           step({kIp, "link", "add", end, "type", "veth", "peer", "name", port}) &&
           step({kIp, "link", "set", end, "netns", name}) && step({kIp, "link", "set", port, "netns", k}) &&
           step({kIp, "-n", name, "addr", "add", ip + "/24", "dev", end}) &&
           step({kIp, "-n", name, "link", "set", end, "up"}) &&
           step({kIp, "-n", k, "link", "set", port, "master", "br0", "up"});
  }

  std::string prefix_, net_;
};

// One subnet: its server, three agents and its NPS, all in its namespace.
struct Subnet {
  Subnet(CampusNet& net, Scratch& scratch, std::string name_) : s(scratch), name(std::move(name_)) {
    ns = net.ns(name);
    endpoint = net.endpoint(name);
    server = std::make_unique<Process>(
        CampusNet::in(ns, {bin("piranha"), "ts", "serve", "--bind", endpoint, "--insecure"}));
  }
  Scratch& s;
  std::string name, ns, endpoint;
  std::unique_ptr<Process> server;
  std::map<std::string, std::unique_ptr<Process>> agents;
  std::unique_ptr<Process> nps;

  // Agents NAME1..NAME3: always available, one piranha each at the agents' own priority, with
  // `extra` arguments (labels).
  void start_agents(const std::vector<std::string>& extra = {}) {
    for (int i = 1; i <= 3; ++i) {
      const std::string node = name + std::to_string(i);
      const auto argv = lending_agent_argv(s, endpoint, node, extra);
      agents[node] = std::make_unique<Process>(CampusNet::in(ns, argv));
    }
  }
  void start_nps(const std::vector<std::string>& lending) {
    std::vector<std::string> argv = {bin("piranha"), "nps", "run", "--server", endpoint, "--period", "1"};
    argv.insert(argv.end(), lending.begin(), lending.end());
    nps = std::make_unique<Process>(CampusNet::in(ns, argv));
  }
  // `spin --sleep` submitted here: `tasks` tasks of `task_ms` ms, with `require` (none if empty).
  std::unique_ptr<Process> submit(int tasks, int task_ms, const std::string& require = "") {
    std::vector<std::string> argv = {"/usr/bin/env", "PIRANHA_SERVER=" + endpoint, bin("piranha"), "submit"};
    if (!require.empty()) argv.insert(argv.end(), {"--require", require});
    argv.insert(argv.end(), {bin("spin"), "--tasks", std::to_string(tasks), "--task-ms",
                             std::to_string(task_ms), "--sleep"});
    return std::make_unique<Process>(CampusNet::in(ns, argv));
  }
  // Everything its processes said, for failure messages.
  std::string logs() const {
    std::string text =
        "--- " + name + "'s server\n" + server->err() + "--- its nps\n" + (nps ? nps->err() : "");
    for (const auto& [node, p] : agents) text += "--- " + node + "\n" + p->err();
    return text;
  }
};

// The whole campus, started: subnets a, b, c with their agents registered and their NPSs
// scheduling, and the campus `uni` deciding every second (loans leased for 3 s). A subnet's
// agents take the arguments `agent_args` has for it.
struct Campus {
  explicit Campus(const std::map<std::string, std::vector<std::string>>& agent_args = {}) {
    REQUIRE_MESSAGE(net.ok, "could not build the namespaces: ", net.errors);
    s.write("up.avail.csv",
            "# piranha availability trace v1\n# step_seconds: 60\n# length: "
            "100000\nnode,start,end\nup,0,100000\n");
    s.write("agent.yaml", "policy: FAIR\ncores: 1\nscheduler:\n  stale_seconds: 10\n");
    for (const char* n : {"a", "b", "c"}) subnets[n] = std::make_unique<Subnet>(net, s, n);
    for (auto& [n, sub] : subnets) {
      REQUIRE_MESSAGE(wait_until_serving(sub->endpoint, 30s), sub->server->err());
      const auto extra = agent_args.find(n);
      sub->start_agents(extra == agent_args.end() ? std::vector<std::string>{} : extra->second);
    }
    for (auto& [n, sub] : subnets) {
      ts::Client c(sub->endpoint);
      REQUIRE_MESSAGE(wait_until([&] { return sys::list_nodes(c).size() == 3; }, 60s), sub->logs());
    }
    a().start_nps({});
    b().start_nps({"--lend-to", "a", "--campus", "uni"});
    c().start_nps({"--lend-to", "a", "--campus", "uni"});
    for (auto& [n, sub] : subnets)
      REQUIRE_MESSAGE(sub->nps->wait_for_err("scheduling " + n + "1 " + n + "2 " + n + "3", 30s),
                      sub->logs());
    campus = std::make_unique<Process>(CampusNet::in(
        net.k, {bin("piranha"), "nps", "campus",
                s.write("campus.yaml",
                        "name: uni\nsubnets:\n  - {name: a, server: \"" + net.endpoint("a") +
                            "\"}\n  - {name: b, server: \"" + net.endpoint("b") +
                            "\", lends_to: [a]}\n  - {name: c, server: \"" + net.endpoint("c") +
                            "\", lends_to: [a]}\n"
                            "campus: {period: 1, congested: 3, relieved: 1, hold: 2, cooldown: 2}\n")}));
    campus->stop_with(SIGTERM);
  }
  Subnet& a() { return *subnets.at("a"); }
  Subnet& b() { return *subnets.at("b"); }
  Subnet& c() { return *subnets.at("c"); }
  std::string logs() const {
    std::string text = "--- campus\n" + campus->err();
    for (const auto& [n, sub] : subnets) text += sub->logs();
    return text;
  }

  // Declared first: removed last, after every process in it has been stopped.
  CampusNet net;
  Scratch s;
  std::map<std::string, std::unique_ptr<Subnet>> subnets;
  std::unique_ptr<Process> campus;
};

// Tasks each node completed of job `id`, as its feeder tallied them (none for a node that did none).
std::map<std::string, std::int64_t> tasks_by_node(ts::Client& c, std::int64_t id) {
  std::map<std::string, std::int64_t> out;
  for (const auto& w : sys::list_jobwork(c, id)) out[w.node] = w.tasks;
  return out;
}

std::int64_t total(const std::map<std::string, std::int64_t>& by_node) {
  std::int64_t n = 0;
  for (const auto& [node, tasks] : by_node) n += tasks;
  return n;
}

// Whether every node of subnet `sub` has done more than `than`'s count of tasks of the job.
bool all_worked(const std::map<std::string, std::int64_t>& by_node, const std::string& sub,
                const std::map<std::string, std::int64_t>& than = {}) {
  for (int i = 1; i <= 3; ++i) {
    const std::string node = sub + std::to_string(i);
    const auto it = by_node.find(node), before = than.find(node);
    if (it == by_node.end() || it->second <= (before == than.end() ? 0 : before->second)) return false;
  }
  return true;
}

bool skip_without_root() {
  if (::geteuid() == 0) return false;
  MESSAGE("skipped: network namespaces need root");
  return true;
}

}  // namespace

TEST_CASE("campus netns: a congested subnet's job also runs on the other two subnets' idle nodes") {
  if (skip_without_root()) return;
  Campus campus;
  double lent_s = 0;
  {
    INFO(campus.logs());
    ts::Client a(campus.a().endpoint);
    // 60 s of work: 20 s for a's three nodes alone.
    const auto submitted = Clock::now();
    auto job = campus.a().submit(600, 100);
    REQUIRE(wait_until(
        [&] {
          const auto t = tasks_by_node(a, 1);
          return all_worked(t, "b") && all_worked(t, "c");
        },
        60s));
    lent_s = ms_since(submitted) / 1000;
    REQUIRE(job->wait(120s) == 0);
    CHECK(contains(job->out(), "every task done once: 600 tasks"));
    const auto done = tasks_by_node(a, 1);
    CHECK(total(done) == 600);
    CHECK(all_worked(done, "a"));
  }
  MESSAGE("every node of b and c had done tasks of a's job ", lent_s, " s after it was submitted");
}

TEST_CASE("campus netns: a lender's own job takes its lent nodes back, the lent piranhas retreating first") {
  if (skip_without_root()) return;
  Campus campus;
  double back_s = 0;
  {
    INFO(campus.logs());
    // 120 s of work: a stays congested while b's job runs.
    auto job = campus.a().submit(1200, 100);
    for (auto& [node, agent] : campus.b().agents) {
      CAPTURE(node);
      REQUIRE(agent->wait_for_err("started 1 piranha of a's job 1", 60s));
    }
    // b's owner's job: 9 s of work for b's three nodes. b's NPS assigns it at its next tick (a
    // job's arrival is an event: at once), each lent piranha retreats and b's job starts there.
    const auto submitted = Clock::now();
    auto own = campus.b().submit(90, 100);
    const std::string retreated = "lent piranha of a's job 1 retreated", start = "started 1 piranha of job 1";
    REQUIRE(wait_until(
        [&] {
          for (auto& [node, agent] : campus.b().agents)
            if (!contains(agent->err(), start)) return false;
          return true;
        },
        30s));
    back_s = ms_since(submitted) / 1000;
    for (auto& [node, agent] : campus.b().agents) {
      CAPTURE(node);
      const std::string log = agent->err();
      REQUIRE(contains(log, retreated));
      CHECK(log.find(retreated) < log.find(start));
    }
    REQUIRE(own->wait(60s) == 0);
    CHECK(contains(own->out(), "every task done once: 90 tasks"));
    ts::Client b(campus.b().endpoint);
    CHECK(all_worked(tasks_by_node(b, 1), "b"));
    REQUIRE(job->wait(120s) == 0);
    CHECK(contains(job->out(), "every task done once: 1200 tasks"));
    ts::Client a(campus.a().endpoint);
    CHECK(total(tasks_by_node(a, 1)) == 1200);
  }
  MESSAGE("b's own job ran on all of b's nodes, the lent piranhas gone, ", back_s,
          " s after it was submitted");
}

TEST_CASE(
    "campus netns: the a-b link cut for 30 s loses a's piranhas on b, the job ends once, lending resumes") {
  if (skip_without_root()) return;
  Campus campus;
  double again_s = 0;
  {
    INFO(campus.logs());
    ts::Client a(campus.a().endpoint);
    // 480 s of work in 200 ms tasks: more than 30 s for the six nodes of a and c.
    auto job = campus.a().submit(2400, 200);
    REQUIRE(wait_until([&] { return all_worked(tasks_by_node(a, 1), "b"); }, 60s));
    REQUIRE(campus.net.cut_a_b(true));
    const auto cut = Clock::now();
    // a's server hears nothing more from b's piranhas: it ends their sessions after 5 s of
    // silence, and the tasks they held return to a's space with them; a and c go on. The times
    // are the fault's: a sample after those 5 s, another at its end.
    std::this_thread::sleep_until(cut + 10s);
    const auto early = tasks_by_node(a, 1);
    std::this_thread::sleep_until(cut + 30s);
    const auto late = tasks_by_node(a, 1);
    REQUIRE(campus.net.cut_a_b(false));
    const auto restored = Clock::now();
    for (int i = 1; i <= 3; ++i) {
      const std::string node = "b" + std::to_string(i);
      CAPTURE(node);
      CHECK(late.at(node) == early.at(node));
    }
    CHECK(all_worked(late, "a", early));
    CHECK(all_worked(late, "c", early));
    REQUIRE(job->running());
    // Restored, b's lent piranhas (their patience is longer than the cut) reach a's server again,
    // on new sessions, and do a's tasks again.
    CHECK(wait_until([&] { return all_worked(tasks_by_node(a, 1), "b", late); }, 60s));
    again_s = ms_since(restored) / 1000;
    REQUIRE(job->wait(180s) == 0);
    CHECK(contains(job->out(), "every task done once: 2400 tasks"));
    CHECK(total(tasks_by_node(a, 1)) == 2400);
  }
  MESSAGE("every node of b did a's tasks again ", again_s, " s after the link came back");
}

TEST_CASE("campus netns: a job requiring a label only c's nodes have runs on c's nodes only") {
  if (skip_without_root()) return;
  Campus campus({{"c", {"--label", "gpu"}}});
  INFO(campus.logs());
  ts::Client a(campus.a().endpoint);
  // No node of a has the label: the job is stranded there, and only c's nodes may borrow for it.
  auto job = campus.a().submit(120, 100, "label=gpu");
  REQUIRE(wait_until([&] { return all_worked(tasks_by_node(a, 1), "c"); }, 60s));
  REQUIRE(job->wait(120s) == 0);
  CHECK(contains(job->out(), "every task done once: 120 tasks"));
  const auto done = tasks_by_node(a, 1);
  CHECK(total(done) == 120);
  for (const auto& [node, tasks] : done) {
    INFO(node, " did ", tasks, " tasks");
    CHECK((tasks == 0 || node.rfind("c", 0) == 0));
  }
}
