// The Redis side: redis-server (persistence off) in a child process, driven
// through hiredis doing the same work on lists that the tuple space does with
// tuples: every value is as long as the canonical task tuple, and every
// operation sends the same messages and waits as often as its counterpart
// (the tuple-space client posts out without waiting, so Redis pipelines the
// matching LPUSH with the request that follows it).
#include <hiredis/hiredis.h>

#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <thread>
#include <vector>

#include "phases.h"
#include "piranha/tuplespace/codec.h"

namespace piranha::bench {
namespace {

struct ReplyFree {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyFree>;

// One blocking hiredis connection.
class Connection {
 public:
  Connection(const std::string& host, int port) {
    timeval tv{2, 0};
    c_ = redisConnectWithTimeout(host.c_str(), port, tv);
    if (!c_) throw std::runtime_error("redis: out of memory connecting");
    if (c_->err) {
      std::string why = c_->errstr;
      redisFree(c_);
      throw std::runtime_error("redis: cannot connect to " + host + ":" + std::to_string(port) + ": " + why);
    }
  }
  ~Connection() { redisFree(c_); }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  Reply command(const std::vector<std::string_view>& args) {
    fill(args);
    auto* r = static_cast<redisReply*>(
        redisCommandArgv(c_, static_cast<int>(argv_.size()), argv_.data(), len_.data()));
    return checked(r);
  }
  void append(const std::vector<std::string_view>& args) {
    fill(args);
    if (redisAppendCommandArgv(c_, static_cast<int>(argv_.size()), argv_.data(), len_.data()) != REDIS_OK)
      throw std::runtime_error(std::string("redis: ") + c_->errstr);
  }
  Reply next_reply() {
    void* r = nullptr;
    if (redisGetReply(c_, &r) != REDIS_OK) throw std::runtime_error(std::string("redis: ") + c_->errstr);
    return checked(static_cast<redisReply*>(r));
  }

 private:
  void fill(const std::vector<std::string_view>& args) {
    argv_.clear();
    len_.clear();
    for (auto a : args) {
      argv_.push_back(a.data());
      len_.push_back(a.size());
    }
  }
  Reply checked(redisReply* r) {
    if (!r) throw std::runtime_error(std::string("redis: ") + (c_->err ? c_->errstr : "no reply"));
    Reply owned(r);
    if (r->type == REDIS_REPLY_ERROR) throw std::runtime_error("redis error: " + std::string(r->str, r->len));
    return owned;
  }
  redisContext* c_ = nullptr;
  std::vector<const char*> argv_;
  std::vector<std::size_t> len_;
};

// The popped value of a BRPOP reply ([key, value]).
std::string_view popped(const Reply& r) {
  if (r->type != REDIS_REPLY_ARRAY || r->elements != 2)
    throw std::runtime_error("redis: BRPOP returned nothing");
  return {r->element[1]->str, r->element[1]->len};
}

// A value of `bytes` bytes whose first 8 hold `id`.
void stamp(std::string& value, std::uint64_t id) {
  std::memcpy(value.data(), &id, sizeof id);
}
std::uint64_t id_of(std::string_view value) {
  std::uint64_t id = 0;
  if (value.size() >= sizeof id) std::memcpy(&id, value.data(), sizeof id);
  return id;
}
std::string make_value(std::size_t bytes) {
  std::string v = payload_blob(std::max<std::size_t>(bytes, 8)).bytes;
  stamp(v, 0);
  return v;
}

constexpr std::string_view kStop = "stop";  // shorter than any task value

std::pair<std::string, int> split_host_port(const std::string& endpoint) {
  auto colon = endpoint.rfind(':');
  if (colon == std::string::npos)
    throw std::invalid_argument("redis endpoint must be host:port: " + endpoint);
  return {endpoint.substr(0, colon), std::stoi(endpoint.substr(colon + 1))};
}

// redis-server on a free loopback port, no persistence; or with AOF when
// `appendfsync` is given (always, everysec), in a directory of its own.
struct RedisProcess {
  int port = 0;
  std::unique_ptr<ChildProcess> child;

  RedisProcess(const RunContext& ctx, const std::string& program, const std::string& name,
               const std::string& appendfsync = "") {
    port = free_tcp_port();
    std::vector<std::string> argv{program,  "--port", std::to_string(port), "--bind", "127.0.0.1",
                                  "--save", "",       "--daemonize",        "no"};
    if (appendfsync.empty()) {
      argv.insert(argv.end(), {"--appendonly", "no", "--dir", ctx.workdir});
    } else {
      std::string dir = ctx.workdir + "/" + name;
      std::filesystem::create_directories(dir);
      argv.insert(argv.end(), {"--appendonly", "yes", "--appendfsync", appendfsync, "--dir", dir});
    }
    child = std::make_unique<ChildProcess>(argv, ctx.workdir + "/" + name + ".log");
    auto deadline = Clock::now() + std::chrono::seconds(5);
    while (true) {
      try {
        Connection c("127.0.0.1", port);
        Reply r = c.command({"PING"});
        return;
      } catch (const std::exception& e) {
        if (!child->running() || Clock::now() > deadline)
          throw std::runtime_error("redis-server did not start: " + std::string(e.what()) + "\n" +
                                   child->log_tail());
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
};

// LPUSH then BRPOP of the same value. Pipelined (the default) the client
// sends both and then reads both replies: one wait per sample, exactly like
// the tuple space's posted out followed by in. Unpipelined it waits for each
// reply: two waits, how a naive hiredis program does it.
Latency measure_round_trips(const Sizes& z, Connection& c, pid_t server, std::size_t value_bytes,
                            bool pipelined, CpuCost& cpu) {
  Watchdog dog("Redis round trips", std::chrono::seconds(120));
  std::string value = make_value(value_bytes);
  std::vector<double> us;
  us.reserve(z.samples);
  double server_cpu0 = 0, client_cpu0 = 0;
  for (std::size_t i = 0; i < z.warmup + z.samples; ++i) {
    if (i == z.warmup) {
      server_cpu0 = process_cpu_seconds(server);
      client_cpu0 = self_cpu_seconds();
    }
    stamp(value, i);
    auto t0 = Clock::now();
    Reply r;
    if (pipelined) {
      c.append({"LPUSH", "rtt", value});
      c.append({"BRPOP", "rtt", "0"});
      (void)c.next_reply();
      r = c.next_reply();
    } else {
      c.command({"LPUSH", "rtt", value});
      r = c.command({"BRPOP", "rtt", "0"});
    }
    auto t1 = Clock::now();
    if (id_of(popped(r)) != i) throw std::runtime_error("redis round trip returned the wrong value");
    if (i >= z.warmup) us.push_back(micros(t1 - t0));
  }
  cpu.server_us = (process_cpu_seconds(server) - server_cpu0) * 1e6 / static_cast<double>(z.samples);
  cpu.client_us = (self_cpu_seconds() - client_cpu0) * 1e6 / static_cast<double>(z.samples);
  return summarize(std::move(us));
}

// `n` single-value LPUSHes to `key`, `batch` per pipeline flush.
void pipelined_lpush(Connection& c, std::string_view key, std::size_t n, std::size_t batch,
                     std::string& value) {
  for (std::size_t i = 0; i < n;) {
    std::size_t sent = 0;
    for (; sent < batch && i < n; ++sent, ++i) {
      stamp(value, i);
      c.append({"LPUSH", key, value});
    }
    for (std::size_t j = 0; j < sent; ++j) (void)c.next_reply();
  }
}

double measure_pipelined(const Sizes& z, Connection& c, std::size_t value_bytes) {
  Watchdog dog("Redis pipelined LPUSH", std::chrono::seconds(120));
  std::string value = make_value(value_bytes);
  pipelined_lpush(c, "bulk-warmup", z.batch, z.batch, value);
  c.command({"DEL", "bulk-warmup"});
  auto t0 = Clock::now();
  pipelined_lpush(c, "bulk", z.bulk, z.batch, value);
  double elapsed = seconds(Clock::now() - t0);
  Reply len = c.command({"LLEN", "bulk"});
  if (len->type != REDIS_REPLY_INTEGER || static_cast<std::size_t>(len->integer) != z.bulk)
    throw std::runtime_error("redis bulk: the list does not hold every value pushed");
  c.command({"DEL", "bulk"});
  return static_cast<double>(z.bulk) / elapsed;
}

// One LPUSH key v1 .. vB per batch: Redis's own batch write.
double measure_lpush_batch(const Sizes& z, Connection& c, std::size_t value_bytes) {
  Watchdog dog("Redis variadic LPUSH", std::chrono::seconds(120));
  std::vector<std::string> values(z.batch, make_value(value_bytes));
  std::vector<std::string_view> args;
  auto t0 = Clock::now();
  for (std::size_t i = 0; i < z.bulk;) {
    args.assign({"LPUSH", "bulk"});
    for (std::size_t j = 0; j < z.batch && i < z.bulk; ++j, ++i) {
      stamp(values[j], i);
      args.push_back(values[j]);
    }
    c.command(args);
  }
  double elapsed = seconds(Clock::now() - t0);
  c.command({"DEL", "bulk"});
  return static_cast<double>(z.bulk) / elapsed;
}

double measure_farm(const RunContext& ctx, Connection& c, const RedisProcess& redis, std::size_t value_bytes,
                    int k, double& cpu_us_per_task) {
  int port = redis.port;
  const Sizes& z = ctx.sizes;
  Watchdog dog("Redis task farm (k=" + std::to_string(k) + ")", std::chrono::seconds(240));
  std::string name = "farm" + std::to_string(k);
  std::string tasks = name + ":tasks", done = name + ":done", ready = name + ":ready";
  std::vector<std::unique_ptr<ChildProcess>> workers;
  for (int w = 0; w < k; ++w)
    workers.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{ctx.piranha, "ts", "bench", "--role", "redis-worker", "--endpoint",
                                 "127.0.0.1:" + std::to_string(port), "--space", name, "--id",
                                 std::to_string(w)},
        ctx.workdir + "/redis-worker.log"));
  for (int w = 0; w < k; ++w) (void)popped(c.command({"BRPOP", ready, "0"}));

  std::string value = make_value(value_bytes);
  std::vector<char> seen(z.tasks, 0);
  double server_cpu0 = process_cpu_seconds(redis.child->pid()), master_cpu0 = self_cpu_seconds();
  auto t0 = Clock::now();
  pipelined_lpush(c, tasks, z.tasks, z.batch, value);
  for (std::size_t n = 0; n < z.tasks; ++n) {
    Reply r = c.command({"BRPOP", done, "0"});
    std::uint64_t id = id_of(popped(r));
    if (id >= z.tasks || seen[id])
      throw std::runtime_error("redis farm: a result arrived twice or out of range");
    seen[id] = 1;
  }
  double elapsed = seconds(Clock::now() - t0);
  double cpu = (process_cpu_seconds(redis.child->pid()) - server_cpu0) + (self_cpu_seconds() - master_cpu0);

  for (int w = 0; w < k; ++w) c.command({"LPUSH", tasks, kStop});
  for (auto& w : workers)
    if (int status = w->wait(); status != 0)
      throw std::runtime_error("a Redis farm worker exited with status " + std::to_string(status) + "\n" +
                               w->log_tail());
  for (auto& w : workers) cpu += w->cpu_seconds();  // their whole life: start-up is a few ms
  cpu_us_per_task = cpu * 1e6 / static_cast<double>(z.tasks);
  c.command({"DEL", tasks, done, ready});
  return static_cast<double>(z.tasks) / elapsed;
}

// Resident bytes per list item for `n` filler-sized values, on a fresh server.
double measure_memory(const RunContext& ctx, const std::string& program) {
  const Sizes& z = ctx.sizes;
  Watchdog dog("Redis memory", std::chrono::seconds(120));
  RedisProcess redis(ctx, program, "redis-memory");
  Connection c("127.0.0.1", redis.port);
  std::size_t bytes = ts::image_of(ts::Tuple::of("filler", static_cast<std::int64_t>(z.filler / 2),
                                                 payload_blob(z.filler_blob)))
                          .bytes.size();
  std::vector<std::string> values(z.filler_batch, make_value(bytes));
  std::vector<std::string_view> args;
  std::uint64_t rss0 = resident_bytes(redis.child->pid());
  for (std::size_t i = 0; i < z.filler;) {
    args.assign({"LPUSH", "filler"});
    for (std::size_t j = 0; j < z.filler_batch && i < z.filler; ++j, ++i) {
      stamp(values[j], i);
      args.push_back(values[j]);
    }
    c.command(args);
  }
  std::uint64_t rss1 = resident_bytes(redis.child->pid());
  return (static_cast<double>(rss1) - static_cast<double>(rss0)) / static_cast<double>(z.filler);
}

std::string server_version(Connection& c) {
  Reply r = c.command({"INFO", "server"});
  std::string_view info(r->str, r->len);
  auto at = info.find("redis_version:");
  if (at == std::string_view::npos) return "?";
  auto from = at + std::strlen("redis_version:");
  return std::string(info.substr(from, info.find_first_of("\r\n", from) - from));
}

}  // namespace

std::optional<RedisFigures> measure_redis(const RunContext& ctx, const std::string& program,
                                          std::string& note) {
  auto& log = *ctx.progress;
  const Sizes& z = ctx.sizes;
  RedisFigures f;
  f.value_bytes = task_image_bytes(z);
  try {
    RedisProcess redis(ctx, program, "redis");
    Connection c("127.0.0.1", redis.port);
    f.version = server_version(c);
    log << "redis: redis-server " << f.version << " pid " << redis.child->pid()
        << " on 127.0.0.1:" << redis.port << "\n";

    log << "redis: " << z.samples << " pipelined LPUSH+BRPOP round trips (" << f.value_bytes
        << "-byte values)..." << std::flush;
    f.rtt = measure_round_trips(z, c, redis.child->pid(), f.value_bytes, true, f.rtt_cpu);
    log << " p50 " << f.rtt.p50 << " us, p99 " << f.rtt.p99 << " us; CPU per round trip: server "
        << f.rtt_cpu.server_us << " us, client " << f.rtt_cpu.client_us << " us\n";

    log << "redis: " << z.samples << " LPUSH, then BRPOP, each waited for..." << std::flush;
    CpuCost unused;
    f.rtt_unpipelined = measure_round_trips(z, c, redis.child->pid(), f.value_bytes, false, unused);
    log << " p50 " << f.rtt_unpipelined.p50 << " us, p99 " << f.rtt_unpipelined.p99 << " us\n";

    log << "redis: pipelined LPUSH of " << z.bulk << " values..." << std::flush;
    f.pipelined_per_s = measure_pipelined(z, c, f.value_bytes);
    log << " " << static_cast<long>(f.pipelined_per_s) << " values/s\n";

    log << "redis: variadic LPUSH of " << z.bulk << " values, " << z.batch << " per command..." << std::flush;
    f.lpush_batch_per_s = measure_lpush_batch(z, c, f.value_bytes);
    log << " " << static_cast<long>(f.lpush_batch_per_s) << " values/s\n";

    for (int k = 1; k <= 2; ++k) {
      log << "redis: task farm, " << z.tasks << " tasks, " << k << " worker(s)..." << std::flush;
      f.farm_per_s[k - 1] = measure_farm(ctx, c, redis, f.value_bytes, k, f.farm_cpu_us[k - 1]);
      log << " " << static_cast<long>(f.farm_per_s[k - 1]) << " tasks/s, " << f.farm_cpu_us[k - 1]
          << " us CPU per task\n";
    }

    for (int p = 0; p < 2; ++p) {
      std::string policy = kFsyncPolicies[p];
      RedisProcess aof(ctx, program, "redis-aof-" + policy, policy);
      Connection ac("127.0.0.1", aof.port);
      log << "redis, AOF (appendfsync " << policy << "): pipelined LPUSH of " << z.bulk << " values..."
          << std::flush;
      f.aof_pipelined_per_s[p] = measure_pipelined(z, ac, f.value_bytes);
      log << " " << static_cast<long>(f.aof_pipelined_per_s[p]) << " values/s; task farm, 2 workers..."
          << std::flush;
      double cpu = 0;
      f.aof_farm2_per_s[p] = measure_farm(ctx, ac, aof, f.value_bytes, 2, cpu);
      log << " " << static_cast<long>(f.aof_farm2_per_s[p]) << " tasks/s\n";
    }

    log << "redis: resident memory for " << z.filler << " list items..." << std::flush;
    f.rss_bytes_per_item = measure_memory(ctx, program);
    log << " " << f.rss_bytes_per_item << " bytes/item\n";
  } catch (const std::exception& e) {
    note = std::string("Redis figures skipped: ") + e.what();
    log << "\n" << note << "\n";
    return std::nullopt;
  }
  return f;
}

int run_redis_worker(const std::string& endpoint, const std::string& name, long id) {
  auto [host, port] = split_host_port(endpoint);
  Connection c(host, port);
  std::string tasks = name + ":tasks", done = name + ":done", ready = name + ":ready";
  c.command({"LPUSH", ready, std::to_string(id)});
  // The result goes out pipelined with the next BRPOP, as a tuple-space
  // worker's posted out goes out just before its next in: one wait per task.
  std::string result;
  bool have_result = false;
  while (true) {
    if (have_result) c.append({"LPUSH", done, result});
    c.append({"BRPOP", tasks, "0"});
    if (have_result) (void)c.next_reply();
    Reply r = c.next_reply();
    std::string_view value = popped(r);
    if (value == kStop) return 0;
    result.assign(value);
    have_result = true;
  }
}

}  // namespace piranha::bench
