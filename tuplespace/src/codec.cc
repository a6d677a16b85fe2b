#include "piranha/tuplespace/codec.h"

#include <cstring>
#include <msgpack.hpp>

#include "pack.h"

namespace piranha::ts {
namespace {

using detail::add_field;

void check_arity(std::size_t n) {
  if (n < 1 || n > kMaxFields)
    throw std::invalid_argument("a tuple has 1.." + std::to_string(kMaxFields) + " fields, not " +
                                std::to_string(n));
}

std::uint64_t read_be(const unsigned char* p, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v = (v << 8) | p[i];
  return v;
}

// One element of canonical bytes: its type and total length. Formals report
// their formal type with is_formal set.
struct Element {
  Type type;
  bool is_formal = false;
  std::size_t length;
};

Element read_element(const unsigned char* p, std::size_t avail) {
  auto need = [&](std::size_t n) {
    if (avail < n) throw WireError("truncated field");
  };
  need(1);
  unsigned char b = p[0];
  if (b <= 0x7f || b >= 0xe0) return {Type::Int, false, 1};
  if (b >= 0xa0 && b <= 0xbf) {
    std::size_t n = 1 + (b & 0x1f);
    need(n);
    return {Type::String, false, n};
  }
  switch (b) {
    case 0xc2:
    case 0xc3: return {Type::Bool, false, 1};
    case 0xcc:
    case 0xd0: need(2); return {Type::Int, false, 2};
    case 0xcd:
    case 0xd1: need(3); return {Type::Int, false, 3};
    case 0xce:
    case 0xd2: need(5); return {Type::Int, false, 5};
    case 0xcf:
    case 0xd3: need(9); return {Type::Int, false, 9};
    case 0xcb: need(9); return {Type::Double, false, 9};
    case 0xd9:
    case 0xc4: {
      need(2);
      std::size_t n = 2 + p[1];
      need(n);
      return {b == 0xd9 ? Type::String : Type::Blob, false, n};
    }
    case 0xda:
    case 0xc5: {
      need(3);
      std::size_t n = 3 + read_be(p + 1, 2);
      need(n);
      return {b == 0xda ? Type::String : Type::Blob, false, n};
    }
    case 0xdb:
    case 0xc6: {
      need(5);
      std::size_t n = 5 + read_be(p + 1, 4);
      need(n);
      return {b == 0xdb ? Type::String : Type::Blob, false, n};
    }
    case 0xd4: {
      need(3);
      if (static_cast<std::int8_t>(p[1]) != kFormalExtType || p[2] >= kTypeCount)
        throw WireError("bad formal field");
      return {static_cast<Type>(p[2]), true, 3};
    }
    default: throw WireError("unsupported field encoding");
  }
}

// Reads the array header; returns the element count and advances `p`.
std::size_t read_array_header(const unsigned char*& p, std::size_t& avail) {
  if (avail < 1) throw WireError("empty image");
  unsigned char b = p[0];
  std::size_t n;
  if (b >= 0x90 && b <= 0x9f) {
    n = b & 0x0f;
    p += 1, avail -= 1;
  } else if (b == 0xdc && avail >= 3) {
    n = read_be(p + 1, 2);
    p += 3, avail -= 3;
  } else {
    throw WireError("image is not an array");
  }
  return n;
}

}  // namespace

std::string index_key(Signature sig, std::string_view field0) {
  std::string key(sizeof sig + field0.size(), '\0');
  std::memcpy(key.data(), &sig, sizeof sig);
  std::memcpy(key.data() + sizeof sig, field0.data(), field0.size());
  return key;
}

TupleImage image_of(const Tuple& t) {
  check_arity(t.size());
  std::string buf;
  detail::append_tuple(buf, t);
  return describe_tuple(buf);
}

TemplateImage image_of(const Template& t) {
  check_arity(t.size());
  std::string buf;
  detail::append_array(buf, t.size());
  TemplateImage img;
  img.signature = t.size();
  for (std::size_t i = 0; i < t.size(); ++i) {
    const Field& f = t[i];
    img.signature = add_field(img.signature, i, f.type);
    std::size_t before = buf.size();
    if (f.is_formal()) {
      detail::append_formal(buf, f.type);
    } else {
      detail::append_value(buf, *f.actual);
      std::string field(buf.data() + before, buf.size() - before);
      if (i == 0) {
        img.field0_actual = true;
        img.key = field;  // completed with the signature below
      } else {
        img.checks.push_back({static_cast<std::uint8_t>(i), std::move(field)});
      }
    }
  }
  if (img.field0_actual) img.key = index_key(img.signature, img.key);
  img.bytes = std::move(buf);
  return img;
}

std::size_t split_fields(std::string_view bytes, std::string_view* out, std::size_t capacity) {
  const auto* p = reinterpret_cast<const unsigned char*>(bytes.data());
  std::size_t avail = bytes.size();
  std::size_t n = read_array_header(p, avail);
  if (n < 1 || n > kMaxFields || n > capacity) throw WireError("bad arity");
  for (std::size_t i = 0; i < n; ++i) {
    Element e = read_element(p, avail);
    out[i] = std::string_view(reinterpret_cast<const char*>(p), e.length);
    p += e.length, avail -= e.length;
  }
  if (avail != 0) throw WireError("trailing bytes after tuple");
  return n;
}

TupleImage describe_tuple(std::string_view bytes) {
  std::string_view fields[kMaxFields];
  std::size_t n = split_fields(bytes, fields, kMaxFields);
  Signature sig = n;
  for (std::size_t i = 0; i < n; ++i) {
    Element e = read_element(reinterpret_cast<const unsigned char*>(fields[i].data()), fields[i].size());
    if (e.is_formal) throw WireError("a tuple may not hold a formal");
    sig = add_field(sig, i, e.type);
  }
  TupleImage img;
  img.bytes.assign(bytes.data(), bytes.size());
  img.signature = sig;
  img.key = index_key(sig, fields[0]);
  return img;
}

namespace {

Value value_from_object(const msgpack::object& f) {
  switch (f.type) {
    case msgpack::type::POSITIVE_INTEGER:
      if (f.via.u64 > static_cast<std::uint64_t>(INT64_MAX)) throw WireError("integer out of int64 range");
      return Value(std::in_place_index<0>, static_cast<std::int64_t>(f.via.u64));
    case msgpack::type::NEGATIVE_INTEGER: return Value(std::in_place_index<0>, f.via.i64);
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return Value(std::in_place_index<1>, f.via.f64);
    case msgpack::type::STR: return Value(std::in_place_index<2>, std::string(f.via.str.ptr, f.via.str.size));
    case msgpack::type::BIN:
      return Value(std::in_place_index<3>, Blob(std::string(f.via.bin.ptr, f.via.bin.size)));
    case msgpack::type::BOOLEAN: return Value(std::in_place_index<4>, f.via.boolean);
    default: throw WireError("unsupported field type in tuple");
  }
}

void check_fields(const msgpack::object& o, const char* what) {
  if (o.type != msgpack::type::ARRAY) throw WireError(std::string(what) + " is not an array");
  if (o.via.array.size < 1 || o.via.array.size > kMaxFields)
    throw WireError(std::string(what) + " has a bad arity");
}

}  // namespace

Tuple detail::tuple_from_object(const msgpack::object& o) {
  check_fields(o, "tuple");
  std::vector<Value> fields;
  fields.reserve(o.via.array.size);
  for (std::uint32_t i = 0; i < o.via.array.size; ++i)
    fields.push_back(value_from_object(o.via.array.ptr[i]));
  return Tuple(std::move(fields));
}

Template decode_template(std::string_view bytes) {
  try {
    std::size_t off = 0;
    msgpack::object_handle oh = msgpack::unpack(bytes.data(), bytes.size(), off);
    if (off != bytes.size()) throw WireError("trailing bytes after template");
    const msgpack::object& o = oh.get();
    check_fields(o, "template");
    std::vector<Field> fields;
    fields.reserve(o.via.array.size);
    for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
      const msgpack::object& f = o.via.array.ptr[i];
      if (f.type != msgpack::type::EXT) {
        fields.push_back(Field::of(value_from_object(f)));
        continue;
      }
      const auto code = f.via.ext.size == 1 ? static_cast<unsigned char>(f.via.ext.data()[0]) : kTypeCount;
      if (f.via.ext.type() != kFormalExtType || code >= kTypeCount) throw WireError("bad formal field");
      fields.push_back(Field::formal(static_cast<Type>(code)));
    }
    return Template(std::move(fields));
  } catch (const msgpack::unpack_error& e) {
    throw WireError(std::string("malformed template: ") + e.what());
  } catch (const msgpack::type_error& e) {
    throw WireError(std::string("malformed template: ") + e.what());
  }
}

Tuple decode_tuple(std::string_view bytes) {
  try {
    std::size_t off = 0;
    msgpack::object_handle oh = msgpack::unpack(bytes.data(), bytes.size(), off);
    if (off != bytes.size()) throw WireError("trailing bytes after tuple");
    return detail::tuple_from_object(oh.get());
  } catch (const msgpack::unpack_error& e) {
    throw WireError(std::string("malformed tuple: ") + e.what());
  }
}

bool matches(const TemplateImage& tmpl, std::string_view tuple_bytes) {
  std::string_view fields[kMaxFields];
  std::size_t n = split_fields(tuple_bytes, fields, kMaxFields);
  Signature sig = n;
  for (std::size_t i = 0; i < n; ++i) {
    Element e = read_element(reinterpret_cast<const unsigned char*>(fields[i].data()), fields[i].size());
    sig = add_field(sig, i, e.type);
  }
  if (sig != tmpl.signature) return false;
  if (tmpl.field0_actual && index_key(sig, fields[0]) != tmpl.key) return false;
  for (const auto& c : tmpl.checks)
    if (fields[c.position] != c.bytes) return false;
  return true;
}

}  // namespace piranha::ts
