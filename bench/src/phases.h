// The benchmark's measurements, one function per side (internal).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "piranha/bench/bench.h"
#include "piranha/tuplespace/tuple.h"
#include "process.h"
#include "stats.h"

namespace piranha::bench {

// What every phase needs: sizes, where to find the programs, where to log.
struct RunContext {
  Sizes sizes;
  std::string piranha;  // the piranha program
  std::string workdir;  // child logs, Redis's directory
  std::ostream* progress;
};

// CPU time (user + system, every thread) spent per operation by a server and
// by its client, over a latency measurement.
struct CpuCost {
  double server_us = 0;
  double client_us = 0;
};

// Tuples the round-trip, bulk and farm measurements move: ("task", i, blob)
// with a payload-sized blob. Farm results are ("done", i, blob): same size.
ts::Tuple task_tuple(std::int64_t i, const ts::Blob& payload);
ts::Blob payload_blob(std::size_t bytes);
// The canonical size of a typical task tuple: each Redis value is this long,
// so both sides move the same bytes per item.
std::size_t task_image_bytes(const Sizes& z);

struct TupleSpaceFigures {
  Latency rtt;      // one out + one in of the same tuple
  Latency out;      // the out half of each sample
  Latency in;       // the in half of each sample
  CpuCost rtt_cpu;  // per round-trip sample
  double bulk_out_per_s = 0;
  double farm_per_s[2] = {0, 0};   // k = 1, k = 2 workers
  double farm_cpu_us[2] = {0, 0};  // per task: server + master + workers
};
TupleSpaceFigures measure_tuple_space(const RunContext& ctx);

// The tuple space with CURVE: a server started with --key and --auth, the
// clients holding a key it lists (a job whose own spaces are the benchmark's,
// so that every request goes through the access policy). Measured in turns
// with a plain server (the plain_* figures), so that a machine busy with
// other work slows both alike.
struct CurveFigures {
  Latency rtt, plain_rtt;
  CpuCost rtt_cpu, plain_rtt_cpu;
  double farm_per_s[2] = {0, 0}, plain_farm_per_s[2] = {0, 0};    // k = 1, k = 2 workers
  double farm_cpu_us[2] = {0, 0}, plain_farm_cpu_us[2] = {0, 0};  // per task, all processes
};
CurveFigures measure_curve(const RunContext& ctx);

// The fsync policies measured durable, in this order, on both sides.
inline constexpr const char* kFsyncPolicies[2] = {"always", "everysec"};

// A durable server (`--data`, fresh directory) per policy in kFsyncPolicies.
struct DurableFigures {
  double bulk_out_per_s[2] = {0, 0};  // out_many, as bulk_out_per_s
  double farm2_per_s[2] = {0, 0};     // the task farm with 2 workers
};
DurableFigures measure_durable(const RunContext& ctx);

struct MemoryFigures {
  Latency in_empty;  // in of a just-written tuple, nothing else resident
  Latency in_full;   // the same with `tuples` unrelated tuples resident
  std::size_t tuples = 0;
  double rss_bytes_per_tuple = 0;      // server VmRSS delta / tuples
  double payload_bytes_per_tuple = 0;  // mean canonical tuple size
  double load_per_s = 0;               // tuples/s while loading them
};
MemoryFigures measure_memory(const RunContext& ctx);

struct ZmqFigures {
  Latency rtt;   // one echo
  Latency pair;  // two frames sent back to back, then both echoes received:
                 // the floor under a posted out followed by an in
  CpuCost cpu;   // per echo
  std::size_t frame_bytes = 0;
  // The task farm over a ZeroMQ queue server (no tuple space): the same
  // messages per task as the tuple-space farm, the floor under it.
  double farm_per_s[2] = {0, 0};   // k = 1, k = 2 workers
  double farm_cpu_us[2] = {0, 0};  // per task: server + master + workers
};
ZmqFigures measure_zmq(const RunContext& ctx);

struct RedisFigures {
  Latency rtt;                     // LPUSH + BRPOP pipelined: one wait, like posted out + in
  Latency rtt_unpipelined;         // LPUSH, wait, BRPOP, wait
  CpuCost rtt_cpu;                 // per pipelined round-trip sample
  double pipelined_per_s = 0;      // pipelined single-value LPUSH
  double lpush_batch_per_s = 0;    // one variadic LPUSH per batch
  double farm_per_s[2] = {0, 0};   // k = 1, k = 2 workers
  double farm_cpu_us[2] = {0, 0};  // per task: server + master + workers
  double rss_bytes_per_item = 0;   // VmRSS delta / list items (filler-sized values)
  // With AOF (appendonly yes, appendfsync per kFsyncPolicies), a fresh server each.
  double aof_pipelined_per_s[2] = {0, 0};
  double aof_farm2_per_s[2] = {0, 0};
  std::size_t value_bytes = 0;
  std::string version;
};
// Starts redis-server from `program`. Returns nullopt, with `note` saying
// why, when Redis cannot be started or fails.
std::optional<RedisFigures> measure_redis(const RunContext& ctx, const std::string& program,
                                          std::string& note);

// The helper processes (see RoleArgs).
int run_zmq_echo(const std::string& endpoint);
int run_zmq_queue(const std::string& endpoint, std::size_t payload);
int run_zmq_worker(const std::string& endpoint, std::size_t payload);
int run_ts_worker(const std::string& endpoint, const std::string& space, long id);
int run_redis_worker(const std::string& endpoint, const std::string& space, long id);

}  // namespace piranha::bench
