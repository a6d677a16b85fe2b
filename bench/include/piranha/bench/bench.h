// The tuple-space benchmark behind `piranha ts bench`.
//
// One run measures, on loopback and side by side:
//  - the tuple space (`piranha ts serve` in its own process): out+in round
//    trips, bulk out_many throughput, a master/worker task farm with 1 and 2
//    worker processes, and `in` latency with an empty space and with 1,000,000
//    unrelated tuples resident, plus the server's resident bytes per tuple;
//  - with --curve, the round trip and the task farms again against a server
//    started with --key and --auth: CURVE on every connection and the pool's
//    access policy on every request (docs/security.md);
//  - raw ZeroMQ DEALER/ROUTER echo round trips with the same socket options,
//    the floor for any request on this transport, and the task farm over a
//    ZeroMQ queue server with no tuple space in it: the floor under the farm;
//  - Redis (redis-server started as a child, persistence off, through hiredis)
//    doing the same work on lists: pipelined LPUSH+BRPOP round trips, pipelined LPUSH,
//    and the same task farm.
// Every server and every farm worker is a separate process, so no side shares
// a process (or a ZeroMQ I/O thread) with another. docs/performance.md explains
// each figure and records a full run.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

namespace piranha::bench {

struct BenchOptions {
  // Small sizes for a smoke run of a few seconds; figures are noisy.
  bool quick = false;
  // Tasks per farm run; 0 picks the default (20,000; quick: 400).
  std::size_t tasks = 0;
  // Latency samples per round-trip measurement; 0 picks the default
  // (20,000; quick: 300).
  std::size_t samples = 0;
  // False skips every Redis figure (they are null in the report).
  bool redis = true;
  // True also measures the round trip and the task farms with CURVE and the
  // access policy (the curve_* figures; null without it).
  bool curve = false;
  // The redis-server program: a path, or a name searched in PATH. When it is
  // not found the Redis figures are skipped with a note.
  std::string redis_server = "redis-server";
  // The piranha program, from which the tuple-space server (`ts serve`), the
  // ZeroMQ echo server and the farm workers are started. Required.
  std::string piranha_binary;
};

// The sizes a run uses once defaults are applied.
struct Sizes {
  std::size_t samples;       // timed samples per latency measurement
  std::size_t warmup;        // untimed samples before them
  std::size_t tasks;         // tasks per farm run
  std::size_t bulk;          // tuples written by the bulk out_many measurement
  std::size_t batch;         // tuples per out_many / per LPUSH pipeline
  std::size_t filler;        // unrelated tuples resident for in_us_p50_1m
  std::size_t filler_batch;  // tuples per out_many while loading them
  std::size_t payload;       // blob bytes in round-trip, bulk and task tuples
  std::size_t filler_blob;   // blob bytes in each filler tuple
};
Sizes sizes_for(const BenchOptions& options);

// Runs every measurement, writing progress lines to `progress`, and returns
// the report: one JSON object whose keys docs/performance.md lists. Throws
// std::runtime_error when the tuple-space or echo server cannot be started.
// A missing or failing Redis only nulls the Redis figures and adds a note.
nlohmann::json run_bench(const BenchOptions& options, std::ostream& progress);

// The report as a readable table.
void print_table(const nlohmann::json& report, std::ostream& out);

// The helper processes run_bench starts as
// `piranha ts bench --role ROLE --endpoint EP [--space NAME --id N]`:
//   zmq-echo      a ROUTER bound to `endpoint` that echoes every frame;
//   zmq-queue     the ZeroMQ-only farm's queue server (`id`: the item payload bytes);
//   zmq-worker    a worker of that farm;
//   ts-worker     a farm worker over a tuple-space server at `endpoint`;
//   redis-worker  a farm worker over Redis at `endpoint` (host:port).
// Returns the process exit code.
struct RoleArgs {
  std::string role;
  std::string endpoint;
  std::string space;
  long id = 0;
};
int run_role(const RoleArgs& args);

}  // namespace piranha::bench
