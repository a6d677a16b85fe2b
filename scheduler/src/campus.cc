#include "piranha/scheduler/campus.h"

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>

#include "piranha/base/input_error.h"

namespace piranha::sched {
namespace {

double work_left(const SubnetState& s) {
  double w = 0;
  for (const CampusJob& j : s.jobs) w += j.work_left;
  return w;
}

// Work per node: a subnet with no node predicted available counts one, so that its pressure is
// its whole work, not infinite.
double pressure(double work, double nodes) {
  return work / std::max(nodes, 1.0);
}

bool lists(const SubnetState& s, JobId job) {
  return std::any_of(s.jobs.begin(), s.jobs.end(), [&](const CampusJob& j) { return j.id == job; });
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

  // 3. Loans to relieved subnets, once held long enough.
  for (Loan& l : loans_)
    if (!congested_[l.borrower] && now - l.since >= params_.hold) end(l, l.nodes, LoanEnd::kRelieved);
  drop_empty();

  // 4. The lender's own jobs first: its loans shrink, newest first, to what it can spare.
  std::vector<std::int64_t> spare(n);
  for (std::size_t s = 0; s < n; ++s)
    spare[s] = congested_[s] ? 0 : std::max<std::int64_t>(0, subnets[s].idle - params_.reserve);
  // Oldest first keep what they can: the newest loans shrink first.
  std::stable_sort(loans_.begin(), loans_.end(),
                   [](const Loan& a, const Loan& b) { return a.since < b.since; });
  for (Loan& l : loans_) {
    const std::int64_t kept = trusted(l.lender, l.borrower) ? std::min(l.nodes, spare[l.lender]) : 0;
    if (kept < l.nodes) {
      end(l, l.nodes - kept, LoanEnd::kLenderNeeds);
      reclaimed_at_[l.lender] = now;
    }
    spare[l.lender] -= kept;
  }
  drop_empty();

  // 5. Spare nodes to the most pressed congested subnets, one node at a time.
  for (std::size_t s = 0; s < n; ++s)
    if (reclaimed_at_[s] && now - *reclaimed_at_[s] < params_.cooldown) spare[s] = 0;
  std::vector<std::int64_t> borrowed(n, 0);
  for (const Loan& l : loans_) borrowed[l.borrower] += l.nodes;
  std::map<std::pair<std::size_t, JobId>, std::int64_t> lent;  // nodes lent to each job
  for (const Loan& l : loans_) lent[{l.borrower, l.job}] += l.nodes;
  auto lent_to = [&](std::size_t borrower, JobId job) {
    const auto it = lent.find({borrower, job});
    return it == lent.end() ? 0 : it->second;
  };
  for (;;) {
    std::optional<std::size_t> lender;
    for (std::size_t s = 0; s < n; ++s)
      if (spare[s] > 0 && (!lender || spare[s] > spare[*lender])) lender = s;
    if (!lender) break;
    // The most pressed borrower that has a job to give the node to.
    std::optional<std::size_t> borrower;
    const CampusJob* job = nullptr;
    double best = 0;
    for (std::size_t s = 0; s < n; ++s) {
      if (!congested_[s] || s == *lender || !trusted(*lender, s)) continue;
      const double p = pressure(work[s], subnets[s].available + static_cast<double>(borrowed[s]));
      if (p < params_.relieved || (borrower && p <= best)) continue;
      const CampusJob* top = nullptr;
      for (const CampusJob& j : subnets[s].jobs)
        if (lent_to(s, j.id) < j.tasks_left && (!top || j.work_left > top->work_left)) top = &j;
      if (!top) continue;
      borrower = s;
      job = top;
      best = p;
    }
    if (!borrower) {
      // Nobody this lender trusts needs a node: the others may still lend (without trust, no
      // borrower for the lender with the most spare means none for any).
      spare[*lender] = 0;
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
    --spare[*lender];
    ++borrowed[*borrower];
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
                                              std::span<const std::optional<LoanKey>> serving) {
  const std::size_t n = own.size();
  if (available.size() != n || serving.size() != n)
    throw std::invalid_argument("lend_idle: own, available and serving differ in length");
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
  // Nodes that served a loan keep it while they may: a change costs the task they run.
  for (std::size_t i = 0; i < n; ++i) {
    if (own[i] || !available[i]) continue;
    free[i] = true;
    if (!serving[i]) continue;
    const auto l = find(*serving[i]);
    if (l && left[*l] > 0) {
      out[i] = serving[i];
      --left[*l];
      free[i] = false;
    }
  }
  std::size_t next = 0;
  for (std::size_t l = 0; l < loans.size(); ++l)
    for (; left[l] > 0 && next < n; ++next)
      if (free[next]) {
        out[next] = LoanKey{loans[l].borrower, loans[l].job};
        --left[l];
      }
  return out;
}

}  // namespace piranha::sched
