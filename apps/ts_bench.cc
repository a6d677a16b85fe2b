// piranha ts bench: the tuple space side by side with raw ZeroMQ and Redis.
#include <iostream>
#include <memory>

#include "commands.h"

#ifdef PIRANHA_HAVE_BENCH
#include "piranha/bench/bench.h"
#endif

namespace piranha::apps {

#ifdef PIRANHA_HAVE_BENCH

void add_ts_bench(CLI::App& ts) {
  auto o = std::make_shared<bench::BenchOptions>();
  auto json = std::make_shared<bool>(false);
  auto no_redis = std::make_shared<bool>(false);
  auto role = std::make_shared<bench::RoleArgs>();
  auto* cmd = ts.add_subcommand(
      "bench",
      "benchmark the tuple space against raw ZeroMQ and Redis on loopback (docs/performance.md explains "
      "every figure)");
  cmd->add_flag("--json", *json,
                "print one JSON object on stdout instead of a table (progress stays on stderr)");
  cmd->add_flag("--quick", o->quick, "small sizes for a smoke run of a few seconds (figures are noisy)");
  cmd->add_option("--tasks", o->tasks, "tasks per farm run (default 20000; --quick: 400)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000'000}));
  cmd->add_option("--samples", o->samples, "latency samples per measurement (default 20000; --quick: 300)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{100'000'000}));
  cmd->add_flag("--no-redis", *no_redis, "skip the Redis figures (they are null in the JSON)");
  cmd->add_flag(
      "--curve", o->curve,
      "also measure the round trip and the task farms against a server with --key and --auth (CURVE "
      "and the access policy), in turns with a plain server");
  cmd->add_option("--redis-server", o->redis_server, "the redis-server program")->capture_default_str();
  // The helper processes the benchmark starts itself; not for people.
  cmd->add_option("--role", role->role)->group("");
  cmd->add_option("--endpoint", role->endpoint)->group("");
  cmd->add_option("--space", role->space)->group("");
  cmd->add_option("--id", role->id)->group("");
  cmd->callback([o, json, no_redis, role] {
    if (!role->role.empty()) {
      if (int rc = bench::run_role(*role); rc != 0) throw CLI::RuntimeError(rc);
      return;
    }
    o->redis = !*no_redis;
    o->piranha_binary = "/proc/self/exe";
    auto report = bench::run_bench(*o, std::cerr);
    if (*json)
      std::cout << report.dump(2) << std::endl;
    else
      bench::print_table(report, std::cout);
  });
}

#else

void add_ts_bench(CLI::App& ts) {
  auto* cmd =
      ts.add_subcommand("bench", "benchmark the tuple space (not built: configure with -DPIRANHA_BENCH=ON)");
  cmd->allow_extras();
  cmd->callback([] {
    std::cerr << "piranha ts bench: the benchmark was not built. Reconfigure with -DPIRANHA_BENCH=ON "
                 "(it needs libhiredis-dev; redis-server is optional) and rebuild.\n";
    throw CLI::RuntimeError(2);
  });
}

#endif

}  // namespace piranha::apps
