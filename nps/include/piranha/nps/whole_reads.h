// WholeReads: which of the pool's large shapes (the node records, the
// agents' heartbeats, the running records, the jobs' work records, the
// owners' blocks) the live pool reads whole at a tick. Each is read whole every `every` seconds; in
// between the pool keeps what it read and what the watches told. At 10,000
// nodes a shape is 10,000 tuples and a request that waits its turn behind
// every busy agent's in the server's fair queue: reading all of them in one
// tick made every fifth tick seconds long. So a tick reads every shape never
// read yet, and otherwise at most one: the most overdue (its age past
// `every`). Pure: times are passed in. Not thread-safe: the shell's own.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace piranha::nps {

class WholeReads {
 public:
  enum Shape : std::size_t { kNodes, kHeartbeats, kRunning, kJobWork, kOwners, kShapes };

  explicit WholeReads(double every) : every_(every) {}

  // The shapes to read whole at `now`, marked read at `now`. A clock that
  // went back makes every shape due.
  std::vector<Shape> due(double now) {
    bool back = false;
    for (std::size_t i = 0; i < kShapes; ++i) back = back || (read_[i] && now < at_[i]);
    std::vector<Shape> out;
    std::size_t oldest = kShapes;
    for (std::size_t i = 0; i < kShapes; ++i) {
      if (!read_[i] || back) {
        out.push_back(static_cast<Shape>(i));
      } else if (now - at_[i] >= every_ && (oldest == kShapes || at_[i] < at_[oldest])) {
        oldest = i;
      }
    }
    if (out.empty() && oldest != kShapes) out.push_back(static_cast<Shape>(oldest));
    for (Shape s : out) {
      read_[s] = true;
      at_[s] = now;
    }
    return out;
  }
  // When `s` was last read whole (meaningless before its first read).
  double read_at(Shape s) const { return at_[s]; }

 private:
  double every_;
  std::array<bool, kShapes> read_{};
  std::array<double, kShapes> at_{};
};

// Puts a whole read's records (`read`, each keyed by `key(record)`) in
// place of `seen`, the records as the last whole read and the watch events
// since left them, except for those whose last watch event arrived after
// the read began: `event_at` holds, per key, the sequence number of its
// last event, `began` the sequence number when the read began. Those are at
// least as new as the read's (a key's events arrive in the order of its
// writes), so they stay even if the read does not have them; every other
// record is the read's, and one the read lacks is gone. Pure.
// Keeps a record a watch event brought under `key` in `seen`, and in
// `event_at` the event's sequence number, the next of `seq` (what
// adopt_whole_read() below compares with a read's). Pure.
template <class Record>
void keep_event(std::map<std::string, Record>& seen, std::map<std::string, std::uint64_t>& event_at,
                std::uint64_t& seq, const std::string& key, Record record) {
  event_at[key] = ++seq;
  seen.insert_or_assign(key, std::move(record));
}

template <class Record, class Key>
void adopt_whole_read(std::map<std::string, Record>& seen,
                      const std::map<std::string, std::uint64_t>& event_at, std::vector<Record> read,
                      std::uint64_t began, Key key) {
  const auto newer = [&](const std::string& name) {
    const auto it = event_at.find(name);
    return it != event_at.end() && it->second > began;
  };
  std::map<std::string, Record> next;
  for (auto& r : read) {
    std::string name = key(r);
    if (!newer(name)) next.insert_or_assign(std::move(name), std::move(r));
  }
  for (auto& [name, r] : seen)
    if (newer(name)) next.insert_or_assign(name, std::move(r));
  seen = std::move(next);
}

}  // namespace piranha::nps
