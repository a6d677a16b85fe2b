#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>

#include "piranha/scheduler/csv.h"
#include "piranha/scheduler/strategy.h"
#include "strategies.h"

namespace piranha::sched {
namespace {

using csv::trim;

struct Parsed {
  std::string base;                 // upper case, no parameters
  std::vector<std::string> params;  // as written, trimmed
};

[[noreturn]] void fail(std::string_view name, const std::string& problem) {
  throw InputError("strategy \"" + std::string(name) + "\"", problem);
}

Parsed parse(std::string_view name) {
  Parsed p;
  std::string text = trim(name);
  auto open = text.find('(');
  std::string head = trim(text.substr(0, open));
  for (char c : head) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') fail(name, "not a strategy name");
    p.base += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (p.base.empty()) fail(name, "empty strategy name");
  if (open == std::string::npos) return p;
  if (text.back() != ')' || text.find('(', open + 1) != std::string::npos ||
      text.find(')') != text.size() - 1)
    fail(name, "malformed parentheses");
  std::string inside = text.substr(open + 1, text.size() - open - 2);
  std::size_t from = 0;
  while (true) {
    auto comma = inside.find(',', from);
    std::string param =
        trim(inside.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (param.empty()) fail(name, "empty parameter");
    p.params.push_back(param);
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return p;
}

std::int64_t parse_quantum(std::string_view name, const std::string& s) {
  std::int64_t q = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), q);
  if (ec != std::errc() || ptr != s.data() + s.size()) fail(name, "quantum \"" + s + "\" is not an integer");
  if (q < 1) fail(name, "quantum " + s + " must be at least 1");
  return q;
}

double parse_real(std::string_view name, const std::string& s, const char* what) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(v))
    fail(name, std::string(what) + " \"" + s + "\" is not a number");
  return v;
}

std::string format_real(double v) {
  char buf[32];
  auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
  std::string s(buf, ptr);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

const std::vector<std::pair<std::string, Priority>>& globals() {
  static const std::vector<std::pair<std::string, Priority>> g{
      {"FCFS", Priority::FCFS}, {"TSK", Priority::TSK}, {"SRT", Priority::SRT}, {"SPT", Priority::SPT},
      {"SET", Priority::SET},   {"LET", Priority::LET}, {"ROR", Priority::ROR}};
  return g;
}

std::optional<Priority> global_named(const std::string& base) {
  for (const auto& [n, p] : globals())
    if (n == base) return p;
  return std::nullopt;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() > suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Builds the strategy and its canonical name; `build` false only validates.
std::unique_ptr<Strategy> build(std::string_view name, bool make, std::string* canonical) {
  Parsed p = parse(name);
  auto params_at_most = [&](std::size_t n) {
    if (p.params.size() > n)
      fail(name, n == 0 ? "takes no parameter" : "takes at most " + std::to_string(n) + " parameter(s)");
  };
  std::string canon = p.base;
  auto quantum_of = [&](std::size_t index, std::int64_t& q) {
    if (p.params.size() > index) q = parse_quantum(name, p.params[index]);
  };
  std::unique_ptr<Strategy> s;
  if (auto g = global_named(p.base)) {
    std::int64_t q = 10;
    if (*g == Priority::ROR) {
      params_at_most(1);
      quantum_of(0, q);
      if (!p.params.empty()) canon += "(" + std::to_string(q) + ")";
    } else {
      params_at_most(0);
    }
    if (make) s = std::make_unique<GlobalStrategy>(canon, GlobalOrder(*g, q));
  } else if (p.base == "RND" || p.base == "FAIR") {
    params_at_most(0);
    if (make)
      s = p.base == "RND" ? std::unique_ptr<Strategy>(std::make_unique<RandomStrategy>())
                          : std::unique_ptr<Strategy>(std::make_unique<FairStrategy>());
  } else if (ends_with(p.base, "FIT") && global_named(p.base.substr(0, p.base.size() - 3))) {
    Priority g = *global_named(p.base.substr(0, p.base.size() - 3));
    std::int64_t q = 10;
    params_at_most(g == Priority::ROR ? 1 : 0);
    quantum_of(0, q);
    if (!p.params.empty()) canon += "(" + std::to_string(q) + ")";
    if (make) s = std::make_unique<FitStrategy>(canon, GlobalOrder(g, q));
  } else if (ends_with(p.base, "MIX") && global_named(p.base.substr(0, p.base.size() - 3))) {
    Priority g = *global_named(p.base.substr(0, p.base.size() - 3));
    std::int64_t q = 10;
    double c = 1.0;
    params_at_most(g == Priority::ROR ? 2 : 1);
    if (!p.params.empty()) {
      c = parse_real(name, p.params[0], "factor");
      if (c <= 0) fail(name, "factor " + p.params[0] + " must be greater than 0");
      canon += "(" + format_real(c);
    }
    quantum_of(1, q);
    if (p.params.size() > 1) canon += "," + std::to_string(q);
    if (!p.params.empty()) canon += ")";
    if (make) s = std::make_unique<MixFitStrategy>(canon, GlobalOrder(g, q), c);
  } else if (ends_with(p.base, "A") && global_named(p.base.substr(0, p.base.size() - 1))) {
    Priority g = *global_named(p.base.substr(0, p.base.size() - 1));
    std::int64_t q = 10;
    double t = 0.5;
    params_at_most(g == Priority::ROR ? 2 : 1);
    if (!p.params.empty()) {
      t = parse_real(name, p.params[0], "threshold");
      if (t < 0 || t > 1) fail(name, "threshold " + p.params[0] + " is not between 0 and 1");
      canon += "(" + format_real(t);
    }
    quantum_of(1, q);
    if (p.params.size() > 1) canon += "," + std::to_string(q);
    if (!p.params.empty()) canon += ")";
    if (make) s = std::make_unique<AdaptiveStrategy>(canon, GlobalOrder(g, q), t);
  } else {
    fail(name,
         "unknown strategy (known: FCFS, TSK, SRT, SPT, SET, LET, ROR(q), RND, FAIR, xFIT, xA(T), xMIX(c) "
         "for x a global one)");
  }
  if (canonical) *canonical = canon;
  return s;
}

}  // namespace

std::unique_ptr<Strategy> make_strategy(std::string_view name) {
  return build(name, true, nullptr);
}

std::string canonical_strategy_name(std::string_view name) {
  std::string c;
  build(name, false, &c);
  return c;
}

std::vector<std::string> split_strategy_list(std::string_view list) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : list) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth <= 0) {
      out.push_back(trim(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(trim(cur));
  return out;
}

}  // namespace piranha::sched
