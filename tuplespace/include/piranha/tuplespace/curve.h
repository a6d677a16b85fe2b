// CURVE keys: ZeroMQ's CurveZMQ encrypts a connection and proves to each end
// who holds the other (docs/security.md). A key pair is a public and a secret
// key of 32 bytes each, written here always as Z85 text of 40 characters.
//
// Key files are small text files (`piranha keys new NAME` writes them):
//
//   NAME.key  (mode 0600)            NAME.pub
//   # comment lines                  # comment lines
//   public-key: "Z85 TEXT"           public-key: "Z85 TEXT"
//   secret-key: "Z85 TEXT"
//
// Wherever a key is read (a --key option, PIRANHA_KEY, an auth file's `key:`)
// the value is either the path of such a file or the key's Z85 text itself.
// Errors are std::invalid_argument whose what() reads "FILE:LINE: problem",
// or "FILE: problem" when no line is at fault.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace piranha::ts {

// The environment variables every client reads its keys from when it is
// given none (ClientOptions::curve_from_environment): this client's secret
// key, and the server's public key.
inline constexpr const char* kKeyEnv = "PIRANHA_KEY";
inline constexpr const char* kServerKeyEnv = "PIRANHA_SERVER_KEY";

// True when this libzmq was built with CURVE (zmq_has("curve")).
bool curve_available();

// A key pair in Z85 text.
struct CurveKeyPair {
  std::string public_key;
  std::string secret_key;
};

// A new random key pair. Throws std::runtime_error when libzmq has no CURVE.
CurveKeyPair new_curve_key_pair();

// True when `text` is a key in Z85 text: 40 characters that decode to 32 bytes.
bool is_z85_key(std::string_view text);

// The public key that belongs to a secret key. Throws InputError when
// `secret` is not a key in Z85 text.
std::string curve_public_key_of(std::string_view secret);

// Writes BASE.key (both keys, mode 0600) and BASE.pub (the public key) with
// `comment` as their first line. Refuses to overwrite either file. Throws
// std::runtime_error naming the file.
void write_key_files(const std::string& base, const CurveKeyPair& keys, const std::string& comment);

// A secret key (with its public key) from `where`: the path of a .key file or
// the secret key's Z85 text. A key file that its group or others may read is
// refused, as ssh refuses such a private key. `what` names where the value
// came from in messages ("--key", "PIRANHA_KEY"). Throws InputError naming
// the file and line ("a.key:2: duplicate secret-key"), or `what` when the
// value names no file.
CurveKeyPair load_secret_key(const std::string& where, std::string_view what);

// A public key from `where`: the path of a .pub or .key file, or the key's
// Z85 text. Throws InputError as load_secret_key does.
std::string load_public_key(const std::string& where, std::string_view what);

// What a client needs for CURVE: its own key pair and the server's public
// key, in Z85 text. All empty: a plain connection.
struct CurveClientKeys {
  std::string public_key;
  std::string secret_key;
  std::string server_key;
  bool empty() const { return secret_key.empty(); }
};

// The keys named by PIRANHA_KEY and PIRANHA_SERVER_KEY: nullopt when neither
// is set (or both are empty). Throws InputError when only one is set (the
// variable that is set is its source) or either cannot be read.
std::optional<CurveClientKeys> curve_keys_from_environment();

}  // namespace piranha::ts
