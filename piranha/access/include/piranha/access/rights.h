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
//   job.<id>       a job's own space: its owner's and every agent's (piranhas
//                  run with their agent's key)
//   _taken.<...>   a client's safe-take markers (client.h): anyone's
//   any other      admins' only, or a principal's own `spaces` patterns
//
// Reads (rd, rd_many, watch, stats) of the system space are every role's.
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
  Agent,      // a node agent and its piranhas: its node's records, jobs' spaces, holds
  Job,        // a person's jobs (submit, feeders, cancel, release): the jobs it took ids for
  Owner,      // a workstation's owner: blocks and complaints for that node
};
std::string_view name(Role r);                         // "admin", ...
std::optional<Role> role_from(std::string_view text);  // exact, lower case

// Who a session is: its entry in the auth file.
struct Principal {
  std::string name;  // the session's identity
  Role role = Role::Job;
  std::string node;  // Agent and Owner: the node it speaks for
  // Spaces it may use as freely as its own: an exact name, or a prefix
  // followed by '*' ("bench.*").
  std::vector<std::string> spaces;
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
  // When refused: who may not do what and why, e.g. "agent ws01 may not
  // write ("node", "ws02", ...) in piranha.sys: an agent writes only node
  // ws01's records".
  std::string reason;
  // When allowed: the request advances the job-id counter past this id; the
  // server records the principal as its owner in the same step.
  std::optional<std::int64_t> takes_job_id;
};

Decision decide(const Principal& who, const Action& what, const PoolFacts& facts);

// The id in a job space's name ("job.17" -> 17); nullopt for any other name.
std::optional<std::int64_t> job_of_space(std::string_view space);

}  // namespace piranha::rights
