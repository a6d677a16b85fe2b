#include "piranha/runtime/sysspace.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <set>
#include <stdexcept>
#include <thread>
#include <utility>

#include "piranha/base/clock.h"
#include "piranha/base/input_error.h"
#include "piranha/runtime/endpoint.h"
#include "sysspace_fields.h"

using namespace std::chrono_literals;

namespace piranha::sys {
namespace {

using ts::Field;
using ts::Type;

using detail::any;
using detail::str;
using detail::tag;

}  // namespace

std::string server_from_env() {
  const char* e = std::getenv("PIRANHA_SERVER");
  return e && *e ? std::string(e) : std::string(kDefaultServer);
}

std::unique_ptr<ts::Client> connect_patiently(const std::string& server, const std::function<bool()>& stopped,
                                              const std::function<void(const std::string&)>& note,
                                              int interrupt_fd, bool served_first) {
  if (auto problem = endpoint_problem(server)) throw InputError("server", *problem);
  auto next_note = Clock::now();
  while (!stopped()) {
    auto tried = Clock::now();
    try {
      ts::ClientOptions o;
      o.connect_timeout = std::chrono::milliseconds(1000);
      o.interrupt_fd = interrupt_fd;
      o.served_first = served_first;
      return std::make_unique<ts::Client>(server, o);
    } catch (const ts::TupleSpaceError& e) {
      if (e.code() == ts::Code::WrongPool) throw;     // waiting will not change the server's pool
      if (e.code() == ts::Code::NotPermitted) throw;  // nor its keys' roles (served_first)
      if (e.code() == ts::Code::Interrupted) break;   // asked to stop meanwhile
      if (Clock::now() >= next_note) {
        note("waiting for the tuple-space server at " + server + " (" + e.what() + ")");
        next_note = Clock::now() + std::chrono::seconds(10);
      }
    }
    // A refusal can come at once: the pause keeps the loop from spinning.
    while (!stopped() && Clock::now() < tried + std::chrono::seconds(1))
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return nullptr;
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::int64_t next_job_id(ts::Client& c) {
  ts::Template seq({tag("jobseq"), any(Type::Int)});
  ts::Template created({tag("jobseq.created")});
  // The counter is created once, marked by a tuple that stays; after that an
  // absent counter only means another submitter holds it for a moment. (Two
  // submitters racing on a brand-new server could both create it.)
  if (!c.rd(kSpace, created, 0ms)) {
    std::int64_t first = 1;
    // Ids continue after any job already registered, so a counter lost with
    // a restarted server never reuses an id still in the space.
    for (const auto& j : list_jobs(c)) first = std::max(first, j.id + 1);
    // In one step: a counter is never without its mark, nor the mark without
    // a counter (an authenticated server lets only the first creator write
    // either: docs/security.md).
    c.out_many(kSpace, {ts::Tuple::of("jobseq", first), ts::Tuple::of("jobseq.created")});
  }
  auto t = c.in(kSpace, seq, 10s, 10s);
  if (!t) throw ts::TupleSpaceError(ts::Code::Timeout, "the job id counter was not returned within 10 s");
  std::int64_t next = t->tuple.get<std::int64_t>(1);
  // Taken under a lease and put back in one atomic step: a submitter that
  // dies in between loses no counter.
  if (!c.complete(t->lease, kSpace, {ts::Tuple::of("jobseq", next + 1)}))
    throw ts::TupleSpaceError(ts::Code::UnknownLease,
                              "the job id counter's lease ended before it was advanced");
  return next;
}

namespace {

// Job `id`'s record, waited for with a blocking rd until `deadline`: one
// taken to be rewritten is back within a round trip of its taker.
std::optional<JobRecord> record_by(ts::Client& c, std::int64_t id,
                                   std::chrono::steady_clock::time_point deadline) {
  const auto left =
      std::max(std::chrono::steady_clock::duration::zero(), deadline - std::chrono::steady_clock::now());
  const auto back =
      c.rd(kSpace, job_template(id), std::chrono::duration_cast<std::chrono::milliseconds>(left));
  return back ? JobRecord::from_tuple(*back) : std::nullopt;
}

}  // namespace

std::vector<JobRecord> list_jobs(ts::Client& c) {
  // The launch records in the same request: one wait.
  const auto listed = c.rd_many_each(kSpace, {job_template(), launch_template()}, kListMax);
  auto jobs = decode_all<JobRecord>(listed[0]);
  std::set<std::int64_t> listed_ids;
  for (const auto& j : jobs) listed_ids.insert(j.id);
  const auto deadline = std::chrono::steady_clock::now() + kRewriteWait;
  for (const auto& t : listed[1]) {
    const auto launch = JobLaunch::from_tuple(t);
    if (!launch || !listed_ids.insert(launch->id).second) continue;
    if (auto j = record_by(c, launch->id, deadline)) jobs.push_back(std::move(*j));
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return jobs;
}
std::vector<JobRecord> list_live_jobs(ts::Client& c) {
  // Both asked at once: one wait for a busy server, not two.
  const auto listed =
      c.rd_many_each(kSpace, {job_template(JobState::Queued), job_template(JobState::Running)}, kListMax);
  auto jobs = decode_all<JobRecord>(listed[0]);
  auto running = decode_all<JobRecord>(listed[1]);
  jobs.insert(jobs.end(), running.begin(), running.end());
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return jobs;
}
std::vector<JobRecord> list_live_jobs(ts::Client& c, const std::set<std::int64_t>& known) {
  auto jobs = list_live_jobs(c);
  std::set<std::int64_t> listed;
  for (const auto& j : jobs) listed.insert(j.id);
  const auto deadline = std::chrono::steady_clock::now() + kRewriteWait;
  for (std::int64_t id : known) {
    if (listed.contains(id)) continue;
    // An ended job's record is there at once.
    if (auto j = record_by(c, id, deadline); j && is_live(j->state)) jobs.push_back(std::move(*j));
  }
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return jobs;
}
std::vector<JobStat> list_jobstats(ts::Client& c) {
  return decode_all<JobStat>(c.rd_many(kSpace, jobstat_template(), kListMax));
}
std::vector<NodeRecord> list_nodes(ts::Client& c) {
  return decode_all<NodeRecord>(c.rd_many(kSpace, node_template(), kListMax));
}
std::vector<NodeAttrs> list_node_attrs(ts::Client& c) {
  return decode_all<NodeAttrs>(c.rd_many(kSpace, nodeattr_template(), kListMax));
}
bool publish_node_attrs(ts::Client& c, const NodeAttrs& attrs) {
  const auto there = decode_all<NodeAttrs>(c.rd_many(kSpace, nodeattr_template(attrs.node), 10));
  if (there.size() == 1 && there.front() == attrs) return false;
  replace(c, nodeattr_template(attrs.node), attrs.to_tuple());
  return true;
}
std::vector<AgentHeartbeat> list_agent_heartbeats(ts::Client& c) {
  return decode_all<AgentHeartbeat>(c.rd_many(kSpace, agent_heartbeat_template(), kListMax));
}
std::vector<AgentBeat> list_agent_beats(ts::Client& c) {
  return decode_all<AgentBeat>(c.rd_many(kSpace, agentbeat_template(), kListMax));
}
std::vector<NodeRun> list_running(ts::Client& c) {
  return decode_all<NodeRun>(c.rd_many(kSpace, running_template(), kListMax));
}
std::vector<NodeReason> list_node_reasons(ts::Client& c) {
  return decode_all<NodeReason>(c.rd_many(kSpace, nodewhy_template(), kListMax));
}
namespace {

// One record per job and node, the one with more tasks where a node's is
// found twice (KeyedSuperseder writes the new one before it takes the old).
std::vector<JobWork> one_per_node(std::vector<JobWork> all) {
  std::vector<JobWork> kept;
  std::map<std::pair<std::int64_t, std::string>, std::size_t> at;
  for (auto& w : all) {
    auto [it, fresh] = at.try_emplace({w.id, w.node}, kept.size());
    if (fresh)
      kept.push_back(std::move(w));
    else if (w.tasks > kept[it->second].tasks)
      kept[it->second] = std::move(w);
  }
  return kept;
}

}  // namespace

std::vector<JobWork> list_jobwork(ts::Client& c) {
  return one_per_node(decode_all<JobWork>(c.rd_many(kSpace, jobwork_template(), kListMax)));
}
std::vector<JobWork> list_jobwork(ts::Client& c, std::int64_t id) {
  return one_per_node(decode_all<JobWork>(c.rd_many(kSpace, jobwork_template(id), kListMax)));
}
std::vector<Complaint> list_complaints(ts::Client& c) {
  return complaints_in_time_order(c.rd_many(kSpace, complaint_template(), kListMax));
}
std::vector<Complaint> complaints_in_time_order(const std::vector<ts::Tuple>& ts) {
  auto v = decode_all<Complaint>(ts);
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  return v;
}
std::vector<EvalRecord> list_eval_records(ts::Client& c) {
  auto v = decode_all<EvalRecord>(c.rd_many(kSpace, eval_template(), kListMax));
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.time < b.time; });
  return v;
}
std::map<std::int64_t, JobTimes> jobtimes_by_job(ts::Client& c) {
  std::map<std::int64_t, JobTimes> out;
  for (const auto& t : decode_all<JobTimes>(c.rd_many(kSpace, jobtime_template(), kListMax))) {
    auto [it, fresh] = out.try_emplace(t.id, t);
    if (!fresh) it->second = it->second.merged(t);
  }
  return out;
}
std::optional<JobTimes> find_jobtimes(ts::Client& c, std::int64_t id) {
  std::optional<JobTimes> m;
  for (const auto& t : decode_all<JobTimes>(c.rd_many(kSpace, jobtime_template(id), kListMax)))
    m = m ? m->merged(t) : t;
  return m;
}
std::optional<JobLaunch> find_launch(ts::Client& c, std::int64_t id) {
  auto t = c.rd(kSpace, launch_template(id), 0ms);
  if (!t) return std::nullopt;
  return JobLaunch::from_tuple(*t);
}

namespace {

// Takes every tuple matching `tmpl` under a lease (without waiting) and
// writes make(those tuples) in their place with the first one's completion,
// in one step: a writer that dies between the two loses nothing. Duplicates
// (from writers that raced on an absent tuple) are folded away. Writes the
// new tuple plainly when none matched.
template <class Make>
void rewrite(ts::Client& c, const ts::Template& tmpl, Make make) {
  auto old = c.in_many_leased(kSpace, tmpl, 64, 0ms, 10s);
  std::vector<ts::Tuple> taken;
  for (const auto& l : old) taken.push_back(l.tuple);
  ts::Tuple t = make(taken);
  if (old.empty()) {
    c.out(kSpace, t);
    return;
  }
  for (std::size_t i = 1; i < old.size(); ++i) c.complete(old[i].lease, kSpace, {});
  if (!c.complete(old[0].lease, kSpace, {t})) c.out(kSpace, t);
}

}  // namespace

void replace(ts::Client& c, const ts::Template& tmpl, const ts::Tuple& t) {
  rewrite(c, tmpl, [&](const std::vector<ts::Tuple>&) { return t; });
}

void supersede(ts::Client& c, const ts::Template& tmpl, const ts::Tuple& t) {
  const auto old = c.rd_many(kSpace, tmpl, 1000);
  c.out(kSpace, t);
  for (const auto& o : old)
    if (o != t) c.in_many(kSpace, ts::Template::exactly(o), 1);
}

void Superseder::write(ts::Client& c, const ts::Tuple& t) {
  if (!known_ || c.reconnects() != sessions_) {
    known_.reset();
    supersede(c, tmpl_, t);
  } else {
    c.out_posted(kSpace, t);
    for (const auto& o : *known_)
      if (o != t) c.discard_posted(kSpace, ts::Template::exactly(o));
  }
  known_ = std::vector<ts::Tuple>{t};
  sessions_ = c.reconnects();
}

void Superseder::know(const ts::Client& c, std::vector<ts::Tuple> present) {
  known_ = std::move(present);
  sessions_ = c.reconnects();
}

void KeyedSuperseder::write(ts::Client& c, const std::vector<ts::Tuple>& batch) {
  if (batch.empty()) return;
  // Taken out until this write is done: an error leaves it unknown.
  auto known = std::exchange(known_, std::nullopt);
  if (c.reconnects() != sessions_) known.reset();
  if (!known) {
    known.emplace();
    for (auto& t : c.rd_many(kSpace, family_, kListMax)) (*known)[key_(t)].push_back(std::move(t));
  }
  const auto sessions = c.reconnects();
  c.out_many(kSpace, batch);
  for (const auto& t : batch) {
    // Each old one, even one equal to t (written by a write whose answer
    // was lost, then read): the new copy stays, and only it.
    auto& olds = (*known)[key_(t)];
    for (const auto& o : olds) c.discard_posted(kSpace, ts::Template::exactly(o));
    olds = {t};
  }
  // A session lost during the out_many: what its retry left is read next time.
  if (c.reconnects() != sessions) return;
  known_ = std::move(known);
  sessions_ = sessions;
}

void record_job_times(ts::Client& c, const JobTimes& times) {
  rewrite(c, jobtime_template(times.id), [&](const std::vector<ts::Tuple>& old) {
    JobTimes m = times;
    for (const auto& t : old)
      if (auto r = JobTimes::from_tuple(t)) m = m.merged(*r);
    return m.to_tuple();
  });
}

namespace {

// Takes the job's record under a lease and, when `change` accepts it (and
// rewrites it), writes the new record with the completion; otherwise puts
// it back untouched. Returns whether it changed.
template <class Change>
bool change_job(ts::Client& c, std::int64_t id, Change change) {
  auto t = c.in(kSpace, job_template(id), 1s, 10s);
  if (!t) return false;
  auto job = JobRecord::from_tuple(t->tuple);
  if (!job || !change(*job)) {
    c.complete(t->lease, kSpace, {t->tuple});
    return false;
  }
  return c.complete(t->lease, kSpace, {job->to_tuple()});
}

}  // namespace

bool set_job_state(ts::Client& c, std::int64_t id, JobState state) {
  return change_job(c, id, [&](JobRecord& j) {
    j.state = state;
    return true;
  });
}

bool hold_job(ts::Client& c, const JobHold& hold) {
  return change_job(c, hold.id, [&](JobRecord& j) {
    if (!is_live(j.state)) return false;
    // Written while the job record is taken: whoever reads `held` finds why.
    replace(c, jobheld_template(hold.id, hold.node), hold.to_tuple());
    j.state = JobState::Held;
    return true;
  });
}

bool lose_job(ts::Client& c, const JobLost& lost, const std::string& space) {
  bool recorded = change_job(c, lost.id, [&](JobRecord& j) {
    if (j.state != JobState::Running) return false;
    // Written while the job record is taken: whoever reads `failed` finds why.
    // Plainly: only the taker of a running record writes one (a duplicate
    // left by an attempt that failed after it is harmless: readers keep one).
    c.out(kSpace, lost.to_tuple());
    j.state = JobState::Failed;
    return true;
  });
  if (!recorded) return false;
  record_job_times(c, JobTimes{lost.id, 0, lost.time});
  // Ends the piranhas' waits. The job's own space, so refused only on a
  // server whose rules keep it from this client: the piranhas then stop at
  // their next look at the job record, a second later.
  try {
    c.remove(space);
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() != ts::Code::NotPermitted) throw;
  }
  return true;
}

bool release_job(ts::Client& c, std::int64_t id, JobState state) {
  bool released = change_job(c, id, [&](JobRecord& j) {
    if (j.state != JobState::Held) return false;
    j.state = state;
    return true;
  });
  if (released) c.in_many(kSpace, jobheld_template(id), kListMax);
  return released;
}

std::map<std::int64_t, std::int64_t> exit_status_by_job(ts::Client& c) {
  std::map<std::int64_t, std::int64_t> out;
  for (auto& e : decode_all<JobExit>(c.rd_many(kSpace, jobexit_template(), kListMax))) out[e.id] = e.status;
  return out;
}

std::map<std::int64_t, JobHold> holds_by_job(ts::Client& c) {
  std::map<std::int64_t, JobHold> out;
  for (auto& h : decode_all<JobHold>(c.rd_many(kSpace, jobheld_template(), kListMax))) out[h.id] = h;
  return out;
}

std::map<std::int64_t, JobLost> losses_by_job(ts::Client& c) {
  std::map<std::int64_t, JobLost> out;
  for (auto& l : decode_all<JobLost>(c.rd_many(kSpace, joblost_template(), kListMax))) out[l.id] = l;
  return out;
}

std::map<std::int64_t, std::string> requirements_by_job(ts::Client& c) {
  std::map<std::int64_t, std::string> out;
  for (auto& r : decode_all<JobRequirement>(c.rd_many(kSpace, jobreq_template(), kListMax)))
    out[r.id] = std::move(r.text);
  return out;
}

std::vector<LaunchAndRequirement> find_launches(ts::Client& c, const std::vector<std::int64_t>& ids) {
  if (ids.empty()) return {};
  std::vector<ts::Template> asks;
  for (std::int64_t id : ids) {
    asks.push_back(launch_template(id));
    asks.push_back(jobreq_template(id));
  }
  const auto answers = c.rd_many_each(kSpace, asks, 1);
  std::vector<LaunchAndRequirement> out(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const auto& launch = answers[2 * i];
    const auto& requirement = answers[2 * i + 1];
    if (!launch.empty()) out[i].launch = JobLaunch::from_tuple(launch.front());
    if (!requirement.empty())
      if (auto r = JobRequirement::from_tuple(requirement.front())) out[i].requirement = std::move(r->text);
  }
  return out;
}

std::optional<double> find_patience(ts::Client& c, std::int64_t id) {
  auto t = c.rd(kSpace, jobpatience_template(id), 0ms);
  auto p = t ? JobPatience::from_tuple(*t) : std::nullopt;
  if (!p) return std::nullopt;
  return p->seconds;
}

std::size_t prune_finished_jobs(ts::Client& c, double before) {
  auto times = jobtimes_by_job(c);
  std::size_t pruned = 0;
  for (const auto& j : list_jobs(c)) {
    if (!is_finished(j.state)) continue;
    auto t = times.find(j.id);
    double ended = t != times.end() && t->second.end_time != 0 ? t->second.end_time : j.submit_time;
    if (ended >= before) continue;
    // The job record last: a pruner that dies half way leaves it to be found again.
    for (const auto& tmpl :
         {launch_template(j.id), jobreq_template(j.id), jobstat_template(j.id), jobwork_template(j.id),
          jobtime_template(j.id), jobexit_template(j.id), jobheld_template(j.id), jobpatience_template(j.id),
          joblost_template(j.id), jobkey_template(j.id), jobowner_template(j.id)})
      c.in_many(kSpace, tmpl, kListMax);
    c.in_many(kSpace, job_template(j.id), kListMax);
    ++pruned;
  }
  return pruned;
}

std::size_t prune_availability(ts::Client& c, const std::string& node, double before) {
  std::size_t pruned = 0;
  for (const auto& ap : decode_all<AvailabilityPeriod>(c.rd_many(kSpace, ap_template(node), kListMax))) {
    if (ap.end >= before) continue;
    ts::Template exact(
        {tag("ap"), str(ap.node), Field::of(ts::Value(ap.start)), Field::of(ts::Value(ap.end))});
    if (c.in(kSpace, exact, 0ms)) ++pruned;
  }
  return pruned;
}

}  // namespace piranha::sys
