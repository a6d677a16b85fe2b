#include "piranha/scheduler/requirement.h"

#include <algorithm>
#include <map>

#include "piranha/base/input_error.h"

namespace piranha::sched {
namespace {

constexpr std::size_t kMaxName = 64;
// No node has more; a larger number is a typo, and would overflow in bytes.
constexpr std::int64_t kMaxCores = 1 << 20;
constexpr std::int64_t kMaxMemory = std::int64_t{1} << 60;

bool name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
         c == '.';
}

// One clause being parsed: its text, where it starts in the whole text, and
// the error that names both.
struct ClauseText {
  const std::string& source;
  std::string_view text;  // trimmed
  std::size_t at = 0;     // offset of `text` in the whole requirement
  int number = 0;         // 1-based

  [[noreturn]] void fail(std::size_t offset, const std::string& problem) const {
    throw InputError(source, "column " + std::to_string(at + offset + 1) + ", in clause " +
                                 std::to_string(number) + " \"" + std::string(text) + "\": " + problem);
  }
};

std::string_view trim(std::string_view s, std::size_t& skipped) {
  skipped = 0;
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1), ++skipped;
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

std::int64_t parse_number(const ClauseText& c, std::string_view v, std::size_t offset, bool size,
                          std::int64_t most) {
  std::size_t digits = 0;
  while (digits < v.size() && v[digits] >= '0' && v[digits] <= '9') ++digits;
  const std::string what = size ? "size" : "count";
  if (digits == 0)
    c.fail(offset, what + " \"" + std::string(v) + "\" is not a number" + (size ? " (e.g. 512M, 8G)" : ""));
  std::int64_t unit = 1;
  if (digits < v.size()) {
    if (!size || digits + 1 != v.size())
      c.fail(offset + digits, what + " \"" + std::string(v) + "\" has trailing text \"" +
                                  std::string(v.substr(digits)) + "\"");
    switch (v[digits]) {
      case 'K': unit = std::int64_t{1} << 10; break;
      case 'M': unit = std::int64_t{1} << 20; break;
      case 'G': unit = std::int64_t{1} << 30; break;
      default:
        c.fail(offset + digits, "size \"" + std::string(v) + "\" has an unknown suffix '" +
                                    std::string(1, v[digits]) + "' (expected K, M or G)");
    }
  }
  std::int64_t n = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    n = n * 10 + (v[i] - '0');
    if (n > most) c.fail(offset, what + " \"" + std::string(v) + "\" is too large");
  }
  if (n == 0) c.fail(offset, what + " must be at least 1, got \"" + std::string(v) + "\"");
  if (n > most / unit) c.fail(offset, what + " \"" + std::string(v) + "\" is too large");
  return n * unit;
}

Clause parse_clause(const ClauseText& c) {
  const std::string_view t = c.text;
  std::size_t key_end = 0;
  while (key_end < t.size() && name_char(t[key_end])) ++key_end;
  const std::string_view key = t.substr(0, key_end);
  std::size_t op_at = key_end;
  while (op_at < t.size() && t[op_at] == ' ') ++op_at;
  std::size_t op_end = op_at;
  while (op_end < t.size() && (t[op_end] == '>' || t[op_end] == '=' || t[op_end] == '<' || t[op_end] == '!'))
    ++op_end;
  const std::string_view op = t.substr(op_at, op_end - op_at);
  std::size_t value_at = op_end;
  while (value_at < t.size() && t[value_at] == ' ') ++value_at;
  const std::string_view value = t.substr(value_at);

  Clause out;
  const bool counted = key == "cores" || key == "memory";
  const bool named = key == "arch" || key == "label";
  if (!counted && !named)
    c.fail(0, key.empty()
                  ? "expected one of cores>=N, memory>=SIZE, arch=NAME, label=NAME"
                  : "unknown attribute \"" + std::string(key) + "\" (expected cores, memory, arch or label)");
  const std::string_view want = counted ? ">=" : "=";
  if (op != want)
    c.fail(op_at, std::string(key) + " takes \"" + std::string(want) + "\", got " +
                      (op.empty() ? std::string("nothing") : "\"" + std::string(op) + "\""));
  if (value.empty())
    c.fail(value_at, std::string(key) + " needs a value after \"" + std::string(want) + "\"");
  if (key == "cores") {
    out.kind = Clause::Kind::Cores;
    out.at_least = parse_number(c, value, value_at, false, kMaxCores);
  } else if (key == "memory") {
    out.kind = Clause::Kind::Memory;
    out.at_least = parse_number(c, value, value_at, true, kMaxMemory);
  } else {
    out.kind = key == "arch" ? Clause::Kind::Arch : Clause::Kind::Label;
    if (!valid_attribute_name(value))
      c.fail(value_at, std::string(key) + " \"" + std::string(value) +
                           "\" is not a name (1 to 64 letters, digits, '_', '-' or '.')");
    out.name = std::string(value);
  }
  return out;
}

// Orders nodes by their attributes, so equal ones share a group.
struct ByAttributes {
  bool operator()(const NodeAttributes* a, const NodeAttributes* b) const { return *a < *b; }
};

}  // namespace

std::string Clause::text() const {
  switch (kind) {
    case Kind::Cores: return "cores>=" + std::to_string(at_least);
    case Kind::Memory: return "memory>=" + format_size(at_least);
    case Kind::Arch: return "arch=" + name;
    case Kind::Label: return "label=" + name;
    case Kind::Unreadable: return "(unreadable: " + name + ")";
  }
  return {};
}

std::string Requirement::text() const {
  std::string out;
  for (const Clause& c : clauses) out += (out.empty() ? "" : ",") + c.text();
  return out;
}

Requirement parse_requirement(std::string_view text, const std::string& source) {
  Requirement r;
  std::size_t skipped = 0;
  if (trim(text, skipped).empty()) return r;
  std::size_t start = 0;
  for (int number = 1;; ++number) {
    const std::size_t comma = text.find(',', start);
    const std::string_view raw = text.substr(start, comma == std::string_view::npos ? comma : comma - start);
    const std::string_view clause = trim(raw, skipped);
    ClauseText c{source, clause, start + skipped, number};
    if (clause.empty()) c.fail(0, "empty clause (two commas, or a comma at an end)");
    r.clauses.push_back(parse_clause(c));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return r;
}

Requirement read_requirement(std::string_view text) {
  try {
    return parse_requirement(text, "requirement");
  } catch (const InputError& e) {
    return Requirement{
        {Clause{Clause::Kind::Unreadable, 0, "\"" + std::string(text) + "\": " + e.message()}}};
  }
}

bool valid_attribute_name(std::string_view name) {
  return !name.empty() && name.size() <= kMaxName && std::all_of(name.begin(), name.end(), name_char);
}

std::vector<std::string> normalize_labels(std::vector<std::string> labels, const std::string& source) {
  for (const auto& l : labels)
    if (!valid_attribute_name(l))
      throw InputError(source,
                       "label \"" + l + "\" is not a name (1 to 64 letters, digits, '_', '-' or '.')");
  std::sort(labels.begin(), labels.end());
  labels.erase(std::unique(labels.begin(), labels.end()), labels.end());
  return labels;
}

std::string format_size(std::int64_t bytes) {
  for (auto [shift, suffix] : {std::pair{30, 'G'}, std::pair{20, 'M'}, std::pair{10, 'K'}}) {
    const std::int64_t unit = std::int64_t{1} << shift;
    if (bytes > 0 && bytes % unit == 0) return std::to_string(bytes / unit) + suffix;
  }
  return std::to_string(bytes);
}

std::optional<std::string> first_unmet(const Requirement& r, const NodeAttributes& node) {
  for (const Clause& c : r.clauses) {
    switch (c.kind) {
      case Clause::Kind::Cores:
        if (node.cores < c.at_least) return c.text() + ": it has " + std::to_string(node.cores) + " cores";
        break;
      case Clause::Kind::Memory:
        if (node.memory < c.at_least) return c.text() + ": it has " + format_size(node.memory);
        break;
      case Clause::Kind::Arch:
        if (node.arch != c.name)
          return c.text() + ": it is " +
                 (node.arch.empty() ? std::string("of an unknown architecture") : node.arch);
        break;
      case Clause::Kind::Label:
        if (std::find(node.labels.begin(), node.labels.end(), c.name) == node.labels.end())
          return c.text() + ": it has no label " + c.name;
        break;
      case Clause::Kind::Unreadable: return "the requirement is unreadable: " + c.name;
    }
  }
  return std::nullopt;
}

std::optional<std::string> why_no_node(const Requirement& r, std::span<const NodeAttributes> nodes) {
  if (std::any_of(nodes.begin(), nodes.end(), [&](const NodeAttributes& n) { return satisfies(r, n); }))
    return std::nullopt;
  for (const Clause& c : r.clauses) {
    const Requirement one{{c}};
    if (std::none_of(nodes.begin(), nodes.end(), [&](const NodeAttributes& n) { return satisfies(one, n); }))
      return c.kind == Clause::Kind::Unreadable ? *first_unmet(one, NodeAttributes{})
                                                : "no node has " + c.text();
  }
  return "no node has all of " + r.text();
}

std::optional<Eligibility> make_eligibility(std::span<const NodeAttributes> nodes,
                                            std::span<const Requirement* const> jobs) {
  if (std::all_of(jobs.begin(), jobs.end(), [](const Requirement* r) { return !r || r->empty(); }))
    return std::nullopt;
  std::map<const NodeAttributes*, std::uint32_t, ByAttributes> groups;
  std::vector<std::uint32_t> node_group(nodes.size());
  std::vector<std::uint8_t> allowed;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    auto [it, fresh] = groups.try_emplace(&nodes[n], static_cast<std::uint32_t>(groups.size()));
    node_group[n] = it->second;
    if (!fresh) continue;
    for (const Requirement* r : jobs) allowed.push_back(!r || satisfies(*r, nodes[n]) ? 1 : 0);
  }
  return Eligibility(std::move(node_group), groups.size(), jobs.size(), std::move(allowed));
}

}  // namespace piranha::sched
