#include "piranha/rigid/algorithm.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>

#include "engines.h"

namespace piranha::rigid {
namespace {

std::string upper(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

// "NAME(a,b)" -> NAME and its parameters; throws on unbalanced parentheses.
std::pair<std::string, std::vector<std::string>> split_name(std::string_view text) {
  const auto open = text.find('(');
  if (open == std::string_view::npos) return {upper(text), {}};
  if (text.back() != ')')
    throw InputError("algorithm \"" + std::string(text) + "\"", "unbalanced parentheses");
  std::vector<std::string> params;
  std::string inner(text.substr(open + 1, text.size() - open - 2));
  std::size_t p = 0;
  while (p <= inner.size()) {
    const auto comma = std::min(inner.find(',', p), inner.size());
    std::string item = inner.substr(p, comma - p);
    std::erase_if(item, [](char c) { return std::isspace(static_cast<unsigned char>(c)); });
    params.push_back(upper(item));
    p = comma + 1;
  }
  return {upper(text.substr(0, open)), params};
}

Time seconds(std::string_view name, const std::string& what, const std::string& text, Time min) {
  char* end = nullptr;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || v < min)
    throw InputError("algorithm \"" + std::string(name) + "\"",
                     what + " \"" + text + "\" is not a whole number >= " + std::to_string(min));
  return v;
}

class SingleSite : public Algorithm {
 public:
  using Algorithm::Algorithm;
  void check(const Machine& m) const override {
    if (m.sites.size() != 1)
      throw InputError("algorithm \"" + name() + "\"",
                       "schedules one site; --sites gives " + std::to_string(m.sites.size()));
  }
};

class Space : public SingleSite {
 public:
  Space(std::string name, SpacePolicy p, bool multi) : SingleSite(std::move(name)), p_(p), multi_(multi) {}
  void check(const Machine& m) const override {
    if (!multi_) SingleSite::check(m);
  }
  RunResult run(const Workload& w, const Machine& m, const RunOptions& o) const override {
    return simulate_space(name(), p_, w, m, o);
  }

 private:
  SpacePolicy p_;
  bool multi_;
};

class Pfcfs : public SingleSite {
 public:
  Pfcfs(std::string name, PfcfsPolicy p) : SingleSite(std::move(name)), p_(p) {}
  RunResult run(const Workload& w, const Machine& m, const RunOptions& o) const override {
    return simulate_pfcfs(name(), p_, w, m, o);
  }

 private:
  PfcfsPolicy p_;
};

class Interferer : public Algorithm {
 public:
  Interferer(std::string name, Interference p) : Algorithm(std::move(name)), p_(p) {}
  RunResult run(const Workload& w, const Machine& m, const RunOptions& o) const override {
    return simulate_interference(name(), p_, w, m, o);
  }

 private:
  Interference p_;
};

}  // namespace

void Algorithm::check(const Machine&) const {}

std::unique_ptr<Algorithm> make_algorithm(std::string_view text) {
  using L = SpacePolicy::Local;
  const auto [name, params] = split_name(text);
  auto no_params = [&, n = name, ps = params](const std::string& canonical) {
    if (!ps.empty())
      throw InputError("algorithm \"" + std::string(text) + "\"", canonical + " takes no parameters");
    (void)n;
  };
  struct Simple {
    const char* name;
    const char* canonical;
    L local;
  };
  static const Simple simple[] = {
      {"FIFO", "FIFO", L::kFifo},
      {"FCFS", "FIFO", L::kFifo},
      {"FIRSTFIT", "FirstFit", L::kFirstFit},
      {"RANDOM", "Random", L::kRandom},
      {"LPT", "LPT", L::kLpt},
      {"SPT", "SPT", L::kSpt},
      {"BACKFILL", "Backfill", L::kBackfill},
      {"EASY", "EASY", L::kEasy},
      {"CONSERVATIVE", "Conservative", L::kConservative},
      {"CONS", "Conservative", L::kConservative},
  };
  for (const auto& s : simple)
    if (name == s.name) {
      no_params(s.canonical);
      SpacePolicy p;
      p.local = s.local;
      return std::make_unique<Space>(s.canonical, p, false);
    }
  if (name == "PFCFS1" || name == "PFCFS2" || name == "PFCFS3") {
    PfcfsPolicy p;
    p.variant = name.back() - '0';
    p.wait = p.variant == 2 ? 60 : 600;
    p.slice = p.variant == 2 ? 60 : 600;
    const std::size_t max = p.variant == 3 ? 2 : 3;
    if (params.size() > max)
      throw InputError("algorithm \"" + std::string(text) + "\"",
                       name + " takes at most " + std::to_string(max) + " parameters");
    if (params.size() > 0) p.wait = seconds(text, "wait", params[0], 0);
    if (p.variant == 3) {
      if (params.size() > 1) p.penalty = seconds(text, "penalty", params[1], 0);
      return std::make_unique<Pfcfs>(
          name + "(" + std::to_string(p.wait) + "," + std::to_string(p.penalty) + ")", p);
    }
    if (params.size() > 1) p.slice = seconds(text, "slice", params[1], 1);
    if (params.size() > 2) p.penalty = seconds(text, "penalty", params[2], 0);
    // Alternating turns that each cost their whole length would never end.
    if (p.variant == 1 && p.penalty >= p.slice)
      throw InputError("algorithm \"" + std::string(text) + "\"",
                       "PFCFS1's penalty must be shorter than its slice");
    return std::make_unique<Pfcfs>(name + "(" + std::to_string(p.wait) + "," + std::to_string(p.slice) + "," +
                                       std::to_string(p.penalty) + ")",
                                   p);
  }
  if (name == "GREEDY") {
    no_params("Greedy");
    SpacePolicy p;
    p.local = L::kEasy;
    return std::make_unique<Space>("Greedy", p, true);
  }
  if (name == "MR") {
    if (params.empty() || params.size() > 5)
      throw InputError("algorithm \"" + std::string(text) + "\"", "MR takes K and up to four choices");
    SpacePolicy p;
    p.local = L::kEasy;
    // K = all sites, whatever the machine: ALL, or 0 as the command line has long accepted.
    p.k = params[0] == "ALL" ? 0 : static_cast<int>(seconds(text, "K", params[0], 0));
    auto choose = [&](std::size_t i, const char* a, const char* b) {
      if (params.size() <= i) return false;
      if (params[i] == a) return false;
      if (params[i] == b) return true;
      throw InputError("algorithm \"" + std::string(text) + "\"",
                       "\"" + params[i] + "\" is neither " + a + " nor " + b);
    };
    if (choose(1, "EASY", "CONS")) p.local = L::kConservative;
    p.completion_decide = choose(2, "START", "COMPLETION");
    p.efficacy_priority = choose(3, "FCFS", "EFFICACY");
    p.completion_select = choose(4, "LOAD", "COMPLETION");
    if (p.completion_decide && p.local != L::kConservative)
      throw InputError("algorithm \"" + std::string(text) + "\"", "completion-based decisions need CONS");
    const std::string canonical = "MR(" + (p.k == 0 ? std::string("all") : std::to_string(p.k)) + "," +
                                  (p.local == L::kEasy ? "EASY" : "CONS") + "," +
                                  (p.completion_decide ? "COMPLETION" : "START") + "," +
                                  (p.efficacy_priority ? "EFFICACY" : "FCFS") + "," +
                                  (p.completion_select ? "COMPLETION" : "LOAD") + ")";
    return std::make_unique<Space>(canonical, p, true);
  }
  static const std::pair<const char*, Interference> inter[] = {
      {"MTI", Interference::kMti}, {"MCT", Interference::kMct}, {"MNI", Interference::kMni}};
  for (const auto& [n, p] : inter)
    if (name == n) {
      no_params(n);
      return std::make_unique<Interferer>(n, p);
    }
  throw InputError("algorithm \"" + std::string(text) + "\"",
                   "unknown algorithm; known: FIFO FirstFit Random LPT SPT Backfill EASY Conservative PFCFS1 "
                   "PFCFS2 PFCFS3 Greedy MR(K,...) MTI MCT MNI");
}

Metrics measure(const Workload& w, const Machine& m, const std::vector<Outcome>& jobs, Time bound) {
  Metrics r;
  r.jobs = jobs.size();
  if (jobs.empty()) return r;
  double first = static_cast<double>(w.jobs.front().submit), last = 0, area = 0, best_area = 0;
  double flow = 0, wait = 0, slow = 0;
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const auto& j = w.jobs[i];
    const auto& o = jobs[i];
    last = std::max(last, o.completion);
    const double f = o.completion - static_cast<double>(j.submit),
                 wt = o.start - static_cast<double>(j.submit);
    flow += f;
    wait += wt;
    r.max_wait = std::max(r.max_wait, wt);
    slow += std::max(1.0, f / static_cast<double>(std::max(o.dedicated, bound)));
    area += static_cast<double>(j.width) * static_cast<double>(o.dedicated);
    Time best = o.dedicated;
    for (int s = 0; s < static_cast<int>(m.sites.size()); ++s)
      if (fits(m, j, s)) best = std::min(best, runtime_at(m, j, s));
    best_area += static_cast<double>(j.width) * static_cast<double>(best);
    const double weight = static_cast<double>(j.width) * static_cast<double>(j.runtime);
    r.weighted_completion += weight * o.completion;
    r.weighted_flow += weight * f;
  }
  const auto n = static_cast<double>(jobs.size());
  r.makespan = last - first;
  r.mean_flow = flow / n;
  r.mean_wait = wait / n;
  r.mean_bounded_slowdown = slow / n;
  const double capacity = static_cast<double>(m.total_nodes()) * r.makespan;
  r.utilization = capacity > 0 ? area / capacity : 0;
  r.effective_utilization = capacity > 0 ? best_area / capacity : 0;
  return r;
}

}  // namespace piranha::rigid
