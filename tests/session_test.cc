// Sessions and connections: a client's session belongs to its connection,
// so one client leaving must never take another client's leases or parked
// requests with it, even when the operating system hands the departed
// connection's socket number to the next one.
#include <doctest/doctest.h>

#include <atomic>
#include <set>
#include <thread>
#include <zmq.hpp>

#include "harness.h"
#include "piranha/tuplespace/server.h"

namespace piranha::it {
namespace {

std::optional<ts::Reply> receive(zmq::socket_t& s, std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout) == 0) return std::nullopt;
  zmq::message_t msg;
  if (!s.recv(msg)) return std::nullopt;
  return ts::decode_reply(std::string_view(static_cast<const char*>(msg.data()), msg.size()));
}

zmq::socket_t dealer(const std::string& endpoint) {
  zmq::socket_t s(ts::default_context(), zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.connect(endpoint);
  return s;
}

// Keeps the server's loop busy with pipelined stats requests, so it works
// through long batches of requests between looks at disconnect events.
class Flood {
 public:
  explicit Flood(const std::string& endpoint)
      : thread_([this, endpoint] {
          zmq::socket_t s = dealer(endpoint);
          std::string frame;
          ts::encode_stats(frame, 1, "");
          zmq::message_t reply;
          while (!stop_.load()) {
            for (int i = 0; i < 32; ++i) (void)s.send(zmq::buffer(frame), zmq::send_flags::dontwait);
            while (s.recv(reply, zmq::recv_flags::dontwait)) {
            }
          }
        }) {}
  ~Flood() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace

TEST_CASE("a client leaving never revokes the lease of a client that connected just after") {
  ServerProcess server({"--quiet"});
  ts::Client control(server.endpoint());
  control.space("jobs").out("task", 1);
  Flood flood(server.endpoint());

  int revoked = 0, rounds = 0;
  std::string first_error;
  auto start = Clock::now();
  for (; rounds < 200 && Clock::now() - start < 6s; ++rounds) {
    {
      zmq::socket_t leaving = dealer(server.endpoint());
      std::string hello;
      ts::encode_hello(hello, 1);
      leaving.send(zmq::buffer(hello), zmq::send_flags::none);
      REQUIRE(receive(leaving, kPatience).has_value());
    }  // closed: the server sees this connection end
    std::this_thread::sleep_for(std::chrono::microseconds(200 * (rounds % 8)));

    // A new client whose very first request takes the task under a lease.
    zmq::socket_t worker = dealer(server.endpoint());
    std::string frame;
    ts::encode_in(frame, 2, ts::Op::In, "jobs", ts::detail::template_of("task", ts::formal<std::int64_t>),
                  ts::kForever.count(), 60000);
    worker.send(zmq::buffer(frame), zmq::send_flags::none);
    auto taken = receive(worker, kPatience);
    REQUIRE(taken.has_value());
    REQUIRE(taken->status == ts::Reply::Status::Ok);
    std::this_thread::sleep_for(5ms);  // let the server catch up on disconnect events

    // The worker is alive and connected: its lease must still be there.
    ts::encode_ack(frame, 3, taken->number);
    worker.send(zmq::buffer(frame), zmq::send_flags::none);
    auto acked = receive(worker, kPatience);
    REQUIRE(acked.has_value());
    if (acked->status != ts::Reply::Status::Ok) {
      if (!revoked++) first_error = std::string(ts::code_to_wire(acked->code)) + ": " + acked->message;
      // The revoked tuple went back to the space; take it out again.
      REQUIRE(control.space("jobs").in_for(kPatience, "task", ts::formal<std::int64_t>).has_value());
    }
    control.space("jobs").out("task", 1);
  }
  INFO(revoked, " of ", rounds, " live workers lost their lease; first: ", first_error);
  CHECK(revoked == 0);
}

TEST_CASE("requests beyond one turn's batch are read although none of the batch was answered") {
  // 300 blocking ins on an empty space (the server reads 256 requests a
  // turn, and a parked in sends nothing), then an out that answers one of
  // them: the server must read past the first batch without a new signal.
  ServerProcess server;
  zmq::socket_t s = dealer(server.endpoint());
  std::string frame;
  ts::encode_hello(frame, 1);
  REQUIRE(s.send(zmq::buffer(frame), zmq::send_flags::none));
  REQUIRE(receive(s, 5s));
  auto tmpl = ts::detail::template_of("t", ts::formal<std::int64_t>);
  for (std::uint64_t rid = 2; rid < 302; ++rid) {
    ts::encode_in(frame, rid, ts::Op::In, "s", tmpl, -1, 0);
    REQUIRE(s.send(zmq::buffer(frame), zmq::send_flags::none));
  }
  ts::encode_out(frame, 302, "s", ts::Tuple::of("t", std::int64_t{7}));
  REQUIRE(s.send(zmq::buffer(frame), zmq::send_flags::none));
  std::set<std::uint64_t> answered;
  for (auto until = Clock::now() + 5s; answered.size() < 2 && Clock::now() < until;)
    if (auto r = receive(s, 100ms)) answered.insert(r->request_id);
  CHECK(answered.count(302) == 1);  // the out's acknowledgement
  CHECK(answered.count(2) == 1);    // the oldest in, given the tuple
}

}  // namespace piranha::it
