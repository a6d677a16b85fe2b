// AccessPolicy: who may do what on an authenticated server.
//
// A server started with CURVE keys (ServerOptions::curve_secret_key) knows
// every session's identity: the name its client's key has in the server's
// list (ServerOptions::clients). Before it carries out a request of such a
// session, it asks the AccessPolicy, if it has one; a refusal is answered
// with error "not_permitted" and the policy's reason, and nothing is done.
// The tuple space itself knows nothing of roles: the pool's rules live in
// piranha/access/rights.h, and piranha/access/pool_access.h implements this interface
// with them.
//
// A policy is called on the server's thread only, once per request (a
// parked in/rd is decided when it arrives, not when it is answered), and
// must not block. hello and bye are never asked about, except a hello that
// asks to be served first (served_first). It is also asked, during the
// handshake, about keys the server's list does not name (admit).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "piranha/tuplespace/codec.h"
#include "piranha/tuplespace/protocol.h"
#include "piranha/tuplespace/store.h"

namespace piranha::ts {

struct AccessQuery {
  std::string_view identity;  // the client's name in the server's key list
  const Request& request;     // decoded and validated
  // Ack: the tuples of the leases it would end (store.h), in its order. The server
  // asks only when the session holds every one of them (otherwise the store
  // refuses the ack with unknown_lease and nothing happens).
  std::vector<HeldTuple> ended;
};

struct AccessVerdict {
  bool allowed = true;
  std::string reason;  // when refused: the error message, naming who and what
  // Tuples the server writes to a space in the same step, right after the
  // request succeeded (not when it failed): records only the server can
  // vouch for, such as who took a job id.
  std::vector<std::pair<std::string, TupleImage>> also_write;

  static AccessVerdict allow() { return {}; }
  static AccessVerdict refuse(std::string why) { return AccessVerdict{false, std::move(why), {}}; }
};

class AccessPolicy {
 public:
  virtual ~AccessPolicy() = default;
  // Decides one request. `store` is the server's, for the facts a rule
  // needs (read it, never change it).
  virtual AccessVerdict decide(const AccessQuery& query, const Store& store) = 0;
  // Whether the session of `identity` may have its requests served before
  // others' (a hello asking served_first, server.h). The default: no one.
  // Asked once per such hello, from the server's thread.
  virtual bool served_first(std::string_view identity) {
    (void)identity;
    return false;
  }
  // A CURVE handshake with a key (Z85 text) that ServerOptions::clients does
  // not list: the identity to admit it under, or nullopt to refuse it (the
  // default). For credentials the pool records in its own tuples; the
  // identity must be one decide() knows.
  virtual std::optional<std::string> admit(std::string_view public_key, const Store& store) {
    (void)public_key;
    (void)store;
    return std::nullopt;
  }
};

}  // namespace piranha::ts
