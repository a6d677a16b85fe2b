// PiranhaHost: the priority a piranha runs at, and the one it retreats at;
// the job keys' directory, and the removal of those agents killed outright left.
#include "piranha/agent/piranha_host.h"

#include <doctest/doctest.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "piranha/testing/priority_probe.h"

namespace {

using namespace piranha;
using piranha::testing::kernel_keeps_slices;
using piranha::testing::nice_and_policy;
using piranha::testing::slice_of;

PiranhaEnvironment environment() {
  PiranhaEnvironment env;
  env.server = "tcp://127.0.0.1:1";
  env.node = "n1";
  return env;
}

}  // namespace

TEST_CASE(
    "piranha host: a piranha runs at nice 19 under SCHED_IDLE and retreats at nice 0 with a short slice") {
  PiranhaHost host(environment());
  // A program that outlives the test's checks and ignores the retreat signal.
  host.start(sys::JobLaunch{1, "sh", {"-c", "trap '' USR1; sleep 30"}, "/"}, 1);
  auto groups = host.groups();
  REQUIRE(groups.size() == 1);
  pid_t pid = groups[0];
  CHECK(nice_and_policy(pid) == std::pair<int, int>(19, SCHED_IDLE));
  auto now = Clock::now();
  host.retreat(now, std::chrono::milliseconds(10'000), now);
  CHECK(host.retreating());
  CHECK(nice_and_policy(pid) == std::pair<int, int>(0, SCHED_OTHER));
  if (kernel_keeps_slices())
    CHECK(slice_of(pid) == 100'000);
  else
    MESSAGE("this kernel keeps no per-thread slice; only the policy and nice are checked");
}

TEST_CASE("piranha host: with the normal priority a piranha runs as the agent does") {
  PiranhaEnvironment env = environment();
  env.lowest_priority = false;
  PiranhaHost host(env);
  host.start(sys::JobLaunch{1, "sh", {"-c", "trap '' USR1; sleep 30"}, "/"}, 1);
  auto groups = host.groups();
  REQUIRE(groups.size() == 1);
  CHECK(nice_and_policy(groups[0]) == nice_and_policy(getpid()));
  CHECK(nice_and_policy(groups[0]).second != SCHED_IDLE);
}

namespace {

// A private directory standing for the temporary one, removed with its content.
struct TempDir {
  std::string path;
  TempDir() {
    std::string t = (std::filesystem::temp_directory_path() / "piranha-host-test-XXXXXX").string();
    REQUIRE(::mkdtemp(t.data()));
    path = t;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
  // A directory `name` holding a key file, as a host leaves it.
  std::string key_dir(const std::string& name) const {
    std::string d = path + "/" + name;
    REQUIRE(::mkdir(d.c_str(), 0711) == 0);
    std::ofstream(d + "/job-1-1.key") << "a key\n";
    return d;
  }
};

// Sets an environment variable for the life of the object.
struct ScopedEnv {
  std::string name;
  std::optional<std::string> old;
  ScopedEnv(const std::string& n, const std::string& value) : name(n) {
    if (const char* v = std::getenv(n.c_str())) old = v;
    ::setenv(n.c_str(), value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old)
      ::setenv(name.c_str(), old->c_str(), 1);
    else
      ::unsetenv(name.c_str());
  }
};

}  // namespace

TEST_CASE("piranha host: a process's stamp is its pid and start time, and none for a pid that runs nothing") {
  std::string mine = process_stamp(::getpid());
  REQUIRE(!mine.empty());
  CHECK(mine.rfind(std::to_string(::getpid()) + "-", 0) == 0);
  CHECK(process_stamp(::getpid()) == mine);
  // Above any pid_max (2^22).
  CHECK(process_stamp(99'999'999).empty());
}

TEST_CASE("piranha host: leftover job keys' directories of agents no longer running are removed, no others") {
  TempDir tmp;
  const std::string mine = process_stamp(::getpid());
  std::string dead = tmp.key_dir("piranha-keys-99999999-12345-aB3xYz");
  // This process's pid with another start time: a process before it that had the pid.
  std::string reused = tmp.key_dir("piranha-keys-" + std::to_string(::getpid()) + "-1-q1w2e3");
  std::string live = tmp.key_dir("piranha-keys-" + mine + "-Zz9Zz9");
  std::string odd = tmp.key_dir("piranha-keys-99999999-12345-short");
  std::string other_name = tmp.key_dir("piranha-keys-99999999-abcdef");
  // A link under a dead agent's name is not followed, and stays.
  std::string target = tmp.key_dir("elsewhere");
  REQUIRE(::symlink(target.c_str(), (tmp.path + "/piranha-keys-99999999-1-link00").c_str()) == 0);
  std::string foreign;
  if (::geteuid() == 0) {
    // Another user's directory under a dead agent's name stays.
    foreign = tmp.key_dir("piranha-keys-99999999-7-other0");
    REQUIRE(::chown(foreign.c_str(), 65534, 65534) == 0);
  } else {
    MESSAGE("not root: the case of another user's directory is skipped");
  }

  CHECK(remove_leftover_key_dirs(tmp.path) == 2);
  CHECK_FALSE(std::filesystem::exists(dead));
  CHECK_FALSE(std::filesystem::exists(reused));
  CHECK(std::filesystem::exists(live + "/job-1-1.key"));
  CHECK(std::filesystem::exists(odd));
  CHECK(std::filesystem::exists(other_name));
  CHECK(std::filesystem::exists(target + "/job-1-1.key"));
  CHECK(std::filesystem::is_symlink(tmp.path + "/piranha-keys-99999999-1-link00"));
  if (!foreign.empty()) CHECK(std::filesystem::exists(foreign + "/job-1-1.key"));
}

TEST_CASE("piranha host: the job keys' directory is made with the first key, and goes with the host") {
  TempDir tmp;
  ScopedEnv env("TMPDIR", tmp.path);
  tmp.key_dir("piranha-keys-99999999-12345-aB3xYz");
  const std::string prefix = std::string(kKeyDirPrefix) + process_stamp(::getpid()) + "-";
  auto own_dirs = [&] {
    std::vector<std::string> found;
    for (const auto& e : std::filesystem::directory_iterator(tmp.path))
      if (e.path().filename().string().rfind(prefix, 0) == 0) found.push_back(e.path().string());
    return found;
  };
  PiranhaEnvironment e = environment();
  e.job_keys = true;
  {
    PiranhaHost host(e);
    CHECK(host.leftovers_removed() == 1);
    CHECK(own_dirs().empty());
    host.start(sys::JobLaunch{1, "sh", {"-c", "sleep 30"}, "/"}, 1);
    auto dirs = own_dirs();
    REQUIRE(dirs.size() == 1);
    CHECK(!std::filesystem::is_empty(dirs[0]));
  }
  CHECK(own_dirs().empty());
}
