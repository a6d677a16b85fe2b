#include "piranha/scheduler/job_list.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <map>
#include <sstream>

#include "piranha/scheduler/csv_lines.h"
#include "piranha/scheduler/random.h"

namespace piranha::sched {
namespace {

constexpr std::array<const char*, 4> kColumns{"id", "arrival", "task_time", "tasks"};

}  // namespace

std::vector<Job> parse_jobs(std::istream& in, const std::string& name) {
  std::vector<Job> jobs;
  std::array<std::size_t, 4> column{};  // kColumns[i] is field column[i]
  bool have_header = false;
  std::map<JobId, int> seen;  // id -> line
  csv::CsvLines lines(in, name);
  while (lines.next()) {
    auto cells = lines.cells();
    if (!have_header) {
      std::array<bool, 4> found{};
      for (std::size_t c = 0; c < cells.size(); ++c) {
        auto it =
            std::find_if(kColumns.begin(), kColumns.end(), [&](const char* k) { return cells[c] == k; });
        if (it == kColumns.end()) {
          if (c == 0 && !cells[c].empty() &&
              (std::isdigit(static_cast<unsigned char>(cells[c][0])) || cells[c][0] == '-'))
            lines.fail("missing the header \"id,arrival,task_time,tasks\"");
          lines.fail("unknown column \"" + cells[c] + "\"");
        }
        auto k = static_cast<std::size_t>(it - kColumns.begin());
        if (found[k]) lines.fail("column \"" + cells[c] + "\" appears twice");
        found[k] = true;
        column[k] = c;
      }
      for (std::size_t k = 0; k < kColumns.size(); ++k)
        if (!found[k]) lines.fail(std::string("missing column \"") + kColumns[k] + "\"");
      have_header = true;
      continue;
    }
    if (cells.size() != kColumns.size()) lines.fail("expected 4 fields, got " + std::to_string(cells.size()));
    std::array<std::int64_t, 4> v{};
    for (std::size_t k = 0; k < kColumns.size(); ++k) {
      const std::string& s = cells[column[k]];
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v[k]);
      if (s.empty() || ec != std::errc() || p != s.data() + s.size())
        lines.fail(std::string(kColumns[k]) + " \"" + s + "\" is not an integer");
    }
    Job j{v[0], v[1], v[2], v[3]};
    if (j.id == kNoJob) lines.fail("id " + std::to_string(j.id) + " is reserved");
    if (j.arrival < 0) lines.fail("arrival " + std::to_string(j.arrival) + " is negative");
    if (j.task_time < 1) lines.fail("task_time " + std::to_string(j.task_time) + " is less than 1");
    if (j.tasks < 1) lines.fail("tasks " + std::to_string(j.tasks) + " is less than 1");
    if (auto [it, fresh] = seen.emplace(j.id, lines.line()); !fresh)
      lines.fail("id " + std::to_string(j.id) + " repeats the one on line " + std::to_string(it->second));
    jobs.push_back(j);
  }
  if (!have_header) lines.fail("missing the header \"id,arrival,task_time,tasks\"");
  if (jobs.empty()) lines.fail("no jobs");
  std::stable_sort(jobs.begin(), jobs.end(), queue_before);
  return jobs;
}

std::vector<Job> read_jobs(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path, "cannot open the job file");
  return parse_jobs(in, path);
}

void write_jobs(std::ostream& out, const std::vector<Job>& jobs) {
  out << "id,arrival,task_time,tasks\n";
  for (const Job& j : jobs) out << j.id << ',' << j.arrival << ',' << j.task_time << ',' << j.tasks << '\n';
}

std::vector<Job> random_workload(std::uint64_t seed, const WorkloadOptions& options) {
  Rng rng(seed, 1);
  std::vector<Job> jobs;
  double clock = 0;
  for (int k = 1; k <= options.jobs; ++k) {
    if (k > 1) clock += rng.exponential(options.interarrival);
    Job j;
    j.id = k;
    j.arrival = static_cast<std::int64_t>(std::floor(clock));
    j.tasks = rng.uniform_int(options.min_tasks, options.max_tasks);
    j.task_time = rng.uniform_int(options.min_task_time, options.max_task_time);
    jobs.push_back(j);
  }
  return jobs;
}

}  // namespace piranha::sched
