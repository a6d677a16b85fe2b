#include "piranha/agent/lending.h"

#include <stdexcept>

#include "piranha/access/sealed_key.h"
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

std::optional<LoanCredentials> loan_credentials(const sys::CampusLoan& loan, const std::string& node,
                                                const std::optional<ts::CurveKeyPair>& agent) {
  if (loan.key.empty()) return std::nullopt;
  const auto key = sys::LoanKey::from_text(loan.key);
  if (!key || !ts::is_z85_key(key->server_key)) throw std::runtime_error("the loan's key is malformed");
  if (!agent) throw std::runtime_error("the loan has a key, and this agent has none to open it with");
  const auto sealed = key->sealed.find(node);
  if (sealed == key->sealed.end())
    throw std::runtime_error("the loan's key is not sealed to this node (has the campus read its agentkey?)");
  auto secret = open_secret_key(*agent, sealed->second);
  if (!secret) throw std::runtime_error("the loan's key for this node does not open with this agent's key");
  return LoanCredentials{key->server_key, ts::CurveKeyPair{ts::curve_public_key_of(*secret), *secret}};
}

}  // namespace piranha
