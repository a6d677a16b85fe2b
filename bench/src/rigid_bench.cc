// rigid_bench: `piranha sim rigid`'s algorithms timed on a whole workload, for
// docs/performance.md ("Rigid jobs at archive scale").
//
//   rigid_bench [--jobs N] [--nodes P] [--seed S] [--swf FILE] [--algorithms A,B,...] [--json]
//
// The workload is the Lublin–Feitelson model's (N jobs for P nodes, seed S;
// docs/rigid.md, "Synthetic workloads") unless --swf gives a file. Each
// algorithm runs in a child process of its own so that its peak memory can
// be told apart: reported are the CPU seconds (user + system) and wall
// seconds of the run, jobs per CPU second, and the growth of the peak
// resident set during the run per job. Asserts nothing about speed. With
// --json, one object (its "date" the start, UTC) that scripts/perf-summary.py
// reads from docs/perf/ (docs/performance.md, "Adding a run").
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "piranha/rigid/algorithm.h"
#include "piranha/rigid/lublin.h"

namespace {

using namespace piranha;

constexpr const char* kDefault =
    "FIFO,FirstFit,Random,LPT,SPT,Backfill,EASY,Conservative,PFCFS1,PFCFS2,PFCFS3,MTI,MCT,MNI";

struct Args {
  std::size_t jobs = 100000;
  int nodes = 256;
  std::uint64_t seed = 0;
  std::string swf, algorithms = kDefault;
  bool json = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(k + " needs a value");
      return argv[++i];
    };
    if (k == "--jobs")
      a.jobs = std::stoull(value());
    else if (k == "--nodes")
      a.nodes = std::stoi(value());
    else if (k == "--seed")
      a.seed = std::stoull(value());
    else if (k == "--swf")
      a.swf = value();
    else if (k == "--algorithms")
      a.algorithms = value();
    else if (k == "--json")
      a.json = true;
    else
      throw std::invalid_argument("unknown option " + k);
  }
  return a;
}

// The resident set now, bytes.
long resident() {
  std::ifstream in("/proc/self/statm");
  long pages = 0, rss = 0;
  in >> pages >> rss;
  return rss * sysconf(_SC_PAGESIZE);
}

struct Measured {
  double seconds = 0;      // wall
  double cpu_seconds = 0;  // user + system of the run: what a busy machine's other work does not inflate
  long peak_growth = 0;    // bytes
  double makespan = 0;
};

// Runs one algorithm in a child; its figures come back through a pipe.
Measured measure(const rigid::Algorithm& alg, const rigid::Workload& w, const rigid::Machine& m) {
  int fd[2];
  if (pipe(fd) != 0) throw std::runtime_error("pipe failed");
  const pid_t pid = fork();
  if (pid == 0) {
    close(fd[0]);
    const long before = resident();
    rusage u0{};
    getrusage(RUSAGE_SELF, &u0);
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = alg.run(w, m, {});
    Measured out;
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto cpu = [](const rusage& x) {
      return static_cast<double>(x.ru_utime.tv_sec + x.ru_stime.tv_sec) +
             static_cast<double>(x.ru_utime.tv_usec + x.ru_stime.tv_usec) * 1e-6;
    };
    out.cpu_seconds = cpu(u) - cpu(u0);
    out.peak_growth = u.ru_maxrss * 1024 - before;
    out.makespan = r.metrics.makespan;
    if (write(fd[1], &out, sizeof out) != static_cast<ssize_t>(sizeof out)) _exit(1);
    _exit(0);
  }
  close(fd[1]);
  Measured out;
  const bool got = read(fd[0], &out, sizeof out) == static_cast<ssize_t>(sizeof out);
  close(fd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!got || status != 0) throw std::runtime_error(alg.name() + ": the child failed");
  return out;
}

}  // namespace

int main(int argc, char** argv) try {
  const Args a = parse(argc, argv);
  rigid::Workload w;
  if (a.swf.empty()) {
    rigid::LublinOptions o;
    o.jobs = a.jobs;
    o.nodes = a.nodes;
    o.seed = a.seed;
    w = rigid::lublin_workload(o);
  } else {
    w = rigid::read_swf(a.swf);
  }
  const rigid::Machine m = rigid::single_site(a.swf.empty() || w.max_nodes < 1 ? a.nodes : w.max_nodes);
  nlohmann::ordered_json report;
  const std::time_t now = std::time(nullptr);
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  report["date"] = date;
  report["workload"] = {{"source", w.source}, {"jobs", w.jobs.size()}, {"nodes", m.sites[0].nodes}};
  report["results"] = nlohmann::ordered_json::array();
  double total = 0;
  std::stringstream list(a.algorithms);
  for (std::string name; std::getline(list, name, ',');) {
    const auto alg = rigid::make_algorithm(name);
    const Measured r = measure(*alg, w, m);
    total += r.cpu_seconds;
    const double n = static_cast<double>(w.jobs.size());
    report["results"].push_back({{"algorithm", alg->name()},
                                 {"cpu_seconds", r.cpu_seconds},
                                 {"wall_seconds", r.seconds},
                                 {"jobs_per_cpu_second", n / r.cpu_seconds},
                                 {"peak_bytes_per_job", static_cast<double>(r.peak_growth) / n},
                                 {"makespan", r.makespan}});
    if (!a.json)
      std::printf("%-22s %9.3f s cpu %9.3f s wall %12.0f jobs/cpu-s %7.0f B/job\n", alg->name().c_str(),
                  r.cpu_seconds, r.seconds, n / r.cpu_seconds, static_cast<double>(r.peak_growth) / n);
  }
  report["total_cpu_seconds"] = total;
  if (a.json)
    std::cout << report.dump() << "\n";
  else
    std::printf("%-22s %9.3f s cpu\n", "all", total);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "rigid_bench: %s\n", e.what());
  return 2;
}
