// Canonical msgpack images of tuples and templates.
//
// Every tuple the server stores, and every template it matches with, is held
// as a canonical msgpack image: integers in their shortest encoding, doubles
// as float64, strings as str, blobs as bin, booleans as bool, and formals as
// fixext1 of type kFormalExtType whose byte is the Type code. Because the
// encoding is canonical, two fields are equal exactly when their bytes are,
// which lets the store match without decoding. docs/protocol.md specifies it.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/base/wire_error.h"
#include "piranha/tuplespace/tuple.h"

namespace piranha::ts {

// The msgpack ext type that marks a formal field in a template.
inline constexpr std::int8_t kFormalExtType = 1;

// Arity and field types packed into one integer: bits 0-4 hold the arity,
// then 3 bits per field hold its Type. Equal signatures mean a template and a
// tuple have the same shape.
using Signature = std::uint64_t;

// A validated tuple in canonical form. `key` is the index key: the signature's
// 8 bytes followed by field 0's bytes.
struct TupleImage {
  std::string bytes;
  Signature signature = 0;
  std::string key;
};

// A validated template. When field 0 is an actual, `key` is the index key of
// the tuples it can match; `checks` lists the other actual fields by position.
struct TemplateImage {
  std::string bytes;
  Signature signature = 0;
  bool field0_actual = false;
  std::string key;
  struct Check {
    std::uint8_t position;
    std::string bytes;
  };
  std::vector<Check> checks;
};

// The index key for field 0 under a signature.
std::string index_key(Signature sig, std::string_view field0);

// Canonical image of a tuple. Throws std::invalid_argument when the arity is
// outside 1..kMaxFields.
TupleImage image_of(const Tuple& t);
TemplateImage image_of(const Template& t);

// Tuple from canonical bytes. Throws WireError on malformed input.
Tuple decode_tuple(std::string_view bytes);
// Template from canonical template bytes (TemplateImage::bytes). Throws
// WireError on malformed input.
Template decode_template(std::string_view bytes);

// Image from canonical tuple bytes (e.g. a stored record). Throws WireError.
TupleImage describe_tuple(std::string_view bytes);

// True when the canonical tuple bytes match the template (same signature
// already established by the caller is not assumed; it is checked).
bool matches(const TemplateImage& tmpl, std::string_view tuple_bytes);

// Splits canonical tuple bytes into its fields' byte ranges. Returns the
// number of fields; throws WireError on malformed bytes.
std::size_t split_fields(std::string_view bytes, std::string_view* out, std::size_t capacity);

}  // namespace piranha::ts
