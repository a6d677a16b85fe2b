// A server started with --key and --auth, and the keys of its clients, for
// the authentication tests: every key is made by `piranha keys new`, and the
// auth file lists all of them but "stranger".
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness.h"
#include "piranha/tuplespace/curve.h"

namespace piranha::it {

class SecuredPool {
 public:
  SecuredPool()
      : auth_(make_keys(s_)),
        server_({"--key", key("server"), "--auth", auth_}, as("admin", quick_client_options())) {}

  const std::string& endpoint() const { return server_.endpoint(); }
  std::string log() const { return server_.log(); }
  Scratch& scratch() { return s_; }

  std::string key(const std::string& name) const { return s_.dir + "/" + name + ".key"; }
  std::string pub(const std::string& name) const { return s_.dir + "/" + name + ".pub"; }

  // Client options with `name`'s keys (never the environment's).
  ts::ClientOptions as(const std::string& name, ts::ClientOptions o = {}) const {
    ts::CurveKeyPair mine = ts::load_secret_key(key(name), "test");
    o.curve =
        ts::CurveClientKeys{mine.public_key, mine.secret_key, ts::load_public_key(pub("server"), "test")};
    o.curve_from_environment = false;
    return o;
  }

  // `piranha WORDS... --server S --key NAME.key --server-key server.pub TAIL...`
  std::vector<std::string> cli(const std::string& name, std::vector<std::string> words,
                               std::vector<std::string> tail = {}) const {
    std::vector<std::string> argv = {bin("piranha")};
    argv.insert(argv.end(), words.begin(), words.end());
    for (const auto& a : {std::string("--server"), endpoint(), std::string("--key"), key(name),
                          std::string("--server-key"), pub("server")})
      argv.push_back(a);
    argv.insert(argv.end(), tail.begin(), tail.end());
    return argv;
  }

 private:
  static std::string make_keys(Scratch& s) {
    // Nothing of the test runner's own keys reaches these clients.
    ::unsetenv(ts::kKeyEnv);
    ::unsetenv(ts::kServerKeyEnv);
    for (const char* name : {"server", "admin", "nps", "ws01", "ws02", "alice", "bob", "stranger"}) {
      Process p({bin("piranha"), "keys", "new", s.dir + "/" + name});
      if (p.wait() != 0) throw std::runtime_error("piranha keys new " + std::string(name) + ": " + p.err());
    }
    return s.write("auth.yaml",
                   "clients:\n"
                   "  - {name: admin, key: admin.pub, role: admin}\n"
                   "  - {name: nps, key: nps.pub, role: scheduler}\n"
                   "  - {name: ws01, key: ws01.pub, role: agent}\n"
                   "  - {name: ws02, key: ws02.pub, role: agent}\n"
                   "  - {name: alice, key: alice.pub, role: job}\n"
                   "  - {name: bob, key: bob.pub, role: job}\n");
  }

  Scratch s_;
  std::string auth_;
  ServerProcess server_;
};

}  // namespace piranha::it
