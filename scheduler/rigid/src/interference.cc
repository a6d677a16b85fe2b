// Immediate placement with time sharing: MTI, MCT, MNI (seed 004;
// docs/rigid.md, "Interference").
#include <algorithm>
#include <cmath>
#include <limits>

#include "engines.h"

namespace piranha::rigid {
namespace {

// A task whose remaining work is at most this many seconds has finished.
constexpr double kDone = 1e-6;

struct Task {
  double finish_v;  // the node's virtual time at which it completes
  std::size_t job;
};

struct Node {
  double v = 0, last = 0;  // service each task has had; when v was last advanced
  std::vector<Task> tasks;
  void advance(double t) {
    if (!tasks.empty()) v += (t - last) / static_cast<double>(tasks.size());
    last = t;
  }
};

// Processor-sharing finish times from `t` for remaining works `r` (any order).
std::vector<double> ps_finish(double t, const std::vector<double>& r) {
  std::vector<std::size_t> order(r.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return r[a] < r[b]; });
  std::vector<double> out(r.size());
  double before = 0;  // sum of the smaller remainders
  const auto n = static_cast<double>(r.size());
  for (std::size_t k = 0; k < order.size(); ++k) {
    const double rk = r[order[k]];
    out[order[k]] = t + before + (n - static_cast<double>(k)) * rk;
    before += rk;
  }
  return out;
}

class Interfere {
 public:
  Interfere(Interference p, const Workload& w, const Machine& m, const RunOptions& o)
      : p_(p), w_(w), m_(m), o_(o), out_(w.jobs.size()), left_(w.jobs.size(), 0), nodes_on_(w.jobs.size()) {
    for (const auto& s : m.sites) {
      first_.push_back(static_cast<int>(nodes_.size()));
      nodes_.resize(nodes_.size() + static_cast<std::size_t>(s.nodes));
    }
  }

  std::vector<Outcome> run() {
    const std::size_t n = w_.jobs.size();
    std::size_t next = 0;
    for (;;) {
      double done = std::numeric_limits<double>::infinity();
      for (const auto& node : nodes_) {
        if (node.tasks.empty()) continue;
        double least = node.tasks.front().finish_v;
        for (const auto& task : node.tasks) least = std::min(least, task.finish_v);
        done = std::min(done, node.last + std::max(0.0, least - node.v) * static_cast<double>(node.tasks.size()));
      }
      const double arrival = next < n ? static_cast<double>(w_.jobs[next].submit) : std::numeric_limits<double>::infinity();
      if (std::isinf(done) && std::isinf(arrival)) break;
      const double t = std::min(done, arrival);
      for (auto& node : nodes_) node.advance(t);
      if (done <= arrival) {
        complete(t);
      } else {
        place(next++, t);
        if (o_.progress && next % 1000 == 0) o_.progress(static_cast<double>(next) / static_cast<double>(n));
      }
    }
    return out_;
  }

 private:
  void complete(double t) {
    for (std::size_t x = 0; x < nodes_.size(); ++x) {
      auto& tasks = nodes_[x].tasks;
      for (std::size_t i = 0; i < tasks.size();) {
        if (tasks[i].finish_v - nodes_[x].v > kDone) {
          ++i;
          continue;
        }
        const std::size_t j = tasks[i].job;
        tasks.erase(tasks.begin() + static_cast<std::ptrdiff_t>(i));
        auto& on = nodes_on_[j];
        on.erase(std::find(on.begin(), on.end(), x));
        if (--left_[j] == 0) out_[j].completion = t;
      }
    }
  }

  double finish_on(std::size_t node, std::size_t job, const std::vector<double>& f) const {
    const auto& tasks = nodes_[node].tasks;
    for (std::size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].job == job) return f[i];
    return 0;
  }

  void place(std::size_t j, double t) {
    const RigidJob& job = w_.jobs[j];
    out_[j].start = t;
    // Every node's projected finish per task, and every running job's completion.
    std::vector<std::vector<double>> before(nodes_.size());
    for (auto k : seen_) job_before_[k] = -1;
    seen_.clear();
    auto& job_before = job_before_;
    for (std::size_t x = 0; x < nodes_.size(); ++x) {
      std::vector<double> r;
      for (const auto& task : nodes_[x].tasks) r.push_back(std::max(0.0, task.finish_v - nodes_[x].v));
      before[x] = ps_finish(t, r);
      for (std::size_t i = 0; i < r.size(); ++i) {
        const std::size_t k = nodes_[x].tasks[i].job;
        if (job_before[k] < 0) seen_.push_back(k);
        job_before[k] = std::max(job_before[k], before[x][i]);
      }
    }
    struct Candidate {
      int site = -1;
      std::vector<std::size_t> nodes;
      double completion = 0, total = 0;
      std::size_t hit = 0;
    };
    Candidate best;
    double ideal = std::numeric_limits<double>::infinity();
    for (int s = 0; s < static_cast<int>(m_.sites.size()); ++s) {
      if (!fits(m_, job, s)) continue;
      Candidate c;
      c.site = s;
      const auto work = static_cast<double>(runtime_at(m_, job, s));
      const auto first = static_cast<std::size_t>(first_[static_cast<std::size_t>(s)]);
      std::vector<std::size_t> site_nodes(static_cast<std::size_t>(m_.sites[static_cast<std::size_t>(s)].nodes));
      for (std::size_t i = 0; i < site_nodes.size(); ++i) site_nodes[i] = first + i;
      std::stable_sort(site_nodes.begin(), site_nodes.end(),
                       [&](std::size_t a, std::size_t b) { return nodes_[a].tasks.size() < nodes_[b].tasks.size(); });
      c.nodes.assign(site_nodes.begin(), site_nodes.begin() + job.width);
      std::sort(c.nodes.begin(), c.nodes.end());
      std::vector<std::vector<double>> after(c.nodes.size());
      std::vector<std::size_t> touched;
      c.completion = t;
      for (std::size_t i = 0; i < c.nodes.size(); ++i) {
        const auto& node = nodes_[c.nodes[i]];
        std::vector<double> r;
        for (const auto& task : node.tasks) {
          r.push_back(std::max(0.0, task.finish_v - node.v));
          touched.push_back(task.job);
        }
        r.push_back(work);
        after[i] = ps_finish(t, r);
        c.completion = std::max(c.completion, after[i].back());
      }
      std::sort(touched.begin(), touched.end());
      touched.erase(std::unique(touched.begin(), touched.end()), touched.end());
      double interference = 0;
      for (auto k : touched) {
        double a = 0;
        for (auto x : nodes_on_[k]) {
          const auto at = std::lower_bound(c.nodes.begin(), c.nodes.end(), x);
          if (at != c.nodes.end() && *at == x)
            a = std::max(a, finish_on(x, k, after[static_cast<std::size_t>(at - c.nodes.begin())]));
          else
            a = std::max(a, finish_on(x, k, before[x]));
        }
        if (a > job_before[k]) {
          interference += a - job_before[k];
          ++c.hit;
        }
      }
      c.total = interference + (c.completion - t);
      ideal = std::min(ideal, c.completion);
      if (best.site < 0 || better(c, best)) best = std::move(c);
    }
    out_[j].site = best.site;
    out_[j].dedicated = runtime_at(m_, job, best.site);
    out_[j].ideal = ideal;
    if (out_[j].dedicated == 0) {
      out_[j].completion = t;
      return;
    }
    const auto work = static_cast<double>(out_[j].dedicated);
    for (auto x : best.nodes) {
      nodes_[x].tasks.push_back({nodes_[x].v + work, j});
      nodes_on_[j].push_back(x);
    }
    left_[j] = job.width;
  }

  template <class C>
  bool better(const C& a, const C& b) const {
    switch (p_) {
      case Interference::kMti:
        if (a.total != b.total) return a.total < b.total;
        break;
      case Interference::kMni:
        if (a.hit != b.hit) return a.hit < b.hit;
        break;
      case Interference::kMct:
        break;
    }
    return a.completion < b.completion;  // then the lower site index: the earlier candidate stays
  }

  Interference p_;
  const Workload& w_;
  const Machine& m_;
  const RunOptions& o_;
  std::vector<Outcome> out_;
  std::vector<int> left_;
  std::vector<std::vector<std::size_t>> nodes_on_;
  std::vector<Node> nodes_;
  std::vector<int> first_;
  std::vector<double> job_before_ = std::vector<double>(w_.jobs.size(), -1);
  std::vector<std::size_t> seen_;
};

}  // namespace

RunResult simulate_interference(const std::string& name, Interference policy, const Workload& w, const Machine& m,
                                const RunOptions& o) {
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
