// LivePool's evaluator records against a tuple-space server in this
// process: read back at start, appended by flush(), and forgotten -- removed
// from the space -- by flush() too.
#include "piranha/nps/live_pool.h"

#include <doctest/doctest.h>

#include "piranha/tuplespace/embedded.h"

namespace piranha::nps {
namespace {

std::vector<std::string> jsons(ts::Client& c) {
  std::vector<std::string> out;
  for (const auto& r : sys::list_eval_records(c)) out.push_back(r.json);
  return out;
}

TEST_CASE("live pool: forgotten records are removed from the space, and one never sent is never written") {
  ts::EmbeddedServer server;
  ts::Client c(server.endpoint());
  for (int i = 0; i < 3; ++i)
    c.out(sys::kSpace, sys::EvalRecord{"span", 10.0 + i, "{\"n\":" + std::to_string(i) + "}"}.to_tuple());
  // A record of another kind at the same time, and an exact twin: only the
  // one forgotten goes.
  c.out(sys::kSpace, sys::EvalRecord{"job", 10.0, "{\"n\":0}"}.to_tuple());
  c.flush();
  LivePool pool;
  pool.start(c);
  REQUIRE(pool.records().size() == 4);
  pool.record({"span", 20, "{\"n\":3}"});
  pool.record({"span", 21, "{\"n\":4}"});
  pool.flush(c);
  CHECK(sys::list_eval_records(c).size() == 6);
  // Forget the oldest span and the one written last; add one and forget it
  // before it is ever sent.
  pool.record({"span", 22, "{\"n\":5}"});
  const auto records = pool.records();
  REQUIRE(records.size() == 7);
  CHECK(records[0].kind == "span");
  const std::size_t gone[] = {0, 5, 6};
  pool.forget(gone);
  CHECK(pool.records().size() == 4);
  CHECK(pool.pending());
  pool.flush(c);
  CHECK(jsons(c) == std::vector<std::string>{"{\"n\":0}", "{\"n\":1}", "{\"n\":2}", "{\"n\":3}"});
  CHECK(sys::list_eval_records(c)[0].kind == "job");
  CHECK_FALSE(pool.pending());
}

}  // namespace
}  // namespace piranha::nps
