// The transport's floor: a DEALER client and a ROUTER echo server in another
// process, with the socket options the tuple-space client and server use.
#include <zmq.hpp>

#include "phases.h"
#include "piranha/tuplespace/protocol.h"
#include "piranha/tuplespace/server.h"

namespace piranha::bench {
namespace {

// ts::ServerOptions / ts::ClientOptions defaults.
constexpr int kHeartbeatIntervalMs = 1000;
constexpr int kHeartbeatTimeoutMs = 5000;

}  // namespace

int run_zmq_echo(const std::string& endpoint) {
  zmq::socket_t router(ts::default_context(), zmq::socket_type::router);
  router.set(zmq::sockopt::router_mandatory, 1);
  router.set(zmq::sockopt::sndhwm, 0);
  router.set(zmq::sockopt::rcvhwm, 0);
  router.set(zmq::sockopt::linger, 0);
  router.set(zmq::sockopt::heartbeat_ivl, kHeartbeatIntervalMs);
  router.set(zmq::sockopt::heartbeat_timeout, kHeartbeatTimeoutMs);
  router.set(zmq::sockopt::heartbeat_ttl, kHeartbeatTimeoutMs);
  router.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(ts::kDefaultMaxMessageBytes) * 4 + 4096);
  router.bind(endpoint);
  while (true) {
    zmq::message_t id, body;
    if (!router.recv(id)) continue;
    if (!id.more() || !router.recv(body)) continue;
    try {
      router.send(id, zmq::send_flags::sndmore | zmq::send_flags::dontwait);
      router.send(body, zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
      // The peer went away; nothing to echo to.
    }
  }
}

ZmqFigures measure_zmq(const RunContext& ctx) {
  auto& log = *ctx.progress;
  const Sizes& z = ctx.sizes;
  ZmqFigures f;
  std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_tcp_port());
  ChildProcess server({ctx.piranha, "ts", "bench", "--role", "zmq-echo", "--endpoint", endpoint},
                      ctx.workdir + "/zmq-echo.log");
  log << "zeromq: echo server pid " << server.pid() << " on " << endpoint << "\n";
  Watchdog dog("ZeroMQ echo round trips (is the echo server up?)", std::chrono::seconds(120));

  zmq::socket_t dealer(ts::default_context(), zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.set(zmq::sockopt::sndhwm, 0);
  dealer.set(zmq::sockopt::rcvhwm, 0);
  dealer.set(zmq::sockopt::heartbeat_ivl, kHeartbeatIntervalMs);
  dealer.set(zmq::sockopt::heartbeat_timeout, kHeartbeatTimeoutMs);
  dealer.set(zmq::sockopt::heartbeat_ttl, kHeartbeatTimeoutMs);
  dealer.connect(endpoint);

  // The frame is a real `out` request for a round-trip tuple.
  std::string frame;
  ts::encode_out(frame, 1, "rtt", task_tuple(1, payload_blob(z.payload)));
  f.frame_bytes = frame.size();

  log << "zeromq: " << z.samples << " echo round trips of " << frame.size() << "-byte frames..."
      << std::flush;
  std::vector<double> us, pairs;
  us.reserve(z.samples);
  zmq::message_t reply;
  double server_cpu0 = 0, client_cpu0 = 0;
  for (std::size_t i = 0; i < z.warmup + z.samples; ++i) {
    if (i == z.warmup) {  // after the first echo: the server is surely up
      server_cpu0 = process_cpu_seconds(server.pid());
      client_cpu0 = self_cpu_seconds();
    }
    auto t0 = Clock::now();
    dealer.send(zmq::buffer(frame), zmq::send_flags::none);
    if (!dealer.recv(reply)) throw std::runtime_error("zeromq echo: receive failed");
    auto t1 = Clock::now();
    if (reply.size() != frame.size())
      throw std::runtime_error("zeromq echo: the reply differs from the request");
    if (i >= z.warmup) us.push_back(micros(t1 - t0));
  }
  f.cpu.server_us = (process_cpu_seconds(server.pid()) - server_cpu0) * 1e6 / static_cast<double>(z.samples);
  f.cpu.client_us = (self_cpu_seconds() - client_cpu0) * 1e6 / static_cast<double>(z.samples);
  pairs.reserve(z.samples);
  for (std::size_t i = 0; i < z.warmup + z.samples; ++i) {
    auto t0 = Clock::now();
    dealer.send(zmq::buffer(frame), zmq::send_flags::none);
    dealer.send(zmq::buffer(frame), zmq::send_flags::none);
    if (!dealer.recv(reply) || !dealer.recv(reply)) throw std::runtime_error("zeromq echo: receive failed");
    auto t1 = Clock::now();
    if (i >= z.warmup) pairs.push_back(micros(t1 - t0));
  }
  f.rtt = summarize(std::move(us));
  f.pair = summarize(std::move(pairs));
  log << " p50 " << f.rtt.p50 << " us, p99 " << f.rtt.p99 << " us; CPU per echo: server " << f.cpu.server_us
      << " us, client " << f.cpu.client_us << " us; two pipelined echoes p50 " << f.pair.p50 << " us\n";
  return f;
}

}  // namespace piranha::bench
