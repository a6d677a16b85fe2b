#include "piranha/trellis/run.h"

#include <csignal>
#include <memory>
#include <mutex>
#include <thread>

#include "piranha/trellis/fiber_trellis.h"

namespace piranha::trellis {
namespace {

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_stop_signal(int) {
  g_stop = 1;
}

std::string describe(const Event& e) {
  switch (e.kind) {
    case Event::Kind::State: return "state " + e.node + " " + to_json(e.value);
    case Event::Kind::Command:
      return "command " + e.node + " from " + (e.other.empty() ? "-" : e.other) + " " + to_json(e.value);
    case Event::Kind::Link: return "link " + e.other + " " + e.value.as_string();
    case Event::Kind::Miss: return "miss " + e.node + " probe " + e.other + " latency_us " + to_json(e.value);
  }
  return "?";
}

}  // namespace

int run_program(const Program& program, const Registry& types, const RunOptions& options, std::ostream& out) {
  std::vector<std::string> hosts = options.hosts;
  if (hosts.empty())
    for (const auto& h : program.hosts) hosts.push_back(h.name);
  if (hosts.empty()) hosts.push_back("");  // no hosts: the whole program here
  std::mutex out_mutex;
  bool prefix = hosts.size() > 1;
  g_stop = 0;
  auto old_int = std::signal(SIGINT, on_stop_signal);
  auto old_term = std::signal(SIGTERM, on_stop_signal);
  std::vector<std::unique_ptr<FiberTrellis>> running;
  try {
    for (const auto& h : hosts) {
      FiberOptions o;
      o.host = h;
      if (options.print_events)
        o.on_event = [&out, &out_mutex, prefix, h](const Event& e) {
          std::lock_guard<std::mutex> lock(out_mutex);
          out << (prefix ? h + ": " : "") << describe(e) << std::endl;
        };
      running.push_back(std::make_unique<FiberTrellis>(program, types, std::move(o)));
    }
    {
      std::lock_guard<std::mutex> lock(out_mutex);
      out << "running " << (program.name.empty() ? program.source : program.name);
      for (const auto& h : hosts)
        if (!h.empty()) out << " " << h;
      out << std::endl;
    }
    auto end = Clock::now() + options.duration.value_or(std::chrono::milliseconds(0));
    while (!g_stop && (!options.duration || Clock::now() < end))
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } catch (...) {
    running.clear();
    std::signal(SIGINT, old_int);
    std::signal(SIGTERM, old_term);
    throw;
  }
  for (auto& t : running) t->stop();
  std::signal(SIGINT, old_int);
  std::signal(SIGTERM, old_term);
  if (options.report) {
    std::lock_guard<std::mutex> lock(out_mutex);
    for (std::size_t i = 0; i < running.size(); ++i) {
      if (!hosts[i].empty()) out << "host " << hosts[i] << "\n";
      out << format_report(running[i]->report());
    }
    out.flush();
  }
  return 0;
}

}  // namespace piranha::trellis
