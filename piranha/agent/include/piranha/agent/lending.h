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
#include <string>

#include "piranha/agent/decide.h"
#include "piranha/runtime/sysspace.h"
#include "piranha/tuplespace/curve.h"

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

// What a loan's piranhas on this node connect to the borrower with: the borrower server's public key
// and the loan's key pair (docs/security.md, "Across pools").
struct LoanCredentials {
  std::string server_key;
  ts::CurveKeyPair key;
  friend bool operator==(const LoanCredentials& a, const LoanCredentials& b) {
    return a.server_key == b.server_key && a.key.secret_key == b.key.secret_key;
  }
};

// The credentials in `loan`'s key (a sys::LoanKey's text) for `node`, opened with its agent's key
// pair `agent`: nullopt with an empty key (a borrower without --auth: the piranhas get no key).
// Throws std::runtime_error saying why when the key holds none for this node (the campus had not
// read its agent's key), or it does not open with `agent` (sealed to another key), or it is
// not a loan key's text.
std::optional<LoanCredentials> loan_credentials(const sys::CampusLoan& loan, const std::string& node,
                                                const std::optional<ts::CurveKeyPair>& agent);

}  // namespace piranha
