#include "piranha/access/auth_config.h"

#include <doctest/doctest.h>

#include "piranha/testing/temp_dir.h"
#include "piranha/tuplespace/curve.h"

using namespace piranha;
namespace ts = piranha::ts;

namespace {

std::string error_of(const std::string& text, const std::string& name) {
  try {
    parse_auth_config(text, name);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("an auth file lists names, keys, roles and nodes") {
  testing::TempDir dir;
  ts::CurveKeyPair ws01 = ts::new_curve_key_pair(), alice = ts::new_curve_key_pair(),
                   pat = ts::new_curve_key_pair();
  ts::write_key_files(dir / "ws01", ws01, "ws01");
  ts::write_key_files(dir / "alice", alice, "alice");
  std::string text =
      "clients:\n"
      "  - {name: ws01, key: ws01.pub, role: agent}\n"
      "  - name: alice\n"
      "    key: " +
      dir / "alice.pub" +
      "\n"
      "    role: job\n"
      "    spaces: [\"alice.*\", scratch]\n"
      "  - {name: pat, key: '" +
      pat.public_key + "', role: owner, node: ws01}\n";
  AuthConfig c = parse_auth_config(text, dir / "auth.yaml");
  REQUIRE(c.clients.size() == 3);
  CHECK(c.clients[0].principal.name == "ws01");
  CHECK(c.clients[0].principal.role == rights::Role::Agent);
  CHECK(c.clients[0].principal.node == "ws01");
  CHECK(c.clients[0].public_key == ws01.public_key);
  CHECK(c.clients[1].principal.role == rights::Role::Job);
  CHECK(c.clients[1].principal.node.empty());
  CHECK(c.clients[1].principal.spaces == std::vector<std::string>{"alice.*", "scratch"});
  CHECK(c.clients[1].public_key == alice.public_key);
  CHECK(c.clients[2].principal.node == "ws01");
  CHECK(c.clients[2].public_key == pat.public_key);
}

TEST_CASE("a bad auth file is refused with its line and the problem") {
  const std::string k = "'" + ts::new_curve_key_pair().public_key + "'";
  const std::string k2 = "'" + ts::new_curve_key_pair().public_key + "'";
  CHECK(error_of("", "auth.yaml") == "auth.yaml: empty: expected 'clients:', a list of admitted keys");
  CHECK(error_of("client: []\n", "auth.yaml") ==
        "auth.yaml:1: unknown key 'client' in the auth file (expected one of: clients)");
  CHECK(error_of("clients:\n  - {name: a, key: " + k + ", role: admin, nodes: x}\n", "auth.yaml") ==
        "auth.yaml:2: unknown key 'nodes' in clients[0] (expected one of: name, key, role, node, spaces)");
  CHECK(error_of("clients:\n  - {name: a, key: " + k + "}\n", "auth.yaml") ==
        "auth.yaml:2: clients[0].role is missing");
  CHECK(
      error_of("clients:\n  - {name: a, key: " + k + ", role: root}\n", "auth.yaml") ==
      "auth.yaml:2: clients[0].role must be one of: admin, scheduler, agent, job, owner, campus, got 'root'");
  CHECK(error_of("clients:\n  - {name: a, key: " + k + ", role: job, node: ws01}\n", "auth.yaml") ==
        "auth.yaml:2: clients[0].node is for agents and owners only, not a job");
  CHECK(error_of(
            "clients:\n  - {name: a, key: " + k + ", role: job}\n  - {name: a, key: " + k2 + ", role: job}\n",
            "auth.yaml") == "auth.yaml:3: clients[1]: the name 'a' is taken already (line 2)");
  CHECK(error_of(
            "clients:\n  - {name: a, key: " + k + ", role: job}\n  - {name: b, key: " + k + ", role: job}\n",
            "auth.yaml") == "auth.yaml:3: clients[1]: the same key is listed already (line 2)");
  CHECK(error_of("clients:\n  - {name: a, key: nowhere.pub, role: job}\n", "/etc/p/auth.yaml") ==
        "/etc/p/auth.yaml:2: clients[0].key: no such key file '/etc/p/nowhere.pub' (nor is it a key in Z85 "
        "text)");
  CHECK(error_of("clients:\n  - {name: a, key: " + k + ", role: job, spaces: ['*']}\n", "auth.yaml") ==
        "auth.yaml:2: clients[0].spaces: '*' may end in '*' (a prefix) but have no other '*', nor be '*' "
        "alone");
  CHECK(error_of("clients: {a: 1}\n", "auth.yaml") ==
        "auth.yaml:1: clients must be a list of {name, key, role} entries");
}

TEST_CASE("an empty client list admits nobody") {
  CHECK(parse_auth_config("clients: []\n", "auth.yaml").clients.empty());
}
