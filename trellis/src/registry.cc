#include "piranha/trellis/registry.h"

#include <stdexcept>

namespace piranha::trellis {

void Registry::add(std::string type, Factory make, std::string description) {
  if (has(type)) throw std::invalid_argument("node type \"" + type + "\" is already registered");
  types_.emplace(std::move(type), Entry{std::move(make), std::move(description)});
}

std::unique_ptr<Node> Registry::make(std::string_view type, const Params& params) const {
  auto it = types_.find(type);
  if (it == types_.end()) throw std::out_of_range("unknown node type \"" + std::string(type) + "\"");
  std::unique_ptr<Node> node = it->second.make(params);
  auto unused = params.unused();
  if (!unused.empty())
    throw BadParameter(unused.front(),
                       "unknown parameter \"" + unused.front() + "\" for type \"" + std::string(type) + "\"");
  return node;
}

std::vector<std::pair<std::string, std::string>> Registry::types() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, e] : types_) out.emplace_back(name, e.description);
  return out;
}

// Params ------------------------------------------------------------------

const Value* Params::find(std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end()) return nullptr;
  used_.insert(std::string(key));
  return &it->second;
}

namespace {

BadParameter missing(std::string_view key) {
  return BadParameter(std::string(key), "missing parameter \"" + std::string(key) + "\"");
}

BadParameter wrong(std::string_view key, const Value& v, const char* wanted) {
  return BadParameter(std::string(key),
                      "parameter \"" + std::string(key) + "\" must be " + wanted + ", not " + to_json(v));
}

}  // namespace

std::int64_t Params::integer(std::string_view key, std::optional<std::int64_t> fallback) const {
  const Value* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    throw missing(key);
  }
  if (!v->is_int()) throw wrong(key, *v, "an integer");
  return v->as_int();
}

double Params::number(std::string_view key, std::optional<double> fallback) const {
  const Value* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    throw missing(key);
  }
  if (!v->is_number()) throw wrong(key, *v, "a number");
  return v->as_number();
}

std::string Params::string(std::string_view key, std::optional<std::string> fallback) const {
  const Value* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    throw missing(key);
  }
  if (!v->is_string()) throw wrong(key, *v, "a string");
  return v->as_string();
}

bool Params::boolean(std::string_view key, std::optional<bool> fallback) const {
  const Value* v = find(key);
  if (!v) {
    if (fallback) return *fallback;
    throw missing(key);
  }
  if (!v->is_bool()) throw wrong(key, *v, "true or false");
  return v->as_bool();
}

const Value& Params::value(std::string_view key) const {
  static const Value kNull;
  const Value* v = find(key);
  return v ? *v : kNull;
}

std::vector<std::string> Params::unused() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : values_)
    if (!used_.count(k)) out.push_back(k);
  return out;
}

}  // namespace piranha::trellis
