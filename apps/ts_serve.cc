// piranha ts serve: run a tuple-space server until SIGTERM or SIGINT.
#include <malloc.h>

#include <cctype>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <random>

#include "commands.h"
#include "piranha/access/auth_config.h"
#include "piranha/access/pool_access.h"
#include "piranha/tuplespace/curve.h"
#include "piranha/tuplespace/server.h"
#include "pool_command.h"

namespace piranha::apps {
namespace {

ts::Server* g_server = nullptr;

// The server allocates a buffer for every request it receives (on ZeroMQ's
// I/O thread) and every reply it sends (on its own), and frees each on the
// other thread once it is done. With glibc's defaults each free hands the
// top of its heap back to the kernel (above 128 KB) and the next request's
// buffer faults its pages in again: with cmatrix's 80-KB tasks, some 20 page
// faults per task and a sixth of the server's CPU (docs/performance-history.md,
// 2026-11-27). Kept instead, up to 64 MB per heap (so the server's resident
// size may stay that much above what it holds); buffers up to 4 MB come from
// the heaps (beyond, mmap as before).
void keep_freed_memory() {
  mallopt(M_MMAP_THRESHOLD, 4 << 20);
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
}

extern "C" void on_signal(int) {
  if (g_server) g_server->stop();
}

void log_line(std::string_view line) {
  std::time_t t = std::time(nullptr);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", std::localtime(&t));
  std::cerr << when << " piranha-ts: " << line << std::endl;
}

struct Security {
  std::string key, auth;
  bool insecure = false;
};

[[noreturn]] void refuse_to_start(const std::string& why) {
  std::cerr << "piranha ts serve: " << why << "\n";
  throw CLI::RuntimeError(2);
}

// CURVE and the auth file, or else the promise to stay on this machine
// unless told otherwise. Logs which.
void secure(ts::ServerOptions& o, const Security& s) {
  if (s.key.empty() != s.auth.empty())
    refuse_to_start(
        "--key and --auth go together: the server's secret key, and the clients it admits "
        "(docs/security.md)");
  if (s.auth.empty()) {
    std::string exposed;
    for (const auto& ep : o.bind)
      if (!endpoint_is_local(ep)) exposed += (exposed.empty() ? "" : ", ") + ep;
    if (!exposed.empty() && !s.insecure)
      refuse_to_start(
          "other machines can reach " + exposed +
          ", and without --auth anyone who reaches it may do anything in the pool: give --key and "
          "--auth (docs/security.md), or --insecure to serve it unauthenticated all the same");
    log_line(exposed.empty()
                 ? "no --auth: clients are not authenticated; the endpoints are reachable from this "
                   "machine only"
                 : "WARNING: --insecure: " + exposed +
                       " is reachable from other machines and clients are not authenticated: anyone "
                       "who reaches it may do anything in the pool");
    return;
  }
  try {
    AuthConfig auth = load_auth_config(s.auth);
    o.curve_secret_key = ts::load_secret_key(s.key, "--key").secret_key;
    std::vector<rights::Principal> principals;
    std::map<std::string, int> roles;
    for (auto& c : auth.clients) {
      o.clients.push_back({c.principal.name, c.public_key});
      ++roles[std::string(rights::name(c.principal.role))];
      principals.push_back(std::move(c.principal));
    }
    o.access = rights::make_pool_access(std::move(principals));
    std::string summary;
    for (const auto& [role, n] : roles)
      summary += (summary.empty() ? "" : ", ") + std::to_string(n) + " " + role;
    log_line("CURVE: admitting the " + std::to_string(o.clients.size()) + " keys of " + s.auth +
             (summary.empty() ? "" : " (" + summary + ")") + "; every other client is refused");
  } catch (const std::exception& e) {
    refuse_to_start(e.what());
  }
}

std::string new_pool_id() {
  std::random_device rd;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", rd(), rd());
  return buf;
}

// The pool the server serves: fixed by the first start with --pool and kept
// in DIR/pool ("name NAME" and "id ID" lines), so that a durable pool keeps
// its id and a restart cannot rename it by mistake. Without --data the pool
// lives as long as the process, with a new id each start.
void choose_pool(ts::ServerOptions& o, const std::string& asked) {
  if (!asked.empty() && !valid_pool_name(asked))
    refuse_to_start("--pool: \"" + asked + "\" is not a pool name (1 to 64 letters, digits, '-', '_', '.')");
  if (o.data_dir.empty()) {
    if (!asked.empty()) o.pool_name = asked, o.pool_id = new_pool_id();
    return;
  }
  const std::filesystem::path file = std::filesystem::path(o.data_dir) / "pool";
  std::string kept_name, kept_id;
  if (std::ifstream in(file); in) {
    std::string key, value;
    while (in >> key >> value) {
      if (key == "name") kept_name = value;
      if (key == "id") kept_id = value;
    }
    if (!valid_pool_name(kept_name) || kept_id.empty())
      refuse_to_start(file.string() + ": not a pool file (lines \"name NAME\" and \"id ID\")");
  }
  if (!kept_name.empty()) {
    if (!asked.empty() && asked != kept_name)
      refuse_to_start("--pool " + asked + ": the data directory " + o.data_dir + " holds pool \"" +
                      kept_name + "\" (id " + kept_id + "); serve it with --pool " + kept_name +
                      ", or give another --data for a new pool");
    o.pool_name = kept_name;
    o.pool_id = kept_id;
    return;
  }
  if (asked.empty()) return;
  o.pool_name = asked;
  o.pool_id = new_pool_id();
  std::error_code ec;
  std::filesystem::create_directories(o.data_dir, ec);
  std::ofstream out(file);
  out << "name " << o.pool_name << "\nid " << o.pool_id << "\n";
  if (!out.flush()) refuse_to_start("cannot write " + file.string() + " (the pool's name and id)");
}

}  // namespace

void add_ts_serve(CLI::App& ts) {
  auto o = std::make_shared<ts::ServerOptions>();
  o->bind.clear();
  auto quiet = std::make_shared<bool>(false);
  auto security = std::make_shared<Security>();
  auto fsync = std::make_shared<std::string>("always");
  auto* cmd = ts.add_subcommand("serve", "run a tuple-space server until SIGTERM/SIGINT");
  cmd->add_option("--bind", o->bind, "endpoint to bind (repeatable): tcp://host:port, ipc://path")
      ->default_str("tcp://127.0.0.1:7070")
      ->check(endpoint_check(EndpointUse::Bind));
  cmd->add_option("--max-message", o->max_message_bytes,
                  "largest request in bytes; larger ones get error too_large")
      ->capture_default_str()
      ->check(CLI::Range(std::size_t{1024}, std::size_t{1} << 30));
  cmd->add_option(
         "--heartbeat-ms", o->heartbeat_interval_ms,
         "ZeroMQ heartbeat interval; 0: send none (clients' own heartbeats and TCP keepalive find dead "
         "ones; for pools of thousands of agents, docs/scale.md)")
      ->capture_default_str()
      ->check(CLI::Range(0, 3'600'000));
  cmd->add_option("--heartbeat-timeout-ms", o->heartbeat_timeout_ms,
                  "drop a client (and return its leases) after this much silence")
      ->capture_default_str()
      ->check(CLI::Range(1, 3'600'000));
  cmd->add_option("--io-threads", o->io_threads,
                  "ZeroMQ I/O threads reading and writing the connections (the server's busiest thread at "
                  "thousands of agents; docs/scale.md, limit 22)")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
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
                "with --data, start even when the log is damaged: keep the records before the damage and "
                "move the rest aside to DIR/tuples.log.dropped-OFFSET (a torn last write is always moved "
                "there and reported; docs/durability.md)");
  cmd->add_option(
         "--key", security->key,
         "this server's secret key (`piranha keys new`): encrypt every connection with CURVE; needs --auth")
      ->type_name("FILE");
  cmd->add_option(
         "--auth", security->auth,
         "the clients admitted, by public key, and their roles (docs/security.md); every other client "
         "is refused, and each request is checked against its client's role")
      ->type_name("FILE");
  cmd->add_flag("--insecure", security->insecure,
                "without --auth, bind endpoints other machines reach all the same (without it the server "
                "refuses to: anyone who reaches them could do anything)");
  auto pool = std::make_shared<std::string>();
  cmd->add_option("--pool", *pool,
                  "the pool this server serves: its name is fixed with a new id at the first start (with "
                  "--data, kept in DIR/pool; a later start with another name is refused), and clients "
                  "configured with another pool refuse this server (docs/operations.md, \"Pools\")")
      ->type_name("NAME");
  cmd->add_flag("--quiet", *quiet,
                "do not log connections and rejected requests (recovery and refused keys are still logged)");
  cmd->callback([o, quiet, fsync, security, pool] {
    if (o->bind.empty()) o->bind.push_back("tcp://127.0.0.1:7070");
    o->fsync = ts::parse_fsync_policy(*fsync);
    o->notice = log_line;
    if (!*quiet) o->log = log_line;
    choose_pool(*o, *pool);
    secure(*o, *security);
    keep_freed_memory();
    ts::Server server(*o);
    g_server = &server;
    std::signal(SIGTERM, on_signal);
    std::signal(SIGINT, on_signal);
    if (!o->pool_name.empty()) log_line("pool " + o->pool_name + " (id " + o->pool_id + ")");
    for (const auto& ep : server.endpoints()) log_line("serving on " + ep);
    server.run();
    g_server = nullptr;
    auto c = server.counters();
    log_line("shut down after " + std::to_string(c.requests) + " requests (" + std::to_string(c.rejected) +
             " rejected), " + std::to_string(c.sessions_opened) + " client sessions");
  });
}

}  // namespace piranha::apps
