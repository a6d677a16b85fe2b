// piranha nps run | init | check | simulate: the Network Piranha Scheduler
// (docs/nps.md).
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <numeric>
#include <vector>

#include "commands.h"
#include "piranha/base/input_error.h"
#include "piranha/base/percentile.h"
#include "piranha/nps/live.h"
#include "piranha/nps/live_page.h"
#include "piranha/nps/node_types.h"
#include "piranha/nps/program.h"
#include "piranha/nps/simulate.h"
#include "piranha/runtime/endpoint.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/scheduler/strategy.h"
#include "pool_command.h"
#include "sched_cli.h"
#include "sim_run.h"
#include "stop_signals.h"

namespace piranha::apps {
namespace {

trellis::Registry checking_types() {
  trellis::Registry types;
  nps::add_detached_nps_types(types);
  return types;
}

// The program file, checked as an NPS program; bad_input on any error.
trellis::Program load_nps_program(const std::string& file) {
  try {
    trellis::Program p = trellis::load_program(file, checking_types());
    nps::check_nps_program(p);
    return p;
  } catch (const InputError& e) {
    schedcli::bad_input(e.what());
  }
}

struct RunArgs {
  std::shared_ptr<std::string> server;
  std::string program, strategy = "TSK", predictor = "REC_HIST", shadows, http, http_token, tick_stats;
  std::string lend_to, campuses;
  std::vector<std::string> hosts;
  double period = 10, tick = 1, step_seconds = 60, cold_start = 0, seconds = 0, stale = 30, beat = 1;
  std::int64_t window = 10;
  bool spill = false, quiet = false, on_events = true;
};

void add_run(CLI::App& nps) {
  auto a = std::make_shared<RunArgs>();
  auto* run = nps.add_subcommand("run", "run the NPS on the pool: scheduler 0's decisions reach the agents");
  run->add_option("program", a->program,
                  "an NPS program (YAML; see `piranha nps init`); default: the standard one");
  a->server = add_server_option(*run);
  auto* strategy = run->add_option("--strategy", a->strategy,
                                   "scheduler 0's strategy: TSK, SRT, SRTA(0.5), LETFIT, ROR(10), ...")
                       ->capture_default_str();
  auto* period = run->add_option("--period", a->period, "seconds between scheduler 0's decisions")
                     ->capture_default_str();
  auto* tick = run->add_option("--tick", a->tick,
                               "seconds between the enabler's ticks (monitors and jobs look again, "
                               "heartbeats); at most --period. A job arriving, ending or first measured, "
                               "or a node joining or changing state, ticks at once in between")
                   ->capture_default_str();
  run->add_option("--shadow", a->shadows,
                  "shadow schedulers' strategies, comma-separated (e.g. FCFS,SRT,FAIR): scheduler 1, 2, ... "
                  "decide beside scheduler 0 and the evaluator estimates their turnaround; never obeyed");
  run->add_option("--host", a->hosts, "run only the part of the program placed on this host (repeatable)");
  run->add_option("--step-seconds", a->step_seconds, "seconds per step of the nodes' availability history")
      ->capture_default_str();
  auto* window =
      run->add_option("--window", a->window, "prediction window, in history steps")->capture_default_str();
  auto* predictor =
      run->add_option("--predictor", a->predictor, "AP-length predictor for FIT and A strategies")
          ->capture_default_str();
  run->add_flag("--spill", a->spill, "no job holds more nodes than it has tasks left");
  auto* events = run->add_flag("--on-events,!--no-on-events", a->on_events,
                               "also decide at once when a job arrives, ends or is first measured, or a node "
                               "joins (default: on)");
  run->add_option("--cold-start", a->cold_start,
                  "task time (s) assumed for a job none of whose tasks has completed (docs/nps.md)")
      ->capture_default_str();
  run->add_option("--stale", a->stale, "seconds of silence after which an agent's node counts as down")
      ->capture_default_str();
  run->add_option("--seconds", a->seconds, "stop after this long (default: until SIGINT or SIGTERM)");
  run->add_flag("--quiet", a->quiet, "do not log the schedulers' decisions");
  run->add_option("--lend-to", a->lend_to,
                  "pools (campus subnet names, comma-separated) whose jobs this pool's idle nodes may serve "
                  "when a campus lends them (docs/nps.md, \"Hierarchy\"); default: none");
  run->add_option("--campus", a->campuses,
                  "with --lend-to: serve only the loans of these campuses (names, comma-separated); "
                  "default: any campus's");
  run->add_option(
         "--beat", a->beat,
         "rewrite scheduler heartbeats at most this often, in seconds (keep it under 0.4 of the agents' "
         "scheduler.stale_seconds: they look at scheduler 0's every 0.4 to 0.6 of it, docs/system-space.md)")
      ->check(CLI::Range(0.05, 3600.0))
      ->capture_default_str();
  run->add_option("--tick-stats", a->tick_stats,
                  "write the ticks' durations (p50, p99, max ms, reading the pool to scheduler 0's decision; "
                  "the rebuilds for joining nodes; and each tick's start, on the monotonic clock) "
                  "to this JSON file every 5 s");
  run->add_option("--http", a->http,
                  "serve the live page at HOST:PORT (e.g. 127.0.0.1:8080): nodes, jobs, retreats, "
                  "schedulers, updated as they change; /api/state has the same as JSON. An address other "
                  "machines can reach needs --http-token");
  run->add_option(
      "--http-token", a->http_token,
      "the page asks every request for the token in this file (made, mode 0600, with a new "
      "random token if it does not exist): a browser opens /?token=TOKEN once (docs/security.md)");
  run->callback([a, strategy, period, tick, window, predictor, events] {
    schedcli::guarded([&] {
      if (!(a->period > 0)) schedcli::bad_input("--period must be positive");
      if (!(a->tick > 0)) schedcli::bad_input("--tick must be positive");
      if (!(a->step_seconds >= 1)) schedcli::bad_input("--step-seconds must be at least 1");
      if (a->window < 1) schedcli::bad_input("--window must be at least 1");
      sched::make_strategy(a->strategy);  // a bad name is one line, before anything starts
      // $PIRANHA_SERVER is not checked by CLI11; the daemon must not retry a typo.
      if (auto problem = endpoint_problem(*a->server)) schedcli::bad_input("--server: " + *problem);
      nps::LiveOptions o;
      o.server = *a->server;
      o.standard.strategy = a->strategy;
      o.standard.period = a->period;
      o.standard.tick = a->tick;
      o.standard.window = a->window;
      o.standard.predictor = a->predictor;
      o.standard.spill = a->spill;
      o.standard.on_events = a->on_events;
      o.standard.cold_start = a->cold_start;
      if (!a->shadows.empty()) {
        o.standard.shadows = schedcli::split_list(a->shadows);
        for (const auto& s : o.standard.shadows) sched::make_strategy(s);
      }
      if (!a->program.empty()) {
        if (!a->shadows.empty())
          schedcli::bad_input(
              "--shadow is for the standard program; add schedulers to the program file instead");
        load_nps_program(a->program);
        o.program_file = a->program;
        if (*strategy) o.overrides.strategy = a->strategy;
        if (*period) o.overrides.period = a->period;
        if (*window) o.overrides.window = a->window;
        if (*predictor) o.overrides.predictor = a->predictor;
        if (*events) o.overrides.on_events = a->on_events;
        if (*tick) o.tick_override = a->tick;
      } else if (!a->hosts.empty()) {
        schedcli::bad_input("--host needs a program that places nodes on hosts");
      }
      o.hosts = a->hosts;
      o.pool.history_step = a->step_seconds;
      o.pool.stale_seconds = a->stale;
      o.pool.beat_seconds = a->beat;
      o.pool.slack = std::min(0.25, std::min(a->tick, a->period) / 4);
      o.quiet = a->quiet;
      if (!a->lend_to.empty()) o.lending.lends_to = schedcli::split_list(a->lend_to);
      if (!a->campuses.empty()) {
        if (a->lend_to.empty()) schedcli::bad_input("--campus is for --lend-to");
        o.lending.campuses = schedcli::split_list(a->campuses);
      }
      o.tick_stats_file = a->tick_stats;
      if (a->seconds > 0) o.duration = std::chrono::milliseconds(static_cast<long>(a->seconds * 1000));
      // Before the page's threads start: they inherit the blocked signals,
      // so SIGINT and SIGTERM reach the watcher and stop the NPS cleanly.
      std::atomic<bool> stop{false};
      StopOnSignals signals(stop);
      o.stop_fd = signals.fd();
      std::unique_ptr<nps::LivePage> page;
      if (!a->http_token.empty() && a->http.empty()) schedcli::bad_input("--http-token is for --http");
      if (!a->http.empty()) {
        // The page has no login of its own: off this machine, a token is
        // the operator's explicit choice and the page's access control.
        nps::HttpAddress address;
        try {
          address = nps::parse_http_address(a->http);
        } catch (const InputError& e) {
          schedcli::bad_input(e.what());
        }
        if (a->http_token.empty() && !endpoint_is_local("tcp://" + address.host + ":1"))
          schedcli::bad_input(
              "--http " + a->http +
              ": other machines can reach this address, and anyone who reaches the live page "
              "may read the whole pool's state: give --http-token FILE (a secret the page asks "
              "for, docs/security.md), or serve it on 127.0.0.1 (ssh -L to reach it)");
        bool made = false;
        std::string token;
        try {
          if (!a->http_token.empty()) token = nps::page_token(a->http_token, &made);
          page = std::make_unique<nps::LivePage>(a->http, token);
        } catch (const InputError& e) {
          schedcli::bad_input(e.what());
        }
        if (made) std::cerr << "nps: wrote a new token for the live page to " << a->http_token << "\n";
        const std::string at = "http://" + address.host + ":" + std::to_string(page->port()) + "/";
        std::cerr << "nps: the live page is at " << at;
        if (!token.empty())
          std::cerr << " (it asks for the token in " << a->http_token << ": open " << at
                    << "?token=TOKEN once)";
        std::cerr << "\n";
        // Both on the shell's thread: the pool is known before the first state.
        auto pool = std::make_shared<std::string>();
        o.on_pool = [pool](const std::string& name, const std::string& id) {
          *pool = name.empty() ? "none named" : name + " (id " + id + ")";
        };
        o.on_states = [p = page.get(), pool](double now, const std::vector<trellis::Value>& states) {
          auto state = nps::live_state(now, states);
          state["pool"] = *pool;
          p->publish(state);
        };
        o.on_records = [p = page.get()](std::span<const nps::EvalRecord> records) { p->seed(records); };
      }
      const int rc = nps::run_live(o, stop, std::cerr);  // guarded reports an InputError
      if (rc != 0) throw CLI::RuntimeError(rc);
    });
  });
}

struct InitArgs {
  std::shared_ptr<std::string> server;
  std::string strategy = "TSK", nodes, predictor = "REC_HIST", shadows;
  double period = 10;
  std::int64_t window = 10;
  bool on_events = true;
};

void add_init(CLI::App& nps) {
  auto a = std::make_shared<InitArgs>();
  auto* init = nps.add_subcommand("init", "print the standard NPS program as YAML, for the pool's nodes");
  a->server = add_server_option(*init);
  init->add_option("--strategy", a->strategy, "scheduler 0's strategy")->capture_default_str();
  init->add_option("--period", a->period, "seconds between scheduler 0's decisions")->capture_default_str();
  init->add_option("--window", a->window, "prediction window, in history steps")->capture_default_str();
  init->add_option("--predictor", a->predictor, "AP-length predictor")->capture_default_str();
  init->add_option("--shadow", a->shadows,
                   "shadow schedulers' strategies, comma-separated (scheduler 1, 2, ...)");
  init->add_flag("--on-events,!--no-on-events", a->on_events,
                 "scheduler 0 (and the shadows) also decide at once when a job arrives, ends or is first "
                 "measured, or a node joins, as `nps run` without a program does (default: on)");
  init->add_option("--nodes", a->nodes,
                   "comma-separated node names (default: the nodes registered at --server)");
  init->callback([a] {
    schedcli::guarded([&] {
      sched::make_strategy(a->strategy);
      if (!(a->period > 0)) schedcli::bad_input("--period must be positive");
      nps::StandardOptions o;
      o.strategy = a->strategy;
      o.period = a->period;
      o.window = a->window;
      o.predictor = a->predictor;
      o.on_events = a->on_events;
      if (!a->shadows.empty()) {
        o.shadows = schedcli::split_list(a->shadows);
        for (const auto& s : o.shadows) sched::make_strategy(s);
      }
      if (!a->nodes.empty()) {
        o.nodes = schedcli::split_list(a->nodes);
      } else {
        run_command("nps init", *a->server, [&] {
          auto c = connect(*a->server);
          for (const auto& n : sys::list_nodes(*c)) o.nodes.push_back(n.name);
          return 0;
        });
        if (o.nodes.empty())
          schedcli::bad_input("nps init: no node has registered at " + *a->server +
                              " yet; start agents first or name them with --nodes");
      }
      std::cout << nps::standard_program_yaml(o);
    });
  });
}

void add_check(CLI::App& nps) {
  auto file = std::make_shared<std::string>();
  auto* check = nps.add_subcommand("check", "validate an NPS program; an error names FILE:LINE");
  check->add_option("program", *file, "the program's YAML file")->required();
  check->callback([file] {
    trellis::Program p = load_nps_program(*file);
    for (const auto& w : nps::nps_program_warnings(p)) std::cerr << w << "\n";
    std::size_t monitors = 0;
    std::string schedulers;
    for (const auto& n : p.nodes) {
      if (n.type == "monitor") ++monitors;
      if (n.type != "scheduler") continue;
      const auto& id = n.params.at("id");
      auto s = n.params.find("strategy");
      schedulers += (schedulers.empty() ? "" : ", ") + trellis::to_json(id) + " " +
                    sched::canonical_strategy_name(s == n.params.end() ? "TSK" : s->second.as_string()) +
                    (id == trellis::Value(0) ? " (obeyed)" : " (shadow)");
    }
    std::cout << *file << ": ok: " << p.nodes.size() << " nodes, " << monitors << " monitors, schedulers "
              << schedulers << "\n";
  });
}

// The wall and thread-CPU time of every tick of `nps simulate`'s runs, which
// may go on several threads at once, for the summary line it prints.
class TickTimes {
 public:
  // A callback for simulate_program's `tick`, for one run: each call after
  // the first records the time since the previous one.
  std::function<void()> for_run() {
    struct Last {
      std::chrono::steady_clock::time_point wall;
      double cpu = 0;
      bool started = false;
    };
    return [this, last = std::make_shared<Last>()] {
      const auto wall = std::chrono::steady_clock::now();
      const double cpu = thread_cpu_ms();
      if (last->started) {
        std::lock_guard lock(mu_);
        wall_ms_.push_back(std::chrono::duration<double, std::milli>(wall - last->wall).count());
        cpu_ms_.push_back(cpu - last->cpu);
      }
      *last = Last{wall, cpu, true};
    };
  }

  // "N ticks, mean X ms / p99 Y ms per tick (thread CPU: mean X ms / p50 Y ms / p99 Z ms)".
  std::string summary() const {
    std::lock_guard lock(mu_);
    char line[200];
    std::snprintf(line, sizeof line,
                  "%zu ticks, mean %.2f ms / p99 %.2f ms per tick (thread CPU: mean %.2f ms / p50 %.2f ms / "
                  "p99 %.2f ms)",
                  wall_ms_.size(), mean(wall_ms_), p99(wall_ms_), mean(cpu_ms_), p50(cpu_ms_), p99(cpu_ms_));
    return line;
  }

 private:
  static double thread_cpu_ms() {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
  }
  static double mean(const std::vector<double>& v) {
    return v.empty() ? 0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  }
  static double p99(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return percentile(v, 0.99);
  }
  static double p50(std::vector<double> v) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return percentile(v, 0.5);
  }

  mutable std::mutex mu_;
  std::vector<double> wall_ms_, cpu_ms_;
};

void add_simulate(CLI::App& nps) {
  auto a = std::make_shared<SimArgs>();
  auto program = std::make_shared<std::string>();
  a->what = "nps simulate";
  a->strategies = "TSK";
  auto* sim = nps.add_subcommand(
      "simulate",
      "run an NPS program on a recorded trace and job list (the simulator's model, a virtual clock)");
  sim->add_option("program", *program,
                  "an NPS program (YAML); default: the standard one for the trace's nodes");
  add_sim_options(*sim, *a);
  sim->add_option("--strategy", a->strategies, "scheduler 0's strategy (a comma-separated list runs each)")
      ->capture_default_str();
  sim->callback([a, program] {
    schedcli::guarded([&] {
      std::optional<trellis::Program> p;
      if (!program->empty()) p = load_nps_program(*program);
      TickTimes times;
      run_sim(*a,
              [p, &times](const AvailabilityTrace& trace, const std::vector<sched::Job>& jobs,
                          const std::string& strategy, const sched::SimOptions& options, std::uint64_t seed) {
                return nps::simulate_program(p, trace, jobs, strategy, options, seed, times.for_run());
              });
      std::cerr << "nps simulate: " << times.summary() << "\n";
    });
  });
}

}  // namespace

void add_nps(CLI::App& app) {
  auto* nps = app.add_subcommand(
      "nps", "the Network Piranha Scheduler: run, init, check, simulate, simulate-campus, campus, report");
  nps->require_subcommand(1);
  add_run(*nps);
  add_init(*nps);
  add_check(*nps);
  add_simulate(*nps);
  add_nps_report(*nps);
  add_nps_simulate_campus(*nps);
  add_nps_campus(*nps);
}

}  // namespace piranha::apps
