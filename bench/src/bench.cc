// run_bench: starts each side's server in turn, measures it, stops it, and
// assembles the report.
#include "piranha/bench/bench.h"

#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <stdexcept>

#include "phases.h"
#include "report.h"

namespace piranha::bench {
namespace {

std::string now_iso() {
  std::time_t t = std::time(nullptr);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S%z", std::localtime(&t));
  return buf;
}

// A private directory for child logs and Redis's working directory, removed
// afterwards unless the run failed (its logs explain why).
struct WorkDir {
  std::string path;
  bool keep = true;
  WorkDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "piranha-bench-XXXXXX").string();
    if (!::mkdtemp(tmpl.data())) throw std::runtime_error("cannot create a temporary directory");
    path = tmpl;
  }
  ~WorkDir() {
    std::error_code ec;
    if (!keep) std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

Sizes sizes_for(const BenchOptions& o) {
  Sizes z = o.quick ? Sizes{.samples = 300,
                            .warmup = 50,
                            .tasks = 400,
                            .bulk = 5'000,
                            .batch = 500,
                            .filler = 20'000,
                            .filler_batch = 5'000,
                            .payload = 32,
                            .filler_blob = 8}
                    : Sizes{.samples = 20'000,
                            .warmup = 1'000,
                            .tasks = 20'000,
                            .bulk = 200'000,
                            .batch = 1'000,
                            .filler = 1'000'000,
                            .filler_batch = 10'000,
                            .payload = 32,
                            .filler_blob = 8};
  if (o.samples) z.samples = o.samples;
  if (o.tasks) z.tasks = o.tasks;
  return z;
}

nlohmann::json run_bench(const BenchOptions& options, std::ostream& progress) {
  if (options.piranha_binary.empty()) throw std::invalid_argument("run_bench: piranha_binary is required");
  WorkDir dir;
  Figures f;
  f.sizes = sizes_for(options);
  f.machine = describe_machine();
  f.date = now_iso();
  f.load_start = load_average();
  RunContext ctx{f.sizes, options.piranha_binary, dir.path, &progress};
  progress << "piranha ts bench: " << f.machine.cpu << " x" << f.machine.cpus << ", " << f.machine.kernel
           << (options.quick ? " (quick run: small sizes, noisy figures)" : "") << "; logs in " << dir.path
           << "\n";

  // Keys only where a phase puts them: a plain server refuses a client with keys.
  ::unsetenv("PIRANHA_KEY");
  ::unsetenv("PIRANHA_SERVER_KEY");
  f.zmq = measure_zmq(ctx);
  f.ts = measure_tuple_space(ctx);
  if (options.curve) f.curve = measure_curve(ctx);
  f.memory = measure_memory(ctx);
  f.durable = measure_durable(ctx);

  if (!options.redis) {
    f.notes.push_back("Redis figures skipped (--no-redis); every redis_* figure, ratio and target is null.");
    progress << f.notes.back() << "\n";
  } else if (std::string program = find_executable(options.redis_server); program.empty()) {
    f.notes.push_back("redis-server not found (looked for \"" + options.redis_server +
                      "\"; on Debian: apt-get install redis-server); Redis figures skipped and null.");
    progress << f.notes.back() << "\n";
  } else {
    std::string note;
    f.redis = measure_redis(ctx, program, note);
    if (!f.redis) f.notes.push_back(note);
  }
  if (options.quick) f.notes.push_back("quick run: sizes are too small for the figures to mean much.");
  f.load_end = load_average();
  if (f.load_start > 0.5 * f.machine.cpus) {
    char note[200];
    std::snprintf(note, sizeof note,
                  "the machine was busy: 1-minute load average %.2f before the run on %u CPUs; other work "
                  "competed for the CPUs, so the figures are noisy.",
                  f.load_start, f.machine.cpus);
    f.notes.push_back(note);
  }
  dir.keep = false;
  return make_report(f);
}

int run_role(const RoleArgs& args) {
  try {
    if (args.role == "zmq-echo") return run_zmq_echo(args.endpoint);
    if (args.role == "zmq-queue") return run_zmq_queue(args.endpoint, static_cast<std::size_t>(args.id));
    if (args.role == "zmq-worker") return run_zmq_worker(args.endpoint, static_cast<std::size_t>(args.id));
    if (args.role == "ts-worker") return run_ts_worker(args.endpoint, args.space, args.id);
    if (args.role == "redis-worker") return run_redis_worker(args.endpoint, args.space, args.id);
    std::cerr << "bench: unknown role \"" << args.role << "\"\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "bench " << args.role << ": " << e.what() << "\n";
    return 1;
  }
}

}  // namespace piranha::bench
