#include "piranha/nps/live_pool.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <utility>

using namespace std::chrono_literals;

namespace piranha::nps {
namespace {

// Records removed from the space per flush() at most (each is a request).
constexpr std::size_t kForgetPerFlush = 1000;

// The node records, the agents' heartbeats, the ("running", ...) records
// and the owners' blocks and complaints are each read whole this often, one
// shape a tick (whole_reads.h); in between the node and running records
// come from the watches on their shapes (a node's state change, or the job
// it takes, is seen at the tick after it), the blocks and complaints are
// read again when their watches fire, and the heartbeats are those last
// read. A heartbeat at most this old (plus the few ticks a shape may wait
// its turn) still leaves a node fresh well within --stale (30 s: a beat
// every 10 s, plus this). At 10,000 nodes a whole read is 10,000 tuples.
constexpr double kWholeReadEvery = 5;

std::string jobwork_key(const sys::JobWork& w) {
  return std::to_string(w.id) + "/" + w.node;
}

}  // namespace

LivePool::LivePool(LivePoolOptions options)
    : options_(options),
      absent_jobs_(AbsentJobs::Seconds(options.absent_grace)),
      whole_reads_(kWholeReadEvery) {
  state_.time = sys::wall_now();
  origin_ = std::floor(state_.time / options_.history_step) * options_.history_step;
}

void LivePool::start(ts::Client& c) {
  const double now = sys::wall_now();
  {
    std::lock_guard lock(mu_);
    // Steps are aligned to the wall clock, and the history reaches back as
    // far as the longest predictor looks.
    origin_ = (std::floor(now / options_.history_step) - static_cast<double>(options_.history_steps)) *
              options_.history_step;
    state_.time = now;
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
  running_watch_ = c.watch(sys::kSpace, sys::running_template());
  owner_watch_ = c.watch(sys::kSpace, sys::owner_template());
  complaint_watch_ = c.watch(sys::kSpace, sys::complaint_template());
  attrs_watch_ = c.watch(sys::kSpace, sys::nodeattr_template());
  jobwork_watch_ = c.watch(sys::kSpace, sys::jobwork_template());
  for (const auto& t : c.rd_many(sys::kSpace, sys::ap_template(), 1'000'000))
    if (auto ap = sys::AvailabilityPeriod::from_tuple(t); ap && ap->end > origin_) {
      std::lock_guard lock(mu_);
      add_period(*ap);
    }
}

void LivePool::read_whole(ts::Client& c) {
  std::vector<WholeReads::Shape> due;
  std::uint64_t began = 0;
  {
    std::lock_guard lock(seen_mu_);
    whole_elsewhere_ = true;
    due = whole_reads_.due(sys::wall_now());
    began = event_seq_;
  }
  read_shapes(c, due, began);
}

void LivePool::read_shapes(ts::Client& c, const std::vector<WholeReads::Shape>& due, std::uint64_t began) {
  for (WholeReads::Shape shape : due) {
    switch (shape) {
      case WholeReads::kNodes: {
        auto nodes = sys::list_nodes(c);
        // With the node records: a reason newer than the state read is shown
        // at the next such read (derive() shows one only with its own state).
        auto reasons = sys::list_node_reasons(c);
        std::lock_guard lock(seen_mu_);
        adopt_whole_read(nodes_seen_, node_event_at_, std::move(nodes), began,
                         [](const auto& n) { return n.name; });
        reasons_seen_ = std::move(reasons);
        break;
      }
      case WholeReads::kHeartbeats: {
        auto heartbeats = sys::list_agent_heartbeats(c);
        auto beats = sys::list_agent_beats(c);
        std::lock_guard lock(seen_mu_);
        heartbeats_ = std::move(heartbeats);
        beats_seen_ = std::move(beats);
        break;
      }
      case WholeReads::kRunning: {
        auto running = sys::list_running(c);
        std::lock_guard lock(seen_mu_);
        adopt_whole_read(running_seen_, running_event_at_, std::move(running), began,
                         [](const auto& r) { return r.node; });
        break;
      }
      case WholeReads::kJobWork: {
        auto work = sys::list_jobwork(c);
        std::lock_guard lock(seen_mu_);
        adopt_whole_read(jobwork_seen_, jobwork_event_at_, std::move(work), began, jobwork_key);
        break;
      }
      case WholeReads::kOwners:
      case WholeReads::kShapes: {
        std::lock_guard lock(seen_mu_);
        owners_changed_ = true;
        break;
      }
    }
  }
}

void LivePool::add_period(const sys::AvailabilityPeriod& ap) {
  if (!(ap.end > ap.start)) return;
  auto& v = periods_[ap.node];
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
    if (news) return 0ms;
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    return std::max(0ms, ms);
  };
  for (auto e = c.next_event(left()); e; e = c.next_event(left())) {
    // A block or a complaint written or taken: read them again.
    if (e->watch == owner_watch_ || e->watch == complaint_watch_) {
      std::lock_guard lock(seen_mu_);
      owners_changed_ = true;
    }
    if (e->kind != ts::WatchEventKind::Written) continue;
    if (e->watch == node_watch_)
      if (auto n = sys::NodeRecord::from_tuple(e->tuple)) {
        std::lock_guard lock(seen_mu_);
        keep_event(nodes_seen_, node_event_at_, event_seq_, n->name, *n);
      }
    if (e->watch == running_watch_)
      if (auto r = sys::NodeRun::from_tuple(e->tuple)) {
        std::lock_guard lock(seen_mu_);
        keep_event(running_seen_, running_event_at_, event_seq_, r->node, *r);
      }
    if (e->watch == jobwork_watch_) {
      if (auto w = sys::JobWork::from_tuple(e->tuple)) {
        const std::string key = jobwork_key(*w);  // before *w is moved from
        std::lock_guard lock(seen_mu_);
        keep_event(jobwork_seen_, jobwork_event_at_, event_seq_, key, std::move(*w));
      }
      continue;
    }
    if (e->watch == attrs_watch_)
      if (auto a = sys::NodeAttrs::from_tuple(e->tuple)) {
        attrs_seen_[a->node] = *a;
        news = true;
        continue;
      }
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
    return std::find_if(state_.jobs.begin(), state_.jobs.end(), [&](const JobInfo& j) { return j.id == id; });
  };
  if (watch == job_watch_) {
    const auto j = sys::JobRecord::from_tuple(t);
    return j && sys::is_live(j->state) != (queued(j->id) != state_.jobs.end());
  }
  if (watch == jobstat_watch_) {
    const auto s = sys::JobStat::from_tuple(t);
    if (!s || s->tasks_done == 0 || !(s->mean_task_seconds > 0)) return false;
    const auto j = queued(s->id);
    return j != state_.jobs.end() && !j->measured;
  }
  if (watch == node_watch_) {
    const auto n = sys::NodeRecord::from_tuple(t);
    if (!n) return false;
    const auto it = state_.nodes.find(n->name);
    return it == state_.nodes.end() || it->second.status.state != sys::name(n->state);
  }
  return false;
}

void LivePool::read_absent_jobs(ts::Client& c, LiveSnapshot& s) {
  const auto now = std::chrono::steady_clock::now();
  // Each absent one's record (written back since the listing?) and launch
  // record, all asked together: one wait, which at 10,000 nodes, as a job
  // starts (its feeder rewriting its record), is a busy server's.
  std::vector<JobId> absent;
  std::vector<ts::Template> asks;
  for (const auto& [id, record] : state_.live_records) {
    if (std::any_of(s.jobs.begin(), s.jobs.end(), [&](const auto& j) { return j.id == id; })) continue;
    absent.push_back(id);
    asks.push_back(sys::job_template(id));
    asks.push_back(sys::launch_template(id));
  }
  const auto answers =
      absent.empty() ? std::vector<std::vector<ts::Tuple>>{} : c.rd_many_each(sys::kSpace, asks, 1);
  absent_jobs_.begin_read();
  for (std::size_t i = 0; i < absent.size(); ++i) {
    const auto& record = answers[2 * i];
    if (!record.empty()) {
      // Written back since the listing: as it says now.
      if (auto j = sys::JobRecord::from_tuple(record.front())) s.jobs.push_back(*j);
      continue;
    }
    if (absent_jobs_.absent(absent[i], now).count() > 0 && !answers[2 * i + 1].empty())
      s.kept_absent.push_back(absent[i]);
  }
  absent_jobs_.end_read();
}

LiveSnapshot LivePool::read_snapshot(ts::Client& c) {
  LiveSnapshot s;
  s.time = sys::wall_now();
  // One request per shape, not one per node, and the largest shapes whole
  // only every kWholeReadEvery, one of them a tick (docs/scale.md), here
  // unless a thread of the shell's reads them (read_whole()).
  std::vector<WholeReads::Shape> due;
  std::uint64_t began = 0;
  {
    std::lock_guard lock(seen_mu_);
    if (!whole_elsewhere_) due = whole_reads_.due(s.time);
    began = event_seq_;
  }
  read_shapes(c, due, began);
  bool owners = false;
  {
    std::lock_guard lock(seen_mu_);
    owners = std::exchange(owners_changed_, false);
    for (const auto& [name, n] : nodes_seen_) s.nodes.push_back(n);
    for (const auto& [name, r] : running_seen_) s.running.push_back(r);
    s.reasons = reasons_seen_;
    s.heartbeats = heartbeats_;
    s.heartbeats_read_at = whole_reads_.read_at(WholeReads::kHeartbeats);
    s.beats = beats_seen_;
  }
  // The jobs' records and statistics, and the blocks and complaints when
  // their watches say they changed (or in their turn of the whole reads; a
  // change is seen at the tick after its event), asked together: on a busy
  // server each request waits for its turn, which at 10,000 nodes, as a job
  // starts or ends, is tens to hundreds of milliseconds (docs/scale.md).
  std::vector<ts::Template> lists = {sys::jobstat_template(), sys::job_template()};
  if (owners) {
    lists.push_back(sys::owner_template());
    lists.push_back(sys::complaint_template());
  }
  auto listed = c.rd_many_each(sys::kSpace, lists, sys::kListMax);
  s.stats = sys::decode_all<sys::JobStat>(listed[0]);
  s.jobs = sys::decode_all<sys::JobRecord>(listed[1]);
  if (owners) {
    auto blocks = sys::decode_all<sys::OwnerBlock>(listed[2]);
    auto complaints = sys::complaints_in_time_order(listed[3]);
    // Read whole every few seconds: a change only if they differ.
    if (blocks != blocks_seen_ || complaints != complaints_seen_) owners_differ_ = true;
    blocks_seen_ = std::move(blocks);
    complaints_seen_ = std::move(complaints);
  }
  s.owner_blocks = blocks_seen_;
  s.complaints = complaints_seen_;
  // The nodes' attributes whole once per session (a new session lost the
  // events of its gap), and from their watch in between.
  if (attrs_session_ != c.reconnects()) {
    attrs_seen_.clear();
    for (auto& a : sys::list_node_attrs(c)) attrs_seen_[a.node] = std::move(a);
    attrs_session_ = c.reconnects();
  }
  for (const auto& [name, a] : attrs_seen_) s.attributes.push_back(a);
  read_absent_jobs(c, s);
  // Each live job's launch record once (it is there before its job record
  // is written), and the work of those that have one.
  std::set<JobId> live(s.kept_absent.begin(), s.kept_absent.end());
  for (const auto& j : s.jobs)
    if (sys::is_live(j.state)) live.insert(j.id);
  // The new ones' launch records and requirements (written before the job's
  // record, never rewritten: read once), all asked together: one wait.
  std::vector<JobId> unknown;
  for (JobId id : live)
    if (!launchable_.contains(id)) unknown.push_back(id);
  auto found = sys::find_launches(c, unknown);
  for (std::size_t i = 0; i < unknown.size(); ++i) {
    if (!found[i].launch) continue;
    launchable_.insert(unknown[i]);
    if (found[i].requirement) requirements_[unknown[i]] = std::move(*found[i].requirement);
  }
  for (JobId id : live) {
    if (!launchable_.contains(id)) continue;
    s.launchable.insert(id);
    if (auto r = requirements_.find(id); r != requirements_.end()) s.requirements[id] = r->second;
  }
  // The live jobs' work, as the watch and the whole reads left it.
  {
    std::lock_guard lock(seen_mu_);
    for (const auto& [key, w] : jobwork_seen_)
      if (s.launchable.contains(w.id)) s.work.push_back(w);
  }
  // An ended job's launch record is not asked for again.
  std::erase_if(launchable_, [&](JobId id) { return !live.contains(id); });
  std::erase_if(requirements_, [&](const auto& r) { return !live.contains(r.first); });
  return s;
}

void LivePool::refresh(ts::Client& c) {
  // The events first: every write they announce is then in what is read
  // below; one that arrives meanwhile is left for news().
  news(c);
  const LiveSnapshot snapshot = read_snapshot(c);
  // Moved through derive() under the lock (readers wait the few ms it
  // takes): a copy of every node per tick cost more than the deriving.
  std::lock_guard lock(mu_);
  const std::size_t known = state_.order.size();
  state_ = derive(std::move(state_), snapshot, options_);
  // What owners_version() answers: a new number when an owner node may
  // find its node's blocks or complaints changed.
  if (std::exchange(owners_differ_, false) || state_.time >= next_block_end_ ||
      state_.order.size() != known) {
    ++owners_version_;
    next_block_end_ = std::numeric_limits<double>::infinity();
    for (const auto& b : snapshot.owner_blocks)
      if (b.end > state_.time) next_block_end_ = std::min(next_block_end_, b.end);
  }
  for (const auto& ap : aps_) add_period(ap);  // in the order they were written
  aps_.clear();
}

bool LivePool::pending() const {
  std::lock_guard lock(mu_);
  return !assigns_.empty() || !beats_.empty() || !unsent_.empty() || !forgotten_.empty();
}

std::vector<Complaint> LivePool::complaints(std::string_view node) const {
  std::lock_guard lock(mu_);
  const auto it = state_.nodes.find(node);
  return it == state_.nodes.end() ? std::vector<Complaint>{} : it->second.complaints;
}

std::optional<std::uint64_t> LivePool::owners_version() const {
  std::lock_guard lock(mu_);
  return owners_version_;
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
  try {
    if (c.reconnects() != book_session_) book_.forget();
    std::vector<sys::Assignment> next;
    for (const auto& [key, a] : assigns) {
      if (!book_.knows(key.first)) {
        book_.know(key.first,
                   c.rd_many(sys::kSpace, sys::assign_template(key.first), ts::kMaxTuplesPerRequest));
        book_session_ = c.reconnects();
      }
      next.push_back(sys::Assignment{key.first, a.epoch, key.second, a.job.value_or(0)});
    }
    const auto writes = book_.supersede(next);
    if (!writes.out.empty()) c.out_many(sys::kSpace, writes.out);
    for (const auto& [t, n] : writes.take) c.discard_posted(sys::kSpace, t, n);
    // The evaluator's records in one request, and those it forgot taken
    // posted: a decision that moved every node is a record per node.
    std::vector<ts::Tuple> records;
    for (auto& r : unsent) records.push_back(sys::EvalRecord{r.kind, r.time, std::move(r.json)}.to_tuple());
    if (!records.empty()) c.out_many(sys::kSpace, records);
    for (auto& r : forgotten)
      c.discard_posted(sys::kSpace,
                       ts::Template::exactly(sys::EvalRecord{r.kind, r.time, std::move(r.json)}.to_tuple()));
    const double now = sys::wall_now();
    for (std::int64_t id : beats) {
      auto [last, first] = last_beat_.try_emplace(id, now);
      if (!first && now - last->second < options_.beat_seconds) continue;
      last->second = now;
      beat_writers_.try_emplace(id, sys::scheduler_heartbeat_template(id))
          .first->second.write(c, sys::SchedulerHeartbeat{id, now}.to_tuple());
      // The serving record, after the heartbeat (agents that its event
      // makes read find the heartbeat), at the first beat and again after a
      // lost session (a server restarted without its data lost it).
      auto [session, unwritten] = serving_session_.try_emplace(id, c.reconnects());
      if (unwritten || session->second != c.reconnects()) {
        session->second = c.reconnects();
        const auto serving = sys::SchedulerServing{id, serving_since_}.to_tuple();
        if (!c.rd(sys::kSpace, ts::Template::exactly(serving), std::chrono::milliseconds(0)))
          sys::supersede(c, sys::serving_template(id), serving);
      }
    }
    c.flush();
  } catch (const ts::TupleSpaceError&) {
    // What was posted may or may not have happened: read again next time.
    book_.forget();
    beat_writers_.clear();
    serving_session_.clear();
    throw;
  }
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
  // Then the serving records: an agent that their events make read finds
  // no heartbeat and falls back at once.
  for (std::int64_t id : ids) c.in_many(sys::kSpace, sys::serving_template(id), 100);
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
  return state_.order;
}

std::optional<NodeStatus> LivePool::node(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = state_.nodes.find(name);
  // The nodes and the order hold the same names (derive()).
  if (it == state_.nodes.end()) return std::nullopt;
  return it->second.status;
}

bool LivePool::node_into(std::string_view name, NodeStatus& into) const {
  std::lock_guard lock(mu_);
  auto it = state_.nodes.find(name);
  if (it == state_.nodes.end()) return false;
  into = it->second.status;
  return true;
}

std::vector<bool> LivePool::steps(std::string_view name, std::int64_t from) const {
  std::lock_guard lock(mu_);
  std::vector<bool> out;
  const double step = options_.history_step;
  // Only steps that ended by the snapshot: later ones are not known yet.
  const auto end = static_cast<std::int64_t>(std::floor((state_.time - origin_) / step));
  if (from >= end) return out;
  std::vector<std::pair<double, double>> spans;
  if (const auto p = periods_.find(name); p != periods_.end()) {
    const auto& v = p->second;
    const double begin = origin_ + static_cast<double>(from) * step;
    auto first = std::upper_bound(v.begin(), v.end(), begin,
                                  [](double t, const std::pair<double, double>& p) { return t < p.second; });
    spans.assign(first, v.end());
  }
  if (const auto n = state_.nodes.find(name); n != state_.nodes.end() && n->second.open_since)
    spans.emplace_back(*n->second.open_since, state_.time);
  std::sort(spans.begin(), spans.end());
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
  auto it = state_.nodes.find(node);
  return it == state_.nodes.end() ? std::vector<Block>{} : it->second.blocks;
}

std::vector<JobInfo> LivePool::jobs() const {
  std::lock_guard lock(mu_);
  return state_.jobs;
}

void LivePool::assign(std::int64_t scheduler, std::int64_t epoch, std::string_view node,
                      std::optional<JobId> job) {
  std::lock_guard lock(mu_);
  assigns_[{scheduler, std::string(node)}] = Pending{epoch, job};
}

void LivePool::heartbeat(std::int64_t scheduler) {
  std::lock_guard lock(mu_);
  beats_.insert(scheduler);
  ++heartbeat_calls_;
  heartbeat_at_ = std::chrono::steady_clock::now();
}

std::pair<std::uint64_t, std::chrono::steady_clock::time_point> LivePool::latest_heartbeat() const {
  std::lock_guard lock(mu_);
  return {heartbeat_calls_, heartbeat_at_};
}

}  // namespace piranha::nps
