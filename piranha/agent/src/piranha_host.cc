#include "piranha/agent/piranha_host.h"

#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string_view>

#include "piranha/runtime/short_slice.h"
#include "piranha/tuplespace/curve.h"

namespace piranha {
namespace {

int open_pidfd(pid_t pid) {
#ifdef SYS_pidfd_open
  return static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#else
  (void)pid;
  return -1;
#endif
}

// The slice a retreating piranha's threads ask for (short_slice.h): a short
// slice means an early deadline, so each of the retreat's wake-ups runs
// before the owner's busy threads finish theirs.
constexpr std::chrono::nanoseconds kRetreatSlice = std::chrono::microseconds(100);

// Every thread of the process: its signal thread and the ZeroMQ I/O thread
// must run too for the retreat to finish. Nice 0 as well: at nice 19 a
// thread gets about 1.5 % of a CPU against one busy loop of the owner's, and
// a retreat of a few milliseconds' work took hundreds of milliseconds.
void leave_sched_idle(pid_t pid) {
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    pid_t tid = static_cast<pid_t>(std::atol(t.path().filename().c_str()));
    if (tid <= 0) continue;
    if (!set_slice(tid, kRetreatSlice, 0)) {
      sched_param normal{};
      sched_setscheduler(tid, SCHED_OTHER, &normal);
      setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 0);
    }
  }
}

// The end of `text`: at most kStderrTail bytes, from the start of a line.
std::string last_lines(const std::string& text) {
  if (text.size() <= kStderrTail) return text;
  std::size_t from = text.size() - kStderrTail;
  auto nl = text.find('\n', from);
  return nl == std::string::npos || nl + 1 >= text.size() ? text.substr(from) : text.substr(nl + 1);
}

// The owner stamp in the name of a job keys' directory (kKeyDirPrefix, the
// stamp, "-" and mkdtemp's six characters); nullopt for any other name.
std::optional<std::string> key_dir_stamp(std::string_view name) {
  if (!name.starts_with(kKeyDirPrefix)) return std::nullopt;
  name.remove_prefix(std::string_view(kKeyDirPrefix).size());
  if (name.size() < 7 || name[name.size() - 7] != '-') return std::nullopt;
  for (char c : name.substr(name.size() - 6))
    if (!std::isalnum(static_cast<unsigned char>(c))) return std::nullopt;
  std::string_view stamp = name.substr(0, name.size() - 7);
  auto dash = stamp.find('-');
  if (dash == 0 || dash == stamp.npos || dash + 1 == stamp.size()) return std::nullopt;
  for (std::size_t i = 0; i < stamp.size(); ++i)
    if (i != dash && !std::isdigit(static_cast<unsigned char>(stamp[i]))) return std::nullopt;
  return std::string(stamp);
}

// Removes the directory `name` in `parent` and the key files in it, if it is
// a directory (not a link to one) of this process's user. Opened without
// following links and checked on the open descriptor, so that nothing else
// put under that name is touched.
bool remove_key_dir(int parent, const std::string& name) {
  int fd = ::openat(parent, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) return false;
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid()) {
    ::close(fd);
    return false;
  }
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return false;
  }
  while (const dirent* e = ::readdir(d)) {
    std::string_view file = e->d_name;
    if (file.starts_with("job-")) ::unlinkat(fd, e->d_name, 0);
  }
  ::closedir(d);
  return ::unlinkat(parent, name.c_str(), AT_REMOVEDIR) == 0;
}

}  // namespace

std::string process_stamp(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::stringstream text;
  text << in.rdbuf();
  std::string stat = text.str();
  // The name (field 2) may hold spaces and parentheses: fields are counted
  // from its last ')'. The start time is field 22, the 20th after it.
  auto close = stat.rfind(')');
  if (close == std::string::npos) return "";
  std::istringstream fields(stat.substr(close + 1));
  std::string field;
  for (int i = 0; i < 20; ++i)
    if (!(fields >> field)) return "";
  return std::to_string(pid) + "-" + field;
}

std::size_t remove_leftover_key_dirs(const std::string& tmp) {
  // Without /proc no owner can be told gone: nothing is removed.
  if (process_stamp(::getpid()).empty()) return 0;
  int fd = ::open(tmp.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  DIR* d = ::fdopendir(fd);
  if (!d) {
    ::close(fd);
    return 0;
  }
  std::vector<std::string> gone;
  while (const dirent* e = ::readdir(d)) {
    auto stamp = key_dir_stamp(e->d_name);
    if (!stamp) continue;
    pid_t owner = static_cast<pid_t>(std::atol(stamp->c_str()));
    // Another process that was given the same pid has another start time.
    if (owner > 0 && process_stamp(owner) != *stamp) gone.emplace_back(e->d_name);
  }
  std::size_t removed = 0;
  for (const auto& name : gone) removed += remove_key_dir(::dirfd(d), name) ? 1 : 0;
  ::closedir(d);
  return removed;
}

PiranhaHost::PiranhaHost(PiranhaEnvironment env) : env_(std::move(env)) {
  if (!env_.launch.user.empty()) identity_ = piranha_identity(env_.launch.user);
  leftovers_removed_ = remove_leftover_key_dirs(std::filesystem::temp_directory_path().string());
  if (!env_.output_file.empty()) {
    output_fd_ = ::open(env_.output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (output_fd_ < 0)
      throw std::runtime_error(env_.output_file +
                               ": cannot open for the piranhas' output: " + std::strerror(errno));
  }
}

PiranhaHost::~PiranhaHost() {
  for (auto& p : procs_) {
    p.child->signal(SIGCONT);
    p.child->signal(SIGKILL);
    p.child->wait();
    if (p.pidfd >= 0) ::close(p.pidfd);
    if (p.err_fd >= 0) ::close(p.err_fd);
  }
  procs_.clear();
  drop_unused_keys();
  if (!keys_dir_.empty()) ::rmdir(keys_dir_.c_str());
  if (output_fd_ != 2) ::close(output_fd_);
}

const PiranhaHost::JobKeyFile& PiranhaHost::key_of(std::int64_t id) {
  if (auto it = keys_.find(id); it != keys_.end()) return it->second;
  if (keys_dir_.empty()) {
    // Made with the first key, not at start: an agent killed outright leaves
    // a directory behind only if it ran a job, and the next agent removes it.
    // Searchable by the piranhas' user, not listable: a piranha opens its
    // own job's file by the name it is given and learns no other.
    std::string dir =
        (std::filesystem::temp_directory_path() / (kKeyDirPrefix + process_stamp(::getpid()) + "-XXXXXX"))
            .string();
    if (!::mkdtemp(dir.data()) || ::chmod(dir.c_str(), 0711) != 0)
      throw std::runtime_error(dir +
                               ": cannot make the directory of the piranhas' keys: " + std::strerror(errno));
    keys_dir_ = dir;
  }
  ts::CurveKeyPair pair = env_.given_key ? *env_.given_key : ts::new_curve_key_pair();
  std::string base = keys_dir_ + "/job-" + std::to_string(id) + "-" + std::to_string(++keys_made_);
  ts::write_key_files(base, pair, "job " + std::to_string(id) + "'s piranhas on " + env_.node);
  std::string file = base + ".key";
  ::unlink((base + ".pub").c_str());
  if (identity_ && ::chown(file.c_str(), identity_->uid, identity_->gid) != 0) {
    int err = errno;
    ::unlink(file.c_str());
    throw std::runtime_error(file + ": cannot give the piranhas' key to their user: " + std::strerror(err));
  }
  JobKeyFile k{sys::JobKey{id, env_.node, pair.public_key}, file};
  if (env_.announce) env_.announce(k.key);
  return keys_.emplace(id, std::move(k)).first->second;
}

void PiranhaHost::drop_unused_keys() {
  for (auto it = keys_.begin(); it != keys_.end();) {
    bool used = false;
    for (const auto& p : procs_) used = used || p.job_id == it->first;
    if (used) {
      ++it;
      continue;
    }
    ::unlink(it->second.file.c_str());
    if (env_.withdraw) env_.withdraw(it->second.key);
    it = keys_.erase(it);
  }
}

void PiranhaHost::drain(Proc& p) {
  char buf[4096];
  while (p.err_fd >= 0) {
    ssize_t n = ::read(p.err_fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;
    if (n <= 0) {  // its end (or an error): nothing more will come
      ::close(p.err_fd);
      p.err_fd = -1;
      return;
    }
    for (ssize_t done = 0; done < n;) {
      ssize_t w = ::write(output_fd_, buf + done, static_cast<std::size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;  // the output is a service: never block the agent on it
      done += w;
    }
    p.err_tail.append(buf, static_cast<std::size_t>(n));
    if (p.err_tail.size() > 2 * kStderrTail) p.err_tail.erase(0, p.err_tail.size() - kStderrTail);
  }
}

void PiranhaHost::start(const sys::JobLaunch& job, int count) {
  auto program = find_program(job.program);
  if (!program) throw std::runtime_error(job.program + ": no such program (or not executable)");
  // Checked on the file that runs: its real path, its content now.
  std::optional<std::string> digest;
  if (!env_.launch.sha256.empty()) digest = sha256_of_file(*program);
  if (auto refused = launch_refusal(env_.launch, *program, digest)) throw std::runtime_error(*refused);
  const LaunchLimits& l = env_.launch.limits;
  std::vector<std::pair<int, unsigned long long>> limits;
  if (l.address_space_mb) limits.emplace_back(RLIMIT_AS, l.address_space_mb << 20);
  if (l.cpu_seconds) limits.emplace_back(RLIMIT_CPU, l.cpu_seconds);
  if (l.open_files) limits.emplace_back(RLIMIT_NOFILE, l.open_files);
  for (int i = 0; i < count; ++i) {
    SpawnOptions o;
    o.argv = {*program};
    o.argv.insert(o.argv.end(), job.args.begin(), job.args.end());
    o.cwd = job.cwd;
    o.env = {{"PIRANHA_ROLE", "piranha"},
             {"PIRANHA_SERVER", env_.server},
             {"PIRANHA_JOB_ID", std::to_string(job.id)},
             {"PIRANHA_NODE", env_.node}};
    if (env_.heartbeat_timeout_ms > 0)
      o.env.emplace_back("PIRANHA_HEARTBEAT_TIMEOUT_MS", std::to_string(env_.heartbeat_timeout_ms));
    // Never the agent's own key.
    o.unset_env = {ts::kKeyEnv};
    if (env_.foreign) o.unset_env.push_back(ts::kPoolEnv);
    if (env_.foreign && env_.server_key.empty()) o.unset_env.push_back(ts::kServerKeyEnv);
    if (!env_.server_key.empty()) o.env.emplace_back(ts::kServerKeyEnv, env_.server_key);
    if (env_.job_keys || env_.given_key) o.env.emplace_back(ts::kKeyEnv, key_of(job.id).file);
    if (identity_) o.identity = SpawnOptions::Identity{identity_->uid, identity_->gid};
    o.limits = limits;
    o.own_process_group = true;
    o.lowest_priority = env_.lowest_priority;
    o.die_with_parent = true;
    o.output_file = env_.output_file;
    int err[2];
    if (pipe2(err, O_CLOEXEC | O_NONBLOCK) != 0)
      throw std::runtime_error(std::string("pipe for a piranha's stderr: ") + std::strerror(errno));
    // The child's end blocks as usual; only the agent's end must not.
    fcntl(err[1], F_SETFL, fcntl(err[1], F_GETFL) & ~O_NONBLOCK);
    o.stderr_fd = err[1];
    Proc p;
    p.job_id = job.id;
    p.err_fd = err[0];
    try {
      p.child = std::make_unique<ChildProcess>(o);
    } catch (...) {
      ::close(err[0]);
      ::close(err[1]);
      drop_unused_keys();
      throw;
    }
    ::close(err[1]);
    p.pidfd = open_pidfd(p.child->pid());
    procs_.push_back(std::move(p));
  }
}

void PiranhaHost::retreat(Clock::time_point change, std::chrono::milliseconds grace, Clock::time_point now,
                          RetreatCause cause) {
  if (suspended_since_) resume();
  for (auto& p : procs_) {
    if (p.kill_at) continue;  // already retreating
    p.change = change;
    p.kill_at = now + grace;
    // Under SCHED_IDLE a piranha can starve for as long as the owner keeps
    // the processors busy, and so could not even retreat: it goes back to
    // the normal policy at nice 0 to do so. Best effort: without the
    // privilege the grace period still bounds the retreat.
    leave_sched_idle(p.child->pid());
    // The piranha itself first, with the cause as the signal's value; then
    // its process group (a second SIGUSR1 while the first is pending is merged).
    ::sigqueue(p.child->pid(), SIGUSR1, sigval{.sival_int = static_cast<int>(cause)});
    p.child->signal(SIGUSR1);
  }
}

void PiranhaHost::suspend(Clock::time_point now) {
  if (suspended_since_) return;
  for (auto& p : procs_)
    if (!p.kill_at) p.child->signal(SIGSTOP);
  suspended_since_ = now;
}

void PiranhaHost::resume() {
  for (auto& p : procs_) p.child->signal(SIGCONT);
  suspended_since_.reset();
}

std::vector<PiranhaExit> PiranhaHost::reap(Clock::time_point now) {
  std::vector<PiranhaExit> exits;
  for (auto it = procs_.begin(); it != procs_.end();) {
    drain(*it);
    if (auto st = it->child->poll()) {
      auto ended = Clock::now();
      drain(*it);
      PiranhaExit e{it->job_id, it->child->pid(), *st, it->change.has_value(), it->killed, std::nullopt, {}};
      if (it->change) e.retreat_latency = ended - *it->change;
      e.stderr_tail = last_lines(it->err_tail);
      exits.push_back(e);
      if (it->pidfd >= 0) ::close(it->pidfd);
      if (it->err_fd >= 0) ::close(it->err_fd);
      it = procs_.erase(it);
      continue;
    }
    if (it->kill_at && now >= *it->kill_at && !it->killed) {
      it->child->signal(SIGKILL);
      it->killed = true;
    }
    ++it;
  }
  if (procs_.empty()) suspended_since_.reset();
  if (!exits.empty()) drop_unused_keys();
  return exits;
}

std::optional<std::int64_t> PiranhaHost::job() const {
  if (procs_.empty()) return std::nullopt;
  return procs_.front().job_id;
}

bool PiranhaHost::retreating() const {
  for (const auto& p : procs_)
    if (p.kill_at) return true;
  return false;
}

std::vector<pid_t> PiranhaHost::groups() const {
  std::vector<pid_t> g;
  for (const auto& p : procs_) g.push_back(p.child->pid());
  return g;
}

std::vector<int> PiranhaHost::fds() const {
  std::vector<int> f;
  for (const auto& p : procs_) {
    if (p.pidfd >= 0) f.push_back(p.pidfd);
    if (p.err_fd >= 0) f.push_back(p.err_fd);
  }
  return f;
}

bool PiranhaHost::exits_need_polling() const {
  for (const auto& p : procs_)
    if (p.pidfd < 0) return true;
  return false;
}

std::optional<Clock::time_point> PiranhaHost::next_deadline() const {
  std::optional<Clock::time_point> d;
  for (const auto& p : procs_)
    if (p.kill_at && !p.killed && (!d || *p.kill_at < *d)) d = p.kill_at;
  return d;
}

}  // namespace piranha
