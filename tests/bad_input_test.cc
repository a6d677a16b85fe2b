// Bad input over a raw ZeroMQ DEALER socket: whatever a client sends, the
// server answers with an error naming the problem (or drops the connection),
// goes on serving everyone else, and loses none of the tuples it held.
//
// Every case runs against a fresh server started with a small --max-message
// and preloaded with kStored tuples; check_intact() then counts them through
// stats and takes them all back.
#include <doctest/doctest.h>

#include <msgpack.hpp>
#include <optional>
#include <zmq.hpp>

#include "harness.h"
#include "piranha/tuplespace/server.h"

namespace piranha::it {
namespace {

constexpr std::size_t kMaxMessage = 2048;
constexpr std::int64_t kStored = 25;

// A DEALER socket that speaks raw frames, bypassing ts::Client's encoder.
class RawPeer {
 public:
  explicit RawPeer(const std::string& endpoint) : socket_(ts::default_context(), zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.connect(endpoint);
  }

  void send(const std::string& frame) { socket_.send(zmq::buffer(frame), zmq::send_flags::none); }

  // One message of several frames.
  void send_parts(const std::vector<std::string>& frames) {
    for (std::size_t i = 0; i < frames.size(); ++i)
      socket_.send(zmq::buffer(frames[i]),
                   i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }

  // The next reply, or nullopt when none arrives within `timeout`.
  std::optional<ts::Reply> receive(std::chrono::milliseconds timeout = kPatience) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
    zmq::message_t msg;
    if (!socket_.recv(msg)) return std::nullopt;
    return ts::decode_reply(std::string_view(static_cast<const char*>(msg.data()), msg.size()));
  }

  // Sends `frame` and returns the reply, failing the test when none comes.
  ts::Reply call(const std::string& frame) {
    send(frame);
    auto r = receive();
    REQUIRE_MESSAGE(r.has_value(), "no reply");
    return *r;
  }

  void close() { socket_.close(); }

 private:
  zmq::socket_t socket_;
};

// A msgpack array of the given items: request(1, 7, "out", "space").
template <class... A>
std::string request(const A&... items) {
  msgpack::sbuffer buf;
  msgpack::packer<msgpack::sbuffer> pk(buf);
  pk.pack_array(sizeof...(A));
  (pk.pack(items), ...);
  return std::string(buf.data(), buf.size());
}

std::string encoded(void (*encode)(std::string&, std::uint64_t, std::string_view), std::uint64_t rid,
                    std::string_view arg) {
  std::string out;
  encode(out, rid, arg);
  return out;
}

void check_error(const ts::Reply& r, std::string_view code, std::uint64_t rid, std::string_view words = "") {
  INFO("reply: code=", ts::code_to_wire(r.code), " message=", r.message);
  CHECK(r.status == ts::Reply::Status::Error);
  CHECK(ts::code_to_wire(r.code) == code);
  CHECK(r.request_id == rid);
  CHECK_FALSE(r.message.empty());
  if (!words.empty()) CHECK(r.message.find(words) != std::string::npos);
}

struct PreloadedServer {
  ServerProcess server{{"--max-message", std::to_string(kMaxMessage)}};
  ts::Client bystander{server.endpoint()};  // connected before the bad input

  PreloadedServer() {
    std::vector<ts::Tuple> kept;
    for (std::int64_t i = 0; i < kStored; ++i)
      kept.push_back(ts::Tuple::of("kept", i, ts::Blob(std::string(64, 'k'))));
    bystander.space("store").out_many(kept);
    REQUIRE(stats_of(bystander, "store").tuples == kStored);
  }

  // The server still runs, answers the old client and a new one, and holds
  // every preloaded tuple, which come back oldest first.
  void check_intact() {
    INFO("server log:\n", server.log());
    REQUIRE(server.process().running());
    bystander.space("scratch").out("alive", 1);
    CHECK(bystander.space("scratch").inp("alive", 1).has_value());
    ts::Client fresh(server.endpoint());  // the default, patient connect: the machine may be busy
    CHECK(stats_of(fresh, "store").tuples == kStored);
    auto all = fresh.space("store").in_many(1000, "kept", ts::formal<std::int64_t>, ts::formal<ts::Blob>);
    REQUIRE(all.size() == kStored);
    for (std::int64_t i = 0; i < kStored; ++i) CHECK(all[i].get<std::int64_t>(1) == i);
    CHECK(stats_of(fresh, "store").tuples == 0);
  }
};

}  // namespace

TEST_CASE_FIXTURE(PreloadedServer, "malformed msgpack is answered with bad_request") {
  RawPeer raw(server.endpoint());
  std::string deep = "\x94\x01\x05\xa3out";  // [1, 5, "out", ...] nested past the depth limit
  deep += std::string("\x91\x91\x91\x91\x91\x91\x91\x91\x01", 9);
  const std::vector<std::pair<std::string, std::string>> frames = {
      {"never-used byte 0xc1", "\xc1"},
      {"truncated array", std::string("\x93\x01", 2)},
      {"empty frame", ""},
      {"not an array", request(1, 2, "stats").substr(1)},  // a bare integer and more
      {"trailing bytes", request(1, 3, "stats") + "xyz"},
      {"nested too deep", deep},
      {"random bytes", std::string("\x00\xff\x13\x37\xde\xad\xbe\xef", 8)},
  };
  for (const auto& [what, frame] : frames) {
    const auto& name = what;  // clang 14 cannot capture a structured binding
    INFO(name);
    check_error(raw.call(frame), "bad_request", 0);
  }
  // The same connection still works.
  CHECK(raw.call(encoded(ts::encode_stats, 99, "")).status == ts::Reply::Status::Ok);
  check_intact();
}

TEST_CASE_FIXTURE(PreloadedServer,
                  "an unknown op or version or a non-string op is answered with its error code") {
  RawPeer raw(server.endpoint());
  check_error(raw.call(request(1, 7, "frobnicate", "store")), "unknown_op", 7, "frobnicate");
  check_error(raw.call(request(2, 8, "stats")), "unsupported_version", 8);
  check_error(raw.call(request(1, 9, 42)), "bad_request", 9, "op");
  check_error(raw.call(request(1, 10, "drop_all_tables")), "unknown_op", 10);
  check_intact();
}

TEST_CASE_FIXTURE(PreloadedServer, "a wrong number of arguments or fields is answered with bad_request") {
  RawPeer raw(server.endpoint());
  check_error(raw.call(request(1, 11, "out", "store")), "bad_request", 11, "expected 2 arguments");
  check_error(raw.call(request(1, 12, "in", "store", std::vector<int>{1}, -1)), "bad_request", 12);
  check_error(raw.call(request(1, 13, "out", "store", std::vector<int>{})), "bad_request", 13, "0 fields");
  check_error(raw.call(request(1, 14, "out", "store", std::vector<int>(17, 1))), "bad_request", 14,
              "17 fields");
  check_error(raw.call(request(1, 15, "stats", "store", "extra")), "bad_request", 15);
  check_error(raw.call(request(1, 16)), "bad_request", 0);  // not even an op
  // None of them stored anything.
  CHECK(stats_of(bystander, "store").tuples == kStored);
  check_intact();
}

TEST_CASE_FIXTURE(PreloadedServer,
                  "an oversized request gets too_large and a huge one loses only its connection") {
  RawPeer raw(server.endpoint());
  ts::Tuple big = ts::Tuple::of("big", ts::Blob(std::string(kMaxMessage + 100, 'x')));
  std::string frame;
  ts::encode_out(frame, 21, "store", big);
  check_error(raw.call(frame), "too_large", 0, std::to_string(kMaxMessage));

  // Far past ZeroMQ's hard limit: the connection is cut, there is no reply...
  ts::Tuple huge = ts::Tuple::of("huge", ts::Blob(std::string(kMaxMessage * 8 + 8192, 'x')));
  ts::encode_out(frame, 22, "store", huge);
  raw.send(frame);
  CHECK_FALSE(raw.receive(500ms).has_value());
  // ...and the client can reconnect and carry on.
  ts::Reply after = raw.call(encoded(ts::encode_stats, 23, "store"));
  CHECK(after.status == ts::Reply::Status::Ok);
  CHECK(after.request_id == 23);

  CHECK(stats_of(bystander, "store").tuples == kStored);  // neither was stored
  check_intact();
}

TEST_CASE_FIXTURE(PreloadedServer, "a request of several frames is answered with bad_request and not run") {
  RawPeer raw(server.endpoint());
  std::string out1, out2;
  ts::encode_out(out1, 31, "store", ts::Tuple::of("kept", std::int64_t{100}, ts::Blob("x")));
  ts::encode_out(out2, 32, "store", ts::Tuple::of("kept", std::int64_t{101}, ts::Blob("y")));
  raw.send_parts({out1, out2});
  auto r = raw.receive();
  REQUIRE(r.has_value());
  check_error(*r, "bad_request", 0, "one frame");
  raw.send_parts({out1, "", out2});
  r = raw.receive();
  REQUIRE(r.has_value());
  check_error(*r, "bad_request", 0, "one frame");
  // Exactly one reply per message: nothing else is pending.
  CHECK_FALSE(raw.receive(200ms).has_value());
  CHECK(stats_of(bystander, "store").tuples == kStored);
  check_intact();
}

TEST_CASE_FIXTURE(PreloadedServer,
                  "unknown spaces and leases and watches are answered with their error codes") {
  RawPeer raw(server.endpoint());
  check_error(raw.call(encoded(ts::encode_remove, 41, "no-such-space")), "unknown_space", 41,
              "no-such-space");
  check_error(raw.call(encoded(ts::encode_stats, 42, "no-such-space")), "unknown_space", 42);
  std::string frame;
  ts::encode_ack(frame, 43, 987654);
  check_error(raw.call(frame), "unknown_lease", 43);
  ts::encode_unwatch(frame, 44, 987654);
  check_error(raw.call(frame), "unknown_watch", 44);
  check_error(raw.call(request(1, 45, "renew", 1, 0)), "bad_request", 45, "lease_ms");
  CHECK_FALSE(bystander.remove("no-such-space"));
  check_intact();
}

TEST_CASE_FIXTURE(PreloadedServer, "a client that disconnects while blocked in `in` is forgotten") {
  {
    RawPeer raw(server.endpoint());
    std::string frame;
    ts::encode_in(frame, 51, ts::Op::In, "jobs", ts::detail::template_of("task", ts::formal<std::int64_t>),
                  ts::kForever.count(), 60000);
    raw.send(frame);
    REQUIRE(wait_until([&] { return stats_of(bystander, "jobs").waiters == 1; }));
    raw.close();
  }
  INFO("server log:\n", server.log());
  REQUIRE_MESSAGE(wait_until([&] { return stats_of(bystander, "jobs").waiters == 0; }),
                  "the server kept the departed client's request parked");
  bystander.space("jobs").out("task", 5);
  CHECK(stats_of(bystander, "jobs").tuples == 1);
  CHECK(stats_of(bystander, "jobs").leases == 0);
  CHECK(bystander.space("jobs").inp("task", 5).has_value());
  check_intact();
}

}  // namespace piranha::it
