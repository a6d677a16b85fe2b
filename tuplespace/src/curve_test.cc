#include "piranha/tuplespace/curve.h"

#include <doctest/doctest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <mutex>
#include <thread>

#include "error_of_test.h"
#include "piranha/tuplespace/client.h"
#include "piranha/tuplespace/fiber_client.h"
#include "piranha/tuplespace/server.h"

using namespace piranha::ts;
using piranha::ts::testing::error_of;
using namespace std::chrono_literals;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/piranha-curve-test-XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  std::string write(const std::string& name, const std::string& text, mode_t mode = 0600) const {
    std::string p = path + "/" + name;
    std::ofstream(p) << text;
    ::chmod(p.c_str(), mode);
    return p;
  }
};

bool mentions(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A server on a loopback port with its event loop on a thread.
class RunningServer {
 public:
  explicit RunningServer(ServerOptions o) : server_(on_loopback(std::move(o))) {
    thread_ = std::thread([this] { server_.run(); });
  }
  ~RunningServer() {
    server_.stop();
    thread_.join();
  }
  const std::string& endpoint() const { return server_.endpoints().front(); }
  Server& server() { return server_; }

 private:
  static ServerOptions on_loopback(ServerOptions o) {
    o.bind = {"tcp://127.0.0.1:*"};
    return o;
  }
  Server server_;
  std::thread thread_;
};

// Lets identity "reader" only read, and records who asked for what.
struct ReadOnlyFor : AccessPolicy {
  std::mutex mu;
  std::vector<std::string> asked;
  bool was_asked(const std::string& what) {
    std::lock_guard lock(mu);
    return std::find(asked.begin(), asked.end(), what) != asked.end();
  }
  AccessVerdict decide(const AccessQuery& q, const Store&) override {
    {
      std::lock_guard lock(mu);
      asked.push_back(std::string(q.identity) + " " + std::string(op_name(q.request.op)));
    }
    if (q.identity == "reader" && q.request.op != Op::Rd && q.request.op != Op::RdMany &&
        q.request.op != Op::Stats)
      return AccessVerdict::refuse("reader may only read");
    AccessVerdict v;
    if (q.request.op == Op::Out)
      v.also_write.emplace_back("audit", image_of(Tuple::of(std::string("wrote"), std::string(q.identity))));
    return v;
  }
};

ClientOptions keyed(const CurveKeyPair& mine, const std::string& server_public) {
  ClientOptions o;
  o.connect_timeout = 3s;
  o.curve = CurveClientKeys{mine.public_key, mine.secret_key, server_public};
  o.curve_from_environment = false;
  return o;
}

}  // namespace

TEST_CASE("a new key pair is two keys in Z85 text, and the public one derives from the secret one") {
  REQUIRE(curve_available());
  CurveKeyPair k = new_curve_key_pair();
  CHECK(is_z85_key(k.public_key));
  CHECK(is_z85_key(k.secret_key));
  CHECK(k.public_key != k.secret_key);
  CHECK(curve_public_key_of(k.secret_key) == k.public_key);
  CHECK_FALSE(is_z85_key("short"));
  CHECK_FALSE(is_z85_key(std::string(40, ' ')));
}

TEST_CASE("key files: the secret one is 0600, both read back, and neither is overwritten") {
  TempDir dir;
  CurveKeyPair k = new_curve_key_pair();
  std::string base = dir.path + "/alice";
  write_key_files(base, k, "piranha key alice");
  struct stat st {};
  REQUIRE(::stat((base + ".key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  CurveKeyPair back = load_secret_key(base + ".key", "--key");
  CHECK(back.public_key == k.public_key);
  CHECK(back.secret_key == k.secret_key);
  CHECK(load_public_key(base + ".pub", "--server-key") == k.public_key);
  CHECK(load_public_key(base + ".key", "--server-key") == k.public_key);
  CHECK(mentions(error_of([&] { write_key_files(base, new_curve_key_pair(), "again"); }), "exists already"));
  CHECK(load_secret_key(base + ".key", "--key").secret_key == k.secret_key);  // unchanged
}

TEST_CASE("a key may be given as its Z85 text instead of a file") {
  CurveKeyPair k = new_curve_key_pair();
  CHECK(load_secret_key(k.secret_key, "PIRANHA_KEY").public_key == k.public_key);
  CHECK(load_public_key(k.public_key, "PIRANHA_SERVER_KEY") == k.public_key);
}

TEST_CASE("bad key files are refused with the file, the line and the problem") {
  TempDir dir;
  CurveKeyPair k = new_curve_key_pair();
  std::string open_key = dir.write("open.key", "secret-key: \"" + k.secret_key + "\"\n", 0644);
  CHECK(mentions(error_of([&] { load_secret_key(open_key, "--key"); }), "chmod 600"));
  std::string typo = dir.write("typo.key", "# comment\n\nsecert-key: \"" + k.secret_key + "\"\n");
  CHECK(error_of([&] { load_secret_key(typo, "--key"); }) ==
        typo + ":3: unknown entry 'secert-key' (expected public-key or secret-key)");
  std::string short_key = dir.write("short.pub", "public-key: abc\n", 0644);
  CHECK(error_of([&] { load_public_key(short_key, "--server-key"); }) ==
        short_key + ":1: public-key is not a key in Z85 text (40 characters)");
  std::string pub_only = dir.write("only.pub", "public-key: \"" + k.public_key + "\"\n");
  CHECK(mentions(error_of([&] { load_secret_key(pub_only, "--key"); }), "no secret-key in it"));
  std::string other = new_curve_key_pair().public_key;
  std::string mismatch =
      dir.write("mismatch.key", "public-key: \"" + other + "\"\nsecret-key: \"" + k.secret_key + "\"\n");
  CHECK(error_of([&] { load_secret_key(mismatch, "--key"); }) ==
        mismatch + ":1: public-key does not belong to the secret-key");
  CHECK(mentions(error_of([&] { load_public_key(dir.path + "/missing.pub", "--server-key"); }),
                 "--server-key: no such key file"));
}

TEST_CASE("the environment gives a client both keys or neither") {
  CurveKeyPair mine = new_curve_key_pair(), server = new_curve_key_pair();
  ::unsetenv(kKeyEnv);
  ::unsetenv(kServerKeyEnv);
  CHECK_FALSE(curve_keys_from_environment().has_value());
  ::setenv(kKeyEnv, mine.secret_key.c_str(), 1);
  CHECK(mentions(error_of([] { curve_keys_from_environment(); }), "PIRANHA_SERVER_KEY is not"));
  ::setenv(kServerKeyEnv, server.public_key.c_str(), 1);
  auto keys = curve_keys_from_environment();
  REQUIRE(keys.has_value());
  CHECK(keys->public_key == mine.public_key);
  CHECK(keys->server_key == server.public_key);
  ::unsetenv(kKeyEnv);
  ::unsetenv(kServerKeyEnv);
}

TEST_CASE("a CURVE server admits listed keys under their names, and refuses the rest with a clear error") {
  CurveKeyPair server_keys = new_curve_key_pair(), alice = new_curve_key_pair(),
               reader = new_curve_key_pair(), stranger = new_curve_key_pair();
  auto policy = std::make_shared<ReadOnlyFor>();
  ServerOptions o;
  o.curve_secret_key = server_keys.secret_key;
  o.clients = {{"alice", alice.public_key}, {"reader", reader.public_key}};
  o.access = policy;
  RunningServer server(o);

  SUBCASE("a listed client works, and the policy hears its name") {
    Client c(server.endpoint(), keyed(alice, server_keys.public_key));
    c.space("s").out("t", 1);
    CHECK(c.space("s").in("t", formal<std::int64_t>) == Tuple::of(std::string("t"), std::int64_t{1}));
    CHECK(c.space("audit").inp("wrote", std::string("alice")).has_value());  // the policy's also_write
    CHECK(policy->was_asked("alice out"));
    FiberClient f(server.endpoint(), keyed(alice, server_keys.public_key));
    CHECK(f.stats().size() >= 1);
  }
  SUBCASE("a request the policy refuses fails with not_permitted and changes nothing") {
    Client c(server.endpoint(), keyed(reader, server_keys.public_key));
    CHECK(c.stats("s") == std::nullopt);
    try {
      c.out_many("s", {Tuple::of(std::string("t"), 1)});
      FAIL("no error");
    } catch (const TupleSpaceError& e) {
      CHECK(e.code() == Code::NotPermitted);
      CHECK(mentions(e.what(), "reader may only read"));
    }
    Client a(server.endpoint(), keyed(alice, server_keys.public_key));
    CHECK(a.stats("s") == std::nullopt);
    CHECK(a.stats("audit") == std::nullopt);
  }
  SUBCASE("an unlisted key is refused at once") {
    // The refusal ends the call, not the connect timeout: with a timeout of
    // a minute, half of it is a bound no loaded machine's handshake reaches.
    ClientOptions o = keyed(stranger, server_keys.public_key);
    o.connect_timeout = 60s;
    auto start = std::chrono::steady_clock::now();
    std::string why = error_of([&] { Client c(server.endpoint(), o); });
    CHECK(mentions(why, "auth_failed: the server at " + server.endpoint() + " refused this client's key"));
    CHECK(std::chrono::steady_clock::now() - start < o.connect_timeout / 2);
    CHECK(
        mentions(error_of([&] { FiberClient c(server.endpoint(), keyed(stranger, server_keys.public_key)); }),
                 "auth_failed"));
  }
  SUBCASE("a client without keys is told the server wants them") {
    ClientOptions plain;
    plain.curve_from_environment = false;
    std::string why = error_of([&] { Client c(server.endpoint(), plain); });
    // Whichever end notices first closes: told at once, or after a second failed handshake.
    CHECK(mentions(why, "auth_failed: the server at " + server.endpoint()));
    CHECK(mentions(why, "requires CURVE authentication"));
  }
  SUBCASE("a client with a wrong server key is told so") {
    std::string why = error_of([&] { Client c(server.endpoint(), keyed(alice, stranger.public_key)); });
    CHECK(mentions(why, "auth_failed"));
    CHECK(mentions(why, "server's public key"));
  }
}

TEST_CASE("a client with keys is told when the server has none") {
  ServerOptions o;
  RunningServer server(o);
  CurveKeyPair mine = new_curve_key_pair(), other = new_curve_key_pair();
  std::string why = error_of([&] { Client c(server.endpoint(), keyed(mine, other.public_key)); });
  CHECK(mentions(why, "auth_failed"));
  CHECK((mentions(why, "does not use CURVE") || mentions(why, "was the server started with --key?")));
}

TEST_CASE("a CURVE server checks its key list and binds no inproc endpoint") {
  CurveKeyPair s = new_curve_key_pair(), a = new_curve_key_pair();
  ServerOptions o;
  o.bind = {"tcp://127.0.0.1:*"};
  o.curve_secret_key = s.secret_key;
  o.clients = {{"a", a.public_key}, {"b", a.public_key}};
  CHECK(mentions(error_of([&] { Server x(o); }), "the same key"));
  o.clients = {{"a", "not a key"}};
  CHECK(mentions(error_of([&] { Server x(o); }), "the key of client \"a\""));
  o.clients = {{"a", a.public_key}};
  o.bind = {"inproc://nope"};
  CHECK(mentions(error_of([&] { Server x(o); }), "no inproc:// endpoints"));
}
