#include "piranha/access/auth_config.h"

#include <filesystem>
#include <map>

#include "piranha/base/yaml_reader.h"
#include "piranha/tuplespace/curve.h"

namespace piranha {
namespace {

using yaml::Reader;

std::string read_key(const Reader& r, const YAML::Node& entry, const std::string& file,
                     const std::string& what) {
  std::string where = r.text(entry, "key", what);
  if (!ts::is_z85_key(where) && std::filesystem::path(where).is_relative())
    where = (std::filesystem::path(file).parent_path() / where).lexically_normal().string();
  try {
    return ts::load_public_key(where, what);
  } catch (const InputError& e) {
    r.fail(Reader::mark_of(entry, "key"), e.what());
  }
}

std::vector<std::string> read_spaces(const Reader& r, const YAML::Node& entry, const std::string& what) {
  const YAML::Node list = entry["spaces"];
  if (!list.IsSequence())
    r.fail(Reader::mark_of(entry, "spaces"),
           what + " must be a list of space names or prefixes ending in '*'");
  std::vector<std::string> out;
  for (const auto& s : list) {
    if (!s.IsScalar() || s.Scalar().empty())
      r.fail(s, what + " entries must be non-empty strings, got " + r.describe(s));
    std::string p = s.Scalar();
    if (p.find('*') != std::string::npos && (p.find('*') != p.size() - 1 || p.size() == 1))
      r.fail(s, what + ": '" + p + "' may end in '*' (a prefix) but have no other '*', nor be '*' alone");
    out.push_back(p);
  }
  return out;
}

}  // namespace

AuthConfig parse_auth_config(const std::string& text, const std::string& name) {
  Reader r(name);
  const YAML::Node root = yaml::parse_yaml(r, text);
  AuthConfig c;
  try {
    if (root.IsNull()) r.fail(YAML::Mark::null_mark(), "empty: expected 'clients:', a list of admitted keys");
    r.check_keys(root, "the auth file", {"clients"});
    const YAML::Node list = root["clients"];
    if (!list || !list.IsSequence())
      r.fail(Reader::mark_of(root, "clients"), "clients must be a list of {name, key, role} entries");
    std::map<std::string, int> names, keys;  // -> 1-based line
    std::size_t i = 0;
    for (const auto& entry : list) {
      const std::string what = "clients[" + std::to_string(i++) + "]";
      r.check_keys(entry, what, {"name", "key", "role", "node", "spaces"});
      for (const char* required : {"name", "key", "role"})
        if (!entry[required]) r.fail(entry, what + "." + required + " is missing");
      AuthClient a;
      a.principal.name = r.text(entry, "name", what + ".name");
      auto role = rights::role_from(r.text(entry, "role", what + ".role"));
      if (!role)
        r.fail(Reader::mark_of(entry, "role"),
               what + ".role must be one of: admin, scheduler, agent, job, owner, campus, got '" +
                   entry["role"].Scalar() + "'");
      a.principal.role = *role;
      bool has_node = *role == rights::Role::Agent || *role == rights::Role::Owner;
      if (entry["node"] && !has_node)
        r.fail(Reader::mark_of(entry, "node"),
               what + ".node is for agents and owners only, not a " + std::string(rights::name(*role)));
      a.principal.node = entry["node"] ? r.text(entry, "node", what + ".node")
                         : has_node    ? a.principal.name
                                       : "";
      if (entry["spaces"]) a.principal.spaces = read_spaces(r, entry, what + ".spaces");
      a.public_key = read_key(r, entry, name, what + ".key");
      int line = entry.Mark().line + 1;
      if (auto [it, fresh] = names.emplace(a.principal.name, line); !fresh)
        r.fail(Reader::mark_of(entry, "name"), what + ": the name '" + a.principal.name +
                                                   "' is taken already (line " + std::to_string(it->second) +
                                                   ")");
      if (auto [it, fresh] = keys.emplace(a.public_key, line); !fresh)
        r.fail(Reader::mark_of(entry, "key"),
               what + ": the same key is listed already (line " + std::to_string(it->second) + ")");
      c.clients.push_back(std::move(a));
    }
  } catch (const YAML::Exception& e) {
    r.fail(e.mark, e.msg);
  }
  return c;
}

AuthConfig load_auth_config(const std::string& path) {
  return parse_auth_config(yaml::read_file(path, "the auth file"), path);
}

}  // namespace piranha
