// The tuple-space side: `piranha ts serve` in a child process, driven through
// the ordinary blocking Client and Space API, as an application would.
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <stdexcept>
#include <vector>

#include "phases.h"
#include "piranha/tuplespace/client.h"
#include "piranha/tuplespace/codec.h"
#include "piranha/tuplespace/curve.h"

namespace piranha::bench {
namespace {

using ts::formal;

// A `piranha ts serve` child on a free loopback port.
struct ServerProcess {
  std::string endpoint;
  std::unique_ptr<ChildProcess> child;

  // `flags`: more `ts serve` options (--data DIR --fsync P).
  ServerProcess(const RunContext& ctx, const std::string& name, const std::vector<std::string>& flags = {}) {
    endpoint = "tcp://127.0.0.1:" + std::to_string(free_tcp_port());
    std::vector<std::string> argv{ctx.piranha, "ts", "serve", "--bind", endpoint, "--quiet"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    child = std::make_unique<ChildProcess>(argv, ctx.workdir + "/" + name + ".log");
    try {
      ts::Client probe(endpoint);  // waits for the server's hello
    } catch (const std::exception& e) {
      throw std::runtime_error("the tuple-space server (" + ctx.piranha + " ts serve --bind " + endpoint +
                               ") did not start: " + e.what() + "\n" + child->log_tail());
    }
  }
};

// Round-trip samples on one server, gathered in one stretch or several.
struct RoundTrips {
  std::vector<double> rtt, out, in;
  double server_cpu = 0, client_cpu = 0;  // seconds, over the timed samples
};

// `samples` timed out+in round trips (after `warmup` untimed ones) over
// `client`, added to `acc`.
void sample_round_trips(const RunContext& ctx, const ServerProcess& server, ts::Client& client,
                        std::size_t warmup, std::size_t samples, RoundTrips& acc) {
  const Sizes& z = ctx.sizes;
  Watchdog dog("tuple-space round trips", std::chrono::seconds(120));
  ts::Space space = client.space("rtt");
  ts::Blob blob = payload_blob(z.payload);
  double server_cpu0 = 0, client_cpu0 = 0;
  for (std::size_t i = 0; i < warmup + samples; ++i) {
    if (i == warmup) {
      server_cpu0 = process_cpu_seconds(server.child->pid());
      client_cpu0 = self_cpu_seconds();
    }
    auto id = static_cast<std::int64_t>(i);
    auto t0 = Clock::now();
    space.out_posted("task", id, blob);
    auto t1 = Clock::now();
    ts::Tuple t = space.in("task", formal<std::int64_t>, formal<ts::Blob>);
    auto t2 = Clock::now();
    if (t.get<std::int64_t>(1) != id) throw std::runtime_error("round trip returned the wrong tuple");
    if (i < warmup) continue;
    acc.rtt.push_back(micros(t2 - t0));
    acc.out.push_back(micros(t1 - t0));
    acc.in.push_back(micros(t2 - t1));
  }
  acc.server_cpu += process_cpu_seconds(server.child->pid()) - server_cpu0;
  acc.client_cpu += self_cpu_seconds() - client_cpu0;
}

// The summary of what `acc` gathered: its latency, and the halves and CPU.
Latency summarize_round_trips(RoundTrips acc, Latency* out_half, Latency* in_half, CpuCost& cpu) {
  auto n = static_cast<double>(acc.rtt.size());
  cpu.server_us = acc.server_cpu * 1e6 / n;
  cpu.client_us = acc.client_cpu * 1e6 / n;
  if (out_half) *out_half = summarize(std::move(acc.out));
  if (in_half) *in_half = summarize(std::move(acc.in));
  return summarize(std::move(acc.rtt));
}

// Writes `n` tuples ("task", i, blob) with out_many, `batch` per request.
void out_batches(ts::Space& space, std::size_t first, std::size_t n, std::size_t batch,
                 const ts::Blob& blob) {
  std::vector<ts::Tuple> tuples;
  tuples.reserve(batch);
  for (std::size_t i = first; i < first + n;) {
    tuples.clear();
    for (std::size_t j = 0; j < batch && i < first + n; ++j, ++i)
      tuples.push_back(task_tuple(static_cast<std::int64_t>(i), blob));
    space.out_many(tuples);
  }
}

double measure_bulk(const RunContext& ctx, const std::string& endpoint) {
  const Sizes& z = ctx.sizes;
  Watchdog dog("tuple-space bulk out_many", std::chrono::seconds(120));
  ts::Client client(endpoint);
  ts::Blob blob = payload_blob(z.payload);
  {
    ts::Space warm = client.space("bulk-warmup");
    out_batches(warm, 0, z.batch, z.batch, blob);
    client.remove("bulk-warmup");
  }
  ts::Space space = client.space("bulk");
  auto t0 = Clock::now();
  out_batches(space, 0, z.bulk, z.batch, blob);
  double elapsed = seconds(Clock::now() - t0);
  auto st = client.stats("bulk");
  if (!st || st->tuples != z.bulk)
    throw std::runtime_error("bulk: the space does not hold every tuple written");
  client.remove("bulk");
  return static_cast<double>(z.bulk) / elapsed;
}

// One master (this process) and k worker processes, each with its own
// connection: the master writes the tasks with out_many, each worker loops
// in(task) -> out(done), the master takes every result.
double measure_farm(const RunContext& ctx, const ServerProcess& server, int k, double& cpu_us_per_task) {
  const Sizes& z = ctx.sizes;
  const std::string& endpoint = server.endpoint;
  Watchdog dog("tuple-space task farm (k=" + std::to_string(k) + ")", std::chrono::seconds(240));
  std::string name = "farm" + std::to_string(k);
  ts::Client client(endpoint);
  ts::Space space = client.space(name);
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int w = 0; w < k; ++w)
    workers.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{ctx.piranha, "ts", "bench", "--role", "ts-worker", "--endpoint", endpoint,
                                 "--space", name, "--id", std::to_string(w)},
        ctx.workdir + "/ts-worker.log"));
  for (int w = 0; w < k; ++w) (void)space.in("ready", formal<std::int64_t>);

  ts::Blob blob = payload_blob(z.payload);
  std::vector<char> seen(z.tasks, 0);
  double server_cpu0 = process_cpu_seconds(server.child->pid()), master_cpu0 = self_cpu_seconds();
  auto t0 = Clock::now();
  out_batches(space, 0, z.tasks, z.batch, blob);
  for (std::size_t n = 0; n < z.tasks; ++n) {
    ts::Tuple t = space.in("done", formal<std::int64_t>, formal<ts::Blob>);
    auto id = static_cast<std::size_t>(t.get<std::int64_t>(1));
    if (id >= z.tasks || seen[id]) throw std::runtime_error("farm: a result arrived twice or out of range");
    seen[id] = 1;
  }
  double elapsed = seconds(Clock::now() - t0);
  double cpu = (process_cpu_seconds(server.child->pid()) - server_cpu0) + (self_cpu_seconds() - master_cpu0);

  for (int w = 0; w < k; ++w) space.out("task", std::int64_t{-1}, ts::Blob());
  for (auto& w : workers)
    if (int status = w->wait(); status != 0)
      throw std::runtime_error("a tuple-space farm worker exited with status " + std::to_string(status) +
                               "\n" + w->log_tail());
  for (auto& w : workers) cpu += w->cpu_seconds();  // their whole life: start-up is a few ms
  cpu_us_per_task = cpu * 1e6 / static_cast<double>(z.tasks);
  client.remove(name);
  return static_cast<double>(z.tasks) / elapsed;
}

// The in of a just-written ("probe", i, blob) tuple, timed alone.
Latency measure_in(const Sizes& z, ts::Space& space, std::int64_t& next_id) {
  ts::Blob blob = payload_blob(z.filler_blob);
  std::vector<double> us;
  us.reserve(z.samples);
  for (std::size_t i = 0; i < z.warmup + z.samples; ++i) {
    std::int64_t id = next_id++;
    space.out_posted("probe", id, blob);
    space.connection().flush();  // time the in alone
    auto t0 = Clock::now();
    ts::Tuple t = space.in("probe", formal<std::int64_t>, formal<ts::Blob>);
    auto t1 = Clock::now();
    if (t.get<std::int64_t>(1) != id) throw std::runtime_error("probe returned the wrong tuple");
    if (i >= z.warmup) us.push_back(micros(t1 - t0));
  }
  return summarize(std::move(us));
}

}  // namespace

ts::Blob payload_blob(std::size_t bytes) {
  std::string b(bytes, '\0');
  for (std::size_t i = 0; i < bytes; ++i) b[i] = static_cast<char>('a' + i % 26);
  return ts::Blob(std::move(b));
}

ts::Tuple task_tuple(std::int64_t i, const ts::Blob& payload) {
  return ts::Tuple::of("task", i, payload);
}

std::size_t task_image_bytes(const Sizes& z) {
  return ts::image_of(task_tuple(static_cast<std::int64_t>(z.tasks / 2), payload_blob(z.payload)))
      .bytes.size();
}

TupleSpaceFigures measure_tuple_space(const RunContext& ctx) {
  auto& log = *ctx.progress;
  TupleSpaceFigures f;
  ServerProcess server(ctx, "ts-server");
  log << "tuple space: server pid " << server.child->pid() << " on " << server.endpoint << "\n";

  log << "tuple space: " << ctx.sizes.samples << " out+in round trips..." << std::flush;
  {
    ts::Client client(server.endpoint);
    RoundTrips acc;
    sample_round_trips(ctx, server, client, ctx.sizes.warmup, ctx.sizes.samples, acc);
    f.rtt = summarize_round_trips(std::move(acc), &f.out, &f.in, f.rtt_cpu);
  }
  log << " p50 " << f.rtt.p50 << " us, p99 " << f.rtt.p99 << " us; CPU per round trip: server "
      << f.rtt_cpu.server_us << " us, client " << f.rtt_cpu.client_us << " us\n";

  log << "tuple space: bulk out_many of " << ctx.sizes.bulk << " tuples..." << std::flush;
  f.bulk_out_per_s = measure_bulk(ctx, server.endpoint);
  log << " " << static_cast<long>(f.bulk_out_per_s) << " tuples/s\n";

  for (int k = 1; k <= 2; ++k) {
    log << "tuple space: task farm, " << ctx.sizes.tasks << " tasks, " << k << " worker(s)..." << std::flush;
    f.farm_per_s[k - 1] = measure_farm(ctx, server, k, f.farm_cpu_us[k - 1]);
    log << " " << static_cast<long>(f.farm_per_s[k - 1]) << " tasks/s, " << f.farm_cpu_us[k - 1]
        << " us CPU per task\n";
  }
  return f;
}

DurableFigures measure_durable(const RunContext& ctx) {
  auto& log = *ctx.progress;
  DurableFigures f;
  for (int p = 0; p < 2; ++p) {
    std::string policy = kFsyncPolicies[p];
    ServerProcess server(ctx, "ts-durable-" + policy,
                         {"--data", ctx.workdir + "/ts-data-" + policy, "--fsync", policy});
    log << "tuple space, durable (--fsync " << policy << "): bulk out_many of " << ctx.sizes.bulk
        << " tuples..." << std::flush;
    f.bulk_out_per_s[p] = measure_bulk(ctx, server.endpoint);
    log << " " << static_cast<long>(f.bulk_out_per_s[p]) << " tuples/s; task farm, 2 workers..."
        << std::flush;
    double cpu = 0;
    f.farm2_per_s[p] = measure_farm(ctx, server, 2, cpu);
    log << " " << static_cast<long>(f.farm2_per_s[p]) << " tasks/s\n";
  }
  return f;
}

namespace {

// How many turns the CURVE and the plain server take at the round trips.
constexpr int kCurveTurns = 5;

// Puts a client's keys in the environment for as long as it lives, where
// this process's clients and the farm's worker processes find them.
struct KeysInEnvironment {
  KeysInEnvironment(const std::string& key, const std::string& server_key) {
    ::setenv(ts::kKeyEnv, key.c_str(), 1);
    ::setenv(ts::kServerKeyEnv, server_key.c_str(), 1);
  }
  ~KeysInEnvironment() {
    ::unsetenv(ts::kKeyEnv);
    ::unsetenv(ts::kServerKeyEnv);
  }
  KeysInEnvironment(const KeysInEnvironment&) = delete;
  KeysInEnvironment& operator=(const KeysInEnvironment&) = delete;
};

}  // namespace

CurveFigures measure_curve(const RunContext& ctx) {
  auto& log = *ctx.progress;
  const Sizes& z = ctx.sizes;
  CurveFigures f;
  const std::string dir = ctx.workdir + "/curve";
  if (::mkdir(dir.c_str(), 0700) != 0) throw std::runtime_error("cannot create " + dir);
  ts::write_key_files(dir + "/server", ts::new_curve_key_pair(), "bench server");
  ts::write_key_files(dir + "/bench", ts::new_curve_key_pair(), "bench client");
  std::ofstream(dir + "/auth.yaml") << "clients:\n  - {name: bench, key: bench.pub, role: job, spaces: [rtt, "
                                       "\"farm*\"]}\n";
  auto with_keys = [&] {
    return std::make_unique<KeysInEnvironment>(dir + "/bench.key", dir + "/server.pub");
  };
  ServerProcess plain(ctx, "ts-paired-server");
  std::unique_ptr<ServerProcess> curve_server;
  std::unique_ptr<ts::Client> curve_client;
  {
    auto keys = with_keys();  // the server's probe and this client need them
    curve_server = std::make_unique<ServerProcess>(
        ctx, "ts-curve-server",
        std::vector<std::string>{"--key", dir + "/server.key", "--auth", dir + "/auth.yaml"});
    curve_client = std::make_unique<ts::Client>(curve_server->endpoint);
  }
  ServerProcess& curve = *curve_server;
  log << "tuple space with CURVE (--key, --auth): server pid " << curve.child->pid()
      << ", measured in turns with a plain server (pid " << plain.child->pid() << ")\n";

  // In turns, so that whatever else the machine does falls on both alike.
  log << "tuple space with CURVE: " << z.samples << " out+in round trips on each, in " << kCurveTurns
      << " turns..." << std::flush;
  ts::Client plain_client(plain.endpoint);
  RoundTrips on_plain, on_curve;
  const std::size_t per_turn = std::max<std::size_t>(1, z.samples / kCurveTurns);
  const std::size_t warmup = std::max<std::size_t>(1, z.warmup / kCurveTurns);
  for (int turn = 0; turn < kCurveTurns; ++turn) {
    sample_round_trips(ctx, plain, plain_client, warmup, per_turn, on_plain);
    sample_round_trips(ctx, curve, *curve_client, warmup, per_turn, on_curve);
  }
  f.plain_rtt = summarize_round_trips(std::move(on_plain), nullptr, nullptr, f.plain_rtt_cpu);
  f.rtt = summarize_round_trips(std::move(on_curve), nullptr, nullptr, f.rtt_cpu);
  log << " p50 " << f.rtt.p50 << " us (plain " << f.plain_rtt.p50 << " us); CPU per round trip: server "
      << f.rtt_cpu.server_us << " us (" << f.plain_rtt_cpu.server_us << "), client " << f.rtt_cpu.client_us
      << " us (" << f.plain_rtt_cpu.client_us << ")\n";

  // Each farm twice on each server, in turns, half the tasks each time.
  RunContext half = ctx;
  half.sizes.tasks = std::max<std::size_t>(1, z.tasks / 2);
  for (int k = 1; k <= 2; ++k) {
    log << "tuple space with CURVE: task farm, " << z.tasks << " tasks on each, " << k << " worker(s)..."
        << std::flush;
    double seconds_on[2] = {0, 0}, cpu_on[2] = {0, 0};  // plain, CURVE
    for (int turn = 0; turn < 2; ++turn)
      for (int side = 0; side < 2; ++side) {
        auto keys = side == 1 ? with_keys() : nullptr;
        double cpu_us = 0;
        double rate = measure_farm(half, side == 1 ? curve : plain, k, cpu_us);
        seconds_on[side] += static_cast<double>(half.sizes.tasks) / rate;
        cpu_on[side] += cpu_us * static_cast<double>(half.sizes.tasks);
      }
    const double tasks = 2.0 * static_cast<double>(half.sizes.tasks);
    f.plain_farm_per_s[k - 1] = tasks / seconds_on[0];
    f.farm_per_s[k - 1] = tasks / seconds_on[1];
    f.plain_farm_cpu_us[k - 1] = cpu_on[0] / tasks;
    f.farm_cpu_us[k - 1] = cpu_on[1] / tasks;
    log << " " << static_cast<long>(f.farm_per_s[k - 1]) << " tasks/s (plain "
        << static_cast<long>(f.plain_farm_per_s[k - 1]) << "), " << f.farm_cpu_us[k - 1]
        << " us CPU per task (" << f.plain_farm_cpu_us[k - 1] << ")\n";
  }
  return f;
}

MemoryFigures measure_memory(const RunContext& ctx) {
  auto& log = *ctx.progress;
  const Sizes& z = ctx.sizes;
  MemoryFigures f;
  // A fresh server, so heap freed by earlier phases cannot hide the growth.
  ServerProcess server(ctx, "ts-memory-server");
  Watchdog dog("tuple-space in latency / memory", std::chrono::seconds(240));
  ts::Client client(server.endpoint);
  ts::Space space = client.space("mem");
  std::int64_t next_id = 0;

  log << "tuple space: in latency, empty space..." << std::flush;
  f.in_empty = measure_in(z, space, next_id);
  log << " p50 " << f.in_empty.p50 << " us\n";

  log << "tuple space: loading " << z.filler << " unrelated tuples (\"filler\", i, blob(" << z.filler_blob
      << "))..." << std::flush;
  std::uint64_t rss0 = resident_bytes(server.child->pid());
  ts::Blob blob = payload_blob(z.filler_blob);
  std::vector<ts::Tuple> tuples;
  tuples.reserve(z.filler_batch);
  auto t0 = Clock::now();
  for (std::size_t i = 0; i < z.filler;) {
    tuples.clear();
    for (std::size_t j = 0; j < z.filler_batch && i < z.filler; ++j, ++i)
      tuples.push_back(ts::Tuple::of("filler", static_cast<std::int64_t>(i), blob));
    space.out_many(tuples);
  }
  f.load_per_s = static_cast<double>(z.filler) / seconds(Clock::now() - t0);
  auto st = client.stats("mem");
  std::uint64_t rss1 = resident_bytes(server.child->pid());
  if (!st || st->tuples != z.filler)
    throw std::runtime_error("memory: the space does not hold every filler tuple");
  f.tuples = z.filler;
  f.payload_bytes_per_tuple = static_cast<double>(st->bytes) / static_cast<double>(st->tuples);
  f.rss_bytes_per_tuple =
      (static_cast<double>(rss1) - static_cast<double>(rss0)) / static_cast<double>(z.filler);
  log << " RSS +" << (rss1 - rss0) / (1024 * 1024) << " MiB, " << f.rss_bytes_per_tuple << " bytes/tuple\n";

  log << "tuple space: in latency, " << z.filler << " tuples resident..." << std::flush;
  f.in_full = measure_in(z, space, next_id);
  log << " p50 " << f.in_full.p50 << " us\n";
  return f;
}

int run_ts_worker(const std::string& endpoint, const std::string& name, long id) {
  ts::Client client(endpoint);
  ts::Space space = client.space(name);
  space.out("ready", static_cast<std::int64_t>(id));
  while (true) {
    ts::Tuple t = space.in("task", formal<std::int64_t>, formal<ts::Blob>);
    std::int64_t task = t.get<std::int64_t>(1);
    if (task < 0) return 0;
    space.out_posted("done", task, t.get<ts::Blob>(2));
  }
}

}  // namespace piranha::bench
