// Authentication with real processes: a server started with --key and
// --auth refuses clients without a key, with a key it does not list, and
// requests a listed key's role does not allow, each with a clear error on
// the client's side and nothing changed on the server. docs/security.md.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <zmq.hpp>

#include "harness.h"
#include "piranha/runtime/sysspace.h"
#include "secured_pool.h"

using namespace piranha::it;
using piranha::Clock;
namespace sys = piranha::sys;

namespace {

// The code of the TupleSpaceError `f` throws; "(none)" when it throws none.
std::string error_code(const std::function<void()>& f) {
  try {
    f();
  } catch (const ts::TupleSpaceError& e) {
    return std::string(ts::code_to_wire(e.code()));
  }
  return "(none)";
}

// Registers a job as `piranha submit` does, as the client's owner; its id.
std::int64_t register_job(ts::Client& c) {
  sys::JobRecord job{sys::next_job_id(c), "sleepy_job", "", sys::wall_now(), sys::JobState::Queued};
  job.space = "job." + std::to_string(job.id);
  c.out(sys::kSpace, sys::JobLaunch{job.id, bin("sleepy_job"), {"1", "1"}, "/"}.to_tuple());
  c.out(sys::kSpace, job.to_tuple());
  c.flush();
  return job.id;
}

sys::JobState state_of(ts::Client& c, std::int64_t id) {
  auto t = c.rd(sys::kSpace, sys::job_template(id), 2s);
  REQUIRE(t);
  return sys::JobRecord::from_tuple(*t)->state;
}

}  // namespace

TEST_CASE("auth: a client without a key is refused at once, told why, and changes nothing") {
  SecuredPool pool;
  auto started = Clock::now();
  Process jobs({bin("piranha"), "jobs", "--server", pool.endpoint()});
  CHECK(jobs.wait() == 1);
  CHECK(ms_since(started) < 5000);  // not the connect timeout's retries
  CHECK(contains(jobs.err(), "piranha jobs: auth_failed: the server at " + pool.endpoint()));
  CHECK(contains(jobs.err(), "requires CURVE authentication"));
  CHECK(contains(jobs.err(),
                 "give this client its key with --key and --server-key, or PIRANHA_KEY and "
                 "PIRANHA_SERVER_KEY"));
  Process block({bin("piranha"), "owner", "block", "ws01", "--server", pool.endpoint()});
  CHECK(block.wait() == 1);
  CHECK(contains(block.err(), "auth_failed"));

  ts::ClientOptions plain = quick_client_options();
  plain.connect_timeout = 5s;
  plain.curve_from_environment = false;
  CHECK(error_code([&] { ts::Client c(pool.endpoint(), plain); }) == "auth_failed");

  ts::Client admin(pool.endpoint(), pool.as("admin"));
  CHECK(admin.stats().empty());  // no space was made: nothing reached the store
  // Whichever end notices the missing key first says so; the other sees a failed handshake.
  CHECK(wait_until([&] {
    return contains(pool.log(), "refused a client without a CURVE key") ||
           contains(pool.log(), "a client's handshake failed (a client without a CURVE key");
  }));
}

TEST_CASE("auth: a key the auth file does not list is refused, and the refusal is logged with the key") {
  SecuredPool pool;
  Process jobs(pool.cli("stranger", {"jobs"}));
  CHECK(jobs.wait() == 1);
  CHECK(contains(jobs.err(), "auth_failed: the server at " + pool.endpoint() +
                                 " refused this client's key (not listed in its auth file?)"));
  CHECK(error_code([&] { ts::Client c(pool.endpoint(), pool.as("stranger")); }) == "auth_failed");
  std::string stranger = piranha::ts::load_public_key(pool.pub("stranger"), "test");
  CHECK(wait_until([&] {
    return contains(pool.log(), "refused a client at 127.0.0.1: its key " + stranger + " is not listed");
  }));
  ts::Client admin(pool.endpoint(), pool.as("admin"));
  CHECK(admin.stats().empty());

  // A client given the wrong server key is told to check it.
  Process wrong({bin("piranha"), "jobs", "--server", pool.endpoint(), "--key", pool.key("alice"),
                 "--server-key", pool.pub("admin")});
  CHECK(wrong.wait() == 1);
  CHECK(
      contains(wrong.err(), "is the server's public key (--server-key or PIRANHA_SERVER_KEY) the right one"));
}

TEST_CASE("auth: a known key of the wrong role is refused per request, and nothing changes") {
  SecuredPool pool;
  ts::Client admin(pool.endpoint(), pool.as("admin"));
  ts::Client alice(pool.endpoint(), pool.as("alice"));
  std::int64_t id = register_job(alice);
  // The server wrote down who took the id.
  auto owner = admin.rd(sys::kSpace, sys::jobowner_template(id), 0ms);
  REQUIRE(owner);
  CHECK(sys::JobOwner::from_tuple(*owner)->name == "alice");

  SUBCASE("a job cannot cancel another's job") {
    Process cancel(pool.cli("bob", {"cancel", std::to_string(id)}));
    CHECK(cancel.wait() == 1);
    INFO(cancel.err());
    CHECK(contains(cancel.err(),
                   "refused: key \"bob\" (role job) may not take job " + std::to_string(id) + "'s record"));
    CHECK(contains(cancel.err(),
                   "job " + std::to_string(id) + " belongs to key \"alice\"; that needs its key"));
    CHECK_FALSE(contains(cancel.err(), "not_permitted"));  // the wire's word is not for people
    CHECK(state_of(admin, id) == sys::JobState::Queued);
    ts::Client bob(pool.endpoint(), pool.as("bob"));
    CHECK(error_code([&] { sys::set_job_state(bob, id, sys::JobState::Cancelled); }) == "not_permitted");
    CHECK(error_code([&] { bob.out_many("job." + std::to_string(id), {ts::Tuple::of("task", 1)}); }) ==
          "not_permitted");
    CHECK(error_code([&] { bob.remove("job." + std::to_string(id)); }) == "not_permitted");
    CHECK(state_of(admin, id) == sys::JobState::Queued);
    CHECK(stats_of(admin, "job." + std::to_string(id)).tuples == 0);

    Process own(pool.cli("alice", {"cancel", std::to_string(id)}));
    CHECK(own.wait() == 0);
    CHECK(state_of(admin, id) == sys::JobState::Cancelled);
  }
  SUBCASE("a job key cannot block a node, and is told in words which role would") {
    Process block(pool.cli("alice", {"owner", "block", "ws01", "--for", "1h"}));
    CHECK(block.wait() == 1);
    INFO(block.err());
    // One line, in words: no tuple, no wire code, no "(posted earlier)".
    CHECK(block.err() == "piranha owner block: the tuple-space server at " + pool.endpoint() +
                             " refused: key \"alice\" (role job) may not write an owner block on ws01: that "
                             "needs the owner role for ws01 or admin (docs/security.md)\n");
    CHECK(admin.rd_many(sys::kSpace, sys::owner_template("ws01"), 10).empty());
  }
  SUBCASE("an agent cannot write another node's records, nor cancel a job") {
    // (Its refused completion leaves the record under its lease until its
    // session ends: the scope below.)
    {
      ts::Client ws01(pool.endpoint(), pool.as("ws01"));
      sys::replace(ws01, sys::node_template("ws01"),
                   sys::NodeRecord{"ws01", 1, 1.0, sys::NodeState::Available, sys::wall_now()}.to_tuple());
      ws01.flush();
      ws01.out_posted(sys::kSpace,
                      sys::NodeRecord{"ws02", 1, 1.0, sys::NodeState::Down, sys::wall_now()}.to_tuple());
      try {
        ws01.flush();
        FAIL("the server took another node's record");
      } catch (const ts::TupleSpaceError& e) {
        CHECK(e.code() == ts::Code::NotPermitted);
        CHECK(contains(e.what(), "key \"ws01\" (role agent) may not write node ws02's state record"));
        CHECK(contains(e.what(), "that needs node ws02's agent key or admin"));
      }
      CHECK(error_code([&] { ws01.in_many(sys::kSpace, sys::node_template(), 10); }) == "not_permitted");
      CHECK(error_code([&] { sys::set_job_state(ws01, id, sys::JobState::Cancelled); }) == "not_permitted");
    }
    auto nodes = sys::list_nodes(admin);
    REQUIRE(nodes.size() == 1);
    CHECK(nodes[0].name == "ws01");
    CHECK(state_of(admin, id) == sys::JobState::Queued);
  }
  SUBCASE("the scheduler writes assignments, not job states") {
    ts::Client nps(pool.endpoint(), pool.as("nps"));
    sys::supersede(nps, sys::assign_template(0, "ws01"), sys::Assignment{0, 1, "ws01", id}.to_tuple());
    nps.flush();
    CHECK(admin.rd(sys::kSpace, sys::assign_template(0, "ws01"), 0ms).has_value());
    CHECK(error_code([&] { sys::set_job_state(nps, id, sys::JobState::Cancelled); }) == "not_permitted");
    CHECK(state_of(admin, id) == sys::JobState::Queued);
  }
  SUBCASE("the scheduler and admin may be served first, a job or an agent key may not") {
    // What `nps run` asks (server.h, "Served first"): any other key would
    // put its requests ahead of a whole pool's.
    for (const char* who : {"nps", "admin"}) {
      auto o = pool.as(who);
      o.served_first = true;
      ts::Client c(pool.endpoint(), o);
      CHECK(c.stats(sys::kSpace).has_value());
    }
    for (const char* who : {"alice", "ws01"}) {
      auto o = pool.as(who);
      o.served_first = true;
      INFO(who);
      try {
        ts::Client c(pool.endpoint(), o);
        FAIL("the server served ", who, " first");
      } catch (const ts::TupleSpaceError& e) {
        CHECK(e.code() == ts::Code::NotPermitted);
        CHECK(contains(e.what(), std::string("key \"") + who + "\" may not ask to be served first"));
      }
    }
  }
  CHECK(contains(pool.log(), "not_permitted"));
}

TEST_CASE("auth: without --auth the server will not listen where other machines reach it unless told to") {
  Process exposed({bin("piranha"), "ts", "serve", "--bind", "tcp://*:*"});
  CHECK(exposed.wait() == 2);
  CHECK(contains(exposed.err(),
                 "other machines can reach tcp://*:*, and without --auth anyone who reaches it may "
                 "do anything in the pool"));
  CHECK_FALSE(contains(exposed.err(), "serving on"));

  Process insecure({bin("piranha"), "ts", "serve", "--bind", "tcp://*:*", "--insecure"});
  CHECK(insecure.wait_for_err("serving on"));
  CHECK(contains(insecure.err(), "WARNING: --insecure"));
  insecure.signal(SIGTERM);
  CHECK(insecure.wait() == 0);

  ServerProcess local;
  CHECK(contains(local.log(),
                 "no --auth: clients are not authenticated; the endpoints are reachable from this "
                 "machine only"));

  Scratch s;
  Process half({bin("piranha"), "ts", "serve", "--bind", "tcp://127.0.0.1:*", "--key", s.dir + "/x.key"});
  CHECK(half.wait() == 2);
  CHECK(contains(half.err(), "--key and --auth go together"));
}

TEST_CASE("auth: keys new writes a private secret key and never overwrites one") {
  Scratch s;
  Process first({bin("piranha"), "keys", "new", s.dir + "/ws07"});
  CHECK(first.wait() == 0);
  CHECK(contains(first.out(), "- {name: ws07, key: ws07.pub, role: ROLE}"));
  struct stat st {};
  REQUIRE(::stat((s.dir + "/ws07.key").c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
  std::string before = s.read("ws07.key");
  Process again({bin("piranha"), "keys", "new", s.dir + "/ws07"});
  CHECK(again.wait() == 1);
  CHECK(contains(again.err(), "exists already; not overwritten"));
  CHECK(s.read("ws07.key") == before);
}

TEST_CASE(
    "auth: every fuzz corpus frame from an authenticated client is answered or refused, and the server stays "
    "up") {
  SecuredPool pool;
  ts::ClientOptions bob = pool.as("bob");
  zmq::context_t ctx;
  zmq::socket_t dealer(ctx, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::curve_publickey, bob.curve.public_key);
  dealer.set(zmq::sockopt::curve_secretkey, bob.curve.secret_key);
  dealer.set(zmq::sockopt::curve_serverkey, bob.curve.server_key);
  dealer.connect(pool.endpoint());
  std::size_t sent = 0;
  for (const auto& entry : std::filesystem::directory_iterator(PIRANHA_FUZZ_CORPUS)) {
    std::ifstream in(entry.path(), std::ios::binary);
    std::string frame((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    dealer.send(zmq::buffer(frame), zmq::send_flags::none);
    ++sent;
  }
  // Requests of one session are handled in order: the last one's answer
  // comes after every other's (those that park never answer; a bye ends the
  // session, and the next frame opens another).
  std::string last;
  const std::uint64_t kLast = 987654321;
  ts::encode_stats(last, kLast, "");
  dealer.send(zmq::buffer(last), zmq::send_flags::none);
  std::size_t refused = 0, answered = 0;
  bool done = false;
  auto deadline = Clock::now() + kPatience;
  while (!done && Clock::now() < deadline) {
    zmq::message_t msg;
    zmq::pollitem_t item{dealer.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(100));
    while (dealer.recv(msg, zmq::recv_flags::dontwait)) {
      ts::Reply r = ts::decode_reply(std::string_view(static_cast<const char*>(msg.data()), msg.size()));
      ++answered;
      if (r.status == ts::Reply::Status::Error && r.code == ts::Code::NotPermitted) ++refused;
      if (r.request_id == kLast && r.status == ts::Reply::Status::Ok) done = true;
    }
  }
  INFO(sent, " frames sent, ", answered, " answers, ", refused, " refused");
  CHECK(done);
  CHECK(refused > 0);
  CHECK(pool.log().find("not_permitted") != std::string::npos);
  ts::Client admin(pool.endpoint(), pool.as("admin"));
  CHECK_NOTHROW(admin.stats());
}
