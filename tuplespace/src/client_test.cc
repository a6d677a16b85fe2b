#include "piranha/tuplespace/client.h"

#include <doctest/doctest.h>

#include "piranha/tuplespace/embedded.h"

using namespace piranha::ts;

TEST_CASE("a posted out is stored by the time the next call returns") {
  EmbeddedServer server;
  Client writer(server.endpoint());
  Client reader(server.endpoint());
  for (int i = 0; i < 3000; ++i) writer.space("s").out("t", i);  // beyond the post window
  CHECK(writer.stats("s")->tuples == 3000);
  CHECK(reader.space("s").inp("t", 0).has_value());
  CHECK(reader.space("s").inp("t", 2999).has_value());
}

TEST_CASE("a client's destructor flushes its posted outs") {
  EmbeddedServer server;
  {
    Client writer(server.endpoint());
    writer.space("s").out("last words", 1);
  }
  Client reader(server.endpoint());
  CHECK(reader.space("s").inp("last words", formal<std::int64_t>).has_value());
}

TEST_CASE("an error a posted out got is thrown by the next call, once") {
  EmbeddedServer server;
  Client c(server.endpoint());
  std::string long_name(kMaxSpaceNameBytes + 1, 'x');
  c.out(long_name, Tuple::of("t", 1));  // the server rejects the space name
  try {
    c.stats();
    FAIL("the posted out's error was not reported");
  } catch (const TupleSpaceError& e) {
    CHECK(e.code() == "bad_request");
    CHECK(std::string(e.what()).find("space name") != std::string::npos);
  }
  CHECK_NOTHROW(c.flush());
  CHECK(c.stats().empty());
}

TEST_CASE("a request over the server's size limit is refused before it is sent") {
  ServerOptions o;
  o.bind = {};
  o.max_message_bytes = 4096;
  EmbeddedServer server(o);
  Client c(server.endpoint());
  try {
    c.space("s").out("big", Blob(std::string(8192, 'b')));
    FAIL("no error");
  } catch (const TupleSpaceError& e) {
    CHECK(e.code() == "too_large");
  }
  c.space("s").out("small", 1);
  CHECK(c.stats("s")->tuples == 1);
}

TEST_CASE("formals bind into variables and typed tuples unpack") {
  EmbeddedServer server;
  Client c(server.endpoint());
  Space s = c.space("s");
  s.out("task", 7, 2.5, std::string("row"), Blob("\x01\x02"), true);
  std::int64_t id = 0;
  double x = 0;
  std::string row;
  Blob b;
  bool flag = false;
  s.rd("task", bind(id), bind(x), bind(row), bind(b), bind(flag));
  CHECK(id == 7);
  CHECK(x == 2.5);
  CHECK(row == "row");
  CHECK(b == Blob("\x01\x02"));
  CHECK(flag);
  auto [tag, n, d, r, bl, f] =
      s.in("task", formal<std::int64_t>, formal<double>, formal<std::string>, formal<Blob>, formal<bool>)
          .as<std::string, std::int64_t, double, std::string, Blob, bool>();
  CHECK(tag == "task");
  CHECK(n == 7);
  CHECK_FALSE(s.inp("task", formal<std::int64_t>, formal<double>, formal<std::string>, formal<Blob>,
                    formal<bool>));
}

TEST_CASE("eval runs on another thread and outs its result") {
  EmbeddedServer server;
  Client c(server.endpoint());
  Space s = c.space("s");
  auto done = s.eval([] { return Tuple::of("answer", 42); });
  std::int64_t v = 0;
  s.in("answer", bind(v));
  CHECK(v == 42);
  done.get();
}

TEST_CASE("a client that cannot reach a server says so") {
  ClientOptions o;
  o.connect_timeout = std::chrono::milliseconds(200);
  try {
    Client c("inproc://nobody-here", o);
    FAIL("connected to nothing");
  } catch (const TupleSpaceError& e) {
    CHECK(e.code() == "unreachable");
  }
}
