// Small readers of trellis Values shared by the NPS node types (internal).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "piranha/nps/pool.h"
#include "piranha/trellis/node.h"

namespace piranha::nps {

using trellis::Value;

// A map Value built one field at a time: Fields()("tick", 3)("jobs", list).
// (GCC 12 misreads brace-initialized maps of Values at -O2 as reading out of
// bounds, a false -Warray-bounds; building them this way says the same.)
// Fields given in key order go in without a search, which the states built
// on every tick for every node use.
class Fields {
 public:
  // Room for the largest state (a monitor's fourteen fields): one allocation.
  Fields() { map_.reserve(14); }
  Fields&& operator()(std::string key, Value value) && {
    map_.insert_or_assign(map_.end(), std::move(key), std::move(value));
    return std::move(*this);
  }
  operator Value() && { return Value(std::move(map_)); }

 private:
  Value::Map map_;
};

// The integer `key` of a map value, or `fallback`.
inline std::int64_t int_of(const Value& v, std::string_view key, std::int64_t fallback = -1) {
  const Value& x = v[key];
  return x.is_int() ? x.as_int() : fallback;
}

inline double number_of(const Value& v, std::string_view key, double fallback = 0) {
  const Value& x = v[key];
  return x.is_number() ? x.as_number() : fallback;
}

// int_of and number_of looking first at position `hint` (Value::get): for
// fields of states that are all built alike, read at every tick.
inline std::int64_t int_at(const Value& v, std::string_view key, std::size_t hint,
                           std::int64_t fallback = -1) {
  const Value& x = v.get(key, hint);
  return x.is_int() ? x.as_int() : fallback;
}
inline double number_at(const Value& v, std::string_view key, std::size_t hint, double fallback = 0) {
  const Value& x = v.get(key, hint);
  return x.is_number() ? x.as_number() : fallback;
}

// A job id as a Value: the id, or null for none.
inline Value job_value(const std::optional<JobId>& job) {
  return job ? Value(*job) : Value();
}
inline std::optional<JobId> job_of(const Value& v) {
  return v.is_int() ? std::optional<JobId>(v.as_int()) : std::nullopt;
}

// A node's attributes (requirement.h) as a monitor's state shows them:
// {arch, cores, labels: [...], memory (bytes)}, and back; a value of
// another form offers nothing.
inline Value attributes_value(const sched::NodeAttributes& a) {
  Value::List labels;
  for (const auto& l : a.labels) labels.push_back(Value(l));
  return Fields()("arch", a.arch)("cores", a.cores)("labels", std::move(labels))("memory", a.memory);
}
inline sched::NodeAttributes attributes_of(const Value& v) {
  sched::NodeAttributes a;
  if (!v.is_map()) return a;
  a.cores = int_of(v, "cores", 0);
  a.memory = int_of(v, "memory", 0);
  if (v["arch"].is_string()) a.arch = v["arch"].as_string();
  if (v["labels"].is_list())
    for (const Value& l : v["labels"].as_list())
      if (l.is_string()) a.labels.push_back(l.as_string());
  return a;
}

// The newest enabler tick among the inferiors' states (-1: none yet).
inline std::int64_t newest_tick(const trellis::Context& ctx) {
  std::int64_t tick = -1;
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i)
    tick = std::max(tick, int_of(ctx.inferior(i), "tick"));
  return tick;
}

}  // namespace piranha::nps
