#include "piranha/trellis/program.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include "piranha/trellis/registry.h"

namespace piranha::trellis {
namespace {

int line_of(const YAML::Node& n) {
  YAML::Mark m = n.Mark();
  return m.is_null() ? 0 : m.line + 1;
}

// Reads YAML text for one program; every error names its line.
class Reader {
 public:
  explicit Reader(std::string source) : source_(std::move(source)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& message) const {
    throw InputError(source_, line_of(at), message);
  }

  std::string text(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, what + " must be a string");
    return n.Scalar();
  }

  std::int64_t integer(const YAML::Node& n, const std::string& what) const {
    Value v = value(n);
    if (!v.is_int() || v.as_int() <= 0) fail(n, what + " must be a positive integer, not " + n.Scalar());
    return v.as_int();
  }

  // A YAML value as a Value: plain scalars that read as null, booleans,
  // integers or doubles become those; quoted scalars stay strings.
  Value value(const YAML::Node& n) const {
    switch (n.Type()) {
      case YAML::NodeType::Null:
      case YAML::NodeType::Undefined: return Value{};
      case YAML::NodeType::Sequence: {
        Value::List l;
        for (const auto& x : n) l.push_back(value(x));
        return l;
      }
      case YAML::NodeType::Map: {
        Value::Map m;
        for (const auto& kv : n) m[text(kv.first, "a map key")] = value(kv.second);
        return m;
      }
      case YAML::NodeType::Scalar: break;
    }
    const std::string& s = n.Scalar();
    if (n.Tag() == "!") return s;  // quoted
    if (s == "~" || s == "null" || s == "Null" || s == "NULL") return Value{};
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
    try {
      std::size_t used = 0;
      long long i = std::stoll(s, &used, 10);
      if (used == s.size()) return Value(i);
    } catch (const std::exception&) {
    }
    try {
      std::size_t used = 0;
      double d = std::stod(s, &used);
      if (used == s.size()) return d;
    } catch (const std::exception&) {
    }
    return s;
  }

  void only_keys(const YAML::Node& map, std::initializer_list<const char*> allowed,
                 const std::string& where) {
    for (const auto& kv : map) {
      std::string k = text(kv.first, "a key");
      bool ok = false;
      for (const char* a : allowed) ok = ok || k == a;
      if (!ok) {
        std::string list;
        for (const char* a : allowed) list += std::string(list.empty() ? "" : ", ") + a;
        fail(kv.first, "unknown key \"" + k + "\" in " + where + " (expected one of: " + list + ")");
      }
    }
  }

  Program read(std::string_view yaml) {
    YAML::Node root;
    try {
      root = YAML::Load(std::string(yaml));
    } catch (const YAML::ParserException& e) {
      throw InputError(source_, e.mark.is_null() ? 0 : e.mark.line + 1, "malformed YAML: " + e.msg);
    }
    if (!root.IsMap()) fail(root, "a trellis program is a map with at least \"nodes\"");
    only_keys(root, {"program", "deadline_ms", "heartbeat_ms", "link_timeout_ms", "hosts", "nodes"},
              "the program");
    Program p;
    p.source = source_;
    if (root["program"]) p.name = text(root["program"], "program");
    if (root["deadline_ms"]) {
      Value v = value(root["deadline_ms"]);
      if (!v.is_number() || v.as_number() <= 0)
        fail(root["deadline_ms"], "deadline_ms must be a positive number of milliseconds");
      p.deadline =
          std::chrono::duration_cast<Duration>(std::chrono::duration<double, std::milli>(v.as_number()));
    }
    if (root["heartbeat_ms"])
      p.heartbeat = std::chrono::milliseconds(integer(root["heartbeat_ms"], "heartbeat_ms"));
    if (root["link_timeout_ms"])
      p.link_timeout = std::chrono::milliseconds(integer(root["link_timeout_ms"], "link_timeout_ms"));
    if (const YAML::Node hosts = root["hosts"]) {
      if (!hosts.IsMap()) fail(hosts, "hosts must map host names to endpoints (alpha: tcp://127.0.0.1:7301)");
      for (const auto& kv : hosts)
        p.hosts.push_back(
            HostSpec{text(kv.first, "a host name"), text(kv.second, "a host endpoint"), line_of(kv.first)});
    }
    const YAML::Node nodes = root["nodes"];
    if (!nodes) fail(root, "the program has no \"nodes\"");
    if (!nodes.IsSequence()) fail(nodes, "nodes must be a list");
    for (const auto& n : nodes) p.nodes.push_back(node(n));
    return p;
  }

  NodeSpec node(const YAML::Node& n) {
    if (!n.IsMap()) fail(n, "a node must be a map with name and type");
    only_keys(n, {"name", "type", "host", "inferiors", "params", "probe_every_ms"}, "a node");
    NodeSpec s;
    s.line = line_of(n);
    if (!n["name"]) fail(n, "a node has no name");
    s.name = text(n["name"], "name");
    if (!n["type"]) fail(n, "node \"" + s.name + "\" has no type");
    s.type = text(n["type"], "type");
    if (n["host"]) s.host = text(n["host"], "host");
    if (const YAML::Node inf = n["inferiors"]) {
      if (inf.IsScalar()) {
        s.inferiors.push_back(inf.Scalar());
        s.inferior_lines.push_back(line_of(inf));
      } else if (inf.IsSequence()) {
        for (const auto& x : inf) {
          s.inferiors.push_back(text(x, "an inferior"));
          s.inferior_lines.push_back(line_of(x));
        }
      } else if (!inf.IsNull()) {
        fail(inf, "inferiors must be a list of node names");
      }
    }
    if (const YAML::Node params = n["params"]) {
      if (!params.IsMap() && !params.IsNull()) fail(params, "params must be a map");
      if (params.IsMap()) {
        for (const auto& kv : params) {
          std::string k = text(kv.first, "a parameter name");
          s.params[k] = value(kv.second);
          s.param_lines[k] = line_of(kv.first);
        }
      }
    }
    if (n["probe_every_ms"])
      s.probe_every = std::chrono::milliseconds(integer(n["probe_every_ms"], "probe_every_ms"));
    return s;
  }

 private:
  std::string source_;
};

// Finds a cycle in the inferior graph and names it, or returns an empty list.
std::vector<int> find_cycle(const Program& p, const std::vector<std::vector<int>>& inferiors) {
  enum Colour { kWhite, kGrey, kBlack };
  std::vector<Colour> colour(p.nodes.size(), kWhite);
  std::vector<int> path;
  std::vector<int> cycle;
  std::function<bool(int)> visit = [&](int i) {
    colour[static_cast<std::size_t>(i)] = kGrey;
    path.push_back(i);
    for (int j : inferiors[static_cast<std::size_t>(i)]) {
      if (colour[static_cast<std::size_t>(j)] == kGrey) {
        auto from = std::find(path.begin(), path.end(), j);
        cycle.assign(from, path.end());
        cycle.push_back(j);
        return true;
      }
      if (colour[static_cast<std::size_t>(j)] == kWhite && visit(j)) return true;
    }
    path.pop_back();
    colour[static_cast<std::size_t>(i)] = kBlack;
    return false;
  };
  for (std::size_t i = 0; i < p.nodes.size(); ++i)
    if (colour[i] == kWhite && visit(static_cast<int>(i))) return cycle;
  return {};
}

}  // namespace

int Program::node_index(std::string_view name) const {
  for (std::size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == name) return static_cast<int>(i);
  return -1;
}

int Program::host_index(std::string_view name) const {
  for (std::size_t i = 0; i < hosts.size(); ++i)
    if (hosts[i].name == name) return static_cast<int>(i);
  return -1;
}

void validate(const Program& p, const Registry& types) {
  auto fail = [&](int line, const std::string& message) { throw InputError(p.source, line, message); };
  std::set<std::string, std::less<>> host_names;
  for (const auto& h : p.hosts) {
    if (h.name.empty()) fail(h.line, "a host has an empty name");
    if (!host_names.insert(h.name).second) fail(h.line, "duplicate host \"" + h.name + "\"");
    if (h.endpoint.find("://") == std::string::npos)
      fail(h.line,
           "host \"" + h.name + "\" needs an endpoint like tcp://127.0.0.1:7301, not \"" + h.endpoint + "\"");
  }
  if (p.nodes.empty()) fail(0, "the program has no nodes");
  std::map<std::string, int, std::less<>> index;
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const NodeSpec& n = p.nodes[i];
    if (n.name.empty()) fail(n.line, "a node has an empty name");
    if (!index.emplace(n.name, static_cast<int>(i)).second)
      fail(n.line, "duplicate node name \"" + n.name + "\" (first defined on line " +
                       std::to_string(p.nodes[static_cast<std::size_t>(index[n.name])].line) + ")");
  }
  std::vector<std::vector<int>> inferiors(p.nodes.size());
  for (std::size_t i = 0; i < p.nodes.size(); ++i) {
    const NodeSpec& n = p.nodes[i];
    if (!types.has(n.type)) {
      std::string known;
      for (const auto& [t, d] : types.types()) known += (known.empty() ? "" : ", ") + t;
      fail(n.line,
           "node \"" + n.name + "\" has unknown type \"" + n.type + "\" (known types: " + known + ")");
    }
    if (p.hosts.empty() && !n.host.empty())
      fail(n.line,
           "node \"" + n.name + "\" is placed on host \"" + n.host + "\" but the program has no hosts");
    if (!p.hosts.empty()) {
      if (n.host.empty()) fail(n.line, "node \"" + n.name + "\" has no host (the program has hosts)");
      if (!host_names.count(n.host))
        fail(n.line, "node \"" + n.name + "\" is placed on unknown host \"" + n.host + "\"");
    }
    if (n.probe_every && n.probe_every->count() <= 0)
      fail(n.line, "node \"" + n.name + "\": probe_every_ms must be positive");
    for (std::size_t k = 0; k < n.inferiors.size(); ++k) {
      int line = k < n.inferior_lines.size() ? n.inferior_lines[k] : n.line;
      const std::string& inf = n.inferiors[k];
      auto it = index.find(inf);
      if (it == index.end()) fail(line, "node \"" + n.name + "\" names a missing inferior \"" + inf + "\"");
      if (std::find(inferiors[i].begin(), inferiors[i].end(), it->second) != inferiors[i].end())
        fail(line, "node \"" + n.name + "\" names inferior \"" + inf + "\" twice");
      inferiors[i].push_back(it->second);
    }
  }
  std::vector<int> cycle = find_cycle(p, inferiors);
  if (!cycle.empty()) {
    std::string names;
    for (int i : cycle) names += (names.empty() ? "" : " -> ") + p.nodes[static_cast<std::size_t>(i)].name;
    fail(p.nodes[static_cast<std::size_t>(cycle.front())].line, "cycle in the inferior graph: " + names);
  }
  for (const NodeSpec& n : p.nodes) {
    try {
      types.make(n.type, Params(n.params));
    } catch (const BadParameter& e) {
      auto it = n.param_lines.find(e.key());
      fail(it != n.param_lines.end() ? it->second : n.line, "node \"" + n.name + "\": " + e.what());
    }
  }
}

Program parse_program(std::string_view yaml, const Registry& types, std::string source) {
  Program p = Reader(source).read(yaml);
  validate(p, types);
  return p;
}

Program load_program(const std::string& path, const Registry& types) {
  std::ifstream in(path);
  if (!in) throw InputError(path, 0, "cannot read the program file");
  std::stringstream s;
  s << in.rdbuf();
  return parse_program(s.str(), types, path);
}

}  // namespace piranha::trellis
