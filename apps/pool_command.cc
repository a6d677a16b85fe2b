#include "pool_command.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <iostream>

#include "piranha/base/input_error.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/tuplespace/curve.h"

namespace piranha::apps {

CLI::Validator endpoint_check(EndpointUse use) {
  return CLI::Validator(
      [use](std::string& value) { return endpoint_problem(value, use).value_or(std::string()); }, "ENDPOINT");
}

CLI::Validator positive_number() {
  return CLI::Validator(
      [](std::string& value) {
        double d = 0;
        bool ok = CLI::detail::lexical_cast(value, d) && d > 0 && std::isfinite(d);
        return ok ? std::string() : "must be a number greater than 0, got '" + value + "'";
      },
      "POSITIVE");
}

std::shared_ptr<std::string> add_server_option(CLI::App& cmd, const std::string& names) {
  auto server = std::make_shared<std::string>(sys::server_from_env());
  cmd.add_option(names, *server, "tuple-space server (default: $PIRANHA_SERVER, else tcp://127.0.0.1:7070)")
      ->capture_default_str()
      ->check(endpoint_check());
  add_key_options(cmd);
  add_pool_option(cmd);
  return server;
}

void add_pool_option(CLI::App& cmd) {
  cmd.add_option_function<std::string>(
         "--pool", [](const std::string& name) { ::setenv(ts::kPoolEnv, name.c_str(), 1); },
         "the pool this program belongs to: a server of another pool is refused (default: $PIRANHA_POOL; "
         "unset, any server is accepted)")
      ->type_name("NAME")
      ->check(CLI::Validator(
          [](std::string& value) {
            return valid_pool_name(value)
                       ? std::string()
                       : "\"" + value + "\" is not a pool name (1 to 64 letters, digits, '-', '_', '.')";
          },
          "NAME"));
}

void export_key(const std::string& where, bool secret, const std::string& what) {
  if (secret)
    ts::load_secret_key(where, what);
  else
    ts::load_public_key(where, what);
  std::string value = where;
  if (!ts::is_z85_key(where) || std::filesystem::exists(where))
    value = std::filesystem::absolute(where).string();
  ::setenv(secret ? ts::kKeyEnv : ts::kServerKeyEnv, value.c_str(), 1);
}

void add_key_options(CLI::App& cmd) {
  auto exporter = [](bool secret) {
    return CLI::Validator(
        [secret](std::string& value) {
          try {
            export_key(value, secret, "");
            return std::string();
          } catch (const InputError& e) {
            // The option's name comes from CLI11; a key file's problem names the file.
            return e.source().empty() ? e.message() : std::string(e.what());
          }
        },
        "FILE");
  };
  cmd.add_option_function<std::string>(
         "--key", [](const std::string&) {},
         "this client's secret key file (`piranha keys new`), for a server started with --auth "
         "(default: $PIRANHA_KEY)")
      ->check(exporter(true));
  cmd.add_option_function<std::string>(
         "--server-key", [](const std::string&) {},
         "the server's public key file (default: $PIRANHA_SERVER_KEY)")
      ->check(exporter(false));
}

namespace {

CommandFailure unreachable(const std::string& server) {
  return CommandFailure(
      1, "cannot reach the tuple-space server at " + server + "; start one with `piranha ts serve`");
}

}  // namespace

std::unique_ptr<ts::Client> connect(const std::string& server) {
  if (auto problem = endpoint_problem(server))
    throw CommandFailure(2, "--server" +
                                std::string(std::getenv("PIRANHA_SERVER") ? " (or $PIRANHA_SERVER)" : "") +
                                ": " + *problem);
  ts::ClientOptions o;
  o.connect_timeout = std::chrono::milliseconds(3000);
  try {
    return std::make_unique<ts::Client>(server, o);
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() == ts::Code::Unreachable) throw unreachable(server);
    if (e.code() == ts::Code::AuthFailed || e.code() == ts::Code::WrongPool)
      throw CommandFailure(1, e.what());
    throw;
  }
}

void run_command(const std::string& command, const std::string& server, const std::function<int()>& body) {
  int status = 0;
  try {
    status = body();
  } catch (const CommandFailure& e) {
    std::cerr << "piranha " << command << ": " << e.what() << "\n";
    status = e.status;
  } catch (const ts::TupleSpaceError& e) {
    std::cerr << "piranha " << command << ": "
              << (e.code() == ts::Code::Unreachable ? unreachable(server).what()
                  : e.code() == ts::Code::AuthFailed || e.code() == ts::Code::WrongPool
                      ? std::string(e.what())
                  // In words: which key may not do what and what it needs (docs/security.md);
                  // the wire's code and the op posted are not for people.
                  : e.code() == ts::Code::NotPermitted
                      ? "the tuple-space server at " + server + " refused: " + e.detail()
                      : "the tuple-space server at " + server + " answered: " + e.what())
              << "\n";
    status = 1;
  } catch (const InputError& e) {  // a key named by $PIRANHA_KEY, say: bad input, as anywhere else
    std::cerr << "piranha " << command << ": " << e.what() << "\n";
    status = 2;
  } catch (const std::exception& e) {
    std::cerr << "piranha " << command << ": " << e.what() << "\n";
    status = 1;
  }
  if (status != 0) throw CLI::RuntimeError(status);
}

std::string age(double then, double now) {
  if (then <= 0) return "-";
  double s = std::max(0.0, now - then);
  char buf[32];
  if (s < 120)
    std::snprintf(buf, sizeof buf, "%.0fs ago", s);
  else if (s < 2 * 3600)
    std::snprintf(buf, sizeof buf, "%.0fm ago", s / 60);
  else if (s < 2 * 86400)
    std::snprintf(buf, sizeof buf, "%.0fh ago", s / 3600);
  else
    std::snprintf(buf, sizeof buf, "%.0fd ago", s / 86400);
  return buf;
}

std::string seconds_for_people(double s) {
  if (s <= 0) return "-";
  char buf[32];
  // The unit that fits: a 12.4 us task is not "0.01 ms".
  if (s < 1e-3)
    std::snprintf(buf, sizeof buf, "%.1f \u00b5s", s * 1e6);
  else if (s < 1)
    std::snprintf(buf, sizeof buf, s < 0.01 ? "%.2f ms" : "%.1f ms", s * 1000);
  else if (s < 60)
    std::snprintf(buf, sizeof buf, "%.2f s", s);
  else
    std::snprintf(buf, sizeof buf, "%dm %02ds", static_cast<int>(s / 60), static_cast<int>(s) % 60);
  return buf;
}

std::string local_time(double t, double now) {
  if (t >= kForeverSeconds) return "forever";
  std::time_t tt = static_cast<std::time_t>(t), nt = static_cast<std::time_t>(now);
  std::tm lt{}, ln{};
  localtime_r(&tt, &lt);
  localtime_r(&nt, &ln);
  bool today = lt.tm_year == ln.tm_year && lt.tm_yday == ln.tm_yday;
  char buf[32];
  std::strftime(buf, sizeof buf, today ? "%H:%M:%S" : "%Y-%m-%d %H:%M", &lt);
  return buf;
}

std::optional<double> parse_duration(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t used = 0;
    double n = 0;
    try {
      if (!std::isdigit(static_cast<unsigned char>(text[i]))) return std::nullopt;
      n = std::stod(text.substr(i), &used);
    } catch (const std::exception&) {
      return std::nullopt;
    }
    i += used;
    double unit = 1;
    if (i < text.size()) {
      switch (text[i]) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        default: return std::nullopt;
      }
      ++i;
    } else if (total > 0) {
      return std::nullopt;  // "1h30": the unit of the last number is missing
    }
    total += n * unit;
  }
  if (!(total > 0) || !std::isfinite(total)) return std::nullopt;
  return total;
}

std::optional<double> parse_time(const std::string& text, double now) {
  if (text == "now") return now;
  if (!text.empty() && text[0] == '+') {
    auto d = parse_duration(text.substr(1));
    return d ? std::optional<double>(now + *d) : std::nullopt;
  }
  if (!text.empty() && text.find_first_not_of("0123456789.") == std::string::npos) {
    try {
      return std::stod(text);
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }
  std::tm tm{};
  std::time_t nt = static_cast<std::time_t>(now);
  localtime_r(&nt, &tm);
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  char sep = 0, end = 0;
  int n = std::sscanf(text.c_str(), "%4d-%2d-%2d%c%2d:%2d:%2d%c", &year, &month, &day, &sep, &hour, &minute,
                      &second, &end);
  if ((n == 6 || n == 7) && (sep == ' ' || sep == 'T')) {
    tm.tm_year = year - 1900;
    tm.tm_mon = month - 1;
    tm.tm_mday = day;
  } else {
    second = 0;
    n = std::sscanf(text.c_str(), "%2d:%2d:%2d%c", &hour, &minute, &second, &end);
    if (n != 2 && n != 3) return std::nullopt;
  }
  if (hour > 23 || minute > 59 || second > 60 || hour < 0 || minute < 0 || second < 0) return std::nullopt;
  tm.tm_hour = hour;
  tm.tm_min = minute;
  tm.tm_sec = second;
  tm.tm_isdst = -1;
  std::time_t t = std::mktime(&tm);
  if (t == static_cast<std::time_t>(-1)) return std::nullopt;
  return static_cast<double>(t);
}

}  // namespace piranha::apps
