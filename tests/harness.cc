#include "harness.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace piranha::it {

std::string bin(std::string_view name) {
  return std::string(PIRANHA_BIN_DIR) + "/" + std::string(name);
}

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

bool wait_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    if (done()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
}

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string make_temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string pattern = std::string(base && *base ? base : "/tmp") + "/piranha-it-XXXXXX";
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp: " + std::string(std::strerror(errno)));
  return pattern;
}

}  // namespace

Process::Process(std::vector<std::string> argv) : argv_(std::move(argv)) {
  dir_ = make_temp_dir();
  out_path_ = dir_ + "/stdout";
  err_path_ = dir_ + "/stderr";

  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&files, 1, out_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&files, 2, err_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);

  // A test runner may start us with signals ignored or blocked; the child
  // must see SIGTERM, SIGINT and SIGPIPE as a normal program does.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGTERM, SIGINT, SIGPIPE, SIGHUP, SIGQUIT, SIGALRM, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

  std::vector<char*> args;
  for (auto& a : argv_) args.push_back(a.data());
  args.push_back(nullptr);
  int rc = ::posix_spawn(&pid_, args[0], &files, &attr, args.data(), environ);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    std::filesystem::remove_all(dir_);
    throw std::runtime_error("cannot spawn " + argv_[0] + ": " + std::strerror(rc));
  }
}

Process::~Process() {
  if (!status_ && stop_signal_ != 0) {
    ::kill(pid_, stop_signal_);
    ::kill(pid_, SIGCONT);
    wait(kPatience);
  }
  if (!status_) {
    ::kill(pid_, SIGKILL);  // also ends a stopped child
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void Process::signal(int sig) {
  if (!status_) ::kill(pid_, sig);
}

bool Process::running() {
  if (status_) return false;
  int status = 0;
  pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return true;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return false;
}

std::optional<int> Process::wait(std::chrono::milliseconds timeout) {
  wait_until([this] { return !running(); }, timeout);
  return status_;
}

std::string Process::out() const {
  return read_file(out_path_);
}
std::string Process::err() const {
  return read_file(err_path_);
}

bool Process::wait_for_out(std::string_view text, std::chrono::milliseconds timeout) const {
  return wait_until([&] { return out().find(text) != std::string::npos; }, timeout);
}

bool Process::wait_for_err(std::string_view text, std::chrono::milliseconds timeout) const {
  return wait_until([&] { return err().find(text) != std::string::npos; }, timeout);
}

std::string Process::command() const {
  std::string s;
  for (const auto& a : argv_) s += (s.empty() ? "" : " ") + a;
  return s;
}

ts::ClientOptions quick_client_options() {
  ts::ClientOptions o;
  o.connect_timeout = 250ms;
  return o;
}

bool wait_until_serving(const std::string& endpoint, std::chrono::milliseconds timeout,
                        const ts::ClientOptions& options) {
  return wait_until(
      [&] {
        try {
          ts::Client probe(endpoint, options);
          probe.stats();
          return true;
        } catch (const ts::TupleSpaceError&) {
          return false;
        }
      },
      timeout);
}

namespace {

std::vector<std::string> serve_argv(std::vector<std::string> flags) {
  std::vector<std::string> argv = {bin("piranha"), "ts", "serve"};
  if (std::find(flags.begin(), flags.end(), "--bind") == flags.end()) {
    argv.push_back("--bind");
    argv.push_back("tcp://127.0.0.1:*");
  }
  argv.insert(argv.end(), flags.begin(), flags.end());
  return argv;
}

}  // namespace

ServerProcess::ServerProcess(std::vector<std::string> flags, ts::ClientOptions probe)
    : process_(serve_argv(std::move(flags))) {
  // The first endpoint it names: tcp://ADDRESS:PORT.
  const std::string marker = "serving on tcp://";
  if (!process_.wait_for_err(marker))
    throw std::runtime_error("server did not start: " + process_.command() + "\n" + process_.err());
  std::string log = process_.err();
  std::size_t at = log.find(marker) + marker.size() - 6;
  std::size_t end = log.find_first_of(" ,\n", at);
  endpoint_ = log.substr(at, end == std::string::npos ? std::string::npos : end - at);
  port_ = std::stoi(endpoint_.substr(endpoint_.rfind(':') + 1));
  if (!wait_until_serving(endpoint_, kPatience, probe))
    throw std::runtime_error("server at " + endpoint_ + " does not answer:\n" + process_.err());
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) throw std::runtime_error("socket: " + std::string(std::strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    ::close(fd);
    throw std::runtime_error("cannot find a free port: " + std::string(std::strerror(errno)));
  }
  ::close(fd);
  return ntohs(addr.sin_port);
}

ts::SpaceStats stats_of(ts::Client& c, std::string_view space) {
  if (auto s = c.stats(space)) return *s;
  return ts::SpaceStats{std::string(space)};
}

BackgroundTraffic::BackgroundTraffic(const std::string& endpoint)
    : thread_([this, endpoint] {
        try {
          ts::Client c(endpoint);
          while (!stop_.load()) {
            c.stats();
            ++requests_;
            std::this_thread::sleep_for(100us);  // several requests per millisecond is plenty
          }
        } catch (const ts::TupleSpaceError&) {
          // The server is gone; the test notices on its own.
        }
      }) {}

BackgroundTraffic::~BackgroundTraffic() {
  stop_ = true;
  thread_.join();
}

std::vector<std::string> peer_argv(const std::string& endpoint, std::vector<std::string> args) {
  std::vector<std::string> argv = {bin("ts_peer"), endpoint};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::vector<std::string> lending_agent_argv(const Scratch& s, const std::string& endpoint,
                                            const std::string& node, const std::vector<std::string>& extra) {
  const std::string trace = s.dir + "/up.avail.csv", config = s.dir + "/agent.yaml";
  if (!std::filesystem::exists(trace))
    s.write("up.avail.csv",
            "# piranha availability trace v1\n# step_seconds: 60\n# length: 100000\n"
            "node,start,end\nup,0,100000\n");
  if (!std::filesystem::exists(config))
    s.write("agent.yaml", "policy: FAIR\nscheduler:\n  stale_seconds: 10\n");
  std::vector<std::string> argv{bin("piranha"),
                                "agent",
                                "--node",
                                node,
                                "--server",
                                endpoint,
                                "--config",
                                config,
                                "--trace",
                                trace,
                                "--trace-node",
                                "up",
                                "--piranha-output",
                                s.dir + "/" + node + ".piranhas",
                                "--piranha-priority",
                                "normal",
                                "--campus-loans"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

Scratch::Scratch() {
  char tmpl[] = "/tmp/piranha-test-XXXXXX";
  if (!::mkdtemp(tmpl)) throw std::runtime_error("cannot make a scratch directory in /tmp");
  dir = tmpl;
}

Scratch::~Scratch() {
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}

std::string Scratch::write(const std::string& name, const std::string& text) const {
  std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string Scratch::read(const std::string& name) const {
  std::ifstream in(dir + "/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace piranha::it
