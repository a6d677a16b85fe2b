// Writes the seed corpus for request_fuzzer into a directory:
//
//   build-fuzz/bin/make_corpus tests/fuzz/corpus
//
// One file per frame, named after what it holds: "ok-*" frames are valid
// requests built with the client encoders (plus the non-canonical encodings a
// client in another language may send); "bad-*" frames exercise one rejection
// path each. protocol_test.cc replays every file in the committed corpus.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <msgpack.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "piranha/tuplespace/protocol.h"

namespace ts = piranha::ts;
using namespace std::literals;

namespace {

// Builds arbitrary msgpack, valid request or not.
class Frame {
 public:
  Frame& array(std::uint32_t n) { return pk_.pack_array(n), *this; }
  Frame& map(std::uint32_t n) { return pk_.pack_map(n), *this; }
  Frame& i(std::int64_t v) { return pk_.pack_int64(v), *this; }
  Frame& u(std::uint64_t v) { return pk_.pack_uint64(v), *this; }
  Frame& nil() { return pk_.pack_nil(), *this; }
  Frame& boolean(bool b) { return b ? pk_.pack_true() : pk_.pack_false(), *this; }
  Frame& str(std::string_view s) {
    pk_.pack_str(static_cast<std::uint32_t>(s.size()));
    pk_.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
    return *this;
  }
  Frame& bin(std::string_view s) {
    pk_.pack_bin(static_cast<std::uint32_t>(s.size()));
    pk_.pack_bin_body(s.data(), static_cast<std::uint32_t>(s.size()));
    return *this;
  }
  Frame& ext(std::int8_t type, std::string_view data) {
    pk_.pack_ext(data.size(), type);
    pk_.pack_ext_body(data.data(), static_cast<std::uint32_t>(data.size()));
    return *this;
  }
  Frame& formal(ts::Type t) { return ext(ts::kFormalExtType, std::string(1, static_cast<char>(t))); }
  // Bytes appended verbatim (float32, non-canonical widths, garbage).
  Frame& raw(std::string_view b) { return bytes_.append(b), *this; }
  // [version, request_id, op] followed by `nargs` arguments still to add.
  Frame& request(std::string_view op, std::uint32_t nargs, std::int64_t version = ts::kProtocolVersion) {
    return array(3 + nargs).i(version).u(1).str(op);
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

ts::Template tmpl(std::vector<ts::Field> fields) {
  return ts::Template(std::move(fields));
}
ts::Field actual(ts::Value v) {
  return ts::Field::of(std::move(v));
}
ts::Field formal(ts::Type t) {
  return ts::Field::formal(t);
}

std::vector<std::pair<std::string, std::string>> seeds() {
  using ts::Type;
  std::vector<std::pair<std::string, std::string>> s;
  auto add = [&](std::string name, std::string bytes) { s.emplace_back(std::move(name), std::move(bytes)); };
  auto enc = [](auto fn) {
    std::string out;
    fn(out);
    return out;
  };

  // ---- Valid requests, from the client encoders.
  const ts::Tuple task = ts::Tuple::of("task", 7, 2.5, ts::Blob(std::string("\x00\xff", 2)), true, -1);
  const ts::Template task_t = tmpl({actual(std::string("task")), formal(Type::Int), formal(Type::Double),
                                    formal(Type::Blob), formal(Type::Bool), actual(std::int64_t{-1})});
  add("ok-hello", enc([](std::string& o) { ts::encode_hello(o, 1); }));
  add("ok-out", enc([&](std::string& o) { ts::encode_out(o, 2, "jobs", task); }));
  add("ok-out-wide-values", enc([](std::string& o) {
        ts::encode_out(o, 3, "jobs",
                       ts::Tuple::of(std::string(300, 's'), INT64_MIN, INT64_MAX, -33, 128, 65536, -0.0,
                                     ts::Blob(std::string(300, 'b')), false));
      }));
  {
    std::vector<ts::Value> most(ts::kMaxFields, ts::Value(std::int64_t{1}));
    add("ok-out-16-fields", enc([&](std::string& o) { ts::encode_out(o, 4, "jobs", ts::Tuple(most)); }));
  }
  add("ok-out_many", enc([](std::string& o) {
        ts::encode_out_many(o, 5, "jobs", {ts::Tuple::of("a", 1), ts::Tuple::of("a", 2), ts::Tuple::of(3.5)});
      }));
  add("ok-out_many-empty", enc([](std::string& o) { ts::encode_out_many(o, 6, "jobs", {}); }));
  add("ok-in-forever", enc([&](std::string& o) { ts::encode_in(o, 7, ts::Op::In, "jobs", task_t, -1, 0); }));
  add("ok-in-lease", enc([&](std::string& o) { ts::encode_in(o, 8, ts::Op::In, "jobs", task_t, 0, 30000); }));
  add("ok-in-formal-field0", enc([](std::string& o) {
        ts::encode_in(o, 9, ts::Op::In, "jobs",
                      tmpl({formal(Type::String), actual(std::int64_t{3}), formal(Type::Int)}), 250, 0);
      }));
  add("ok-rd", enc([](std::string& o) {
        ts::encode_in(o, 10, ts::Op::Rd, "jobs",
                      tmpl({actual(std::string("result")), formal(Type::Double), actual(true)}), 100, 0);
      }));
  add("ok-rd-all-formals", enc([](std::string& o) {
        ts::encode_in(o, 11, ts::Op::Rd, "jobs",
                      tmpl({formal(Type::Int), formal(Type::Double), formal(Type::String), formal(Type::Blob),
                            formal(Type::Bool)}),
                      0, 0);
      }));
  add("ok-in_many", enc([&](std::string& o) { ts::encode_in_many(o, 12, "jobs", task_t, 10); }));
  add("ok-ack", enc([](std::string& o) { ts::encode_ack(o, 13, 5); }));
  add("ok-renew", enc([](std::string& o) { ts::encode_renew(o, 14, 5, 1000); }));
  add("ok-watch", enc([](std::string& o) {
        ts::encode_watch(o, 15, "piranha.sys", tmpl({actual(std::string("node")), formal(Type::String)}));
      }));
  add("ok-unwatch", enc([](std::string& o) { ts::encode_unwatch(o, 16, 3); }));
  add("ok-remove", enc([](std::string& o) { ts::encode_remove(o, 17, "jobs"); }));
  add("ok-stats-all", enc([](std::string& o) { ts::encode_stats(o, 18, ""); }));
  add("ok-stats-space", enc([](std::string& o) { ts::encode_stats(o, 19, "jobs"); }));
  add("ok-rd_many", enc([&](std::string& o) { ts::encode_rd_many(o, 20, "piranha.sys", task_t, 64); }));
  add("ok-in_many-lease",
      enc([&](std::string& o) { ts::encode_in_many(o, 21, "jobs", task_t, 8, 0, 5000); }));
  add("ok-in_many-wait", enc([&](std::string& o) { ts::encode_in_many(o, 44, "jobs", task_t, 8, 0, -1); }));
  add("ok-in_many-lease-wait",
      enc([&](std::string& o) { ts::encode_in_many(o, 45, "jobs", task_t, 8, 250, 5000); }));
  add("ok-in_many-lease-0",
      Frame().request("in_many", 4).str("j").array(1).formal(Type::Int).u(3).i(0).bytes());
  add("ok-ack-complete", enc([&](std::string& o) {
        ts::encode_complete(o, 22, 5, "results", {ts::Tuple::of("result", 7, 49.0), task});
      }));
  add("ok-ack-complete-empty", enc([](std::string& o) { ts::encode_complete(o, 23, 5, "results", {}); }));

  // ---- Requests the access rules of an authenticated server tell apart
  // (piranha/access/rights.h): the system space's records, a job's space, markers.
  const std::string sys = "piranha.sys";
  const ts::Tuple job3 = ts::Tuple::of("job", 3, "cmatrix", "job.3", 1.0, "running");
  const ts::Template job3_t = tmpl({actual(std::string("job")), actual(std::int64_t{3}), formal(Type::String),
                                    formal(Type::String), formal(Type::Double), formal(Type::String)});
  add("ok-sys-out-node", enc([&](std::string& o) {
        ts::encode_out(o, 30, sys, ts::Tuple::of("node", "ws02", 1, 1.0, "down", 5.0));
      }));
  add("ok-sys-out-heartbeat-agent", enc([&](std::string& o) {
        ts::encode_out(o, 31, sys, ts::Tuple::of("heartbeat", "agent", "ws01", 5.0));
      }));
  add("ok-sys-out-assign",
      enc([&](std::string& o) { ts::encode_out(o, 32, sys, ts::Tuple::of("assign", 0, 17, "ws01", 3)); }));
  add("ok-sys-out-owner-block", enc([&](std::string& o) {
        ts::encode_out(o, 33, sys, ts::Tuple::of("owner", "ws01", "block", 1.0, 2.0));
      }));
  add("ok-sys-out-jobstat",
      enc([&](std::string& o) { ts::encode_out(o, 34, sys, ts::Tuple::of("jobstat", 3, 1, 2, 0.5, 5.0)); }));
  add("ok-sys-out_many-counter", enc([&](std::string& o) {
        ts::encode_out_many(o, 35, sys, {ts::Tuple::of("jobseq", 1), ts::Tuple::of("jobseq.created")});
      }));
  add("ok-sys-in-job-lease",
      enc([&](std::string& o) { ts::encode_in(o, 36, ts::Op::In, sys, job3_t, 1000, 10000); }));
  add("ok-sys-in_many-jobexec", enc([&](std::string& o) {
        ts::encode_in_many(o, 37, sys,
                           tmpl({actual(std::string("jobexec")), actual(std::int64_t{4}),
                                 formal(Type::String), formal(Type::Blob), formal(Type::String)}),
                           100000);
      }));
  add("ok-sys-in-counter-lease", enc([&](std::string& o) {
        ts::encode_in(o, 38, ts::Op::In, sys, tmpl({actual(std::string("jobseq")), formal(Type::Int)}), 10000,
                      10000);
      }));
  add("ok-sys-complete-counter",
      enc([&](std::string& o) { ts::encode_complete(o, 39, 5, sys, {ts::Tuple::of("jobseq", 6)}); }));
  add("ok-sys-complete-job-held", enc([&](std::string& o) {
        ts::encode_complete(o, 40, 5, sys, {ts::Tuple::of("job", 3, "cmatrix", "job.3", 1.0, "held")});
      }));
  add("ok-sys-complete-job", enc([&](std::string& o) { ts::encode_complete(o, 41, 5, sys, {job3}); }));
  add("ok-job-space-out", enc([&](std::string& o) { ts::encode_out(o, 42, "job.3", task); }));
  add("ok-job-space-remove", enc([](std::string& o) { ts::encode_remove(o, 43, "job.4"); }));
  add("ok-taken-out",
      enc([](std::string& o) { ts::encode_out(o, 44, "_taken.00ff", ts::Tuple::of("taken", 1)); }));

  // ---- Valid requests in encodings other clients produce.
  // float32 (widened to float64), int64/uint64 widths for small values, str8 and
  // bin16 for short data, a formal as ext8 of length 1, request id 0 and 2^64-1.
  add("ok-out-float32",
      Frame().request("out", 2).str("j").array(2).str("x").raw("\xca\x3f\xc0\x00\x00"sv).bytes());
  add("ok-out-wide-ints", Frame()
                              .request("out", 2)
                              .str("j")
                              .array(3)
                              .raw("\xd3\x00\x00\x00\x00\x00\x00\x00\x07"sv)
                              .raw("\xcf\x7f\xff\xff\xff\xff\xff\xff\xff"sv)
                              .raw("\xd0\x05"sv)
                              .bytes());
  add("ok-out-str8-bin16", Frame()
                               .request("out", 2)
                               .raw("\xd9\x01j"sv)
                               .array(2)
                               .raw("\xd9\x02hi"sv)
                               .raw("\xc5\x00\x01z"sv)
                               .bytes());
  add("ok-in-ext8-formal",
      Frame().request("in", 4).str("j").array(2).str("x").raw("\xc7\x01\x01\x00"sv).i(0).i(0).bytes());
  add("ok-hello-rid-0", Frame().array(3).i(1).u(0).str("hello").bytes());
  add("ok-hello-rid-max", Frame().array(3).i(1).u(UINT64_MAX).str("hello").bytes());
  add("ok-out-nan",
      Frame().request("out", 2).str("j").array(1).raw("\xcb\x7f\xf8\x00\x00\x00\x00\x00\x01"sv).bytes());

  // ---- Malformed frames, one rejection path each.
  add("bad-empty", "");
  add("bad-not-array", Frame().i(1).bytes());
  add("bad-short-array", Frame().array(2).i(1).u(1).bytes());
  add("bad-version-2", Frame().request("hello", 0, 2).bytes());
  add("bad-version-str", Frame().array(3).str("1").u(9).str("hello").bytes());
  add("bad-version-huge", Frame().array(3).u(UINT64_MAX).u(9).str("hello").bytes());
  add("bad-rid-negative", Frame().array(3).i(1).i(-9).str("hello").bytes());
  add("bad-op-not-str", Frame().array(3).i(1).u(9).i(4).bytes());
  add("bad-op-unknown", Frame().request("inp", 0).bytes());
  add("bad-out-1-arg", Frame().request("out", 1).str("j").bytes());
  add("bad-hello-1-arg", Frame().request("hello", 1).nil().bytes());
  add("bad-stats-2-args", Frame().request("stats", 2).str("a").str("b").bytes());
  add("bad-out-0-fields", Frame().request("out", 2).str("j").array(0).bytes());
  {
    Frame f;
    f.request("out", 2).str("j").array(17);
    for (int k = 0; k < 17; ++k) f.i(k);
    add("bad-out-17-fields", f.bytes());
  }
  add("bad-out-tuple-not-array", Frame().request("out", 2).str("j").str("x").bytes());
  add("bad-out-nil-field", Frame().request("out", 2).str("j").array(2).str("x").nil().bytes());
  add("bad-out-map-field", Frame().request("out", 2).str("j").array(2).str("x").map(1).i(1).i(2).bytes());
  add("bad-out-empty-map-field", Frame().request("out", 2).str("j").array(2).str("x").map(0).bytes());
  add("bad-out-array-field", Frame().request("out", 2).str("j").array(2).str("x").array(1).i(1).bytes());
  add("bad-out-uint64-above-int64", Frame().request("out", 2).str("j").array(1).u(1ull << 63).bytes());
  add("bad-out-formal", Frame().request("out", 2).str("j").array(2).str("x").formal(Type::Int).bytes());
  add("bad-out-timestamp-ext",
      Frame().request("out", 2).str("j").array(1).ext(-1, std::string(4, '\0')).bytes());
  add("bad-out_many-not-array", Frame().request("out_many", 2).str("j").i(3).bytes());
  add("bad-out_many-bad-tuple",
      Frame().request("out_many", 2).str("j").array(2).array(1).i(1).array(0).bytes());
  add("bad-in-formal-code-5", Frame().request("in", 4).str("j").array(1).ext(1, "\x05").i(0).i(0).bytes());
  add("bad-in-ext-type-2",
      Frame().request("in", 4).str("j").array(1).ext(2, std::string(1, '\0')).i(0).i(0).bytes());
  add("bad-in-formal-2-bytes",
      Frame().request("in", 4).str("j").array(1).ext(1, std::string(2, '\0')).i(0).i(0).bytes());
  add("bad-in-timeout-minus-2", Frame().request("in", 4).str("j").array(1).i(1).i(-2).i(0).bytes());
  add("bad-in-timeout-float",
      Frame().request("in", 4).str("j").array(1).i(1).raw("\xcb\x3f\xf0\0\0\0\0\0\0"sv).i(0).bytes());
  add("bad-in-lease-negative", Frame().request("in", 4).str("j").array(1).i(1).i(0).i(-1).bytes());
  add("bad-rd-lease", Frame().request("rd", 4).str("j").array(1).i(1).i(0).i(100).bytes());
  add("bad-in_many-max-0", Frame().request("in_many", 3).str("j").array(1).i(1).u(0).bytes());
  add("bad-in_many-max-huge", Frame().request("in_many", 3).str("j").array(1).i(1).u(2'000'000).bytes());
  add("bad-ack-negative", Frame().request("ack", 1).i(-5).bytes());
  add("bad-ack-2-args", Frame().request("ack", 2).u(5).str("j").bytes());
  add("bad-ack-complete-not-array", Frame().request("ack", 3).u(5).str("j").i(1).bytes());
  add("bad-ack-complete-formal",
      Frame().request("ack", 3).u(5).str("j").array(1).array(2).str("x").formal(Type::Int).bytes());
  add("bad-ack-complete-space-empty", Frame().request("ack", 3).u(5).str("").array(0).bytes());
  add("bad-in_many-lease-negative", Frame().request("in_many", 4).str("j").array(1).i(1).u(3).i(-1).bytes());
  add("bad-in_many-lease-str", Frame().request("in_many", 4).str("j").array(1).i(1).u(3).str("1").bytes());
  add("bad-rd_many-max-0", Frame().request("rd_many", 3).str("j").array(1).i(1).u(0).bytes());
  add("bad-rd_many-4-args", Frame().request("rd_many", 4).str("j").array(1).i(1).u(3).i(10).bytes());
  add("bad-renew-zero", Frame().request("renew", 2).u(5).i(0).bytes());
  add("bad-unwatch-str", Frame().request("unwatch", 1).str("3").bytes());
  add("bad-space-empty", Frame().request("remove", 1).str("").bytes());
  add("bad-space-257-bytes", Frame().request("remove", 1).str(std::string(257, 's')).bytes());
  add("bad-space-bin", Frame().request("remove", 1).bin("jobs").bytes());
  add("bad-trailing-bytes", Frame().request("hello", 0).raw("\xc0"sv).bytes());
  {
    std::string out = enc([&](std::string& o) { ts::encode_out(o, 2, "jobs", task); });
    add("bad-truncated", out.substr(0, out.size() - 3));
  }
  add("bad-reserved-byte-c1", Frame().request("out", 2).str("j").array(1).raw("\xc1"sv).bytes());
  add("bad-array-size-overflow",
      Frame().request("out_many", 2).str("j").raw("\xdd\xff\xff\xff\xff"sv).bytes());
  add("bad-map-top", Frame().map(1).i(1).i(1).bytes());
  {
    Frame f;
    f.request("out", 2).str("j");
    for (int k = 0; k < 6; ++k) f.array(1);
    f.i(1);
    add("bad-deep-nesting", f.bytes());
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_corpus DIR\n";
    return 2;
  }
  std::filesystem::path dir = argv[1];
  std::filesystem::create_directories(dir);
  int n = 0;
  for (const auto& [name, bytes] : seeds()) {
    std::ofstream f(dir / name, std::ios::binary | std::ios::trunc);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) {
      std::cerr << "make_corpus: cannot write " << (dir / name) << "\n";
      return 1;
    }
    ++n;
  }
  std::cout << "wrote " << n << " seed frames to " << dir << "\n";
  return 0;
}
