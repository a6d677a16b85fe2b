// The two forms of out, the same in both clients (client.h): out waits for
// the server's answer and throws its refusal; out_posted returns at once and
// the refusal comes later.
#include <doctest/doctest.h>

#include <string>

#include "piranha/tuplespace/client.h"
#include "piranha/tuplespace/embedded.h"
#include "piranha/tuplespace/fiber_client.h"

using namespace piranha::ts;

namespace {

// A space name the server refuses (bad_request): the client does not check it.
const std::string kRefusedSpace(kMaxSpaceNameBytes + 1, 'x');

// The code `request` throws; "(none)" when it returns.
template <class Request>
std::string thrown_by(Request&& request) {
  try {
    request();
  } catch (const TupleSpaceError& e) {
    return std::string(code_to_wire(e.code()));
  }
  return "(none)";
}

}  // namespace

TEST_CASE("Client: out throws the server's refusal itself, out_posted leaves it to flush") {
  EmbeddedServer server;
  Client c(server.endpoint());
  CHECK(thrown_by([&] { c.out(kRefusedSpace, Tuple::of("t", 1)); }) == "bad_request");
  CHECK(thrown_by([&] { c.flush(); }) == "(none)");  // nothing was left behind

  CHECK(thrown_by([&] { c.out_posted(kRefusedSpace, Tuple::of("t", 2)); }) == "(none)");
  CHECK(thrown_by([&] { c.flush(); }) == "bad_request");
}

TEST_CASE("FiberClient: out throws the server's refusal itself, out_posted leaves it to flush") {
  EmbeddedServer server;
  FiberClient c(server.endpoint());
  CHECK(thrown_by([&] { c.out(kRefusedSpace, Tuple::of("t", 1)); }) == "bad_request");
  CHECK(thrown_by([&] { c.flush(); }) == "(none)");

  CHECK(thrown_by([&] { c.out_posted(kRefusedSpace, Tuple::of("t", 2)); }) == "(none)");
  CHECK(thrown_by([&] { c.flush(); }) == "bad_request");
}

TEST_CASE("FiberClient: a posted out is stored by the time a later request is answered") {
  EmbeddedServer server;
  FiberClient c(server.endpoint());
  FiberSpace s = c.space("s");
  for (int i = 0; i < 100; ++i) s.out_posted("t", i);
  CHECK(s.rdp("t", 99).has_value());
  c.flush();
  CHECK(c.stats("s")->tuples == 100);
}
