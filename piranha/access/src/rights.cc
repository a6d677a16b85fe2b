#include "piranha/access/rights.h"

#include <algorithm>
#include <charconv>

#include "piranha/tuplespace/curve.h"

namespace piranha::rights {
namespace {

using ts::Op;

const std::string kSystem(sys::kSpace);
constexpr std::string_view kTakenPrefix = "_taken.";

// The tags of a job's records in the system space; field 1 is the job id.
bool is_job_record(std::string_view tag) {
  return tag == "job" || tag == "jobexec" || tag == "jobreq" || tag == "jobstat" || tag == "jobwork" ||
         tag == "jobtime" || tag == "jobexit" || tag == "jobheld" || tag == "jobpatience" || tag == "joblost";
}

const std::string* str_at(const ts::Tuple& t, std::size_t i) {
  return i < t.size() ? std::get_if<std::string>(&t[i]) : nullptr;
}
std::optional<std::int64_t> int_at(const ts::Tuple& t, std::size_t i) {
  if (i >= t.size()) return std::nullopt;
  if (const auto* v = std::get_if<std::int64_t>(&t[i])) return *v;
  return std::nullopt;
}
const std::string* actual_str(const ts::Template& t, std::size_t i) {
  return i < t.size() && t[i].actual ? std::get_if<std::string>(&*t[i].actual) : nullptr;
}
std::optional<std::int64_t> actual_int(const ts::Template& t, std::size_t i) {
  if (i >= t.size() || !t[i].actual) return std::nullopt;
  if (const auto* v = std::get_if<std::int64_t>(&*t[i].actual)) return *v;
  return std::nullopt;
}
bool is(const std::string* s, std::string_view want) {
  return s && *s == want;
}

Decision allow() {
  return {};
}

// Who asked, as the auth file lists it: key "alice" (role job).
std::string who_words(const Principal& who) {
  return "key \"" + who.name + "\" (role " + std::string(name(who.role)) + ")";
}

// "key "ws01" (role agent) may not write node ws02's state record: that
// needs node ws02's agent key or admin (docs/security.md)". People read it:
// no tuple is dumped, and the page that has the rules is named.
Decision refuse(const Principal& who, const std::string& doing, const std::string& why) {
  return Decision{false, who_words(who) + " may not " + doing + ": " + why + " (docs/security.md)", {}};
}

// A space in words: "the system space", "job 3's space (job.3)", "space "scratch"".
std::string space_words(std::string_view space) {
  if (space == kSystem) return "the system space";
  if (auto id = job_of_space(space))
    return "job " + std::to_string(*id) + "'s space (" + std::string(space) + ")";
  return "space \"" + std::string(space) + "\"";
}

// What a message says of a system-space record: its tag and the fields the
// rules name, from a tuple written or from the actuals of a template (a
// formal field is null: the template matches any value there).
struct Record {
  const std::string* tag = nullptr;
  const std::string* field1 = nullptr;  // a node, or "agent"/"scheduler" in a heartbeat
  const std::string* field2 = nullptr;  // a node, in records keyed by job id then node
  std::optional<std::int64_t> id;       // field 1 as a job id
};

Record record_of(const ts::Tuple& t) {
  return {str_at(t, 0), str_at(t, 1), str_at(t, 2), int_at(t, 1)};
}
Record record_of(const ts::Template& t) {
  return {actual_str(t, 0), actual_str(t, 1), actual_str(t, 2), actual_int(t, 1)};
}

// The records an agent writes about its own node, field 1 naming it.
bool node_record(std::string_view tag) {
  return tag == "node" || tag == "nodewhy" || tag == "nodeattr" || tag == "running" || tag == "ap" ||
         tag == "agentbeat" || tag == "agentkey";
}

std::string nodes_words(const std::string* node) {
  return node ? "node " + *node + "'s" : "every node's";
}
std::string jobs_words(std::optional<std::int64_t> id) {
  return id ? "job " + std::to_string(*id) + "'s" : "every job's";
}
// The node a record is about: field 1, or field 2 after a job id or "agent".
const std::string* node_in(const Record& r) {
  if (is(r.tag, "heartbeat") || is(r.tag, "jobheld") || is(r.tag, "joblost") || is(r.tag, "jobkey"))
    return r.field2;
  return r.field1;
}

// A record in words: "node ws02's state record", "an owner block on ws01".
std::string record_words(const Record& r) {
  if (!r.tag) return "any record (the tag, field 0, is not given)";
  const std::string& tag = *r.tag;
  if (tag == "node") return nodes_words(r.field1) + " state record";
  if (tag == "nodewhy") return nodes_words(r.field1) + " state reason";
  if (tag == "nodeattr") return nodes_words(r.field1) + " attributes";
  if (tag == "running") return nodes_words(r.field1) + " record of the job it runs";
  if (tag == "ap") return nodes_words(r.field1) + " availability periods";
  if (tag == "agentbeat") return nodes_words(r.field1) + " heartbeat interval";
  if (tag == "agentkey") return nodes_words(r.field1) + " agent public key";
  if (tag == "heartbeat")
    return is(r.field1, "scheduler") ? std::string("a scheduler's heartbeat")
                                     : nodes_words(r.field2) + " agent heartbeat";
  if (tag == "owner") return r.field1 ? "an owner block on " + *r.field1 : "owner blocks on every node";
  if (tag == "complaint") return r.field1 ? "a complaint about " + *r.field1 : "complaints about every node";
  if (tag == "assign") return "a scheduler's assignment";
  if (tag == "serving") return "a scheduler's serving record";
  if (tag == "eval") return "an evaluator record";
  if (tag == "subnet") return "the pool's state for a campus";
  if (tag == "lent") return nodes_words(r.field1) + " lent-job record";
  if (tag == "loan") return r.field1 ? "campus " + *r.field1 + "'s loan" : "every campus's loans";
  if (tag == "jobseq" || tag == "jobseq.created") return "the job-id counter";
  if (tag == "jobheld") return jobs_words(r.id) + " hold by " + nodes_words(r.field2) + " agent";
  if (tag == "joblost")
    return jobs_words(r.id) + " lost-feeder record by " + nodes_words(r.field2) + " agent";
  if (tag == "jobkey") return jobs_words(r.id) + " piranha key on " + (r.field2 ? *r.field2 : "every node");
  if (tag == "job") return jobs_words(r.id) + " record";
  if (tag == "jobowner") return jobs_words(r.id) + " owner record";
  if (is_job_record(tag)) return jobs_words(r.id) + " " + tag + " record";
  return "a \"" + tag + "\" record";
}

// Whose job `id` is, for a refusal: "job 3 belongs to key "alice"; that needs
// its key or admin".
std::string job_owner_problem(std::int64_t id, const PoolFacts& facts) {
  auto owner = facts.owner_of(id);
  return owner
             ? "job " + std::to_string(id) + " belongs to key \"" + *owner + "\"; that needs its key or admin"
             : "job " + std::to_string(id) + " has no recorded owner; that needs admin";
}

// Which key or role may write or take a record, for a refusal: "that needs
// node ws02's agent key or admin".
std::string needs(const Record& r, const PoolFacts& facts) {
  const std::string or_admin = " or admin";
  if (!r.tag) return "a take from the system space names the record's tag; every tag, that needs admin";
  const std::string& tag = *r.tag;
  const std::string* node = node_in(r);
  if ((tag == "jobheld" || tag == "joblost") && node && r.id)
    return "that needs node " + *node + "'s agent key, job " + std::to_string(*r.id) + "'s owner's key" +
           or_admin;
  if (node_record(tag) || (tag == "heartbeat" && !is(r.field1, "scheduler")) || tag == "jobheld" ||
      tag == "joblost" || tag == "jobkey")
    return node ? "that needs node " + *node + "'s agent key" +
                      (tag == "jobkey" ? ", the campus role named " + *node : std::string()) + or_admin
                : "every node's needs admin (an agent names its own node, field " +
                      std::string(tag == "heartbeat" || tag.rfind("job", 0) == 0 ? "2" : "1") + ")";
  if (tag == "owner" || tag == "complaint")
    return node ? "that needs the owner role for " + *node + or_admin
                : "every node's needs admin (an owner names its own node, field 1)";
  if (tag == "assign" || tag == "heartbeat" || tag == "serving" || tag == "eval" || tag == "subnet" ||
      tag == "lent")
    return "that needs the scheduler role" + or_admin;
  if (tag == "jobseq" || tag == "jobseq.created") return "that needs the job role" + or_admin;
  if (tag == "loan")
    return r.field1 ? "that needs the campus role named " + *r.field1 + or_admin
                    : "every campus's needs admin (a campus names itself, field 1)";
  if (tag == "jobowner") return "the server writes it as a job id is taken; removing it needs admin";
  if (is_job_record(tag))
    return r.id ? job_owner_problem(*r.id, facts)
                : "every job's needs admin (a job key names its job's id, field 1)";
  return "that needs admin";
}

bool granted(const Principal& who, std::string_view space) {
  for (const auto& p : who.spaces) {
    if (!p.empty() && p.back() == '*'
            ? space.substr(0, p.size() - 1) == std::string_view(p).substr(0, p.size() - 1)
            : space == p)
      return true;
  }
  return false;
}

bool owns(const Principal& who, std::int64_t id, const PoolFacts& facts) {
  auto owner = facts.owner_of(id);
  return owner && *owner == who.name;
}

// How far a principal may go in a space.
enum class Reach { Everything, AllButRemove, SystemRules, Nothing };

struct SpaceAccess {
  Reach reach;
  std::string why;  // Nothing: why not
};

SpaceAccess access_to(const Principal& who, std::string_view space, const PoolFacts& facts) {
  if (who.role == Role::Admin || space.substr(0, kTakenPrefix.size()) == kTakenPrefix || granted(who, space))
    return {Reach::Everything, {}};
  if (space == kSystem) return {Reach::SystemRules, {}};
  if (auto id = job_of_space(space)) {
    if (who.role == Role::Piranha)
      return *id == who.job
                 ? SpaceAccess{Reach::AllButRemove, {}}
                 : SpaceAccess{Reach::Nothing, "a piranha of job " + std::to_string(who.job) + " uses job." +
                                                   std::to_string(who.job) + " only"};
    // Its piranhas have credentials of their own (("jobkey", ...)).
    if (who.role == Role::Agent)
      return {Reach::Nothing, "an agent uses no job's space (its piranhas have keys of their own)"};
    if (who.role != Role::Job)
      return {Reach::Nothing, "a " + std::string(name(who.role)) +
                                  " uses no job's space; that needs the job's owner's key or admin"};
    if (owns(who, *id, facts)) return {Reach::Everything, {}};
    return {Reach::Nothing, job_owner_problem(*id, facts)};
  }
  return {
      Reach::Nothing,
      "it is not the system space, a job's space, nor one of the key's own spaces; that needs admin, or the "
      "space in the key's `spaces` in the auth file"};
}

// ---- The system space: writes.

bool ended_job(std::int64_t id, const PoolFacts& facts) {
  auto states = facts.job_states(id);
  return !states.empty() && std::all_of(states.begin(), states.end(), sys::is_finished);
}

Decision write_system(const Principal& who, const ts::Tuple& t, const PoolFacts& facts) {
  // The message is made only for a refusal: most writes are allowed.
  const Record r = record_of(t);
  auto no = [&](const std::string& why) { return refuse(who, "write " + record_words(r), why); };
  auto not_its = [&] { return no(needs(r, facts)); };
  const std::string* tag = r.tag;
  if (!tag)
    return refuse(who, "write a record without a tag in the system space", "field 0 must be a string");
  // A piranha key record in the name `name` (field 2: an agent's node, a campus's name), of a live job.
  auto jobkey_as = [&](const std::string& name) {
    if (!r.id || !str_at(t, 3) || !ts::is_z85_key(*str_at(t, 3)))
      return no("a piranha key record holds a job id, a node and a CURVE public key in Z85 text");
    if (!is(r.field2, name)) return not_its();
    if (ended_job(*r.id, facts)) return no("job " + std::to_string(*r.id) + " has ended");
    return allow();
  };
  switch (who.role) {
    case Role::Admin: return allow();
    case Role::Scheduler:
      if (*tag == "assign" || *tag == "eval" || *tag == "subnet" || *tag == "lent" || *tag == "serving" ||
          (*tag == "heartbeat" && is(r.field1, "scheduler")))
        return allow();
      return not_its();
    case Role::Agent: {
      if (node_record(*tag)) return is(r.field1, who.node) ? allow() : not_its();
      if (*tag == "heartbeat") return is(r.field1, "agent") && is(r.field2, who.node) ? allow() : not_its();
      if (*tag == "jobheld" || *tag == "joblost") return is(r.field2, who.node) ? allow() : not_its();
      if (*tag == "jobtime" && r.id) return allow();     // a lost feeder's job's end
      if (*tag == "jobkey") return jobkey_as(who.node);  // its piranhas' keys
      if (*tag == "job")
        return no(
            "an agent writes a job's record only back, held, failed or unchanged, as it ends its lease on "
            "it");
      return not_its();
    }
    case Role::Campus:
      if (*tag == "loan") return is(r.field1, who.name) ? allow() : not_its();
      if (*tag == "jobkey") return jobkey_as(who.name);  // its loans' piranhas' keys
      return not_its();
    case Role::Piranha:
      if (*tag == "jobtime" && r.id == who.job) return allow();  // its job's start
      return no("a piranha writes only job " + std::to_string(who.job) + "'s jobtime record");
    case Role::Owner:
      if ((*tag == "owner" || *tag == "complaint") && is(r.field1, who.node)) return allow();
      return not_its();
    case Role::Job: {
      if (is_job_record(*tag)) {
        if (!r.id) return no("a job's record has its job id in field 1");
        if (!owns(who, *r.id, facts)) return no(job_owner_problem(*r.id, facts));
        if (*tag == "job" && !is(str_at(t, 3), "job." + std::to_string(*r.id)))
          return no("a job's record names its own space, job." + std::to_string(*r.id));
        return allow();
      }
      if (*tag == "jobseq" || *tag == "jobseq.created")
        return facts.counter_created()
                   ? no("the job-id counter exists; it is advanced only by completing a lease on it")
                   : allow();
      return not_its();
    }
  }
  return no("unknown role");
}

// ---- The system space: takes.

Decision take_system(const Principal& who, const ts::Template& t, ts::Millis lease, const PoolFacts& facts) {
  const Record r = record_of(t);
  auto no = [&](const std::string& why) { return refuse(who, "take " + record_words(r), why); };
  auto not_its = [&] { return no(needs(r, facts)); };
  const std::string* tag = r.tag;
  if (who.role == Role::Admin) return allow();
  if (!tag) return not_its();
  switch (who.role) {
    case Role::Admin: return allow();
    case Role::Scheduler:
      if (*tag == "assign" || *tag == "subnet" || *tag == "lent" || *tag == "serving" ||
          (*tag == "heartbeat" && is(r.field1, "scheduler")))
        return allow();
      return not_its();
    case Role::Agent: {
      if (node_record(*tag)) return is(r.field1, who.node) ? allow() : not_its();
      if (*tag == "heartbeat") return is(r.field1, "agent") && is(r.field2, who.node) ? allow() : not_its();
      if (*tag == "jobheld" && r.id && is(r.field2, who.node)) return allow();  // its own holds
      if (*tag == "jobtime" && r.id) return allow();                            // a lost feeder's job's end
      if (*tag == "jobkey") {
        if (is(r.field2, who.node)) return allow();  // its own piranhas' keys
        if (r.id && lease == 0 && ended_job(*r.id, facts)) return allow();
        return no("an agent takes only node " + who.node + "'s piranhas' keys, and those of ended jobs; " +
                  needs(r, facts));
      }
      if (*tag == "job" && r.id && lease > 0) return allow();  // a hold: written back when the lease ends
      if ((is_job_record(*tag) || *tag == "jobowner") && r.id && lease == 0) {
        if (ended_job(*r.id, facts)) return allow();  // retention: the records of an ended job
        return no("an agent removes a job's records only once job " + std::to_string(*r.id) + " has ended");
      }
      if (*tag == "jobheld") return not_its();
      return no("an agent takes only node " + who.node +
                "'s records, and the records of ended jobs (by job id)");
    }
    case Role::Campus:
      if ((*tag == "loan" && is(r.field1, who.name)) || (*tag == "jobkey" && is(r.field2, who.name)))
        return allow();
      return not_its();
    case Role::Piranha:
      if (*tag == "jobtime" && r.id == who.job) return allow();
      return no("a piranha takes only job " + std::to_string(who.job) + "'s jobtime record");
    case Role::Owner:
      if (*tag == "owner" && is(r.field1, who.node)) return allow();
      return not_its();
    case Role::Job: {
      if (*tag == "jobseq") return lease > 0 ? allow() : no("the job-id counter is taken only under a lease");
      if (is_job_record(*tag)) {
        if (!r.id) return no("a take of a job's records names the job id (field 1); every job's needs admin");
        return owns(who, *r.id, facts) ? allow() : no(job_owner_problem(*r.id, facts));
      }
      return not_its();
    }
  }
  return no("unknown role");
}

// ---- Requests.

// A piranha reads its own job's records in the system space, and no more:
// the template names the tag and the job id.
Decision read_system_as_piranha(const Principal& who, const Action& a) {
  if (!a.tmpl)
    return refuse(who, "read the whole system space", "a piranha reads only its own job's records");
  const std::string* tag = actual_str(*a.tmpl, 0);
  if (tag && (is_job_record(*tag) || *tag == "jobowner") && actual_int(*a.tmpl, 1) == who.job) return allow();
  return refuse(who, "read " + record_words(record_of(*a.tmpl)),
                "a piranha reads only job " + std::to_string(who.job) + "'s records");
}

Decision read(const Principal& who, const Action& a, const PoolFacts& facts) {
  SpaceAccess s = access_to(who, a.space, facts);
  if (s.reach == Reach::Nothing) return refuse(who, "read " + space_words(a.space), s.why);
  if (s.reach == Reach::SystemRules && who.role == Role::Piranha) return read_system_as_piranha(who, a);
  return allow();
}

// Writes `tuples` to `space`; `skip[i]` marks a tuple an ended lease already justified.
Decision write(const Principal& who, const std::string& space, const std::vector<ts::Tuple>& tuples,
               const std::vector<bool>& skip, const PoolFacts& facts) {
  SpaceAccess s = access_to(who, space, facts);
  if (s.reach == Reach::Nothing) return refuse(who, "write in " + space_words(space), s.why);
  if (s.reach != Reach::SystemRules) return allow();
  for (std::size_t i = 0; i < tuples.size(); ++i) {
    if (i < skip.size() && skip[i]) continue;
    Decision d = write_system(who, tuples[i], facts);
    if (!d.allowed) return d;
  }
  return allow();
}

Decision take(const Principal& who, const Action& a, const PoolFacts& facts) {
  SpaceAccess s = access_to(who, a.space, facts);
  if (s.reach == Reach::Nothing) return refuse(who, "take from " + space_words(a.space), s.why);
  if (s.reach != Reach::SystemRules) return allow();
  if (!a.tmpl) return refuse(who, "take from " + space_words(a.space), "the request has no template");
  return take_system(who, *a.tmpl, a.lease, facts);
}

Decision remove(const Principal& who, const Action& a, const PoolFacts& facts) {
  SpaceAccess s = access_to(who, a.space, facts);
  if (s.reach == Reach::Everything) return allow();
  // An agent that recorded a job's feeder lost ends its piranhas' waits.
  if (auto id = job_of_space(a.space); id && who.role == Role::Agent && ended_job(*id, facts)) return allow();
  const std::string doing = "remove " + space_words(a.space);
  if (job_of_space(a.space) && who.role == Role::Agent)
    return refuse(who, doing, "an agent removes a job's space only once the job has ended");
  return refuse(who, doing,
                s.reach == Reach::Nothing       ? s.why
                : s.reach == Reach::SystemRules ? "that needs admin"
                                                : "that needs the job's owner's key or admin");
}

// Ends leases: a plain ack, or a completion writing `a.tuples` to `a.space`.
// The tuples the leases hold say what ending them must write.
Decision end_leases(const Principal& who, const Action& a, const PoolFacts& facts) {
  const bool completes = !a.space.empty();
  const bool into_system = completes && a.space == kSystem;
  std::vector<bool> justified(a.tuples.size(), false);
  Decision verdict = allow();
  for (const auto& [space, held] : a.ended) {
    if (space != kSystem) continue;
    const std::string* tag = str_at(held, 0);
    if (is(tag, "jobseq")) {
      auto n = int_at(held, 1);
      bool advances = into_system && n && a.ended.size() == 1 && a.tuples.size() == 1 &&
                      a.tuples[0] == ts::Tuple::of("jobseq", *n + 1);
      if (!advances) {
        if (who.role == Role::Admin) continue;
        return refuse(who, "end the lease on the job-id counter",
                      "a lease on the counter ends only by writing its next value, alone");
      }
      if (auto owner = facts.owner_of(*n)) {
        if (who.role == Role::Admin) continue;
        return refuse(who, "take job id " + std::to_string(*n),
                      "it has an owner already (" + *owner + "): is there a second job-id counter?");
      }
      justified[0] = true;
      verdict.takes_job_id = *n;
    } else if (is(tag, "job") && who.role == Role::Agent) {
      // A hold: the same job back, held or as it was.
      bool back = false;
      for (std::size_t i = 0; into_system && !back && i < a.tuples.size(); ++i) {
        const ts::Tuple& w = a.tuples[i];
        if (justified[i] || w.size() != held.size() || w.size() != 6 || !is(str_at(w, 0), "job")) continue;
        bool same = std::equal(held.fields().begin() + 1, held.fields().begin() + 5, w.fields().begin() + 1);
        const std::string* state = str_at(w, 5);
        // Failed: a running job whose feeder is lost (sys::lose_job).
        const bool lost = is(str_at(held, 5), sys::name(sys::JobState::Running)) && state &&
                          *state == sys::name(sys::JobState::Failed);
        if (same && state && (*state == sys::name(sys::JobState::Held) || lost || w[5] == held[5]))
          back = justified[i] = true;
      }
      if (!back)
        return refuse(who, "end its lease on " + record_words(record_of(held)),
                      "an agent ends a lease on a job's record only by writing the record back, held, failed "
                      "(a running job's) or unchanged");
    }
  }
  if (who.role == Role::Admin || !completes) return verdict;
  Decision w = write(who, a.space, a.tuples, justified, facts);
  if (!w.allowed) return w;
  return verdict;
}

}  // namespace

std::string_view name(Role r) {
  switch (r) {
    case Role::Admin: return "admin";
    case Role::Scheduler: return "scheduler";
    case Role::Agent: return "agent";
    case Role::Job: return "job";
    case Role::Owner: return "owner";
    case Role::Campus: return "campus";
    case Role::Piranha: return "piranha";
  }
  return "?";
}

std::optional<Role> role_from(std::string_view text) {
  for (Role r : {Role::Admin, Role::Scheduler, Role::Agent, Role::Job, Role::Owner, Role::Campus})
    if (name(r) == text) return r;
  return std::nullopt;
}

Principal piranha_of(std::int64_t job, const std::string& node) {
  return Principal{node + "/job." + std::to_string(job), Role::Piranha, node, {}, job};
}

std::optional<std::int64_t> job_of_space(std::string_view space) {
  constexpr std::string_view prefix = "job.";
  if (space.size() <= prefix.size() || space.substr(0, prefix.size()) != prefix) return std::nullopt;
  std::string_view digits = space.substr(prefix.size());
  if (digits.size() > 1 && digits[0] == '0') return std::nullopt;  // "job.007" is not job 7's space
  std::int64_t id = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), id);
  if (ec != std::errc() || end != digits.data() + digits.size() || id <= 0) return std::nullopt;
  return id;
}

Decision decide(const Principal& who, const Action& what, const PoolFacts& facts) {
  switch (what.op) {
    case Op::Hello:
    case Op::Bye:
    case Op::Stats:
    case Op::Unwatch:
    case Op::Renew: return allow();  // its own leases and watches; figures anyone may see
    case Op::Rd:
    case Op::RdMany:
    case Op::Watch: return read(who, what, facts);
    case Op::Out:
    case Op::OutMany: return write(who, what.space, what.tuples, {}, facts);
    case Op::In:
    case Op::InMany: return take(who, what, facts);
    case Op::Ack: return end_leases(who, what, facts);
    case Op::Remove: return remove(who, what, facts);
  }
  return refuse(who, "do op " + std::to_string(static_cast<int>(what.op)), "unknown op");
}

}  // namespace piranha::rights
