// The machine of docs/rigid.md, "Machines": one or more sites, each a
// homogeneous cluster of nodes with a run-time factor per job class.
//
// A job of class c runs ceil(runtime * factor[c]) seconds at a site; factor 1
// is the workload's own machine. The class of job `id` is
// splitmix64(id) mod classes (so one class when every site gives one factor).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "piranha/rigid/workload.h"

namespace piranha::rigid {

struct Site {
  int nodes = 1;
  std::vector<double> factors{1.0};  // per job class, each > 0
};

struct Machine {
  std::vector<Site> sites;  // numbered 0.. in this order
  int classes() const { return sites.empty() ? 1 : static_cast<int>(sites.front().factors.size()); }
  int total_nodes() const;
  int widest() const;  // the most nodes of any site
};

// One site of `nodes` nodes, factor 1.
Machine single_site(int nodes);

// Parses "--sites": comma-separated sites "NODES", "NODES*F" or
// "NODES*F1/F2/.../FC" (one factor per job class; every site gives the same
// number C, or exactly one, which then stands for all classes). Throws
// std::invalid_argument naming the option, the item and the problem.
Machine parse_sites(std::string_view spec);

// The canonical text of a machine, which parse_sites reads back.
std::string to_string(const Machine& m);

// The class of a job: splitmix64(id) mod classes.
int job_class(std::int64_t id, int classes);

// ceil(seconds * factor) for seconds >= 0, exactly `seconds` when factor == 1.
Time scaled(Time seconds, double factor);

// A job's run time at `site`.
Time runtime_at(const Machine& m, const RigidJob& j, int site);
double factor_at(const Machine& m, const RigidJob& j, int site);
bool fits(const Machine& m, const RigidJob& j, int site);

// Throws InputError "SOURCE:LINE: job ID needs W nodes; the largest site
// has N" for the first job that fits no site.
void check_fits(const Workload& w, const Machine& m);

}  // namespace piranha::rigid
