// The transport's floor: a DEALER client and a ROUTER echo server in another
// process, with the socket options the tuple-space client and server use
// (and, as theirs, each I/O thread left where the kernel places it); and the
// task farm done with ZeroMQ alone (a queue server with no tuple
// matching, no codec and no store), exchanging the same messages per task as
// the tuple-space farm.
#include <cstring>
#include <deque>
#include <map>
#include <zmq.hpp>

#include "phases.h"
#include "piranha/tuplespace/protocol.h"
#include "piranha/tuplespace/server.h"

namespace piranha::bench {
namespace {

// ts::ServerOptions / ts::ClientOptions defaults.
constexpr int kHeartbeatIntervalMs = 1000;
constexpr int kHeartbeatTimeoutMs = 5000;

// The options both the tuple-space client and server set.
zmq::socket_t socket_like_ours(zmq::socket_type type) {
  zmq::socket_t s(ts::default_context(), type);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::sndhwm, 0);
  s.set(zmq::sockopt::rcvhwm, 0);
  s.set(zmq::sockopt::heartbeat_ivl, kHeartbeatIntervalMs);
  s.set(zmq::sockopt::heartbeat_timeout, kHeartbeatTimeoutMs);
  s.set(zmq::sockopt::heartbeat_ttl, kHeartbeatTimeoutMs);
  return s;
}

// A ROUTER bound to `endpoint` with the tuple-space server's options.
zmq::socket_t server_socket(const std::string& endpoint) {
  zmq::socket_t router = socket_like_ours(zmq::socket_type::router);
  router.set(zmq::sockopt::router_mandatory, 1);
  router.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(ts::kDefaultMaxMessageBytes) * 4 + 4096);
  router.bind(endpoint);
  return router;
}

// A DEALER connected to `endpoint` with the tuple-space client's options.
zmq::socket_t client_socket(const std::string& endpoint) {
  zmq::socket_t dealer = socket_like_ours(zmq::socket_type::dealer);
  dealer.connect(endpoint);
  return dealer;
}

// The queue farm's frames: a request is an op byte ('W' write, 'T' take), a
// queue byte ('t' tasks, 'd' results, 'r' ready) and, for 'W', items of an
// 8-byte id and a payload of the task tuple's size; a take is answered with
// one item, a write with one byte.
constexpr char kWrite = 'W', kTake = 'T';
constexpr char kTasks = 't', kResults = 'd', kReady = 'r';

std::string item(std::int64_t id, std::size_t payload) {
  std::string s(sizeof id + payload, 'x');
  std::memcpy(s.data(), &id, sizeof id);
  return s;
}
std::int64_t item_id(const void* data) {
  std::int64_t id;
  std::memcpy(&id, data, sizeof id);
  return id;
}

}  // namespace

int run_zmq_queue(const std::string& endpoint, std::size_t payload) {
  zmq::socket_t router = server_socket(endpoint);
  std::map<char, std::deque<std::string>> items;   // by queue
  std::map<char, std::deque<std::string>> takers;  // routing ids of waiting takes, by queue
  auto send = [&](const std::string& to, const void* data, std::size_t n) {
    try {
      router.send(zmq::buffer(to), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
      router.send(zmq::const_buffer(data, n), zmq::send_flags::dontwait);
    } catch (const zmq::error_t&) {
      // The peer went away.
    }
  };
  const std::size_t item_bytes = sizeof(std::int64_t) + payload;
  while (true) {
    zmq::message_t id, body;
    if (!router.recv(id)) continue;
    if (!id.more() || !router.recv(body) || body.size() < 2) continue;
    std::string from(static_cast<const char*>(id.data()), id.size());
    const char* b = static_cast<const char*>(body.data());
    char queue = b[1];
    if (b[0] == kWrite) {
      for (std::size_t at = 2; at + item_bytes <= body.size(); at += item_bytes) {
        if (auto& waiting = takers[queue]; !waiting.empty()) {
          send(waiting.front(), b + at, item_bytes);
          waiting.pop_front();
        } else {
          items[queue].emplace_back(b + at, item_bytes);
        }
      }
      send(from, "k", 1);
    } else if (auto& q = items[queue]; !q.empty()) {
      send(from, q.front().data(), q.front().size());
      q.pop_front();
    } else {
      takers[queue].push_back(std::move(from));
    }
  }
}

int run_zmq_worker(const std::string& endpoint, std::size_t payload) {
  zmq::socket_t dealer = client_socket(endpoint);
  std::string ready = std::string{kWrite, kReady} + item(0, payload);
  dealer.send(zmq::buffer(ready));
  const std::string take{kTake, kTasks};
  zmq::message_t reply;
  if (!dealer.recv(reply)) return 1;  // the ready's ack
  bool posted = false;                // a result's write, unacknowledged
  while (true) {
    dealer.send(zmq::buffer(take));
    if (posted && !dealer.recv(reply)) return 1;  // the ack comes first
    if (!dealer.recv(reply)) return 1;
    std::int64_t id = item_id(reply.data());
    if (id < 0) return 0;
    // Posted, as the tuple-space worker's out: its ack is read with the next take's answer.
    std::string done =
        std::string{kWrite, kResults} + std::string(static_cast<const char*>(reply.data()), reply.size());
    dealer.send(zmq::buffer(done));
    posted = true;
  }
}

namespace {

// The farm of measure_farm (ts_phase.cc) on the queue server: the master
// writes the tasks 1,000 per request, k worker processes take a task and
// post its result, the master takes every result.
double measure_zmq_farm(const RunContext& ctx, int k, double& cpu_us_per_task) {
  const Sizes& z = ctx.sizes;
  std::string endpoint = "tcp://127.0.0.1:" + std::to_string(free_tcp_port());
  std::string size = std::to_string(task_image_bytes(z));
  ChildProcess server(
      {ctx.piranha, "ts", "bench", "--role", "zmq-queue", "--endpoint", endpoint, "--id", size},
      ctx.workdir + "/zmq-queue.log");
  Watchdog dog("ZeroMQ queue farm (k=" + std::to_string(k) + ")", std::chrono::seconds(240));
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int w = 0; w < k; ++w)
    workers.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{ctx.piranha, "ts", "bench", "--role", "zmq-worker", "--endpoint", endpoint,
                                 "--id", size},
        ctx.workdir + "/zmq-worker.log"));
  zmq::socket_t dealer = client_socket(endpoint);
  const std::size_t payload = task_image_bytes(z);
  const std::string take_ready{kTake, kReady}, take_result{kTake, kResults};
  zmq::message_t reply;
  for (int w = 0; w < k; ++w) {
    dealer.send(zmq::buffer(take_ready));
    if (!dealer.recv(reply)) throw std::runtime_error("zeromq farm: receive failed");
  }
  std::vector<char> seen(z.tasks, 0);
  double server_cpu0 = process_cpu_seconds(server.pid()), master_cpu0 = self_cpu_seconds();
  auto t0 = Clock::now();
  for (std::size_t i = 0; i < z.tasks;) {
    std::string batch{kWrite, kTasks};
    for (std::size_t j = 0; j < z.batch && i < z.tasks; ++j, ++i)
      batch += item(static_cast<std::int64_t>(i), payload);
    dealer.send(zmq::buffer(batch));
    if (!dealer.recv(reply)) throw std::runtime_error("zeromq farm: receive failed");
  }
  for (std::size_t n = 0; n < z.tasks; ++n) {
    dealer.send(zmq::buffer(take_result));
    if (!dealer.recv(reply)) throw std::runtime_error("zeromq farm: receive failed");
    auto id = static_cast<std::size_t>(item_id(reply.data()));
    if (id >= z.tasks || seen[id])
      throw std::runtime_error("zeromq farm: a result arrived twice or out of range");
    seen[id] = 1;
  }
  double elapsed = seconds(Clock::now() - t0);
  double cpu = (process_cpu_seconds(server.pid()) - server_cpu0) + (self_cpu_seconds() - master_cpu0);
  std::string stop{kWrite, kTasks};
  for (int w = 0; w < k; ++w) stop += item(-1, payload);
  dealer.send(zmq::buffer(stop));
  if (!dealer.recv(reply)) throw std::runtime_error("zeromq farm: receive failed");
  for (auto& w : workers)
    if (int status = w->wait(); status != 0)
      throw std::runtime_error("a ZeroMQ farm worker exited with status " + std::to_string(status) + "\n" +
                               w->log_tail());
  for (auto& w : workers) cpu += w->cpu_seconds();
  cpu_us_per_task = cpu * 1e6 / static_cast<double>(z.tasks);
  return static_cast<double>(z.tasks) / elapsed;
}

}  // namespace

int run_zmq_echo(const std::string& endpoint) {
  zmq::socket_t router = server_socket(endpoint);
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

  zmq::socket_t dealer = client_socket(endpoint);

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
  for (int k = 1; k <= 2; ++k) {
    log << "zeromq: queue farm, " << z.tasks << " tasks, " << k << " worker(s)..." << std::flush;
    f.farm_per_s[k - 1] = measure_zmq_farm(ctx, k, f.farm_cpu_us[k - 1]);
    log << " " << static_cast<long>(f.farm_per_s[k - 1]) << " tasks/s, " << f.farm_cpu_us[k - 1]
        << " us CPU per task\n";
  }
  return f;
}

}  // namespace piranha::bench
