// The pool's access rules (rights.h) as a tuple-space server's
// AccessPolicy (tuplespace/access.h): `piranha ts serve --auth` installs it.
//
// For each request of an authenticated session it decodes what the rules
// look at (only for the system space: templates of takes, tuples written,
// tuples held by the leases an ack ends), reads the facts they need from the
// server's store, and, when the job-id counter is advanced, has the server
// write ("jobowner", id, name) in the same step. Owners of job ids are
// remembered once read (an id is never given twice). Runs on the server's
// thread, like the server's store: not thread-safe.
#pragma once

#include <memory>
#include <vector>

#include "piranha/access/rights.h"
#include "piranha/tuplespace/access.h"

namespace piranha::rights {

// Decides for the sessions whose identities are these principals' names,
// and admits a key that no auth file entry lists when it is a
// ("jobkey", id, node, key) record's, as job id's piranha on node
// (rights::piranha_of), unless that name is an auth file entry's. A session
// with any other identity is refused everything.
std::shared_ptr<ts::AccessPolicy> make_pool_access(std::vector<Principal> principals);

}  // namespace piranha::rights
