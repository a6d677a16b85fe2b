// The live campus (docs/nps.md, "Hierarchy"): `piranha nps campus CAMPUS.yaml` above real pools,
// and the lender's side in each pool's `nps run`. The decisions are pure, here; the I/O shells
// are run_campus() (campus_live.cc) and the NPS shell (live.cc), which only read and write the
// system spaces named below.
//
// Every campus period the campus reads, from each subnet's server, the ("subnet", time, json)
// record its NPS keeps there (the subnet's state, the same sched::SubnetState that
// `nps simulate-campus` computes with subnet_state()) and the launch records of its live jobs;
// LiveCampus::round() turns those readings into the loans to be in force in each lender's
// system space (("loan", ...) records, with the borrower's server and the job's program); the
// shell writes them. Each lender's NPS reads its loans at every tick, keeps those from the
// campuses and to the borrowers it trusts that have not expired (plan_lending()), and after its
// scheduler 0 placed its own jobs has its idle nodes serve them (sched::lend_idle), writing one
// ("lent", node, borrower, job, epoch) per node; the node's agent runs the foreign job's
// piranhas, connected to the borrower's server.
//
// A loan lasts until its `expires` (the campus's `lease` after it was written): a campus that
// stops, or is cut off from a lender, stops rewriting it, and the lender's NPS and agents drop
// it then. A subnet whose record is older than `stale` (or whose server did not answer) counts
// as having no jobs and no idle nodes: its loans end (its jobs, as kJobEnded; what it lends, as
// the lender's need).
//
// Not thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "piranha/runtime/sysspace.h"
#include "piranha/scheduler/campus.h"

namespace piranha::nps {

// One subnet of a live campus: its pool's name (the borrower's name in loans), its server, the
// server's public key (a .pub file's path or its Z85 text; empty: $PIRANHA_SERVER_KEY), and the
// subnets it lends its idle nodes to. The campus connects to every server with its own
// $PIRANHA_KEY (none without it).
struct LiveSubnet {
  std::string name, server, server_key;
  std::vector<std::string> lends_to;
};

// A live campus file, parsed (docs/nps.md, "The live campus file").
struct LiveCampusConfig {
  std::string name = "campus";  // the campus's name, in its loans (lenders may trust it by name)
  std::vector<LiveSubnet> subnets;
  // The strategy's parameters, in seconds live; the defaults of simulate-campus.
  sched::CampusParams params;
  double lease = 0;  // seconds a loan stays in force unless rewritten; 0: 3 × period
  double stale = 0;  // a subnet record older than this counts as none; 0: 3 × period
  double lease_seconds() const { return lease > 0 ? lease : 3 * params.period; }
  double stale_seconds() const { return stale > 0 ? stale : 3 * params.period; }
};

// Parses a live campus file's text; `name` is the source of errors, InputError "NAME:LINE:
// problem" (unknown or duplicate keys, values out of range, repeated subnet names, a lends_to
// naming no subnet or the subnet itself, fewer than two subnets).
LiveCampusConfig parse_live_campus(const std::string& text, const std::string& name);
LiveCampusConfig load_live_campus(const std::string& path);

// A subnet's state as the ("subnet", time, json) record carries it, and back (nullopt for a
// json that is not such an object).
std::string subnet_state_json(const sched::SubnetState& state);
std::optional<sched::SubnetState> subnet_state_from_json(const std::string& json);

// What the campus read of one subnet at a round.
struct SubnetReading {
  bool reached = false;                             // its server answered
  std::optional<sys::SubnetReport> report;          // its NPS's latest record
  std::map<sched::JobId, sys::JobLaunch> launches;  // its live jobs' launch records
  std::map<std::string, std::string> agent_keys;    // node -> its agent's public key (("agentkey", ...))
};

// One round's outcome: per subnet (as lender), the loans to be in force in its system space,
// and the strategy's decision (for the log).
struct CampusRound {
  std::vector<std::vector<sys::CampusLoan>> loans;
  sched::CampusDecision decision;
  std::vector<bool> fresh;  // per subnet: its state was read and recent
};

// One line saying what a round decided and why, for the campus's log: the loans in force (with
// a job's requirement when it has one), the congested subnets, those not heard from, and the
// nodes returned at this round by why (LoanEnd). Pure.
std::string describe_round(const LiveCampusConfig& config, const CampusRound& round);

// The campus's memory between rounds: the strategy (with the trust of the config: B lends to A
// when B lists A in lends_to) and the config.
class LiveCampus {
 public:
  // Throws InputError for bad params.
  explicit LiveCampus(LiveCampusConfig config);
  // One round at wall time `now` from every subnet's reading, in the config's order
  // (std::invalid_argument otherwise). A loan whose job's launch record was not read is not
  // written (the lender could not start it), though the strategy keeps it.
  CampusRound round(double now, std::span<const SubnetReading> readings);
  const LiveCampusConfig& config() const { return config_; }

 private:
  LiveCampusConfig config_;
  sched::CampusStrategy strategy_;
};

// What a lender's NPS trusts: the borrowers it lends to and, when not empty, the campuses whose
// loans it serves (`nps run --lend-to`, `--campus`).
struct LendTrust {
  std::vector<std::string> lends_to;
  std::vector<std::string> campuses;
  bool allows(const sys::CampusLoan& loan) const;
};

// A node's lent job: which borrower's job it serves.
struct LentJob {
  std::string borrower;
  sched::JobId job = 0;
  friend bool operator==(const LentJob&, const LentJob&) = default;
};

// The lender's tick: from the loans in its system space (any order, any campus), per node (all
// of one length) whether scheduler 0 gave it a job of its own, whether it is available, and the
// loan it served at the previous tick, the job each node serves now (nullopt: none). Loans
// expired at `now` or that `trust` refuses are left out; the rest are served by
// sched::lend_idle (own jobs first, each loan at most its count, nodes keeping their loan, a loan
// with a requirement only by nodes that satisfy it). `attributes` (empty, or one per node) is
// what each node offers (the default: nothing, so it serves only loans without a requirement).
std::vector<std::optional<LentJob>> plan_lending(double now, std::span<const sys::CampusLoan> loans,
                                                 const LendTrust& trust, std::span<const bool> own,
                                                 std::span<const bool> available,
                                                 std::span<const std::optional<LentJob>> serving,
                                                 std::span<const sched::NodeAttributes> attributes = {});

// `piranha nps campus`: reads the subnets every period, decides, writes the loans (each lender's
// loans by atomic replace per (campus, borrower, job), the ones no longer in force taken), until
// `stop`. Logs a line per round that changed the loans. Returns 0 after a clean stop (its loans
// are taken then, so lenders stop serving them at once).
//
// With a borrower reached with CURVE keys (a server with --auth) each loan has a key pair of its
// own, made as the loan first appears: its public half is written on the borrower as
// ("jobkey", job, CAMPUS, public_key) (the piranha role of that job only), its secret half goes in
// the loan's `key`, sealed to each of the lender's agents' public keys (sys::LoanKey), with the
// borrower server's public key. The record is taken when the loan ends and at the clean stop
// (docs/security.md, "Across pools"). A loan whose record could not be written is not written
// that round.
int run_campus(const LiveCampusConfig& config, const std::atomic<bool>& stop, std::ostream& log);

}  // namespace piranha::nps
