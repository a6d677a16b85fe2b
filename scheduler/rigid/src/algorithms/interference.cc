// Immediate placement with time sharing: MTI, MCT, MNI (seed 004;
// docs/rigid.md, "Interference").
//
// Every time and work is a whole number of microseconds (ticks) and every
// comparison is exact: a node keeps a virtual time v (the service each of its
// tasks has had since it last emptied) and each task the virtual time f at
// which it finishes, so a task's remaining work is f - v and processor
// sharing only ever advances v.
#include <algorithm>
#include <limits>
#include <queue>
#include <tuple>

#include "engines.h"

namespace piranha::rigid {
namespace {

constexpr Time kTicks = 1'000'000;  // per second

double seconds(Time ticks) {
  return static_cast<double>(ticks) / static_cast<double>(kTicks);
}

struct Task {
  Time f;  // the node's virtual time at which it finishes
  std::size_t job;
};

struct Node {
  Time v = 0, last = 0;     // virtual time at the last change of its tasks, and when that was
  std::vector<Task> tasks;  // by f, ties in order of placement
  __int128 sum_f = 0;       // of the tasks' f
  int version = 0;          // bumped at every change (stale completion events)

  Time count() const { return static_cast<Time>(tasks.size()); }
  // Its tasks' remaining work at t (before its next completion), exactly:
  // processor sharing serves the node's tasks t - last in all.
  Time work(Time t) const {
    if (tasks.empty()) return 0;
    return static_cast<Time>(sum_f - static_cast<__int128>(count()) * v) - (t - last);
  }
  // When its shortest task finishes.
  Time next_completion() const { return last + count() * (tasks.front().f - v); }
  // The virtual time at t with the remainder of (t - last) / n lost (docs/rigid.md).
  Time floored_v(Time t) const { return tasks.empty() ? v : v + (t - last) / count(); }
};

class Interfere {
 public:
  Interfere(Interference p, const Workload& w, const Machine& m, const RunOptions& o)
      : p_(p), w_(w), m_(m), o_(o), jobs_(w.jobs.size()) {
    for (const auto& s : m.sites) {
      first_.push_back(nodes_.size());
      nodes_.resize(nodes_.size() + static_cast<std::size_t>(s.nodes));
    }
    after_.assign(w.jobs.size(), -1);
  }

  std::vector<Outcome> run() {
    const std::size_t n = w_.jobs.size();
    for (std::size_t next = 0; next < n; ++next) {
      const Time t = w_.jobs[next].submit * kTicks;
      complete_until(t);  // completions before arrivals at equal times
      place(next, t);
      if (o_.progress && (next + 1) % 1000 == 0)
        o_.progress(static_cast<double>(next + 1) / static_cast<double>(n));
    }
    complete_until(std::numeric_limits<Time>::max());
    std::vector<Outcome> out(n);
    for (std::size_t j = 0; j < n; ++j) {
      const auto& js = jobs_[j];
      out[j] = Outcome{js.site, static_cast<double>(w_.jobs[j].submit), seconds(js.completion), js.dedicated,
                       seconds(js.ideal)};
    }
    return out;
  }

 private:
  struct JobState {
    int site = -1;
    int left = 0;         // tasks not finished
    Time projected = 0;   // projected completion (ticks), with no further placement
    Time completion = 0;  // ticks
    Time ideal = 0;       // ticks
    Time dedicated = 0;   // seconds at its site
  };

  struct Candidate {
    int site = -1;
    std::vector<std::size_t> nodes;  // ascending
    Time completion = 0;             // the new job's projected completion, ticks
    __int128 total = 0;              // MTI: interference + completion - t
    std::size_t hit = 0;             // MNI: running jobs with interference > 0
  };

  void schedule(std::size_t x) {
    const Node& node = nodes_[x];
    if (!node.tasks.empty()) events_.emplace(node.next_completion(), x, node.version);
  }

  // Every completion at or before `until`, in time order.
  void complete_until(Time until) {
    while (!events_.empty() && std::get<0>(events_.top()) <= until) {
      const auto [t, x, version] = events_.top();
      events_.pop();
      Node& node = nodes_[x];
      if (version != node.version) continue;
      // Exact: t - last is n times the least remaining work.
      node.v += (t - node.last) / node.count();
      node.last = t;
      std::size_t done = 0;
      while (done < node.tasks.size() && node.tasks[done].f == node.v) {
        const std::size_t j = node.tasks[done].job;
        node.sum_f -= node.tasks[done].f;
        if (--jobs_[j].left == 0) jobs_[j].completion = t;
        ++done;
      }
      node.tasks.erase(node.tasks.begin(), node.tasks.begin() + static_cast<std::ptrdiff_t>(done));
      ++node.version;
      schedule(x);
    }
  }

  // The new job's projected finish on node x if placed at t with `work`
  // ticks, and (when `track`) the running jobs' projected completions with it
  // in after_ (touched_ lists them).
  Time evaluate_node(std::size_t x, Time t, Time work, bool track) {
    const Node& node = nodes_[x];
    const Time v = node.floored_v(t);
    const Time n = node.count();
    Time before = 0;  // the sum of the smaller remaining works
    Time mine = -1;
    for (Time i = 0; i < n; ++i) {
      const Task& task = node.tasks[static_cast<std::size_t>(i)];
      const Time r = task.f - v;
      if (mine < 0 && work <= r) mine = t + before + (n - i + 1) * work;
      if (track) {
        // Adding a task of `work` delays this one by min(r, work).
        const Time after = t + before + (n - i) * r + std::min(r, work);
        const std::size_t k = task.job;
        if (after_[k] < 0) touched_.push_back(k);
        after_[k] = std::max(after_[k], after);
      }
      before += r;
    }
    return mine < 0 ? t + before + work : mine;
  }

  Candidate evaluate(int s, std::vector<std::size_t> nodes, Time t, Time work) {
    Candidate c;
    c.site = s;
    c.nodes = std::move(nodes);
    c.completion = t;
    if (work == 0) return c;  // completes at once and changes no node
    const bool track = p_ != Interference::kMct;
    for (auto x : c.nodes) c.completion = std::max(c.completion, evaluate_node(x, t, work, track));
    __int128 interference = 0;
    for (auto k : touched_) {
      if (after_[k] > jobs_[k].projected) {
        interference += after_[k] - jobs_[k].projected;
        ++c.hit;
      }
      after_[k] = -1;
    }
    touched_.clear();
    c.total = interference + (c.completion - t);
    return c;
  }

  // The w nodes of site s least by key, ties to the lower node, ascending.
  template <typename Key>
  std::vector<std::size_t> least(int s, int w, Key key) {
    const std::size_t first = first_[static_cast<std::size_t>(s)];
    const auto size = static_cast<std::size_t>(m_.sites[static_cast<std::size_t>(s)].nodes);
    keyed_.clear();
    for (std::size_t x = first; x < first + size; ++x) keyed_.emplace_back(key(x), x);
    const auto mid = keyed_.begin() + w;
    std::nth_element(keyed_.begin(), mid - 1, keyed_.end());
    std::vector<std::size_t> out;
    for (auto it = keyed_.begin(); it != mid; ++it) out.push_back(it->second);
    std::sort(out.begin(), out.end());
    return out;
  }

  void place(std::size_t j, Time t) {
    const RigidJob& job = w_.jobs[j];
    Candidate best;
    Time ideal = std::numeric_limits<Time>::max();
    for (int s = 0; s < static_cast<int>(m_.sites.size()); ++s) {
      if (!fits(m_, job, s)) continue;
      const Time work = runtime_at(m_, job, s) * kTicks;
      // Two candidate schedules per site: the nodes with the fewest tasks,
      // then the nodes with the least remaining work.
      for (int kind = 0; kind < 2; ++kind) {
        auto nodes = kind == 0 ? least(s, job.width, [&](std::size_t x) { return nodes_[x].count(); })
                               : least(s, job.width, [&](std::size_t x) { return nodes_[x].work(t); });
        Candidate c = evaluate(s, std::move(nodes), t, work);
        ideal = std::min(ideal, c.completion);
        if (best.site < 0 || better(c, best)) best = std::move(c);
      }
    }
    auto& js = jobs_[j];
    js.site = best.site;
    js.dedicated = runtime_at(m_, job, best.site);
    js.ideal = ideal;
    js.completion = t;
    if (js.dedicated == 0) return;
    const Time work = js.dedicated * kTicks;
    js.left = job.width;
    for (auto x : best.nodes) {
      Node& node = nodes_[x];
      node.v = node.floored_v(t);
      node.last = t;
      const Task task{node.v + work, j};
      node.tasks.insert(std::upper_bound(node.tasks.begin(), node.tasks.end(), task.f,
                                         [](Time f, const Task& k) { return f < k.f; }),
                        task);
      node.sum_f += task.f;
      ++node.version;
      // Every task's projected finish from this change on.
      const Time n = node.count();
      Time before = 0;
      for (Time i = 0; i < n; ++i) {
        const Task& k = node.tasks[static_cast<std::size_t>(i)];
        const Time r = k.f - node.v;
        auto& proj = jobs_[k.job].projected;
        proj = std::max(proj, t + before + (n - i) * r);
        before += r;
      }
      schedule(x);
    }
  }

  bool better(const Candidate& a, const Candidate& b) const {
    switch (p_) {
      case Interference::kMti:
        if (a.total != b.total) return a.total < b.total;
        break;
      case Interference::kMni:
        if (a.hit != b.hit) return a.hit < b.hit;
        break;
      case Interference::kMct: break;
    }
    return a.completion < b.completion;  // then the earlier candidate stays
  }

  Interference p_;
  const Workload& w_;
  const Machine& m_;
  const RunOptions& o_;
  std::vector<JobState> jobs_;
  std::vector<Node> nodes_;
  std::vector<std::size_t> first_;  // each site's first node
  // Completion events (time, node, version); stale ones are skipped.
  std::priority_queue<std::tuple<Time, std::size_t, int>, std::vector<std::tuple<Time, std::size_t, int>>,
                      std::greater<>>
      events_;
  // Scratch of evaluate(): each touched running job's projected completion with the candidate.
  std::vector<Time> after_;
  std::vector<std::size_t> touched_;
  std::vector<std::pair<Time, std::size_t>> keyed_;  // scratch of least()
};

}  // namespace

RunResult simulate_interference(const std::string& name, Interference policy, const Workload& w,
                                const Machine& m, const RunOptions& o) {
  RunResult r;
  r.algorithm = name;
  r.jobs = Interfere(policy, w, m, o).run();
  r.metrics = measure(w, m, r.jobs, o.slowdown_bound);
  double delay = 0;
  for (const auto& j : r.jobs) delay += j.completion - j.ideal;
  r.metrics.mean_delay = delay / static_cast<double>(r.jobs.size());
  return r;
}

}  // namespace piranha::rigid
