#include "piranha/scheduler/campus.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "piranha/base/input_error.h"

namespace piranha::sched {
namespace {

// A subnet's work for its pressure: its stranded jobs' is work its own nodes cannot do.
double work_left(const SubnetState& s) {
  double w = 0;
  for (const CampusJob& j : s.jobs)
    if (!j.stranded) w += j.work_left;
  return w;
}

// Work per node: a subnet with no node predicted available counts one, so that its pressure is
// its whole work, not infinite.
double pressure(double work, double nodes) {
  return work / std::max(nodes, 1.0);
}

const CampusJob* find_job(const SubnetState& s, JobId job) {
  const auto it = std::find_if(s.jobs.begin(), s.jobs.end(), [&](const CampusJob& j) { return j.id == job; });
  return it == s.jobs.end() ? nullptr : &*it;
}

bool lists(const SubnetState& s, JobId job) {
  return find_job(s, job) != nullptr;
}

// A lender's spare nodes at a decision, by their attributes (SubnetState::idle_nodes; group 0 is
// the idle nodes not listed, which offer nothing). `total` caps what all groups give (the
// reserve and congestion come off it).
struct Spare {
  std::int64_t total = 0;
  std::vector<const NodeAttributes*> offers;  // per group; null: offers nothing
  std::vector<std::int64_t> left;             // per group
  std::vector<std::size_t> order;             // the groups, least useful first

  bool may(std::size_t g, const Requirement& r) const {
    return r.empty() || (offers[g] && satisfies(r, *offers[g]));
  }
  // Takes up to `want` nodes that satisfy `r`; how many it took.
  std::int64_t take(const Requirement& r, std::int64_t want) {
    std::int64_t took = 0;
    for (std::size_t g : order) {
      if (took == want || total == 0) break;
      if (left[g] == 0 || !may(g, r)) continue;
      const std::int64_t k = std::min({want - took, left[g], total});
      left[g] -= k;
      total -= k;
      took += k;
    }
    return took;
  }
  bool can_take(const Requirement& r) const {
    if (total == 0) return false;
    for (std::size_t g = 0; g < left.size(); ++g)
      if (left[g] > 0 && may(g, r)) return true;
    return false;
  }
};

// The spare nodes of a lender with `total` to spare: groups ranked by how many of `requirements`
// (every live job's, distinct) they satisfy, so that loans take the least sought-after first.
Spare spare_of(const SubnetState& s, std::int64_t total, std::span<const Requirement> requirements) {
  Spare out;
  out.total = total;
  std::int64_t listed = 0;
  for (const IdleNodes& g : s.idle_nodes) listed += std::max<std::int64_t>(0, g.count);
  out.offers.push_back(nullptr);
  out.left.push_back(std::max<std::int64_t>(0, s.idle - listed));
  for (const IdleNodes& g : s.idle_nodes) {
    out.offers.push_back(&g.attributes);
    out.left.push_back(std::max<std::int64_t>(0, g.count));
  }
  std::vector<std::size_t> useful(out.left.size(), 0);
  for (std::size_t g = 1; g < useful.size(); ++g)
    for (const Requirement& r : requirements) useful[g] += satisfies(r, *out.offers[g]) ? 1 : 0;
  out.order.resize(out.left.size());
  for (std::size_t g = 0; g < out.order.size(); ++g) out.order[g] = g;
  std::stable_sort(out.order.begin(), out.order.end(),
                   [&](std::size_t a, std::size_t b) { return useful[a] < useful[b]; });
  return out;
}

std::string str(double v) {
  std::string s = std::to_string(v);
  s.erase(s.find_last_not_of('0') + 1);
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

void validate(const CampusParams& p) {
  const std::string src = "campus strategy";
  if (!(p.period > 0)) throw InputError(src, "period " + str(p.period) + " must be > 0");
  if (!(p.relieved >= 0)) throw InputError(src, "relieved " + str(p.relieved) + " must be >= 0");
  if (!(p.relieved <= p.congested))
    throw InputError(src, "relieved " + str(p.relieved) + " must be <= congested " + str(p.congested) +
                              " (the hysteresis band runs from relieved up to congested)");
  if (!(p.hold >= 0)) throw InputError(src, "hold " + str(p.hold) + " must be >= 0");
  if (!(p.cooldown >= 0)) throw InputError(src, "cooldown " + str(p.cooldown) + " must be >= 0");
  if (p.reserve < 0) throw InputError(src, "reserve " + std::to_string(p.reserve) + " must be >= 0");
}

CampusStrategy::CampusStrategy(const CampusParams& params) : params_(params) {
  validate(params_);
}

CampusDecision CampusStrategy::decide(double now, std::span<const SubnetState> subnets) {
  const std::size_t n = subnets.size();
  if (!started_) {
    congested_.assign(n, false);
    reclaimed_at_.assign(n, std::nullopt);
    started_ = true;
  } else if (n != congested_.size()) {
    throw std::invalid_argument("campus strategy: " + std::to_string(n) + " subnets, was " +
                                std::to_string(congested_.size()));
  }
  if (!trust_.empty() &&
      (trust_.size() != n ||
       std::any_of(trust_.begin(), trust_.end(), [&](const auto& row) { return row.size() != n; })))
    throw std::invalid_argument("campus strategy: the trust matrix is not " + std::to_string(n) + " x " +
                                std::to_string(n));
  auto trusted = [&](std::size_t lender, std::size_t borrower) {
    return trust_.empty() || trust_[lender][borrower];
  };
  CampusDecision d;
  auto end = [&](Loan& l, std::int64_t nodes, LoanEnd why) {
    const auto w = static_cast<std::size_t>(why);
    d.nodes_returned[w] += nodes;
    l.nodes -= nodes;
    if (l.nodes == 0) ++d.loans_ended[w];
  };
  auto drop_empty = [&] { std::erase_if(loans_, [](const Loan& l) { return l.nodes <= 0; }); };

  // 1. Loans of jobs that ended.
  for (Loan& l : loans_)
    if (!lists(subnets[l.borrower], l.job)) end(l, l.nodes, LoanEnd::kJobEnded);
  drop_empty();

  // 2. Congestion, with hysteresis: own nodes only, so that what a subnet borrows does not make
  // it look relieved while its loans are what keep its work moving.
  std::vector<double> work(n), own_pressure(n);
  for (std::size_t s = 0; s < n; ++s) {
    work[s] = work_left(subnets[s]);
    own_pressure[s] = pressure(work[s], subnets[s].available);
    congested_[s] =
        congested_[s] ? own_pressure[s] >= params_.relieved : own_pressure[s] >= params_.congested;
  }

  // 3. Loans to relieved subnets, once held long enough; a stranded job needs its loans whatever
  // its subnet's pressure.
  for (Loan& l : loans_)
    if (!congested_[l.borrower] && now - l.since >= params_.hold &&
        !find_job(subnets[l.borrower], l.job)->stranded)
      end(l, l.nodes, LoanEnd::kRelieved);
  drop_empty();

  // 4. The lender's own jobs first: its loans shrink, newest first, to what it can spare.
  std::vector<Requirement> wanted;  // every live job's requirement, once
  for (const SubnetState& s : subnets)
    for (const CampusJob& j : s.jobs)
      if (!j.requirement.empty() && std::find(wanted.begin(), wanted.end(), j.requirement) == wanted.end())
        wanted.push_back(j.requirement);
  std::vector<Spare> spare;
  spare.reserve(n);
  for (std::size_t s = 0; s < n; ++s)
    spare.push_back(spare_of(subnets[s],
                             congested_[s] ? 0 : std::max<std::int64_t>(0, subnets[s].idle - params_.reserve),
                             wanted));
  // Oldest first keep what they can: the newest loans shrink first.
  std::stable_sort(loans_.begin(), loans_.end(),
                   [](const Loan& a, const Loan& b) { return a.since < b.since; });
  for (Loan& l : loans_) {
    const Requirement& r = find_job(subnets[l.borrower], l.job)->requirement;
    const std::int64_t kept = trusted(l.lender, l.borrower) ? spare[l.lender].take(r, l.nodes) : 0;
    if (kept < l.nodes) {
      end(l, l.nodes - kept, LoanEnd::kLenderNeeds);
      reclaimed_at_[l.lender] = now;
    }
  }
  drop_empty();

  // 5. Spare nodes to stranded jobs, then to the most pressed congested subnets, one node at a time.
  for (std::size_t s = 0; s < n; ++s)
    if (reclaimed_at_[s] && now - *reclaimed_at_[s] < params_.cooldown) spare[s].total = 0;
  std::vector<std::int64_t> borrowed(n, 0);
  for (const Loan& l : loans_)
    if (!find_job(subnets[l.borrower], l.job)->stranded) borrowed[l.borrower] += l.nodes;
  std::map<std::pair<std::size_t, JobId>, std::int64_t> lent;  // nodes lent to each job
  for (const Loan& l : loans_) lent[{l.borrower, l.job}] += l.nodes;
  auto lent_to = [&](std::size_t borrower, JobId job) {
    const auto it = lent.find({borrower, job});
    return it == lent.end() ? 0 : it->second;
  };
  const bool any_stranded = std::any_of(subnets.begin(), subnets.end(), [](const SubnetState& s) {
    return std::any_of(s.jobs.begin(), s.jobs.end(), [](const CampusJob& j) { return j.stranded; });
  });
  for (;;) {
    std::optional<std::size_t> lender;
    for (std::size_t s = 0; s < n; ++s)
      if (spare[s].total > 0 && (!lender || spare[s].total > spare[*lender].total)) lender = s;
    if (!lender) break;
    const Spare& offer = spare[*lender];
    auto wants = [&](std::size_t s, const CampusJob& j) {
      return lent_to(s, j.id) < j.tasks_left && (j.requirement.empty() || offer.can_take(j.requirement));
    };
    std::optional<std::size_t> borrower;
    const CampusJob* job = nullptr;
    // A stranded job first: without lent nodes it cannot run at all.
    for (std::size_t s = 0; s < n && any_stranded; ++s) {
      if (s == *lender || !trusted(*lender, s)) continue;
      for (const CampusJob& j : subnets[s].jobs)
        if (j.stranded && wants(s, j) && (!job || j.work_left > job->work_left)) {
          borrower = s;
          job = &j;
        }
    }
    // Else the most pressed borrower that has a job to give the node to.
    double best = 0;
    const bool stranded = job != nullptr;
    for (std::size_t s = 0; s < n && !stranded; ++s) {
      if (!congested_[s] || s == *lender || !trusted(*lender, s)) continue;
      const double p = pressure(work[s], subnets[s].available + static_cast<double>(borrowed[s]));
      if (p < params_.relieved || (borrower && p <= best)) continue;
      const CampusJob* top = nullptr;
      for (const CampusJob& j : subnets[s].jobs)
        if (!j.stranded && wants(s, j) && (!top || j.work_left > top->work_left)) top = &j;
      if (!top) continue;
      borrower = s;
      job = top;
      best = p;
    }
    if (!borrower) {
      // Nobody this lender trusts needs a node: the others may still lend (without trust, no
      // borrower for the lender with the most spare means none for any).
      spare[*lender].total = 0;
      continue;
    }
    auto it = std::find_if(loans_.begin(), loans_.end(), [&](const Loan& l) {
      return l.lender == *lender && l.borrower == *borrower && l.job == job->id;
    });
    if (it == loans_.end()) {
      loans_.push_back(Loan{*lender, *borrower, job->id, 0, now});
      it = std::prev(loans_.end());
      ++d.loans_started;
    }
    ++it->nodes;
    ++lent[{*borrower, job->id}];
    ++d.nodes_lent;
    spare[*lender].take(job->requirement, 1);
    if (!stranded) ++borrowed[*borrower];
  }

  std::sort(loans_.begin(), loans_.end(), [](const Loan& a, const Loan& b) {
    if (a.lender != b.lender) return a.lender < b.lender;
    if (a.borrower != b.borrower) return a.borrower < b.borrower;
    return a.job < b.job;
  });
  d.loans = loans_;
  d.congested = congested_;
  return d;
}

std::vector<std::optional<LoanKey>> lend_idle(std::span<const Loan> loans, std::span<const bool> own,
                                              std::span<const bool> available,
                                              std::span<const std::optional<LoanKey>> serving,
                                              std::span<const Requirement> requirements,
                                              std::span<const NodeAttributes> attributes) {
  const std::size_t n = own.size();
  if (available.size() != n || serving.size() != n)
    throw std::invalid_argument("lend_idle: own, available and serving differ in length");
  if (!requirements.empty() && requirements.size() != loans.size())
    throw std::invalid_argument("lend_idle: requirements and loans differ in length");
  if (!attributes.empty() && attributes.size() != n)
    throw std::invalid_argument("lend_idle: attributes and own differ in length");
  const bool required =
      std::any_of(requirements.begin(), requirements.end(), [](const Requirement& r) { return !r.empty(); });
  const NodeAttributes none;
  // Whether node k may serve loan l.
  auto may = [&](std::size_t l, std::size_t k) {
    return !required || requirements[l].empty() ||
           satisfies(requirements[l], attributes.empty() ? none : attributes[k]);
  };
  std::vector<std::optional<LoanKey>> out(n);
  std::vector<std::int64_t> left;
  left.reserve(loans.size());
  for (const Loan& l : loans) left.push_back(l.nodes);
  auto find = [&](const LoanKey& k) -> std::optional<std::size_t> {
    for (std::size_t i = 0; i < loans.size(); ++i)
      if (loans[i].borrower == k.borrower && loans[i].job == k.job) return i;
    return std::nullopt;
  };
  std::vector<bool> free(n, false);
  std::vector<std::optional<std::size_t>> loan_of(n);  // the loan each node serves now
  // Nodes that served a loan keep it while they may: a change costs the task they run.
  for (std::size_t i = 0; i < n; ++i) {
    if (own[i] || !available[i]) continue;
    free[i] = true;
    if (!serving[i]) continue;
    const auto l = find(*serving[i]);
    if (l && left[*l] > 0 && may(*l, i)) {
      out[i] = serving[i];
      loan_of[i] = l;
      --left[*l];
      free[i] = false;
    }
  }
  if (!required) {
    std::size_t next = 0;
    for (std::size_t l = 0; l < loans.size(); ++l)
      for (; left[l] > 0 && next < n; ++next)
        if (free[next]) {
          out[next] = LoanKey{loans[l].borrower, loans[l].job};
          --left[l];
        }
    return out;
  }
  // Loans with a requirement first, each from the free nodes least sought after by the others.
  std::vector<std::size_t> sought(n, 0);
  for (std::size_t k = 0; k < n; ++k)
    for (std::size_t l = 0; l < loans.size(); ++l) sought[k] += !requirements[l].empty() && may(l, k) ? 1 : 0;
  std::vector<std::size_t> by_need(loans.size()), by_sought(n);
  for (std::size_t l = 0; l < by_need.size(); ++l) by_need[l] = l;
  for (std::size_t k = 0; k < n; ++k) by_sought[k] = k;
  std::stable_partition(by_need.begin(), by_need.end(),
                        [&](std::size_t l) { return !requirements[l].empty(); });
  std::stable_sort(by_sought.begin(), by_sought.end(),
                   [&](std::size_t a, std::size_t b) { return sought[a] < sought[b]; });
  auto give = [&](std::size_t k, std::size_t l) {
    out[k] = LoanKey{loans[l].borrower, loans[l].job};
    loan_of[k] = l;
    free[k] = false;
    --left[l];
  };
  for (std::size_t l : by_need)
    for (std::size_t k : by_sought) {
      if (left[l] == 0) break;
      if (free[k] && may(l, k)) give(k, l);
    }
  // A loan with a requirement still short takes a node from another loan that a free node can
  // serve instead.
  for (std::size_t l : by_need) {
    if (requirements[l].empty()) break;
    for (std::size_t k = 0; k < n && left[l] > 0; ++k) {
      if (!loan_of[k] || *loan_of[k] == l || !may(l, k)) continue;
      const std::size_t other = *loan_of[k];
      for (std::size_t f : by_sought)
        if (free[f] && may(other, f)) {
          give(f, other);
          ++left[other];
          give(k, l);
          break;
        }
    }
  }
  return out;
}

}  // namespace piranha::sched
