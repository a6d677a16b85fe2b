// AuthConfig: the tuple-space server's auth file (`piranha ts serve --auth
// auth.yaml`, docs/security.md): which keys may connect, under which names,
// in which roles.
//
//   clients:
//     - {name: admin, key: admin.pub, role: admin}
//     - {name: nps, key: nps.pub, role: scheduler}
//     - {name: ws01, key: ws01.pub, role: agent}             # node: its name
//     - {name: ws01-owner, key: "Z85 TEXT", role: owner, node: ws01}
//     - {name: alice, key: /home/alice/alice.pub, role: job, spaces: ["alice.*"]}
//     - {name: uni, key: uni.pub, role: campus}              # a campus, by its name
//
// `key` is a public key file (a relative path is resolved against the auth
// file's directory) or the key's Z85 text (quote it: Z85 uses YAML's
// punctuation). `node` (agent, owner) names the node the client speaks for
// and defaults to `name`; it is an error for other roles. `spaces` lists
// extra spaces the client may use as its own: exact names, or a prefix
// followed by '*'. Parsing is strict: unknown keys, duplicate names,
// duplicate keys, unknown roles and unreadable key files are errors
// (InputError, "FILE:LINE: problem").
#pragma once

#include <string>
#include <vector>

#include "piranha/access/rights.h"
#include "piranha/base/input_error.h"

namespace piranha {

struct AuthClient {
  rights::Principal principal;
  std::string public_key;  // Z85 text
};

struct AuthConfig {
  std::vector<AuthClient> clients;
};

// Parses `text`; `name` is the file name used in messages and the base for
// relative key paths. Throws InputError.
AuthConfig parse_auth_config(const std::string& text, const std::string& name);

// Reads and parses the file at `path`. Throws InputError.
AuthConfig load_auth_config(const std::string& path);

}  // namespace piranha
