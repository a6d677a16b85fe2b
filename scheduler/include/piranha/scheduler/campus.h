// The campus strategy of the hierarchical NPS (the paper's Figure 9, "Multiple Hierarchical NPS
// System"): subnet pools, each scheduled by its own NPS at its own fast period, and above them a
// campus that runs at a slower period and *lends* idle nodes of one subnet to a job of a
// congested one (docs/nps.md, "Hierarchy").
//
// Two pure parts, in the style of the strategy library (strategy.h):
//   CampusStrategy  what the campus decides at each of its periods: from each subnet's state
//                   (its jobs' predicted work left, its predicted-available and idle nodes) and
//                   its own memory (the loans in force), the loans in force afterwards;
//   lend_idle()     what a lending subnet's NPS does with them at each of its own ticks: its own
//                   jobs first, then its idle nodes serve the loans.
// A loan is a count, not a list of nodes: "subnet B lends k of its idle nodes to job j of subnet
// A". The lender picks which nodes, tick by tick, because only it sees when a node stops being
// idle. Its own jobs always come first: a node its own scheduler gives a job stops serving the
// loan at that tick, and the campus shrinks the loan to what the lender can spare at its next
// decision. Loans end when the borrower's job ends, when the borrower is no longer congested
// (after a minimum hold), or when the lender needs the nodes.
//
// Job requirements (requirement.h, the paper's "specialized hardware ... not available in the
// subnet to which it was submitted"): a job with a requirement that no node of its own subnet
// satisfies is *stranded*; it borrows whatever its subnet's pressure, and every loan to a job with
// a requirement is of lender nodes that satisfy it (the lender's idle nodes are reported by their
// attributes).
//
// Times are in the caller's unit (simulation steps, or seconds live), as for strategies. Pure: no
// I/O, no clock (now is passed in), no randomness. Not thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "piranha/scheduler/job_list.h"
#include "piranha/scheduler/requirement.h"

namespace piranha::sched {

// A subnet's live job as the campus sees it.
struct CampusJob {
  JobId id = 0;
  double work_left = 0;         // predicted node-time left: tasks left × believed task time
  std::int64_t tasks_left = 1;  // no job is lent more nodes than it has tasks left
  // What a node must offer to run it (empty: any node). Loans to it are only of lender nodes that
  // satisfy it.
  Requirement requirement{};
  // Its requirement is satisfied by no node of its own subnet (whose agent is up): it can run only
  // on lent nodes. Its work does not count in its subnet's pressure; it borrows before any
  // pressure is considered, whether its subnet is congested or not, and its loans end only as its
  // job ends, as it is no longer stranded (then by the pressure rules) or as the lender needs them.
  bool stranded = false;
};

// Idle nodes of a subnet that offer the same attributes.
struct IdleNodes {
  NodeAttributes attributes;
  std::int64_t count = 0;
  friend bool operator==(const IdleNodes&, const IdleNodes&) = default;
};

// One subnet as its NPS reports it at a campus decision.
struct SubnetState {
  std::vector<CampusJob> jobs;  // its live jobs (queued or running), any order
  // Its own nodes predicted available over the next period (fractional: the sum of its monitors'
  // predicted available fractions).
  double available = 0;
  // Its own nodes available now that its own scheduler leaves without a job of its own (nodes
  // serving a loan count: the lender does not need them).
  std::int64_t idle = 0;
  // Its idle nodes by what they offer jobs' requirements, each attribute set once; the counts sum
  // to at most `idle`, and the idle nodes not listed offer nothing: they serve only jobs without a
  // requirement. Empty for a subnet whose nodes publish no attributes.
  std::vector<IdleNodes> idle_nodes;
};

// The campus strategy's parameters (docs/nps.md, "Hierarchy"). A subnet's *pressure* is its
// predicted work left per predicted-available node of its own: how long it would need alone to
// clear its queue.
struct CampusParams {
  // Time between the campus's decisions: the caller decides at that rate, slower than its
  // subnets' NPSs (the paper: "Higher level NPS systems could run at a relatively slower rate").
  double period = 10;
  // A subnet becomes congested (a borrower) when its pressure reaches `congested`, and stays so
  // until its pressure falls below `relieved` (<= congested): the band between them is the
  // hysteresis that keeps a subnet near one threshold from starting and ending loans in turn.
  double congested = 60;
  double relieved = 20;
  // A loan lasts at least this long, unless its job ends or its lender needs the nodes.
  double hold = 30;
  // A lender that took nodes back lends no more for this long after: its own load is changing.
  double cooldown = 30;
  // Idle nodes every lender keeps unlent (for its own next arrivals).
  std::int64_t reserve = 0;
};

// Throws InputError (source "campus strategy") unless period > 0, 0 <= relieved <= congested,
// hold >= 0, cooldown >= 0 and reserve >= 0.
void validate(const CampusParams& params);

// Subnet `lender` lends `nodes` of its idle nodes to job `job` of subnet `borrower`.
struct Loan {
  std::size_t lender = 0, borrower = 0;  // subnet indices
  JobId job = 0;
  std::int64_t nodes = 0;  // >= 1
  double since = 0;        // when the loan began (it keeps this when it grows or shrinks)
  friend bool operator==(const Loan&, const Loan&) = default;
};

// Why nodes stopped being lent.
enum class LoanEnd {
  kJobEnded,     // the borrower's job is no longer live
  kRelieved,     // the borrower is no longer congested (and the hold has passed)
  kLenderNeeds,  // the lender has fewer spare nodes than it lends, or is congested itself
};

// What one decision did, for the campus's report and overhead.
struct CampusDecision {
  std::vector<Loan> loans;         // every loan in force afterwards, by (lender, borrower, job)
  std::vector<bool> congested;     // per subnet, after the decision
  std::int64_t loans_started = 0;  // loans new at this decision
  std::int64_t nodes_lent = 0;     // nodes added to loans (new or grown)
  // Nodes taken off loans, by LoanEnd, and loans that ended whole, by LoanEnd.
  std::int64_t nodes_returned[3] = {0, 0, 0};
  std::int64_t loans_ended[3] = {0, 0, 0};
};

class CampusStrategy {
 public:
  // Throws InputError for bad params (validate()).
  explicit CampusStrategy(const CampusParams& params);

  // One decision at `now` (non-decreasing from call to call), from every subnet's state, given in
  // the same order (the same count) at every call: std::invalid_argument otherwise. In order:
  //  1. loans whose job the borrower no longer lists end (kJobEnded);
  //  2. each subnet's congestion is updated with the hysteresis of CampusParams;
  //  3. loans to a subnet no longer congested end once they are `hold` old (kRelieved);
  //  4. each lender's loans shrink, newest first, to its spare nodes (idle − reserve; none when
  //     it is congested itself) (kLenderNeeds), which starts its cooldown;
  //  5. spare nodes of lenders out of cooldown go one at a time, from the lender with the most
  //     spare nodes left (ties: the lowest index), among the borrowers that lender trusts
  //     (set_trust: all by default), first to the stranded job with the most work left that has
  //     more tasks left than nodes lent to it, then to the congested subnet with the highest
  //     pressure counting what it already borrows, while that is at least `relieved`, each to
  //     its job with the most work left that has more tasks left than nodes lent to it;
  //     in both, only to a job that one of the lender's spare nodes satisfies.
  // Stranded jobs (CampusJob) count in none of the pressures, and loans to them in no borrowing.
  // A lender's spare nodes are counted by their attributes (SubnetState::idle_nodes): a loan to a
  // job with a requirement takes nodes that satisfy it, and each loan (oldest first) takes the
  // nodes that satisfy the fewest of the live jobs' requirements first, so that a plain job does
  // not take the nodes a special one needs. That accounting is greedy, not a matching: it may
  // lend fewer nodes than a cleverer one would, never more than the lender can serve.
  // Existing loans are never moved to another borrower: a loan changes only by the rules above.
  CampusDecision decide(double now, std::span<const SubnetState> subnets);

  // Which subnet may lend to which: trust[lender][borrower] (the live campus's `lends_to`, both
  // sides agreeing). An n × n matrix for the n subnets decide() is given; empty (the default):
  // every subnet may lend to every other. Loans in force that it forbids end at the next decision
  // (kLenderNeeds). std::invalid_argument at decide() when it is not n × n.
  void set_trust(std::vector<std::vector<bool>> trust) { trust_ = std::move(trust); }

  // The loans in force (as the last decision returned them).
  const std::vector<Loan>& loans() const { return loans_; }
  const CampusParams& params() const { return params_; }

 private:
  CampusParams params_;
  std::vector<Loan> loans_;
  std::vector<bool> congested_;
  std::vector<std::optional<double>> reclaimed_at_;  // per lender: when it last took nodes back
  bool started_ = false;
  std::vector<std::vector<bool>> trust_;
};

// Which loan a node serves: the borrower's subnet and its job.
struct LoanKey {
  std::size_t borrower = 0;
  JobId job = 0;
  friend bool operator==(const LoanKey&, const LoanKey&) = default;
};

// One lending subnet's tick: which of its nodes serve which of `loans` (this lender's, any
// order). Per node (all spans of one length): `own` whether its own scheduler gave it a job of
// its own, `available` whether a piranha may run there now, `serving` the loan it served at the
// previous tick. Returns, per node, the loan it serves now (nullopt: none). A node with a job of
// its own, or unavailable, serves none; each loan gets at most `nodes` nodes, first those that
// served it at the previous tick (fewest retreats), then free idle ones in index order.
//
// Requirements: `requirements` (empty, or one per loan: its job's, empty for none) and
// `attributes` (empty, or one per node: what it offers; the default offers nothing). A node serves
// a loan only when it satisfies the loan's requirement. Loans with a requirement are filled before
// those without, each from the free nodes that satisfy the fewest of the loans' requirements
// first; a loan with a requirement still short then takes a node that serves another loan when a
// free node can serve that one instead (one retreat). With no requirement anywhere, the rule above
// unchanged. std::invalid_argument when a span has the wrong length.
std::vector<std::optional<LoanKey>> lend_idle(std::span<const Loan> loans, std::span<const bool> own,
                                              std::span<const bool> available,
                                              std::span<const std::optional<LoanKey>> serving,
                                              std::span<const Requirement> requirements = {},
                                              std::span<const NodeAttributes> attributes = {});

}  // namespace piranha::sched
