// A Pool whose nodes, steps and jobs a test sets by hand, recording what the
// NPS writes: the node types' tests run on the deterministic trellis with it,
// without sockets, clocks or sleeps.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "piranha/nps/pool.h"

namespace piranha::nps::testing {

class ScriptedPool : public Pool {
 public:
  double clock = 0;
  std::vector<std::string> names;
  std::map<std::string, NodeStatus, std::less<>> status;
  std::map<std::string, std::vector<bool>, std::less<>> history;  // every step so far
  std::map<std::string, std::vector<Block>, std::less<>> owner_blocks;
  std::vector<JobInfo> job_list;
  std::map<std::string, std::vector<Complaint>, std::less<>> complaint_list;
  std::vector<EvalRecord> kept;  // the evaluator's records
  bool background = false;       // background_work(): replays on a thread, as live
  // owners_version(): none unless a test sets one (and then bumps it as it changes the blocks).
  std::optional<std::uint64_t> owners_changes;
  mutable std::int64_t block_reads = 0;  // calls of blocks()
  struct Write {
    std::int64_t scheduler, epoch;
    std::string node;
    std::optional<JobId> job;
  };
  std::vector<Write> assigns;
  std::vector<std::int64_t> beats;
  mutable std::vector<std::pair<std::string, std::int64_t>> step_requests;

  void add_node(const std::string& name, bool available = true) {
    names.push_back(name);
    status[name] =
        NodeStatus{name, available ? "available" : "unavailable", available, std::nullopt, "", false, ""};
  }

  double now() const override { return clock; }
  std::int64_t epoch() const override { return static_cast<std::int64_t>(clock); }
  double history_step() const override { return 1; }
  double history_origin() const override { return 0; }
  std::int64_t step_seconds() const override { return 60; }
  std::vector<std::string> node_names() const override { return names; }
  std::optional<NodeStatus> node(std::string_view n) const override {
    auto it = status.find(n);
    return it == status.end() ? std::nullopt : std::optional(it->second);
  }
  std::vector<bool> steps(std::string_view n, std::int64_t from) const override {
    step_requests.emplace_back(std::string(n), from);
    auto it = history.find(n);
    if (it == history.end() || from >= static_cast<std::int64_t>(it->second.size())) return {};
    return {it->second.begin() + from, it->second.end()};
  }
  std::vector<Block> blocks(std::string_view n) const override {
    ++block_reads;
    auto it = owner_blocks.find(n);
    return it == owner_blocks.end() ? std::vector<Block>{} : it->second;
  }
  std::vector<JobInfo> jobs() const override { return job_list; }
  std::vector<Complaint> complaints(std::string_view n) const override {
    auto it = complaint_list.find(n);
    return it == complaint_list.end() ? std::vector<Complaint>{} : it->second;
  }
  std::optional<std::uint64_t> owners_version() const override { return owners_changes; }
  bool keeps_records() const override { return true; }
  bool background_work() const override { return background; }
  std::vector<EvalRecord> records() const override { return kept; }
  void record(EvalRecord r) override { kept.push_back(std::move(r)); }
  void forget(std::span<const std::size_t> indices) override {
    for (auto i = indices.rbegin(); i != indices.rend(); ++i)
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(*i));
  }
  void assign(std::int64_t s, std::int64_t e, std::string_view n, std::optional<JobId> j) override {
    assigns.push_back({s, e, std::string(n), j});
  }
  void heartbeat(std::int64_t s) override { beats.push_back(s); }
};

inline JobInfo job(JobId id, double arrival, double task_time, std::int64_t tasks_left,
                   bool measured = true) {
  JobInfo j;
  j.id = id;
  j.name = "job" + std::to_string(id);
  j.arrival = arrival;
  j.mean_task_time = task_time;
  j.measured = measured;
  j.tasks = tasks_left;
  j.tasks_left = tasks_left;
  return j;
}

}  // namespace piranha::nps::testing
