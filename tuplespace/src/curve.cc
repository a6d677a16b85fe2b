#include "piranha/tuplespace/curve.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "piranha/base/input_error.h"

namespace piranha::ts {
namespace {

constexpr std::size_t kZ85KeyLength = 40;

[[noreturn]] void bad(const std::string& source, const std::string& problem) {
  throw InputError(source, problem);
}

std::string trim(std::string_view s) {
  std::size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return {};
  std::size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, b - a + 1));
}

std::string unquote(const std::string& v) {
  if (v.size() >= 2 && (v.front() == '"' || v.front() == '\'') && v.back() == v.front())
    return v.substr(1, v.size() - 2);
  return v;
}

// The entries of a key file: public-key and secret-key, each at most once.
struct KeyFile {
  std::string public_key, secret_key;
  int public_line = 0, secret_line = 0;
};

KeyFile parse_key_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) bad(path, std::string("cannot read: ") + std::strerror(errno));
  KeyFile f;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string text = trim(line);
    if (text.empty() || text[0] == '#') continue;
    std::size_t colon = text.find(':');
    if (colon == std::string::npos)
      throw InputError(path, n, "expected 'public-key: KEY' or 'secret-key: KEY', got '" + text + "'");
    std::string name = trim(std::string_view(text).substr(0, colon));
    std::string value = unquote(trim(std::string_view(text).substr(colon + 1)));
    std::string* slot = name == "public-key" ? &f.public_key : name == "secret-key" ? &f.secret_key : nullptr;
    int* slot_line = name == "public-key" ? &f.public_line : &f.secret_line;
    if (!slot) throw InputError(path, n, "unknown entry '" + name + "' (expected public-key or secret-key)");
    if (!slot->empty()) throw InputError(path, n, "duplicate " + name);
    if (!is_z85_key(value)) throw InputError(path, n, name + " is not a key in Z85 text (40 characters)");
    *slot = value;
    *slot_line = n;
  }
  return f;
}

bool file_exists(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0;
}

// The file a value names, or nullopt when it is a key's Z85 text.
std::optional<std::string> key_file_of(const std::string& where, std::string_view what) {
  if (where.empty()) bad(std::string(what), "empty: expected a key file or a key in Z85 text");
  if (file_exists(where)) return where;
  if (is_z85_key(where)) return std::nullopt;
  bad(std::string(what), "no such key file '" + where + "' (nor is it a key in Z85 text)");
}

void write_file(const std::string& path, const std::string& text, mode_t mode) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) throw std::runtime_error(path + ": cannot create: " + std::strerror(errno));
  // The umask may have taken away more than asked, never added.
  ::fchmod(fd, mode);
  std::size_t done = 0;
  while (done < text.size()) {
    ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      int err = errno;
      ::close(fd);
      throw std::runtime_error(path + ": cannot write: " + std::strerror(err));
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(fd) != 0 || ::close(fd) != 0)
    throw std::runtime_error(path + ": cannot write: " + std::strerror(errno));
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

bool curve_available() {
  return zmq_has("curve") != 0;
}

CurveKeyPair new_curve_key_pair() {
  char pub[kZ85KeyLength + 1], sec[kZ85KeyLength + 1];
  if (zmq_curve_keypair(pub, sec) != 0)
    throw std::runtime_error(std::string("cannot make a CURVE key pair: ") + zmq_strerror(zmq_errno()) +
                             " (is libzmq built with CURVE?)");
  return CurveKeyPair{pub, sec};
}

bool is_z85_key(std::string_view text) {
  if (text.size() != kZ85KeyLength) return false;
  std::string s(text);
  std::uint8_t bytes[32];
  return zmq_z85_decode(bytes, s.c_str()) != nullptr;
}

std::string curve_public_key_of(std::string_view secret) {
  if (!is_z85_key(secret)) throw InputError("secret key", "not a key in Z85 text (40 characters)");
  std::string s(secret);
  char pub[kZ85KeyLength + 1];
  if (zmq_curve_public(pub, s.c_str()) != 0)
    throw std::invalid_argument(std::string("cannot derive the public key: ") + zmq_strerror(zmq_errno()));
  return pub;
}

void write_key_files(const std::string& base, const CurveKeyPair& keys, const std::string& comment) {
  const std::string key = base + ".key", pub = base + ".pub";
  for (const auto& p : {key, pub})
    if (file_exists(p)) throw std::runtime_error(p + ": exists already; not overwritten");
  write_file(key,
             "# " + comment + "\n# The secret key: keep it to its owner (mode 0600). docs/security.md\n" +
                 "public-key: \"" + keys.public_key + "\"\nsecret-key: \"" + keys.secret_key + "\"\n",
             0600);
  write_file(pub,
             "# " + comment + "\n# The public key: list it in the server's auth file. docs/security.md\n" +
                 "public-key: \"" + keys.public_key + "\"\n",
             0644);
}

CurveKeyPair load_secret_key(const std::string& where, std::string_view what) {
  auto file = key_file_of(where, what);
  if (!file) return CurveKeyPair{curve_public_key_of(where), where};
  struct stat st {};
  if (::stat(file->c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    bad(*file, std::string("a secret key file that its group or others may read (mode ") + mode +
                   ") is not used: chmod 600 " + *file);
  }
  KeyFile f = parse_key_file(*file);
  if (f.secret_key.empty()) bad(*file, "no secret-key in it (is it a .pub file?)");
  std::string derived = curve_public_key_of(f.secret_key);
  if (!f.public_key.empty() && f.public_key != derived)
    throw InputError(*file, f.public_line, "public-key does not belong to the secret-key");
  return CurveKeyPair{derived, f.secret_key};
}

std::string load_public_key(const std::string& where, std::string_view what) {
  auto file = key_file_of(where, what);
  if (!file) return where;
  KeyFile f = parse_key_file(*file);
  if (f.public_key.empty()) bad(*file, "no public-key in it");
  return f.public_key;
}

std::optional<CurveClientKeys> curve_keys_from_environment() {
  std::string key = env(kKeyEnv), server = env(kServerKeyEnv);
  if (key.empty() && server.empty()) return std::nullopt;
  if (key.empty())
    throw InputError(kServerKeyEnv,
                     std::string("set, but ") + kKeyEnv + " is not: a client needs its own key too");
  if (server.empty())
    throw InputError(kKeyEnv, std::string("set, but ") + kServerKeyEnv +
                                  " is not: a client needs the server's public key too");
  CurveKeyPair mine = load_secret_key(key, kKeyEnv);
  return CurveClientKeys{mine.public_key, mine.secret_key, load_public_key(server, kServerKeyEnv)};
}

}  // namespace piranha::ts
