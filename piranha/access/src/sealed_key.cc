#include "piranha/access/sealed_key.h"

#include <sodium.h>
#include <zmq.h>

#include <array>
#include <stdexcept>

#include "piranha/base/input_error.h"

namespace piranha {
namespace {

constexpr std::size_t kKeyBytes = 32;
constexpr std::size_t kSealedBytes = crypto_box_SEALBYTES + kKeyBytes;
static_assert(kSealedBytes * 5 / 4 == kSealedKeyLength);

// The 32 bytes of a key in Z85 text; nullopt for any other text.
std::optional<std::array<std::uint8_t, kKeyBytes>> key_bytes(std::string_view z85) {
  if (!ts::is_z85_key(z85)) return std::nullopt;
  std::array<std::uint8_t, kKeyBytes> out{};
  const std::string text(z85);
  if (!zmq_z85_decode(out.data(), text.c_str())) return std::nullopt;
  return out;
}

std::string z85_of(const std::uint8_t* data, std::size_t size) {
  std::string out(size * 5 / 4 + 1, '\0');
  if (!zmq_z85_encode(out.data(), data, size)) throw std::logic_error("z85: the size is not a multiple of 4");
  out.resize(size * 5 / 4);
  return out;
}

void init_sodium() {
  // Thread-safe and idempotent; fails only without a source of randomness.
  if (sodium_init() < 0) throw std::runtime_error("libsodium: cannot initialise (no random source?)");
}

}  // namespace

std::string seal_secret_key(std::string_view recipient_public_key, std::string_view secret_key) {
  init_sodium();
  const auto to = key_bytes(recipient_public_key);
  if (!to) throw InputError("sealed key", "the recipient's public key is not a key in Z85 text");
  const auto secret = key_bytes(secret_key);
  if (!secret) throw InputError("sealed key", "the secret key is not a key in Z85 text");
  std::array<std::uint8_t, kSealedBytes> sealed{};
  if (crypto_box_seal(sealed.data(), secret->data(), secret->size(), to->data()) != 0)
    throw std::runtime_error("libsodium: crypto_box_seal failed");
  return z85_of(sealed.data(), sealed.size());
}

std::optional<std::string> open_secret_key(const ts::CurveKeyPair& recipient, std::string_view sealed) {
  init_sodium();
  const auto pk = key_bytes(recipient.public_key);
  const auto sk = key_bytes(recipient.secret_key);
  if (!pk || !sk || sealed.size() != kSealedKeyLength) return std::nullopt;
  std::array<std::uint8_t, kSealedBytes> box{};
  const std::string text(sealed);
  if (!zmq_z85_decode(box.data(), text.c_str())) return std::nullopt;
  std::array<std::uint8_t, kKeyBytes> secret{};
  if (crypto_box_seal_open(secret.data(), box.data(), box.size(), pk->data(), sk->data()) != 0)
    return std::nullopt;
  std::string out = z85_of(secret.data(), secret.size());
  sodium_memzero(secret.data(), secret.size());
  return out;
}

}  // namespace piranha
