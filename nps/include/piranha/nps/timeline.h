// Timeline: the live page's history (docs/nps.md, "The live page"), a
// bounded ring of what each node did -- its state and job over time -- with
// the retreats, the scheduler switches and the ended jobs, so a page opened
// now shows the last hours and not only what happens from now on.
//
// It is fed two ways: seed() with the evaluator's records as the pool keeps
// them (their `span`, `job` and `switch` records: what earlier NPS runs
// saw), and observe() with each state the page is sent (live_state's
// output), which extends the node's open stretch or opens a new one when
// its state or job changed. history() gives it back as JSON for
// `/history?since=`.
//
// Memory is bounded whatever the pool does: per node at most
// `spans_per_node` stretches, none that ended more than `keep_seconds`
// before the latest time seen; at most `marks` retreats and switches, as
// old at most; at most `finished` ended jobs (kept by count only, so ended
// jobs stay listed). A stretch takes 32 bytes.
//
// Pure: no I/O, no clock (times come with the states and records). Not
// thread-safe: LivePage holds it under its own lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "piranha/nps/pool.h"

namespace piranha::nps {

struct TimelineOptions {
  double keep_seconds = 6 * 3600;     // how far back stretches and marks are kept
  std::size_t spans_per_node = 1024;  // stretches kept per node, the newest
  std::size_t marks = 1000;           // retreats and switches kept, the newest
  std::size_t finished = 200;         // ended jobs kept, the latest
};

class Timeline {
 public:
  explicit Timeline(TimelineOptions options = {}) : o_(options) {}

  // The evaluator's records, oldest first (Pool::records()): each `span`
  // becomes a closed stretch of its node (a `retreat` in it a mark at its
  // end), each `job` an ended job, each `switch` a mark. Records that are
  // not objects, and other kinds, are skipped. Meant before the first
  // observe(): a node's stretches are kept in the order given.
  void seed(std::span<const EvalRecord> records);

  // One state as the page is sent it (live_state's output) at its "time":
  // each node of "nodes" extends its open stretch to that time when its
  // "state" and "job" are unchanged, else closes it and opens another; a
  // node missing from the state has its stretch closed. "retreats" not
  // seen before become marks, a change of "obeyed"'s id a switch mark, and
  // "finished" jobs not seen before are kept. Then what is beyond the
  // bounds goes.
  void observe(const nlohmann::json& state);

  // {"time": the latest time seen, "since": since, "nodes": {name: [[start,
  // end, state, job or null], ...]}, "open": {name: bool}, "marks": [{"time",
  // "kind": "retreat" or "switch", ...}], "finished": [{"id", "name",
  // "arrival", "end", "turnaround", ...}]}: the stretches that end at or
  // after `since`, the marks from `since` on, every ended job kept.
  nlohmann::json history(double since) const;

  // Stretches kept over every node (for tests and the documented bound).
  std::size_t span_count() const;

 private:
  struct Span {
    double start = 0, end = 0;
    std::int64_t job = 0;     // 0: none
    std::uint32_t state = 0;  // index into states_
  };
  struct Row {
    std::deque<Span> spans;  // oldest first
    bool open = false;       // the last one is still going on
  };

  std::uint32_t state_index(const std::string& state);
  void add_mark(nlohmann::json mark);
  void add_finished(const nlohmann::json& job);
  void prune();

  TimelineOptions o_;
  double now_ = 0;
  std::vector<std::string> states_;  // the state names seen ("available", ...)
  std::map<std::string, Row, std::less<>> rows_;
  std::deque<nlohmann::json> marks_;     // oldest first
  std::deque<nlohmann::json> finished_;  // in the order they ended
  std::int64_t obeyed_ = -1;             // the obeyed scheduler's id at the last observe (-1: none yet)
  std::string obeyed_strategy_;          // and its strategy
};

}  // namespace piranha::nps
