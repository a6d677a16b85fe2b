// Job requirements and node attributes: the paper's "specialized hardware"
// (docs/jobs.md, "Requirements"). A job submitted with
// `piranha submit --require 'memory>=8G,label=gpu'` runs only on nodes whose
// attributes satisfy every clause; each agent publishes its node's
// attributes (docs/system-space.md, ("nodeattr", ...)).
//
// The grammar: clauses separated by commas, spaces allowed around each token:
//   cores>=N        the node has at least N processor cores (N >= 1)
//   memory>=SIZE    at least SIZE bytes of memory; SIZE is digits with an
//                   optional suffix K, M or G (powers of 1024): 512M, 8G
//   arch=NAME       its CPU architecture is NAME (as `uname -m` says: x86_64)
//   label=NAME      its agent's configuration lists the label NAME
// Names are 1 to 64 letters, digits, '_', '-' or '.', compared exactly.
// An empty text is the empty requirement, which every node satisfies.
//
// Everything here is pure (no I/O, no clock) and thread-safe as functions of
// values. The strategies never see a Requirement: the callers turn
// requirements and attributes into an Eligibility (strategy.h) with
// make_eligibility().
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/scheduler/strategy.h"

namespace piranha::sched {

// What a node offers. A node whose agent published none has the default:
// it satisfies only the empty requirement.
struct NodeAttributes {
  std::int64_t cores = 0;
  std::int64_t memory = 0;          // bytes
  std::string arch;                 // "x86_64", "aarch64", ...
  std::vector<std::string> labels;  // as published: sorted, no duplicates (normalize_labels)
  friend bool operator==(const NodeAttributes&, const NodeAttributes&) = default;
  friend auto operator<=>(const NodeAttributes&, const NodeAttributes&) = default;
};

// One clause of a requirement.
struct Clause {
  enum class Kind { Cores, Memory, Arch, Label, Unreadable };
  Kind kind = Kind::Label;
  std::int64_t at_least = 0;  // Cores, Memory (bytes)
  std::string name;           // Arch, Label; Unreadable: why
  // The clause in canonical form, as messages name it: "memory>=8G".
  std::string text() const;
  friend bool operator==(const Clause&, const Clause&) = default;
};

struct Requirement {
  std::vector<Clause> clauses;
  bool empty() const { return clauses.empty(); }
  // The canonical text: the clauses' texts joined by ','; parse_requirement
  // of it gives the same requirement. Empty for the empty requirement.
  std::string text() const;
  friend bool operator==(const Requirement&, const Requirement&) = default;
};

// Parses `text` by the grammar above. Throws InputError with `source` (the
// option or field it came from) naming the clause, its column (1-based, in
// `text`) and the problem, e.g.
//   --require: clause 2 "memory>=8X" at column 10: size "8X" has an unknown suffix 'X' (expected K, M or G)
Requirement parse_requirement(std::string_view text, const std::string& source = "--require");

// For text that was checked when written (a job's stored requirement): its
// parse, or, when it does not parse (written by a newer Piranha, or by
// hand), a requirement that no node satisfies, whose one clause says why.
// Never throws.
Requirement read_requirement(std::string_view text);

// Sorts `labels` and removes duplicates. Throws InputError (source `source`)
// for a label that is not a valid name.
std::vector<std::string> normalize_labels(std::vector<std::string> labels, const std::string& source);

// Whether `name` is a valid label or architecture name (above).
bool valid_attribute_name(std::string_view name);

// A size for people and for clauses: the largest of G, M, K that divides it,
// "16G", "1536M", "100" (bytes).
std::string format_size(std::int64_t bytes);

// nullopt when `node` satisfies `r`; otherwise the first clause it does not
// satisfy, in words: "label=gpu: it has no label gpu", "memory>=8G: it has 4G".
std::optional<std::string> first_unmet(const Requirement& r, const NodeAttributes& node);
inline bool satisfies(const Requirement& r, const NodeAttributes& node) {
  return !first_unmet(r, node);
}

// Why a job requiring `r` cannot run on any of `nodes`, or nullopt when one
// of them satisfies it: "no node has label=gpu" for the first clause that no
// node satisfies on its own, else "no node has all of memory>=8G,label=gpu".
std::optional<std::string> why_no_node(const Requirement& r, std::span<const NodeAttributes> nodes);

// The Eligibility of a strategy invocation (strategy.h): node n may run the
// job at queue position j when nodes[n] satisfies *jobs[j] (a null pointer is
// the empty requirement). nullopt when no job has a requirement: every node
// may run every job, and the strategies then decide exactly as without.
// Nodes with equal attributes share a group.
std::optional<Eligibility> make_eligibility(std::span<const NodeAttributes> nodes,
                                            std::span<const Requirement* const> jobs);

}  // namespace piranha::sched
