#include "piranha/runtime/endpoint.h"

#include <doctest/doctest.h>

using piranha::endpoint_problem;
using piranha::EndpointUse;

TEST_CASE("endpoint: well-formed endpoints pass") {
  for (const char* e : {"tcp://127.0.0.1:7070", "tcp://ws01.example.org:1", "tcp://[::1]:65535",
                        "ipc:///tmp/p.sock", "inproc://x"})
    CHECK_MESSAGE(!endpoint_problem(e), e);
  CHECK(!endpoint_problem("tcp://*:7070", EndpointUse::Bind));
  CHECK(!endpoint_problem("tcp://127.0.0.1:*", EndpointUse::Bind));
}

TEST_CASE("endpoint: each problem is named with the endpoint") {
  auto p = endpoint_problem("tcp://127.0.0.1:99999");
  REQUIRE(p);
  CHECK(*p == "port 99999 is out of range (1-65535) in 'tcp://127.0.0.1:99999'");
  CHECK(endpoint_problem("tcp://127.0.0.1:0")->find("out of range") != std::string::npos);
  CHECK(endpoint_problem("garbage")->find("'garbage' is not an endpoint") != std::string::npos);
  CHECK(endpoint_problem("tcp://127.0.0.1")->find("no port") != std::string::npos);
  CHECK(endpoint_problem("tcp://:7070")->find("no host") != std::string::npos);
  CHECK(endpoint_problem("tcp://h:70x")->find("'70x' is not a number") != std::string::npos);
  CHECK(endpoint_problem("udp://h:1")->find("unknown transport 'udp'") != std::string::npos);
  CHECK(endpoint_problem("ipc://")->find("nothing after ipc://") != std::string::npos);
  CHECK(endpoint_problem("tcp://127.0.0.1:*")->find("only binds") != std::string::npos);
  CHECK(endpoint_problem("tcp://*:7070")->find("only binds") != std::string::npos);
}

TEST_CASE("endpoint: loopback, ipc and inproc endpoints are local, and anything else is not") {
  using piranha::endpoint_is_local;
  for (const char* e : {"tcp://127.0.0.1:7070", "tcp://127.1.2.3:*", "tcp://localhost:1", "tcp://[::1]:7070",
                        "tcp://lo:7070", "ipc:///tmp/p.sock", "inproc://x"})
    CHECK_MESSAGE(endpoint_is_local(e), e);
  for (const char* e : {"tcp://*:7070", "tcp://0.0.0.0:7070", "tcp://10.0.0.1:7070", "tcp://ws01:7070",
                        "tcp://127.example.org:1", "tcp://eth0:7070", "tcp://[::]:7070", "udp://127.0.0.1:1"})
    CHECK_MESSAGE(!endpoint_is_local(e), e);
}
