#include "wire.h"

#include <cstring>
#include <limits>
#include <msgpack.hpp>

namespace piranha::trellis::wire {
namespace {

struct StringStream {
  std::string* s;
  void write(const char* d, std::size_t n) { s->append(d, n); }
};
using Packer = msgpack::packer<StringStream>;

// Always float64: msgpack-c may shorten an integral double to an integer.
void pack_float64(std::string& out, double d) {
  std::uint64_t bits;
  std::memcpy(&bits, &d, sizeof bits);
  char b[9];
  b[0] = static_cast<char>(0xcb);
  for (int i = 0; i < 8; ++i) b[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
  out.append(b, sizeof b);
}

void pack_str(Packer& pk, std::string_view s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

void pack_value(std::string& out, const Value& v) {
  StringStream st{&out};
  Packer pk(st);
  struct Visitor {
    std::string& out;
    Packer& pk;
    void operator()(std::monostate) { pk.pack_nil(); }
    void operator()(bool b) {
      if (b)
        pk.pack_true();
      else
        pk.pack_false();
    }
    void operator()(std::int64_t i) { pk.pack_int64(i); }
    void operator()(double d) { pack_float64(out, d); }
    void operator()(const std::string& s) { pack_str(pk, s); }
    void operator()(const Value::List& l) {
      pk.pack_array(static_cast<std::uint32_t>(l.size()));
      for (const auto& x : l) pack_value(out, x);
    }
    void operator()(const Value::Map& m) {
      pk.pack_map(static_cast<std::uint32_t>(m.size()));
      for (const auto& [k, x] : m) {
        pack_str(pk, k);
        pack_value(out, x);
      }
    }
  };
  v.visit(Visitor{out, pk});
}

Value value_of(const msgpack::object& o, int depth = 0) {
  if (depth > 64) throw WireError("value nested too deeply");
  switch (o.type) {
    case msgpack::type::NIL: return Value{};
    case msgpack::type::BOOLEAN: return o.via.boolean;
    case msgpack::type::POSITIVE_INTEGER:
      if (o.via.u64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        throw WireError("integer out of range");
      return Value(static_cast<long long>(o.via.u64));
    case msgpack::type::NEGATIVE_INTEGER: return Value(static_cast<long long>(o.via.i64));
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return o.via.f64;
    case msgpack::type::STR: return std::string(o.via.str.ptr, o.via.str.size);
    case msgpack::type::ARRAY: {
      Value::List l;
      l.reserve(o.via.array.size);
      for (std::uint32_t i = 0; i < o.via.array.size; ++i)
        l.push_back(value_of(o.via.array.ptr[i], depth + 1));
      return l;
    }
    case msgpack::type::MAP: {
      Value::Map m;
      for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
        const auto& kv = o.via.map.ptr[i];
        if (kv.key.type != msgpack::type::STR) throw WireError("map key is not a string");
        m[std::string(kv.key.via.str.ptr, kv.key.via.str.size)] = value_of(kv.val, depth + 1);
      }
      return m;
    }
    default: throw WireError("unsupported msgpack type");
  }
}

msgpack::object_handle unpack(std::string_view bytes) {
  try {
    return msgpack::unpack(bytes.data(), bytes.size());
  } catch (const std::exception& e) {
    throw WireError(std::string("not msgpack: ") + e.what());
  }
}

std::int64_t int_at(const msgpack::object& o) {
  if (o.type == msgpack::type::POSITIVE_INTEGER && o.via.u64 <= static_cast<std::uint64_t>(INT64_MAX))
    return static_cast<std::int64_t>(o.via.u64);
  if (o.type == msgpack::type::NEGATIVE_INTEGER) return o.via.i64;
  throw WireError("expected an integer");
}

std::string str_at(const msgpack::object& o) {
  if (o.type != msgpack::type::STR) throw WireError("expected a string");
  return std::string(o.via.str.ptr, o.via.str.size);
}

}  // namespace

void encode_value(std::string& out, const Value& v) {
  pack_value(out, v);
}

Value decode_value(std::string_view bytes) {
  auto h = unpack(bytes);
  return value_of(h.get());
}

void encode(std::string& out, const Message& m) {
  out.clear();
  StringStream st{&out};
  Packer pk(st);
  if (m.kind != Kind::Activation) {
    pk.pack_array(2);
    pk.pack_uint8(static_cast<std::uint8_t>(m.kind));
    pk.pack_int64(m.sent_ns);
    return;
  }
  pk.pack_array(8);
  pk.pack_uint8(static_cast<std::uint8_t>(m.kind));
  pk.pack_uint8(static_cast<std::uint8_t>(m.cause));
  pack_str(pk, m.from);
  pack_str(pk, m.to);
  pack_value(out, m.data);
  pk.pack_uint64(m.trace_id);
  pack_str(pk, m.origin);
  pk.pack_int64(m.elapsed_ns);
}

Message decode(std::string_view bytes) {
  auto h = unpack(bytes);
  const msgpack::object& o = h.get();
  if (o.type != msgpack::type::ARRAY || o.via.array.size < 2) throw WireError("a message is an array");
  const msgpack::object* f = o.via.array.ptr;
  Message m;
  std::int64_t kind = int_at(f[0]);
  if (kind == 0 || kind == 1) {
    m.kind = static_cast<Kind>(kind);
    m.sent_ns = int_at(f[1]);
    return m;
  }
  if (kind != 2 || o.via.array.size != 8) throw WireError("unknown message kind");
  m.kind = Kind::Activation;
  std::int64_t cause = int_at(f[1]);
  if (cause != 1 && cause != 2 && cause != 4 && cause != 8 && cause != 16) throw WireError("unknown cause");
  m.cause = static_cast<Cause>(cause);
  m.from = str_at(f[2]);
  m.to = str_at(f[3]);
  m.data = value_of(f[4]);
  m.trace_id = static_cast<std::uint64_t>(int_at(f[5]));
  m.origin = str_at(f[6]);
  m.elapsed_ns = int_at(f[7]);
  return m;
}

}  // namespace piranha::trellis::wire
