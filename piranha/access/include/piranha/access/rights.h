// The pool's access rules: what each role may do, in which space, to which
// tuples, on a server started with --auth (docs/security.md has the table
// and the threats they address).
//
// decide() is a pure function: no I/O, no clock, no state. What it needs to
// know of the system space now (who owns a job, whether a job has ended)
// comes through PoolFacts, so it is tested without sockets and replayed on
// the fuzz corpus. It never throws on any request the server can decode.
//
// The spaces it tells apart:
//   piranha.sys    the system space (docs/system-space.md): rules per tuple tag
//   job.<id>       a job's own space: its owner's, and its piranhas' (each
//                  with a credential for that job alone, ("jobkey", ...));
//                  an agent only removes it once the job has ended
//   _taken.<...>   a client's safe-take markers and safe-out tokens (client.h): anyone's
//   any other      admins' only, or a principal's own `spaces` patterns
//
// Reads (rd, rd_many, watch, stats) of the system space are every role's,
// but a piranha's, which reads only its own job's records.
// Writes and takes there are decided on what the request itself says: the
// tuples it writes, and the template it takes with, whose tag (field 0) and
// the fields a rule names must be actuals, so that a rule on the template is
// a rule on every tuple it can match. Ending a lease (ack, completion) is
// decided on the tuples the leases hold.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "piranha/runtime/sysspace.h"
#include "piranha/tuplespace/protocol.h"

namespace piranha::rights {

namespace ts = piranha::ts;

enum class Role {
  Admin,      // everything
  Scheduler,  // the NPS: reads the system space, writes assignments, its heartbeats, evaluator records
  Agent,      // a node agent: its node's records, holds, its piranhas' credentials
  Job,        // a person's jobs (submit, feeders, cancel, release): the jobs it took ids for
  Owner,      // a workstation's owner: blocks and complaints for that node
  // A campus above several pools (docs/nps.md, "The live campus"), named as its campus file: on a
  // lender, its own loans; on a borrower, its loans' piranha keys (("jobkey", id, NAME, key)).
  Campus,
  // A job's piranhas on one node: its job's space and records only. Never in
  // an auth file: a session is one when its key is a ("jobkey", ...) record's.
  Piranha,
};
std::string_view name(Role r);  // "admin", ...
// The role an auth file names (exact, lower case); never Piranha.
std::optional<Role> role_from(std::string_view text);

// Who a session is: its entry in the auth file.
struct Principal {
  std::string name;  // the session's identity
  Role role = Role::Job;
  std::string node;  // Agent, Owner and Piranha: the node it speaks for (runs on)
  // Spaces it may use as freely as its own: an exact name, or a prefix
  // followed by '*' ("bench.*").
  std::vector<std::string> spaces;
  std::int64_t job = 0;  // Piranha: the job whose space and records it may use
};

// One request, decoded (tuple-space protocol, protocol.h).
struct Action {
  ts::Op op = ts::Op::Hello;
  std::string space;                 // empty when the op names none
  std::optional<ts::Template> tmpl;  // in, in_many: what it takes with
  std::vector<ts::Tuple> tuples;     // out, out_many, a completing ack: what it writes to `space`
  ts::Millis lease = 0;              // in, in_many: > 0 takes under leases
  // ack: the tuples its leases hold, with their spaces, in its order.
  std::vector<std::pair<std::string, ts::Tuple>> ended;
};

// What the rules need to know of the system space as it is now.
class PoolFacts {
 public:
  virtual ~PoolFacts() = default;
  // The name in job id's ("jobowner", ...) record; nullopt when it has none.
  virtual std::optional<std::string> owner_of(std::int64_t job) const = 0;
  // The states of job id's ("job", ...) records in the space (none when it
  // has none, or its record is taken under a lease just now).
  virtual std::vector<sys::JobState> job_states(std::int64_t job) const = 0;
  // Whether ("jobseq.created") is in the space: the job-id counter exists.
  virtual bool counter_created() const = 0;
};

struct Decision {
  bool allowed = true;
  // When refused: which key (and its role) may not do what, in words, and
  // why: which key or role it would need, e.g. "key "ws01" (role agent) may
  // not write node ws02's state record: that needs node ws02's agent key or
  // admin (docs/security.md)". Never a tuple: people read it (a command
  // prints it after "refused: "). The message, not the wire code
  // (not_permitted), may change between versions.
  std::string reason;
  // When allowed: the request advances the job-id counter past this id; the
  // server records the principal as its owner in the same step.
  std::optional<std::int64_t> takes_job_id;
};

Decision decide(const Principal& who, const Action& what, const PoolFacts& facts);

// A piranha principal: job `job`'s piranhas on `node`, as a server admits
// the key of a ("jobkey", job, node, key) record; its name (the session's
// identity) is "NODE/job.ID".
Principal piranha_of(std::int64_t job, const std::string& node);

// The id in a job space's name ("job.17" -> 17); nullopt for any other name.
std::optional<std::int64_t> job_of_space(std::string_view space);

}  // namespace piranha::rights
