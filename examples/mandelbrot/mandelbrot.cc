// mandelbrot: the Mandelbrot set as a Piranha job whose retreat keeps partial
// progress.
//
//   mandelbrot [--width W] [--height H] [--iterations N] [--rows R] [--pgm FILE]
//
// A task is a chunk of R image rows: ("task", first_row, next_row, done_rows),
// where rows first_row..next_row-1 are already computed and their iteration
// counts are in the blob done_rows. A piranha computes the rest row by row,
// recording its progress after each row. Told to retreat, it stops after the
// row in hand and its retreat function puts the task back as it now stands,
// so the next piranha resumes at the row the first one stopped at instead of
// starting the chunk again. The feeder assembles the image and checks every
// pixel against a sequential computation (iteration counts are integers, so
// the check is exact).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "piranha/runtime/job.h"

namespace ts = piranha::ts;
using std::int64_t;

namespace {

struct Options {
  int64_t width = 640, height = 480, iterations = 2000, rows = 8;
  std::string pgm;
};

// Parses the job's arguments; exits with status 2 and a usage line on error.
Options parse(const std::vector<std::string>& args) {
  Options o;
  auto usage = [] {
    std::fprintf(stderr,
                 "usage: mandelbrot [--width W] [--height H] [--iterations N] [--rows R] [--pgm FILE]\n");
    std::exit(2);
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--help" || a == "-h") {
      std::printf(
          "mandelbrot: the Mandelbrot set as a Piranha job; a retreating piranha keeps its partial chunk.\n"
          "  --width W, --height H  image size in pixels (default 640 x 480)\n"
          "  --iterations N         iteration limit per pixel (default 2000)\n"
          "  --rows R               rows per task (default 8)\n"
          "  --pgm FILE             also write the image as a PGM file\n"
          "Run it with `piranha submit mandelbrot`, or alone with PIRANHA_LOCAL_PIRANHAS=2 mandelbrot.\n");
      std::exit(0);
    }
    if (i + 1 >= args.size()) usage();
    const std::string& v = args[++i];
    try {
      if (a == "--width")
        o.width = std::stoll(v);
      else if (a == "--height")
        o.height = std::stoll(v);
      else if (a == "--iterations")
        o.iterations = std::stoll(v);
      else if (a == "--rows")
        o.rows = std::stoll(v);
      else if (a == "--pgm")
        o.pgm = v;
      else
        usage();
    } catch (const std::exception&) {
      usage();
    }
  }
  if (o.width < 1 || o.height < 1 || o.width * o.height > 100'000'000 || o.iterations < 1 || o.rows < 1)
    usage();
  return o;
}

// The iteration counts of one image row: x in [-2.5, 1], y in [-1.25, 1.25].
std::vector<std::int32_t> row_counts(const Options& o, int64_t y) {
  std::vector<std::int32_t> counts(static_cast<std::size_t>(o.width));
  double ci = -1.25 + 2.5 * static_cast<double>(y) / static_cast<double>(o.height);
  for (int64_t x = 0; x < o.width; ++x) {
    double cr = -2.5 + 3.5 * static_cast<double>(x) / static_cast<double>(o.width);
    double zr = 0, zi = 0;
    int64_t n = 0;
    while (n < o.iterations && zr * zr + zi * zi <= 4.0) {
      double t = zr * zr - zi * zi + cr;
      zi = 2 * zr * zi + ci;
      zr = t;
      ++n;
    }
    counts[static_cast<std::size_t>(x)] = static_cast<std::int32_t>(n);
  }
  return counts;
}

void append(std::string& bytes, const std::vector<std::int32_t>& counts) {
  bytes.append(reinterpret_cast<const char*>(counts.data()), counts.size() * sizeof(std::int32_t));
}

int feeder(piranha::Feeder& f) {
  Options o = parse(f.args());
  int64_t chunks = 0;
  for (int64_t first = 0; first < o.height; first += o.rows, ++chunks) f.put_task(first, first, ts::Blob());

  // ("rows", first_row, resumed_at, counts): resumed_at > first_row when a
  // piranha started from another's partial progress.
  std::vector<std::int32_t> image(static_cast<std::size_t>(o.width * o.height), -1);
  int64_t resumed = 0, first = 0, resumed_at = 0;
  ts::Blob counts;
  for (int64_t got = 0; got < chunks; ++got) {
    f.space().in("rows", ts::bind(first), ts::bind(resumed_at), ts::bind(counts));
    if (resumed_at > first) ++resumed;
    if (first < 0 || first >= o.height) continue;  // not ours: its rows stay wrong (-1)
    std::size_t at = static_cast<std::size_t>(first * o.width);
    std::memcpy(image.data() + at, counts.bytes.data(),
                std::min(counts.bytes.size(), (image.size() - at) * sizeof(std::int32_t)));
  }
  int64_t duplicates = 0;
  while (f.space().inp("rows", ts::formal<int64_t>, ts::formal<int64_t>, ts::formal<ts::Blob>)) ++duplicates;

  int64_t wrong = 0;
  for (int64_t y = 0; y < o.height; ++y) {
    auto expected = row_counts(o, y);
    for (int64_t x = 0; x < o.width; ++x)
      if (image[static_cast<std::size_t>(y * o.width + x)] != expected[static_cast<std::size_t>(x)]) ++wrong;
  }
  if (!o.pgm.empty()) {
    std::ofstream out(o.pgm, std::ios::binary);
    out << "P5\n" << o.width << " " << o.height << "\n255\n";
    for (auto n : image) out.put(static_cast<char>(n >= o.iterations ? 0 : 255 - (n * 8) % 256));
  }
  bool ok = wrong == 0 && duplicates == 0;
  std::printf(
      "mandelbrot %lldx%lld, %lld iterations: %s: %lld tasks, %lld resumed from partial progress, "
      "%lld wrong pixels, %lld duplicate chunks\n",
      static_cast<long long>(o.width), static_cast<long long>(o.height), static_cast<long long>(o.iterations),
      ok ? "result OK" : "result WRONG", static_cast<long long>(chunks), static_cast<long long>(resumed),
      static_cast<long long>(wrong), static_cast<long long>(duplicates));
  return ok ? 0 : 1;
}

void piranha_worker(piranha::Piranha& w) {
  Options o = parse(w.args());
  int64_t first = 0, next = 0;
  ts::Blob done;
  while (auto task = w.take_task(ts::bind(first), ts::bind(next), ts::bind(done))) {
    const int64_t resumed_at = next, end = std::min(o.height, first + o.rows);
    // At least one row per take, so a chunk moves forward however often
    // its piranhas are told to retreat.
    do {
      append(done.bytes, row_counts(o, next));
      ++next;
      task->set_progress(ts::Tuple::of("task", first, next, done));
    } while (next < end && !w.should_retreat());
    if (next < end) return;  // retreating: retreat() puts the progress back
    w.complete(*task, "rows", first, resumed_at, done);
  }
}

// Puts the task back as far as it got: the rows done and where to go on.
void retreat(piranha::Piranha& w, piranha::Task& task) {
  w.put_back(task, {task.progress().size() ? task.progress() : task.tuple()});
}

}  // namespace

// PIRANHA_JOB's main, after checking the arguments: --help and usage errors
// need no server and register no job.
int main(int argc, char** argv) {
  parse(std::vector<std::string>(argv + 1, argv + argc));
  return piranha::run_job(argc, argv, piranha::JobFunctions{feeder, piranha_worker, retreat});
}
