// Preemptive FCFS (seed 001; docs/rigid.md, "PFCFS").
#include <algorithm>
#include <deque>
#include <queue>
#include <tuple>

#include "engines.h"
#include "piranha/rigid/pick.h"

namespace piranha::rigid {
namespace {

class PfcfsEngine {
 public:
  PfcfsEngine(const PfcfsPolicy& p, const Workload& w, const Machine& m, const RunOptions& o)
      : p_(p), w_(w), o_(o), nodes_(m.sites.front().nodes), free_(nodes_), jobs_(w.jobs.size()) {
    for (std::size_t j = 0; j < jobs_.size(); ++j) jobs_[j].remaining = runtime_at(m, w.jobs[j], 0);
    for (std::size_t j = 0; j < jobs_.size(); ++j) jobs_[j].dedicated = jobs_[j].remaining;
  }

  std::int64_t preemptions() const { return preemptions_; }

  std::vector<Outcome> run() {
    const std::size_t n = w_.jobs.size();
    std::size_t next = 0;
    for (;;) {
      drop_stale();
      Time t = kNever;
      if (next < n) t = w_.jobs[next].submit;
      if (!ends_.empty()) t = std::min(t, std::get<0>(ends_.top()));
      t = std::min(t, timer_);
      if (t == kNever) break;
      std::vector<std::size_t> done;
      for (drop_stale(); !ends_.empty() && std::get<0>(ends_.top()) == t; drop_stale()) {
        done.push_back(std::get<2>(ends_.top()));
        ends_.pop();
      }
      std::sort(done.begin(), done.end());
      for (auto j : done) finish(j, t);
      while (next < n && w_.jobs[next].submit == t) queue_.push_back(next++);
      if (t == timer_) {
        timer_ = kNever;
        slice_end(t);
      }
      pass(t);
      if (o_.progress && next % 1000 == 0 && next > 0 && next != last_progress_) {
        last_progress_ = next;
        o_.progress(static_cast<double>(next) / static_cast<double>(n));
      }
    }
    std::vector<Outcome> out(n);
    for (std::size_t j = 0; j < n; ++j)
      out[j] = Outcome{0, static_cast<double>(jobs_[j].start), static_cast<double>(jobs_[j].end),
                       jobs_[j].dedicated, 0};
    return out;
  }

 private:
  enum class Phase { kNone, kWaiting, kWideSlice, kGangB, kWideWaitFree };
  struct JobState {
    Time remaining = 0, dedicated = 0;
    Time start = -1, end = -1;
    bool running = false;
    int version = 0;
  };

  int width(std::size_t j) const { return w_.jobs[j].width; }
  bool wide(std::size_t j) const { return 2 * width(j) > nodes_; }

  void drop_stale() {
    while (!ends_.empty()) {
      const auto& [at, version, j] = ends_.top();
      if (jobs_[j].running && jobs_[j].version == version) return;
      ends_.pop();
    }
  }

  // Starts or resumes j at t; a switch-in after a preemption costs the penalty.
  void run_job(std::size_t j, Time t, bool switched_in) {
    auto& js = jobs_[j];
    if (switched_in) js.remaining += p_.penalty;
    if (js.start < 0) js.start = t;
    js.running = true;
    js.end = t + js.remaining;
    ++js.version;
    free_ -= width(j);
    running_.push_back(j);
    ends_.emplace(js.end, js.version, j);
  }

  void suspend(std::size_t j, Time t) {
    auto& js = jobs_[j];
    js.remaining = js.end - t;
    js.running = false;
    ++js.version;
    free_ += width(j);
    running_.erase(std::find(running_.begin(), running_.end(), j));
  }

  void finish(std::size_t j, Time t) {
    auto& js = jobs_[j];
    js.running = false;
    js.end = t;
    js.remaining = 0;
    free_ += width(j);
    running_.erase(std::find(running_.begin(), running_.end(), j));
    if (phase_ == Phase::kWideSlice && j == wide_) {
      for (auto b : gang_) run_job(b, t, true);
      gang_.clear();
      phase_ = Phase::kNone;
      timer_ = kNever;
    } else if (phase_ == Phase::kGangB && std::find(gang_.begin(), gang_.end(), j) != gang_.end()) {
      gang_.erase(std::find(gang_.begin(), gang_.end(), j));
      if (gang_.empty()) {
        run_job(wide_, t, true);
        phase_ = Phase::kNone;
        timer_ = kNever;
      }
    }
  }

  void slice_end(Time t) {
    if (phase_ == Phase::kWideSlice) {
      suspend(wide_, t);
      for (auto b : gang_) run_job(b, t, true);
      if (p_.variant == 1) {
        phase_ = Phase::kGangB;
        timer_ = t + p_.slice;
      } else {
        gang_.clear();
        phase_ = Phase::kWideWaitFree;
      }
    } else if (phase_ == Phase::kGangB) {
      if (width(wide_) <= free_) {
        run_job(wide_, t, true);
        gang_.clear();
        phase_ = Phase::kNone;
        return;
      }
      for (auto b : gang_) suspend(b, t);
      run_job(wide_, t, true);
      phase_ = Phase::kWideSlice;
      timer_ = t + p_.slice;
    }
  }

  void preempt(std::size_t head, Time t) {
    std::vector<std::size_t> by(running_);
    std::sort(by.begin(), by.end(), [&](std::size_t a, std::size_t b) {
      if (width(a) != width(b)) return width(a) > width(b);
      if (jobs_[a].start != jobs_[b].start) return jobs_[a].start > jobs_[b].start;
      return a > b;
    });
    gang_.clear();
    int free = free_;
    for (auto j : by) {
      if (free >= width(head)) break;
      gang_.push_back(j);
      free += width(j);
    }
    for (auto b : gang_) suspend(b, t);
    ++preemptions_;
    wide_ = head;
    run_job(head, t, true);
    phase_ = Phase::kWideSlice;
    timer_ = p_.variant == 3 ? kNever : t + p_.slice;
  }

  void pass(Time t) {
    for (;;) {
      if (phase_ == Phase::kNone) {
        while (!queue_.empty() && width(queue_.front()) <= free_) {
          run_job(queue_.front(), t, false);
          queue_.pop_front();
        }
        if (queue_.empty() || !wide(queue_.front())) return;
        phase_ = Phase::kWaiting;
      }
      if (phase_ == Phase::kWaiting) {
        const std::size_t head = queue_.front();
        if (width(head) <= free_) {
          run_job(head, t, false);
          queue_.pop_front();
          phase_ = Phase::kNone;
          timer_ = kNever;
          continue;
        }
        const Time at = w_.jobs[head].submit + p_.wait;
        if (t >= at) {
          queue_.pop_front();
          preempt(head, t);
        } else {
          timer_ = at;
        }
        return;
      }
      if (phase_ == Phase::kWideWaitFree && width(wide_) <= free_) {
        run_job(wide_, t, true);
        phase_ = Phase::kNone;
        continue;
      }
      return;
    }
  }

  const PfcfsPolicy& p_;
  const Workload& w_;
  const RunOptions& o_;
  int nodes_, free_;
  std::vector<JobState> jobs_;
  std::deque<std::size_t> queue_;
  std::vector<std::size_t> running_, gang_;
  std::size_t wide_ = 0;
  Phase phase_ = Phase::kNone;
  Time timer_ = kNever;
  std::int64_t preemptions_ = 0;
  std::priority_queue<std::tuple<Time, int, std::size_t>, std::vector<std::tuple<Time, int, std::size_t>>,
                      std::greater<>>
      ends_;
  std::size_t last_progress_ = 0;
};

}  // namespace

RunResult simulate_pfcfs(const std::string& name, const PfcfsPolicy& p, const Workload& w, const Machine& m,
                         const RunOptions& o) {
  PfcfsEngine sim(p, w, m, o);
  RunResult r;
  r.algorithm = name;
  r.jobs = sim.run();
  r.preemptions = sim.preemptions();
  r.metrics = measure(w, m, r.jobs, o.slowdown_bound);
  return r;
}

}  // namespace piranha::rigid
