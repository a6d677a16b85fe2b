#include "piranha/agent/uplink.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <stdexcept>

#include "piranha/runtime/feeder_silence.h"

using namespace std::chrono_literals;

namespace piranha {
namespace {

// Puts `l` into `live` in id order, as a read lists jobs, unless a job of
// its id is there.
void insert_by_id(std::vector<sys::JobLaunch>& live, const sys::JobLaunch& l) {
  if (std::any_of(live.begin(), live.end(), [&](const auto& k) { return k.id == l.id; })) return;
  live.insert(std::find_if(live.begin(), live.end(), [&](const auto& k) { return k.id > l.id; }), l);
}

// Between attempts to reach a server that did not answer: the first pause,
// doubling up to the last (retry_pause()).
constexpr auto kRetry = std::chrono::milliseconds(1000);
constexpr auto kRetryMax = std::chrono::milliseconds(16000);

// The uplink connection's ZeroMQ heartbeat interval (ms).
constexpr int kLinkHeartbeatMs = 10000;

// ("jobwork", any job, node, ...): the tasks each job completed here.
ts::Template jobwork_here_template(const std::string& node) {
  using ts::Field;
  using ts::Type;
  return ts::Template({Field::of(ts::Value(std::string("jobwork"))), Field::formal(Type::Int),
                       Field::of(ts::Value(node)), Field::formal(Type::Int), Field::formal(Type::Double),
                       Field::formal(Type::Int), Field::formal(Type::Int)});
}

std::chrono::milliseconds seconds_ms(double s) {
  return std::chrono::milliseconds(static_cast<std::int64_t>(s * 1000));
}

// Where in [0, 1) a pool's node falls, by FNV-1a over its name and the
// `extra` bytes of `salt` (none: 0): spread evenly over the nodes, the same
// for a node every time, so that 10,000 agents do not act in the same second.
double spread(const std::string& node, std::uint64_t salt = 0, int extra = 0) {
  std::uint64_t h = 1469598103934665603ull;
  const auto mix = [&](unsigned char b) { h = (h ^ b) * 1099511628211ull; };
  for (char ch : node) mix(static_cast<unsigned char>(ch));
  for (int i = 0; i < extra; ++i) mix(static_cast<unsigned char>(salt >> (8 * i)));
  return static_cast<double>(h % 1000) / 1000.0;
}

// What the View is read from, watched so that a change prompts a read.
std::vector<ts::Template> watched(const std::string& node) {
  return {sys::job_template(), sys::owner_template(node), sys::assign_template(0, node),
          sys::serving_template(0), jobwork_here_template(node)};
}

}  // namespace

double heartbeat_look_delay(const std::string& node, double stale_seconds) {
  return stale_seconds * (0.4 + 0.2 * spread(node));
}

HeartbeatLook heartbeat_look(const std::optional<sys::SchedulerHeartbeat>& known,
                             const std::optional<sys::SchedulerHeartbeat>& found, double now,
                             double stale_seconds) {
  if (!found) return {known, known.has_value(), false};
  if (known && known->time >= found->time) return {known, false, false};
  const bool was_fresh = known && known->time + stale_seconds >= now;
  const bool fresh = found->time + stale_seconds >= now;
  return {found, !was_fresh && fresh, true};
}

std::optional<sys::SchedulerHeartbeat> heartbeat_after_read(
    const std::optional<sys::SchedulerHeartbeat>& read, const std::optional<sys::SchedulerHeartbeat>& known) {
  if (!read) return std::nullopt;
  return known && known->time > read->time ? known : read;
}

Uplink::Uplink(const AgentSettings& settings, std::function<void(const std::string&)> log, int wake_fd)
    : s_(settings), log_(std::move(log)), wake_fd_(wake_fd) {
  stop_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  kick_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (stop_fd_ < 0 || kick_fd_ < 0) throw std::runtime_error("agent: cannot create an eventfd");
  thread_ = std::thread([this] { run(); });
}

Uplink::~Uplink() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  // Ends a call waiting on the server at once (ClientOptions::interrupt_fd).
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(stop_fd_, &one, sizeof one);
  thread_.join();
  client_.reset();
  ::close(stop_fd_);
  ::close(kick_fd_);
}

void Uplink::kick() {
  cv_.notify_all();
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(kick_fd_, &one, sizeof one);
}

Uplink::View Uplink::view() const {
  std::lock_guard lock(mu_);
  return view_;
}

std::uint64_t Uplink::generation() const {
  return generation_.load();
}

bool Uplink::ever_connected() const {
  std::lock_guard lock(mu_);
  return connected_once_;
}

bool Uplink::server_away() const {
  std::lock_guard lock(mu_);
  return away_;
}

void Uplink::set_state(sys::NodeState state, std::string reason) {
  {
    std::lock_guard lock(mu_);
    state_ = state;
    reason_ = std::move(reason);
    state_dirty_ = true;
  }
  kick();
}

void Uplink::set_run(sys::NodeRun run) {
  {
    std::lock_guard lock(mu_);
    run_ = std::move(run);
  }
  kick();
}

void Uplink::record_period(sys::AvailabilityPeriod ap) {
  {
    std::lock_guard lock(mu_);
    periods_.push_back(std::move(ap));
  }
  kick();
}

void Uplink::hold(sys::JobHold hold) {
  {
    std::lock_guard lock(mu_);
    holds_.push_back(std::move(hold));
  }
  kick();
}

void Uplink::announce_key(sys::JobKey key) {
  {
    std::lock_guard lock(mu_);
    keys_.emplace_back(std::move(key), true);
  }
  kick();
}

void Uplink::withdraw_key(sys::JobKey key) {
  {
    std::lock_guard lock(mu_);
    keys_.emplace_back(std::move(key), false);
  }
  kick();
}

void Uplink::read_soon() {
  {
    std::lock_guard lock(mu_);
    read_now_ = true;
  }
  kick();
}

bool Uplink::pending_locked() const {
  return state_dirty_ || run_ || !periods_.empty() || !holds_.empty() || !keys_.empty() || busy_;
}

bool Uplink::drain(Clock::time_point deadline) {
  std::unique_lock lock(mu_);
  cv_.notify_all();
  return cv_.wait_until(lock, deadline, [this] { return !pending_locked(); });
}

bool Uplink::connect() {
  try {
    ts::ClientOptions o;
    // A server that many agents are meeting at once answers late.
    o.connect_timeout = std::chrono::milliseconds(5000);
    o.request_timeout = std::chrono::milliseconds(2000);
    o.interrupt_fd = stop_fd_;
    // ZeroMQ heartbeats every 10 s, not every second, and no TTL asked of
    // the server: each costs the server time that grows with its
    // connections (libzmq keeps its timers in one list), and an agent holds
    // nothing the server must hurry to return (client.h, heartbeat_ttl).
    o.heartbeat_interval_ms = kLinkHeartbeatMs;
    o.heartbeat_timeout_ms = 3 * kLinkHeartbeatMs;
    o.heartbeat_ttl = false;
    auto c = std::make_unique<ts::Client>(s_.server, o);
    // Watches first: whatever is written after them prompts a read, so the
    // first read (next) misses nothing. The client re-establishes them on
    // a new session by itself (the gap's events are lost: run() reads).
    for (const auto& t : watched(s_.node)) c->watch(sys::kSpace, t);
    client_ = std::move(c);
    heartbeat_.forget();  // what it knew was on another client's sessions
    attributes_session_.reset();
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() == ts::Code::WrongPool) return refuse(e.what());
    std::lock_guard lock(mu_);
    if (!away_) log_("waiting for the tuple-space server at " + s_.server + " (" + e.what() + ")");
    away_ = true;
    ++failures_;
    return false;
  } catch (const std::exception& e) {
    // Unreachable, refused (auth_failed), or keys that cannot be read any more.
    std::lock_guard lock(mu_);
    if (!away_) log_("waiting for the tuple-space server at " + s_.server + " (" + e.what() + ")");
    away_ = true;
    ++failures_;
    return false;
  }
  std::lock_guard lock(mu_);
  log_(std::string(connected_once_ ? "reconnected to" : "connected to") + " the tuple-space server at " +
       s_.server);
  connected_once_ = true;
  away_ = false;
  watching_ = true;
  read_now_ = true;
  reconnects_seen_ = client_->reconnects();
  server_back_ = sys::wall_now();
  return true;
}

std::chrono::milliseconds Uplink::retry_pause(int failures) const {
  auto pause = kRetry;
  for (int i = 1; i < failures && pause < kRetryMax; ++i) pause *= 2;
  pause = std::min(pause, kRetryMax);
  // Jitter of up to half the pause, the same for a node each time, so that
  // a pool's agents, which lost a restarting server together, come back
  // spread out rather than all in the same second.
  const auto spread = static_cast<std::int64_t>(std::hash<std::string>{}(s_.node) % 1000);
  return pause / 2 + pause * spread / 2000;
}

void Uplink::run() {
  while (true) {
    {
      std::unique_lock lock(mu_);
      if (away_) cv_.wait_for(lock, retry_pause(failures_), [this] { return stopping_; });
      if (stopping_) return;
    }
    if (!client_ && !connect()) {
      std::lock_guard lock(mu_);
      if (!refused_.empty()) return;
      continue;
    }
    try {
      {
        // Trying again after the server was away (or the client reconnected
        // by itself): a feeder's silence counts from here (read_with).
        std::lock_guard lock(mu_);
        if (away_ || client_->reconnects() != reconnects_seen_) server_back_ = sys::wall_now();
      }
      step(*client_);
      {
        std::lock_guard lock(mu_);
        if (away_) log_("the tuple-space server at " + s_.server + " answers again");
        // The client reconnected by itself within its deadline (a restart, a
        // short cut): worth a line, and a read (the gap's events are lost).
        if (client_->reconnects() != reconnects_seen_) {
          if (!away_)
            log_("lost the tuple-space server at " + s_.server +
                 " and reconnected (a restart or a network fault)");
          read_now_ = true;
        }
        reconnects_seen_ = client_->reconnects();
        away_ = false;
        failures_ = 0;
      }
      cv_.notify_all();  // drain() may be waiting
      listen(*client_);
    } catch (const ts::TupleSpaceError& e) {
      // Reconnected to a server of another pool (one replaced on the same endpoint).
      if (e.code() == ts::Code::WrongPool) {
        refuse(e.what());
        return;
      }
      note_lost(e);
    } catch (const std::exception& e) {
      note_lost(e);
    }
    cv_.notify_all();  // drain() may be waiting
  }
}

bool Uplink::refuse(const std::string& why) {
  {
    std::lock_guard lock(mu_);
    refused_ = why;
    away_ = true;
  }
  cv_.notify_all();
  wake_agent();
  return false;
}

std::string Uplink::refused() const {
  std::lock_guard lock(mu_);
  return refused_;
}

void Uplink::note_lost(const std::exception& e) {
  std::lock_guard lock(mu_);
  busy_ = false;
  read_now_ = true;  // what failed is read again once the server answers
  if (!away_ && !stopping_)
    log_(std::string("lost the tuple-space server: ") + e.what() +
         "; trying again after a second, then less and less often, up to every 16 s (sensing and "
         "retreats go on)");
  away_ = true;
  ++failures_;
}

void Uplink::listen(ts::Client& c) {
  while (true) {
    // Cleared before looking, so that a kick after the look ends the wait.
    std::uint64_t kicks;
    [[maybe_unused]] auto r = ::read(kick_fd_, &kicks, sizeof kicks);
    Clock::time_point wake;
    {
      std::lock_guard lock(mu_);
      if (stopping_ || read_now_ || stale_check_ || look_now_ || pending_locked()) return;
      wake = std::min({next_heartbeat_, next_prune_, next_read_});
      if (view_.generation > 0) wake = std::min(wake, next_look_);
      for (const auto& [id, look] : patience_looks_) wake = std::min(wake, look.due);
      if (const auto stale = stale_at_locked()) {
        if (Clock::now() >= *stale) {
          // Stale: look whether the scheduler is gone.
          stale_read_for_ = view_.scheduler->time;
          stale_check_ = true;
          return;
        }
        wake = std::min(wake, *stale);
      }
    }
    const auto now = Clock::now();
    if (now >= wake) return;
    // A second at most, so that a new session (whose gap's events are lost)
    // is noticed soon.
    const auto left = std::min<Clock::duration>(wake - now, 1s);
    auto e = c.next_event(std::chrono::ceil<std::chrono::milliseconds>(left), kick_fd_);
    bool read = false;
    for (; e; e = c.next_event(0ms)) read = on_event(*e) || read;
    note_new_jobs(c);
    if (c.reconnects() != reconnects_seen_) return;  // run() says so and reads
    if (read) {
      std::lock_guard lock(mu_);
      read_now_ = true;
    }
  }
}

Clock::time_point Uplink::look_after(Clock::time_point now) const {
  return now + seconds_ms(heartbeat_look_delay(s_.node, s_.scheduler_stale_seconds));
}

std::optional<Clock::time_point> Uplink::stale_at_locked() const {
  if (!view_.scheduler || view_.scheduler->time == stale_read_for_) return std::nullopt;
  const double left = view_.scheduler->time + s_.scheduler_stale_seconds - sys::wall_now();
  // A millisecond late, so that it is stale when read (in the past once it is).
  return Clock::now() + seconds_ms(left) + std::chrono::milliseconds(1);
}

void Uplink::step(ts::Client& c) {
  auto now = Clock::now();
  double wall = sys::wall_now();
  // The heartbeat alone says the agent is alive; the node record, which the
  // NPS watches, is rewritten only when the state changes. Superseded, not
  // replaced: a reader must never find it absent, or the node's older
  // record would make it look stale; and posted (two requests, one wait).
  auto beat_now = [&] {
    try {
      heartbeat_.write(c, sys::AgentHeartbeat{s_.node, wall}.to_tuple());
      c.flush();
    } catch (const ts::TupleSpaceError&) {
      heartbeat_.forget();
      throw;
    }
  };
  auto publish_state = [&](sys::NodeState st, const std::string& why) {
    // The reason first: a reader that finds the new state finds why.
    sys::replace(c, sys::nodewhy_template(s_.node),
                 sys::NodeReason{s_.node, std::string(sys::name(st)), why, wall}.to_tuple());
    sys::replace(c, sys::node_template(s_.node),
                 sys::NodeRecord{s_.node, s_.cores, s_.speed, st, wall}.to_tuple());
    // How often it beats, so readers judge its silence by its own beat.
    sys::replace(c, sys::agentbeat_template(s_.node),
                 sys::AgentBeat{s_.node, s_.heartbeat_seconds}.to_tuple());
    beat_now();
  };

  // The node's attributes at registration: a read, and a write only when
  // they differ from the record there (docs/scale.md: no writes per beat).
  if (s_.attributes && attributes_session_ != c.reconnects()) {
    const auto& a = *s_.attributes;
    sys::publish_node_attrs(c, sys::NodeAttrs{s_.node, a.cores, a.memory, a.arch, a.labels});
    attributes_session_ = c.reconnects();
  }

  // Writes first, oldest first; each leaves its queue once written.
  std::unique_lock lock(mu_);
  busy_ = true;
  while (!keys_.empty()) {
    auto [key, announce] = keys_.front();
    lock.unlock();
    try {
      if (announce)
        c.out(sys::kSpace, key.to_tuple());
      else
        c.in_many(sys::kSpace,
                  key.id ? ts::Template::exactly(key.to_tuple()) : sys::jobkeys_template(s_.node), 1000);
      c.flush();
    } catch (const ts::TupleSpaceError& e) {
      if (e.code() != ts::Code::NotPermitted) throw;
      log_("job " + std::to_string(key.id) + "'s piranha key: " + e.what());
    }
    lock.lock();
    keys_.pop_front();
  }
  while (!periods_.empty()) {
    sys::AvailabilityPeriod ap = periods_.front();
    lock.unlock();
    // Written at most once even when an earlier attempt's answer was lost.
    auto t = ap.to_tuple();
    if (!c.rd(sys::kSpace, ts::Template::exactly(t), 0ms)) c.out(sys::kSpace, t);
    c.flush();
    lock.lock();
    periods_.pop_front();
  }
  while (!holds_.empty()) {
    sys::JobHold h = holds_.front();
    lock.unlock();
    if (!sys::hold_job(c, h)) log_("job " + std::to_string(h.id) + " was not live any more: not held");
    lock.lock();
    holds_.pop_front();
    ++holds_written_;
    read_now_ = true;  // the agent waits for a view read after it
  }
  if (state_dirty_ && state_) {
    sys::NodeState st = *state_;
    std::string why = reason_;
    lock.unlock();
    publish_state(st, why);
    lock.lock();
    if (state_ == st && reason_ == why) state_dirty_ = false;
    next_heartbeat_ = now + seconds_ms(s_.heartbeat_seconds);
  }
  if (run_) {
    sys::NodeRun r = *run_;
    lock.unlock();
    sys::replace(c, sys::running_template(s_.node), r.to_tuple());
    c.flush();
    lock.lock();
    if (run_ && run_->to_tuple() == r.to_tuple()) run_.reset();
  }
  // The heartbeat, once the node has a state (from the start).
  bool beat = now >= next_heartbeat_ && state_.has_value();
  bool read_due = watching_ && (read_now_ || now >= next_read_);
  // Cleared as the read starts: a request made during the read (a watch
  // event) asks for another one.
  // A read looks at the heartbeat too.
  const bool check_stale = stale_check_ && !read_due;
  const bool look = !read_due && view_.generation > 0 && (check_stale || look_now_ || now >= next_look_);
  stale_check_ = false;
  look_now_ = false;
  if (read_due) read_now_ = false;
  std::uint64_t holds_written = holds_written_;
  lock.unlock();

  if (beat) beat_now();
  if (now >= next_heartbeat_) next_heartbeat_ = now + seconds_ms(s_.heartbeat_seconds);
  if (read_due) next_read_ = read(c, holds_written);
  if (look) look_at_heartbeat(c, check_stale);
  look_at_patience(c);
  if (now >= next_prune_) {
    auto aps = sys::prune_availability(c, s_.node, wall - s_.ap_retention_seconds);
    auto jobs = sys::prune_finished_jobs(c, wall - s_.job_retention_seconds);
    if (aps || jobs)
      log_("pruned " + std::to_string(aps) + " old availability period(s) and " + std::to_string(jobs) +
           " finished job(s)");
    double every = std::clamp(std::min(s_.ap_retention_seconds, s_.job_retention_seconds) / 4, 1.0, 600.0);
    next_prune_ = now + seconds_ms(every);
  }
  lock.lock();
  busy_ = false;
}

void Uplink::look_at_heartbeat(ts::Client& c, bool at_staleness) {
  const auto t = c.rd(sys::kSpace, sys::scheduler_heartbeat_template(0), 0ms);
  const auto found = t ? sys::SchedulerHeartbeat::from_tuple(*t) : std::nullopt;
  next_look_ = look_after(Clock::now());
  bool woke = false;
  {
    std::lock_guard lock(mu_);
    const auto look = heartbeat_look(view_.scheduler, found, sys::wall_now(), s_.scheduler_stale_seconds);
    if (look.read) {
      read_now_ = true;  // the read says what the view holds
    } else if (look.changed || at_staleness) {
      // A newer heartbeat, or the one the view holds now stale: the agent
      // decides on it.
      view_.scheduler = look.heartbeat;
      view_.generation += 1;
      generation_.store(view_.generation);
      woke = true;
    }
  }
  // Counted once the look is done, so whoever sees the count sees its outcome.
  looks_.fetch_add(1);
  if (at_staleness) stale_looks_.fetch_add(1);
  if (woke) wake_agent();
}

Clock::time_point Uplink::read(ts::Client& c, std::uint64_t holds_written) {
  reads_.fetch_add(1);
  auto steady = Clock::now();
  double now = sys::wall_now();
  // The next moment the View changes by itself: an owner block begins or
  // ends, scheduler 0's heartbeat goes stale.
  double next_change = now + std::chrono::duration<double>(s_.tick).count();
  View v;
  v.holds_written = holds_written;
  for (const auto& t : c.rd_many(sys::kSpace, sys::owner_template(s_.node), 1000)) {
    auto b = sys::OwnerBlock::from_tuple(t);
    if (!b) continue;
    if (b->covers(now)) v.owner_blocked = true;
    for (double edge : {b->start, b->end})
      if (edge > now) next_change = std::min(next_change, edge);
  }

  // The live jobs written since the last read (watch events).
  std::set<std::int64_t> written;
  {
    std::lock_guard lock(mu_);
    written.swap(written_);
  }
  try {
    return read_with(c, v, steady, now, next_change, written);
  } catch (...) {
    // Not read: they are still just written for the next read.
    std::lock_guard lock(mu_);
    written_.merge(written);
    throw;
  }
}

Clock::time_point Uplink::read_with(ts::Client& c, View& v, Clock::time_point steady, double now,
                                    double next_change, const std::set<std::int64_t>& written) {
  std::map<std::int64_t, std::int64_t> tasks_before;
  {
    std::lock_guard lock(mu_);
    tasks_before = view_.tasks_here;
  }
  std::map<std::int64_t, sys::JobLaunch> still;
  auto live = sys::list_live_jobs(c);
  // A job record is absent for a moment while someone rewrites it (the
  // feeder marking it running, a cancel): a job live at the last read whose
  // record is nowhere now is still live, or the agent would retreat its
  // piranhas and start them again; but not for longer than its grace
  // (longer than a rewrite's lease), nor once its launch record is gone too.
  // The same for a job just written (an event before this read) and absent
  // now: its record may be in the middle of its first rewrite.
  std::set<std::int64_t> candidates = written;
  std::set<std::int64_t> ended;  // written again since the listing, no longer live
  for (const auto& [id, launch] : launches_) candidates.insert(id);
  absent_jobs_.begin_read();
  for (std::int64_t id : candidates) {
    if (std::any_of(live.begin(), live.end(), [&](const auto& j) { return j.id == id; })) continue;
    if (auto t = c.rd(sys::kSpace, sys::job_template(id), 0ms)) {
      // Written again since the listing: as it says now.
      if (auto j = sys::JobRecord::from_tuple(*t); j && sys::is_live(j->state))
        live.push_back(*j);
      else
        ended.insert(id);
      continue;
    }
    const auto left = absent_jobs_.absent(id, steady);
    if (left.count() > 0 && c.rd(sys::kSpace, sys::launch_template(id), 0ms)) {
      live.push_back(sys::JobRecord{id, "", "", 0, sys::JobState::Queued});
      // Read again when its grace ends, should nothing else prompt a read.
      next_change = std::min(next_change, now + left.count());
    }
  }
  absent_jobs_.end_read();
  std::stable_sort(live.begin(), live.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  std::map<std::int64_t, double> patience, heard_now;
  for (const auto& j : live) {
    // What this job's part of the view needs, asked together (one wait for
    // a busy server, not five, when 10,000 agents read as a job starts), in
    // the order it is used: its statistics and its patience when it runs,
    // its launch record and requirement when new, the work done here.
    const bool running = j.state == sys::JobState::Running;
    auto known = launches_.find(j.id);
    auto known_patience = patience_.find(j.id);
    std::vector<ts::Template> asks;
    if (running) asks.push_back(sys::jobstat_template(j.id));
    if (running && known_patience == patience_.end()) asks.push_back(sys::jobpatience_template(j.id));
    if (known == launches_.end()) {
      asks.push_back(sys::launch_template(j.id));
      asks.push_back(sys::jobreq_template(j.id));
    }
    asks.push_back(sys::jobwork_template(j.id, s_.node));
    auto answers = c.rd_many_each(sys::kSpace, asks, 8);
    std::size_t next = 0;
    // The first tuple of the next answer, as rd would have returned it.
    const auto first = [&]() -> std::optional<ts::Tuple> {
      auto& a = answers[next++];
      if (a.empty()) return std::nullopt;
      return std::move(a.front());
    };
    // A running job whose feeder is lost (feeder_silence.h) is recorded
    // failed: its piranhas would wait for ever. A silent feeder is not yet a
    // lost one, so its piranhas go on meanwhile with the tasks the server
    // holds; and its silence counts only from when this agent last heard the
    // server come back, for a feeder could not be heard while the server was
    // away either.
    if (running) {
      std::vector<sys::JobStat> stats = sys::decode_all<sys::JobStat>(answers[next++]);
      // A jobstat is absent for a moment while its reporter replaces it: the
      // feeder was heard when the last read found it at the latest, or a read
      // in that moment would schedule no other and miss the feeder's loss.
      // A job first seen running before its reporter's first jobstat: its
      // feeder was heard when it marked the job running, now at the
      // earliest; counted from then, or no read would be scheduled for its
      // loss but the safety net's.
      const auto before = heard_.find(j.id);
      double heard = std::max(feeder_heard(stats, j.id), before != heard_.end() ? before->second : 0.0);
      if (heard <= 0) heard = now;
      heard_now[j.id] = heard;
      // Kept once read. While its record is absent (a feeder writes it
      // before it marks its job running, so hardly ever), the default, and
      // looked for alone in a second (look_at_patience).
      double p = kFeederPatience;
      std::optional<sys::JobPatience> read_patience;
      if (known_patience == patience_.end())
        if (const auto t = first()) read_patience = sys::JobPatience::from_tuple(*t);
      if (known_patience != patience_.end()) {
        p = patience[j.id] = known_patience->second;
      } else if (read_patience) {
        p = patience[j.id] = read_patience->seconds;
        patience_looks_.erase(j.id);
      } else {
        patience_looks_.try_emplace(j.id, PatienceLook{Clock::now() + 1s});
      }
      const double since = std::max(heard, server_back_);
      if (feeder_silent(j.state, since, now, feeder_lost_after(p))) {
        // Not recorded: its record was held by another writer, or it is
        // not running any more; a read in a second says which.
        if (!lose(c, j, heard, p, now)) next_change = std::min(next_change, now + 1);
        continue;
      }
      // Read again when it would count as lost: a jobstat is not watched.
      next_change = std::min(next_change, since + feeder_lost_after(p));
    }
    std::optional<sys::JobLaunch> l;
    if (known != launches_.end()) {
      l = known->second;
    } else if (const auto t = first()) {
      l = sys::JobLaunch::from_tuple(*t);
    }
    const auto requirement = known == launches_.end() ? first() : std::nullopt;
    if (!l) continue;  // registered without a program: nothing to start
    // Its requirement with its launch record, once: written before it, never rewritten.
    if (requirement)
      if (const auto r = sys::JobRequirement::from_tuple(*requirement)) requirements_[j.id] = r->text;
    if (auto r = requirements_.find(j.id); r != requirements_.end()) v.requirements[j.id] = r->second;
    still.emplace(j.id, *l);
    v.live.push_back(*l);
    const auto w = first();
    auto work = w ? sys::JobWork::from_tuple(*w) : std::nullopt;
    // Counts only grow; the record may be absent for a moment while its
    // writer replaces it, or newer in an event already noted.
    auto before = tasks_before.find(j.id);
    v.tasks_here[j.id] = std::max(before != tasks_before.end() ? before->second : 0, work ? work->tasks : 0);
  }
  launches_ = std::move(still);
  std::erase_if(requirements_, [&](const auto& r) { return !launches_.contains(r.first); });
  patience_ = std::move(patience);
  heard_ = std::move(heard_now);

  // The assignments and scheduler 0's heartbeat, asked together.
  const auto last =
      c.rd_many_each(sys::kSpace, {assign_template_, sys::scheduler_heartbeat_template(0)}, 1000);
  for (const auto& t : last[0])
    if (auto a = sys::Assignment::from_tuple(t); a && (!v.assignment || a->epoch > v.assignment->epoch))
      v.assignment = a;
  if (!last[1].empty()) v.scheduler = sys::SchedulerHeartbeat::from_tuple(last[1].front());

  {
    std::lock_guard lock(mu_);
    // Tasks noted from events during the read stay.
    for (auto& [id, n] : v.tasks_here)
      if (auto it = view_.tasks_here.find(id); it != view_.tasks_here.end()) n = std::max(n, it->second);
    // A job written during the read and put into the view from its event
    // (note_new_jobs) stays: the next read, which its event asked for, will
    // know it.
    for (const auto& l : view_.live)
      if (written_.contains(l.id) && !ended.contains(l.id)) {
        insert_by_id(v.live, l);
        if (auto r = view_.requirements.find(l.id); r != view_.requirements.end()) v.requirements.insert(*r);
      }
    v.scheduler = heartbeat_after_read(v.scheduler, view_.scheduler);
    // An assignment from an event during the read may be newer than the read's.
    if (view_.assignment && (!v.assignment || view_.assignment->epoch > v.assignment->epoch))
      v.assignment = view_.assignment;
    // Seen when first learnt: at its event, at an earlier read, or now.
    const bool known = view_.assignment && v.assignment && view_.assignment->epoch == v.assignment->epoch;
    v.assignment_seen = known ? view_.assignment_seen : now;
    // Its staleness is watched by listen() on the heartbeat the looks keep
    // fresh (stale_at_locked()); one stale already is looked at only once.
    if (v.scheduler && v.scheduler->time + s_.scheduler_stale_seconds <= now)
      stale_read_for_ = v.scheduler->time;
    v.generation = view_.generation + 1;
    view_ = std::move(v);
    generation_.store(view_.generation);
  }
  next_look_ = look_after(Clock::now());  // the read was a look at the heartbeat too
  wake_agent();
  // A millisecond late, so that the change has happened when it is read.
  return steady +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(next_change - now)) +
         std::chrono::milliseconds(1);
}

bool Uplink::lose(ts::Client& c, const sys::JobRecord& j, double heard, double patience, double now) {
  char reason[200];
  std::snprintf(reason, sizeof reason,
                "feeder lost: not heard from for %.0f s (last at %.3f), past its patience of %.0f s",
                now - heard, heard, patience);
  if (!sys::lose_job(c, sys::JobLost{j.id, s_.node, reason, now}, j.space)) return false;
  log_("job " + std::to_string(j.id) + " recorded failed: " + reason);
  return true;
}

bool Uplink::on_event(const ts::WatchEvent& e) {
  // A job record is taken only to be written again (a state change) or when
  // a finished job is pruned: its writing is what matters.
  if (sys::job_template().matches(e.tuple)) {
    if (e.kind != ts::WatchEventKind::Written) return false;
    const auto j = sys::JobRecord::from_tuple(e.tuple);
    if (!j) return true;
    // The record the event carries is the whole news: a read per agent per
    // job write was, at 10,000 nodes, 200,000 requests a job (job_written).
    job_written(*j);
    return false;
  }
  if (jobwork_here_template(s_.node).matches(e.tuple)) {
    // Noted at once, without a read: the agent looks when a piranha fails.
    if (auto w = sys::JobWork::from_tuple(e.tuple); w && e.kind == ts::WatchEventKind::Written) {
      std::lock_guard lock(mu_);
      auto& n = view_.tasks_here[w->id];
      n = std::max(n, w->tasks);
    }
    return false;
  }
  if (assign_template_.matches(e.tuple)) {
    // Taken on the node's behalf without a read: the event is the whole
    // news (a read per node per decision was most of the server's work
    // when scheduler 0 moved a pool of thousands). A taken assignment has
    // been superseded by a newer one (the NPS writes the new one first).
    auto a = sys::Assignment::from_tuple(e.tuple);
    if (!a || e.kind != ts::WatchEventKind::Written) return false;
    {
      std::lock_guard lock(mu_);
      if (view_.generation == 0) return true;  // no read yet: the first has it
      if (view_.assignment && view_.assignment->epoch >= a->epoch) return false;
      // Written by a scheduler the view thinks absent or gone: likely back.
      if (!view_.scheduler || view_.scheduler->time + s_.scheduler_stale_seconds < sys::wall_now())
        look_now_ = true;
      view_.assignment = std::move(a);
      view_.assignment_seen = sys::wall_now();
      generation_.store(++view_.generation);
    }
    wake_agent();
    return false;
  }
  if (sys::serving_template(0).matches(e.tuple)) {
    // Scheduler 0 came (written) or went (taken): a read finds its
    // heartbeat, or none. A restarted NPS writes its record before it takes
    // the one its killed predecessor left: that older one's going is no news.
    auto serving = sys::SchedulerServing::from_tuple(e.tuple);
    if (!serving) return true;
    std::lock_guard lock(mu_);
    if (e.kind == ts::WatchEventKind::Written) {
      serving_since_ = std::max(serving_since_, serving->since);
      return true;
    }
    return serving->since >= serving_since_;
  }
  return true;
}

std::optional<double> patience_after_look(std::optional<double> found, int misses) {
  if (found) return found;
  // Absent look after look (a job registered by hand, without one): the
  // default, kept for good.
  if (misses + 1 >= kPatienceLooks) return kFeederPatience;
  return std::nullopt;
}

double patience_look_delay(const std::string& node, std::int64_t job) {
  // By node and job: a job's reads spread over the pool, and a node's over the jobs.
  return kFeederSlack * spread(node, static_cast<std::uint64_t>(job), 8);
}

void Uplink::job_written(const sys::JobRecord& j) {
  if (!sys::is_live(j.state)) {
    // Ended (or held): out of the view at once; nothing to read.
    launches_.erase(j.id);
    requirements_.erase(j.id);
    patience_.erase(j.id);
    patience_looks_.erase(j.id);
    heard_.erase(j.id);
    launchless_.erase(j.id);
    bool dropped = false;
    {
      std::lock_guard lock(mu_);
      written_.erase(j.id);  // no read may keep it for having been written
      const auto it =
          std::find_if(view_.live.begin(), view_.live.end(), [&](const auto& l) { return l.id == j.id; });
      if (view_.generation > 0 && it != view_.live.end()) {
        view_.live.erase(it);
        view_.requirements.erase(j.id);
        generation_.store(++view_.generation);
        dropped = true;
      }
    }
    if (dropped) wake_agent();
    return;
  }
  // Live: a new one is put into the view by note_new_jobs(); a known one
  // rewritten changes nothing the View holds, unless it now runs, when its
  // feeder's silence starts to count (read_with()).
  std::lock_guard lock(mu_);
  written_.insert(j.id);
  if (j.state != sys::JobState::Running) return;
  // Marking it running is hearing its feeder.
  auto& heard = heard_[j.id];
  heard = std::max(heard, sys::wall_now());
  // Read when it could count as lost at the earliest. Its patience unknown
  // yet: looked at alone (one small read, not the view's dozen: at 10,000
  // nodes those were most of the server's work as a job started), within
  // kFeederSlack, before any patience can run out, spread over the pool;
  // the look schedules the read.
  if (const auto p = patience_.find(j.id); p != patience_.end())
    next_read_ = std::min(next_read_, Clock::now() + seconds_ms(feeder_lost_after(p->second)));
  else
    patience_looks_.try_emplace(j.id,
                                PatienceLook{Clock::now() + seconds_ms(patience_look_delay(s_.node, j.id))});
}

void Uplink::look_at_patience(ts::Client& c) {
  const auto now = Clock::now();
  std::vector<std::int64_t> due;
  std::vector<ts::Template> asks;
  for (const auto& [id, look] : patience_looks_)
    if (look.due <= now) {
      due.push_back(id);
      asks.push_back(sys::jobpatience_template(id));
    }
  if (due.empty()) return;
  const auto answers = c.rd_many_each(sys::kSpace, asks, 1);
  const double wall = sys::wall_now();
  for (std::size_t i = 0; i < due.size(); ++i) {
    const auto id = due[i];
    const auto heard = heard_.find(id);
    if (heard == heard_.end()) {  // not running any more
      patience_looks_.erase(id);
      continue;
    }
    const auto found = answers[i].empty() ? std::nullopt : sys::JobPatience::from_tuple(answers[i].front());
    auto& look = patience_looks_.at(id);
    const auto kept = patience_after_look(found ? std::optional(found->seconds) : std::nullopt, look.misses);
    if (!kept) {
      ++look.misses;
      look.due = now + 1s;
      continue;
    }
    const double p = *kept;
    patience_[id] = p;
    patience_looks_.erase(id);
    // A read when its feeder could count as lost: the read judges its
    // silence by its jobstat, which is not watched.
    const double since = std::max(heard->second, server_back_);
    next_read_ = std::min(next_read_, now + seconds_ms(since + feeder_lost_after(p) - wall) + 1ms);
  }
  patience_looks_done_.fetch_add(1);
}

void Uplink::note_new_jobs(ts::Client& c) {
  std::vector<std::int64_t> fresh;
  std::uint64_t generation = 0;
  {
    std::lock_guard lock(mu_);
    generation = view_.generation;
    if (generation == 0) return;  // the first read will have them
    for (std::int64_t id : written_)
      if (!launchless_.contains(id) &&
          std::none_of(view_.live.begin(), view_.live.end(), [&](const auto& l) { return l.id == id; }))
        fresh.push_back(id);
  }
  if (fresh.empty()) return;
  // Each one's launch record and requirement, all asked together: one wait.
  auto found = sys::find_launches(c, fresh);
  std::vector<sys::JobLaunch> launches;
  std::map<std::int64_t, std::string> requirements;
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    if (!found[i].launch) {
      launchless_.insert(fresh[i]);  // written before its job record: never will have one
      continue;
    }
    launches.push_back(std::move(*found[i].launch));
    if (found[i].requirement) requirements[fresh[i]] = std::move(*found[i].requirement);
  }
  if (launches.empty()) return;
  {
    std::lock_guard lock(mu_);
    // A read finished meanwhile: it knows better (the job may have ended).
    if (view_.generation != generation) return;
    for (const auto& l : launches) insert_by_id(view_.live, l);
    view_.requirements.merge(requirements);
    generation_.store(++view_.generation);
  }
  wake_agent();
}

void Uplink::wake_agent() const {
  if (wake_fd_ < 0) return;
  std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

}  // namespace piranha
