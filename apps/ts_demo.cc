// piranha ts demo: a small master-worker computation over an embedded tuple space.
//
// The feeder outs one task per range of integers; workers started with eval
// take tasks under a lease, count the primes in their range, out a result and
// ack the lease; the feeder collects the results and checks the total against
// a sequential count.
#include <chrono>
#include <cstdint>
#include <iostream>
#include <memory>

#include "commands.h"
#include "piranha/base/clock.h"
#include "piranha/tuplespace/client.h"
#include "piranha/tuplespace/curve.h"
#include "piranha/tuplespace/embedded.h"
#include "pool_command.h"

namespace piranha::apps {
namespace {

namespace ts = piranha::ts;

bool is_prime(std::int64_t n) {
  if (n < 2) return false;
  for (std::int64_t d = 2; d * d <= n; ++d)
    if (n % d == 0) return false;
  return true;
}

std::int64_t count_primes(std::int64_t lo, std::int64_t hi) {
  std::int64_t n = 0;
  for (std::int64_t i = lo; i < hi; ++i) n += is_prime(i);
  return n;
}

struct DemoOptions {
  std::int64_t limit = 2'000'000;
  std::int64_t tasks = 200;
  int workers = 2;
  std::string connect;
};

int run_demo(const DemoOptions& o) {
  std::unique_ptr<ts::EmbeddedServer> embedded;
  std::string endpoint = o.connect;
  if (endpoint.empty()) {
    // The embedded server has no keys: neither must its clients.
    ::unsetenv(ts::kKeyEnv);
    ::unsetenv(ts::kServerKeyEnv);
    embedded = std::make_unique<ts::EmbeddedServer>();
    endpoint = embedded->endpoint();
  }
  ts::Client feeder(endpoint);
  ts::Space space = feeder.space("demo.primes");
  std::cout << "piranha demo: counting primes below " << o.limit << " in " << o.tasks << " tasks with "
            << o.workers << " workers over " << (embedded ? "an embedded tuple space" : endpoint) << "\n";

  auto start = piranha::Clock::now();
  std::vector<ts::Tuple> tasks;
  std::int64_t step = (o.limit + o.tasks - 1) / o.tasks;
  for (std::int64_t lo = 0; lo < o.limit; lo += step)
    tasks.push_back(ts::Tuple::of("task", lo, std::min(lo + step, o.limit)));
  space.out_many(tasks);

  std::vector<std::future<void>> workers;
  for (int w = 0; w < o.workers; ++w) {
    workers.push_back(space.eval([endpoint, w] {
      ts::Client c(endpoint);
      ts::Space s = c.space("demo.primes");
      std::int64_t lo = 0, hi = 0, done = 0;
      while (true) {
        ts::Leased task = s.take(std::chrono::seconds(30), "task", ts::bind(lo), ts::bind(hi));
        if (lo < 0) {  // the feeder's "no more tasks" tuple
          s.ack(task);
          break;
        }
        s.out("result", lo, count_primes(lo, hi));
        s.ack(task);
        ++done;
      }
      return ts::Tuple::of("worker-done", std::int64_t{w}, done);
    }));
  }

  std::int64_t total = 0, lo = 0, count = 0;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    space.in("result", ts::bind(lo), ts::bind(count));
    total += count;
  }
  for (int w = 0; w < o.workers; ++w) space.out("task", std::int64_t{-1}, std::int64_t{-1});
  std::int64_t worker = 0, done = 0;
  for (int w = 0; w < o.workers; ++w) {
    space.in("worker-done", ts::bind(worker), ts::bind(done));
    std::cout << "  worker " << worker << " completed " << done << " tasks\n";
  }
  for (auto& f : workers) f.get();
  double parallel_s = std::chrono::duration<double>(piranha::Clock::now() - start).count();

  start = piranha::Clock::now();
  std::int64_t expected = count_primes(0, o.limit);
  double sequential_s = std::chrono::duration<double>(piranha::Clock::now() - start).count();

  std::cout << "  result: " << total << " primes below " << o.limit << "\n"
            << "  check:  sequential count " << expected << (total == expected ? " (match)" : " (MISMATCH)")
            << "\n"
            << "  time:   " << parallel_s << " s in parallel, " << sequential_s << " s sequentially\n";
  return total == expected ? 0 : 1;
}

}  // namespace

void add_ts_demo(CLI::App& ts) {
  auto o = std::make_shared<DemoOptions>();
  auto* cmd =
      ts.add_subcommand("demo", "count primes with eval'd workers over a tuple space and check the result");
  cmd->add_option("--limit", o->limit, "count primes below this number")
      ->check(CLI::Range(2LL, 1'000'000'000LL));
  cmd->add_option("--tasks", o->tasks, "number of tasks")->check(CLI::Range(1LL, 1'000'000LL));
  cmd->add_option("--workers", o->workers, "number of workers (eval'd threads)")->check(CLI::Range(1, 256));
  cmd->add_option("--connect", o->connect, "use a running server at this endpoint instead of an embedded one")
      ->check(endpoint_check());
  add_key_options(*cmd);
  cmd->callback([o] {
    int rc = run_demo(*o);
    if (rc != 0) throw CLI::RuntimeError(rc);
  });
}

}  // namespace piranha::apps
