#include "piranha/sysspace.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <stdexcept>
#include <thread>

#include "piranha/endpoint.h"

namespace piranha::sys {
namespace {

using ts::Field;
using ts::Type;

Field tag(const char* t) {
  return Field::of(ts::Value(std::string(t)));
}
Field str(const std::string& s) {
  return Field::of(ts::Value(s));
}
Field num(std::int64_t v) {
  return Field::of(ts::Value(v));
}
Field any(Type t) {
  return Field::formal(t);
}

// The fields of `t` when it has the tag and exactly these types.
bool shaped(const ts::Tuple& t, std::string_view tag_name, std::initializer_list<Type> types) {
  if (t.size() != types.size() + 1 || ts::type_of(t[0]) != Type::String || t.get<std::string>(0) != tag_name)
    return false;
  std::size_t i = 1;
  for (Type ty : types)
    if (ts::type_of(t[i++]) != ty) return false;
  return true;
}

const std::string& s_at(const ts::Tuple& t, std::size_t i) {
  return t.get<std::string>(i);
}
std::int64_t i_at(const ts::Tuple& t, std::size_t i) {
  return t.get<std::int64_t>(i);
}
double d_at(const ts::Tuple& t, std::size_t i) {
  return t.get<double>(i);
}

// Large enough for any real pool; rd_many needs a bound.
constexpr std::size_t kListMax = 100'000;

}  // namespace

std::string server_from_env() {
  const char* e = std::getenv("PIRANHA_SERVER");
  return e && *e ? std::string(e) : std::string(kDefaultServer);
}

std::unique_ptr<ts::Client> connect_patiently(const std::string& server, const std::function<bool()>& stopped,
                                              const std::function<void(const std::string&)>& note) {
  if (auto problem = endpoint_problem(server)) throw std::invalid_argument("server: " + *problem);
  using Steady = std::chrono::steady_clock;
  auto next_note = Steady::now();
  while (!stopped()) {
    auto tried = Steady::now();
    try {
      ts::ClientOptions o;
      o.connect_timeout = std::chrono::milliseconds(1000);
      return std::make_unique<ts::Client>(server, o);
    } catch (const ts::TupleSpaceError& e) {
      if (Steady::now() >= next_note) {
        note("waiting for the tuple-space server at " + server + " (" + e.what() + ")");
        next_note = Steady::now() + std::chrono::seconds(10);
      }
    }
    // A refusal can come at once: the pause keeps the loop from spinning.
    while (!stopped() && Steady::now() < tried + std::chrono::seconds(1))
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return nullptr;
}

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string_view name(JobState s) {
  switch (s) {
    case JobState::Queued: return "queued";
    case JobState::Running: return "running";
    case JobState::Done: return "done";
    case JobState::Failed: return "failed";
    case JobState::Cancelled: return "cancelled";
    case JobState::Held: return "held";
  }
  return "?";
}

std::optional<JobState> job_state_from(std::string_view s) {
  for (auto st :
       {JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled, JobState::Held})
    if (name(st) == s) return st;
  return std::nullopt;
}

std::string_view name(NodeState s) {
  switch (s) {
    case NodeState::Available: return "available";
    case NodeState::Unavailable: return "unavailable";
    case NodeState::OwnerBlocked: return "owner-blocked";
    case NodeState::Down: return "down";
  }
  return "?";
}

std::optional<NodeState> node_state_from(std::string_view s) {
  for (auto st : {NodeState::Available, NodeState::Unavailable, NodeState::OwnerBlocked, NodeState::Down})
    if (name(st) == s) return st;
  return std::nullopt;
}

ts::Tuple JobRecord::to_tuple() const {
  return ts::Tuple::of("job", id, name, space, submit_time, std::string(sys::name(state)));
}
std::optional<JobRecord> JobRecord::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "job", {Type::Int, Type::String, Type::String, Type::Double, Type::String}))
    return std::nullopt;
  auto state = job_state_from(s_at(t, 5));
  if (!state) return std::nullopt;
  return JobRecord{i_at(t, 1), s_at(t, 2), s_at(t, 3), d_at(t, 4), *state};
}

ts::Tuple JobLaunch::to_tuple() const {
  std::string packed;
  for (const auto& a : args) {
    packed += a;
    packed.push_back('\0');
  }
  return ts::Tuple::of("jobexec", id, program, ts::Blob(std::move(packed)), cwd);
}
std::optional<JobLaunch> JobLaunch::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobexec", {Type::Int, Type::String, Type::Blob, Type::String})) return std::nullopt;
  JobLaunch l{i_at(t, 1), s_at(t, 2), {}, s_at(t, 4)};
  const std::string& packed = t.get<ts::Blob>(3).bytes;
  std::size_t from = 0;
  while (from < packed.size()) {
    std::size_t nul = packed.find('\0', from);
    if (nul == std::string::npos) nul = packed.size();
    l.args.push_back(packed.substr(from, nul - from));
    from = nul + 1;
  }
  return l;
}

ts::Tuple JobStat::to_tuple() const {
  return ts::Tuple::of("jobstat", id, tasks_done, tasks_left, mean_task_seconds, updated_at);
}
std::optional<JobStat> JobStat::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobstat", {Type::Int, Type::Int, Type::Int, Type::Double, Type::Double}))
    return std::nullopt;
  return JobStat{i_at(t, 1), i_at(t, 2), i_at(t, 3), d_at(t, 4), d_at(t, 5)};
}

ts::Tuple JobWork::to_tuple() const {
  return ts::Tuple::of("jobwork", id, node, tasks, seconds, retreats);
}
std::optional<JobWork> JobWork::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobwork", {Type::Int, Type::String, Type::Int, Type::Double, Type::Int}))
    return std::nullopt;
  return JobWork{i_at(t, 1), s_at(t, 2), i_at(t, 3), d_at(t, 4), i_at(t, 5)};
}

namespace {
// The earlier of two times, where 0 means "not known".
double earliest_known(double a, double b) {
  return a == 0 ? b : b == 0 ? a : std::min(a, b);
}
}  // namespace

JobTimes JobTimes::merged(const JobTimes& other) const {
  return JobTimes{id, earliest_known(start_time, other.start_time), earliest_known(end_time, other.end_time)};
}
ts::Tuple JobTimes::to_tuple() const {
  return ts::Tuple::of("jobtime", id, start_time, end_time);
}
std::optional<JobTimes> JobTimes::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobtime", {Type::Int, Type::Double, Type::Double})) return std::nullopt;
  return JobTimes{i_at(t, 1), d_at(t, 2), d_at(t, 3)};
}

ts::Tuple JobHold::to_tuple() const {
  return ts::Tuple::of("jobheld", id, node, reason, time);
}
std::optional<JobHold> JobHold::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobheld", {Type::Int, Type::String, Type::String, Type::Double})) return std::nullopt;
  return JobHold{i_at(t, 1), s_at(t, 2), s_at(t, 3), d_at(t, 4)};
}

ts::Tuple JobExit::to_tuple() const {
  return ts::Tuple::of("jobexit", id, status);
}
std::optional<JobExit> JobExit::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobexit", {Type::Int, Type::Int})) return std::nullopt;
  return JobExit{i_at(t, 1), i_at(t, 2)};
}

ts::Tuple NodeRecord::to_tuple() const {
  return ts::Tuple::of("node", name, cores, speed, std::string(sys::name(state)), updated_at);
}
std::optional<NodeRecord> NodeRecord::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "node", {Type::String, Type::Int, Type::Double, Type::String, Type::Double}))
    return std::nullopt;
  auto state = node_state_from(s_at(t, 4));
  if (!state) return std::nullopt;
  return NodeRecord{s_at(t, 1), i_at(t, 2), d_at(t, 3), *state, d_at(t, 5)};
}

ts::Tuple AvailabilityPeriod::to_tuple() const {
  return ts::Tuple::of("ap", node, start, end);
}
std::optional<AvailabilityPeriod> AvailabilityPeriod::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "ap", {Type::String, Type::Double, Type::Double})) return std::nullopt;
  return AvailabilityPeriod{s_at(t, 1), d_at(t, 2), d_at(t, 3)};
}

ts::Tuple Assignment::to_tuple() const {
  return ts::Tuple::of("assign", scheduler_id, epoch, node, job_id);
}
std::optional<Assignment> Assignment::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "assign", {Type::Int, Type::Int, Type::String, Type::Int})) return std::nullopt;
  return Assignment{i_at(t, 1), i_at(t, 2), s_at(t, 3), i_at(t, 4)};
}

ts::Tuple NodeRun::to_tuple() const {
  return ts::Tuple::of("running", node, job_id, by, since);
}
std::optional<NodeRun> NodeRun::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "running", {Type::String, Type::Int, Type::String, Type::Double})) return std::nullopt;
  return NodeRun{s_at(t, 1), i_at(t, 2), s_at(t, 3), d_at(t, 4)};
}

ts::Tuple SchedulerHeartbeat::to_tuple() const {
  return ts::Tuple::of("heartbeat", "scheduler", id, time);
}
std::optional<SchedulerHeartbeat> SchedulerHeartbeat::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "heartbeat", {Type::String, Type::Int, Type::Double}) || s_at(t, 1) != "scheduler")
    return std::nullopt;
  return SchedulerHeartbeat{i_at(t, 2), d_at(t, 3)};
}

ts::Tuple AgentHeartbeat::to_tuple() const {
  return ts::Tuple::of("heartbeat", "agent", node, time);
}
std::optional<AgentHeartbeat> AgentHeartbeat::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "heartbeat", {Type::String, Type::String, Type::Double}) || s_at(t, 1) != "agent")
    return std::nullopt;
  return AgentHeartbeat{s_at(t, 2), d_at(t, 3)};
}

ts::Tuple OwnerBlock::to_tuple() const {
  return ts::Tuple::of("owner", node, "block", start, end);
}
std::optional<OwnerBlock> OwnerBlock::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "owner", {Type::String, Type::String, Type::Double, Type::Double}) || s_at(t, 2) != "block")
    return std::nullopt;
  return OwnerBlock{s_at(t, 1), d_at(t, 3), d_at(t, 4)};
}

ts::Tuple Complaint::to_tuple() const {
  return ts::Tuple::of("complaint", node, time, text);
}
std::optional<Complaint> Complaint::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "complaint", {Type::String, Type::Double, Type::String})) return std::nullopt;
  return Complaint{s_at(t, 1), d_at(t, 2), s_at(t, 3)};
}

ts::Tuple EvalRecord::to_tuple() const {
  return ts::Tuple::of("eval", kind, time, json);
}
std::optional<EvalRecord> EvalRecord::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "eval", {Type::String, Type::Double, Type::String})) return std::nullopt;
  return EvalRecord{s_at(t, 1), d_at(t, 2), s_at(t, 3)};
}

ts::Template job_template() {
  return ts::Template({tag("job"), any(Type::Int), any(Type::String), any(Type::String), any(Type::Double),
                       any(Type::String)});
}
ts::Template job_template(std::int64_t id) {
  return ts::Template(
      {tag("job"), num(id), any(Type::String), any(Type::String), any(Type::Double), any(Type::String)});
}
ts::Template job_template(JobState state) {
  return ts::Template({tag("job"), any(Type::Int), any(Type::String), any(Type::String), any(Type::Double),
                       str(std::string(name(state)))});
}
ts::Template launch_template(std::int64_t id) {
  return ts::Template({tag("jobexec"), num(id), any(Type::String), any(Type::Blob), any(Type::String)});
}
ts::Template jobstat_template() {
  return ts::Template(
      {tag("jobstat"), any(Type::Int), any(Type::Int), any(Type::Int), any(Type::Double), any(Type::Double)});
}
ts::Template jobstat_template(std::int64_t id) {
  return ts::Template(
      {tag("jobstat"), num(id), any(Type::Int), any(Type::Int), any(Type::Double), any(Type::Double)});
}
ts::Template jobwork_template(std::int64_t id) {
  return ts::Template(
      {tag("jobwork"), num(id), any(Type::String), any(Type::Int), any(Type::Double), any(Type::Int)});
}
ts::Template jobwork_template(std::int64_t id, const std::string& node) {
  return ts::Template(
      {tag("jobwork"), num(id), str(node), any(Type::Int), any(Type::Double), any(Type::Int)});
}
ts::Template jobtime_template() {
  return ts::Template({tag("jobtime"), any(Type::Int), any(Type::Double), any(Type::Double)});
}
ts::Template jobtime_template(std::int64_t id) {
  return ts::Template({tag("jobtime"), num(id), any(Type::Double), any(Type::Double)});
}
ts::Template jobexit_template() {
  return ts::Template({tag("jobexit"), any(Type::Int), any(Type::Int)});
}
ts::Template jobexit_template(std::int64_t id) {
  return ts::Template({tag("jobexit"), num(id), any(Type::Int)});
}
ts::Template jobheld_template() {
  return ts::Template({tag("jobheld"), any(Type::Int), any(Type::String), any(Type::String), any(Type::Double)});
}
ts::Template jobheld_template(std::int64_t id) {
  return ts::Template({tag("jobheld"), num(id), any(Type::String), any(Type::String), any(Type::Double)});
}
ts::Template node_template() {
  return ts::Template({tag("node"), any(Type::String), any(Type::Int), any(Type::Double), any(Type::String),
                       any(Type::Double)});
}
ts::Template node_template(const std::string& node) {
  return ts::Template(
      {tag("node"), str(node), any(Type::Int), any(Type::Double), any(Type::String), any(Type::Double)});
}
ts::Template ap_template() {
  return ts::Template({tag("ap"), any(Type::String), any(Type::Double), any(Type::Double)});
}
ts::Template ap_template(const std::string& node) {
  return ts::Template({tag("ap"), str(node), any(Type::Double), any(Type::Double)});
}
ts::Template assign_template(std::int64_t scheduler_id, const std::string& node) {
  return ts::Template({tag("assign"), num(scheduler_id), any(Type::Int), str(node), any(Type::Int)});
}
ts::Template scheduler_heartbeat_template(std::int64_t id) {
  return ts::Template({tag("heartbeat"), tag("scheduler"), num(id), any(Type::Double)});
}
ts::Template agent_heartbeat_template(const std::string& node) {
  return ts::Template({tag("heartbeat"), tag("agent"), str(node), any(Type::Double)});
}
ts::Template owner_template(const std::string& node) {
  return ts::Template({tag("owner"), str(node), tag("block"), any(Type::Double), any(Type::Double)});
}
ts::Template running_template(const std::string& node) {
  return ts::Template({tag("running"), str(node), any(Type::Int), any(Type::String), any(Type::Double)});
}
ts::Template complaint_template() {
  return ts::Template({tag("complaint"), any(Type::String), any(Type::Double), any(Type::String)});
}
ts::Template complaint_template(const std::string& node) {
  return ts::Template({tag("complaint"), str(node), any(Type::Double), any(Type::String)});
}
ts::Template eval_template() {
  return ts::Template({tag("eval"), any(Type::String), any(Type::Double), any(Type::String)});
}

std::int64_t next_job_id(ts::Client& c) {
  ts::Template seq({tag("jobseq"), any(Type::Int)});
  ts::Template created({tag("jobseq.created")});
  // The counter is created once, marked by a tuple that stays; after that an
  // absent counter only means another submitter holds it for a moment. (Two
  // submitters racing on a brand-new server could both create it.)
  if (!c.rd(kSpace, created, 0)) {
    std::int64_t first = 1;
    // Ids continue after any job already registered, so a counter lost with
    // a restarted server never reuses an id still in the space.
    for (const auto& j : list_jobs(c)) first = std::max(first, j.id + 1);
    c.out(kSpace, ts::Tuple::of("jobseq.created"));
    c.out(kSpace, ts::Tuple::of("jobseq", first));
  }
  auto t = c.in(kSpace, seq, 10'000, 10'000);
  if (!t) throw ts::TupleSpaceError("timeout", "the job id counter was not returned within 10 s");
  std::int64_t next = t->tuple.get<std::int64_t>(1);
  // Taken under a lease and put back in one atomic step: a submitter that
  // dies in between loses no counter.
  if (!c.complete(t->lease, kSpace, {ts::Tuple::of("jobseq", next + 1)}))
    throw ts::TupleSpaceError("unknown_lease", "the job id counter's lease ended before it was advanced");
  return next;
}


template <class Record>
static std::vector<Record> decode_all(const std::vector<ts::Tuple>& ts) {
  std::vector<Record> out;
  for (const auto& t : ts)
    if (auto r = Record::from_tuple(t)) out.push_back(std::move(*r));
  return out;
}

std::vector<JobRecord> list_jobs(ts::Client& c) {
  return decode_all<JobRecord>(c.rd_many(kSpace, job_template(), kListMax));
}
std::vector<JobRecord> list_live_jobs(ts::Client& c) {
  auto jobs = decode_all<JobRecord>(c.rd_many(kSpace, job_template(JobState::Queued), kListMax));
  auto running = decode_all<JobRecord>(c.rd_many(kSpace, job_template(JobState::Running), kListMax));
  jobs.insert(jobs.end(), running.begin(), running.end());
  std::stable_sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return jobs;
}
std::vector<JobStat> list_jobstats(ts::Client& c) {
  return decode_all<JobStat>(c.rd_many(kSpace, jobstat_template(), kListMax));
}
std::vector<NodeRecord> list_nodes(ts::Client& c) {
  return decode_all<NodeRecord>(c.rd_many(kSpace, node_template(), kListMax));
}
std::vector<JobWork> list_jobwork(ts::Client& c, std::int64_t id) {
  return decode_all<JobWork>(c.rd_many(kSpace, jobwork_template(id), kListMax));
}
std::vector<Complaint> list_complaints(ts::Client& c) {
  auto v = decode_all<Complaint>(c.rd_many(kSpace, complaint_template(), kListMax));
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
  auto t = c.rd(kSpace, launch_template(id), 0);
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
  auto old = c.in_many_leased(kSpace, tmpl, 64, 10'000);
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
  for (const auto& o : old) {
    if (o == t) continue;
    std::vector<ts::Field> exact;
    for (const auto& v : o.fields()) exact.push_back(ts::Field::of(v));
    c.in_many(kSpace, ts::Template(std::move(exact)), 1);
  }
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
  auto t = c.in(kSpace, job_template(id), 1000, 10'000);
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
    replace(c, jobheld_template(hold.id), hold.to_tuple());
    j.state = JobState::Held;
    return true;
  });
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

std::size_t prune_finished_jobs(ts::Client& c, double before) {
  auto times = jobtimes_by_job(c);
  std::size_t pruned = 0;
  for (const auto& j : list_jobs(c)) {
    if (!is_finished(j.state)) continue;
    auto t = times.find(j.id);
    double ended = t != times.end() && t->second.end_time != 0 ? t->second.end_time : j.submit_time;
    if (ended >= before) continue;
    // The job record last: a pruner that dies half way leaves it to be found again.
    for (const auto& tmpl : {launch_template(j.id), jobstat_template(j.id), jobwork_template(j.id),
                             jobtime_template(j.id), jobexit_template(j.id), jobheld_template(j.id)})
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
    ts::Template exact({tag("ap"), str(ap.node), Field::of(ts::Value(ap.start)), Field::of(ts::Value(ap.end))});
    if (c.in(kSpace, exact, 0)) ++pruned;
  }
  return pruned;
}

}  // namespace piranha::sys
