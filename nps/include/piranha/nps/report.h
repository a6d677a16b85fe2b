// `piranha nps report`: what the pool did and what the evaluator learned,
// for people (self-contained HTML: inline SVG, no scripts, no network) and
// for programs (the same data as JSON).
//
// build_report() is pure: it takes what the system space held (the jobs'
// own records, the evaluator's ("eval", ...) records, the owners'
// complaints, what the nodes show now) and a period, and returns the
// report as JSON. report_html()
// renders that JSON. The JSON's fields are listed in docs/nps.md,
// "Reports".
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "piranha/runtime/sysspace.h"

namespace piranha::nps {

struct ReportInput {
  double now = 0;               // the report's end (wall seconds)
  std::optional<double> since;  // its start; nullopt: everything recorded
  std::vector<sys::JobRecord> jobs;
  std::map<std::int64_t, sys::JobTimes> times;
  std::map<std::int64_t, std::vector<sys::JobWork>> work;
  std::vector<sys::EvalRecord> records;  // oldest first
  std::vector<sys::Complaint> complaints;
  // What each node shows now (its agent's records): the stretch since its
  // last recorded span, which the evaluator records only when it ends.
  struct Current {
    std::string node, state;  // a node state name
    std::optional<std::int64_t> job;
  };
  std::vector<Current> current;
};

// The report over [since, now]. Jobs count when they were submitted or
// ended in it; spans are clipped to it. "empty": true (and a "message")
// when nothing at all happened in the period. Never throws for odd
// records: an evaluator record that is not a JSON object is skipped.
nlohmann::json build_report(const ReportInput& in);

// One self-contained HTML page of `report` (build_report's output).
std::string report_html(const nlohmann::json& report);

}  // namespace piranha::nps
