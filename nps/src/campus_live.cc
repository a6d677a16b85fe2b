#include "piranha/nps/campus_live.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <thread>
#include <tuple>

#include "piranha/access/sealed_key.h"
#include "piranha/base/clock.h"
#include "piranha/base/input_error.h"
#include "piranha/base/yaml_reader.h"
#include "piranha/tuplespace/client.h"

namespace piranha::nps {

namespace {

using Json = nlohmann::json;

std::size_t index_of(const LiveCampusConfig& c, const std::string& name) {
  for (std::size_t i = 0; i < c.subnets.size(); ++i)
    if (c.subnets[i].name == name) return i;
  return c.subnets.size();
}

}  // namespace

LiveCampusConfig parse_live_campus(const std::string& text, const std::string& name) {
  const yaml::Reader r(name);
  const YAML::Node root = yaml::parse_yaml(r, text);
  if (!root || root.IsNull()) r.fail(YAML::Mark::null_mark(), "the campus file is empty");
  r.check_keys(root, "the campus file", {"name", "subnets", "campus"});
  LiveCampusConfig c;
  if (root["name"]) c.name = r.text(root, "name", "the campus's name");
  const YAML::Node subnets = root["subnets"];
  if (!subnets) r.fail(root, "the campus file needs a 'subnets' list");
  if (!subnets.IsSequence() || subnets.size() < 2) r.fail(subnets, "subnets must be a list of at least two");
  std::vector<YAML::Node> lends_nodes;
  for (const YAML::Node& s : subnets) {
    r.check_keys(s, "a subnet", {"name", "server", "server_key", "lends_to"});
    LiveSubnet sub;
    sub.name = r.text(s, "name", "a subnet's name");
    if (sub.name.empty()) r.fail(s, "a subnet's name must not be empty");
    if (index_of(c, sub.name) < c.subnets.size()) r.fail(s, "subnet '" + sub.name + "' is listed twice");
    sub.server = r.text(s, "server", "subnet " + sub.name + "'s server");
    if (s["server_key"]) sub.server_key = r.text(s, "server_key", "subnet " + sub.name + "'s server_key");
    c.subnets.push_back(sub);
    lends_nodes.push_back(s["lends_to"]);
  }
  for (std::size_t i = 0; i < c.subnets.size(); ++i) {
    const YAML::Node l = lends_nodes[i];
    if (!l) continue;
    if (!l.IsSequence())
      r.fail(l, "subnet " + c.subnets[i].name + "'s lends_to must be a list of subnet names");
    for (const YAML::Node& b : l) {
      if (!b.IsScalar()) r.fail(b, "lends_to must list subnet names");
      const std::string borrower = b.Scalar();
      if (index_of(c, borrower) == c.subnets.size())
        r.fail(b, "subnet " + c.subnets[i].name + " lends to '" + borrower + "', which is not a subnet");
      if (borrower == c.subnets[i].name) r.fail(b, "subnet " + borrower + " lends to itself");
      c.subnets[i].lends_to.push_back(borrower);
    }
  }
  if (const YAML::Node k = root["campus"]) {
    r.check_keys(k, "campus",
                 {"period", "congested", "relieved", "hold", "cooldown", "reserve", "lease", "stale"});
    if (k["period"]) c.params.period = r.number(k, "period", "campus' period", 0, true, 1e9);
    if (k["congested"]) c.params.congested = r.number(k, "congested", "campus' congested", 0, false, 1e12);
    if (k["relieved"]) c.params.relieved = r.number(k, "relieved", "campus' relieved", 0, false, 1e12);
    if (k["hold"]) c.params.hold = r.number(k, "hold", "campus' hold", 0, false, 1e12);
    if (k["cooldown"]) c.params.cooldown = r.number(k, "cooldown", "campus' cooldown", 0, false, 1e12);
    if (k["reserve"])
      c.params.reserve = r.integer<std::int64_t>(k, "reserve", "campus' reserve", 0, 1'000'000);
    if (k["lease"]) c.lease = r.number(k, "lease", "campus' lease", 0, true, 1e9);
    if (k["stale"]) c.stale = r.number(k, "stale", "campus' stale", 0, true, 1e9);
    if (c.params.relieved > c.params.congested)
      r.fail(k, "campus' relieved must not exceed its congested (the hysteresis band)");
  }
  return c;
}

LiveCampusConfig load_live_campus(const std::string& path) {
  return parse_live_campus(yaml::read_file(path, "the campus file"), path);
}

std::string subnet_state_json(const sched::SubnetState& state) {
  Json jobs = Json::array();
  for (const auto& j : state.jobs) {
    Json job{{"id", j.id}, {"work_left", j.work_left}, {"tasks_left", j.tasks_left}};
    // Only where there is one, so that a pool without requirements reports what it did before.
    if (!j.requirement.empty()) {
      job["requires"] = j.requirement.text();
      job["stranded"] = j.stranded;
    }
    jobs.push_back(std::move(job));
  }
  Json out{{"jobs", jobs}, {"available", state.available}, {"idle", state.idle}};
  if (!state.idle_nodes.empty()) {
    Json idle = Json::array();
    for (const auto& g : state.idle_nodes)
      idle.push_back({{"count", g.count},
                      {"cores", g.attributes.cores},
                      {"memory", g.attributes.memory},
                      {"arch", g.attributes.arch},
                      {"labels", g.attributes.labels}});
    out["idle_nodes"] = std::move(idle);
  }
  return out.dump();
}

std::optional<sched::SubnetState> subnet_state_from_json(const std::string& json) {
  const Json j = Json::parse(json, nullptr, false);
  if (!j.is_object() || !j.contains("jobs") || !j["jobs"].is_array() ||
      !j.value("available", Json()).is_number() || !j.value("idle", Json()).is_number_integer())
    return std::nullopt;
  sched::SubnetState s;
  s.available = j["available"].get<double>();
  s.idle = j["idle"].get<std::int64_t>();
  for (const Json& job : j["jobs"]) {
    if (!job.is_object() || !job.value("id", Json()).is_number_integer() ||
        !job.value("work_left", Json()).is_number() || !job.value("tasks_left", Json()).is_number_integer())
      return std::nullopt;
    sched::CampusJob c{job["id"].get<sched::JobId>(), job["work_left"].get<double>(),
                       job["tasks_left"].get<std::int64_t>()};
    if (job.contains("requires")) {
      if (!job["requires"].is_string() || !job.value("stranded", Json()).is_boolean()) return std::nullopt;
      // A text this version cannot read is a requirement no node satisfies (requirement.h).
      c.requirement = sched::read_requirement(job["requires"].get<std::string>());
      c.stranded = job["stranded"].get<bool>();
    }
    s.jobs.push_back(std::move(c));
  }
  if (j.contains("idle_nodes")) {
    if (!j["idle_nodes"].is_array()) return std::nullopt;
    for (const Json& g : j["idle_nodes"]) {
      if (!g.is_object() || !g.value("count", Json()).is_number_integer() ||
          !g.value("cores", Json()).is_number_integer() || !g.value("memory", Json()).is_number_integer() ||
          !g.value("arch", Json()).is_string() || !g.value("labels", Json()).is_array())
        return std::nullopt;
      sched::IdleNodes i;
      i.count = g["count"].get<std::int64_t>();
      i.attributes.cores = g["cores"].get<std::int64_t>();
      i.attributes.memory = g["memory"].get<std::int64_t>();
      i.attributes.arch = g["arch"].get<std::string>();
      for (const Json& l : g["labels"]) {
        if (!l.is_string()) return std::nullopt;
        i.attributes.labels.push_back(l.get<std::string>());
      }
      s.idle_nodes.push_back(std::move(i));
    }
  }
  return s;
}

LiveCampus::LiveCampus(LiveCampusConfig config) : config_(std::move(config)), strategy_(config_.params) {
  const std::size_t n = config_.subnets.size();
  std::vector<std::vector<bool>> trust(n, std::vector<bool>(n, false));
  for (std::size_t l = 0; l < n; ++l)
    for (const auto& b : config_.subnets[l].lends_to) trust[l][index_of(config_, b)] = true;
  strategy_.set_trust(std::move(trust));
}

CampusRound LiveCampus::round(double now, std::span<const SubnetReading> readings) {
  const std::size_t n = config_.subnets.size();
  if (readings.size() != n)
    throw std::invalid_argument("live campus: " + std::to_string(readings.size()) + " readings for " +
                                std::to_string(n) + " subnets");
  CampusRound out;
  out.loans.resize(n);
  out.fresh.assign(n, false);
  std::vector<sched::SubnetState> states(n);
  for (std::size_t s = 0; s < n; ++s) {
    const SubnetReading& r = readings[s];
    if (!r.reached || !r.report || now - r.report->time > config_.stale_seconds()) continue;
    if (auto state = subnet_state_from_json(r.report->json)) {
      states[s] = std::move(*state);
      out.fresh[s] = true;
    }
  }
  out.decision = strategy_.decide(now, states);
  for (const sched::Loan& l : out.decision.loans) {
    const auto it = readings[l.borrower].launches.find(l.job);
    if (it == readings[l.borrower].launches.end()) continue;
    const LiveSubnet& b = config_.subnets[l.borrower];
    std::string requirement;
    for (const auto& j : states[l.borrower].jobs)
      if (j.id == l.job) requirement = j.requirement.text();
    out.loans[l.lender].push_back(sys::CampusLoan{config_.name, b.name, b.server, l.job, l.nodes,
                                                  it->second.program, it->second.args, it->second.cwd, "",
                                                  now + config_.lease_seconds(), requirement});
  }
  return out;
}

bool LendTrust::allows(const sys::CampusLoan& loan) const {
  const bool borrower = std::find(lends_to.begin(), lends_to.end(), loan.borrower) != lends_to.end();
  const bool campus =
      campuses.empty() || std::find(campuses.begin(), campuses.end(), loan.campus) != campuses.end();
  return borrower && campus;
}

std::vector<std::optional<LentJob>> plan_lending(double now, std::span<const sys::CampusLoan> loans,
                                                 const LendTrust& trust, std::span<const bool> own,
                                                 std::span<const bool> available,
                                                 std::span<const std::optional<LentJob>> serving,
                                                 std::span<const sched::NodeAttributes> attributes) {
  // Borrowers by index, for the strategy's LoanKey; two campuses' loans of one job add up.
  std::vector<std::string> borrowers;
  auto borrower_index = [&](const std::string& name) {
    const auto it = std::find(borrowers.begin(), borrowers.end(), name);
    if (it != borrowers.end()) return static_cast<std::size_t>(it - borrowers.begin());
    borrowers.push_back(name);
    return borrowers.size() - 1;
  };
  std::vector<sched::Loan> in_force;
  std::vector<sched::Requirement> requirements;  // per loan in force
  for (const auto& l : loans) {
    if (l.expires <= now || l.nodes <= 0 || !trust.allows(l)) continue;
    const std::size_t b = borrower_index(l.borrower);
    auto it = std::find_if(in_force.begin(), in_force.end(),
                           [&](const sched::Loan& x) { return x.borrower == b && x.job == l.job; });
    if (it == in_force.end()) {
      in_force.push_back(sched::Loan{0, b, l.job, l.nodes, 0});
      requirements.push_back(sched::read_requirement(l.requirement));
    } else {
      it->nodes += l.nodes;
    }
  }
  std::vector<std::optional<sched::LoanKey>> before(serving.size());
  for (std::size_t i = 0; i < serving.size(); ++i)
    if (serving[i]) before[i] = sched::LoanKey{borrower_index(serving[i]->borrower), serving[i]->job};
  const auto now_serving = sched::lend_idle(in_force, own, available, before, requirements, attributes);
  std::vector<std::optional<LentJob>> out(now_serving.size());
  for (std::size_t i = 0; i < out.size(); ++i)
    if (now_serving[i]) out[i] = LentJob{borrowers[now_serving[i]->borrower], now_serving[i]->job};
  return out;
}

namespace {

// The campus's connection to one subnet's server, made again after a failure.
struct SubnetLink {
  std::unique_ptr<ts::Client> client;
  ts::ClientOptions options;  // its keys: options.curve.server_key is the server's public key
  bool was_reached = true;    // for logging changes only
  // The live jobs the last reading found: one of them whose record is out
  // for a rewrite as the next reading lists the jobs is waited for, not
  // taken for ended (which would withdraw its loans for a round).
  std::set<sched::JobId> live;
};

// The campus's keys for subnet `s`: its own $PIRANHA_KEY, and the subnet's server_key or else
// $PIRANHA_SERVER_KEY. Throws InputError when they cannot be read.
ts::ClientOptions campus_client_options(const LiveSubnet& s) {
  ts::ClientOptions o;
  o.connect_timeout = std::chrono::milliseconds(2000);
  // A cut link costs a round at most a few seconds: the campus is slower than its subnets anyway.
  o.request_timeout = std::chrono::milliseconds(3000);
  o.pool_from_environment = false;
  if (s.server_key.empty()) return ts::with_environment_keys(o);
  const char* mine = std::getenv(ts::kKeyEnv);
  if (!mine || !*mine)
    throw InputError("subnet " + s.name + "'s server_key",
                     std::string("given, but ") + ts::kKeyEnv + " is not: the campus needs its own key too");
  const ts::CurveKeyPair pair = ts::load_secret_key(mine, ts::kKeyEnv);
  o.curve = ts::CurveClientKeys{pair.public_key, pair.secret_key,
                                ts::load_public_key(s.server_key, "subnet " + s.name + "'s server_key")};
  o.curve_from_environment = false;
  return o;
}

SubnetReading read_subnet(SubnetLink& link, const LiveSubnet& s) {
  SubnetReading r;
  if (!link.client) {
    link.options = campus_client_options(s);
    link.client = std::make_unique<ts::Client>(s.server, link.options);
  }
  ts::Client& c = *link.client;
  for (const auto& t : c.rd_many(sys::kSpace, sys::subnet_template(), 16))
    if (auto rep = sys::SubnetReport::from_tuple(t); rep && (!r.report || rep->time > r.report->time))
      r.report = rep;
  std::vector<std::int64_t> ids;
  for (const auto& j : sys::list_live_jobs(c, link.live)) ids.push_back(j.id);
  // Their launch records all asked together: one wait.
  const auto found = sys::find_launches(c, ids);
  for (std::size_t i = 0; i < ids.size(); ++i)
    if (found[i].launch) r.launches[ids[i]] = *found[i].launch;
  link.live = std::set<sched::JobId>(ids.begin(), ids.end());
  for (const auto& t : c.rd_many(sys::kSpace, sys::agentkey_template(), 100'000))
    if (auto k = sys::AgentKey::from_tuple(t); k && ts::is_z85_key(k->public_key))
      r.agent_keys[k->node] = k->public_key;
  r.reached = true;
  return r;
}

// A loan's credential on its borrower (campus_live.h, run_campus): the loan's key pair, whether
// its ("jobkey", ...) record is on the borrower, and its secret sealed to each of the lender's
// agents (node -> the agent key it was sealed to, and the sealed text), kept so that a loan's
// text changes only when a node's agent key does.
struct CampusLoanKey {
  ts::CurveKeyPair pair;
  bool recorded = false;
  std::map<std::string, std::pair<std::string, std::string>> sealed;
};

// Lender, borrower (indices in the campus file) and job.
using LoanId = std::tuple<std::size_t, std::size_t, sched::JobId>;

// The campus's credentials, per loan in force.
class CampusLoanKeys {
 public:
  explicit CampusLoanKeys(std::string campus) : campus_(std::move(campus)) {}

  // Fills in `loan`'s key (loan `id`; the lender's agents' keys in `agents`, the borrower's server
  // key `server_key`), writing a new loan's record on the borrower through `c` first. Throws what
  // `c` throws when the record could not be written (the caller leaves the loan out this round).
  void key(const LoanId& id, ts::Client& c, const std::string& server_key,
           const std::map<std::string, std::string>& agents, sys::CampusLoan& loan) {
    CampusLoanKey& k = creds_[id];
    if (k.pair.secret_key.empty()) k.pair = ts::new_curve_key_pair();
    if (!k.recorded) {
      c.out(sys::kSpace, record(id, k).to_tuple());
      k.recorded = true;
    }
    sys::LoanKey text{server_key, {}};
    for (const auto& [node, agent_key] : agents) {
      // A node name with a space would break the text's tokens; no agent is named so.
      if (node.empty() || node.find(' ') != std::string::npos) continue;
      auto& s = k.sealed[node];
      if (s.first != agent_key) s = {agent_key, seal_secret_key(agent_key, k.pair.secret_key)};
      text.sealed[node] = s.second;
    }
    loan.key = text.to_text();
  }

  // Takes the records of the loans not in `kept` (all of them when it is empty) from their
  // borrowers (`borrower(i)`: the client of subnet i, or null when it is not connected); a record
  // that cannot be taken now is tried again at the next call.
  void withdraw(const std::set<LoanId>& kept, const std::function<ts::Client*(std::size_t)>& borrower,
                const std::function<void(const std::string&)>& note) {
    for (auto it = creds_.begin(); it != creds_.end();) {
      if (kept.count(it->first)) {
        ++it;
        continue;
      }
      if (it->second.recorded) {
        ts::Client* c = borrower(std::get<1>(it->first));
        try {
          if (!c) throw std::runtime_error("not connected");
          c->in_many(sys::kSpace, ts::Template::exactly(record(it->first, it->second).to_tuple()), 1);
        } catch (const std::exception& e) {
          note("could not withdraw the key of job " + std::to_string(std::get<2>(it->first)) +
               "'s loan: " + e.what() + "; trying again");
          ++it;
          continue;
        }
      }
      it = creds_.erase(it);
    }
  }

 private:
  sys::JobKey record(const LoanId& id, const CampusLoanKey& k) const {
    return sys::JobKey{std::get<2>(id), campus_, k.pair.public_key};
  }
  std::string campus_;
  std::map<LoanId, CampusLoanKey> creds_;
};

// The loans of campus `name` in force in one lender's space, rewritten to `loans`.
void write_loans(ts::Client& c, const std::string& name, const std::vector<sys::CampusLoan>& loans) {
  for (const auto& l : loans) sys::replace(c, sys::loan_template(l.campus, l.borrower, l.job), l.to_tuple());
  for (const auto& t : c.rd_many(sys::kSpace, sys::loan_template(), 10'000)) {
    const auto old = sys::CampusLoan::from_tuple(t);
    if (!old || old->campus != name) continue;
    const bool kept = std::any_of(loans.begin(), loans.end(), [&](const sys::CampusLoan& l) {
      return l.borrower == old->borrower && l.job == old->job;
    });
    if (!kept) c.in_many(sys::kSpace, ts::Template::exactly(t), 1);
  }
}

}  // namespace

std::string describe_round(const LiveCampusConfig& c, const CampusRound& r) {
  std::string loans;
  for (std::size_t l = 0; l < r.loans.size() && l < c.subnets.size(); ++l)
    for (const auto& loan : r.loans[l])
      loans += (loans.empty() ? "" : "; ") + c.subnets[l].name + " lends " + std::to_string(loan.nodes) +
               " to " + loan.borrower + "'s job " + std::to_string(loan.job) +
               (loan.requirement.empty() ? "" : " (it requires " + loan.requirement + ")");
  std::string line = loans.empty() ? "no loans" : "loans: " + loans;
  auto names = [&](auto pick) {
    std::string out;
    for (std::size_t s = 0; s < c.subnets.size(); ++s)
      if (pick(s)) out += (out.empty() ? "" : ", ") + c.subnets[s].name;
    return out;
  };
  const auto& d = r.decision;
  if (auto busy = names([&](std::size_t s) { return s < d.congested.size() && d.congested[s]; });
      !busy.empty())
    line += " | congested: " + busy;
  if (auto silent = names([&](std::size_t s) { return s < r.fresh.size() && !r.fresh[s]; }); !silent.empty())
    line += " | not heard from: " + silent;
  static constexpr const char* kWhy[3] = {"their job ended", "the borrower was relieved",
                                          "the lender needed them"};
  std::string back;
  for (int w = 0; w < 3; ++w)
    if (d.nodes_returned[w] > 0)
      back += (back.empty() ? "" : ", ") + std::to_string(d.nodes_returned[w]) + " as " + kWhy[w];
  if (!back.empty()) line += " | nodes returned: " + back;
  return line;
}

int run_campus(const LiveCampusConfig& config, const std::atomic<bool>& stop, std::ostream& log) {
  LiveCampus campus(config);
  std::vector<SubnetLink> links(config.subnets.size());
  std::function<void(const std::string&)> note = [&](const std::string& line) {
    log << "campus " << config.name << ": " << line << std::endl;
  };
  CampusLoanKeys credentials(config.name);
  const std::function<ts::Client*(std::size_t)> borrower_client = [&](std::size_t i) {
    return links[i].client.get();
  };
  note("deciding every " + yaml::fmt(config.params.period) + " s for " +
       std::to_string(config.subnets.size()) + " subnets, loans leased for " +
       yaml::fmt(config.lease_seconds()) + " s");
  std::string last;
  auto next = Clock::now();
  while (!stop.load()) {
    std::vector<SubnetReading> readings(config.subnets.size());
    for (std::size_t s = 0; s < config.subnets.size(); ++s) {
      try {
        readings[s] = read_subnet(links[s], config.subnets[s]);
      } catch (const std::exception& e) {
        links[s].client.reset();
        if (links[s].was_reached) note("subnet " + config.subnets[s].name + " not reached: " + e.what());
      }
      if (readings[s].reached && !links[s].was_reached) note("subnet " + config.subnets[s].name + " reached");
      links[s].was_reached = readings[s].reached;
    }
    CampusRound r = campus.round(sys::wall_now(), readings);
    std::set<LoanId> kept;
    for (std::size_t l = 0; l < r.loans.size(); ++l) {
      auto& loans = r.loans[l];
      for (auto it = loans.begin(); it != loans.end();) {
        const std::size_t b = index_of(config, it->borrower);
        const SubnetLink& borrower = links[b];
        if (!borrower.client || borrower.options.curve.empty()) {  // no --auth there: no key
          ++it;
          continue;
        }
        const LoanId id{l, b, it->job};
        try {
          credentials.key(id, *borrower.client, borrower.options.curve.server_key, readings[l].agent_keys,
                          *it);
          kept.insert(id);
          ++it;
        } catch (const std::exception& e) {
          note("could not write the key of " + it->borrower + "'s job " + std::to_string(it->job) +
               "'s loan on subnet " + it->borrower + ": " + e.what() + "; not lending it this round");
          it = loans.erase(it);
        }
      }
    }
    credentials.withdraw(kept, borrower_client, note);
    for (std::size_t s = 0; s < config.subnets.size(); ++s) {
      if (!readings[s].reached) continue;
      try {
        write_loans(*links[s].client, config.name, r.loans[s]);
      } catch (const std::exception& e) {
        links[s].client.reset();
        note("could not write subnet " + config.subnets[s].name + "'s loans: " + e.what());
      }
    }
    const std::string now = describe_round(config, r);
    if (now != last) note(now);
    last = now;
    next += std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(config.params.period));
    while (!stop.load() && Clock::now() < next) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  // Lenders stop serving at once rather than at the leases' end.
  for (std::size_t s = 0; s < config.subnets.size(); ++s) {
    try {
      if (links[s].client) write_loans(*links[s].client, config.name, {});
    } catch (const std::exception& e) {
      note("could not withdraw subnet " + config.subnets[s].name + "'s loans: " + e.what());
    }
  }
  // Their keys too, once the lenders no longer hand them out.
  credentials.withdraw({}, borrower_client, note);
  note("stopped");
  return 0;
}

}  // namespace piranha::nps
