// A program that uses only the tuple API, built against an installed Piranha
// (Piranha::tuplespace): one tuple out and back through an embedded server.
#include <cstdint>
#include <cstdio>
#include <string>

#include "piranha/tuplespace/client.h"
#include "piranha/tuplespace/embedded.h"

namespace ts = piranha::ts;

int main() {
  ts::EmbeddedServer server;
  ts::Client client(server.endpoint());
  ts::Space space = client.space("hello");
  space.out("greeting", std::string("hello"), 3);
  std::string word;
  std::int64_t n = 0;
  space.in("greeting", ts::bind(word), ts::bind(n));
  bool ok = word == "hello" && n == 3;
  std::printf("tuple_hello: (\"greeting\", \"%s\", %lld): %s\n", word.c_str(), static_cast<long long>(n),
              ok ? "OK" : "WRONG");
  return ok ? 0 : 1;
}
