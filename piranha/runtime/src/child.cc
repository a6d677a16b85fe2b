#include "piranha/runtime/child.h"

#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "piranha/runtime/short_slice.h"

extern char** environ;

namespace piranha {

std::string ExitStatus::describe() const {
  if (signal == 0) return "exit status " + std::to_string(code);
  const char* name = sigabbrev_np(signal);
  return "killed by signal " + std::to_string(signal) +
         (name ? std::string(" (SIG") + name + ")" : std::string());
}

std::optional<std::string> find_program(const std::string& program) {
  auto usable = [](const std::string& p) -> std::optional<std::string> {
    if (access(p.c_str(), X_OK) != 0) return std::nullopt;
    char resolved[PATH_MAX];
    if (!realpath(p.c_str(), resolved)) return std::nullopt;
    return std::string(resolved);
  };
  if (program.empty()) return std::nullopt;
  if (program.find('/') != std::string::npos) return usable(program);
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t from = 0;
  while (from <= dirs.size()) {
    std::size_t colon = dirs.find(':', from);
    if (colon == std::string::npos) colon = dirs.size();
    std::string dir = dirs.substr(from, colon - from);
    if (auto p = usable((dir.empty() ? "." : dir) + "/" + program)) return p;
    from = colon + 1;
  }
  return std::nullopt;
}

namespace {

// nice 19 and SCHED_IDLE for every thread of `pid`.
void lower_priority(pid_t pid) {
  sched_param p{};
  p.sched_priority = 0;
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    pid_t tid = static_cast<pid_t>(std::atol(t.path().filename().c_str()));
    if (tid <= 0) continue;
    setpriority(PRIO_PROCESS, static_cast<id_t>(tid), 19);
    sched_setscheduler(tid, SCHED_IDLE, &p);
  }
}

// lower_priority() for `pid` and then, recursively, for the processes it
// has started: each is lowered before its children are listed, so a child
// it starts later inherits the priority and one started before is listed.
void lower_tree(pid_t pid, int depth = 0) {
  lower_priority(pid);
  if (depth > 16) return;
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream kids(t.path() / "children");
    for (pid_t kid; kids >> kid;) lower_tree(kid, depth + 1);
  }
}

ExitStatus decode(int wstatus) {
  if (WIFSIGNALED(wstatus)) return ExitStatus{0, WTERMSIG(wstatus)};
  return ExitStatus{WEXITSTATUS(wstatus), 0};
}

}  // namespace

ChildProcess::ChildProcess(const SpawnOptions& o) : group_(o.own_process_group) {
  if (o.argv.empty()) throw std::runtime_error("no program to start");
  auto path = find_program(o.argv[0]);
  if (!path) throw std::runtime_error(o.argv[0] + ": no such program (or not executable)");

  // Everything the child needs is prepared before fork: after it, only
  // async-signal-safe calls are allowed.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    bool replaced = false;
    for (const auto& [k, v] : o.env)
      if (kv.compare(0, k.size() + 1, k + "=") == 0) replaced = true;
    for (const auto& k : o.unset_env)
      if (kv.compare(0, k.size() + 1, k + "=") == 0) replaced = true;
    if (!replaced) env_strings.push_back(std::move(kv));
  }
  for (const auto& [k, v] : o.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, argv;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> args = o.argv;
  args[0] = *path;
  for (auto& s : args) argv.push_back(s.data());
  argv.push_back(nullptr);

  int out_fd = -1;
  if (!o.output_file.empty()) {
    out_fd = ::open(o.output_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (out_fd < 0)
      throw std::runtime_error(o.output_file + ": cannot open for output: " + std::strerror(errno));
  }
  // The child reports a failed exec through this close-on-exec pipe.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));

  std::vector<rlimit> limits;
  for (const auto& [resource, value] : o.limits) limits.push_back(rlimit{value, value});

  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    if (out_fd >= 0) ::close(out_fd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(err));
  }
  if (pid == 0) {
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGCHLD}) ::signal(s, SIG_DFL);
    auto fail = [&] {
      int err = errno;
      (void)!write(report[1], &err, sizeof err);
      _exit(127);
    };
    for (std::size_t i = 0; i < limits.size(); ++i)
      if (setrlimit(o.limits[i].first, &limits[i]) != 0) fail();
    // Groups first, then the group, then the user: each needs the
    // privilege the next one gives up.
    if (o.identity && (setgroups(0, nullptr) != 0 || setgid(o.identity->gid) != 0 ||
                       setuid(o.identity->uid) != 0 || getuid() != o.identity->uid))
      fail();
    // After the identity change, which clears the parent-death signal.
    if (o.die_with_parent) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);  // the parent died before the line above
    }
    if (o.own_process_group) setpgid(0, 0);
    use_default_slice();  // not the agent's short one (short_slice.h)
    if (out_fd >= 0) {
      dup2(out_fd, 1);
      dup2(out_fd, 2);
    }
    if (o.stderr_fd >= 0) dup2(o.stderr_fd, 2);
    if (!o.cwd.empty() && chdir(o.cwd.c_str()) != 0) fail();
    execve(argv[0], argv.data(), envp.data());
    fail();
  }
  pid_ = pid;
  // Both sides set the group, so a signal sent right after this returns
  // reaches the group even if the child has not run yet.
  if (o.own_process_group) setpgid(pid, pid);
  ::close(report[1]);
  if (out_fd >= 0) ::close(out_fd);
  int err = 0;
  ssize_t n;
  do {
    n = ::read(report[0], &err, sizeof err);
  } while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == sizeof err) {
    int ws = 0;
    waitpid(pid, &ws, 0);
    pid_ = -1;
    throw std::runtime_error(o.argv[0] + ": cannot start: " + std::strerror(err));
  }
  // Lowered once exec has happened, not before: under SCHED_IDLE the exec
  // itself could wait for seconds behind a busy owner, and this process
  // (the agent's loop) waits for it. The program may have run meanwhile
  // (a shell may have started what it runs): it is lowered with every
  // process it has started; threads and processes started later inherit.
  if (o.lowest_priority) lower_tree(pid);
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !status_) {
    signal(SIGKILL);
    wait();
  }
}

void ChildProcess::signal(int sig) {
  if (pid_ <= 0 || status_) return;
  if (group_)
    ::kill(-pid_, sig);
  else
    ::kill(pid_, sig);
}

std::optional<ExitStatus> ChildProcess::poll() {
  if (status_ || pid_ <= 0) return status_;
  int ws = 0;
  pid_t r = waitpid(pid_, &ws, WNOHANG);
  if (r == pid_) status_ = decode(ws);
  return status_;
}

std::optional<ExitStatus> ChildProcess::wait(std::chrono::milliseconds timeout) {
  if (status_ || pid_ <= 0) return status_;
  if (timeout.count() < 0) {
    int ws = 0;
    pid_t r;
    do {
      r = waitpid(pid_, &ws, 0);
    } while (r < 0 && errno == EINTR);
    if (r == pid_) status_ = decode(ws);
    return status_;
  }
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!poll()) {
    if (std::chrono::steady_clock::now() >= deadline) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return status_;
}

}  // namespace piranha
