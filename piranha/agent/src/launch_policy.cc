#include "piranha/agent/launch_policy.h"

#include <pwd.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>

namespace piranha {
namespace {

std::string listed(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& i : items) out += (out.empty() ? "" : ", ") + i;
  return out;
}

bool allowed_path(const std::vector<std::string>& programs, const std::string& program) {
  for (const auto& p : programs) {
    if (!p.empty() && p.back() == '/' ? program.compare(0, p.size(), p) == 0 && program.size() > p.size()
                                      : program == p)
      return true;
  }
  return false;
}

// SHA-256's round constants and initial hash (FIPS 180-4, 4.2.2 and 5.3.3).
constexpr std::array<std::uint32_t, 64> kRound = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

class Sha256 {
 public:
  void add(std::string_view bytes) {
    for (unsigned char c : bytes) {
      block_[fill_++] = c;
      if (fill_ == 64) compress();
    }
    length_ += bytes.size();
  }
  std::string hex() {
    std::uint64_t bits = length_ * 8;
    block_[fill_++] = 0x80;
    if (fill_ > 56) {
      while (fill_ < 64) block_[fill_++] = 0;
      compress();
    }
    while (fill_ < 56) block_[fill_++] = 0;
    for (int i = 7; i >= 0; --i) block_[fill_++] = static_cast<unsigned char>(bits >> (i * 8));
    compress();
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (std::uint32_t word : h_)
      for (int i = 28; i >= 0; i -= 4) out += digits[(word >> i) & 0xf];
    return out;
  }

 private:
  static std::uint32_t rotr(std::uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }
  void compress() {
    std::array<std::uint32_t, 64> w{};
    for (int i = 0; i < 16; ++i)
      w[i] = std::uint32_t(block_[4 * i]) << 24 | std::uint32_t(block_[4 * i + 1]) << 16 |
             std::uint32_t(block_[4 * i + 2]) << 8 | block_[4 * i + 3];
    for (int i = 16; i < 64; ++i) {
      std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
      std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    std::array<std::uint32_t, 8> v = h_;
    for (int i = 0; i < 64; ++i) {
      std::uint32_t s1 = rotr(v[4], 6) ^ rotr(v[4], 11) ^ rotr(v[4], 25);
      std::uint32_t ch = (v[4] & v[5]) ^ (~v[4] & v[6]);
      std::uint32_t t1 = v[7] + s1 + ch + kRound[i] + w[i];
      std::uint32_t s0 = rotr(v[0], 2) ^ rotr(v[0], 13) ^ rotr(v[0], 22);
      std::uint32_t maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
      for (int j = 7; j > 0; --j) v[j] = v[j - 1];
      v[4] += t1;
      v[0] = t1 + s0 + maj;
    }
    for (int i = 0; i < 8; ++i) h_[i] += v[i];
    fill_ = 0;
  }
  std::array<std::uint32_t, 8> h_ = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                     0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  std::array<unsigned char, 64> block_{};
  std::size_t fill_ = 0;
  std::uint64_t length_ = 0;
};

}  // namespace

std::optional<std::string> launch_refusal(const LaunchPolicy& policy, const std::string& program,
                                          const std::optional<std::string>& digest) {
  if (!policy.programs.empty() && !allowed_path(policy.programs, program))
    return program +
           " is not among this node's allowed programs (piranha_programs: " + listed(policy.programs) + ")";
  if (policy.sha256.empty()) return std::nullopt;
  if (!digest) return program + ": its SHA-256 could not be computed (piranha_sha256 needs it)";
  for (const auto& d : policy.sha256)
    if (d == *digest) return std::nullopt;
  return program + "'s SHA-256 " + *digest + " is not among this node's allowed checksums (piranha_sha256)";
}

std::string sha256_hex(std::string_view bytes) {
  Sha256 h;
  h.add(bytes);
  return h.hex();
}

std::string sha256_of_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read it to check its SHA-256: " + std::strerror(errno));
  Sha256 h;
  char buf[65536];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) h.add(std::string_view(buf, in.gcount()));
  if (in.bad()) throw std::runtime_error(path + ": read error while checking its SHA-256");
  return h.hex();
}

PiranhaIdentity piranha_identity(const std::string& user) {
  passwd pw{}, *found = nullptr;
  std::vector<char> buf(16384);
  errno = 0;
  int rc = getpwnam_r(user.c_str(), &pw, buf.data(), buf.size(), &found);
  if (!found && !user.empty() && user.find_first_not_of("0123456789") == std::string::npos)
    rc = getpwuid_r(static_cast<uid_t>(std::stoul(user)), &pw, buf.data(), buf.size(), &found);
  if (!found)
    throw std::runtime_error("piranha_user: no user \"" + user + "\" on this node" +
                             (rc ? std::string(" (") + std::strerror(rc) + ")" : std::string()));
  if (geteuid() != 0)
    throw std::runtime_error("piranha_user is " + user +
                             ", but the agent does not run as root and so cannot start piranhas as another "
                             "user: run it as root, or remove piranha_user (piranhas then run as the "
                             "agent's user, with its groups and its key file within reach: "
                             "docs/security.md)");
  if (pw.pw_uid == 0)
    throw std::runtime_error("piranha_user: " + user + " is root; piranhas never run as root");
  return PiranhaIdentity{pw.pw_uid, pw.pw_gid};
}

}  // namespace piranha
