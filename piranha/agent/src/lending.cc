#include "piranha/agent/lending.h"

#include "piranha/scheduler/requirement.h"

namespace piranha {

std::optional<sys::CampusLoan> loan_for(double now, const std::optional<sys::Lent>& lent,
                                        std::span<const sys::CampusLoan> loans) {
  if (!lent || lent->job == 0) return std::nullopt;
  std::optional<sys::CampusLoan> best;
  for (const auto& l : loans)
    if (l.borrower == lent->borrower && l.job == lent->job && l.expires > now &&
        (!best || l.expires > best->expires))
      best = l;
  return best;
}

std::optional<sys::CampusLoan> lent_job(double now, const AgentState& state, std::size_t own_running,
                                        const std::optional<sys::Lent>& lent,
                                        std::span<const sys::CampusLoan> loans) {
  if (!state.available || state.stopping || !state.obeying_scheduler || state.target || own_running > 0)
    return std::nullopt;
  auto loan = loan_for(now, lent, loans);
  // Its NPS serves a loan only with nodes that satisfy it; the agent checks again, as it does for
  // its own pool's jobs, whoever chose them.
  if (loan && !loan->requirement.empty() &&
      !sched::satisfies(sched::read_requirement(loan->requirement),
                        state.settings.attributes.value_or(sched::NodeAttributes{})))
    return std::nullopt;
  return loan;
}

bool same_foreign_job(const sys::CampusLoan& a, const sys::CampusLoan& b) {
  return a.borrower == b.borrower && a.server == b.server && a.job == b.job && a.program == b.program &&
         a.args == b.args && a.cwd == b.cwd;
}

}  // namespace piranha
