// cmatrix: matrix multiply as a Piranha job (the paper, section 9.2).
//
//   cmatrix N [--grain K] [--seed S] [--sequential]
//
// The feeder puts B's columns into the job's space in blocks of about 256 KB,
// ("B", k, first column, columns), each as soon as it is made; then one task
// per row-by-column product ("task", i, j) with A's rows beside them, or with
// --grain K one task per block of K rows ("task", i, -1, rows) that carries
// those rows and multiplies them by all of B: one request brings a piranha
// its task and the rows it needs. Piranhas read B's blocks in order as they
// arrive, so B travels while the feeder is still making it, then the rows
// they need (keeping them), compute, and complete each task with its
// result. The feeder collects C and checks it against a sequential
// multiply: every element must arrive exactly once and be exact (the
// matrices hold small integers, so the sums are exact).
//
// It prints two times: "parallel", from B written to every result taken
// (what the speedup over the sequential multiply is taken from), and "job",
// from the feeder's start, which includes making and distributing B; and
// how busy the machine's CPUs were during the parallel time (/proc/stat), so
// that a speedup can be read against what the CPUs had left. --sequential
// runs only the sequential multiply, without Piranha: two at once measure
// what two cores give the kernel itself (bench/runtime.sh).
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "piranha/runtime/job.h"

namespace ts = piranha::ts;
using std::int64_t;

namespace {

struct Options {
  int64_t n = 0;
  int64_t grain = 0;  // 0: one task per element
  std::uint64_t seed = 1;
  bool sequential = false;  // only the sequential multiply, no Piranha
};

// Parses the job's arguments; exits with status 2 and a usage line on error.
Options parse(const std::vector<std::string>& args) {
  Options o;
  auto usage = [] {
    std::fprintf(stderr, "usage: cmatrix N [--grain K] [--seed S] [--sequential]\n");
    std::exit(2);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "cmatrix N [--grain K] [--seed S] [--sequential]: multiply two N x N matrices as a Piranha job.\n"
          "  --grain K  a task multiplies K rows of A by all of B (default: one row by one column)\n"
          "  --seed S   seed of the matrices' contents (default 1)\n"
          "  --sequential  only time the sequential multiply, without Piranha (no server needed)\n"
          "Run it with `piranha submit cmatrix N`, or alone with PIRANHA_LOCAL_PIRANHAS=2 cmatrix N.\n");
      std::exit(0);
    }
    try {
      if (a == "--grain" && i + 1 < args.size())
        o.grain = std::stoll(args[++i]);
      else if (a == "--seed" && i + 1 < args.size())
        o.seed = std::stoull(args[++i]);
      else if (a == "--sequential")
        o.sequential = true;
      else if (o.n == 0 && !a.empty() && a[0] != '-')
        o.n = std::stoll(a);
      else
        usage();
    } catch (const std::exception&) {
      usage();
    }
  }
  if (o.n < 1 || o.n > 20000 || o.grain < 0) usage();
  return o;
}

double dot(const double* row, const double* col, int64_t n) {
  double s = 0;
  for (int64_t k = 0; k < n; ++k) s += row[k] * col[k];
  return s;
}

// C's row from A's row and all of B's columns (column j at cols + j * n).
// The grain piranhas (--grain) and the sequential multiply both call this one
// function, out of line, so that they run the same machine code. Inlined, each had its own
// copy of the loop, and where a copy fell against the 64-byte lines of code
// made it up to half slower on the AMD EPYC VM the benchmarks ran on: the
// sequential copy was the slow one, which flattered the speedup.
// CMakeLists.txt starts loops on a line.
[[gnu::noinline]] void multiply_row(const double* row, const double* cols, int64_t n, double* out) {
  for (int64_t j = 0; j < n; ++j) out[j] = dot(row, cols + j * n, n);
}

ts::Blob pack(const std::vector<double>& v) {
  return ts::Blob(std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(double)));
}
std::vector<double> unpack(const ts::Blob& b) {
  std::vector<double> v(b.bytes.size() / sizeof(double));
  std::memcpy(v.data(), b.bytes.data(), v.size() * sizeof(double));
  return v;
}

// Small integers, so every product and sum is exact in a double.
std::vector<double> random_matrix(int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<double> m(static_cast<std::size_t>(n * n));
  for (auto& x : m) x = static_cast<double>(rng() % 10);
  return m;
}

// The sequential multiply with the piranhas' own kernel (rows of A by
// columns of B, both contiguous), so that the speedup compares like with
// like. Times only the multiply, from B's columns ready (the piranhas get
// them so) to C written, as the parallel time runs from B written; returns
// C and the seconds.
std::pair<std::vector<double>, double> sequential_multiply(const std::vector<double>& a,
                                                           const std::vector<double>& b, int64_t n) {
  std::vector<double> bt(static_cast<std::size_t>(n * n));
  for (int64_t k = 0; k < n; ++k)
    for (int64_t j = 0; j < n; ++j) bt[j * n + k] = b[k * n + j];
  std::vector<double> c(static_cast<std::size_t>(n * n));
  auto started = std::chrono::steady_clock::now();
  for (int64_t i = 0; i < n; ++i) multiply_row(&a[i * n], bt.data(), n, &c[i * n]);
  return {std::move(c), std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count()};
}

// The machine's CPU time so far, all CPUs together, in clock ticks, from
// /proc/stat's first line: busy (user, nice, system, irq, softirq), idle
// (idle, iowait), and stolen by a virtual machine's host (steal: neither).
// Zeros where /proc/stat cannot be read.
struct CpuTicks {
  double busy = 0, idle = 0, stolen = 0;
};
CpuTicks cpu_ticks() {
  std::ifstream f("/proc/stat");
  std::string cpu;
  double user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(f >> cpu >> user >> nice >> system >> idle >> iowait >> irq >> softirq) || cpu != "cpu") return {};
  f >> steal;  // absent on old kernels: 0
  return {user + nice + system + irq + softirq, idle + iowait, steal};
}

// How many of B's columns go in one ("B", k, first, columns) tuple: about
// 256 KB, so that the first block reaches the piranhas at once and the
// blocks stream while the feeder makes the next ones.
int64_t block_columns(int64_t n) {
  return std::max<int64_t>(1, (int64_t{256} << 10) / (n * static_cast<int64_t>(sizeof(double))));
}

// Collects tuples into requests for `put`: at most 50,000 tuples and 4 MB of
// data each, the first only 256 KB of data when the tuples carry any.
class Chunks {
 public:
  explicit Chunks(std::function<void(const std::vector<ts::Tuple>&)> put) : put_(std::move(put)) {}
  int64_t added = 0;
  void add(ts::Tuple t) {
    ++added;
    std::size_t size = 0;
    for (const ts::Value& v : t.fields())
      if (auto* b = std::get_if<ts::Blob>(&v)) size += b->bytes.size();
    if (!chunk_.empty() && (chunk_.size() == 50'000 || bytes_ + size + 16 > (4u << 20) ||
                            (first_ && size > 0 && data_ + size > (256u << 10))))
      flush();
    chunk_.push_back(std::move(t));
    bytes_ += size + 16;
    data_ += size;
  }
  void flush() {
    if (chunk_.empty()) return;
    put_(chunk_);
    chunk_.clear();
    bytes_ = data_ = 0;
    first_ = false;
  }

 private:
  std::function<void(const std::vector<ts::Tuple>&)> put_;
  std::vector<ts::Tuple> chunk_;
  std::size_t bytes_ = 0, data_ = 0;
  bool first_ = true;
};

int feeder(piranha::Feeder& f) {
  Options o = parse(f.args());
  const int64_t n = o.n;
  const auto job_started = std::chrono::steady_clock::now();
  auto& space = f.space();
  // B first: piranhas read all of it before their first task, so it is
  // written before A is even made, a block at a time (posted: the feeder
  // makes the next block while this one travels).
  auto b = random_matrix(n, o.seed + 1);
  for (int64_t k = 0, first = 0; first < n; ++k, first += block_columns(n)) {
    const int64_t end = std::min(n, first + block_columns(n));
    std::vector<double> cols(static_cast<std::size_t>((end - first) * n));
    for (int64_t j = first; j < end; ++j)
      for (int64_t r = 0; r < n; ++r) cols[static_cast<std::size_t>((j - first) * n + r)] = b[r * n + j];
    space.out_posted("B", k, first, pack(cols));
  }
  // Tuples go to the space as they are made, with put(chunk): requests of at
  // most 50,000 tuples and a few megabytes, well under the server's limit
  // (16 MiB) at any N. When the tuples carry data, the first request holds
  // only 256 KB of it, so that piranhas waiting for work get some at once
  // while the rest is made and travels. (Small tuples keep 50,000 to a
  // request: a small first request of cmatrix 500's 250,000 tasks measured
  // slower.)
  auto a = random_matrix(n, o.seed);
  if (o.grain == 0) {
    Chunks rows([&](const std::vector<ts::Tuple>& chunk) { space.out_many(chunk); });
    for (int64_t i = 0; i < n; ++i)
      rows.add(ts::Tuple::of("A", i, pack({a.begin() + i * n, a.begin() + (i + 1) * n})));
    rows.flush();
  }
  auto started = std::chrono::steady_clock::now();
  const CpuTicks cpu_started = cpu_ticks();

  int64_t expected = 0;  // result tuples
  Chunks tasks([&](const std::vector<ts::Tuple>& chunk) { f.put_tasks(chunk); });
  if (o.grain == 0) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < n; ++j) tasks.add(ts::Tuple::of("task", i, j));
    expected = n * n;
  } else {
    for (int64_t i = 0; i < n; i += o.grain, ++expected) {
      int64_t end = std::min(n, i + o.grain);
      tasks.add(ts::Tuple::of("task", i, int64_t{-1}, pack({a.begin() + i * n, a.begin() + end * n})));
    }
  }
  tasks.flush();

  // Collect: whatever results are there, or else the next one, in one request each.
  std::vector<double> c(static_cast<std::size_t>(n * n), -1.0);
  std::vector<char> seen(static_cast<std::size_t>(n * n), 0);
  int64_t got = 0, duplicates = 0;
  auto store = [&](const ts::Tuple& r) {
    int64_t i = r.get<int64_t>(1), j = r.get<int64_t>(2);
    auto values = unpack(r.get<ts::Blob>(3));
    for (int64_t k = 0; k < static_cast<int64_t>(values.size()); ++k) {
      std::size_t at = j < 0 ? static_cast<std::size_t>(i * n + k) : static_cast<std::size_t>(i * n + j);
      if (seen[at]) ++duplicates;
      seen[at] = 1;
      c[at] = values[static_cast<std::size_t>(k)];
    }
    ++got;
  };
  while (got < expected)
    for (const auto& r : space.in_many_wait(static_cast<std::size_t>(expected - got), "C",
                                            ts::formal<int64_t>, ts::formal<int64_t>, ts::formal<ts::Blob>))
      store(r);
  const auto ended = std::chrono::steady_clock::now();
  const CpuTicks cpu_ended = cpu_ticks();
  const double busy = cpu_ended.busy - cpu_started.busy, all = busy + cpu_ended.idle - cpu_started.idle;
  const double stolen = cpu_ended.stolen - cpu_started.stolen;
  double parallel_s = std::chrono::duration<double>(ended - started).count();
  double job_s = std::chrono::duration<double>(ended - job_started).count();
  // A result written twice would still be here.
  while (space.inp("C", ts::formal<int64_t>, ts::formal<int64_t>, ts::formal<ts::Blob>)) ++duplicates;

  auto [seq, seq_s] = sequential_multiply(a, b, n);
  int64_t wrong = 0;
  for (std::size_t e = 0; e < seq.size(); ++e) wrong += seq[e] != c[e];
  bool ok = wrong == 0 && duplicates == 0;
  // Under 10 clock ticks (/proc/stat counts in hundredths of a second), the
  // share says nothing. Time the host took is said apart: it was neither
  // the job's nor left to it.
  auto percent = [](double part, double whole) {
    return std::to_string(static_cast<int>(100 * part / whole + 0.5));
  };
  std::string busy_share = all >= 10 ? percent(busy, all) + " %" : "n/a";
  if (all >= 10 && stolen >= 0.01 * (all + stolen))
    busy_share += " (the host took " + percent(stolen, all + stolen) + " % of the CPUs' time besides)";
  std::printf(
      "cmatrix %lld%s: %s: %lld tasks, %lld wrong elements, %lld duplicate results; parallel %.3f s, "
      "sequential multiply %.3f s; job %.3f s; CPUs busy %s of the parallel time\n",
      static_cast<long long>(n), o.grain ? (" --grain " + std::to_string(o.grain)).c_str() : "",
      ok ? "result OK" : "result WRONG", static_cast<long long>(tasks.added), static_cast<long long>(wrong),
      static_cast<long long>(duplicates), parallel_s, seq_s, job_s, busy_share.c_str());
  std::fflush(stdout);
  return ok ? 0 : 1;
}

// A piranha's copies of the rows of A it has needed so far and of all of B's
// columns, kept in one contiguous block (scattered 8 KB columns made the
// kernel several times slower than the sequential one).
struct Cache {
  ts::Space& space;
  int64_t n;
  std::map<int64_t, std::vector<double>> rows;
  std::vector<double> cols;  // column j at j * n
  const double* row(int64_t i) {
    auto it = rows.find(i);
    if (it == rows.end())
      it = rows.emplace(i, unpack(space.rd("A", i, ts::formal<ts::Blob>).get<ts::Blob>(2))).first;
    return it->second.data();
  }
  const double* col(int64_t j) const { return &cols[static_cast<std::size_t>(j * n)]; }
  // Reads B's blocks in order, each as soon as the feeder has written it.
  void read_b() {
    cols.resize(static_cast<std::size_t>(n * n));
    for (int64_t k = 0, first = 0; first < n; ++k, first += block_columns(n)) {
      auto t = space.rd("B", k, first, ts::formal<ts::Blob>);
      const auto& bytes = t.get<ts::Blob>(3).bytes;
      const std::size_t room = static_cast<std::size_t>((n - first) * n) * sizeof(double);
      std::memcpy(&cols[static_cast<std::size_t>(first * n)], bytes.data(), std::min(bytes.size(), room));
    }
  }
};

void piranha_worker(piranha::Piranha& w) {
  Options o = parse(w.args());
  const int64_t n = o.n;
  Cache cache{w.space(), n, {}, {}};
  // All of B first: the feeder writes B before its tasks, so a piranha that
  // starts while the feeder is still writing it reads each block as it
  // comes, not after its first task arrived.
  cache.read_b();
  int64_t i = 0, j = 0;
  if (o.grain == 0) {
    while (auto task = w.take_task(ts::bind(i), ts::bind(j)))
      w.complete(*task, "C", i, j, pack({dot(cache.row(i), cache.col(j), n)}));
    return;
  }
  ts::Blob rows;
  while (auto task = w.take_task(ts::bind(i), ts::bind(j), ts::bind(rows))) {
    std::vector<double> block = unpack(rows), out(block.size());
    const auto row_size = static_cast<std::size_t>(n);
    for (std::size_t r = 0; (r + 1) * row_size <= block.size() && !w.should_retreat(); ++r)
      multiply_row(&block[r * row_size], cache.col(0), n, &out[r * row_size]);
    // Told to retreat mid-block: stop; the runtime puts the task back.
    if (w.should_retreat()) return;
    w.complete(*task, "C", i, j, pack(out));
  }
}

}  // namespace

// The arguments are checked before the runtime connects, so --help and
// usage errors need no server.
int main(int argc, char** argv) {
  Options o = parse(std::vector<std::string>(argv + 1, argv + argc));
  if (o.sequential && (std::getenv("PIRANHA_JOB_ID") || std::getenv("PIRANHA_ROLE"))) {
    std::fprintf(stderr, "cmatrix: --sequential times the multiply alone, without Piranha: not as a job\n");
    return 2;
  }
  if (o.sequential) {
    auto [c, seconds] = sequential_multiply(random_matrix(o.n, o.seed), random_matrix(o.n, o.seed + 1), o.n);
    std::printf("cmatrix %lld: sequential multiply %.3f s\n", static_cast<long long>(o.n), seconds);
    return c.empty() ? 1 : 0;
  }
  return piranha::run_job(argc, argv, piranha::JobFunctions{feeder, piranha_worker, nullptr});
}
