#include "piranha/access/pool_access.h"

#include <unordered_map>

namespace piranha::rights {
namespace {

// The facts, read from the server's store as it is now.
class StoreFacts : public PoolFacts {
 public:
  StoreFacts(const ts::Store& store, std::unordered_map<std::int64_t, std::string>& owners)
      : store_(store), owners_(owners) {}

  std::optional<std::string> owner_of(std::int64_t job) const override {
    if (auto it = owners_.find(job); it != owners_.end()) return it->second;
    for (const auto& bytes : read(sys::jobowner_template(job), 1))
      if (auto o = sys::JobOwner::from_tuple(ts::decode_tuple(bytes))) {
        owners_.emplace(job, o->name);
        return o->name;
      }
    return std::nullopt;
  }

  std::vector<sys::JobState> job_states(std::int64_t job) const override {
    std::vector<sys::JobState> states;
    for (const auto& bytes : read(sys::job_template(job), 64))
      if (auto j = sys::JobRecord::from_tuple(ts::decode_tuple(bytes))) states.push_back(j->state);
    return states;
  }

  bool counter_created() const override {
    return !read(ts::Template({ts::Field::of(ts::Value(std::string("jobseq.created")))}), 1).empty();
  }

 private:
  std::vector<std::string> read(const ts::Template& t, std::size_t max) const {
    return store_.rd_many(sys::kSpace, ts::image_of(t), max);
  }
  const ts::Store& store_;
  std::unordered_map<std::int64_t, std::string>& owners_;
};

// The piranha principal whose name is `identity` ("NODE/job.ID", piranha_of).
std::optional<Principal> piranha_named(std::string_view identity) {
  auto slash = identity.rfind('/');
  if (slash == std::string_view::npos) return std::nullopt;
  auto job = job_of_space(identity.substr(slash + 1));
  if (!job) return std::nullopt;
  return piranha_of(*job, std::string(identity.substr(0, slash)));
}

// The request as the rules see it: decoded where the rules look.
Action action_of(const ts::AccessQuery& q, Role role) {
  const bool admin = role == Role::Admin;
  const ts::Request& r = q.request;
  Action a;
  a.op = r.op;
  a.space = r.space;
  a.lease = r.lease;
  const bool system = r.space == sys::kSpace;
  switch (r.op) {
    case ts::Op::In:
    case ts::Op::InMany:
      if (system && !admin) a.tmpl = ts::decode_template(r.tmpl.bytes);
      break;
    case ts::Op::Rd:
    case ts::Op::RdMany:
    case ts::Op::Watch:  // a piranha's reads of the system space are decided on their templates
      if (system && role == Role::Piranha) a.tmpl = ts::decode_template(r.tmpl.bytes);
      break;
    case ts::Op::Out:
    case ts::Op::OutMany:
      if (system && !admin)
        for (const auto& t : r.tuples) a.tuples.push_back(ts::decode_tuple(t.bytes));
      break;
    case ts::Op::Ack:
      if (!r.completes) a.space.clear();
      if (r.completes && system)
        for (const auto& t : r.tuples) a.tuples.push_back(ts::decode_tuple(t.bytes));
      for (const auto& e : q.ended)
        a.ended.emplace_back(std::string(e.space),
                             e.space == sys::kSpace ? ts::decode_tuple(e.tuple) : ts::Tuple());
      break;
    default: break;
  }
  return a;
}

class PoolAccess : public ts::AccessPolicy {
 public:
  explicit PoolAccess(std::vector<Principal> principals) {
    for (auto& p : principals) by_name_.emplace(p.name, std::move(p));
  }

  std::optional<std::string> admit(std::string_view public_key, const ts::Store& store) override {
    for (const auto& bytes :
         store.rd_many(sys::kSpace, ts::image_of(sys::jobkey_template(std::string(public_key))), 1))
      if (auto k = sys::JobKey::from_tuple(ts::decode_tuple(bytes))) {
        std::string name = piranha_of(k->id, k->node).name;
        if (by_name_.count(name)) return std::nullopt;  // an auth file entry's name: never shadowed
        return name;
      }
    return std::nullopt;
  }

  // The NPS, a campus and an administrator: the connections a pool waits on.
  bool served_first(std::string_view identity) override {
    auto it = by_name_.find(std::string(identity));
    if (it == by_name_.end()) return false;  // a piranha's key, or none
    Role r = it->second.role;
    return r == Role::Admin || r == Role::Scheduler || r == Role::Campus;
  }

  ts::AccessVerdict decide(const ts::AccessQuery& q, const ts::Store& store) override {
    // Every identity is an auth file entry's name or one admit() gave.
    std::optional<Principal> piranha;
    auto it = by_name_.find(std::string(q.identity));
    if (it == by_name_.end() && !(piranha = piranha_named(q.identity)))
      return ts::AccessVerdict::refuse("\"" + std::string(q.identity) + "\" is in no auth file entry");
    const Principal& who = piranha ? *piranha : it->second;
    Decision d;
    try {
      StoreFacts facts(store, owners_);
      d = rights::decide(who, action_of(q, who.role), facts);
    } catch (const std::exception& e) {
      // The server decoded and checked the request already; this is a bug.
      return ts::AccessVerdict::refuse(std::string("the request could not be judged: ") + e.what());
    }
    if (!d.allowed) return ts::AccessVerdict::refuse(d.reason);
    ts::AccessVerdict v;
    if (d.takes_job_id)
      v.also_write.emplace_back(sys::kSpace,
                                ts::image_of(sys::JobOwner{*d.takes_job_id, who.name}.to_tuple()));
    return v;
  }

 private:
  std::unordered_map<std::string, Principal> by_name_;
  std::unordered_map<std::int64_t, std::string> owners_;
};

}  // namespace

std::shared_ptr<ts::AccessPolicy> make_pool_access(std::vector<Principal> principals) {
  return std::make_shared<PoolAccess>(std::move(principals));
}

}  // namespace piranha::rights
