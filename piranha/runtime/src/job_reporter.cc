#include "piranha/runtime/job_reporter.h"

#include <cstdio>
#include <map>

using namespace std::chrono_literals;

namespace piranha {
namespace {

constexpr auto kTick = std::chrono::milliseconds(250);
constexpr std::size_t kBatch = 100'000;
// The jobstat is rewritten at least this often: its updated_at is the
// feeder's heartbeat, by which agents tell a dead feeder's job.
constexpr auto kHeartbeat = std::chrono::seconds(5);

}  // namespace

JobReporter::JobReporter(std::string server, sys::JobRecord job, const std::atomic<std::int64_t>& tasks_put,
                         std::chrono::milliseconds patience)
    : server_(std::move(server)),
      job_(std::move(job)),
      tasks_put_(tasks_put),
      patience_(patience),
      thread_([this] { run(); }) {}

JobReporter::~JobReporter() {
  stop();
}

void JobReporter::stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_ && !thread_.joinable()) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void JobReporter::collect(ts::Client& c) {
  for (const auto& tmpl : {done_template(), batch_done_template(), retreat_template()}) {
    while (true) {
      auto records = c.in_many(job_.space, tmpl, kBatch);
      for (const auto& r : records) tally_.add(r);
      if (records.size() < kBatch) break;
    }
  }
}

void JobReporter::run() {
  std::unique_ptr<ts::Client> client;
  std::int64_t published_done = -1, published_put = -1, published_retreats = -1;
  std::map<std::string, NodeWork> published_nodes;
  // The job's work records, one per node (field 2).
  sys::KeyedSuperseder work(sys::jobwork_template(job_.id),
                            [](const ts::Tuple& t) { return t.get<std::string>(2); });
  auto published_at = std::chrono::steady_clock::now();
  std::string failing;  // the error of the failing ticks so far; empty when the last one worked
  bool last = false;
  while (!last) {
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, kTick, [this] { return stopping_; });
      last = stopping_;
    }
    // Statistics are a service to the scheduler: a tick that fails (the
    // server restarting, unreachable for a while) must not fail the job or
    // end the reports; the next tick tries again. The client's takes are
    // safe, so no done or retreat record is lost or counted twice.
    try {
      if (!client) {
        ts::ClientOptions o;
        o.safe_takes = true;
        o.request_timeout = patience_;
        // Heard again within a second of the server's answering.
        o.reconnect_backoff_max = std::chrono::milliseconds(1000);
        client = std::make_unique<ts::Client>(server_, o);
      }
      ts::Client& c = *client;
      if (!cancelled_ && !lost_) {
        auto t = c.rd(sys::kSpace, sys::job_template(job_.id), 0ms);
        auto rec = t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
        if (rec && rec->state == sys::JobState::Cancelled) cancelled_ = true;
        // Failed while this feeder runs: an agent found it silent (lose_job).
        if (rec && rec->state == sys::JobState::Failed) {
          auto l = c.rd(sys::kSpace, sys::joblost_template(job_.id), 0ms);
          auto why = l ? sys::JobLost::from_tuple(*l) : std::nullopt;
          lost_reason_ = why ? why->reason + " (recorded by " + why->node + ")" : "no reason recorded";
          lost_ = true;
        }
      }
      const bool ended = cancelled_ || lost_;
      // Removed on every tick while ended: a feeder still writing recreates
      // the space, and only the next removal ends its waits.
      if (ended && !last) c.remove(job_.space);
      if (!ended) collect(c);
      std::int64_t put = tasks_put_.load();
      auto now = std::chrono::steady_clock::now();
      if (tally_.tasks_done() != published_done || put != published_put ||
          tally_.retreats() != published_retreats || last || now - published_at >= kHeartbeat) {
        sys::replace(c, sys::jobstat_template(job_.id),
                     tally_.stat(job_.id, put, sys::wall_now()).to_tuple());
        // The nodes whose count changed, rewritten together (one wait): a
        // replace() each was two requests and two waits a node, one after
        // another, so that on a pool of 10,000 this tick grew with the nodes
        // at work (docs/scale.md, limit 19).
        std::vector<ts::Tuple> changed;
        for (const auto& [node, w] : tally_.per_node()) {
          const auto& before = published_nodes[node];
          if (before.tasks == w.tasks && before.retreats == w.retreats) continue;
          changed.push_back(
              sys::JobWork{job_.id, node, w.tasks, w.seconds, w.retreats, w.owner_retreats}.to_tuple());
        }
        work.write(c, changed);
        c.flush();
        for (const auto& [node, w] : tally_.per_node()) published_nodes[node] = w;
        published_at = now;
        published_done = tally_.tasks_done();
        published_put = put;
        published_retreats = tally_.retreats();
      }
      if (!failing.empty())
        std::fprintf(stderr, "%s: job %lld statistics are current again\n", job_.name.c_str(),
                     static_cast<long long>(job_.id));
      failing.clear();
    } catch (const std::exception& e) {
      work.forget();  // a posted discard may have failed: read at the next write
      if (failing != e.what())
        std::fprintf(stderr, "%s: job %lld statistics: %s; trying again\n", job_.name.c_str(),
                     static_cast<long long>(job_.id), e.what());
      failing = e.what();
      if (last) break;
    }
  }
}

}  // namespace piranha
