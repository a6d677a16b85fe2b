// run_study (study.h): the 135 runs of the study, each seed's main experiment
// on one 256-node SWF workload (docs/rigid.md, "The study").
#include "piranha/rigid/study.h"

#include <algorithm>
#include <array>
#include <string>

#include "piranha/scheduler/random.h"

namespace piranha::rigid {
namespace {

// Seed 002's Table 1, normalized to the IBM SP (P2SC 160 MHz) column (the
// trace's own machine): run-time factors per job class IS(8), MG(8),
// MG(256), LU(256) at the SGI Origin 2000, IBM SP (WN/66), Cray T3E 900, P2SC.
const char* kNasSites =
    "256*1.3164/2.064/1.1952/0.84,256*1.2768/1.9942/2.0658/3.9212,256*0.9209/1.4709/1.6364/1.4711,256";

class Runs {
 public:
  Runs(const Workload& w, const StudyOptions& o) : w_(w), o_(o) {}

  StudyResult all() {
    StudyResult r;
    r.source = w_.source;
    r.jobs = w_.jobs.size();
    for (const auto& j : w_.jobs)
      if (j.width > 128) {
        ++r.wide_jobs;
        if (j.runtime <= 60) ++r.short_wide_jobs;
      }
    r.seed000 = seed000();
    r.seed001 = seed001();
    r.seed002 = seed002();
    r.seed004 = seed004();
    return r;
  }

 private:
  RunResult run(const std::string& name, const Workload& w, const Machine& m,
                Estimates e = Estimates::kExact) {
    if (o_.progress)
      o_.progress(name, std::min(1.0, static_cast<double>(runs_) / 135.0));  // the study makes 135 runs
    ++runs_;
    RunOptions opt;
    opt.estimates = e;
    return make_algorithm(name)->run(w, m, opt);
  }

  Seed000Result seed000() {
    Seed000Result s;
    const Machine m = single_site(256);
    s.algorithms = {"FIFO", "FirstFit", "Random", "LPT", "SPT", "Backfill", "EASY"};
    s.loads = {0.3, 0.5, 0.7, 0.85, 1.0};
    for (double load : s.loads) {
      const Workload w = scale_load(w_, load);
      for (const auto& n : s.algorithms) s.by_load[n].push_back(run(n, w, m).metrics);
    }
    s.learned = run("Backfill", w_, m, Estimates::kLearn).metrics;
    return s;
  }

  Seed001Result seed001() {
    Seed001Result s;
    const Time month = 30 * 86400;
    const std::vector<std::string> variants{"PFCFS1", "PFCFS2", "PFCFS3"};
    auto pick = [](const Metrics& x, int q) {
      return q == 0 ? x.makespan : q == 1 ? x.weighted_completion : x.weighted_flow;
    };
    auto pct = [](double x, double base) { return base > 0 ? 100 * (x / base - 1) : 0.0; };
    for (int nodes : {128, 256}) {
      Seed001Result::Size size;
      size.nodes = nodes;
      const Machine m = single_site(nodes);
      const Workload all = at_most_width(w_, nodes);
      std::array<double, 3> fifo_sum{};
      std::array<std::array<double, 3>, 3> var_sum{};
      for (Time k = 0; k * month <= all.jobs.back().submit; ++k) {
        Workload w = all;
        std::erase_if(w.jobs, [&](const RigidJob& j) { return j.submit / month != k; });
        if (w.jobs.empty()) continue;
        const Metrics f = run("FIFO", w, m).metrics;
        std::array<Metrics, 3> x;
        for (std::size_t v = 0; v < 3; ++v) x[v] = run(variants[v], w, m).metrics;
        Seed001Result::Month row{static_cast<int>(k + 1), w.jobs.size(), {}};
        for (int q = 0; q < 3; ++q) {
          const auto qi = static_cast<std::size_t>(q);
          fifo_sum[qi] += pick(f, q);
          for (std::size_t v = 0; v < 3; ++v) {
            var_sum[v][qi] += pick(x[v], q);
            row.change[v][qi] = pct(pick(x[v], q), pick(f, q));
          }
        }
        size.months.push_back(row);
      }
      for (std::size_t q = 0; q < 3; ++q)
        for (std::size_t v = 0; v < 3; ++v) size.total[v][q] = pct(var_sum[v][q], fifo_sum[q]);
      s.sizes.push_back(size);
    }
    // Sensitivity on the whole workload, 256 nodes.
    const Machine m = single_site(256);
    const double fifo_flow = run("FIFO", w_, m).metrics.weighted_flow;
    s.waits = {60, 600, 3600};
    s.slices = {60, 600, 3600};
    for (int wait : s.waits) {
      s.sensitivity.emplace_back();
      for (int slice : s.slices)
        s.sensitivity.back().push_back(
            pct(run("PFCFS1(" + std::to_string(wait) + "," + std::to_string(slice) + ",0)", w_, m)
                    .metrics.weighted_flow,
                fifo_flow));
    }
    s.penalties = {0, 10, 60, 300};
    for (int p : s.penalties)
      s.penalty_change.push_back(
          pct(run("PFCFS1(600,600," + std::to_string(p) + ")", w_, m).metrics.weighted_flow, fifo_flow));
    return s;
  }

  // Four copies of the first jobs, two shifted by three hours (seed 002's
  // four traces from two time zones).
  Workload four_sites() const {
    Workload out;
    out.source = w_.source;
    const std::size_t n = std::min(o_.multi_site_jobs, w_.jobs.size());
    for (int c = 0; c < 4; ++c)
      for (std::size_t i = 0; i < n; ++i) {
        RigidJob j = w_.jobs[i];
        j.id += static_cast<std::int64_t>(c) * 100'000'000;
        if (c % 2 == 1) j.submit += 3 * 3600;
        out.jobs.push_back(j);
      }
    std::sort(out.jobs.begin(), out.jobs.end(), [](const RigidJob& a, const RigidJob& b) {
      return a.submit != b.submit ? a.submit < b.submit : a.id < b.id;
    });
    return out;
  }

  Seed002Result seed002() {
    Seed002Result s;
    const Workload four = four_sites();
    const Machine m = parse_sites(kNasSites);
    s.sites = kNasSites;
    s.jobs = four.jobs.size();
    s.algorithms = {"Greedy", "MR(4)", "MR(4,CONS,COMPLETION)", "MR(4,CONS,COMPLETION,EFFICACY)"};
    s.loads = {1.0, 1.4, 1.8};
    for (double load : s.loads) {
      const Workload w = scale_load(four, load);
      for (const auto& n : s.algorithms) s.by_load[n].push_back(run(n, w, m).metrics);
      // One site with the same load: all the jobs, run times a quarter (the paper's single-site check).
      const Workload one = scale_load(four, load / 4);
      s.easy_one_site.push_back(run("EASY", one, single_site(256)).metrics);
      s.conservative_one_site.push_back(run("Conservative", one, single_site(256)).metrics);
    }
    // K = 1..4 at the middle load, sites chosen by load or by completion (the same for K = 4).
    const Workload mid = scale_load(four, s.loads[1]);
    for (int k = 1; k <= 4; ++k) {
      const std::string base = "MR(" + std::to_string(k) + ",CONS,COMPLETION,EFFICACY,";
      s.k_by_load.push_back(run(base + "LOAD)", mid, m).metrics.mean_flow);
      s.k_by_completion.push_back(k == 4 ? s.k_by_load.back()
                                         : run(base + "COMPLETION)", mid, m).metrics.mean_flow);
    }
    return s;
  }

  Seed004Result seed004() {
    Seed004Result s;
    Workload base = at_most_width(w_, 64);
    if (base.jobs.size() > o_.interference_jobs) base.jobs.resize(o_.interference_jobs);
    s.jobs = base.jobs.size();
    s.heterogeneities = {1, 2, 4, 8};
    s.loads = {0.25, 0.5, 0.75};
    s.algorithms = {"MTI", "MCT", "MNI"};
    for (int H : s.heterogeneities) {
      Machine m;
      sched::Rng rng(static_cast<std::uint64_t>(H), 4);
      for (int c = 0; c < 4; ++c) {
        Site site{64, {}};
        for (int k = 0; k < 16; ++k) site.factors.push_back(1 + (H - 1) * rng.uniform01());
        m.sites.push_back(site);
      }
      auto& delay = s.delay[H];
      for (double load : s.loads) {
        const Workload w = scale_load(base, load);
        for (const auto& n : s.algorithms) delay[n].push_back(*run(n, w, m).metrics.mean_delay);
      }
      s.mni_over_mti[H] = delay["MNI"].back() / std::max(1e-9, delay["MTI"].back());
    }
    return s;
  }

  const Workload& w_;
  const StudyOptions& o_;
  int runs_ = 0;
};

}  // namespace

StudyResult run_study(const Workload& w, const StudyOptions& o) {
  return Runs(w, o).all();
}

}  // namespace piranha::rigid
