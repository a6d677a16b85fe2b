// The space-sharing simulator (docs/rigid.md, "The space-sharing simulator").
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <queue>
#include <tuple>
#include <unordered_map>

#include "algorithms/prediction.h"
#include "algorithms/site_choice.h"
#include "engines.h"
#include "fit_index.h"
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
        rng_(o.seed, 2),
        jobs_(w.jobs.size()),
        sites_(m.sites.size()),
        multi_(m.sites.size() > 1),
        indexed_(p.indexed && !multi_ &&
                 (p.local == Local::kFirstFit || p.local == Local::kRandom || p.local == Local::kBackfill ||
                  p.local == Local::kEasy)),
        fit_(indexed_ ? w.jobs.size() : 0) {
    for (std::size_t s = 0; s < sites_.size(); ++s) sites_[s].free = m.sites[s].nodes;
    for (const auto& site : m.sites) nodes_.push_back(site.nodes);
    if (multi_) {
      queued_.resize(w.jobs.size());
      mask_.resize(w.jobs.size());
    }
    if (m.classes() > 1) {
      class_count_ = static_cast<std::size_t>(m.classes());
      class_.resize(w.jobs.size());
      for (std::size_t j = 0; j < w.jobs.size(); ++j) class_[j] = job_class(w.jobs[j].id, m.classes());
    }
    // Runtime learning (learner.h's rule) with each job's key numbered once,
    // so that a prediction is an array read.
    std::map<std::tuple<std::int64_t, std::int64_t, int>, int> ids;
    key_.resize(w.jobs.size());
    for (std::size_t j = 0; j < w.jobs.size(); ++j) {
      const auto& job = w.jobs[j];
      key_[j] =
          ids.try_emplace({job.user, job.executable, job.width}, static_cast<int>(ids.size())).first->second;
    }
    learned_.assign(ids.size(), std::numeric_limits<double>::quiet_NaN());
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
      else if (indexed_)
        pass_indexed(t);
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
  };
  // Several sites only: where a job is queued and its efficacy there.
  struct Queued {
    std::vector<int> sites;   // sites whose queue holds it
    std::vector<double> eff;  // its efficacy at each of `sites` (efficacy priority)
  };
  // A queue entry; its width is read without the job's record, and on one
  // site a started job's entry is marked by width 0.
  struct Entry {
    std::size_t job;
    int width;
  };
  struct SiteState {
    int free = 0;
    std::vector<std::size_t> running;
    // The queue in priority order from `head` on, with `stale` entries of
    // jobs no longer queued there: removals are lazy, so that starting a job
    // costs no copy of the queue.
    std::vector<Entry> queue;
    std::size_t head = 0, stale = 0, live = 0;
  };

  bool queued_at(std::size_t j, int s) const {
    if (!multi_) return jobs_[j].site == -1;
    if (s < 64) return (mask_[j] >> s) & 1;
    const auto& q = queued_[j].sites;
    return std::find(q.begin(), q.end(), s) != q.end();
  }

  bool stale(const Entry& e, int s) const { return multi_ ? !queued_at(e.job, s) : e.width == 0; }

  // Drops stale entries: at the front at once, elsewhere once they
  // outnumber the live ones (every one with `all`).
  void compact(int s, bool all = false) {
    auto& st = sites_[static_cast<std::size_t>(s)];
    while (st.stale > 0 && st.head < st.queue.size() && stale(st.queue[st.head], s)) {
      ++st.head;
      --st.stale;
    }
    if (st.stale > 0 && (all || st.stale > st.live)) {
      st.queue.erase(std::remove_if(st.queue.begin() + static_cast<std::ptrdiff_t>(st.head), st.queue.end(),
                                    [&](const Entry& e) { return stale(e, s); }),
                     st.queue.end());
      st.stale = 0;
    }
    if (st.head > 0 && (all || 2 * st.head >= st.queue.size())) {
      st.queue.erase(st.queue.begin(), st.queue.begin() + static_cast<std::ptrdiff_t>(st.head));
      st.head = 0;
    }
  }

  Time predict(std::size_t j, int s) const {
    const RigidJob& job = w_.jobs[j];
    // factor_at(), with the job's class worked out once.
    const auto& factors = m_.sites[static_cast<std::size_t>(s)].factors;
    const double f = factors.size() == 1              ? factors[0]
                     : factors.size() == class_count_ ? factors[static_cast<std::size_t>(class_[j])]
                                                      : factor_at(m_, job, s);
    if (o_.estimates == Estimates::kExact) return scaled(job.runtime, f);
    if (o_.estimates == Estimates::kSwf && job.estimate != kUnknown) return scaled(job.estimate, f);
    const double learned = learned_[static_cast<std::size_t>(key_[j])];
    if (std::isnan(learned)) return kUnknown;
    return static_cast<Time>(std::ceil(learned * f));
  }

  void learn(std::size_t j) {
    double& t = learned_[static_cast<std::size_t>(key_[j])];
    const auto runtime = static_cast<double>(w_.jobs[j].runtime);
    t = std::isnan(t) ? runtime : o_.alpha * t + (1 - o_.alpha) * runtime;
  }

  double eff_at(std::size_t j, int s) const {
    const auto& q = queued_[j];
    return q.eff[static_cast<std::size_t>(std::find(q.sites.begin(), q.sites.end(), s) - q.sites.begin())];
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

  // The site's view; `order` gets the job of each queue position (and `at`
  // its index in the site's queue). Only the first `limit` queued jobs are
  // in it. `reserving`: for conservative reservations, whatever the rule.
  SiteView view(int s, std::vector<WaitingJob>& q, std::vector<RunningJob>& r,
                std::vector<std::size_t>& order, Time t, std::size_t limit = SIZE_MAX,
                std::vector<std::size_t>* at = nullptr, bool reserving = false) {
    // Several sites leave many stale entries behind; one sweep drops them.
    compact(s, multi_);
    const SiteState& st = sites_[static_cast<std::size_t>(s)];
    // FIFO, FirstFit, Random, LPT and SPT read no predictions.
    const bool predicted = reserving || p_.local == Local::kBackfill || p_.local == Local::kEasy ||
                           p_.local == Local::kConservative;
    // Backfill and EASY read the prediction of no job wider than the free
    // nodes (such a job neither starts nor backfills); conservative
    // backfilling reserves every job.
    const bool all_predicted = reserving || p_.local == Local::kConservative;
    order.clear();
    q.clear();
    if (at) at->clear();
    for (std::size_t i = st.head; i < st.queue.size() && order.size() < limit; ++i) {
      const Entry& e = st.queue[i];
      if (st.stale > 0 && stale(e, s)) continue;
      order.push_back(e.job);
      if (at) at->push_back(i);
      q.push_back(
          {e.width, predicted && (all_predicted || e.width <= st.free) ? predict(e.job, s) : kUnknown});
    }
    r.clear();
    if (predicted)
      for (auto j : st.running) {
        const Time pr = predict(j, s);
        r.push_back({w_.jobs[j].width, pr == kUnknown ? kUnknown : jobs_[j].start + pr});
      }
    return SiteView{t, m_.sites[static_cast<std::size_t>(s)].nodes, st.free, r, q};
  }

  // Several sites: j leaves site s's queue (lazily: compact() drops it).
  void unqueue(std::size_t j, int s) {
    ++sites_[static_cast<std::size_t>(s)].stale;
    --sites_[static_cast<std::size_t>(s)].live;
    auto& q = queued_[j];
    const auto at = std::find(q.sites.begin(), q.sites.end(), s) - q.sites.begin();
    q.sites.erase(q.sites.begin() + at);
    q.eff.erase(q.eff.begin() + at);
    if (s < 64) mask_[j] &= ~(std::uint64_t{1} << s);
  }

  void start(std::size_t j, int s, Time t) {
    if (multi_) {
      while (!queued_[j].sites.empty()) unqueue(j, queued_[j].sites.front());
    } else if (indexed_) {
      fit_.clear(j);
      --sites_[0].live;
    } else {
      ++sites_[0].stale;
      --sites_[0].live;
    }
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
    learn(j);
  }

  void arrive(std::size_t j, Time t) {
    const RigidJob& job = w_.jobs[j];
    std::vector<int> cand;
    for (int s = 0; s < static_cast<int>(sites_.size()); ++s)
      if (fits(m_, job, s)) cand.push_back(s);
    const auto k = static_cast<std::size_t>(p_.k == 0 ? static_cast<int>(sites_.size()) : p_.k);
    if (cand.size() > k) {
      // Each candidate's view with every prediction, as the choice reads them.
      auto& q = scratch_q_;
      auto& r = scratch_r_;
      auto& order = scratch_order_;
      if (p_.completion_select) {
        std::vector<Time> c(sites_.size());
        for (int s : cand) {
          const SiteView v = view(s, q, r, order, t, SIZE_MAX, nullptr, true);
          c[static_cast<std::size_t>(s)] = completion_if_appended(v, {job.width, predict(j, s)});
        }
        cand = earliest_completion(std::move(cand), k, c);
      } else {
        std::vector<__int128> load(sites_.size(), 0);
        for (int s : cand)
          load[static_cast<std::size_t>(s)] = site_load(view(s, q, r, order, t, SIZE_MAX, nullptr, true));
        cand = least_loaded(std::move(cand), k, load, nodes_);
      }
    }
    if (multi_) {
      auto& q = queued_[j];
      q.sites = cand;
      for (int s : cand) {
        q.eff.push_back(efficacy(m_, job, s, cand));
        if (s < 64) mask_[j] |= std::uint64_t{1} << s;
      }
    }
    if (indexed_) {
      // One site in (submit, id) order: the job's index is its queue position.
      fit_.set(j, job.width);
      ++sites_[0].live;
      return;
    }
    for (int s : cand) {
      // Efficacy is known only where a job is still queued.
      compact(s, p_.efficacy_priority);
      auto& st = sites_[static_cast<std::size_t>(s)];
      st.queue.insert(
          std::upper_bound(st.queue.begin() + static_cast<std::ptrdiff_t>(st.head), st.queue.end(), j,
                           [&](std::size_t a, const Entry& b) { return before(a, b.job, s); }),
          Entry{j, job.width});
      ++st.live;
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
    auto& q = scratch_q_;
    auto& r = scratch_r_;
    auto& order = scratch_order_;
    auto& at = scratch_at_;
    for (bool changed = true; changed;) {
      changed = false;
      for (int s = 0; s < static_cast<int>(sites_.size()); ++s) {
        auto& st = sites_[static_cast<std::size_t>(s)];
        if (st.live == 0) continue;
        // FIFO (and LPT, SPT) starts at most one job per free node.
        const bool fifo = p_.local == Local::kFifo || p_.local == Local::kLpt || p_.local == Local::kSpt;
        const SiteView v = view(s, q, r, order, t, fifo ? static_cast<std::size_t>(st.free) : SIZE_MAX,
                                multi_ ? nullptr : &at);
        const auto picked = pick(v);
        for (auto i : picked) {
          if (!multi_) st.queue[at[i]].width = 0;  // stale from now on
          start(order[i], s, t);
        }
        changed = changed || !picked.empty();
      }
      // On one site a second sweep starts nothing: every rule has already
      // taken all it would with the nodes left.
      if (!multi_) return;
    }
  }

  // pass_by_start's rules on one site, each fitting job found through the
  // index (jobs in index order are in queue order): FirstFit and Random look
  // only at jobs that fit, Backfill and EASY also at the heads.
  void pass_indexed(Time t) {
    auto& st = sites_[0];
    if (st.live == 0) return;
    const auto n = w_.jobs.size();
    const auto width = [&](std::size_t j) { return w_.jobs[j].width; };
    if (p_.local == Local::kFirstFit) {
      for (std::size_t j = fit_.next_fit(0, st.free); j < n && st.free > 0; j = fit_.next_fit(j + 1, st.free))
        start(j, 0, t);
      return;
    }
    if (p_.local == Local::kRandom) {
      auto& fitting = scratch_order_;
      for (;;) {
        fitting.clear();
        for (std::size_t j = fit_.next_fit(0, st.free); j < n; j = fit_.next_fit(j + 1, st.free))
          fitting.push_back(j);
        if (fitting.empty()) return;
        start(fitting[rng_.below(fitting.size())], 0, t);
      }
    }
    // Backfill and EASY: the heads while they fit (FIFO), then the head's shadow.
    std::size_t head = fit_.next(0);
    while (head < n && width(head) <= st.free) {
      start(head, 0, t);
      head = fit_.next(head + 1);
    }
    if (head == n) return;
    // The running jobs, the heads just started among them, with their predicted ends.
    auto& r = scratch_r_;
    r.clear();
    for (auto j : st.running) {
      const Time pr = predict(j, 0);
      r.push_back({width(j), pr == kUnknown ? kUnknown : jobs_[j].start + pr});
    }
    const Shadow shadow =
        shadow_of(SiteView{t, m_.sites[0].nodes, st.free, r, std::span<const WaitingJob>{}}, width(head));
    if (shadow.time == kNever) return;
    int spare = shadow.extra;
    for (std::size_t j = fit_.next_fit(head + 1, st.free); j < n && st.free > 0;
         j = fit_.next_fit(j + 1, st.free)) {
      const Time pr = predict(j, 0);
      if (pr != kUnknown && rigid::finish(t, pr) <= shadow.time) {
        start(j, 0, t);
      } else if (p_.local == Local::kEasy && width(j) <= spare) {
        spare -= width(j);
        start(j, 0, t);
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
        if (sites_[s].live == 0) continue;
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
          for (int k : queued_[j].sites) {
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
  sched::Rng rng_;
  std::vector<JobState> jobs_;
  std::vector<SiteState> sites_;
  std::vector<int> nodes_;  // each site's nodes
  bool multi_;
  bool indexed_;  // pass_indexed: one site, FirstFit, Random, Backfill or EASY
  FitIndex fit_;  // indexed_: the waiting jobs by index
  // Scratch of the passes, kept to spare an allocation per pass.
  std::vector<WaitingJob> scratch_q_;
  std::vector<RunningJob> scratch_r_;
  std::vector<std::size_t> scratch_order_, scratch_at_;
  std::vector<Queued> queued_;       // several sites only
  std::vector<std::uint64_t> mask_;  // several sites: bit s set while queued at site s < 64
  std::size_t class_count_ = 0;      // the machine's classes when more than one
  std::vector<int> class_;           // each job's class then
  std::vector<int> key_;             // each job's learning key, numbered
  std::vector<double> learned_;      // per key; NaN before any job of it finished
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
