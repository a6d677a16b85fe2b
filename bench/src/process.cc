#include "process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <stdexcept>

namespace piranha::bench {
namespace {

// Live children, so the watchdog can kill them before giving up.
std::mutex g_children_mu;
std::set<pid_t>& live_children() {
  static std::set<pid_t> pids;
  return pids;
}

int status_of(int raw) {
  if (WIFEXITED(raw)) return WEXITSTATUS(raw);
  if (WIFSIGNALED(raw)) return 128 + WTERMSIG(raw);
  return 255;
}

}  // namespace

ChildProcess::ChildProcess(std::vector<std::string> argv, std::string log_path)
    : log_path_(std::move(log_path)) {
  if (argv.empty()) throw std::invalid_argument("ChildProcess: empty argv");
  // Everything the child needs is prepared before fork: between fork and exec
  // only async-signal-safe calls are allowed (this process has threads).
  std::vector<char*> args;
  for (auto& a : argv) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw std::runtime_error("fork failed: " + std::string(std::strerror(errno)));
  if (pid_ == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(126);
    int fd = ::open(log_path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      ::dup2(fd, STDOUT_FILENO);
      ::dup2(fd, STDERR_FILENO);
    }
    int null_fd = ::open("/dev/null", O_RDONLY);
    if (null_fd >= 0) ::dup2(null_fd, STDIN_FILENO);
    ::execv(args[0], args.data());
    static const char msg[] = "exec failed\n";
    [[maybe_unused]] auto n = ::write(STDERR_FILENO, msg, sizeof msg - 1);
    ::_exit(127);
  }
  std::lock_guard lock(g_children_mu);
  live_children().insert(pid_);
}

ChildProcess::~ChildProcess() {
  stop();
}

void ChildProcess::reaped(int raw, const struct rusage& usage) {
  status_ = status_of(raw);
  cpu_seconds_ = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                 static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
  std::lock_guard lock(g_children_mu);
  live_children().erase(pid_);
}

bool ChildProcess::running() {
  if (status_) return false;
  int raw = 0;
  struct rusage usage {};
  if (::wait4(pid_, &raw, WNOHANG, &usage) == pid_) {
    reaped(raw, usage);
    return false;
  }
  return true;
}

int ChildProcess::wait() {
  if (status_) return *status_;
  int raw = 0;
  struct rusage usage {};
  while (::wait4(pid_, &raw, 0, &usage) < 0) {
    if (errno != EINTR) {
      status_ = 255;
      return *status_;
    }
  }
  reaped(raw, usage);
  return *status_;
}

double ChildProcess::cpu_seconds() const {
  return status_ ? cpu_seconds_ : process_cpu_seconds(pid_);
}

int ChildProcess::stop(std::chrono::milliseconds grace) {
  if (!running()) return *status_;
  ::kill(pid_, SIGTERM);
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (std::chrono::steady_clock::now() < deadline) {
    if (!running()) return *status_;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ::kill(pid_, SIGKILL);
  return wait();
}

std::string ChildProcess::log_tail() const {
  std::ifstream in(log_path_);
  std::deque<std::string> lines;
  for (std::string line; std::getline(in, line);) {
    lines.push_back(line);
    if (lines.size() > 10) lines.pop_front();
  }
  std::string out;
  for (const auto& l : lines) out += "  | " + l + "\n";
  return out.empty() ? "  | (no output)\n" : out;
}

int free_tcp_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed: " + std::string(std::strerror(errno)));
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = 0;
  socklen_t len = sizeof a;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free loopback port: " + std::string(std::strerror(errno)));
  }
  ::close(fd);
  return ntohs(a.sin_port);
}

std::uint64_t resident_bytes(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) {
      std::istringstream fields(line.substr(6));
      std::uint64_t kb = 0;
      fields >> kb;
      return kb * 1024;
    }
  }
  throw std::runtime_error("no VmRSS for process " + std::to_string(pid));
}

double process_cpu_seconds(pid_t pid) {
  // Nanosecond run time per thread, when the kernel keeps scheduler stats.
  std::string task_dir = "/proc/" + std::to_string(pid) + "/task";
  std::error_code ec;
  double total = 0;
  bool have = false;
  for (const auto& task : std::filesystem::directory_iterator(task_dir, ec)) {
    std::ifstream in(task.path() / "schedstat");
    unsigned long long ns = 0;
    if (in >> ns) {
      total += static_cast<double>(ns) / 1e9;
      have = true;
    }
  }
  if (have) return total;
  // Otherwise clock ticks (usually 10 ms) from /proc/<pid>/stat.
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name, which is in parentheses and may hold spaces.
  auto close = stat.rfind(')');
  if (close == std::string::npos)
    throw std::runtime_error("cannot read /proc/" + std::to_string(pid) + "/stat");
  std::istringstream fields(stat.substr(close + 2));
  std::string field;
  unsigned long long utime = 0, stime = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i == 14) utime = std::stoull(field);
    if (i == 15) stime = std::stoull(field);
  }
  return static_cast<double>(utime + stime) / static_cast<double>(::sysconf(_SC_CLK_TCK));
}

double self_cpu_seconds() {
  struct rusage u {};
  ::getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

double load_average() {
  std::ifstream in("/proc/loadavg");
  double one = 0;
  in >> one;
  return one;
}

std::string find_executable(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return ::access(name.c_str(), X_OK) == 0 ? name : std::string();
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  // Debian installs redis-server in /usr/bin; sbin-style PATHs may lack it.
  for (const char* dir : {"/usr/bin", "/usr/sbin", "/usr/local/bin"}) {
    std::string candidate = std::string(dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return {};
}

Watchdog::Watchdog(std::string phase, std::chrono::seconds limit) {
  thread_ = std::thread([this, phase = std::move(phase), limit] {
    std::unique_lock lock(mu_);
    if (cv_.wait_for(lock, limit, [this] { return done_; })) return;
    std::fprintf(stderr, "bench: %s did not finish within %lld s; stopping the run\n", phase.c_str(),
                 static_cast<long long>(limit.count()));
    {
      std::lock_guard children(g_children_mu);
      for (pid_t p : live_children()) ::kill(p, SIGKILL);
    }
    std::_Exit(3);
  });
}

Watchdog::~Watchdog() {
  {
    std::lock_guard lock(mu_);
    done_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Machine describe_machine() {
  Machine m;
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && m.cpu.empty()) {
      auto colon = line.find(':');
      if (colon != std::string::npos) m.cpu = line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  m.cpus = std::thread::hardware_concurrency();
  utsname u{};
  if (::uname(&u) == 0) m.kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string line; std::getline(meminfo, line);) {
    if (line.rfind("MemTotal:", 0) == 0) {
      std::istringstream fields(line.substr(9));
      std::uint64_t kb = 0;
      fields >> kb;
      m.memory_bytes = kb * 1024;
    }
  }
  return m;
}

}  // namespace piranha::bench
