#include "piranha/nps/live_pool.h"

#include <algorithm>
#include <chrono>
#include <cmath>

namespace piranha::nps {
namespace {

// Records removed from the space per flush() at most: each is a round trip.
constexpr std::size_t kForgetPerFlush = 1000;

}  // namespace

LivePool::LivePool(LivePoolOptions options)
    : options_(options), absent_jobs_(AbsentJobs::Seconds(options.absent_grace)) {
  snapshot_at_ = sys::wall_now();
  origin_ = std::floor(snapshot_at_ / options_.history_step) * options_.history_step;
}

void LivePool::start(ts::Client& c) {
  const double now = sys::wall_now();
  {
    std::lock_guard lock(mu_);
    // Steps are aligned to the wall clock, and the history reaches back as
    // far as the longest predictor looks.
    origin_ = (std::floor(now / options_.history_step) - static_cast<double>(options_.history_steps)) *
              options_.history_step;
    snapshot_at_ = now;
  }
  // Watch first, then read: a period written in between shows up twice and
  // is stored once (add_period ignores duplicates).
  std::vector<EvalRecord> kept;
  for (const auto& r : sys::list_eval_records(c)) kept.push_back({r.kind, r.time, r.json});
  {
    std::lock_guard lock(mu_);
    records_.insert(records_.begin(), kept.begin(), kept.end());
  }
  ap_watch_ = c.watch(sys::kSpace, sys::ap_template());
  job_watch_ = c.watch(sys::kSpace, sys::job_template());
  jobstat_watch_ = c.watch(sys::kSpace, sys::jobstat_template());
  node_watch_ = c.watch(sys::kSpace, sys::node_template());
  for (const auto& t : c.rd_many(sys::kSpace, sys::ap_template(), 1'000'000))
    if (auto ap = sys::AvailabilityPeriod::from_tuple(t); ap && ap->end > origin_) {
      std::lock_guard lock(mu_);
      add_period(*ap);
    }
}

void LivePool::add_period(const sys::AvailabilityPeriod& ap) {
  if (!(ap.end > ap.start)) return;
  auto& node = nodes_[ap.node];
  if (node.status.name.empty()) node.status.name = ap.node;
  auto& v = node.periods;
  const std::pair<double, double> p{ap.start, ap.end};
  auto at = std::lower_bound(v.begin(), v.end(), p, [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second < b.second : a.first < b.first;
  });
  if (at != v.end() && *at == p) return;
  v.insert(at, p);
}

bool LivePool::news(ts::Client& c, std::chrono::milliseconds wait) {
  bool news = false;
  // Waits until news or the deadline: events that are not news (a job's
  // statistics, a heartbeat) do not end the wait; once news has come, only
  // what is already there is read.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  auto left = [&] {
    if (news) return std::int64_t{0};
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return std::max<std::int64_t>(0, ms.count());
  };
  for (auto e = c.next_event(left()); e; e = c.next_event(left())) {
    if (e->kind != ts::WatchEventKind::Written) continue;
    if (e->watch == ap_watch_) {
      if (auto ap = sys::AvailabilityPeriod::from_tuple(e->tuple)) aps_.push_back(*ap);
    } else if (!news) {
      std::lock_guard lock(mu_);
      news = is_news(e->watch, e->tuple);
    }
  }
  return news;
}

bool LivePool::is_news(ts::WatchId watch, const ts::Tuple& t) const {
  const auto queued = [&](std::int64_t id) {
    return std::find_if(jobs_.begin(), jobs_.end(), [&](const JobInfo& j) { return j.id == id; });
  };
  if (watch == job_watch_) {
    const auto j = sys::JobRecord::from_tuple(t);
    return j && sys::is_live(j->state) != (queued(j->id) != jobs_.end());
  }
  if (watch == jobstat_watch_) {
    const auto s = sys::JobStat::from_tuple(t);
    if (!s || s->tasks_done == 0 || !(s->mean_task_seconds > 0)) return false;
    const auto j = queued(s->id);
    return j != jobs_.end() && !j->measured;
  }
  if (watch == node_watch_) {
    const auto n = sys::NodeRecord::from_tuple(t);
    if (!n) return false;
    const auto it = nodes_.find(n->name);
    return std::find(order_.begin(), order_.end(), n->name) == order_.end() || it == nodes_.end() ||
           it->second.status.state != sys::name(n->state);
  }
  return false;
}

void LivePool::keep_absent_jobs(ts::Client& c, std::vector<sys::JobRecord>& listed) {
  const auto now = std::chrono::steady_clock::now();
  absent_jobs_.begin_read();
  for (const auto& [id, record] : live_records_) {
    if (std::any_of(listed.begin(), listed.end(), [&](const auto& j) { return j.id == id; })) continue;
    if (auto t = c.rd(sys::kSpace, sys::job_template(id), 0)) {
      // Written back since the listing: as it says now.
      if (auto j = sys::JobRecord::from_tuple(*t)) listed.push_back(*j);
      continue;
    }
    if (absent_jobs_.absent(id, now).count() > 0 && c.rd(sys::kSpace, sys::launch_template(id), 0))
      listed.push_back(record);
  }
  absent_jobs_.end_read();
}

void LivePool::refresh(ts::Client& c) {
  // The events first: every write they announce is then in what is read
  // below; one that arrives meanwhile is left for news().
  news(c);
  const double now = sys::wall_now();
  auto records = sys::list_nodes(c);
  std::map<std::string, double> heard;
  for (const auto& n : records) {
    heard[n.name] = n.updated_at;
    if (auto hb = c.rd(sys::kSpace, sys::agent_heartbeat_template(n.name), 0))
      if (auto h = sys::AgentHeartbeat::from_tuple(*hb)) heard[n.name] = std::max(heard[n.name], h->time);
  }
  std::map<std::string, std::vector<Block>> blocks;
  for (const auto& n : records)
    for (const auto& t : c.rd_many(sys::kSpace, sys::owner_template(n.name), 1000))
      if (auto b = sys::OwnerBlock::from_tuple(t); b && b->end > now)
        blocks[n.name].push_back({b->start, b->end});
  std::map<std::string, std::vector<Complaint>> complaints;
  for (const auto& k : sys::list_complaints(c)) complaints[k.node].push_back({k.time, k.text});
  std::map<std::string, sys::NodeRun> running;
  for (const auto& n : records)
    if (auto t = c.rd(sys::kSpace, sys::running_template(n.name), 0))
      if (auto r = sys::NodeRun::from_tuple(*t)) running[n.name] = *r;
  std::map<JobId, sys::JobStat> stats;
  for (const auto& s : sys::list_jobstats(c)) stats[s.id] = s;
  std::vector<JobInfo> jobs;
  std::vector<sys::JobRecord> listed = sys::list_jobs(c), live;
  keep_absent_jobs(c, listed);
  std::map<JobId, JobInfo> before;  // the last refresh()'s view of each job
  {
    std::lock_guard lock(mu_);
    for (const auto& j : jobs_) before[j.id] = j;
  }
  for (const auto& j : listed) {
    if (!sys::is_live(j.state)) continue;
    const auto st = stats.find(j.id);
    // A running job whose feeder went silent is dead (agents skip it too).
    if (j.state == sys::JobState::Running && st != stats.end() &&
        now - st->second.updated_at > options_.feeder_silence)
      continue;
    if (!launchable_.count(j.id)) {
      if (!sys::find_launch(c, j.id)) continue;  // registered without a program: no agent can run it
      launchable_.insert(j.id);
    }
    live.push_back(j);
  }
  std::sort(live.begin(), live.end(), [](const sys::JobRecord& a, const sys::JobRecord& b) {
    return a.submit_time != b.submit_time ? a.submit_time < b.submit_time : a.id < b.id;
  });
  for (const auto& j : live) {
    JobInfo info;
    info.id = j.id;
    info.name = j.name;
    info.arrival = j.submit_time;
    // A jobstat or a jobwork is absent too while its writer rewrites it:
    // as last seen then (their counts only grow).
    const auto last = before.find(j.id);
    if (const auto st = stats.find(j.id); st != stats.end()) {
      info.measured = st->second.tasks_done > 0 && st->second.mean_task_seconds > 0;
      info.mean_task_time = st->second.mean_task_seconds;
      info.tasks_left = st->second.tasks_left;
      info.tasks = st->second.tasks_done + st->second.tasks_left;
    } else if (last != before.end()) {
      info.measured = last->second.measured;
      info.mean_task_time = last->second.mean_task_time;
      info.tasks_left = last->second.tasks_left;
      info.tasks = last->second.tasks;
    }
    for (const auto& w : sys::list_jobwork(c, j.id)) info.attained += w.seconds;
    if (last != before.end()) info.attained = std::max(info.attained, last->second.attained);
    jobs.push_back(info);
  }
  live_records_.clear();
  for (const auto& j : live) live_records_[j.id] = j;

  std::lock_guard lock(mu_);
  snapshot_at_ = now;
  for (const auto& ap : aps_) add_period(ap);  // in the order they were written
  aps_.clear();
  // Nodes seen for the first time join the order by name: the system space
  // does not keep registration order, and a stable order keeps FAIR's and
  // RND's draws reproducible.
  std::vector<std::string> joined;
  for (const auto& n : records)
    if (std::find(order_.begin(), order_.end(), n.name) == order_.end()) joined.push_back(n.name);
  std::sort(joined.begin(), joined.end());
  order_.insert(order_.end(), joined.begin(), joined.end());
  for (const auto& n : records) {
    NodeData& d = nodes_[n.name];
    NodeStatus& s = d.status;
    s.name = n.name;
    const bool fresh = now - heard[n.name] <= options_.stale_seconds;
    s.state = fresh ? std::string(sys::name(n.state)) : "down";
    d.blocks = blocks[n.name];
    d.complaints = complaints[n.name];
    bool blocked = false;
    for (const auto& b : d.blocks) blocked = blocked || (b.start <= now && now < b.end);
    s.available = fresh && n.state == sys::NodeState::Available && !blocked;
    if (!s.available)
      d.open_since.reset();
    else if (!d.open_since)
      d.open_since = now;
    if (const auto r = running.find(n.name); r != running.end()) {
      s.running = r->second.job_id == 0 ? std::nullopt : std::optional<JobId>(r->second.job_id);
      s.by = r->second.by;
    }
  }
  // FAIR's q: how many live jobs there were when the NPS first saw a job.
  std::erase_if(first_queue_length_, [&](const auto& kv) {
    return std::none_of(jobs.begin(), jobs.end(), [&](const JobInfo& j) { return j.id == kv.first; });
  });
  for (auto& j : jobs) {
    auto [it, fresh] = first_queue_length_.emplace(j.id, 0);
    if (fresh) it->second = static_cast<std::int64_t>(jobs.size());
    j.queue_length_at_arrival = it->second;
  }
  jobs_ = std::move(jobs);
}

bool LivePool::pending() const {
  std::lock_guard lock(mu_);
  return !assigns_.empty() || !beats_.empty() || !unsent_.empty() || !forgotten_.empty();
}

std::vector<Complaint> LivePool::complaints(std::string_view node) const {
  std::lock_guard lock(mu_);
  const auto it = nodes_.find(node);
  return it == nodes_.end() ? std::vector<Complaint>{} : it->second.complaints;
}

std::vector<EvalRecord> LivePool::records() const {
  std::lock_guard lock(mu_);
  return records_;
}

void LivePool::record(EvalRecord r) {
  std::lock_guard lock(mu_);
  records_.push_back(r);
  unsent_.push_back(std::move(r));
}

void LivePool::forget(std::span<const std::size_t> indices) {
  std::lock_guard lock(mu_);
  std::vector<bool> gone(records_.size(), false);
  for (std::size_t i : indices)
    if (i < records_.size()) gone[i] = true;
  std::vector<EvalRecord> kept;
  kept.reserve(records_.size());
  for (std::size_t i = 0; i < records_.size(); ++i) {
    if (!gone[i]) {
      kept.push_back(std::move(records_[i]));
      continue;
    }
    // One not written yet is simply not written.
    const auto& r = records_[i];
    const auto unsent = std::find_if(unsent_.begin(), unsent_.end(), [&](const EvalRecord& u) {
      return u.time == r.time && u.kind == r.kind && u.json == r.json;
    });
    if (unsent != unsent_.end())
      unsent_.erase(unsent);
    else
      forgotten_.push_back(std::move(records_[i]));
  }
  records_ = std::move(kept);
}

void LivePool::flush(ts::Client& c) {
  decltype(assigns_) assigns;
  std::set<std::int64_t> beats;
  std::vector<EvalRecord> unsent, forgotten;
  {
    std::lock_guard lock(mu_);
    unsent.swap(unsent_);
    assigns.swap(assigns_);
    beats.swap(beats_);
    beaten_.insert(beats.begin(), beats.end());
    const std::size_t n = std::min(forgotten_.size(), kForgetPerFlush);
    forgotten.assign(std::make_move_iterator(forgotten_.begin()),
                     std::make_move_iterator(forgotten_.begin() + n));
    forgotten_.erase(forgotten_.begin(), forgotten_.begin() + n);
  }
  for (const auto& [key, a] : assigns)
    sys::supersede(c, sys::assign_template(key.first, key.second),
                   sys::Assignment{key.first, a.epoch, key.second, a.job.value_or(0)}.to_tuple());
  for (auto& r : unsent) c.out(sys::kSpace, sys::EvalRecord{r.kind, r.time, std::move(r.json)}.to_tuple());
  if (!forgotten.empty()) {
    std::vector<sys::EvalRecord> gone;
    for (auto& r : forgotten) gone.push_back({r.kind, r.time, std::move(r.json)});
    sys::remove_eval_records(c, gone);
  }
  const double now = sys::wall_now();
  for (std::int64_t id : beats)
    sys::supersede(c, sys::scheduler_heartbeat_template(id), sys::SchedulerHeartbeat{id, now}.to_tuple());
  c.flush();
}

void LivePool::withdraw(ts::Client& c) {
  std::set<std::int64_t> ids;
  {
    std::lock_guard lock(mu_);
    ids = beaten_;
    ids.insert(beats_.begin(), beats_.end());
    beats_.clear();
  }
  for (std::int64_t id : ids) c.in_many(sys::kSpace, sys::scheduler_heartbeat_template(id), 100);
  c.flush();
}

double LivePool::now() const {
  return sys::wall_now();
}
std::int64_t LivePool::epoch() const {
  return static_cast<std::int64_t>(std::llround(sys::wall_now() * 1000));
}

double LivePool::history_origin() const {
  std::lock_guard lock(mu_);
  return origin_;
}

std::int64_t LivePool::step_seconds() const {
  return std::max<std::int64_t>(1, std::llround(options_.history_step));
}

std::vector<std::string> LivePool::node_names() const {
  std::lock_guard lock(mu_);
  return order_;
}

std::optional<NodeStatus> LivePool::node(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(name);
  if (it == nodes_.end() || std::find(order_.begin(), order_.end(), name) == order_.end())
    return std::nullopt;
  return it->second.status;
}

std::vector<bool> LivePool::steps(std::string_view name, std::int64_t from) const {
  std::lock_guard lock(mu_);
  std::vector<bool> out;
  auto it = nodes_.find(name);
  const double step = options_.history_step;
  // Only steps that ended by the snapshot: later ones are not known yet.
  const auto end = static_cast<std::int64_t>(std::floor((snapshot_at_ - origin_) / step));
  if (from >= end) return out;
  std::vector<std::pair<double, double>> spans;
  if (it != nodes_.end()) {
    const auto& v = it->second.periods;
    const double begin = origin_ + static_cast<double>(from) * step;
    auto first = std::upper_bound(v.begin(), v.end(), begin,
                                  [](double t, const std::pair<double, double>& p) { return t < p.second; });
    spans.assign(first, v.end());
    if (it->second.open_since) spans.emplace_back(*it->second.open_since, snapshot_at_);
    std::sort(spans.begin(), spans.end());
  }
  // Merge overlapping spans (a record and the open period seen may overlap).
  std::vector<std::pair<double, double>> merged;
  for (const auto& s : spans) {
    if (!merged.empty() && s.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, s.second);
    else
      merged.push_back(s);
  }
  std::size_t k = 0;
  for (std::int64_t s = from; s < end; ++s) {
    const double a = origin_ + static_cast<double>(s) * step, b = a + step;
    while (k < merged.size() && merged[k].second <= a) ++k;
    double covered = 0;
    for (std::size_t i = k; i < merged.size() && merged[i].first < b; ++i)
      covered += std::min(b, merged[i].second) - std::max(a, merged[i].first);
    out.push_back(covered * 2 >= step);
  }
  return out;
}

std::vector<Block> LivePool::blocks(std::string_view node) const {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(node);
  return it == nodes_.end() ? std::vector<Block>{} : it->second.blocks;
}

std::vector<JobInfo> LivePool::jobs() const {
  std::lock_guard lock(mu_);
  return jobs_;
}

void LivePool::assign(std::int64_t scheduler, std::int64_t epoch, std::string_view node,
                      std::optional<JobId> job) {
  std::lock_guard lock(mu_);
  assigns_[{scheduler, std::string(node)}] = Pending{epoch, job};
}

void LivePool::heartbeat(std::int64_t scheduler) {
  std::lock_guard lock(mu_);
  beats_.insert(scheduler);
}

}  // namespace piranha::nps
