#include "piranha/tuplespace/protocol.h"

#include <limits>
#include <msgpack.hpp>

#include "pack.h"

namespace piranha::ts {
namespace {

using detail::add_field;

// A request that can be read but not accepted; carries the error code.
struct Reject {
  Code code;
  std::string message;
};

[[noreturn]] void reject(std::string message, Code code = Code::BadRequest) {
  throw Reject{code, std::move(message)};
}

// Where in a request a value is ("out_many: tuple 3 field 2"), for error
// messages: made into a string only when the request is rejected, so that a
// request decodes without building one per field.
struct Where {
  Where(std::string_view what_, std::string_view item_ = {}, long tuple_ = -1)
      : what(what_), item(item_), tuple(tuple_) {}
  std::string_view what;  // "out: tuple", "in", "out_many", ...
  std::string_view item;  // a named argument: "template", "timeout_ms", ...
  long tuple = -1;        // the tuple's position in a list, if in one
  long field = -1;        // the field's position, if a field

  std::string text() const {
    std::string t(what);
    if (tuple >= 0) t += ": tuple " + std::to_string(tuple);
    if (!item.empty()) t += ": " + std::string(item);
    if (field >= 0) t += " field " + std::to_string(field);
    return t;
  }
  Where at_field(long i) const {
    Where w = *this;
    w.field = i;
    return w;
  }
};

std::string_view object_type_name(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL: return "nil";
    case msgpack::type::BOOLEAN: return "bool";
    case msgpack::type::POSITIVE_INTEGER:
    case msgpack::type::NEGATIVE_INTEGER: return "integer";
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: return "float";
    case msgpack::type::STR: return "str";
    case msgpack::type::BIN: return "bin";
    case msgpack::type::ARRAY: return "array";
    case msgpack::type::MAP: return "map";
    case msgpack::type::EXT: return "ext";
  }
  return "unknown";
}

// Appends the canonical form of one field; returns its type.
Type canonical_field(std::string& out, const msgpack::object& o, bool allow_formal, const Where& where) {
  switch (o.type) {
    case msgpack::type::POSITIVE_INTEGER:
      if (o.via.u64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        reject(where.text() + ": integer " + std::to_string(o.via.u64) + " is out of int64 range");
      detail::append_int(out, static_cast<std::int64_t>(o.via.u64));
      return Type::Int;
    case msgpack::type::NEGATIVE_INTEGER: detail::append_int(out, o.via.i64); return Type::Int;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64: detail::append_float64(out, o.via.f64); return Type::Double;
    case msgpack::type::STR:
      detail::append_str(out, std::string_view(o.via.str.ptr, o.via.str.size));
      return Type::String;
    case msgpack::type::BIN:
      detail::append_bin(out, std::string_view(o.via.bin.ptr, o.via.bin.size));
      return Type::Blob;
    case msgpack::type::BOOLEAN: detail::append_bool(out, o.via.boolean); return Type::Bool;
    case msgpack::type::EXT:
      if (allow_formal && o.via.ext.type() == kFormalExtType && o.via.ext.size == 1 &&
          static_cast<unsigned char>(o.via.ext.data()[0]) < kTypeCount) {
        Type t = static_cast<Type>(o.via.ext.data()[0]);
        detail::append_formal(out, t);
        return t;
      }
      reject(where.text() + (allow_formal ? ": ext is not a formal (ext type 1 holding a type code 0..4)"
                                          : ": a tuple may not hold a formal"));
    default: reject(where.text() + ": unsupported msgpack type " + std::string(object_type_name(o)));
  }
}

const msgpack::object& check_array(const msgpack::object& o, const Where& what) {
  if (o.type != msgpack::type::ARRAY)
    reject(what.text() + " must be an array, got " + std::string(object_type_name(o)));
  if (o.via.array.size < 1 || o.via.array.size > kMaxFields)
    reject(what.text() + " has " + std::to_string(o.via.array.size) + " fields; allowed 1.." +
           std::to_string(kMaxFields));
  return o;
}

TupleImage tuple_image(const msgpack::object& o, const Where& what) {
  check_array(o, what);
  TupleImage img;
  detail::append_array(img.bytes, o.via.array.size);
  img.signature = o.via.array.size;
  std::size_t field0_begin = img.bytes.size(), field0_end = 0;
  for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
    Type t = canonical_field(img.bytes, o.via.array.ptr[i], false, what.at_field(i));
    img.signature = add_field(img.signature, i, t);
    if (i == 0) field0_end = img.bytes.size();
  }
  img.key =
      index_key(img.signature, std::string_view(img.bytes).substr(field0_begin, field0_end - field0_begin));
  return img;
}

TemplateImage template_image(const msgpack::object& o, const Where& what) {
  check_array(o, what);
  TemplateImage img;
  detail::append_array(img.bytes, o.via.array.size);
  img.signature = o.via.array.size;
  std::string field0;
  for (std::uint32_t i = 0; i < o.via.array.size; ++i) {
    const msgpack::object& f = o.via.array.ptr[i];
    std::size_t before = img.bytes.size();
    Type t = canonical_field(img.bytes, f, true, what.at_field(i));
    img.signature = add_field(img.signature, i, t);
    bool formal = f.type == msgpack::type::EXT;
    if (formal) continue;
    std::string bytes = img.bytes.substr(before);
    if (i == 0) {
      img.field0_actual = true;
      field0 = std::move(bytes);
    } else {
      img.checks.push_back({static_cast<std::uint8_t>(i), std::move(bytes)});
    }
  }
  if (img.field0_actual) img.key = index_key(img.signature, field0);
  return img;
}

std::int64_t as_int(const msgpack::object& o, const Where& what) {
  if (o.type == msgpack::type::POSITIVE_INTEGER) {
    if (o.via.u64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      reject(what.text() + " is out of range");
    return static_cast<std::int64_t>(o.via.u64);
  }
  if (o.type == msgpack::type::NEGATIVE_INTEGER) return o.via.i64;
  reject(what.text() + " must be an integer, got " + std::string(object_type_name(o)));
}

std::uint64_t as_uint(const msgpack::object& o, const Where& what) {
  if (o.type != msgpack::type::POSITIVE_INTEGER)
    reject(what.text() + " must be a non-negative integer, got " + std::string(object_type_name(o)));
  return o.via.u64;
}

std::string as_space(const msgpack::object& o, std::string_view op) {
  Where what{op, "space name"};
  if (o.type != msgpack::type::STR)
    reject(what.text() + " must be a str, got " + std::string(object_type_name(o)));
  if (o.via.str.size == 0 || o.via.str.size > kMaxSpaceNameBytes)
    reject(what.text() + " must be 1.." + std::to_string(kMaxSpaceNameBytes) + " bytes");
  return std::string(o.via.str.ptr, o.via.str.size);
}

struct OpInfo {
  std::string_view name;
  Op op;
  std::uint32_t min_args, max_args;
};

constexpr OpInfo kOps[] = {
    {"hello", Op::Hello, 0, 1},     {"out", Op::Out, 2, 2},        {"out_many", Op::OutMany, 2, 2},
    {"in", Op::In, 4, 4},           {"rd", Op::Rd, 4, 4},          {"in_many", Op::InMany, 3, 5},
    {"ack", Op::Ack, 1, 3},         {"renew", Op::Renew, 2, 2},    {"watch", Op::Watch, 2, 2},
    {"unwatch", Op::Unwatch, 1, 1}, {"remove", Op::Remove, 1, 1},  {"stats", Op::Stats, 0, 1},
    {"bye", Op::Bye, 0, 0},         {"rd_many", Op::RdMany, 3, 3},
};

// The tuples of out_many and of a completing ack: an array of 0..kMaxTuplesPerRequest tuples.
std::vector<TupleImage> tuple_list(const msgpack::object& o, std::string_view op) {
  if (o.type != msgpack::type::ARRAY)
    reject(std::string(op) + ": tuples must be an array, got " + std::string(object_type_name(o)));
  if (o.via.array.size > kMaxTuplesPerRequest)
    reject(std::string(op) + ": more than " + std::to_string(kMaxTuplesPerRequest) + " tuples");
  std::vector<TupleImage> tuples;
  tuples.reserve(o.via.array.size);
  for (std::uint32_t i = 0; i < o.via.array.size; ++i)
    tuples.push_back(tuple_image(o.via.array.ptr[i], {op, {}, i}));
  return tuples;
}

std::uint64_t batch_max(const msgpack::object& o, std::string_view op) {
  std::uint64_t max = as_uint(o, {op, "max"});
  if (max < 1 || max > kMaxTuplesPerRequest)
    reject(std::string(op) + ": max must be 1.." + std::to_string(kMaxTuplesPerRequest));
  return max;
}

Request parse(const msgpack::object& top, std::uint64_t& rid_out) {
  if (top.type != msgpack::type::ARRAY)
    reject("request must be an array, got " + std::string(object_type_name(top)));
  const auto& a = top.via.array;
  if (a.size < 3) reject("request must be [version, request_id, op, args...]");
  std::int64_t version = as_int(a.ptr[0], {"version"});
  Request r;
  r.id = rid_out = as_uint(a.ptr[1], {"request_id"});
  if (version != kProtocolVersion)
    reject("protocol version " + std::to_string(version) + " is not supported; this server speaks " +
               std::to_string(kProtocolVersion),
           Code::UnsupportedVersion);
  if (a.ptr[2].type != msgpack::type::STR) reject("op must be a str");
  std::string_view name(a.ptr[2].via.str.ptr, a.ptr[2].via.str.size);
  const OpInfo* info = nullptr;
  for (const auto& o : kOps)
    if (o.name == name) info = &o;
  if (!info) reject("unknown op \"" + std::string(name.substr(0, 64)) + "\"", Code::UnknownOp);
  r.op = info->op;
  std::uint32_t nargs = a.size - 3;
  if (r.op == Op::Ack && nargs == 2)
    reject("ack: expected 1 argument (lease_id) or 3 (lease_id, space, tuples), got 2");
  if (nargs < info->min_args || nargs > info->max_args)
    reject(std::string(name) + ": expected " + std::to_string(info->min_args) +
           (info->min_args == info->max_args ? "" : ".." + std::to_string(info->max_args)) +
           " arguments, got " + std::to_string(nargs));
  const msgpack::object* arg = a.ptr + 3;
  switch (r.op) {
    case Op::Hello:
      if (nargs == 1) {
        if (arg[0].type != msgpack::type::BOOLEAN) reject("hello: served_first must be a bool");
        r.served_first = arg[0].via.boolean;
      }
      break;
    case Op::Bye: break;
    case Op::Out:
      r.space = as_space(arg[0], name);
      r.tuples.push_back(tuple_image(arg[1], {"out: tuple"}));
      break;
    case Op::OutMany:
      r.space = as_space(arg[0], name);
      r.tuples = tuple_list(arg[1], name);
      break;
    case Op::In:
    case Op::Rd:
      r.space = as_space(arg[0], name);
      r.tmpl = template_image(arg[1], {name, "template"});
      r.timeout = as_int(arg[2], {name, "timeout_ms"});
      if (r.timeout < -1) reject(std::string(name) + ": timeout_ms must be -1 (forever) or >= 0");
      r.lease = as_int(arg[3], {name, "lease_ms"});
      if (r.lease < 0) reject(std::string(name) + ": lease_ms must be >= 0");
      if (r.op == Op::Rd && r.lease != 0) reject("rd: a lease applies only to in");
      break;
    case Op::InMany:
    case Op::RdMany:
      r.space = as_space(arg[0], name);
      r.tmpl = template_image(arg[1], {name, "template"});
      r.max = batch_max(arg[2], name);
      r.timeout = 0;     // in_many waits only when asked to
      if (nargs >= 4) {  // in_many's optional lease_ms
        r.lease = as_int(arg[3], {"in_many: lease_ms"});
        if (r.lease < 0) reject("in_many: lease_ms must be >= 0");
      }
      if (nargs == 5) {  // and its optional timeout_ms
        r.timeout = as_int(arg[4], {"in_many: timeout_ms"});
        if (r.timeout < -1) reject("in_many: timeout_ms must be -1 (forever) or >= 0");
      }
      break;
    case Op::Ack:
      if (arg[0].type == msgpack::type::ARRAY) {  // many leases, all or none
        const auto& ids = arg[0].via.array;
        if (ids.size == 0 || ids.size > kMaxTuplesPerRequest)
          reject("ack: an array of lease ids must hold 1 to " + std::to_string(kMaxTuplesPerRequest) +
                 " of them");
        for (std::uint32_t i = 0; i < ids.size; ++i)
          r.leases.push_back(as_uint(ids.ptr[i], {"ack: lease_id"}));
        r.handle = r.leases.front();
      } else {
        r.handle = as_uint(arg[0], {"ack: lease_id"});
      }
      if (nargs == 3) {  // the completing ack: also writes tuples
        r.completes = true;
        r.space = as_space(arg[1], name);
        r.tuples = tuple_list(arg[2], name);
      }
      break;
    case Op::Renew:
      r.handle = as_uint(arg[0], {"renew: lease_id"});
      r.lease = as_int(arg[1], {"renew: lease_ms"});
      if (r.lease <= 0) reject("renew: lease_ms must be > 0");
      break;
    case Op::Watch:
      r.space = as_space(arg[0], name);
      r.tmpl = template_image(arg[1], {"watch: template"});
      break;
    case Op::Unwatch: r.handle = as_uint(arg[0], {"unwatch: watch_id"}); break;
    case Op::Remove: r.space = as_space(arg[0], name); break;
    case Op::Stats:
      if (nargs == 1) {
        r.space = as_space(arg[0], name);
        r.all_spaces = false;
      }
      break;
  }
  return r;
}

// Begins a reply frame: [version, rid, status, ...] with `extra` payload items.
void begin(std::string& out, detail::StringStream& st, std::uint64_t rid, std::string_view status,
           std::size_t extra) {
  detail::append_array(out, 3 + extra);
  detail::append_int(out, kProtocolVersion);
  detail::Packer(st).pack_uint64(rid);
  detail::append_str(out, status);
}

void begin_request(std::string& out, std::uint64_t rid, std::string_view op, std::size_t nargs) {
  out.clear();
  detail::append_array(out, 3 + nargs);
  detail::append_int(out, kProtocolVersion);
  detail::StringStream st{&out};
  detail::Packer(st).pack_uint64(rid);
  detail::append_str(out, op);
}

}  // namespace

std::string_view op_name(Op op) {
  for (const auto& o : kOps)
    if (o.op == op) return o.name;
  return "?";
}

std::variant<Request, DecodeFailure> decode_request(std::string_view frame) {
  std::uint64_t rid = 0;
  try {
    // Limits keep a hostile frame from making the unpacker allocate wildly.
    msgpack::unpack_limit limit(kMaxTuplesPerRequest + 8, 0, frame.size(), frame.size(), 16, 4);
    std::size_t off = 0;
    // One zone per thread, emptied for each frame, rather than a new 8 KB
    // zone per frame: parse() copies what it keeps out of it.
    thread_local msgpack::zone zone;
    zone.clear();
    msgpack::object top = msgpack::unpack(
        zone, frame.data(), frame.size(), off,
        [](msgpack::type::object_type, std::size_t, void*) { return true; }, nullptr, limit);
    if (off != frame.size())
      return DecodeFailure{0, Code::BadRequest,
                           "trailing " + std::to_string(frame.size() - off) + " bytes after the request"};
    return parse(top, rid);
  } catch (const Reject& r) {
    return DecodeFailure{rid, r.code, r.message};
  } catch (const msgpack::insufficient_bytes&) {
    return DecodeFailure{0, Code::BadRequest, "malformed msgpack: truncated"};
  } catch (const msgpack::unpack_error& e) {
    return DecodeFailure{0, Code::BadRequest, std::string("malformed msgpack: ") + e.what()};
  } catch (const std::exception& e) {
    return DecodeFailure{0, Code::BadRequest, std::string("undecodable request: ") + e.what()};
  }
}

void encode_ok(std::string& out, std::uint64_t rid) {
  detail::StringStream st{&out};
  begin(out, st, rid, "ok", 0);
}

void encode_ok_count(std::string& out, std::uint64_t rid, std::uint64_t n) {
  detail::StringStream st{&out};
  begin(out, st, rid, "ok", 1);
  detail::Packer(st).pack_uint64(n);
}

void encode_ok_tuple(std::string& out, std::uint64_t rid, std::string_view tuple, LeaseId lease) {
  detail::StringStream st{&out};
  begin(out, st, rid, "ok", 2);
  detail::Packer pk(st);
  out.append(tuple);
  pk.pack_uint64(lease);
}

void encode_ok_tuples(std::string& out, std::uint64_t rid, const std::vector<std::string>& tuples) {
  detail::StringStream st{&out};
  begin(out, st, rid, "ok", 1);
  detail::append_array(out, tuples.size());
  for (const auto& t : tuples) out.append(t);
}

void encode_ok_one_of_many(std::string& out, std::uint64_t rid, std::string_view tuple, LeaseId lease) {
  detail::StringStream st{&out};
  begin(out, st, rid, "ok", lease > 0 ? 2 : 1);
  detail::append_array(out, 1);
  out.append(tuple);
  if (lease == 0) return;
  detail::append_array(out, 1);
  detail::append_uint(out, lease);
}

void encode_ok_leased_tuples(std::string& out, std::uint64_t rid, const std::vector<Taken>& taken) {
  detail::StringStream st{&out};
  begin(out, st, rid, "ok", 2);
  detail::append_array(out, taken.size());
  for (const auto& t : taken) out.append(t.tuple);
  detail::append_array(out, taken.size());
  for (const auto& t : taken) detail::append_uint(out, t.lease);
}

void encode_ok_stats(std::string& out, std::uint64_t rid, const std::vector<SpaceStats>& stats) {
  detail::StringStream st{&out};
  begin(out, st, rid, "ok", 1);
  detail::Packer pk(st);
  detail::append_array(out, stats.size());
  for (const auto& s : stats) {
    pk.pack_map(6);
    detail::append_str(out, "name");
    detail::append_str(out, s.name);
    std::pair<std::string_view, std::uint64_t> fields[] = {{"tuples", s.tuples},
                                                           {"bytes", s.bytes},
                                                           {"waiters", s.waiters},
                                                           {"leases", s.leases},
                                                           {"watches", s.watches}};
    for (auto& [k, v] : fields) {
      detail::append_str(out, k);
      pk.pack_uint64(v);
    }
  }
}

void encode_ok_hello(std::string& out, std::uint64_t rid, std::size_t max_message_bytes,
                     std::string_view pool_name, std::string_view pool_id) {
  detail::StringStream st{&out};
  begin(out, st, rid, "ok", pool_name.empty() ? 3 : 5);
  detail::Packer pk(st);
  pk.pack_int64(kProtocolVersion);
  pk.pack_uint64(max_message_bytes);
  pk.pack_uint64(kMaxFields);
  if (pool_name.empty()) return;
  detail::append_str(out, pool_name);
  detail::append_str(out, pool_id);
}

void encode_timeout(std::string& out, std::uint64_t rid) {
  detail::StringStream st{&out};
  begin(out, st, rid, "timeout", 0);
}

void encode_error(std::string& out, std::uint64_t rid, Code code, std::string_view message) {
  detail::StringStream st{&out};
  begin(out, st, rid, "error", 2);
  detail::append_str(out, code_to_wire(code));
  detail::append_str(out, message);
}

void encode_event(std::string& out, WatchId watch, WatchEventKind kind, std::string_view space,
                  std::string_view tuple) {
  detail::StringStream st{&out};
  begin(out, st, 0, "event", 4);
  detail::Packer pk(st);
  pk.pack_uint64(watch);
  detail::append_str(out, kind == WatchEventKind::Written ? "written" : "taken");
  detail::append_str(out, space);
  out.append(tuple);
}

void encode_hello(std::string& out, std::uint64_t rid, bool served_first) {
  begin_request(out, rid, "hello", served_first ? 1 : 0);
  if (served_first) detail::append_bool(out, true);
}

void encode_bye(std::string& out, std::uint64_t rid) {
  begin_request(out, rid, "bye", 0);
}

void encode_out(std::string& out, std::uint64_t rid, std::string_view space, const Tuple& t) {
  begin_request(out, rid, "out", 2);
  detail::append_str(out, space);
  detail::append_tuple(out, t);
}

void encode_out_many(std::string& out, std::uint64_t rid, std::string_view space,
                     const std::vector<Tuple>& ts) {
  begin_request(out, rid, "out_many", 2);
  detail::append_str(out, space);
  detail::append_array(out, ts.size());
  for (const auto& t : ts) detail::append_tuple(out, t);
}

void encode_in(std::string& out, std::uint64_t rid, Op op, std::string_view space, const Template& t,
               Millis timeout, Millis lease) {
  begin_request(out, rid, op == Op::Rd ? "rd" : "in", 4);
  detail::append_str(out, space);
  detail::append_template(out, t);
  detail::append_int(out, timeout);
  detail::append_int(out, lease);
}

void encode_in_many(std::string& out, std::uint64_t rid, std::string_view space, const Template& t,
                    std::uint64_t max, Millis timeout, Millis lease) {
  begin_request(out, rid, "in_many", timeout != 0 ? 5 : lease > 0 ? 4 : 3);
  detail::append_str(out, space);
  detail::append_template(out, t);
  detail::append_uint(out, max);
  if (lease > 0 || timeout != 0) detail::append_int(out, lease);
  if (timeout != 0) detail::append_int(out, timeout);
}

void encode_waiting(std::string& out, std::uint64_t rid, Op op, std::string_view space, const Template& t,
                    Millis timeout, Millis lease, std::uint64_t max) {
  if (op == Op::InMany)
    encode_in_many(out, rid, space, t, max, timeout, lease);
  else
    encode_in(out, rid, op, space, t, timeout, lease);
}

void encode_rd_many(std::string& out, std::uint64_t rid, std::string_view space, const Template& t,
                    std::uint64_t max) {
  begin_request(out, rid, "rd_many", 3);
  detail::append_str(out, space);
  detail::append_template(out, t);
  detail::append_uint(out, max);
}

void encode_ack(std::string& out, std::uint64_t rid, LeaseId lease) {
  begin_request(out, rid, "ack", 1);
  detail::append_uint(out, lease);
}

void encode_complete(std::string& out, std::uint64_t rid, LeaseId lease, std::string_view space,
                     const std::vector<Tuple>& ts) {
  begin_request(out, rid, "ack", 3);
  detail::append_uint(out, lease);
  detail::append_str(out, space);
  detail::append_array(out, ts.size());
  for (const auto& t : ts) detail::append_tuple(out, t);
}

void encode_complete_all(std::string& out, std::uint64_t rid, const std::vector<LeaseId>& leases,
                         std::string_view space, const std::vector<Tuple>& ts) {
  begin_request(out, rid, "ack", 3);
  detail::append_array(out, leases.size());
  for (LeaseId l : leases) detail::append_uint(out, l);
  detail::append_str(out, space);
  detail::append_array(out, ts.size());
  for (const auto& t : ts) detail::append_tuple(out, t);
}

void encode_renew(std::string& out, std::uint64_t rid, LeaseId lease, Millis duration) {
  begin_request(out, rid, "renew", 2);
  detail::append_uint(out, lease);
  detail::append_int(out, duration);
}

void encode_watch(std::string& out, std::uint64_t rid, std::string_view space, const Template& t) {
  begin_request(out, rid, "watch", 2);
  detail::append_str(out, space);
  detail::append_template(out, t);
}

void encode_unwatch(std::string& out, std::uint64_t rid, WatchId watch) {
  begin_request(out, rid, "unwatch", 1);
  detail::append_uint(out, watch);
}

void encode_remove(std::string& out, std::uint64_t rid, std::string_view space) {
  begin_request(out, rid, "remove", 1);
  detail::append_str(out, space);
}

void encode_stats(std::string& out, std::uint64_t rid, std::string_view space) {
  begin_request(out, rid, "stats", space.empty() ? 0 : 1);
  if (!space.empty()) detail::append_str(out, space);
}

namespace {

Tuple tuple_from(const msgpack::object& o) {
  return detail::tuple_from_object(o);
}

std::string str_of(const msgpack::object& o) {
  if (o.type != msgpack::type::STR) throw WireError("reply: expected a str");
  return std::string(o.via.str.ptr, o.via.str.size);
}

}  // namespace

Reply decode_reply(std::string_view frame) {
  try {
    // Counts can never exceed the frame's size; the limit stops a corrupt
    // frame from making the unpacker allocate gigabytes.
    std::size_t n_max = frame.size();
    msgpack::unpack_limit limit(n_max, n_max, n_max, n_max, n_max, 8);
    std::size_t off = 0;
    // Strs and bins refer into the frame rather than being copied into the
    // unpacker's zone: the reply's tuples are built from them before the
    // frame goes (a piranha's first rd_many of a matrix is megabytes).
    msgpack::object_handle oh = msgpack::unpack(
        frame.data(), frame.size(), off, [](msgpack::type::object_type, std::size_t, void*) { return true; },
        nullptr, limit);
    const msgpack::object& top = oh.get();
    if (top.type != msgpack::type::ARRAY || top.via.array.size < 3)
      throw WireError("reply is not [v, rid, status, ...]");
    const msgpack::object* a = top.via.array.ptr;
    std::uint32_t n = top.via.array.size;
    Reply r;
    r.request_id = a[1].as<std::uint64_t>();
    std::string status = str_of(a[2]);
    if (status == "ok") {
      r.status = Reply::Status::Ok;
      if (n == 5 && a[3].type == msgpack::type::ARRAY && a[4].type == msgpack::type::POSITIVE_INTEGER) {
        r.tuples.push_back(tuple_from(a[3]));  // in / rd
        r.number = a[4].via.u64;
      } else if (n == 5 && a[3].type == msgpack::type::ARRAY && a[4].type == msgpack::type::ARRAY) {
        // in_many under a lease: tuples and their lease ids, in step.
        if (a[3].via.array.size != a[4].via.array.size)
          throw WireError("reply: " + std::to_string(a[3].via.array.size) + " tuples but " +
                          std::to_string(a[4].via.array.size) + " lease ids");
        for (std::uint32_t i = 0; i < a[3].via.array.size; ++i) {
          r.tuples.push_back(tuple_from(a[3].via.array.ptr[i]));
          r.leases.push_back(a[4].via.array.ptr[i].as<std::uint64_t>());
        }
      } else if (n == 4 && a[3].type == msgpack::type::ARRAY) {
        for (std::uint32_t i = 0; i < a[3].via.array.size; ++i) {
          const msgpack::object& e = a[3].via.array.ptr[i];
          if (e.type == msgpack::type::MAP) {
            SpaceStats s;
            for (std::uint32_t k = 0; k < e.via.map.size; ++k) {
              std::string key = str_of(e.via.map.ptr[k].key);
              const msgpack::object& v = e.via.map.ptr[k].val;
              if (key == "name")
                s.name = str_of(v);
              else if (key == "tuples")
                s.tuples = v.as<std::uint64_t>();
              else if (key == "bytes")
                s.bytes = v.as<std::uint64_t>();
              else if (key == "waiters")
                s.waiters = v.as<std::uint64_t>();
              else if (key == "leases")
                s.leases = v.as<std::uint64_t>();
              else if (key == "watches")
                s.watches = v.as<std::uint64_t>();
            }
            r.stats.push_back(std::move(s));
          } else {
            r.tuples.push_back(tuple_from(e));
          }
        }
      } else if (n == 6 || n == 8) {  // hello: version, max_message_bytes, max_fields[, pool name, id]
        r.number = a[3].as<std::uint64_t>();
        r.max_message_bytes = a[4].as<std::uint64_t>();
        if (n == 8) {
          r.pool_name = str_of(a[6]);
          r.pool_id = str_of(a[7]);
        }
      } else if (n >= 4 && a[3].type == msgpack::type::POSITIVE_INTEGER) {
        r.number = a[3].via.u64;
      }
    } else if (status == "timeout") {
      r.status = Reply::Status::Timeout;
    } else if (status == "error") {
      r.status = Reply::Status::Error;
      r.code = Code::Unrecognized;
      if (n >= 5) {
        std::string word = str_of(a[3]);
        r.code = code_from_wire(word);
        r.message = str_of(a[4]);
        // A newer server's code: the word is kept for whoever reads the message.
        if (r.code == Code::Unrecognized) r.message = word + ": " + r.message;
      }
    } else if (status == "event") {
      r.status = Reply::Status::Event;
      if (n != 7) throw WireError("event has " + std::to_string(n) + " items, expected 7");
      r.number = a[3].as<std::uint64_t>();
      r.event = str_of(a[4]) == "taken" ? WatchEventKind::Taken : WatchEventKind::Written;
      r.space = str_of(a[5]);
      r.tuples.push_back(tuple_from(a[6]));
    } else {
      throw WireError("reply has unknown status \"" + status + "\"");
    }
    return r;
  } catch (const WireError&) {
    throw;
  } catch (const std::exception& e) {
    throw WireError(std::string("malformed reply: ") + e.what());
  }
}

}  // namespace piranha::ts
