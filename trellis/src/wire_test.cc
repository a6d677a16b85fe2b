#include "wire.h"

#include "test_util.h"

namespace piranha::trellis::wire {

TEST_CASE("trellis: values cross the wire unchanged, types included") {
  for (const Value& v :
       {Value(), Value(true), Value(false), Value(0), Value(-1), Value(std::int64_t{1} << 40), Value(3.0),
        Value(-0.25), Value(""), Value("héllo"), Value(Value::List{1, 2.0, "x", Value()}),
        Value(Value::Map{{"load", 1.5}, {"hosts", Value::List{"a", "b"}}, {"up", true}})}) {
    std::string bytes;
    encode_value(bytes, v);
    CHECK(decode_value(bytes) == v);
  }
  std::string three;
  encode_value(three, Value(3.0));
  CHECK(decode_value(three).is_double());
}

TEST_CASE("trellis: messages round-trip") {
  Message m;
  m.kind = Kind::Activation;
  m.cause = Cause::Command;
  m.from = "summary";
  m.to = "throttle_a";
  m.data = Value::Map{{"throttle", true}};
  m.trace_id = 17;
  m.origin = "load_a";
  m.elapsed_ns = 12345;
  std::string bytes;
  encode(bytes, m);
  Message back = decode(bytes);
  CHECK(back.kind == Kind::Activation);
  CHECK(back.cause == Cause::Command);
  CHECK(back.from == "summary");
  CHECK(back.to == "throttle_a");
  CHECK(back.data == m.data);
  CHECK(back.trace_id == 17);
  CHECK(back.origin == "load_a");
  CHECK(back.elapsed_ns == 12345);
  Message ping;
  ping.kind = Kind::Pong;
  ping.sent_ns = 99;
  encode(bytes, ping);
  CHECK(decode(bytes).kind == Kind::Pong);
  CHECK(decode(bytes).sent_ns == 99);
}

TEST_CASE("trellis: garbage is a WireError, never a crash") {
  CHECK_THROWS_AS(decode(""), WireError);
  CHECK_THROWS_AS(decode("\xc1"), WireError);
  std::string not_array;
  encode_value(not_array, Value(5));
  CHECK_THROWS_AS(decode(not_array), WireError);
  std::string bad_cause;
  encode_value(bad_cause, Value(Value::List{2, 3, "a", "b", Value(), 0, "", 0}));
  CHECK_THROWS_AS(decode(bad_cause), WireError);
  std::string bad_key = "\x81\x01\x02";  // {1: 2}
  CHECK_THROWS_AS(decode_value(bad_key), WireError);
}

}  // namespace piranha::trellis::wire
