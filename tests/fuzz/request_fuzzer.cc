// libFuzzer target for the server's request decoder.
//
// Every input is one request frame. decode_request must return, never crash,
// leak or hang; what it returns must be self-consistent:
//  - a DecodeFailure carries a decoder error code and a non-empty message,
//    and survives an error reply round trip;
//  - a Request's tuple images are canonical (re-encoding the decoded tuple
//    gives the same bytes), agree with describe_tuple, and match templates
//    built from them;
//  - a Request's template image agrees with image_of() of the template it
//    denotes, and matches a tuple built from it;
//  - re-encoding the Request with the client encoders decodes to the same
//    Request, and the server's reply encoders decode with decode_reply.
// Then the authenticated path: the Request goes to the pool's access policy
// (piranha/access/pool_access.h) as each role's session, against a store holding
// a pool's records, with and without leases it would end on the counter or
// a job's record. The policy must answer without throwing, refuse with a
// reason naming which key may not do what, let an admin do anything, and ask the
// server to write nothing but the owner of a job id taken from the counter.
// A violated property aborts with a message, so libFuzzer saves the input.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "piranha/access/pool_access.h"
#include "piranha/tuplespace/protocol.h"

namespace ts = piranha::ts;
namespace sys = piranha::sys;
namespace rights = piranha::rights;

namespace {

[[noreturn]] void fail(const char* what, const std::string& detail = "") {
  std::fprintf(stderr, "request_fuzzer: property violated: %s %s\n", what, detail.c_str());
  std::abort();
}

#define REQUIRE(cond, ...)                               \
  do {                                                   \
    if (!(cond)) fail(#cond __VA_OPT__(, ) __VA_ARGS__); \
  } while (0)

bool is_formal_bytes(std::string_view field) {
  return field.size() == 3 && static_cast<unsigned char>(field[0]) == 0xd4;
}

// The single value held by canonical field bytes.
ts::Value value_of(std::string_view field) {
  std::string one = "\x91";
  one.append(field);
  return ts::decode_tuple(one)[0];
}

// Doubles that byte equality and Template::matches treat differently: the
// store compares canonical bytes (NaN payloads are distinct values, -0.0 is
// not 0.0); Template::matches compares with ==.
bool value_compares_unlike_bytes(const ts::Value& v) {
  if (ts::type_of(v) != ts::Type::Double) return false;
  double d = std::get<double>(v);
  return std::isnan(d) || d == 0.0;
}

// The Template an image denotes, rebuilt from its bytes.
ts::Template template_of(const ts::TemplateImage& img, bool& value_caveat) {
  std::string_view fields[ts::kMaxFields];
  std::size_t n = ts::split_fields(img.bytes, fields, ts::kMaxFields);
  std::vector<ts::Field> out;
  for (std::size_t i = 0; i < n; ++i) {
    if (is_formal_bytes(fields[i])) {
      out.push_back(ts::Field::formal(static_cast<ts::Type>(fields[i][2])));
    } else {
      ts::Value v = value_of(fields[i]);
      value_caveat |= value_compares_unlike_bytes(v);
      out.push_back(ts::Field::of(std::move(v)));
    }
  }
  return ts::Template(std::move(out));
}

// A tuple the template must match: its actuals, and a value of the right type
// in place of each formal.
ts::Tuple witness_of(const ts::Template& t) {
  std::vector<ts::Value> v;
  for (const auto& f : t.fields()) {
    if (f.actual) {
      v.push_back(*f.actual);
      continue;
    }
    switch (f.type) {
      case ts::Type::Int: v.emplace_back(std::int64_t{-12345}); break;
      case ts::Type::Double: v.emplace_back(0.25); break;
      case ts::Type::String: v.emplace_back(std::string("w")); break;
      case ts::Type::Blob: v.emplace_back(ts::Blob("w")); break;
      case ts::Type::Bool: v.emplace_back(true); break;
    }
  }
  return ts::Tuple(std::move(v));
}

void same_template(const ts::TemplateImage& a, const ts::TemplateImage& b) {
  REQUIRE(a.bytes == b.bytes);
  REQUIRE(a.signature == b.signature);
  REQUIRE(a.field0_actual == b.field0_actual);
  REQUIRE(a.key == b.key);
  REQUIRE(a.checks.size() == b.checks.size());
  for (std::size_t i = 0; i < a.checks.size(); ++i) {
    REQUIRE(a.checks[i].position == b.checks[i].position);
    REQUIRE(a.checks[i].bytes == b.checks[i].bytes);
  }
}

void check_tuple_image(const ts::TupleImage& img) {
  ts::TupleImage described = ts::describe_tuple(img.bytes);
  REQUIRE(described.signature == img.signature);
  REQUIRE(described.key == img.key);

  ts::Tuple t = ts::decode_tuple(img.bytes);
  REQUIRE(t.size() >= 1 && t.size() <= ts::kMaxFields);
  REQUIRE(ts::image_of(t).bytes == img.bytes, "tuple image is not canonical");

  // The all-actual and all-formal templates of a tuple both match it.
  std::vector<ts::Field> actuals, formals;
  bool caveat = false;
  for (const auto& v : t.fields()) {
    caveat |= value_compares_unlike_bytes(v);
    actuals.push_back(ts::Field::of(v));
    formals.push_back(ts::Field::formal(ts::type_of(v)));
  }
  ts::Template exact(actuals), shape(formals);
  REQUIRE(ts::matches(ts::image_of(exact), img.bytes));
  REQUIRE(ts::matches(ts::image_of(shape), img.bytes));
  REQUIRE(shape.matches(t));
  if (!caveat) REQUIRE(exact.matches(t));
  // One field longer or shorter never matches.
  if (t.size() < ts::kMaxFields) {
    formals.push_back(ts::Field::formal(ts::Type::Int));
    REQUIRE(!ts::matches(ts::image_of(ts::Template(formals)), img.bytes));
    formals.pop_back();
  }
  if (t.size() > 1) {
    formals.pop_back();
    REQUIRE(!ts::matches(ts::image_of(ts::Template(formals)), img.bytes));
  }
  // The store's bytes go back to clients in replies and events.
  std::string frame;
  ts::encode_ok_tuple(frame, 7, img.bytes, 3);
  ts::Reply r = ts::decode_reply(frame);
  REQUIRE(r.status == ts::Reply::Status::Ok && r.request_id == 7 && r.number == 3);
  REQUIRE(r.tuples.size() == 1 && ts::image_of(r.tuples[0]).bytes == img.bytes);
  frame.clear();
  ts::encode_event(frame, 9, ts::WatchEventKind::Taken, "s", img.bytes);
  r = ts::decode_reply(frame);
  REQUIRE(r.status == ts::Reply::Status::Event && r.number == 9 && r.space == "s");
  REQUIRE(r.event == ts::WatchEventKind::Taken);
  REQUIRE(r.tuples.size() == 1 && ts::image_of(r.tuples[0]).bytes == img.bytes);
}

void check_template_image(const ts::TemplateImage& img) {
  std::string_view fields[ts::kMaxFields];
  std::size_t n = ts::split_fields(img.bytes, fields, ts::kMaxFields);
  REQUIRE(n == (img.signature & 0x1f));
  bool caveat = false;
  ts::Template t = template_of(img, caveat);
  same_template(ts::image_of(t), img);
  REQUIRE(img.field0_actual == !is_formal_bytes(fields[0]));

  ts::Tuple w = witness_of(t);
  ts::TupleImage wi = ts::image_of(w);
  REQUIRE(wi.signature == img.signature);
  REQUIRE(ts::matches(img, wi.bytes), "template does not match its witness");
  if (!caveat) REQUIRE(t.matches(w));
  if (img.field0_actual) REQUIRE(wi.key == img.key);
  // A template never matches a tuple whose field types differ.
  std::vector<ts::Value> flipped = w.fields();
  flipped.back() =
      ts::type_of(flipped.back()) == ts::Type::Bool ? ts::Value(std::int64_t{0}) : ts::Value(false);
  REQUIRE(!ts::matches(img, ts::image_of(ts::Tuple(flipped)).bytes));
}

std::vector<ts::Tuple> tuples_of(const ts::Request& r) {
  std::vector<ts::Tuple> out;
  for (const auto& img : r.tuples) out.push_back(ts::decode_tuple(img.bytes));
  return out;
}

// Re-encodes `r` with the client encoders. False when the encoders cannot
// express it: handles above INT64_MAX, which the decoder accepts but the
// encoders write as signed integers (lease and watch ids are small counters).
bool reencode(const ts::Request& r, std::string& out) {
  bool c = false;
  switch (r.op) {
    case ts::Op::Hello: ts::encode_hello(out, r.id); break;
    case ts::Op::Out: ts::encode_out(out, r.id, r.space, tuples_of(r).at(0)); break;
    case ts::Op::OutMany: ts::encode_out_many(out, r.id, r.space, tuples_of(r)); break;
    case ts::Op::In:
    case ts::Op::Rd:
      ts::encode_in(out, r.id, r.op, r.space, template_of(r.tmpl, c), r.timeout, r.lease);
      break;
    case ts::Op::InMany:
      ts::encode_in_many(out, r.id, r.space, template_of(r.tmpl, c), r.max, r.timeout, r.lease);
      break;
    case ts::Op::RdMany: ts::encode_rd_many(out, r.id, r.space, template_of(r.tmpl, c), r.max); break;
    case ts::Op::Bye: ts::encode_bye(out, r.id); break;
    case ts::Op::Watch: ts::encode_watch(out, r.id, r.space, template_of(r.tmpl, c)); break;
    case ts::Op::Ack:
    case ts::Op::Renew:
    case ts::Op::Unwatch:
      if (r.handle > static_cast<std::uint64_t>(INT64_MAX)) return false;
      if (r.op == ts::Op::Ack && r.completes)
        ts::encode_complete(out, r.id, r.handle, r.space, tuples_of(r));
      else if (r.op == ts::Op::Ack)
        ts::encode_ack(out, r.id, r.handle);
      else if (r.op == ts::Op::Renew)
        ts::encode_renew(out, r.id, r.handle, r.lease);
      else
        ts::encode_unwatch(out, r.id, r.handle);
      break;
    case ts::Op::Remove: ts::encode_remove(out, r.id, r.space); break;
    case ts::Op::Stats: ts::encode_stats(out, r.id, r.all_spaces ? "" : r.space); break;
  }
  return true;
}

void check_request(const ts::Request& r) {
  REQUIRE(ts::op_name(r.op) != "?");
  bool has_space = r.op != ts::Op::Hello && r.op != ts::Op::Bye && r.op != ts::Op::Renew &&
                   r.op != ts::Op::Unwatch && !(r.op == ts::Op::Ack && !r.completes) &&
                   !(r.op == ts::Op::Stats && r.all_spaces);
  REQUIRE(r.completes ? r.op == ts::Op::Ack : true);
  REQUIRE(has_space == !r.space.empty());
  REQUIRE(r.space.size() <= ts::kMaxSpaceNameBytes);
  REQUIRE(r.tuples.size() <= ts::kMaxTuplesPerRequest);
  REQUIRE(r.op == ts::Op::Out ? r.tuples.size() == 1 : true);
  REQUIRE(r.timeout >= ts::kForever.count() && r.lease >= 0);
  REQUIRE(r.op == ts::Op::Rd ? r.lease == 0 : true);

  for (const auto& img : r.tuples) check_tuple_image(img);
  bool has_template = r.op == ts::Op::In || r.op == ts::Op::Rd || r.op == ts::Op::InMany ||
                      r.op == ts::Op::RdMany || r.op == ts::Op::Watch;
  if (has_template) check_template_image(r.tmpl);

  std::string again;
  if (!reencode(r, again)) return;
  auto decoded = ts::decode_request(again);
  if (auto* f = std::get_if<ts::DecodeFailure>(&decoded))
    fail("re-encoded request does not decode:", f->message);
  const ts::Request& q = std::get<ts::Request>(decoded);
  REQUIRE(q.id == r.id && q.op == r.op && q.space == r.space && q.all_spaces == r.all_spaces);
  REQUIRE(q.completes == r.completes);
  REQUIRE(q.timeout == r.timeout && q.lease == r.lease && q.max == r.max && q.handle == r.handle);
  REQUIRE(q.tuples.size() == r.tuples.size());
  for (std::size_t i = 0; i < q.tuples.size(); ++i) REQUIRE(q.tuples[i].bytes == r.tuples[i].bytes);
  if (has_template) same_template(q.tmpl, r.tmpl);
}

void check_failure(const ts::DecodeFailure& f) {
  // The decoder itself produces only these; the others come from the server.
  REQUIRE(f.code == ts::Code::BadRequest || f.code == ts::Code::UnsupportedVersion ||
          f.code == ts::Code::UnknownOp);
  REQUIRE(!f.message.empty());
  std::string frame;
  ts::encode_error(frame, f.request_id, f.code, f.message);
  ts::Reply r = ts::decode_reply(frame);
  REQUIRE(r.status == ts::Reply::Status::Error && r.request_id == f.request_id);
  REQUIRE(r.code == f.code && r.message == f.message);
}

// ---- The authenticated path.

const std::string kSys(sys::kSpace);

std::vector<rights::Principal> principals() {
  using rights::Role;
  return {{"root", Role::Admin, "", {}}, {"nps", Role::Scheduler, "", {}},  {"ws01", Role::Agent, "ws01", {}},
          {"alice", Role::Job, "", {}},  {"bob", Role::Job, "", {"bob.*"}}, {"pat", Role::Owner, "ws01", {}}};
}

// A pool's records: job 3 alice's and running, job 4 bob's and done, the counter.
const ts::Store& pool_store() {
  static ts::Store* store = [] {
    auto* s = new ts::Store;
    for (const auto& t :
         {sys::JobRecord{3, "cmatrix", "job.3", 1.0, sys::JobState::Running}.to_tuple(),
          sys::JobOwner{3, "alice"}.to_tuple(),
          sys::JobRecord{4, "spin", "job.4", 1.0, sys::JobState::Done}.to_tuple(),
          sys::JobOwner{4, "bob"}.to_tuple(), ts::Tuple::of("jobseq", 5), ts::Tuple::of("jobseq.created")})
      s->out(kSys, ts::image_of(t), 0);
    return s;
  }();
  return *store;
}

void check_access(const ts::Request& r) {
  static auto policy = rights::make_pool_access(principals());
  const std::string counter = ts::image_of(ts::Tuple::of("jobseq", 5)).bytes;
  const std::string job =
      ts::image_of(sys::JobRecord{3, "cmatrix", "job.3", 1.0, sys::JobState::Running}.to_tuple()).bytes;
  std::vector<std::vector<ts::HeldTuple>> helds = {{}};
  if (r.op == ts::Op::Ack) {
    helds.push_back({{kSys, counter}});
    helds.push_back({{kSys, job}});
    // The request's own tuples, as if its leases held them.
    std::vector<ts::HeldTuple> own;
    for (const auto& t : r.tuples) own.push_back({r.space, t.bytes});
    if (!own.empty()) helds.push_back(own);
  }
  for (const auto& p : principals())
    for (const auto& held : helds) {
      ts::AccessVerdict v = policy->decide(ts::AccessQuery{p.name, r, held}, pool_store());
      REQUIRE(v.reason.rfind("the request could not be judged", 0) != 0, v.reason);
      REQUIRE(v.allowed == v.reason.empty(), v.reason);
      if (p.role == rights::Role::Admin) REQUIRE(v.allowed, v.reason);
      if (!v.allowed)
        REQUIRE(
            v.reason.rfind("key \"" + p.name + "\" (role " + std::string(rights::name(p.role)) + ") may not ",
                           0) == 0,
            v.reason);
      for (const auto& [space, t] : v.also_write) {
        REQUIRE(r.op == ts::Op::Ack && space == kSys);
        auto owner = sys::JobOwner::from_tuple(ts::decode_tuple(t.bytes));
        REQUIRE(owner && owner->name == p.name);
      }
    }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view frame(reinterpret_cast<const char*>(data), size);
  auto decoded = ts::decode_request(frame);
  if (auto* f = std::get_if<ts::DecodeFailure>(&decoded)) {
    check_failure(*f);
  } else {
    check_request(std::get<ts::Request>(decoded));
    check_access(std::get<ts::Request>(decoded));
  }
  return 0;
}
