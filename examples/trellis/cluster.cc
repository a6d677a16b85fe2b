// trellis_cluster: per-host load monitors feed a cluster summary, which
// commands each host's throttle back down -- a sensor-actuator trellis.
//
//   build/bin/trellis_cluster examples/trellis/cluster.yaml            # every host, here
//   build/bin/trellis_cluster examples/trellis/cluster.yaml --host alpha  # one host
//   build/bin/trellis_cluster examples/trellis/cluster.yaml --check       # validate only
//
// The three node types below are the whole application: each is a class
// with a state calculation function, registered by name, placed by the YAML.
#include <CLI/CLI.hpp>
#include <cmath>
#include <fstream>
#include <iostream>

#include "piranha/trellis/program.h"
#include "piranha/trellis/registry.h"
#include "piranha/trellis/run.h"

namespace trellis = piranha::trellis;
using trellis::Cause;
using trellis::Context;
using trellis::Value;

// The host's load. source "proc" reads the 1-minute load average from
// /proc/loadavg; source "wave" makes up a load that swings between 0 and 3
// every period_s seconds (so a demo on one machine has something to react
// to). Its state is {"load": L, "throttled": T}, T being its throttle's
// state; commands from the summary are passed down to the throttle.
class LoadMonitor : public trellis::Node {
 public:
  explicit LoadMonitor(const trellis::Params& p)
      : source_(p.string("source", "proc")),
        period_s_(p.number("period_s", 10)),
        phase_(p.number("phase", 0)) {
    if (source_ != "proc" && source_ != "wave")
      throw trellis::BadParameter("source", "source must be proc or wave");
    if (period_s_ <= 0) throw trellis::BadParameter("period_s", "period_s must be positive");
  }

  Value calculate(Context& ctx) override {
    for (const auto& c : ctx.commands()) ctx.command_all(c.data);  // to the throttle below
    double load = ctx.state()["load"].is_number() ? ctx.state()["load"].as_number() : 0.0;
    if (ctx.activated_by(Cause::Probe)) load = sample(ctx);
    bool throttled = false;
    for (std::size_t i = 0; i < ctx.inferior_count(); ++i)
      throttled = throttled || ctx.inferior(i)["throttled"] == Value(true);
    return Value::Map{{"load", std::round(load * 100) / 100}, {"throttled", throttled}};
  }

 private:
  double sample(const Context& ctx) const {
    if (source_ == "wave") {
      double t = std::chrono::duration<double>(ctx.now().time_since_epoch()).count();
      return 1.5 + 1.5 * std::sin(2 * M_PI * t / period_s_ + phase_);
    }
    std::ifstream f("/proc/loadavg");
    double l = 0;
    f >> l;
    return l;
  }

  std::string source_;
  double period_s_, phase_;
};

// The actuator: obeys {"throttle": bool}. A real one would renice or pause
// the host's piranhas; this one only holds the order as its state.
class Throttle : public trellis::Node {
 public:
  explicit Throttle(const trellis::Params&) {}
  Value calculate(Context& ctx) override {
    Value state = ctx.state().is_null() ? Value(Value::Map{{"throttled", false}}) : ctx.state();
    for (const auto& c : ctx.commands())
      if (c.data["throttle"].is_bool()) state = Value::Map{{"throttled", c.data["throttle"]}};
    return state;
  }
};

// The cluster summary: the mean load of the hosts it can reach, and a
// decision with hysteresis -- throttle everyone above `high`, release below
// `low`. It commands its inferiors only when the decision changes, or when
// one of them disagrees with it (a host that came back, say).
class ClusterSummary : public trellis::Node {
 public:
  explicit ClusterSummary(const trellis::Params& p) : high_(p.number("high")), low_(p.number("low")) {
    if (low_ >= high_) throw trellis::BadParameter("low", "low must be below high");
  }

  Value calculate(Context& ctx) override {
    double sum = 0;
    int up = 0;
    for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
      if (ctx.inferior_link(i) != trellis::LinkState::Up || !ctx.inferior(i)["load"].is_number()) continue;
      sum += ctx.inferior(i)["load"].as_number();
      ++up;
    }
    double mean = up ? sum / up : 0;
    bool throttle = ctx.state()["throttle"] == Value(true);
    if (up && mean > high_) throttle = true;
    if (up && mean < low_) throttle = false;
    seen_.resize(ctx.inferior_count());
    bool decided = !(ctx.state()["throttle"] == Value(throttle));
    for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
      const Value& host = ctx.inferior(i);
      // Order a host that disagrees when the decision is new or the host has
      // reported since the last order; otherwise the order is on its way.
      bool news = decided || !(host == seen_[i]);
      seen_[i] = host;
      if (news && ctx.inferior_link(i) == trellis::LinkState::Up && host["throttled"].is_bool() &&
          host["throttled"] != Value(throttle))
        ctx.command(i, Value::Map{{"throttle", throttle}});
    }
    return Value::Map{{"hosts_up", up}, {"mean_load", std::round(mean * 100) / 100}, {"throttle", throttle}};
  }

 private:
  double high_, low_;
  std::vector<Value> seen_;  // each host's state when we last looked
};

int main(int argc, char** argv) {
  CLI::App app{"trellis_cluster: load monitors, a cluster summary and throttles, as a process trellis"};
  std::string file;
  std::vector<std::string> hosts;
  double seconds = 0;
  bool quiet = false;
  bool check = false;
  app.add_option("program", file, "the program (examples/trellis/cluster.yaml)")->required();
  app.add_option("--host", hosts, "the host to run here (repeatable); default: all of them, in this process");
  app.add_option("--seconds", seconds, "stop after this long (default: until Ctrl-C)");
  app.add_flag("--quiet", quiet, "print no events, only the report");
  app.add_flag("--check", check, "only validate the program (errors name the line)");
  CLI11_PARSE(app, argc, argv);

  trellis::Registry types;
  types.add<LoadMonitor>("load", "the host's load average, and its throttle's state");
  types.add<Throttle>("throttle", "obeys {throttle: bool}");
  types.add<ClusterSummary>("cluster", "mean load; throttles hosts above params.high until below params.low");
  try {
    trellis::Program program = trellis::load_program(file, types);
    if (check) {
      std::cout << file << ": ok: " << program.nodes.size() << " nodes on " << program.hosts.size()
                << " hosts\n";
      return 0;
    }
    trellis::RunOptions o;
    o.hosts = hosts;
    o.print_events = !quiet;
    if (seconds > 0) o.duration = std::chrono::milliseconds(static_cast<long>(seconds * 1000));
    return trellis::run_program(program, types, o, std::cout);
  } catch (const std::exception& e) {
    std::cerr << "trellis_cluster: " << e.what() << "\n";
    return 1;
  }
}
