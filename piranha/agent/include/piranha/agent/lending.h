// The agent's side of a campus loan (docs/nps.md, "Hierarchy"): which foreign job, if any, the
// node's idle cores serve. Pure: the agent's loop (agent.cc) reads the ("lent", node, ...) and
// ("loan", ...) records (LoanReader), asks lent_job() after decide(), and starts or retreats the
// foreign job's piranhas, which connect to the borrower's server, in a PiranhaHost of their own.
//
// The node's own pool always comes first: a foreign job runs only while scheduler 0 is obeyed and
// assigns this node no job of its own, the node is available, the agent is not stopping and none
// of its own piranhas runs, and its NPS's ("lent", node, ...) record names a loan in force (not
// expired), and the node satisfies the loan's requirement (its AgentSettings::attributes; its NPS
// lends it only for loans it satisfies, this is the agent's own check, as for its own pool's
// jobs). When any of these stops holding, the foreign piranhas retreat as for an owner.
#pragma once

#include <optional>
#include <span>

#include "piranha/agent/decide.h"
#include "piranha/runtime/sysspace.h"

namespace piranha {

// The loan `lent` names (its borrower and job) among `loans` (any campus's: the one that expires
// last) that has not expired at `now` (wall); nullopt when `lent` names none (job 0) or no such
// loan is there.
std::optional<sys::CampusLoan> loan_for(double now, const std::optional<sys::Lent>& lent,
                                        std::span<const sys::CampusLoan> loans);

// The foreign job this node serves now, by the rules above; `own_running` counts the node's own
// piranhas.
std::optional<sys::CampusLoan> lent_job(double now, const AgentState& state, std::size_t own_running,
                                        const std::optional<sys::Lent>& lent,
                                        std::span<const sys::CampusLoan> loans);

// Whether two loans are the same foreign job on the same server (a change of either means the
// running piranhas retreat).
bool same_foreign_job(const sys::CampusLoan& a, const sys::CampusLoan& b);

}  // namespace piranha
