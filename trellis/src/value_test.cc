#include "piranha/trellis/value.h"

#include <cmath>
#include <limits>

#include "test_util.h"

namespace piranha::trellis {

TEST_CASE("trellis: Value compares strictly by type and content") {
  CHECK(Value(3) == Value(std::int64_t{3}));
  CHECK_FALSE(Value(3) == Value(3.0));
  CHECK_FALSE(Value("3") == Value(3));
  CHECK(Value() == Value(nullptr));
  CHECK(Value(Value::List{1, "a"}) == Value(Value::List{1, "a"}));
  CHECK_FALSE(Value(Value::Map{{"a", 1}}) == Value(Value::Map{{"a", 2}}));
}

TEST_CASE("trellis: Value indexes maps and reads numbers") {
  Value m = Value::Map{{"load", 1.5}, {"cores", 4}};
  CHECK(m["load"].as_number() == 1.5);
  CHECK(m["cores"].as_number() == 4.0);
  CHECK(m["missing"].is_null());
  CHECK(Value(3)["x"].is_null());
}

TEST_CASE("trellis: to_json renders every kind") {
  CHECK(to_json(Value()) == "null");
  CHECK(to_json(Value(true)) == "true");
  CHECK(to_json(Value(-7)) == "-7");
  CHECK(to_json(Value(3.0)) == "3.0");
  CHECK(to_json(Value(0.5)) == "0.5");
  CHECK(to_json(Value(0.06)) == "0.06");
  CHECK(to_json(Value(0.1 + 0.2)) == "0.30000000000000004");
  CHECK(to_json(Value("a\"b\n")) == "\"a\\\"b\\n\"");
  CHECK(to_json(Value(Value::List{1, Value()})) == "[1,null]");
  CHECK(to_json(Value(Value::Map{{"b", 2}, {"a", "x"}})) == "{\"a\":\"x\",\"b\":2}");
}

TEST_CASE("trellis: to_json escapes what JSON strings cannot hold and keeps the rest") {
  // Quote, backslash and every control character are escaped, in keys as in values.
  CHECK(to_json(Value("q\"b\\n\nt\tr\r")) == R"("q\"b\\n\nt\tr\r")");
  CHECK(to_json(Value(std::string("\x01\x1f\b\f", 4))) == R"("\u0001\u001f\b\f")");
  CHECK(to_json(Value(std::string("nul\0", 4))) == R"("nul\u0000")");
  CHECK(to_json(Value(Value::Map{{"a\"\n", 1}})) == R"({"a\"\n":1})");
  // UTF-8 and DEL pass through; a byte that is not UTF-8 becomes U+FFFD.
  CHECK(to_json(Value("caf\u00e9 \x7f")) == "\"caf\u00e9 \x7f\"");
  CHECK(to_json(Value("a\xff")) == "\"a\xef\xbf\xbd\"");
  // Non-finite doubles have no JSON spelling.
  CHECK(to_json(Value(std::numeric_limits<double>::infinity())) == "null");
  CHECK(to_json(Value(std::nan(""))) == "null");
}

}  // namespace piranha::trellis
