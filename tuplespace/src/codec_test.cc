#include "piranha/tuplespace/codec.h"

#include <doctest/doctest.h>

using namespace piranha::ts;
using piranha::WireError;

TEST_CASE("a tuple survives its canonical image") {
  Tuple t = Tuple::of("task", 42, -7, 2.5, Blob(std::string("\x00\x01", 2)), true, std::string(300, 'x'));
  TupleImage img = image_of(t);
  CHECK(decode_tuple(img.bytes) == t);
}

TEST_CASE("integers are canonical whatever their C++ width") {
  CHECK(image_of(Tuple::of(300)).bytes == image_of(Tuple::of(std::int64_t{300})).bytes);
  CHECK(image_of(Tuple::of(short{5})).bytes == image_of(Tuple::of(5LL)).bytes);
}

TEST_CASE("arity outside 1..kMaxFields is refused") {
  CHECK_THROWS_AS(image_of(Tuple()), std::invalid_argument);
  std::vector<Value> many(kMaxFields + 1, Value(std::int64_t{1}));
  CHECK_THROWS_AS(image_of(Tuple(many)), std::invalid_argument);
  std::vector<Value> most(kMaxFields, Value(std::int64_t{1}));
  CHECK(decode_tuple(image_of(Tuple(most)).bytes).size() == kMaxFields);
}

TEST_CASE("an actual matches only an equal value of the same type") {
  auto tuple = image_of(Tuple::of("x", 3));
  CHECK(matches(image_of(Template({Field::of(std::string("x")), Field::of(std::int64_t{3})})), tuple.bytes));
  CHECK_FALSE(matches(image_of(Template({Field::of(std::string("x")), Field::of(3.0)})), tuple.bytes));
  CHECK_FALSE(
      matches(image_of(Template({Field::of(std::string("x")), Field::of(std::int64_t{4})})), tuple.bytes));
  CHECK_FALSE(matches(image_of(Template({Field::of(Blob("x")), Field::of(std::int64_t{3})})), tuple.bytes));
}

TEST_CASE("a formal matches any value of its type and no other") {
  auto tuple = image_of(Tuple::of("x", 3));
  CHECK(matches(image_of(Template({Field::formal(Type::String), Field::formal(Type::Int)})), tuple.bytes));
  CHECK_FALSE(
      matches(image_of(Template({Field::formal(Type::String), Field::formal(Type::Double)})), tuple.bytes));
  CHECK_FALSE(matches(image_of(Template({Field::formal(Type::String)})), tuple.bytes));
}

TEST_CASE("the template's image agrees with Template::matches") {
  Template tmpl({Field::of(std::string("r")), Field::formal(Type::Int), Field::of(true)});
  for (auto t : {Tuple::of("r", 1, true), Tuple::of("r", 1, false), Tuple::of("s", 1, true),
                 Tuple::of("r", 1.0, true)}) {
    CAPTURE(to_string(t));
    CHECK(matches(image_of(tmpl), image_of(t).bytes) == tmpl.matches(t));
  }
}

TEST_CASE("malformed images are rejected with WireError") {
  CHECK_THROWS_AS(describe_tuple(std::string("\x92\xa5"
                                             "ab",
                                             4)),
                  WireError);                                                  // truncated string
  CHECK_THROWS_AS(describe_tuple(std::string("\x01", 1)), WireError);          // not an array
  CHECK_THROWS_AS(describe_tuple(std::string("\x91\xc0", 2)), WireError);      // nil field
  CHECK_THROWS_AS(describe_tuple(std::string("\x91\x01\x02", 3)), WireError);  // trailing bytes
  CHECK_THROWS_AS(describe_tuple(std::string("\x90", 1)), WireError);          // empty tuple
}

TEST_CASE("to_string renders tuples and templates readably") {
  CHECK(to_string(Tuple::of("task", 3, 2.0, true)) == "(\"task\", 3, 2.0, true)");
  CHECK(to_string(Template({Field::of(std::string("t")), Field::formal(Type::Blob)})) == "(\"t\", ?blob)");
}

TEST_CASE("a template's image decodes back to the template") {
  Template t({Field::of(std::string("job")), Field::of(std::int64_t{-3}), Field::formal(Type::String),
              Field::of(2.5), Field::formal(Type::Blob), Field::of(Blob(std::string("\0x", 2))),
              Field::of(true), Field::formal(Type::Bool), Field::formal(Type::Double),
              Field::formal(Type::Int)});
  CHECK(decode_template(image_of(t).bytes) == t);
  CHECK_THROWS_AS(decode_template(std::string("\x91\xd4\x02\x00", 4)), WireError);  // another ext type
  CHECK_THROWS_AS(decode_template(std::string("\x91\xd4\x01\x07", 4)), WireError);  // no such type code
  CHECK_THROWS_AS(decode_template(std::string("\x90", 1)), WireError);
}
