// The system space's schema: each record's to_tuple / from_tuple and the
// templates (sysspace.h). No I/O: the operations on a live system space are
// in sysspace.cc.
#include <algorithm>

#include "piranha/runtime/sysspace.h"
#include "sysspace_fields.h"

namespace piranha::sys {
namespace {

using detail::any;
using detail::num;
using detail::str;
using detail::tag;
using ts::Field;
using ts::Type;

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

}  // namespace

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
  for (auto st : {JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled,
                  JobState::Held})
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
  return ts::Tuple::of("jobwork", id, node, tasks, seconds, retreats, owner_retreats);
}
std::optional<JobWork> JobWork::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobwork", {Type::Int, Type::String, Type::Int, Type::Double, Type::Int, Type::Int}))
    return std::nullopt;
  return JobWork{i_at(t, 1), s_at(t, 2), i_at(t, 3), d_at(t, 4), i_at(t, 5), i_at(t, 6)};
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

ts::Tuple JobPatience::to_tuple() const {
  return ts::Tuple::of("jobpatience", id, seconds);
}
std::optional<JobPatience> JobPatience::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobpatience", {Type::Int, Type::Double})) return std::nullopt;
  return JobPatience{i_at(t, 1), d_at(t, 2)};
}

ts::Tuple JobKey::to_tuple() const {
  return ts::Tuple::of("jobkey", id, node, public_key);
}
std::optional<JobKey> JobKey::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobkey", {Type::Int, Type::String, Type::String})) return std::nullopt;
  return JobKey{i_at(t, 1), s_at(t, 2), s_at(t, 3)};
}
ts::Tuple JobLost::to_tuple() const {
  return ts::Tuple::of("joblost", id, node, reason, time);
}
std::optional<JobLost> JobLost::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "joblost", {Type::Int, Type::String, Type::String, Type::Double})) return std::nullopt;
  return JobLost{i_at(t, 1), s_at(t, 2), s_at(t, 3), d_at(t, 4)};
}

ts::Tuple JobOwner::to_tuple() const {
  return ts::Tuple::of("jobowner", id, name);
}
std::optional<JobOwner> JobOwner::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobowner", {Type::Int, Type::String})) return std::nullopt;
  return JobOwner{i_at(t, 1), s_at(t, 2)};
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

ts::Tuple SchedulerServing::to_tuple() const {
  return ts::Tuple::of("serving", id, since);
}
std::optional<SchedulerServing> SchedulerServing::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "serving", {Type::Int, Type::Double})) return std::nullopt;
  return SchedulerServing{i_at(t, 1), d_at(t, 2)};
}

ts::Tuple AgentHeartbeat::to_tuple() const {
  return ts::Tuple::of("heartbeat", "agent", node, time);
}
std::optional<AgentHeartbeat> AgentHeartbeat::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "heartbeat", {Type::String, Type::String, Type::Double}) || s_at(t, 1) != "agent")
    return std::nullopt;
  return AgentHeartbeat{s_at(t, 2), d_at(t, 3)};
}

ts::Tuple NodeReason::to_tuple() const {
  return ts::Tuple::of("nodewhy", node, state, reason, since);
}
std::optional<NodeReason> NodeReason::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "nodewhy", {Type::String, Type::String, Type::String, Type::Double})) return std::nullopt;
  return NodeReason{s_at(t, 1), s_at(t, 2), s_at(t, 3), d_at(t, 4)};
}

ts::Tuple NodeAttrs::to_tuple() const {
  std::string joined;
  for (const auto& l : labels) joined += (joined.empty() ? "" : ",") + l;
  return ts::Tuple::of("nodeattr", node, cores, memory, arch, joined);
}
std::optional<NodeAttrs> NodeAttrs::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "nodeattr", {Type::String, Type::Int, Type::Int, Type::String, Type::String}))
    return std::nullopt;
  NodeAttrs a{s_at(t, 1), i_at(t, 2), i_at(t, 3), s_at(t, 4), {}};
  const std::string& joined = s_at(t, 5);
  for (std::size_t at = 0; at < joined.size();) {
    const std::size_t comma = std::min(joined.find(',', at), joined.size());
    if (comma > at) a.labels.push_back(joined.substr(at, comma - at));
    at = comma + 1;
  }
  return a;
}

ts::Tuple JobRequirement::to_tuple() const {
  return ts::Tuple::of("jobreq", id, text);
}
std::optional<JobRequirement> JobRequirement::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "jobreq", {Type::Int, Type::String})) return std::nullopt;
  return JobRequirement{i_at(t, 1), s_at(t, 2)};
}

ts::Tuple AgentBeat::to_tuple() const {
  return ts::Tuple::of("agentbeat", node, seconds);
}
std::optional<AgentBeat> AgentBeat::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "agentbeat", {Type::String, Type::Double})) return std::nullopt;
  return AgentBeat{s_at(t, 1), d_at(t, 2)};
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
ts::Template launch_template() {
  return ts::Template(
      {tag("jobexec"), any(Type::Int), any(Type::String), any(Type::Blob), any(Type::String)});
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
ts::Template jobwork_template() {
  return ts::Template({tag("jobwork"), any(Type::Int), any(Type::String), any(Type::Int), any(Type::Double),
                       any(Type::Int), any(Type::Int)});
}
ts::Template jobwork_template(std::int64_t id) {
  return ts::Template({tag("jobwork"), num(id), any(Type::String), any(Type::Int), any(Type::Double),
                       any(Type::Int), any(Type::Int)});
}
ts::Template jobwork_template(std::int64_t id, const std::string& node) {
  return ts::Template({tag("jobwork"), num(id), str(node), any(Type::Int), any(Type::Double), any(Type::Int),
                       any(Type::Int)});
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
  return ts::Template(
      {tag("jobheld"), any(Type::Int), any(Type::String), any(Type::String), any(Type::Double)});
}
ts::Template jobheld_template(std::int64_t id) {
  return ts::Template({tag("jobheld"), num(id), any(Type::String), any(Type::String), any(Type::Double)});
}
ts::Template jobheld_template(std::int64_t id, const std::string& node) {
  return ts::Template({tag("jobheld"), num(id), str(node), any(Type::String), any(Type::Double)});
}
ts::Template jobowner_template(std::int64_t id) {
  return ts::Template({tag("jobowner"), num(id), any(Type::String)});
}
ts::Template jobpatience_template(std::int64_t id) {
  return ts::Template({tag("jobpatience"), num(id), any(Type::Double)});
}
ts::Template jobkeys_template(const std::string& node) {
  return ts::Template({tag("jobkey"), any(Type::Int), str(node), any(Type::String)});
}
ts::Template jobkey_template(std::int64_t id) {
  return ts::Template({tag("jobkey"), num(id), any(Type::String), any(Type::String)});
}
ts::Template jobkey_template(std::int64_t id, const std::string& node) {
  return ts::Template({tag("jobkey"), num(id), str(node), any(Type::String)});
}
ts::Template jobkey_template(const std::string& public_key) {
  return ts::Template({tag("jobkey"), any(Type::Int), any(Type::String), str(public_key)});
}
ts::Template joblost_template() {
  return ts::Template(
      {tag("joblost"), any(Type::Int), any(Type::String), any(Type::String), any(Type::Double)});
}
ts::Template joblost_template(std::int64_t id) {
  return ts::Template({tag("joblost"), num(id), any(Type::String), any(Type::String), any(Type::Double)});
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
ts::Template assign_template(std::int64_t scheduler_id) {
  return ts::Template({tag("assign"), num(scheduler_id), any(Type::Int), any(Type::String), any(Type::Int)});
}
ts::Template assign_template(std::int64_t scheduler_id, const std::string& node) {
  return ts::Template({tag("assign"), num(scheduler_id), any(Type::Int), str(node), any(Type::Int)});
}
ts::Template scheduler_heartbeat_template(std::int64_t id) {
  return ts::Template({tag("heartbeat"), tag("scheduler"), num(id), any(Type::Double)});
}
ts::Template serving_template(std::int64_t id) {
  return ts::Template({tag("serving"), num(id), any(Type::Double)});
}
ts::Template agent_heartbeat_template() {
  return ts::Template({tag("heartbeat"), tag("agent"), any(Type::String), any(Type::Double)});
}
ts::Template owner_template() {
  return ts::Template({tag("owner"), any(Type::String), tag("block"), any(Type::Double), any(Type::Double)});
}
ts::Template running_template() {
  return ts::Template(
      {tag("running"), any(Type::String), any(Type::Int), any(Type::String), any(Type::Double)});
}
ts::Template agent_heartbeat_template(const std::string& node) {
  return ts::Template({tag("heartbeat"), tag("agent"), str(node), any(Type::Double)});
}
ts::Template nodewhy_template() {
  return ts::Template(
      {tag("nodewhy"), any(Type::String), any(Type::String), any(Type::String), any(Type::Double)});
}
ts::Template nodewhy_template(const std::string& node) {
  return ts::Template({tag("nodewhy"), str(node), any(Type::String), any(Type::String), any(Type::Double)});
}
ts::Template nodeattr_template() {
  return ts::Template({tag("nodeattr"), any(Type::String), any(Type::Int), any(Type::Int), any(Type::String),
                       any(Type::String)});
}
ts::Template nodeattr_template(const std::string& node) {
  return ts::Template(
      {tag("nodeattr"), str(node), any(Type::Int), any(Type::Int), any(Type::String), any(Type::String)});
}
ts::Template jobreq_template() {
  return ts::Template({tag("jobreq"), any(Type::Int), any(Type::String)});
}
ts::Template jobreq_template(std::int64_t id) {
  return ts::Template({tag("jobreq"), num(id), any(Type::String)});
}

ts::Template agentbeat_template() {
  return ts::Template({tag("agentbeat"), any(Type::String), any(Type::Double)});
}
ts::Template agentbeat_template(const std::string& node) {
  return ts::Template({tag("agentbeat"), str(node), any(Type::Double)});
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
ts::Tuple SubnetReport::to_tuple() const {
  return ts::Tuple::of("subnet", time, json);
}
std::optional<SubnetReport> SubnetReport::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "subnet", {Type::Double, Type::String})) return std::nullopt;
  return SubnetReport{d_at(t, 1), s_at(t, 2)};
}

ts::Tuple CampusLoan::to_tuple() const {
  // The arguments packed as jobexec packs them.
  const ts::Tuple launch = JobLaunch{job, program, args, cwd}.to_tuple();
  return ts::Tuple::of("loan", campus, borrower, server, job, nodes, program, launch.get<ts::Blob>(3), cwd,
                       key, expires, requirement);
}
std::optional<CampusLoan> CampusLoan::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "loan",
              {Type::String, Type::String, Type::String, Type::Int, Type::Int, Type::String, Type::Blob,
               Type::String, Type::String, Type::Double, Type::String}))
    return std::nullopt;
  const auto launch =
      JobLaunch::from_tuple(ts::Tuple::of("jobexec", i_at(t, 4), s_at(t, 6), t.get<ts::Blob>(7), s_at(t, 8)));
  return CampusLoan{s_at(t, 1),   s_at(t, 2), s_at(t, 3), i_at(t, 4),  i_at(t, 5), s_at(t, 6),
                    launch->args, s_at(t, 8), s_at(t, 9), d_at(t, 10), s_at(t, 11)};
}

ts::Tuple Lent::to_tuple() const {
  return ts::Tuple::of("lent", node, borrower, job, epoch);
}
std::optional<Lent> Lent::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "lent", {Type::String, Type::String, Type::Int, Type::Int})) return std::nullopt;
  return Lent{s_at(t, 1), s_at(t, 2), i_at(t, 3), i_at(t, 4)};
}

ts::Tuple AgentKey::to_tuple() const {
  return ts::Tuple::of("agentkey", node, public_key);
}
std::optional<AgentKey> AgentKey::from_tuple(const ts::Tuple& t) {
  if (!shaped(t, "agentkey", {Type::String, Type::String})) return std::nullopt;
  return AgentKey{s_at(t, 1), s_at(t, 2)};
}

std::string LoanKey::to_text() const {
  std::string out = server_key;
  for (const auto& [node, key] : sealed) out += " " + node + " " + key;
  return out;
}
std::optional<LoanKey> LoanKey::from_text(std::string_view text) {
  std::vector<std::string> tokens;
  for (std::size_t at = 0; at <= text.size();) {
    std::size_t end = std::min(text.find(' ', at), text.size());
    tokens.emplace_back(text.substr(at, end - at));
    if (tokens.back().empty()) return std::nullopt;
    at = end + 1;
  }
  if (tokens.size() % 2 != 1) return std::nullopt;
  LoanKey k{tokens[0], {}};
  for (std::size_t i = 1; i + 1 < tokens.size(); i += 2)
    if (!k.sealed.emplace(tokens[i], tokens[i + 1]).second) return std::nullopt;
  return k;
}

ts::Template subnet_template() {
  return ts::Template({tag("subnet"), any(Type::Double), any(Type::String)});
}
ts::Template loan_template() {
  return ts::Template({tag("loan"), any(Type::String), any(Type::String), any(Type::String), any(Type::Int),
                       any(Type::Int), any(Type::String), any(Type::Blob), any(Type::String),
                       any(Type::String), any(Type::Double), any(Type::String)});
}
ts::Template loan_template(const std::string& campus, const std::string& borrower, std::int64_t job) {
  return ts::Template({tag("loan"), str(campus), str(borrower), any(Type::String), num(job), any(Type::Int),
                       any(Type::String), any(Type::Blob), any(Type::String), any(Type::String),
                       any(Type::Double), any(Type::String)});
}
ts::Template lent_template() {
  return ts::Template({tag("lent"), any(Type::String), any(Type::String), any(Type::Int), any(Type::Int)});
}
ts::Template lent_template(const std::string& node) {
  return ts::Template({tag("lent"), str(node), any(Type::String), any(Type::Int), any(Type::Int)});
}
ts::Template agentkey_template() {
  return ts::Template({tag("agentkey"), any(Type::String), any(Type::String)});
}
ts::Template agentkey_template(const std::string& node) {
  return ts::Template({tag("agentkey"), str(node), any(Type::String)});
}

ts::Template eval_template() {
  return ts::Template({tag("eval"), any(Type::String), any(Type::Double), any(Type::String)});
}

}  // namespace piranha::sys
