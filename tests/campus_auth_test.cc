// The live campus between two pools that both run with --auth (docs/security.md, "Across pools"):
// each pool has its server with --key and --auth, its agents and its NPS with keys of their own,
// and the campus is listed in both auth files with the role campus. A job of pool a runs on b's
// lent node with the loan's key, which reaches job 1's space and records on a and nothing else,
// and is refused once the loan has ended.
#include <doctest/doctest.h>
#include <signal.h>

#include <filesystem>
#include <map>
#include <memory>

#include "harness.h"
#include "piranha/access/sealed_key.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/tuplespace/curve.h"

using namespace piranha::it;
namespace sys = piranha::sys;

namespace {

// Key pairs by name, all in one scratch directory (NAME.key, NAME.pub), made by `piranha keys new`.
struct Keys {
  explicit Keys(Scratch& s) : s(s) {
    ::unsetenv(ts::kKeyEnv);
    ::unsetenv(ts::kServerKeyEnv);
  }
  Scratch& s;
  std::string make(const std::string& name) {
    Process p({bin("piranha"), "keys", "new", s.dir + "/" + name});
    if (p.wait() != 0) throw std::runtime_error("piranha keys new " + name + ": " + p.err());
    return name;
  }
  std::string key(const std::string& name) const { return s.dir + "/" + name + ".key"; }
  std::string pub(const std::string& name) const { return s.dir + "/" + name + ".pub"; }
  ts::CurveKeyPair pair(const std::string& name) const { return ts::load_secret_key(key(name), "test"); }
};

// One pool with --auth: its server (P-server), an admin (P-admin), its NPS (P-nps, scheduler),
// its agents (agent keys named as their nodes), and the campus uni (role campus); `extra` are
// more auth file lines.
struct AuthPool {
  AuthPool(Keys& k, const std::string& name, const std::vector<std::string>& nodes, const std::string& extra)
      : k(k),
        name(name),
        serve_flags(flags(k, name, nodes, extra)),
        server(serve_flags, as(k, name, name + "-admin")) {}
  Keys& k;
  std::string name;
  std::vector<std::string> serve_flags;  // made (with the keys) before the server starts
  ServerProcess server;
  std::map<std::string, std::unique_ptr<Process>> agents;
  std::unique_ptr<Process> nps;

  static std::vector<std::string> flags(Keys& k, const std::string& name,
                                        const std::vector<std::string>& nodes, const std::string& extra) {
    std::string auth = "clients:\n";
    for (const std::string& n : {name + "-server", name + "-admin", name + "-nps"}) k.make(n);
    auth += "  - {name: admin, key: " + name + "-admin.pub, role: admin}\n";
    auth += "  - {name: nps, key: " + name + "-nps.pub, role: scheduler}\n";
    for (const auto& n : nodes) auth += "  - {name: " + k.make(n) + ", key: " + n + ".pub, role: agent}\n";
    auth += "  - {name: uni, key: uni.pub, role: campus}\n" + extra;
    return {"--key", k.key(name + "-server"), "--auth", k.s.write(name + "-auth.yaml", auth)};
  }
  static ts::ClientOptions as(const Keys& k, const std::string& pool, const std::string& who,
                              ts::ClientOptions o = quick_client_options()) {
    const ts::CurveKeyPair mine = k.pair(who);
    o.curve = ts::CurveClientKeys{mine.public_key, mine.secret_key,
                                  ts::load_public_key(k.pub(pool + "-server"), "test")};
    o.curve_from_environment = false;
    return o;
  }
  ts::Client client(const std::string& who) { return ts::Client(server.endpoint(), as(k, name, who, {})); }
  std::vector<std::string> keys_of(const std::string& who) const {
    return {"--key", k.key(who), "--server-key", k.pub(name + "-server")};
  }

  void add_agent(const std::string& node) {
    const auto argv = lending_agent_argv(k.s, server.endpoint(), node, keys_of(node));
    agents[node] = std::make_unique<Process>(argv);
    agents[node]->stop_with(SIGTERM);  // so that it removes its key files
  }
  void start_nps(std::vector<std::string> extra) {
    std::vector<std::string> argv = {bin("piranha"),    "nps",      "run", "--server",
                                     server.endpoint(), "--period", "1"};
    for (const auto& a : keys_of(name + "-nps")) argv.push_back(a);
    argv.insert(argv.end(), extra.begin(), extra.end());
    nps = std::make_unique<Process>(argv);
  }
};

std::map<std::string, std::int64_t> tasks_by_node(ts::Client& c, std::int64_t id) {
  std::map<std::string, std::int64_t> out;
  for (const auto& w : sys::list_jobwork(c, id)) out[w.node] = w.tasks;
  return out;
}

// Whether a client with `options` is refused anything at all by the server at `endpoint`: the
// handshake or the request.
bool refused(const std::string& endpoint, const ts::ClientOptions& options,
             const std::function<void(ts::Client&)>& request) {
  try {
    ts::Client c(endpoint, options);
    request(c);
    return false;
  } catch (const std::exception&) {
    return true;
  }
}

}  // namespace

TEST_CASE(
    "campus auth: a lent node runs a's job with the loan's key, which reaches that job only and ends with "
    "the loan") {
  Scratch s;
  Keys k(s);
  k.make("uni");
  k.make("alice");
  AuthPool a(k, "a", {"a1"}, "  - {name: alice, key: alice.pub, role: job}\n");
  AuthPool b(k, "b", {"b1"}, "");
  a.add_agent("a1");
  b.add_agent("b1");
  auto ca = a.client("a-admin");
  auto cb = b.client("b-admin");
  REQUIRE(
      wait_until([&] { return sys::list_nodes(ca).size() == 1 && sys::list_nodes(cb).size() == 1; }, 60s));
  // b1 publishes its agent key for the campus to seal loans' keys to.
  REQUIRE(wait_until([&] { return cb.rd(sys::kSpace, sys::agentkey_template("b1"), 0ms).has_value(); }, 30s));
  a.start_nps({});
  b.start_nps({"--lend-to", "a", "--campus", "uni"});
  REQUIRE(a.nps->wait_for_err("scheduling a1"));
  REQUIRE(b.nps->wait_for_err("scheduling b1"));
  Process campus({"/usr/bin/env", "PIRANHA_KEY=" + k.key("uni"), bin("piranha"), "nps", "campus",
                  s.write("campus.yaml",
                          "name: uni\nsubnets:\n"
                          "  - {name: a, server: \"" +
                              a.server.endpoint() + "\", server_key: " + k.pub("a-server") +
                              "}\n"
                              "  - {name: b, server: \"" +
                              b.server.endpoint() + "\", server_key: " + k.pub("b-server") +
                              ", lends_to: [a]}\n"
                              "campus: {period: 1, congested: 3, relieved: 1, hold: 2, cooldown: 2}\n")});
  campus.stop_with(SIGTERM);
  // 20 s of work in 50 ms tasks for a's one node.
  std::vector<std::string> submit{"/usr/bin/env", "PIRANHA_SERVER=" + a.server.endpoint(), bin("piranha"),
                                  "submit"};
  for (const auto& x : a.keys_of("alice")) submit.push_back(x);
  submit.push_back(bin("spin"));
  for (const char* x : {"--tasks", "400", "--task-ms", "50"}) submit.push_back(x);
  Process job(submit);
  INFO("campus: " << campus.err());
  INFO("b's nps: " << b.nps->err());
  INFO("b1: " << b.agents["b1"]->err());
  INFO("a's server: " << a.server.log());
  REQUIRE(campus.wait_for_err("to a's job 1", 60s));
  CHECK(b.agents["b1"]->wait_for_err("started 1 piranha of a's job 1", 60s));
  CHECK(contains(b.agents["b1"]->err(), "with the loan's key"));
  CHECK(wait_until([&] { return tasks_by_node(ca, 1)["b1"] > 0; }, 30s));

  // The loan in b's space holds the key sealed to b1's agent, and a's server key: opened with b1's
  // key pair (as b1's agent does), it is a credential on a.
  auto loan_tuple = cb.rd(sys::kSpace, sys::loan_template("uni", "a", 1), 0ms);
  REQUIRE(loan_tuple);
  const auto loan_key = sys::LoanKey::from_text(sys::CampusLoan::from_tuple(*loan_tuple)->key);
  REQUIRE(loan_key);
  CHECK(loan_key->server_key == ts::load_public_key(k.pub("a-server"), "test"));
  REQUIRE(loan_key->sealed.count("b1") == 1);
  CHECK_FALSE(piranha::open_secret_key(k.pair("a1"), loan_key->sealed.at("b1")));  // b1's only
  const auto secret = piranha::open_secret_key(k.pair("b1"), loan_key->sealed.at("b1"));
  REQUIRE(secret);
  ts::ClientOptions lent = quick_client_options();
  lent.curve = ts::CurveClientKeys{ts::curve_public_key_of(*secret), *secret, loan_key->server_key};
  lent.curve_from_environment = false;
  // It reaches job 1's space and records on a, and nothing else there.
  {
    ts::Client c(a.server.endpoint(), lent);
    CHECK_NOTHROW(c.rd_many("job.1", ts::Template({ts::Field::formal(ts::Type::String)}), 1));
    CHECK(c.rd(sys::kSpace, sys::job_template(1), 0ms).has_value());
    CHECK_THROWS(c.rd_many("job.2", ts::Template({ts::Field::formal(ts::Type::String)}), 1));
    CHECK_THROWS(c.rd_many(sys::kSpace, sys::node_template(), 10));
    CHECK_THROWS(c.rd_many(sys::kSpace, sys::loan_template(), 10));
    CHECK_THROWS(c.out(sys::kSpace, sys::Lent{"a1", "b", 1, 1}.to_tuple()));
    CHECK_THROWS(c.in(sys::kSpace, sys::job_template(1), 0ms));
  }
  CHECK(contains(a.server.log(), "key \"uni/job.1\" (role piranha) may not read job 2's space"));
  // Nor does the key reach b.
  CHECK(refused(
      b.server.endpoint(),
      [&] {
        ts::ClientOptions o = lent;
        o.curve.server_key = ts::load_public_key(k.pub("b-server"), "test");
        return o;
      }(),
      [](ts::Client& c) { c.rd_many(sys::kSpace, sys::node_template(), 1); }));

  // a's job finishes, every task done once, some of them on b1.
  REQUIRE(job.wait(120s) == 0);
  CHECK(contains(job.out(), "every task done once"));
  auto done = tasks_by_node(ca, 1);
  CHECK(done["a1"] + done["b1"] == 400);
  CHECK(done["b1"] > 0);
  // The loan ends with the job, and its key with it: refused at the handshake.
  CHECK(campus.wait_for_err("no loans", 60s));
  CHECK(wait_until([&] { return ca.rd_many(sys::kSpace, sys::jobkey_template(1), 10).empty(); }, 30s));
  CHECK(refused(a.server.endpoint(), lent, [](ts::Client& c) {
    c.rd_many("job.1", ts::Template({ts::Field::formal(ts::Type::String)}), 1);
  }));
  campus.signal(SIGTERM);
  CHECK(campus.wait() == 0);
  CHECK(cb.rd_many(sys::kSpace, sys::loan_template(), 10).empty());
  // Nothing the campus, the agents or the NPSs did was refused.
  for (const std::string& log : {a.server.log(), b.server.log()}) {
    CHECK_FALSE(contains(log, "(role campus) may not"));
    CHECK_FALSE(contains(log, "(role agent) may not"));
    CHECK_FALSE(contains(log, "(role scheduler) may not"));
  }
}
