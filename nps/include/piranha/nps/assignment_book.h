// AssignmentBook: what the NPS knows of its schedulers' ("assign", id,
// epoch, node, job) tuples in the system space, and the requests that
// supersede a batch of them (docs/system-space.md, "assign").
//
// A decision that moves many nodes is written as one out_many of the new
// assignments and as few takes of the old ones as can be proved exact: the
// old assignments of one decision share its epoch, so when every tuple the
// book knows with a given (scheduler, epoch, job) is superseded, one take of
// ("assign", id, epoch, ?node, job) for that many removes them all; the
// others are taken one by one by their exact value. Written one request per
// node, a decision that moved 3,000 nodes queued 6,000 requests behind the
// agents' own in the server's fair queue, and took seconds to land.
//
// The book is exact only while nobody else writes a scheduler's
// assignments (one NPS per scheduler id: live.cc waits for silence) and
// while every request it planned was carried out; after a lost session or
// an error, forget() it and know() the space again. Pure: no I/O; the
// LivePool does the reading and writing. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "piranha/runtime/sysspace.h"

namespace piranha::nps {

class AssignmentBook {
 public:
  // Whether scheduler `id`'s assignments have been read (know()).
  bool knows(std::int64_t id) const { return known_.contains(id); }
  // Scheduler `id`'s assignments as just read from the space (every tuple
  // matching sys::assign_template(id)), in place of what the book knew of them.
  void know(std::int64_t id, const std::vector<ts::Tuple>& present);
  void forget();

  struct Writes {
    std::vector<ts::Tuple> out;                              // to write, in one out_many
    std::vector<std::pair<ts::Template, std::size_t>> take;  // then to take: template, how many
  };
  // The requests that make `next` each node's only assignment of its
  // scheduler, whose assignments must be known; the book then holds them.
  // An assignment equal to the one known is not written again.
  Writes supersede(const std::vector<sys::Assignment>& next);

  // How many tuples the book holds for (id, node); for tests.
  std::size_t count(std::int64_t id, const std::string& node) const;

 private:
  using Group = std::tuple<std::int64_t, std::int64_t, std::int64_t>;  // scheduler, epoch, job
  static Group group_of(const sys::Assignment& a) { return {a.scheduler_id, a.epoch, a.job_id}; }
  void add(const sys::Assignment& a);

  std::set<std::int64_t> known_;
  std::map<std::pair<std::int64_t, std::string>, std::vector<sys::Assignment>> nodes_;
  std::map<Group, std::size_t> groups_;  // how many known tuples each group has
};

}  // namespace piranha::nps
