#include "piranha/nps/live_snapshot.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "piranha/runtime/node_liveness.h"

namespace piranha::nps {
namespace {

// The live jobs of `s`, in (arrival, id) order, with their records as read
// or, for those kept while absent, as last seen.
std::vector<sys::JobRecord> live_jobs(const LiveState& last, const LiveSnapshot& s,
                                      const LivePoolOptions& options) {
  std::vector<sys::JobRecord> listed = s.jobs;
  for (JobId id : s.kept_absent)
    if (const auto r = last.live_records.find(id); r != last.live_records.end()) listed.push_back(r->second);
  std::vector<sys::JobRecord> live;
  for (const auto& j : listed) {
    if (!sys::is_live(j.state)) continue;
    // A running job whose feeder is silent is dead (agents skip it too).
    if (feeder_silent(j.state, feeder_heard(s.stats, j.id), s.time, options.feeder_silence)) continue;
    if (!s.launchable.contains(j.id)) continue;  // registered without a program: no agent can run it
    live.push_back(j);
  }
  std::sort(live.begin(), live.end(), [](const sys::JobRecord& a, const sys::JobRecord& b) {
    return a.submit_time != b.submit_time ? a.submit_time < b.submit_time : a.id < b.id;
  });
  return live;
}

void derive_jobs(const LiveState& last, const LiveSnapshot& s, const LivePoolOptions& options,
                 LiveState& next) {
  std::map<JobId, sys::JobStat> stats;  // duplicates: the newest, where the feeder was heard
  for (const auto& st : s.stats)
    if (auto [it, fresh] = stats.emplace(st.id, st); !fresh && st.updated_at >= it->second.updated_at)
      it->second = st;
  std::map<JobId, double> attained;
  std::map<JobId, std::pair<std::int64_t, std::int64_t>> retreats;  // (all, the owner's)
  for (const auto& w : s.work) {
    attained[w.id] += w.seconds;
    retreats[w.id].first += w.retreats;
    retreats[w.id].second += w.owner_retreats;
  }
  std::map<JobId, const JobInfo*> before;  // the last refresh()'s view of each job
  for (const auto& j : last.jobs) before[j.id] = &j;
  const auto live = live_jobs(last, s, options);
  for (const auto& j : live) {
    JobInfo info;
    info.id = j.id;
    info.name = j.name;
    info.arrival = j.submit_time;
    if (const auto r = s.requirements.find(j.id); r != s.requirements.end()) info.requirement = r->second;
    // A jobstat or a jobwork is absent too while its writer rewrites it:
    // as last seen then (their counts only grow).
    const auto last_info = before.find(j.id);
    if (const auto st = stats.find(j.id); st != stats.end()) {
      info.measured = st->second.tasks_done > 0 && st->second.mean_task_seconds > 0;
      info.mean_task_time = st->second.mean_task_seconds;
      info.tasks_left = st->second.tasks_left;
      info.tasks = st->second.tasks_done + st->second.tasks_left;
    } else if (last_info != before.end()) {
      info.measured = last_info->second->measured;
      info.mean_task_time = last_info->second->mean_task_time;
      info.tasks_left = last_info->second->tasks_left;
      info.tasks = last_info->second->tasks;
    }
    if (const auto a = attained.find(j.id); a != attained.end()) info.attained = a->second;
    if (const auto r = retreats.find(j.id); r != retreats.end())
      std::tie(info.retreats, info.owner_retreats) = r->second;
    if (last_info != before.end()) {
      info.attained = std::max(info.attained, last_info->second->attained);
      info.retreats = std::max(info.retreats, last_info->second->retreats);
      info.owner_retreats = std::max(info.owner_retreats, last_info->second->owner_retreats);
    }
    next.jobs.push_back(info);
  }
  for (const auto& j : live) next.live_records[j.id] = j;
  // FAIR's q: how many live jobs there were when the NPS first saw a job.
  next.first_queue_length = last.first_queue_length;
  std::erase_if(next.first_queue_length, [&](const auto& kv) {
    return std::none_of(next.jobs.begin(), next.jobs.end(),
                        [&](const JobInfo& j) { return j.id == kv.first; });
  });
  for (auto& j : next.jobs) {
    auto [it, fresh] = next.first_queue_length.emplace(j.id, 0);
    if (fresh) it->second = static_cast<std::int64_t>(next.jobs.size());
    j.queue_length_at_arrival = it->second;
  }
}

// What the snapshot says of one node beyond its record, gathered in one
// pass over each list: one hash lookup per record instead of a tree of
// copied names per list (this runs at every tick, over every node).
struct NodeNews {
  double heard = 0;
  double beat = 0;
  std::vector<Block> blocks;
  std::vector<Complaint> complaints;
  const sys::NodeRun* running = nullptr;
  const sys::NodeReason* reason = nullptr;
  const sys::NodeAttrs* offers = nullptr;
};

// `next` holds the last state's order and nodes.
void derive_nodes(const LiveSnapshot& s, const LivePoolOptions& options, LiveState& next) {
  const double now = s.time;
  // Keyed by views of the snapshot's names, which outlive this call.
  std::unordered_map<std::string_view, NodeNews> news;
  news.reserve(s.nodes.size());
  for (const auto& n : s.nodes) news[n.name].heard = n.updated_at;
  for (const auto& h : s.heartbeats) {
    double& heard = news[h.node].heard;
    heard = std::max(heard, h.time);
  }
  for (const auto& b : s.beats)
    if (b.seconds > 0) news[b.node].beat = b.seconds;
  for (const auto& b : s.owner_blocks)
    if (b.end > now) news[b.node].blocks.push_back({b.start, b.end});
  for (const auto& k : s.complaints) news[k.node].complaints.push_back({k.time, k.text});
  for (const auto& r : s.running) news[r.node].running = &r;
  for (const auto& r : s.reasons) news[r.node].reason = &r;
  for (const auto& a : s.attributes) news[a.node].offers = &a;

  // Nodes seen for the first time join the order by name: the system space
  // does not keep registration order, and a stable order keeps FAIR's and
  // RND's draws reproducible.
  std::vector<std::string> joined;
  for (const auto& n : s.nodes)
    // Every node of `nodes` is in `order` and the other way round: a lookup,
    // not a scan of the order (a scan per node was quadratic in the pool).
    if (!next.nodes.contains(n.name)) joined.push_back(n.name);
  std::sort(joined.begin(), joined.end());
  joined.erase(std::unique(joined.begin(), joined.end()), joined.end());
  next.order.insert(next.order.end(), joined.begin(), joined.end());
  for (const auto& n : s.nodes) {
    NodeNews& k = news[n.name];
    LiveNode& d = next.nodes[n.name];
    NodeStatus& st = d.status;
    st.name = n.name;
    const bool fresh = now - k.heard <= options.stale_seconds;
    st.state = fresh ? std::string(sys::name(n.state)) : "down";
    // A reason read before the node's latest change is another state's: none.
    st.reason = fresh && k.reason && k.reason->state == st.state ? k.reason->reason : "";
    st.suspect = fresh && node_liveness(k.heard, s.heartbeats_read_at,
                                        k.beat > 0 ? k.beat : kDefaultBeatSeconds) != Liveness::Heard;
    d.blocks = k.blocks;
    d.complaints = k.complaints;
    bool blocked = false;
    for (const auto& b : d.blocks) blocked = blocked || (b.start <= now && now < b.end);
    st.available = fresh && n.state == sys::NodeState::Available && !blocked;
    if (!st.available)
      d.open_since.reset();
    else if (!d.open_since)
      d.open_since = now;
    if (k.offers) st.attributes = {k.offers->cores, k.offers->memory, k.offers->arch, k.offers->labels};
    // Absent while its agent rewrites it: as last seen.
    if (k.running) {
      st.running = k.running->job_id == 0 ? std::nullopt : std::optional<JobId>(k.running->job_id);
      st.by = k.running->by;
    }
  }
}

}  // namespace

LiveState derive(LiveState last, const LiveSnapshot& snapshot, const LivePoolOptions& options) {
  LiveState next;
  next.time = snapshot.time;
  derive_jobs(last, snapshot, options, next);
  // The nodes carry over (one not listed keeps its last state): moved, not
  // copied, as they are most of the state.
  next.order = std::move(last.order);
  next.nodes = std::move(last.nodes);
  derive_nodes(snapshot, options, next);
  return next;
}

}  // namespace piranha::nps
