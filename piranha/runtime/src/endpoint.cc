#include "piranha/runtime/endpoint.h"

#include <cctype>

namespace piranha {
namespace {

// Appended piece by piece: "'" + std::string(s) makes GCC 12 at -O3 warn
// falsely that the concatenation's memcpy may overlap (-Wrestrict).
std::string quoted(std::string_view s) {
  std::string q;
  q.reserve(s.size() + 2);
  q.append(1, '\'').append(s).append(1, '\'');
  return q;
}

std::optional<std::string> tcp_problem(std::string_view rest, std::string_view whole, EndpointUse use) {
  auto colon = rest.rfind(':');
  if (colon == std::string_view::npos) return "no port in " + quoted(whole) + " (expected tcp://HOST:PORT)";
  std::string_view host = rest.substr(0, colon), port = rest.substr(colon + 1);
  if (host.empty()) return "no host in " + quoted(whole) + " (expected tcp://HOST:PORT)";
  if (host == "*" && use == EndpointUse::Connect)
    return "host '*' only binds; connect to a host name or address in " + quoted(whole);
  if (host.front() == '[' ? host.back() != ']' : host.find_first_of("[]/ ") != std::string_view::npos)
    return "malformed host " + quoted(host) + " in " + quoted(whole);
  if (port == "*") {
    if (use == EndpointUse::Connect)
      return "port '*' only binds; connect to a port number in " + quoted(whole);
    return std::nullopt;
  }
  if (port.empty() || port.size() > 9 || port.find_first_not_of("0123456789") != std::string_view::npos)
    return "port " + quoted(port) + " is not a number in " + quoted(whole);
  long n = std::stol(std::string(port));
  if (n < 1 || n > 65535)
    return "port " + std::string(port) + " is out of range (1-65535) in " + quoted(whole);
  return std::nullopt;
}

}  // namespace

std::optional<std::string> endpoint_problem(std::string_view endpoint, EndpointUse use) {
  auto sep = endpoint.find("://");
  if (sep == std::string_view::npos)
    return quoted(endpoint) + " is not an endpoint (expected tcp://HOST:PORT, ipc://PATH or inproc://NAME)";
  std::string_view scheme = endpoint.substr(0, sep), rest = endpoint.substr(sep + 3);
  if (scheme == "tcp") return tcp_problem(rest, endpoint, use);
  if (scheme == "ipc" || scheme == "inproc") {
    if (rest.empty()) return "nothing after " + std::string(scheme) + ":// in " + quoted(endpoint);
    return std::nullopt;
  }
  return "unknown transport " + quoted(scheme) + " in " + quoted(endpoint) + " (expected tcp, ipc or inproc)";
}

bool endpoint_is_local(std::string_view endpoint) {
  if (endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://")) return true;
  if (!endpoint.starts_with("tcp://")) return false;
  std::string_view rest = endpoint.substr(6);
  std::string_view host = rest.substr(0, rest.rfind(':'));
  if (host == "localhost" || host == "lo" || host == "[::1]") return true;
  // 127.0.0.0/8: four dotted numbers, the first 127.
  if (!host.starts_with("127.")) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.')
      ++dots;
    else if (!std::isdigit(static_cast<unsigned char>(c)))
      return false;
  }
  return dots == 3;
}

bool valid_pool_name(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') return false;
  return true;
}

}  // namespace piranha
