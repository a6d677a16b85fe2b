#include "piranha/tuplespace/protocol.h"

#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <msgpack.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

using namespace piranha::ts;
using piranha::WireError;
using namespace std::literals;

namespace {

// Builds msgpack by hand, so that tests can send what no encoder would.
class Frame {
 public:
  Frame& array(std::uint32_t n) { return pk_.pack_array(n), *this; }
  Frame& map(std::uint32_t n) { return pk_.pack_map(n), *this; }
  Frame& i(std::int64_t v) { return pk_.pack_int64(v), *this; }
  Frame& u(std::uint64_t v) { return pk_.pack_uint64(v), *this; }
  Frame& nil() { return pk_.pack_nil(), *this; }
  Frame& str(std::string_view s) {
    pk_.pack_str(static_cast<std::uint32_t>(s.size()));
    pk_.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
    return *this;
  }
  Frame& ext(std::int8_t type, std::string_view data) {
    pk_.pack_ext(data.size(), type);
    pk_.pack_ext_body(data.data(), static_cast<std::uint32_t>(data.size()));
    return *this;
  }
  Frame& raw(std::string_view b) { return bytes_.append(b), *this; }
  // [version, request_id, op] with `nargs` arguments still to add.
  Frame& request(std::string_view op, std::uint32_t nargs, std::uint64_t rid = 42,
                 std::int64_t version = kProtocolVersion) {
    return array(3 + nargs).i(version).u(rid).str(op);
  }
  const std::string& bytes() const { return bytes_; }

 private:
  struct Sink {
    std::string* s;
    void write(const char* d, std::size_t n) { s->append(d, n); }
  };
  std::string bytes_;
  Sink sink_{&bytes_};
  msgpack::packer<Sink> pk_{sink_};
};

Request decoded(std::string_view frame) {
  auto d = decode_request(frame);
  if (auto* f = std::get_if<DecodeFailure>(&d)) FAIL("unexpected failure: ", f->code, ": ", f->message);
  return std::get<Request>(std::move(d));
}

DecodeFailure failure(std::string_view frame) {
  auto d = decode_request(frame);
  REQUIRE_MESSAGE(std::holds_alternative<DecodeFailure>(d), "the frame decoded as a request");
  return std::get<DecodeFailure>(std::move(d));
}

bool contains(std::string_view haystack, std::string_view needle) {
  return haystack.find(needle) != std::string_view::npos;
}

// Asserts the decoder rejects `frame` with `code` and a message naming `what`.
void rejects(const std::string& frame, Code code, std::string_view what) {
  DecodeFailure f = failure(frame);
  CHECK(f.code == code);
  CHECK_MESSAGE(contains(f.message, what), "message: ", f.message);
}

void same_template(const TemplateImage& got, const Template& want) {
  TemplateImage w = image_of(want);
  CHECK(got.bytes == w.bytes);
  CHECK(got.signature == w.signature);
  CHECK(got.field0_actual == w.field0_actual);
  CHECK(got.key == w.key);
  REQUIRE(got.checks.size() == w.checks.size());
  for (std::size_t i = 0; i < got.checks.size(); ++i) {
    CHECK(got.checks[i].position == w.checks[i].position);
    CHECK(got.checks[i].bytes == w.checks[i].bytes);
  }
}

void same_tuple(const TupleImage& got, const Tuple& want) {
  TupleImage w = image_of(want);
  CHECK(got.bytes == w.bytes);
  CHECK(got.signature == w.signature);
  CHECK(got.key == w.key);
  CHECK(decode_tuple(got.bytes) == want);
}

const Template kTaskTemplate({Field::of(std::string("task")), Field::formal(Type::Int),
                              Field::formal(Type::Blob), Field::of(2.5), Field::formal(Type::Bool)});
const Tuple kTask = Tuple::of("task", 7, Blob(std::string("\x00\xff", 2)), 2.5, true);

}  // namespace

TEST_CASE("every fuzz corpus frame decodes to a request or a named failure") {
  namespace fs = std::filesystem;
  const fs::path dir = PIRANHA_FUZZ_CORPUS;
  REQUIRE_MESSAGE(fs::is_directory(dir), "no fuzz corpus at ", dir.string());
  std::size_t files = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    ++files;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string frame((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string name = entry.path().filename().string();
    CAPTURE(name);
    auto d = decode_request(frame);
    if (auto* f = std::get_if<DecodeFailure>(&d)) {
      CHECK(sent_by_server(f->code));
      CHECK_FALSE(f->message.empty());
      CHECK_FALSE(name.starts_with("ok-"));  // the generator's valid frames
    } else {
      CHECK_FALSE(name.starts_with("bad-"));  // the generator's malformed frames
    }
  }
  REQUIRE_MESSAGE(files > 0, "the fuzz corpus at ", dir.string(), " is empty");
}

TEST_CASE("client encoders round-trip through decode_request") {
  std::string f;

  SUBCASE("hello") {
    encode_hello(f, 1);
    Request r = decoded(f);
    CHECK(r.op == Op::Hello);
    CHECK(r.id == 1);
    CHECK_FALSE(r.served_first);
  }
  SUBCASE("hello asking to be served first") {
    encode_hello(f, 3, true);
    Request r = decoded(f);
    CHECK(r.op == Op::Hello);
    CHECK(r.id == 3);
    CHECK(r.served_first);
  }
  SUBCASE("out") {
    encode_out(f, 2, "jobs", kTask);
    Request r = decoded(f);
    CHECK(r.op == Op::Out);
    CHECK(r.id == 2);
    CHECK(r.space == "jobs");
    REQUIRE(r.tuples.size() == 1);
    same_tuple(r.tuples[0], kTask);
  }
  SUBCASE("out with every field type and width") {
    Tuple wide = Tuple::of(std::string(300, 's'), INT64_MIN, INT64_MAX, -33, 255, 65536, -0.0, 1e300,
                           Blob(std::string(70000, 'b')), false, std::string(), Blob());
    encode_out(f, 3, std::string(kMaxSpaceNameBytes, 'n'), wide);
    Request r = decoded(f);
    CHECK(r.space.size() == kMaxSpaceNameBytes);
    REQUIRE(r.tuples.size() == 1);
    same_tuple(r.tuples[0], wide);
  }
  SUBCASE("out_many") {
    std::vector<Tuple> ts = {Tuple::of("a", 1), kTask, Tuple::of(3.5)};
    encode_out_many(f, 4, "jobs", ts);
    Request r = decoded(f);
    CHECK(r.op == Op::OutMany);
    CHECK(r.space == "jobs");
    REQUIRE(r.tuples.size() == ts.size());
    for (std::size_t i = 0; i < ts.size(); ++i) same_tuple(r.tuples[i], ts[i]);
  }
  SUBCASE("in with a lease") {
    encode_in(f, 5, Op::In, "jobs", kTaskTemplate, 0, 30000);
    Request r = decoded(f);
    CHECK(r.op == Op::In);
    CHECK(r.space == "jobs");
    same_template(r.tmpl, kTaskTemplate);
    CHECK(r.timeout == 0);
    CHECK(r.lease == 30000);
  }
  SUBCASE("rd forever with a formal field 0") {
    Template t({Field::formal(Type::String), Field::of(std::int64_t{3})});
    encode_in(f, 6, Op::Rd, "jobs", t, kForever.count(), 0);
    Request r = decoded(f);
    CHECK(r.op == Op::Rd);
    same_template(r.tmpl, t);
    CHECK_FALSE(r.tmpl.field0_actual);
    CHECK(r.timeout == kForever.count());
    CHECK(r.lease == 0);
  }
  SUBCASE("in_many") {
    encode_in_many(f, 7, "jobs", kTaskTemplate, kMaxTuplesPerRequest);
    Request r = decoded(f);
    CHECK(r.op == Op::InMany);
    same_template(r.tmpl, kTaskTemplate);
    CHECK(r.max == kMaxTuplesPerRequest);
  }
  SUBCASE("ack, renew, unwatch") {
    encode_ack(f, 8, 11);
    Request a = decoded(f);
    CHECK((a.op == Op::Ack && a.handle == 11));
    encode_renew(f, 9, 12, 500);
    Request n = decoded(f);
    CHECK((n.op == Op::Renew && n.handle == 12 && n.lease == 500));
    encode_unwatch(f, 10, 13);
    Request u = decoded(f);
    CHECK((u.op == Op::Unwatch && u.handle == 13));
    encode_complete_all(f, 11, {21, 22, 23}, "piranha.sys", {Tuple::of("taken", 1)});
    Request m = decoded(f);
    CHECK((m.op == Op::Ack && m.completes && m.space == "piranha.sys" && m.tuples.size() == 1));
    CHECK(m.leases == std::vector<LeaseId>{21, 22, 23});
    CHECK(m.handle == 21);
  }
  SUBCASE("watch") {
    encode_watch(f, 11, "piranha.sys", kTaskTemplate);
    Request r = decoded(f);
    CHECK(r.op == Op::Watch);
    CHECK(r.space == "piranha.sys");
    same_template(r.tmpl, kTaskTemplate);
  }
  SUBCASE("remove and stats") {
    encode_remove(f, 12, "jobs");
    Request rm = decoded(f);
    CHECK((rm.op == Op::Remove && rm.space == "jobs"));
    encode_stats(f, 13, "");
    Request all = decoded(f);
    CHECK((all.op == Op::Stats && all.all_spaces && all.space.empty()));
    encode_stats(f, 14, "jobs");
    Request one = decoded(f);
    CHECK((one.op == Op::Stats && !one.all_spaces && one.space == "jobs"));
  }
  SUBCASE("request ids use the whole uint64 range") {
    encode_hello(f, UINT64_MAX);
    CHECK(decoded(f).id == UINT64_MAX);
  }
}

TEST_CASE("non-canonical client encodings decode to canonical images") {
  // float32 widens to float64; wide integer formats shrink; ext8 formals become fixext1.
  Request r = decoded(Frame()
                          .request("out", 2)
                          .str("j")
                          .array(3)
                          .raw("\xca\x3f\xc0\x00\x00"sv)
                          .raw("\xd3\0\0\0\0\0\0\0\x07"sv)
                          .raw("\xd0\x05"sv)
                          .bytes());
  same_tuple(r.tuples.at(0), Tuple::of(1.5, 7, 5));

  Request t = decoded(
      Frame().request("rd", 4).str("j").array(2).str("x").raw("\xc7\x01\x01\x02"sv).i(-1).i(0).bytes());
  same_template(t.tmpl, Template({Field::of(std::string("x")), Field::formal(Type::String)}));
}

TEST_CASE("server encoders round-trip through decode_reply") {
  std::string f;
  SUBCASE("ok") {
    encode_ok(f, 3);
    Reply r = decode_reply(f);
    CHECK(r.status == Reply::Status::Ok);
    CHECK(r.request_id == 3);
    CHECK(r.tuples.empty());
  }
  SUBCASE("ok with a count") {
    encode_ok_count(f, 4, 99);
    Reply r = decode_reply(f);
    CHECK(r.status == Reply::Status::Ok);
    CHECK(r.number == 99);
  }
  SUBCASE("ok with a tuple, leased or not") {
    for (LeaseId lease : {LeaseId{0}, LeaseId{17}}) {
      f.clear();
      encode_ok_tuple(f, 5, image_of(kTask).bytes, lease);
      Reply r = decode_reply(f);
      CHECK(r.status == Reply::Status::Ok);
      CHECK(r.request_id == 5);
      REQUIRE(r.tuples.size() == 1);
      CHECK(r.tuples[0] == kTask);
      CHECK(r.number == lease);
    }
  }
  SUBCASE("ok with tuples") {
    std::vector<std::string> images = {image_of(kTask).bytes, image_of(Tuple::of(1)).bytes};
    encode_ok_tuples(f, 6, images);
    Reply r = decode_reply(f);
    REQUIRE(r.tuples.size() == 2);
    CHECK(r.tuples[0] == kTask);
    CHECK(r.tuples[1] == Tuple::of(1));
    f.clear();
    encode_ok_tuples(f, 7, {});
    CHECK(decode_reply(f).tuples.empty());
  }
  SUBCASE("ok with stats") {
    std::vector<SpaceStats> stats = {{"a", 1, 2, 3, 4, 5}, {"b", 6, 7, 8, 9, 10}};
    encode_ok_stats(f, 8, stats);
    Reply r = decode_reply(f);
    REQUIRE(r.stats.size() == 2);
    for (std::size_t i = 0; i < 2; ++i) {
      CHECK(r.stats[i].name == stats[i].name);
      CHECK(r.stats[i].tuples == stats[i].tuples);
      CHECK(r.stats[i].bytes == stats[i].bytes);
      CHECK(r.stats[i].waiters == stats[i].waiters);
      CHECK(r.stats[i].leases == stats[i].leases);
      CHECK(r.stats[i].watches == stats[i].watches);
    }
  }
  SUBCASE("hello") {
    encode_ok_hello(f, 9, 1234);
    Reply r = decode_reply(f);
    CHECK(r.status == Reply::Status::Ok);
    CHECK(r.request_id == 9);
    // decode_reply keeps only the version; check the whole payload by hand.
    msgpack::object_handle oh = msgpack::unpack(f.data(), f.size());
    auto v = oh.get().as<std::vector<msgpack::object>>();
    REQUIRE(v.size() == 6);
    CHECK(v[3].as<std::int64_t>() == kProtocolVersion);
    CHECK(v[4].as<std::uint64_t>() == 1234);
    CHECK(v[5].as<std::uint64_t>() == kMaxFields);
    CHECK(r.pool_name.empty());
  }
  SUBCASE("hello of a server with a pool") {
    encode_ok_hello(f, 9, 1234, "lab", "0123abcd");
    Reply r = decode_reply(f);
    CHECK(r.max_message_bytes == 1234);
    CHECK(r.pool_name == "lab");
    CHECK(r.pool_id == "0123abcd");
  }
  SUBCASE("timeout") {
    encode_timeout(f, 10);
    Reply r = decode_reply(f);
    CHECK(r.status == Reply::Status::Timeout);
    CHECK(r.request_id == 10);
  }
  SUBCASE("error") {
    encode_error(f, 11, Code::UnknownLease, "lease 3 is unknown");
    Reply r = decode_reply(f);
    CHECK(r.status == Reply::Status::Error);
    CHECK(r.request_id == 11);
    CHECK(r.code == Code::UnknownLease);
    CHECK(r.message == "lease 3 is unknown");
  }
  SUBCASE("events") {
    for (auto kind : {WatchEventKind::Written, WatchEventKind::Taken}) {
      f.clear();
      encode_event(f, 12, kind, "jobs", image_of(kTask).bytes);
      Reply r = decode_reply(f);
      CHECK(r.status == Reply::Status::Event);
      CHECK(r.request_id == 0);
      CHECK(r.number == 12);
      CHECK(r.event == kind);
      CHECK(r.space == "jobs");
      REQUIRE(r.tuples.size() == 1);
      CHECK(r.tuples[0] == kTask);
    }
  }
  SUBCASE("every reply starts with the protocol version") {
    encode_timeout(f, 1);
    CHECK(static_cast<unsigned char>(f[1]) == kProtocolVersion);
  }
}

TEST_CASE("malformed msgpack is a bad_request with request id 0") {
  rejects("\xc1", Code::BadRequest, "malformed msgpack");
  rejects("", Code::BadRequest, "truncated");
  rejects(Frame().request("out_many", 2).str("j").raw("\xdd\xff\xff\xff\xff"sv).bytes(), Code::BadRequest,
          "array size overflow");
  CHECK(failure("\xc1").request_id == 0);
}

TEST_CASE("every truncation of a valid frame is rejected as truncated") {
  std::string f;
  encode_in(f, 3, Op::In, "jobs", kTaskTemplate, 100, 5);
  for (std::size_t n = 0; n < f.size(); ++n) {
    CAPTURE(n);
    DecodeFailure d = failure(std::string_view(f).substr(0, n));
    CHECK(d.code == Code::BadRequest);
    CHECK(contains(d.message, "truncated"));
  }
}

TEST_CASE("an ack of many leases needs 1 to kMaxTuplesPerRequest lease ids") {
  rejects(Frame().request("ack", 1).array(0).bytes(), Code::BadRequest, "1 to");
  rejects(Frame().request("ack", 1).array(2).u(1).str("x").bytes(), Code::BadRequest, "ack: lease_id");
}

TEST_CASE("trailing bytes after the request are rejected") {
  rejects(Frame().request("hello", 0).raw("\xc0\xc0"sv).bytes(), Code::BadRequest, "trailing 2 bytes");
}

TEST_CASE("the request envelope is checked") {
  rejects(Frame().i(1).bytes(), Code::BadRequest, "request must be an array, got integer");
  rejects(Frame().array(2).i(1).u(1).bytes(), Code::BadRequest, "[version, request_id, op, args...]");
  rejects(Frame().array(3).str("1").u(9).str("hello").bytes(), Code::BadRequest,
          "version must be an integer");
  rejects(Frame().array(3).i(1).i(-9).str("hello").bytes(), Code::BadRequest,
          "request_id must be a non-negative");
  rejects(Frame().array(3).i(1).u(9).i(4).bytes(), Code::BadRequest, "op must be a str");
}

TEST_CASE("hello's one optional argument is a bool") {
  rejects(Frame().request("hello", 1).i(1).bytes(), Code::BadRequest, "hello: served_first must be a bool");
}

TEST_CASE("another protocol version is unsupported_version, keeping the request id") {
  DecodeFailure f = failure(Frame().request("hello", 0, 77, 2).bytes());
  CHECK(f.code == Code::UnsupportedVersion);
  CHECK(f.request_id == 77);
  CHECK(contains(f.message, "version 2"));
  CHECK(contains(f.message, "speaks 1"));
  // The version is checked before the op, so a future op is not "unknown".
  CHECK(failure(Frame().request("in_future", 0, 78, 2).bytes()).code == Code::UnsupportedVersion);
}

TEST_CASE("an unknown op is unknown_op, keeping the request id") {
  DecodeFailure f = failure(Frame().request("inp", 0, 79).bytes());
  CHECK(f.code == Code::UnknownOp);
  CHECK(f.request_id == 79);
  CHECK(contains(f.message, "\"inp\""));
}

TEST_CASE("the argument count is checked per op") {
  rejects(Frame().request("out", 1).str("j").bytes(), Code::BadRequest, "out: expected 2 arguments, got 1");
  rejects(Frame().request("hello", 2).nil().nil().bytes(), Code::BadRequest,
          "hello: expected 0..1 arguments, got 2");
  rejects(Frame().request("in", 3).str("j").array(1).i(1).i(0).bytes(), Code::BadRequest,
          "in: expected 4 arguments, got 3");
  rejects(Frame().request("stats", 2).str("a").str("b").bytes(), Code::BadRequest,
          "stats: expected 0..1 arguments, got 2");
  CHECK(failure(Frame().request("out", 1, 80).str("j").bytes()).request_id == 80);
}

TEST_CASE("a tuple has 1..16 fields") {
  rejects(Frame().request("out", 2).str("j").array(0).bytes(), Code::BadRequest,
          "out: tuple has 0 fields; allowed 1..16");
  Frame f;
  f.request("out", 2).str("j").array(17);
  for (int k = 0; k < 17; ++k) f.i(k);
  rejects(f.bytes(), Code::BadRequest, "out: tuple has 17 fields; allowed 1..16");
  rejects(Frame().request("in", 4).str("j").array(0).i(0).i(0).bytes(), Code::BadRequest,
          "in: template has 0 fields");
  rejects(Frame().request("out_many", 2).str("j").array(2).array(1).i(1).array(0).bytes(), Code::BadRequest,
          "out_many: tuple 1 has 0 fields");
}

TEST_CASE("fields other than int, float, str, bin and bool are rejected, naming the field") {
  rejects(Frame().request("out", 2).str("j").array(2).str("x").nil().bytes(), Code::BadRequest,
          "out: tuple field 1: unsupported msgpack type nil");
  rejects(Frame().request("out", 2).str("j").array(2).str("x").map(0).bytes(), Code::BadRequest,
          "out: tuple field 1: unsupported msgpack type map");
  rejects(Frame().request("out", 2).str("j").array(2).str("x").array(1).i(1).bytes(), Code::BadRequest,
          "out: tuple field 1: unsupported msgpack type array");
  rejects(Frame().request("in", 4).str("j").array(1).nil().i(0).i(0).bytes(), Code::BadRequest,
          "in: template field 0: unsupported msgpack type nil");
  // Maps are never valid anywhere in a request: the unpacker refuses non-empty ones.
  rejects(Frame().request("out", 2).str("j").array(2).str("x").map(1).i(1).i(2).bytes(), Code::BadRequest,
          "map");
}

TEST_CASE("integers above int64 max are rejected") {
  rejects(Frame().request("out", 2).str("j").array(2).str("x").u(1ull << 63).bytes(), Code::BadRequest,
          "out: tuple field 1: integer 9223372036854775808 is out of int64 range");
  rejects(Frame().request("in", 4).str("j").array(1).u(UINT64_MAX).i(0).i(0).bytes(), Code::BadRequest,
          "in: template field 0: integer 18446744073709551615 is out of int64 range");
  rejects(Frame().request("in", 4).str("j").array(1).i(1).u(1ull << 63).i(0).bytes(), Code::BadRequest,
          "in: timeout_ms is out of range");
  // INT64_MAX itself is a value like any other.
  Request r = decoded(Frame().request("out", 2).str("j").array(1).u(INT64_MAX).bytes());
  CHECK(decode_tuple(r.tuples.at(0).bytes) == Tuple::of(INT64_MAX));
}

TEST_CASE("formals belong in templates only, and carry a known type code") {
  rejects(
      Frame().request("out", 2).str("j").array(2).str("x").ext(kFormalExtType, std::string(1, '\0')).bytes(),
      Code::BadRequest, "out: tuple field 1: a tuple may not hold a formal");
  rejects(Frame().request("in", 4).str("j").array(1).ext(kFormalExtType, "\x05").i(0).i(0).bytes(),
          Code::BadRequest,
          "in: template field 0: ext is not a formal (ext type 1 holding a type code 0..4)");
  rejects(Frame().request("rd", 4).str("j").array(1).ext(2, std::string(1, '\0')).i(0).i(0).bytes(),
          Code::BadRequest, "rd: template field 0: ext is not a formal");
  rejects(Frame().request("watch", 2).str("j").array(1).ext(kFormalExtType, std::string(2, '\0')).bytes(),
          Code::BadRequest, "watch: template field 0: ext is not a formal");
}

TEST_CASE("timeouts and leases are range-checked") {
  rejects(Frame().request("in", 4).str("j").array(1).i(1).i(-2).i(0).bytes(), Code::BadRequest,
          "in: timeout_ms must be -1 (forever) or >= 0");
  rejects(Frame().request("in", 4).str("j").array(1).i(1).raw("\xcb\x3f\xf0\0\0\0\0\0\0"sv).i(0).bytes(),
          Code::BadRequest, "in: timeout_ms must be an integer, got float");
  rejects(Frame().request("in", 4).str("j").array(1).i(1).i(0).i(-1).bytes(), Code::BadRequest,
          "in: lease_ms must be >= 0");
  rejects(Frame().request("rd", 4).str("j").array(1).i(1).i(0).i(100).bytes(), Code::BadRequest,
          "rd: a lease applies only to in");
  rejects(Frame().request("renew", 2).u(5).i(0).bytes(), Code::BadRequest, "renew: lease_ms must be > 0");
  rejects(Frame().request("ack", 1).i(-5).bytes(), Code::BadRequest,
          "ack: lease_id must be a non-negative integer");
  rejects(Frame().request("unwatch", 1).str("3").bytes(), Code::BadRequest,
          "unwatch: watch_id must be a non-negative integer, got str");
  rejects(Frame().request("in_many", 3).str("j").array(1).i(1).u(0).bytes(), Code::BadRequest,
          "in_many: max must be 1..1000000");
  rejects(Frame().request("in_many", 3).str("j").array(1).i(1).u(kMaxTuplesPerRequest + 1).bytes(),
          Code::BadRequest, "in_many: max must be 1..1000000");
  CHECK(failure(Frame().request("rd", 4, 81).str("j").array(1).i(1).i(0).i(100).bytes()).request_id == 81);
}

TEST_CASE("space names are non-empty strs of at most 256 bytes") {
  rejects(Frame().request("remove", 1).str("").bytes(), Code::BadRequest,
          "remove: space name must be 1..256 bytes");
  rejects(Frame().request("out", 2).str(std::string(kMaxSpaceNameBytes + 1, 's')).array(1).i(1).bytes(),
          Code::BadRequest, "out: space name must be 1..256 bytes");
  rejects(Frame().request("stats", 1).i(3).bytes(), Code::BadRequest,
          "stats: space name must be a str, got integer");
  rejects(Frame().request("out_many", 2).str("j").i(3).bytes(), Code::BadRequest,
          "out_many: tuples must be an array");
}

TEST_CASE("rd_many, leased in_many and the completing ack round-trip through decode_request") {
  std::string f;
  SUBCASE("rd_many") {
    encode_rd_many(f, 20, "piranha.sys", kTaskTemplate, 64);
    Request r = decoded(f);
    CHECK(r.op == Op::RdMany);
    CHECK(r.id == 20);
    CHECK(r.space == "piranha.sys");
    same_template(r.tmpl, kTaskTemplate);
    CHECK(r.max == 64);
    CHECK(op_name(Op::RdMany) == "rd_many");
  }
  SUBCASE("in_many with and without a lease") {
    encode_in_many(f, 21, "jobs", kTaskTemplate, 8, 0, 1500);
    Request r = decoded(f);
    CHECK(r.op == Op::InMany);
    CHECK(r.max == 8);
    CHECK(r.lease == 1500);
    encode_in_many(f, 22, "jobs", kTaskTemplate, 8);
    Request plain = decoded(f);
    CHECK(plain.lease == 0);
    // Without a lease the frame is the old three-argument form: an array of 6.
    CHECK(static_cast<unsigned char>(f[0]) == 0x96);
  }
  SUBCASE("an explicit lease_ms of 0 is a plain in_many") {
    Request r = decoded(Frame().request("in_many", 4).str("j").array(1).i(1).u(3).i(0).bytes());
    CHECK(r.op == Op::InMany);
    CHECK(r.lease == 0);
    CHECK(r.timeout == 0);  // never waits
  }
  SUBCASE("an in_many that waits, with and without a lease") {
    encode_in_many(f, 26, "jobs", kTaskTemplate, 8, kForever.count(), 0);
    Request r = decoded(f);
    CHECK(r.max == 8);
    CHECK(r.lease == 0);
    CHECK(r.timeout == kForever.count());
    CHECK(static_cast<unsigned char>(f[0]) == 0x98);  // lease_ms 0 sent before timeout_ms
    encode_in_many(f, 27, "jobs", kTaskTemplate, 8, 250, 1500);
    Request leased = decoded(f);
    CHECK(leased.lease == 1500);
    CHECK(leased.timeout == 250);
    encode_in_many(f, 28, "jobs", kTaskTemplate, 8, 0, 1500);
    CHECK(static_cast<unsigned char>(f[0]) == 0x97);  // timeout 0: the four-argument form
    CHECK(decoded(f).timeout == 0);
  }
  SUBCASE("the completing ack") {
    std::vector<Tuple> ts = {Tuple::of("result", 1, 2.5), kTask};
    encode_complete(f, 23, 77, "results", ts);
    Request r = decoded(f);
    CHECK(r.op == Op::Ack);
    CHECK(r.completes);
    CHECK(r.handle == 77);
    CHECK(r.space == "results");
    REQUIRE(r.tuples.size() == 2);
    same_tuple(r.tuples[0], ts[0]);
    same_tuple(r.tuples[1], ts[1]);
  }
  SUBCASE("a completing ack with no tuples") {
    encode_complete(f, 24, 5, "results", {});
    Request r = decoded(f);
    CHECK(r.completes);
    CHECK(r.tuples.empty());
  }
  SUBCASE("a plain ack does not complete") {
    encode_ack(f, 25, 5);
    Request r = decoded(f);
    CHECK_FALSE(r.completes);
    CHECK(r.space.empty());
  }
}

TEST_CASE("malformed rd_many, leased in_many and completing ack are named failures") {
  // rd_many
  rejects(Frame().request("rd_many", 2).str("j").array(1).i(1).bytes(), Code::BadRequest,
          "rd_many: expected 3 arguments, got 2");
  rejects(Frame().request("rd_many", 4).str("j").array(1).i(1).u(3).i(10).bytes(), Code::BadRequest,
          "rd_many: expected 3 arguments, got 4");
  rejects(Frame().request("rd_many", 3).str("j").array(1).i(1).u(0).bytes(), Code::BadRequest,
          "rd_many: max must be 1..1000000");
  rejects(Frame().request("rd_many", 3).str("j").array(1).i(1).i(-1).bytes(), Code::BadRequest,
          "rd_many: max must be a non-negative integer");
  rejects(Frame().request("rd_many", 3).str("j").array(1).nil().u(1).bytes(), Code::BadRequest,
          "rd_many: template field 0: unsupported msgpack type nil");
  rejects(Frame().request("rd_many", 3).str("").array(1).i(1).u(1).bytes(), Code::BadRequest,
          "rd_many: space name must be 1..256 bytes");
  // in_many's lease
  rejects(Frame().request("in_many", 4).str("j").array(1).i(1).u(3).i(-1).bytes(), Code::BadRequest,
          "in_many: lease_ms must be >= 0");
  rejects(Frame().request("in_many", 4).str("j").array(1).i(1).u(3).str("10").bytes(), Code::BadRequest,
          "in_many: lease_ms must be an integer, got str");
  rejects(Frame().request("in_many", 4).str("j").array(1).i(1).u(3).u(1ull << 63).bytes(), Code::BadRequest,
          "in_many: lease_ms is out of range");
  rejects(Frame().request("in_many", 6).str("j").array(1).i(1).u(3).i(10).i(10).i(1).bytes(),
          Code::BadRequest, "in_many: expected 3..5 arguments, got 6");
  // in_many's timeout
  rejects(Frame().request("in_many", 5).str("j").array(1).i(1).u(3).i(0).i(-2).bytes(), Code::BadRequest,
          "in_many: timeout_ms must be -1 (forever) or >= 0");
  rejects(Frame().request("in_many", 5).str("j").array(1).i(1).u(3).i(0).nil().bytes(), Code::BadRequest,
          "in_many: timeout_ms must be an integer, got nil");
  // the completing ack
  rejects(Frame().request("ack", 2).u(5).str("j").bytes(), Code::BadRequest,
          "ack: expected 1 argument (lease_id) or 3 (lease_id, space, tuples), got 2");
  rejects(Frame().request("ack", 4).u(5).str("j").array(0).nil().bytes(), Code::BadRequest,
          "ack: expected 1..3 arguments, got 4");
  rejects(Frame().request("ack", 3).i(-5).str("j").array(0).bytes(), Code::BadRequest,
          "ack: lease_id must be a non-negative integer");
  rejects(Frame().request("ack", 3).u(5).i(3).array(0).bytes(), Code::BadRequest,
          "ack: space name must be a str, got integer");
  rejects(Frame().request("ack", 3).u(5).str("j").array(1).i(1).bytes(), Code::BadRequest,
          "ack: tuple 0 must be an array, got integer");
  rejects(Frame().request("ack", 3).u(5).str("j").map(0).bytes(), Code::BadRequest,
          "ack: tuples must be an array, got map");
  rejects(Frame().request("ack", 3).u(5).str("j").array(2).array(1).i(1).array(0).bytes(), Code::BadRequest,
          "ack: tuple 1 has 0 fields");
  rejects(
      Frame().request("ack", 3).u(5).str("j").array(1).array(2).str("x").ext(kFormalExtType, "\x01").bytes(),
      Code::BadRequest, "ack: tuple 0 field 1: a tuple may not hold a formal");
  CHECK(failure(Frame().request("ack", 2, 90).u(5).str("j").bytes()).request_id == 90);
  // Every truncation of a completing ack is a clean failure.
  std::string f;
  encode_complete(f, 3, 9, "jobs", {kTask, Tuple::of("r", 1)});
  for (std::size_t n = 0; n < f.size(); ++n) {
    CAPTURE(n);
    CHECK(failure(std::string_view(f).substr(0, n)).code == Code::BadRequest);
  }
}

TEST_CASE("the leased in_many reply round-trips, and a lopsided one is refused") {
  std::string f;
  std::vector<Taken> taken = {{image_of(kTask).bytes, 4}, {image_of(Tuple::of(1)).bytes, 9}};
  encode_ok_leased_tuples(f, 30, taken);
  Reply r = decode_reply(f);
  CHECK(r.status == Reply::Status::Ok);
  CHECK(r.request_id == 30);
  REQUIRE(r.tuples.size() == 2);
  CHECK(r.tuples[0] == kTask);
  CHECK(r.tuples[1] == Tuple::of(1));
  CHECK(r.leases == std::vector<LeaseId>{4, 9});

  f.clear();
  encode_ok_leased_tuples(f, 31, {});
  Reply empty = decode_reply(f);
  CHECK(empty.tuples.empty());
  CHECK(empty.leases.empty());

  // Plain in_many replies carry no lease ids.
  f.clear();
  encode_ok_tuples(f, 32, {image_of(kTask).bytes});
  CHECK(decode_reply(f).leases.empty());

  Frame lopsided;
  lopsided.array(5).i(1).u(33).str("ok").array(1).array(1).i(1).array(0);
  CHECK_THROWS_WITH_AS(decode_reply(lopsided.bytes()), doctest::Contains("1 tuples but 0 lease ids"),
                       WireError);
  Frame bad_id;
  bad_id.array(5).i(1).u(34).str("ok").array(1).array(1).i(1).array(1).str("x");
  CHECK_THROWS_AS(decode_reply(bad_id.bytes()), WireError);
}
