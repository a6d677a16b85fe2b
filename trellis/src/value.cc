#include "piranha/trellis/value.h"

#include <nlohmann/json.hpp>

namespace piranha::trellis {
namespace {

// nlohmann's own map is sorted like Value::Map, so keys come out in the same order.
nlohmann::json to_nlohmann(const Value& v) {
  struct Visitor {
    nlohmann::json operator()(std::monostate) const { return nullptr; }
    nlohmann::json operator()(bool b) const { return b; }
    nlohmann::json operator()(std::int64_t i) const { return i; }
    // nlohmann dumps a non-finite double as null (JSON has no infinities) and
    // a finite one with a fraction or exponent, as the contract asks.
    nlohmann::json operator()(double d) const { return d; }
    nlohmann::json operator()(const std::string& s) const { return s; }
    nlohmann::json operator()(const Value::List& l) const {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& x : l) out.push_back(to_nlohmann(x));
      return out;
    }
    nlohmann::json operator()(const Value::Map& m) const {
      nlohmann::json out = nlohmann::json::object();
      for (const auto& [k, x] : m) out[k] = to_nlohmann(x);
      return out;
    }
  };
  return v.visit(Visitor{});
}

}  // namespace

Value::Value(const Value&) = default;
Value::Value(Value&&) noexcept = default;
Value& Value::operator=(const Value&) = default;
Value& Value::operator=(Value&&) noexcept = default;
Value::~Value() = default;

bool operator==(const Value& a, const Value& b) {
  if (a.v_.index() != b.v_.index()) return false;
  return std::visit(
      [&b](const auto& x) {
        const auto& y = std::get<std::decay_t<decltype(x)>>(b.v_);
        if constexpr (requires { *x; })
          return x == y || *x == *y;
        else
          return x == y;
      },
      a.v_);
}

const Value& Value::operator[](std::string_view key) const {
  static const Value kNull;
  if (!is_map()) return kNull;
  auto it = as_map().find(key);
  return it == as_map().end() ? kNull : it->second;
}

const Value& Value::get(std::string_view key, std::size_t hint) const {
  static const Value kNull;
  if (!is_map()) return kNull;
  auto it = as_map().find(key, hint);
  return it == as_map().end() ? kNull : it->second;
}

std::string to_json(const Value& v) {
  // Logs must not throw on a string that is not UTF-8: replace the bad bytes.
  return to_nlohmann(v).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace piranha::trellis
