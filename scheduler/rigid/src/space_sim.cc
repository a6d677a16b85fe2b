// The space-sharing simulator (docs/rigid.md, "The space-sharing simulator").
#include <algorithm>
#include <cmath>
#include <queue>
#include <unordered_map>

#include "engines.h"
#include "piranha/rigid/learner.h"
#include "piranha/rigid/pick.h"

namespace piranha::rigid {
namespace {

using Local = SpacePolicy::Local;

class SpaceSim {
 public:
  SpaceSim(const SpacePolicy& p, const Workload& w, const Machine& m, const RunOptions& o)
      : p_(p),
        w_(w),
        m_(m),
        o_(o),
        learner_(o.alpha),
        rng_(o.seed, 2),
        jobs_(w.jobs.size()),
        sites_(m.sites.size()) {
    for (std::size_t s = 0; s < sites_.size(); ++s) sites_[s].free = m.sites[s].nodes;
  }

  std::vector<Outcome> run() {
    const std::size_t n = w_.jobs.size();
    std::size_t next = 0;
    while (next < n || !ends_.empty()) {
      Time t = next < n ? w_.jobs[next].submit : kNever;
      if (!ends_.empty()) t = std::min(t, ends_.top().first);
      std::vector<std::size_t> done;
      while (!ends_.empty() && ends_.top().first == t) {
        done.push_back(ends_.top().second);
        ends_.pop();
      }
      std::sort(done.begin(), done.end());
      for (auto j : done) finish(j);
      while (next < n && w_.jobs[next].submit == t) arrive(next++, t);
      if (p_.completion_decide)
        pass_by_completion(t);
      else
        pass_by_start(t);
      if (o_.progress && next % 1000 == 0 && next > 0 && next != last_progress_) {
        last_progress_ = next;
        o_.progress(static_cast<double>(next) / static_cast<double>(n));
      }
    }
    std::vector<Outcome> out(n);
    for (std::size_t j = 0; j < n; ++j) {
      out[j].site = jobs_[j].site;
      out[j].start = static_cast<double>(jobs_[j].start);
      out[j].completion = static_cast<double>(jobs_[j].end);
      out[j].dedicated = runtime_at(m_, w_.jobs[j], jobs_[j].site);
    }
    return out;
  }

 private:
  struct JobState {
    int site = -1;
    Time start = -1, end = -1;
    std::vector<int> queued;  // sites whose queue holds it
    std::vector<double> eff;  // its efficacy at each of `queued` (efficacy priority)
  };
  struct SiteState {
    int free = 0;
    std::vector<std::size_t> running, queue;
  };

  Time predict(std::size_t j, int s) const {
    const RigidJob& job = w_.jobs[j];
    const double f = factor_at(m_, job, s);
    if (o_.estimates == Estimates::kExact) return scaled(job.runtime, f);
    if (o_.estimates == Estimates::kSwf && job.estimate != kUnknown) return scaled(job.estimate, f);
    const auto learned = learner_.predict(job);
    if (!learned) return kUnknown;
    return static_cast<Time>(std::ceil(*learned * f));
  }

  double eff_at(std::size_t j, int s) const {
    const auto& q = jobs_[j].queued;
    return jobs_[j].eff[static_cast<std::size_t>(std::find(q.begin(), q.end(), s) - q.begin())];
  }

  // The site's priority order: (submit, id) = job index, after LPT's or
  // SPT's processing time (runtime x width) or the efficacy.
  bool before(std::size_t a, std::size_t b, int s) const {
    if (p_.local == Local::kLpt || p_.local == Local::kSpt) {
      const auto& ja = w_.jobs[a];
      const auto& jb = w_.jobs[b];
      const auto wa = static_cast<__int128>(ja.runtime) * ja.width,
                 wb = static_cast<__int128>(jb.runtime) * jb.width;
      if (wa != wb) return p_.local == Local::kLpt ? wa > wb : wa < wb;
    }
    if (p_.efficacy_priority) {
      const double ea = eff_at(a, s), eb = eff_at(b, s);
      if (ea != eb) return ea > eb;
    }
    return a < b;
  }

  SiteView view(int s, std::vector<WaitingJob>& q, std::vector<RunningJob>& r, std::vector<std::size_t>& order,
                Time t) const {
    const SiteState& st = sites_[static_cast<std::size_t>(s)];
    order = st.queue;
    // FIFO, FirstFit, Random, LPT and SPT read no predictions.
    const bool predicted =
        p_.local == Local::kBackfill || p_.local == Local::kEasy || p_.local == Local::kConservative;
    q.clear();
    for (auto j : order) q.push_back({w_.jobs[j].width, predicted ? predict(j, s) : kUnknown});
    r.clear();
    if (predicted)
      for (auto j : st.running) {
        const Time pr = predict(j, s);
        r.push_back({w_.jobs[j].width, pr == kUnknown ? kUnknown : jobs_[j].start + pr});
      }
    return SiteView{t, m_.sites[static_cast<std::size_t>(s)].nodes, st.free, r, q};
  }

  void unqueue(std::size_t j, int s) {
    auto& q = sites_[static_cast<std::size_t>(s)].queue;
    q.erase(std::find(q.begin(), q.end(), j));
    auto& js = jobs_[j];
    const auto at = std::find(js.queued.begin(), js.queued.end(), s) - js.queued.begin();
    js.queued.erase(js.queued.begin() + at);
    js.eff.erase(js.eff.begin() + at);
  }

  void start(std::size_t j, int s, Time t) {
    while (!jobs_[j].queued.empty()) unqueue(j, jobs_[j].queued.front());
    auto& st = sites_[static_cast<std::size_t>(s)];
    st.free -= w_.jobs[j].width;
    st.running.push_back(j);
    jobs_[j].site = s;
    jobs_[j].start = t;
    jobs_[j].end = t + runtime_at(m_, w_.jobs[j], s);
    ends_.emplace(jobs_[j].end, j);
  }

  void finish(std::size_t j) {
    auto& st = sites_[static_cast<std::size_t>(jobs_[j].site)];
    st.free += w_.jobs[j].width;
    st.running.erase(std::find(st.running.begin(), st.running.end(), j));
    learner_.observe(w_.jobs[j], w_.jobs[j].runtime);
  }

  // The predicted completion of job j appended to site s's queue, under
  // conservative backfilling.
  Time completion_if_queued(std::size_t j, int s, Time t) const {
    std::vector<WaitingJob> q;
    std::vector<RunningJob> r;
    std::vector<std::size_t> order;
    SiteView v = view(s, q, r, order, t);
    q.push_back({w_.jobs[j].width, predict(j, s)});
    v.queue = q;
    const Time at = reservations(v).back();
    const Time len = q.back().predicted;
    return at == kNever || len == kUnknown ? kNever : at + len;
  }

  void arrive(std::size_t j, Time t) {
    const RigidJob& job = w_.jobs[j];
    std::vector<int> cand;
    for (int s = 0; s < static_cast<int>(sites_.size()); ++s)
      if (fits(m_, job, s)) cand.push_back(s);
    const int k = p_.k == 0 ? static_cast<int>(sites_.size()) : p_.k;
    if (static_cast<int>(cand.size()) > k) {
      if (p_.completion_select) {
        std::vector<Time> c(sites_.size());
        for (int s : cand) c[static_cast<std::size_t>(s)] = completion_if_queued(j, s, t);
        std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
          return c[static_cast<std::size_t>(a)] < c[static_cast<std::size_t>(b)];
        });
      } else {
        std::vector<__int128> load(sites_.size(), 0);
        for (int s : cand) {
          const auto& st = sites_[static_cast<std::size_t>(s)];
          __int128 l = 0;
          for (auto q : st.queue) {
            const Time pr = predict(q, s);
            if (pr != kUnknown) l += static_cast<__int128>(pr) * w_.jobs[q].width;
          }
          for (auto r : st.running) {
            const Time pr = predict(r, s);
            // Its predicted end, at least t + 1 (docs/rigid.md, "Predictions").
            if (pr != kUnknown)
              l += static_cast<__int128>(std::max<Time>(1, jobs_[r].start + pr - t)) * w_.jobs[r].width;
          }
          load[static_cast<std::size_t>(s)] = l;
        }
        std::stable_sort(cand.begin(), cand.end(), [&](int a, int b) {
          return load[static_cast<std::size_t>(a)] * m_.sites[static_cast<std::size_t>(b)].nodes <
                 load[static_cast<std::size_t>(b)] * m_.sites[static_cast<std::size_t>(a)].nodes;
        });
      }
      cand.resize(static_cast<std::size_t>(k));
      std::sort(cand.begin(), cand.end());
    }
    auto& js = jobs_[j];
    js.queued = cand;
    for (int s : cand) js.eff.push_back(efficacy(m_, job, s, cand));
    for (int s : cand) {
      auto& q = sites_[static_cast<std::size_t>(s)].queue;
      q.insert(std::upper_bound(q.begin(), q.end(), j,
                                [&](std::size_t a, std::size_t b) { return before(a, b, s); }),
               j);
    }
  }

  std::vector<std::size_t> pick(const SiteView& v) {
    switch (p_.local) {
      case Local::kFifo:
      case Local::kLpt:
      case Local::kSpt: return pick_fifo(v);
      case Local::kFirstFit: return pick_first_fit(v);
      case Local::kRandom: return pick_random(v, rng_);
      case Local::kBackfill: return pick_backfill(v, false);
      case Local::kEasy: return pick_backfill(v, true);
      case Local::kConservative: return pick_conservative(v);
    }
    return {};
  }

  void pass_by_start(Time t) {
    std::vector<WaitingJob> q;
    std::vector<RunningJob> r;
    std::vector<std::size_t> order;
    for (bool changed = true; changed;) {
      changed = false;
      for (int s = 0; s < static_cast<int>(sites_.size()); ++s) {
        if (sites_[static_cast<std::size_t>(s)].queue.empty()) continue;
        const SiteView v = view(s, q, r, order, t);
        const auto picked = pick(v);
        std::vector<std::size_t> chosen;
        for (auto i : picked) chosen.push_back(order[i]);
        for (auto j : chosen) start(j, s, t);
        changed = changed || !chosen.empty();
      }
    }
  }

  void pass_by_completion(Time t) {
    const std::size_t n = sites_.size();
    std::vector<WaitingJob> q;
    std::vector<RunningJob> r;
    std::vector<std::size_t> order;
    for (bool changed = true; changed;) {
      changed = false;
      std::vector<std::vector<std::size_t>> queue(n);
      std::vector<std::vector<Time>> res(n);
      std::vector<std::unordered_map<std::size_t, std::size_t>> where(n);
      for (std::size_t s = 0; s < n; ++s) {
        if (sites_[s].queue.empty()) continue;
        const SiteView v = view(static_cast<int>(s), q, r, order, t);
        queue[s] = order;
        res[s] = reservations(v);
        for (std::size_t i = 0; i < order.size(); ++i) where[s][order[i]] = i;
      }
      auto completion = [&](std::size_t j, int s) {
        const auto su = static_cast<std::size_t>(s);
        const Time at = res[su][where[su].at(j)];
        const Time len = predict(j, s);
        return at == kNever || len == kUnknown ? kNever : at + len;
      };
      for (std::size_t s = 0; s < n; ++s)
        for (std::size_t i = 0; i < queue[s].size(); ++i) {
          const std::size_t j = queue[s][i];
          if (res[s][i] != t || jobs_[j].site != -1) continue;
          const int si = static_cast<int>(s);
          const Time mine = completion(j, si);
          bool best = true;
          for (int k : jobs_[j].queued) {
            if (k == si) continue;
            const Time other = completion(j, k);
            if (other < mine || (other == mine && k < si)) best = false;
          }
          if (best)
            start(j, si, t);
          else
            unqueue(j, si);
          changed = true;
        }
    }
  }

  const SpacePolicy& p_;
  const Workload& w_;
  const Machine& m_;
  const RunOptions& o_;
  RuntimeLearner learner_;
  sched::Rng rng_;
  std::vector<JobState> jobs_;
  std::vector<SiteState> sites_;
  std::priority_queue<std::pair<Time, std::size_t>, std::vector<std::pair<Time, std::size_t>>, std::greater<>>
      ends_;
  std::size_t last_progress_ = 0;
};

}  // namespace

double efficacy(const Machine& m, const RigidJob& j, int site, const std::vector<int>& sites) {
  double best = factor_at(m, j, site);
  if (sites.empty()) {
    for (int s = 0; s < static_cast<int>(m.sites.size()); ++s)
      if (fits(m, j, s)) best = std::min(best, factor_at(m, j, s));
  } else {
    for (int s : sites) best = std::min(best, factor_at(m, j, s));
  }
  return best / factor_at(m, j, site);
}

RunResult simulate_space(const std::string& name, const SpacePolicy& p, const Workload& w, const Machine& m,
                         const RunOptions& o) {
  RunResult r;
  r.algorithm = name;
  r.jobs = SpaceSim(p, w, m, o).run();
  r.metrics = measure(w, m, r.jobs, o.slowdown_bound);
  return r;
}

}  // namespace piranha::rigid
