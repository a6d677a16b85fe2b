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
  double v = 0, last = 0;   // service each task has had; when v was last advanced
  std::vector<Task> tasks;  // by finish_v, ties in order of placement
  double work() const {     // the remaining work of all its tasks
    double sum = 0;
    for (const auto& t : tasks) sum += std::max(0.0, t.finish_v - v);
    return sum;
  }
  void add(double work, std::size_t job) {
    const double f = v + work;
    const auto at = std::upper_bound(tasks.begin(), tasks.end(), f,
                                     [](double x, const Task& t) { return x < t.finish_v; });
    tasks.insert(at, Task{f, job});
  }
  void advance(double t) {
    if (!tasks.empty()) v += (t - last) / static_cast<double>(tasks.size());
    last = t;
  }
};

// Processor-sharing finish times from `t` for remaining works `r`, in
// ascending order: the k-th (from 0) of n finishes at
// t + r[0] + ... + r[k-1] + (n - k) * r[k].
std::vector<double> ps_finish(double t, const std::vector<double>& r) {
  std::vector<double> out(r.size());
  double before = 0;  // sum of the smaller remainders
  const auto n = static_cast<double>(r.size());
  for (std::size_t k = 0; k < r.size(); ++k) {
    out[k] = t + before + (n - static_cast<double>(k)) * r[k];
    before += r[k];
  }
  return out;
}

class Interfere {
 public:
  Interfere(Interference p, const Workload& w, const Machine& m, const RunOptions& o)
      : p_(p), w_(w), m_(m), o_(o), out_(w.jobs.size()), left_(w.jobs.size(), 0) {
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
        const double least = node.tasks.front().finish_v;
        done = std::min(done,
                        node.last + std::max(0.0, least - node.v) * static_cast<double>(node.tasks.size()));
      }
      const double arrival =
          next < n ? static_cast<double>(w_.jobs[next].submit) : std::numeric_limits<double>::infinity();
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
      while (!tasks.empty() && tasks.front().finish_v - nodes_[x].v <= kDone) {
        const std::size_t j = tasks.front().job;
        tasks.erase(tasks.begin());
        if (--left_[j] == 0) out_[j].completion = t;
      }
    }
  }

  struct Candidate {
    int site = -1;
    std::vector<std::size_t> nodes;  // ascending
    double completion = 0, total = 0;
    std::size_t hit = 0;
  };

  // The projected completion of `job` on `nodes` of site s, and the
  // interference it creates for the running jobs (job_before_: each one's
  // projected completion without it).
  Candidate evaluate(const RigidJob& job, int s, std::vector<std::size_t> nodes, double t) const {
    Candidate c;
    c.site = s;
    c.nodes = std::move(nodes);
    const auto work = static_cast<double>(runtime_at(m_, job, s));
    // A running job's projected completion after placement is the larger of
    // its completion before and its new finishes on the chosen nodes (a task
    // added to a node delays every task there, never speeds one up).
    std::vector<std::size_t> touched;
    c.completion = t;
    for (std::size_t i = 0; i < c.nodes.size(); ++i) {
      const auto& node = nodes_[c.nodes[i]];
      std::vector<double> r;
      std::size_t at = node.tasks.size();
      for (std::size_t k = 0; k < node.tasks.size(); ++k) {
        const double rk = std::max(0.0, node.tasks[k].finish_v - node.v);
        if (at == node.tasks.size() && work < rk) {
          at = k;
          r.push_back(work);
        }
        r.push_back(rk);
      }
      if (at == node.tasks.size()) r.push_back(work);
      const auto f = ps_finish(t, r);
      c.completion = std::max(c.completion, f[at]);
      for (std::size_t k = 0; k < node.tasks.size(); ++k) {
        const std::size_t job_k = node.tasks[k].job;
        if (job_after_[job_k] < 0) touched.push_back(job_k);
        job_after_[job_k] = std::max(job_after_[job_k], f[k < at ? k : k + 1]);
      }
    }
    double interference = 0;
    for (auto k : touched) {
      const double a = job_after_[k];
      job_after_[k] = -1;
      if (a > job_before_[k]) {
        interference += a - job_before_[k];
        ++c.hit;
      }
    }
    c.total = interference + (c.completion - t);
    return c;
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
    Candidate best;
    double ideal = std::numeric_limits<double>::infinity();
    for (int s = 0; s < static_cast<int>(m_.sites.size()); ++s) {
      if (!fits(m_, job, s)) continue;
      const auto first = static_cast<std::size_t>(first_[static_cast<std::size_t>(s)]);
      std::vector<std::size_t> site_nodes(
          static_cast<std::size_t>(m_.sites[static_cast<std::size_t>(s)].nodes));
      for (std::size_t i = 0; i < site_nodes.size(); ++i) site_nodes[i] = first + i;
      std::vector<double> work(nodes_.size());
      for (auto x : site_nodes) work[x] = nodes_[x].work();
      // Two candidate schedules per site: the nodes with the fewest tasks,
      // and the nodes with the least remaining work (ties: lower node).
      for (int kind = 0; kind < 2; ++kind) {
        std::vector<std::size_t> order = site_nodes;
        if (kind == 0)
          std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return nodes_[a].tasks.size() < nodes_[b].tasks.size();
          });
        else
          std::stable_sort(order.begin(), order.end(),
                           [&](std::size_t a, std::size_t b) { return work[a] < work[b]; });
        order.resize(static_cast<std::size_t>(job.width));
        std::sort(order.begin(), order.end());
        Candidate c = evaluate(job, s, std::move(order), t);
        ideal = std::min(ideal, c.completion);
        if (best.site < 0 || better(c, best)) best = std::move(c);
      }
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
      nodes_[x].add(work, j);
    }
    left_[j] = job.width;
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
    return a.completion < b.completion;  // then the lower site index: the earlier candidate stays
  }

  Interference p_;
  const Workload& w_;
  const Machine& m_;
  const RunOptions& o_;
  std::vector<Outcome> out_;
  std::vector<int> left_;
  std::vector<Node> nodes_;
  std::vector<int> first_;
  std::vector<double> job_before_ = std::vector<double>(w_.jobs.size(), -1);
  mutable std::vector<double> job_after_ = std::vector<double>(w_.jobs.size(), -1);  // scratch of evaluate()
  std::vector<std::size_t> seen_;
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
