// Sealed keys: a CURVE secret key sent to one holder of a key pair through a
// place others may read (a campus loan's `key`, docs/security.md, "Across
// pools"). CURVE keys are X25519 keys, so a secret key is sealed to a public
// key with libsodium's sealed box (crypto_box_seal: an ephemeral key pair,
// X25519 and XSalsa20-Poly1305): only the holder of the matching secret key
// opens it, and a sealed key that was changed does not open. The sender is
// not authenticated by the seal: who may write where the sealed text lies is
// the server's rules' business.
//
// Keys are Z85 text (curve.h); a sealed key is Z85 text of 100 characters
// (80 bytes: the ephemeral public key, the MAC and the 32-byte secret key).
// Thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "piranha/tuplespace/curve.h"

namespace piranha {

// The length of a sealed key's text.
inline constexpr std::size_t kSealedKeyLength = 100;

// `secret_key` sealed to `recipient_public_key`, both Z85 text. Each call
// gives another text (the ephemeral key is new). Throws InputError when
// either is not a key in Z85 text.
std::string seal_secret_key(std::string_view recipient_public_key, std::string_view secret_key);

// The secret key (Z85 text) in `sealed`, opened with `recipient`'s key pair;
// nullopt when `sealed` is not a sealed key's text, was sealed to another
// key, or was changed.
std::optional<std::string> open_secret_key(const ts::CurveKeyPair& recipient, std::string_view sealed);

}  // namespace piranha
