// Canonical msgpack writing shared by the codec and the protocol (internal).
#pragma once

#include <cstring>
#include <msgpack.hpp>
#include <string>
#include <string_view>

#include "piranha/tuplespace/codec.h"

namespace piranha::ts::detail {

// Lets msgpack::packer append to a std::string.
struct StringStream {
  std::string* s;
  void write(const char* d, std::size_t n) { s->append(d, n); }
};
using Packer = msgpack::packer<StringStream>;

// Always float64: msgpack-c's pack_double writes integral doubles as
// integers, which would make 3.0 match the integer 3.
inline void append_float64(std::string& out, double d) {
  std::uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  char b[9];
  b[0] = static_cast<char>(0xcb);
  for (int i = 0; i < 8; ++i) b[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
  out.append(b, sizeof b);
}

inline void append_int(std::string& out, std::int64_t v) {
  StringStream st{&out};
  Packer(st).pack_int64(v);
}

inline void append_uint(std::string& out, std::uint64_t v) {
  StringStream st{&out};
  Packer(st).pack_uint64(v);
}

inline void append_str(std::string& out, std::string_view s) {
  StringStream st{&out};
  Packer pk(st);
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

inline void append_bin(std::string& out, std::string_view s) {
  StringStream st{&out};
  Packer pk(st);
  pk.pack_bin(static_cast<std::uint32_t>(s.size()));
  pk.pack_bin_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

inline void append_bool(std::string& out, bool b) {
  out.push_back(static_cast<char>(b ? 0xc3 : 0xc2));
}

inline void append_array(std::string& out, std::size_t n) {
  StringStream st{&out};
  Packer(st).pack_array(static_cast<std::uint32_t>(n));
}

inline void append_formal(std::string& out, Type t) {
  out.push_back(static_cast<char>(0xd4));
  out.push_back(static_cast<char>(kFormalExtType));
  out.push_back(static_cast<char>(t));
}

inline void append_value(std::string& out, const Value& v) {
  switch (type_of(v)) {
    case Type::Int: append_int(out, std::get<std::int64_t>(v)); break;
    case Type::Double: append_float64(out, std::get<double>(v)); break;
    case Type::String: append_str(out, std::get<std::string>(v)); break;
    case Type::Blob: append_bin(out, std::get<Blob>(v).bytes); break;
    case Type::Bool: append_bool(out, std::get<bool>(v)); break;
  }
}

inline void append_tuple(std::string& out, const Tuple& t) {
  append_array(out, t.size());
  for (const auto& v : t.fields()) append_value(out, v);
}

inline void append_template(std::string& out, const Template& t) {
  append_array(out, t.size());
  for (const auto& f : t.fields()) {
    if (f.is_formal())
      append_formal(out, f.type);
    else
      append_value(out, *f.actual);
  }
}

// A Tuple from a msgpack array object. Throws WireError.
Tuple tuple_from_object(const msgpack::object& o);

inline Signature add_field(Signature sig, std::size_t i, Type t) {
  return sig | (static_cast<Signature>(t) << (5 + 3 * i));
}

}  // namespace piranha::ts::detail
