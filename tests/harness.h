// Helpers for the multi-process integration tests: child processes, a real
// `piranha ts serve` process, and waiting for conditions instead of sleeping.
//
// Every wait here is a poll with a generous deadline, so a loaded machine makes
// tests slower, not flaky. Lower bounds on time are asserted by the tests
// themselves; nothing here assumes an upper bound tighter than seconds.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "piranha/base/clock.h"
#include "piranha/tuplespace/client.h"

namespace piranha::it {

namespace ts = piranha::ts;
using namespace std::chrono_literals;

// How long a test waits for something that should happen "promptly".
inline constexpr std::chrono::milliseconds kPatience = 15s;

// A lease in milliseconds, as ts_peer takes it: 60 s, longer than any test.
inline constexpr const char* kLongLeaseMs = "60000";

// Whether `text` contains `part`.
inline bool contains(std::string_view text, std::string_view part) {
  return text.find(part) != text.npos;
}

// The path of a program built into build/bin (piranha, ts_peer).
std::string bin(std::string_view name);

// Milliseconds since `start`, as a double for readable failure messages.
double ms_since(Clock::time_point start);

// Polls `done` every few milliseconds until it returns true or `timeout`
// passes. Returns whether it became true.
bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout = kPatience);

// A child process started with posix_spawn. stdin is /dev/null; stdout and
// stderr go to files in a private temporary directory and can be read while
// the child runs. The child starts with default dispositions for the common
// termination signals and an empty signal mask, whatever the test runner set.
// The destructor SIGKILLs the child if it was not reaped (after its stop
// signal, if it was given one: stop_with), reaps it and removes the files.
// Not copyable.
class Process {
 public:
  // argv[0] is the program's path. Throws std::runtime_error when it cannot
  // be spawned.
  explicit Process(std::vector<std::string> argv);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const { return pid_; }

  // Sends `sig`; does nothing once the child has been reaped.
  void signal(int sig);

  // The destructor first sends `sig` (and SIGCONT) and waits up to
  // kPatience for the child to end, then SIGKILLs it: for a child whose
  // clean stop the test means (an agent removes its job keys' directory
  // when it stops on SIGTERM, not when it is killed).
  void stop_with(int sig) { stop_signal_ = sig; }

  // Waits up to `timeout` for the child to end. Returns its exit code, or
  // 128 + the signal number when a signal ended it (as a shell reports it);
  // nullopt while it still runs. A stopped child still runs.
  std::optional<int> wait(std::chrono::milliseconds timeout = kPatience);

  // True until the child has ended (reaps it when it has).
  bool running();

  // Everything the child wrote so far.
  std::string out() const;
  std::string err() const;

  // Waits until stdout (stderr) contains `text`.
  bool wait_for_out(std::string_view text, std::chrono::milliseconds timeout = kPatience) const;
  bool wait_for_err(std::string_view text, std::chrono::milliseconds timeout = kPatience) const;

  // The command line, for failure messages.
  std::string command() const;

 private:
  std::vector<std::string> argv_;
  std::string dir_, out_path_, err_path_;
  pid_t pid_ = -1;
  std::optional<int> status_;
  int stop_signal_ = 0;
};

// Client options that give up quickly, for probing whether a server is up.
ts::ClientOptions quick_client_options();

// A `piranha ts serve` process bound to a free loopback port. The server is
// started with `--bind tcp://127.0.0.1:*`, its resolved endpoint is read from
// its "serving on" log line (so no port is guessed and raced for), and the
// constructor returns once the server answers a stats request.
class ServerProcess {
 public:
  // `flags` are extra `piranha ts serve` options (--max-message 2048, ...).
  // `probe` is how the constructor's client connects to see it serve (with
  // --auth, it needs keys the server admits).
  explicit ServerProcess(std::vector<std::string> flags = {},
                         ts::ClientOptions probe = quick_client_options());

  const std::string& endpoint() const { return endpoint_; }
  int port() const { return port_; }
  Process& process() { return process_; }
  // The server's stderr: its log.
  std::string log() const { return process_.err(); }

 private:
  Process process_;
  std::string endpoint_;
  int port_ = 0;
};

// Waits until a server at `endpoint` answers a stats request from a client
// with `options`.
bool wait_until_serving(const std::string& endpoint, std::chrono::milliseconds timeout = kPatience,
                        const ts::ClientOptions& options = quick_client_options());

// A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0, read it,
// close). Only for cases that need a number before any server exists.
int free_port();

// Figures for `space`, zero when the space does not exist.
ts::SpaceStats stats_of(ts::Client& c, std::string_view space);

// Keeps a server's event loop busy from a thread of its own (a client asking
// for stats in a loop) while it lives. Deadlines are then checked every time
// the loop turns, not only when the server's poll times out: this is what
// exposes a deadline that ends early because of rounding.
class BackgroundTraffic {
 public:
  explicit BackgroundTraffic(const std::string& endpoint);
  ~BackgroundTraffic();
  BackgroundTraffic(const BackgroundTraffic&) = delete;
  BackgroundTraffic& operator=(const BackgroundTraffic&) = delete;
  // Requests answered so far.
  std::uint64_t requests() const { return requests_.load(); }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> requests_{0};
  std::thread thread_;
};

// A private temporary directory, removed with everything in it when the
// object goes. Not copyable.
class Scratch {
 public:
  Scratch();
  ~Scratch();
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  // Writes `text` to the file `name` here; returns its path.
  std::string write(const std::string& name, const std::string& text) const;
  // The file `name`'s contents ("" when it does not exist).
  std::string read(const std::string& name) const;
  std::string dir;  // its path
};

// Starts a tests/ts_peer process: ts_peer ENDPOINT ARGS...
std::vector<std::string> peer_argv(const std::string& endpoint, std::vector<std::string> args);

// `piranha agent` for node `node` of the pool at `endpoint`, as the campus tests run it: always
// available (the trace `up.avail.csv` in `s`), its config `agent.yaml` in `s`, one piranha at
// normal priority, serving campus loans; then `extra`. The trace and config are written only if
// `s` has none yet (a test may write its own first): rewriting them while an agent started
// earlier reads them gave it a truncated file now and then.
std::vector<std::string> lending_agent_argv(const Scratch& s, const std::string& endpoint,
                                            const std::string& node,
                                            const std::vector<std::string>& extra = {});

}  // namespace piranha::it
