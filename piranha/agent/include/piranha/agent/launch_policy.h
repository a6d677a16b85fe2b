// LaunchPolicy: what an agent lets a job's program do on its node
// (docs/security.md, "Piranhas"): which programs may run as piranhas, under
// which user, within which resource limits. A key with the `job` role can
// ask every agent to run any program with any arguments; these are the
// node's answer.
//
//   piranha_user: piranha-job          # needs the agent to run as root
//   piranha_programs: [/opt/jobs/, /usr/local/bin/sim]
//   piranha_sha256: [9f86d0...]
//   piranha_limits: {address_space_mb: 4096, cpu_seconds: 86400, open_files: 1024}
//
// launch_refusal() decides; it is pure (the caller resolves the program's
// real path and hashes it). sha256_hex(), sha256_of_file() and
// piranha_identity() are the shell's tools. Thread-compatible.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace piranha {

// Resource limits each piranha gets (setrlimit, soft = hard); 0: not set.
struct LaunchLimits {
  std::uint64_t address_space_mb = 0;  // RLIMIT_AS
  std::uint64_t cpu_seconds = 0;       // RLIMIT_CPU: SIGXCPU, then SIGKILL past it
  std::uint64_t open_files = 0;        // RLIMIT_NOFILE
  bool any() const { return address_space_mb || cpu_seconds || open_files; }
};

struct LaunchPolicy {
  // The user piranhas run as, with its primary group and no supplementary
  // groups; the agent must run as root. Empty: as the agent, with its groups.
  std::string user;
  // The programs allowed: absolute real paths (symbolic links resolved) of a
  // program, or of a directory ending in '/', whose programs (at any depth)
  // are allowed. Empty: any program.
  std::vector<std::string> programs;
  // The SHA-256 digests (64 lower-case hex digits) a program must have one
  // of. Empty: any content.
  std::vector<std::string> sha256;
  LaunchLimits limits;
};

// Why `program` (its real path) may not run as a piranha under `policy`:
// nullopt when it may. `digest` is its SHA-256 in hex, needed (and used)
// only when policy.sha256 is not empty; nullopt there is a refusal.
std::optional<std::string> launch_refusal(const LaunchPolicy& policy, const std::string& program,
                                          const std::optional<std::string>& digest);

// SHA-256 (FIPS 180-4) of `bytes`, as 64 lower-case hex digits.
std::string sha256_hex(std::string_view bytes);

// SHA-256 of the file at `path`, in hex. Throws std::runtime_error naming
// the file when it cannot be read.
std::string sha256_of_file(const std::string& path);

// The uid and primary gid of `user` (a name, or a number). Throws
// std::runtime_error when there is no such user, or when this process is
// not root and so could not take it on.
struct PiranhaIdentity {
  uid_t uid = 0;
  gid_t gid = 0;
};
PiranhaIdentity piranha_identity(const std::string& user);

}  // namespace piranha
