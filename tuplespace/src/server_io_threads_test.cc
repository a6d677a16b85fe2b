// ServerOptions::io_threads: a server with more than one ZeroMQ I/O thread
// has a context of its own with that many, serves over TCP as one with a
// single thread does, binds no inproc:// endpoint, and refuses a count out
// of range.
#include <doctest/doctest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "error_of_test.h"
#include "piranha/tuplespace/client.h"
#include "piranha/tuplespace/curve.h"
#include "piranha/tuplespace/server.h"

using namespace piranha::ts;
using piranha::ts::testing::error_of;
using namespace std::chrono_literals;

namespace {

// This process's threads that libzmq named as I/O threads.
int zmq_io_threads() {
  int n = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::string name;
    std::getline(std::ifstream(task.path() / "comm"), name);
    if (name.rfind("ZMQbg/IO/", 0) == 0) ++n;
  }
  return n;
}

// zmq_io_threads() once it is `n`, or what it is after 5 s: each thread
// names itself once it runs.
int zmq_io_threads_become(int n) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  int now = zmq_io_threads();
  while (now != n && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
    now = zmq_io_threads();
  }
  return now;
}

}  // namespace

TEST_CASE("a server with three I/O threads starts them in a context of its own and serves over TCP") {
  const int before = zmq_io_threads();
  int with_server = 0;  // once the clients below have run (their context's thread stays)
  {
    ServerOptions o;
    o.bind = {"tcp://127.0.0.1:*"};
    o.io_threads = 3;
    Server server(o);
    std::thread loop([&] { server.run(); });
    CHECK(zmq_io_threads_become(before + 3) == before + 3);
    {
      // A watcher on one connection sees what a writer on another wrote,
      // and the writer takes it back: requests, replies and events.
      Client watcher(server.endpoints().front());
      Client writer(server.endpoints().front());
      const WatchId w =
          watcher.watch("s", Template({Field::of(Value(std::string("x"))), Field::formal(Type::Int)}));
      writer.out("s", Tuple::of(std::string("x"), std::int64_t{7}));
      const auto e = watcher.next_event(5000ms);
      REQUIRE(e.has_value());
      CHECK(e->watch == w);
      CHECK(e->tuple == Tuple::of(std::string("x"), std::int64_t{7}));
      const auto taken =
          writer.in("s", Template({Field::of(Value(std::string("x"))), Field::formal(Type::Int)}), 1000ms);
      REQUIRE(taken.has_value());
      CHECK(taken->tuple == Tuple::of(std::string("x"), std::int64_t{7}));
    }
    with_server = zmq_io_threads();
    server.stop();
    loop.join();
  }
  // Its context, and its threads, end with it.
  CHECK(zmq_io_threads() == with_server - 3);
}

TEST_CASE(
    "a server with more than one I/O thread binds no inproc endpoint, and 0 or 65 threads are refused") {
  ServerOptions o;
  o.io_threads = 2;
  o.bind = {"inproc://io-threads-test"};
  const std::string inproc = error_of([&] { Server x(o); });
  CHECK(inproc.find("inproc://io-threads-test") != std::string::npos);
  CHECK(inproc.find("more than one I/O thread") != std::string::npos);
  o.bind = {"tcp://127.0.0.1:*"};
  for (int n : {0, -1, 65}) {
    o.io_threads = n;
    const std::string why = error_of([&] { Server x(o); });
    INFO(why);
    CHECK(why.find("io_threads must be 1 to 64, not " + std::to_string(n)) != std::string::npos);
  }
  // Checked with CURVE too, whose server always has a context of its own.
  o.curve_secret_key = new_curve_key_pair().secret_key;
  o.io_threads = 0;
  CHECK(error_of([&] { Server x(o); }).find("io_threads must be 1 to 64, not 0") != std::string::npos);
  o.curve_secret_key.clear();
  // One thread: the process's default context, where inproc:// is reachable.
  o.io_threads = 1;
  o.bind = {"inproc://io-threads-test-one"};
  Server one(o);
  CHECK(one.endpoints().front() == "inproc://io-threads-test-one");
}
