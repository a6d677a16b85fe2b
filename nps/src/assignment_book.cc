#include "piranha/nps/assignment_book.h"

#include <algorithm>

namespace piranha::nps {
namespace {

bool same(const sys::Assignment& a, const sys::Assignment& b) {
  return a.scheduler_id == b.scheduler_id && a.epoch == b.epoch && a.node == b.node && a.job_id == b.job_id;
}

}  // namespace

void AssignmentBook::add(const sys::Assignment& a) {
  nodes_[{a.scheduler_id, a.node}].push_back(a);
  ++groups_[group_of(a)];
}

void AssignmentBook::know(std::int64_t id, const std::vector<ts::Tuple>& present) {
  std::erase_if(nodes_, [&](const auto& n) { return n.first.first == id; });
  std::erase_if(groups_, [&](const auto& g) { return std::get<0>(g.first) == id; });
  for (const auto& t : present)
    if (auto a = sys::Assignment::from_tuple(t); a && a->scheduler_id == id) add(*a);
  known_.insert(id);
}

void AssignmentBook::forget() {
  known_.clear();
  nodes_.clear();
  groups_.clear();
}

AssignmentBook::Writes AssignmentBook::supersede(const std::vector<sys::Assignment>& next) {
  Writes w;
  std::map<Group, std::vector<sys::Assignment>> old;
  for (const auto& a : next) {
    auto& held = nodes_[{a.scheduler_id, a.node}];
    if (held.size() == 1 && same(held[0], a)) continue;
    for (const auto& o : held)
      if (!same(o, a)) old[group_of(o)].push_back(o);
    const bool kept = std::any_of(held.begin(), held.end(), [&](const auto& o) { return same(o, a); });
    held.assign(1, a);
    if (!kept) {
      w.out.push_back(a.to_tuple());
      ++groups_[group_of(a)];
    }
  }
  for (auto& [g, gone] : old) {
    auto count = groups_.find(g);
    const auto& [id, epoch, job] = g;
    if (count->second == gone.size()) {
      // Every tuple of the group goes: one take of them all.
      w.take.emplace_back(ts::Template({ts::Field::of(ts::Value(std::string("assign"))),
                                        ts::Field::of(ts::Value(id)), ts::Field::of(ts::Value(epoch)),
                                        ts::Field::formal(ts::Type::String), ts::Field::of(ts::Value(job))}),
                          gone.size());
    } else {
      for (const auto& o : gone) w.take.emplace_back(ts::Template::exactly(o.to_tuple()), 1);
    }
    count->second -= gone.size();
    if (count->second == 0) groups_.erase(count);
  }
  return w;
}

std::size_t AssignmentBook::count(std::int64_t id, const std::string& node) const {
  const auto it = nodes_.find({id, node});
  return it == nodes_.end() ? 0 : it->second.size();
}

}  // namespace piranha::nps
