// piranha ts serve: run a tuple-space server until SIGTERM or SIGINT.
#include <csignal>
#include <ctime>
#include <iostream>
#include <memory>

#include "commands.h"
#include "pool_command.h"
#include "piranha/tuplespace/server.h"

namespace piranha::apps {
namespace {

ts::Server* g_server = nullptr;

extern "C" void on_signal(int) {
  if (g_server) g_server->stop();
}

void log_line(std::string_view line) {
  std::time_t t = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  std::cerr << when << " piranha-ts: " << line << std::endl;
}

}  // namespace

void add_ts_serve(CLI::App& ts) {
  auto o = std::make_shared<ts::ServerOptions>();
  o->bind.clear();
  auto quiet = std::make_shared<bool>(false);
  auto fsync = std::make_shared<std::string>("always");
  auto* cmd = ts.add_subcommand("serve", "run a tuple-space server until SIGTERM/SIGINT");
  cmd->add_option("--bind", o->bind, "endpoint to bind (repeatable): tcp://host:port, ipc://path")
      ->default_str("tcp://127.0.0.1:7070")
      ->check(endpoint_check(EndpointUse::Bind));
  cmd->add_option("--max-message", o->max_message_bytes, "largest request in bytes; larger ones get error too_large")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30));
  cmd->add_option("--heartbeat-ms", o->heartbeat_interval_ms, "ZeroMQ heartbeat interval")
      ->capture_default_str()
      ->check(CLI::Range(1, 3'600'000));
  cmd->add_option("--heartbeat-timeout-ms", o->heartbeat_timeout_ms,
                  "drop a client (and return its leases) after this much silence")
      ->capture_default_str()
      ->check(CLI::Range(1, 3'600'000));
  cmd->add_option("--data", o->data_dir,
                  "durable: recover the tuples from DIR (created when missing) and log every change there "
                  "before replying (docs/durability.md); without it everything stays in memory")
      ->type_name("DIR");
  cmd->add_option("--fsync", *fsync,
                  "with --data, when the log reaches the disk: always (before each reply; a machine crash "
                  "loses nothing), everysec (a machine crash loses the last second or two), no (the kernel "
                  "decides); a killed server loses nothing acknowledged under any of them")
      ->capture_default_str()
      ->check(CLI::IsMember({"always", "everysec", "no"}));
  cmd->add_flag("--salvage", o->salvage,
                "with --data, start even when the log is damaged in the middle: keep the records before the "
                "damage and move the rest aside to DIR/tuples.log.dropped-OFFSET (a damaged last record is "
                "always dropped and reported)");
  cmd->add_flag("--quiet", *quiet, "do not log connections and rejected requests (recovery is still logged)");
  cmd->callback([o, quiet, fsync] {
    if (o->bind.empty()) o->bind.push_back("tcp://127.0.0.1:7070");
    o->fsync = ts::parse_fsync_policy(*fsync);
    o->notice = log_line;
    if (!*quiet) o->log = log_line;
    ts::Server server(*o);
    g_server = &server;
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    for (const auto& ep : server.endpoints()) log_line("serving on " + ep);
    server.run();
    g_server = nullptr;
    auto c = server.counters();
    log_line("shut down after " + std::to_string(c.requests) + " requests (" + std::to_string(c.rejected) +
             " rejected), " + std::to_string(c.sessions_opened) + " client sessions");
  });
}

}  // namespace piranha::apps
