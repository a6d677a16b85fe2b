// Node: a decision process of the trellis, and the Context it sees.
//
// A node type is a C++ class derived from Node, registered by name in a
// Registry (registry.h) and instantiated once per node of that type in a
// program (program.h). The trellis calls calculate() -- the node's state
// calculation function -- only when the node is activated:
//   (a) Cause::Inferior  one of its inferiors changed state;
//   (b) Cause::Query     a superior queried it (asks for a fresh state);
//   (c) Cause::Probe     an external entity probed it (a timer, a test, a tool);
//   (d) Cause::Command   a superior sent it a command, with data;
//   and Cause::Link      the link to a neighbour on another host went down or
//                        came back (the remote neighbour's state as far as
//                        this host can know it).
// Activations that arrive together are delivered in one call, so a node may
// see several causes at once. The value calculate() returns becomes the
// node's state. When it equals the previous state, nothing else happens:
// superiors are not woken. When it differs, every superior is activated with
// Cause::Inferior and sees the new state.
//
// Data flows up through states and down through commands: a node reads its
// inferiors' latest states and the commands it was sent, and may query or
// command its inferiors. Queries and commands are sent when calculate()
// returns, after the node's own state change (if any) has been sent up.
//
// calculate() runs on the node's fiber, on the host's trellis thread: it must
// not block the thread (no sleeping, no blocking I/O); blocking stalls every
// node of the host. An exception it throws is caught, counted in the node's
// statistics and leaves the state unchanged; prefer returning an error state,
// since exceptions thrown on fiber stacks confuse AddressSanitizer.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/base/clock.h"
#include "piranha/trellis/value.h"

namespace piranha::trellis {

using TimePoint = Clock::time_point;
using Duration = std::chrono::nanoseconds;

// Why a node was activated. The numeric codes cross links (wire.h); never
// renumber them.
enum class Cause : std::uint8_t { Inferior = 1, Query = 2, Probe = 4, Command = 8, Link = 16 };

// "inferior", "query", "probe", "command", "link".
std::string_view cause_name(Cause c);

// The state of the link to a neighbour. Neighbours on the same host are
// always Up; a neighbour on another host is Down until its host is first
// heard from, and again whenever it stays silent longer than the program's
// link timeout.
enum class LinkState : std::uint8_t { Up = 1, Down = 0 };

// A command received from a superior (or, with an empty `from`, from an
// external entity).
struct Command {
  std::string from;
  Value data;
};

namespace detail {
class Core;
struct Cell;
}  // namespace detail

// What a node sees while it recalculates. Valid only during calculate().
class Context {
 public:
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const std::string& name() const;
  // The node's state before this recalculation (null at first).
  const Value& state() const;
  // Whether `c` is among the causes of this activation.
  bool activated_by(Cause c) const { return (causes_ & static_cast<unsigned>(c)) != 0; }
  // All causes, as a bit set of Cause values.
  unsigned causes() const { return causes_; }
  // The commands received since the last recalculation, oldest first.
  const std::vector<Command>& commands() const { return commands_; }
  // The trellis clock (steady_clock, or the manual clock in deterministic mode).
  TimePoint now() const;

  // Inferiors, in the order the program names them. `i` out of range, or a
  // name that is not an inferior, throws std::out_of_range.
  std::size_t inferior_count() const;
  const std::string& inferior_name(std::size_t i) const;
  // The inferior's latest state known here (null until it first changes).
  // When its link is Down this is the last state seen before the link failed.
  const Value& inferior(std::size_t i) const;
  const Value& inferior(std::string_view name) const;
  LinkState inferior_link(std::size_t i) const;

  // Superiors, in program order.
  std::size_t superior_count() const;
  const std::string& superior_name(std::size_t i) const;
  LinkState superior_link(std::size_t i) const;

  // Asks inferior `i` to recalculate. The answer comes back as an ordinary
  // state change (Cause::Inferior) -- or not at all when its state stays
  // the same.
  void query(std::size_t i);
  // Sends `data` down to inferior `i` (activating it with Cause::Command).
  void command(std::size_t i, Value data);
  void command(std::string_view inferior, Value data);
  void command_all(const Value& data);

 private:
  friend class detail::Core;
  Context(detail::Core& core, detail::Cell& cell) : core_(core), cell_(cell) {}
  std::size_t index_of(std::string_view inferior) const;

  detail::Core& core_;
  detail::Cell& cell_;
  unsigned causes_ = 0;
  std::vector<Command> commands_;
  // Queries and commands to send once calculate() returns: (inferior, command data or null for a query).
  struct Order {
    std::size_t inferior;
    bool is_command;
    Value data;
  };
  std::vector<Order> orders_;
};

// A node type's behaviour. One instance per node; not shared between nodes.
class Node {
 public:
  virtual ~Node() = default;
  // The state calculation function; see the top of this file.
  virtual Value calculate(Context& ctx) = 0;
};

// Thrown by a node type's constructor (through Params) for a parameter that
// is missing, of the wrong type or out of range. The program loader turns it
// into an InputError naming the parameter's line.
class BadParameter : public std::runtime_error {
 public:
  BadParameter(std::string key, const std::string& message)
      : std::runtime_error(message), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

// A node's parameters (the `params:` map of the program), read by type.
// Each accessor throws BadParameter when the key is missing and no fallback
// is given, or when the value has the wrong type. Keys never read are
// reported by unused(), so a misspelt parameter is an error, not a default.
class Params {
 public:
  Params() = default;
  explicit Params(Value::Map values) : values_(std::move(values)) {}

  std::int64_t integer(std::string_view key, std::optional<std::int64_t> fallback = {}) const;
  // An int or a double.
  double number(std::string_view key, std::optional<double> fallback = {}) const;
  std::string string(std::string_view key, std::optional<std::string> fallback = {}) const;
  bool boolean(std::string_view key, std::optional<bool> fallback = {}) const;
  // Any value; null when missing.
  const Value& value(std::string_view key) const;

  // Keys present but never read, in order.
  std::vector<std::string> unused() const;
  const Value::Map& values() const { return values_; }

 private:
  const Value* find(std::string_view key) const;
  Value::Map values_;
  mutable std::set<std::string, std::less<>> used_;
};

}  // namespace piranha::trellis
