// What the pool commands (submit, jobs, nodes, cancel, owner) share: the
// --server option, one connection to the system space, one-line errors, and
// times written for people.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>

#include "piranha/runtime/endpoint.h"
#include "piranha/tuplespace/client.h"

namespace piranha::apps {

// A command's failure: `message` is printed as "piranha <command>: message"
// and the program exits with `status`.
struct CommandFailure : std::runtime_error {
  CommandFailure(int status, const std::string& message) : std::runtime_error(message), status(status) {}
  int status;
};

// A CLI11 check that a value is a well-formed endpoint (endpoint.h); CLI11
// prefixes its message with the option's name: "--server: port 99999 is out
// of range (1-65535) in 'tcp://127.0.0.1:99999'".
CLI::Validator endpoint_check(EndpointUse use = EndpointUse::Connect);

// A CLI11 check for a number > 0: "--time-scale: must be a number greater
// than 0, got '-1'" (CLI::PositiveNumber prints a range up to DBL_MAX).
CLI::Validator positive_number();

// Adds --server to `cmd` (default: $PIRANHA_SERVER, else tcp://127.0.0.1:7070),
// checked with endpoint_check, and returns where the value lands. `names`
// may add aliases ("--server,--connect"). Adds --key and --server-key
// (add_key_options) and --pool (add_pool_option) too.
std::shared_ptr<std::string> add_server_option(CLI::App& cmd, const std::string& names = "--server");

// Adds --key FILE and --server-key FILE: this client's secret key and the
// server's public key, for a server started with --auth (docs/security.md).
// Each is checked when parsed (CLI11 prefixes the option's name to the
// problem) and put in the environment as PIRANHA_KEY or PIRANHA_SERVER_KEY
// (a file as an absolute path), where every client this program makes and
// every program it starts (a job's feeder) find it. Without them those
// variables are used as they are.
void add_key_options(CLI::App& cmd);

// Adds --pool NAME: the pool this program belongs to. Put in the environment
// as $PIRANHA_POOL, where every client this program makes, and every program
// it starts, finds it (ts::ClientOptions::pool): a server of another pool is
// then refused. Without it $PIRANHA_POOL is used as it is; unset, any server
// is accepted.
void add_pool_option(CLI::App& cmd);

// Puts a key in the environment as add_key_options does: `where` is a key
// file or a key's Z85 text, `secret` says which key it is. Throws
// std::invalid_argument "WHAT: problem" when it cannot be read.
void export_key(const std::string& where, bool secret, const std::string& what);

// Connects to the server. Throws CommandFailure(2, "--server: PROBLEM") for
// a malformed endpoint (one from $PIRANHA_SERVER is not checked by CLI11),
// CommandFailure(1, "cannot reach the tuple-space server at X; start one
// with `piranha ts serve`") when no server answers, CommandFailure(1,
// "auth_failed: ...") when it refuses this client's key (or lack of one).
std::unique_ptr<ts::Client> connect(const std::string& server);

// Runs a command's body and ends the program as it says: returns normally
// for status 0, else throws CLI::RuntimeError(status) (which main turns into
// the exit status without printing anything). A CommandFailure, an
// unreachable server or any other exception is printed as one line naming
// `command` and the server; a refusal (not_permitted) as "the tuple-space
// server at X refused: key "bob" (role job) may not ...", in the server's
// words (TupleSpaceError::detail()), without the wire's code.
void run_command(const std::string& command, const std::string& server, const std::function<int()>& body);

// "42s ago", "3m ago", "2h ago", "5d ago" for a wall-clock time; "-" for 0.
std::string age(double then, double now);
// "0.12 ms", "35.0 ms", "1.20 s", "2m 05s"; "-" for 0.
std::string seconds_for_people(double s);
// Local time: "14:05:09" today, "2026-11-23 14:05" otherwise; "forever"
// at or beyond kForeverSeconds.
std::string local_time(double t, double now);

// A block with no end ends here (9999-12-31): owner blocks "until allowed".
inline constexpr double kForeverSeconds = 253402300799.0;

// Parses "90", "30s", "10m", "2h", "1d", "1h30m" as seconds; nullopt when
// malformed or not positive.
std::optional<double> parse_duration(const std::string& text);
// Parses a wall-clock time: "now", seconds since the epoch ("1795000000"),
// "HH:MM[:SS]" (today, local time), "YYYY-MM-DD HH:MM[:SS]" or
// "YYYY-MM-DDTHH:MM[:SS]" (local time), or "+DURATION" (from now). nullopt
// when malformed.
std::optional<double> parse_time(const std::string& text, double now);

}  // namespace piranha::apps
