// Registry: node types by name.
//
//   trellis::Registry types;
//   types.add<LoadMonitor>("load", "1-minute load average of this host");
//   types.add("sum", [](const trellis::Params& p) { return std::make_unique<Sum>(p); });
//
// A program's `type:` names a registered type; the registry makes one Node
// per program node from that node's Params. A factory reports bad parameters
// by throwing BadParameter (Params' accessors do). Not thread-safe while
// types are being added; const use is safe from any thread.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/trellis/node.h"

namespace piranha::trellis {

class Registry {
 public:
  using Factory = std::function<std::unique_ptr<Node>(const Params&)>;

  // Registers `type`. Throws std::invalid_argument when it is already registered.
  void add(std::string type, Factory make, std::string description = "");
  // Registers a Node subclass constructible from `const Params&`.
  template <class T>
  void add(std::string type, std::string description = "") {
    add(
        std::move(type), [](const Params& p) { return std::make_unique<T>(p); }, std::move(description));
  }

  bool has(std::string_view type) const { return types_.find(type) != types_.end(); }
  // A new node of `type`. Throws std::out_of_range for an unknown type,
  // BadParameter for a bad or unused parameter.
  std::unique_ptr<Node> make(std::string_view type, const Params& params) const;
  // (name, description) of every type, sorted by name.
  std::vector<std::pair<std::string, std::string>> types() const;

 private:
  struct Entry {
    Factory make;
    std::string description;
  };
  std::map<std::string, Entry, std::less<>> types_;
};

}  // namespace piranha::trellis
