#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "piranha/runtime/sysspace.h"
#include "piranha/runtime/task_tally.h"
#include "runtime_state.h"
#include "take_plan.h"

using namespace std::chrono_literals;

namespace piranha {

const ts::Tuple& Task::tuple() const {
  return s_->tuple;
}
const ts::Tuple& Task::progress() const {
  return s_->progress;
}
void Task::set_progress(ts::Tuple p) {
  s_->progress = std::move(p);
}
bool Task::held() const {
  return s_->held;
}

ts::Space& Piranha::space() {
  return *s_.space;
}
const std::vector<std::string>& Piranha::args() const {
  return s_.args;
}
std::int64_t Piranha::job_id() const {
  return s_.job_id;
}
const std::string& Piranha::node() const {
  return s_.node;
}

namespace {

// How long a piranha waits for a task before checking whether its job is
// still live.
constexpr std::chrono::milliseconds kTakeSlice{250};
constexpr auto kJobCheckEvery = std::chrono::seconds(1);

// The completions of a batch's tasks are sent as one request once the batch
// is done, or sooner once their results reach this size.
constexpr std::size_t kUnsentBytes = 1 << 20;

bool end_lease(detail::PiranhaState& s, ts::LeaseId lease, const std::vector<ts::Tuple>& outs);
void put_back_prefetched(detail::PiranhaState& s);

// About the size a tuple takes on the wire.
std::size_t approximate_bytes(const ts::Tuple& t) {
  std::size_t n = 1;
  for (const ts::Value& v : t.fields()) {
    n += 9;
    if (auto* str = std::get_if<std::string>(&v))
      n += str->size();
    else if (auto* blob = std::get_if<ts::Blob>(&v))
      n += blob->bytes.size();
  }
  return n;
}

std::shared_ptr<detail::TaskState> hold(detail::PiranhaState& s, ts::Leased&& l, bool batched) {
  auto st = std::make_shared<detail::TaskState>();
  st->tuple = std::move(l.tuple);
  st->lease = l.lease;
  st->renewed = st->renew_tried = Clock::now();
  st->batched = batched;
  s.task_bytes = std::max(s.task_bytes, approximate_bytes(st->tuple));
  s.held.push_back(st);
  s.next_renewal = std::min(s.next_renewal, st->renewed + s.lease / 2);
  return st;
}

// Notes in the job's ("jobtime", ...) tuple that this piranha took its first
// task at `at`, unless an earlier start is already there (the common case
// after the job's first piranha: one read, no rewrite). The job's start
// time is a service to the scheduler: failing to note it must not fail the
// task, so an error is only reported.
void note_first_task(detail::PiranhaState& s, double at) {
  s.start_noted = true;
  try {
    auto t = s.client->rd(sys::kSpace, sys::jobtime_template(s.job_id), 0ms);
    auto known = t ? sys::JobTimes::from_tuple(*t) : std::nullopt;
    if (known && known->start_time != 0 && known->start_time <= at) return;
    sys::record_job_times(*s.client, sys::JobTimes{s.job_id, at, 0});
  } catch (const ts::TupleSpaceError& e) {
    std::fprintf(stderr, "piranha on %s: job %lld: could not record its start time: %s\n", s.node.c_str(),
                 static_cast<long long>(s.job_id), e.what());
  }
}

}  // namespace

std::optional<Task> Piranha::take(const ts::Template& tmpl) {
  auto hand_out = [&](std::shared_ptr<detail::TaskState> st) {
    st->started = true;
    st->started_at = sys::wall_now();
    st->taken = Clock::now();
    if (!s_.start_noted) note_first_task(s_, st->started_at);
    return Task(std::move(st));
  };
  if (!s_.prefetched.empty() && s_.prefetch_fields == tmpl.fields() && !s_.retreat->load()) {
    auto st = s_.prefetched.front();
    s_.prefetched.pop_front();
    return hand_out(st);
  }
  // Prefetched tasks of another template go back for others, in one step
  // (a batch holds up to thousands).
  if (!s_.prefetched.empty()) put_back_prefetched(s_);
  detail::send_completions(s_);
  // The longer of the mean so far and the recent one: tasks that grow
  // slower during a job are not taken thousands at a time on old evidence.
  double mean = s_.tasks_completed ? s_.task_seconds / static_cast<double>(s_.tasks_completed) : 0;
  const detail::TakePlan plan =
      detail::plan_take(s_.tasks_completed, std::max(mean, s_.recent_task_seconds), s_.task_bytes);
  const bool batching = plan.mode == detail::TakeMode::Batch;
  const bool ahead = plan.mode == detail::TakeMode::Ahead;
  // Hands out a task taken one at a time, asking for the next one first.
  auto take_one = [&](ts::Leased&& l) {
    auto st = hold(s_, std::move(l), false);
    if (ahead) {
      s_.client->prefetch(s_.space->name(), tmpl, s_.lease);
      s_.ahead_fields = tmpl.fields();
    }
    return hand_out(std::move(st));
  };
  // A retreating piranha leaves the task asked for ahead to the runtime,
  // which puts it back with the others.
  if (s_.retreat->load() || s_.cut_off) return std::nullopt;
  try {
    // The task asked for while the last one ran: its answer is here by now.
    if (auto next = detail::take_ahead(s_, s_.request_timeout)) {
      if (s_.ahead_fields == tmpl.fields()) return take_one(std::move(*next));
      end_lease(s_, next->lease, {next->tuple});  // of another template: back for others
    }
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() == ts::Code::Unreachable) {
      s_.cut_off = true;
      return std::nullopt;
    }
    if (e.code() == ts::Code::Interrupted) return std::nullopt;  // retreating
    throw;
  }
  while (!s_.job_ended) {
    if (s_.retreat->load() || s_.cut_off) return std::nullopt;
    std::optional<ts::Leased> got;
    try {
      if (batching) {
        auto many = s_.client->in_many_leased(s_.space->name(), tmpl, plan.batch, 0ms, s_.lease);
        detail::settle_completions(s_, true);
        if (!many.empty()) {
          for (std::size_t i = 1; i < many.size(); ++i)
            s_.prefetched.push_back(hold(s_, std::move(many[i]), true));
          s_.prefetch_fields = tmpl.fields();
          return hand_out(hold(s_, std::move(many[0]), true));
        }
      }
      got = s_.client->in(s_.space->name(), tmpl, kTakeSlice, s_.lease);
      detail::settle_completions(s_, true);
    } catch (const ts::TupleSpaceError& e) {
      // The feeder removes the job's space when the job ends.
      if (e.code() == ts::Code::SpaceRemoved) {
        s_.job_ended = true;
        return std::nullopt;
      }
      if (e.code() == ts::Code::Unreachable) {
        s_.cut_off = true;
        return std::nullopt;
      }
      if (e.code() == ts::Code::Interrupted) return std::nullopt;  // retreating
      throw;
    }
    if (got) return take_one(std::move(*got));
    auto now = Clock::now();
    if (now - s_.last_job_check >= kJobCheckEvery) {
      s_.last_job_check = now;
      // A short wait: the record is briefly absent while somebody rewrites it.
      auto job = s_.client->rd(sys::kSpace, sys::job_template(s_.job_id), 500ms);
      auto rec = job ? sys::JobRecord::from_tuple(*job) : std::nullopt;
      if (!rec || !sys::is_live(rec->state)) s_.job_ended = true;
    }
  }
  return std::nullopt;
}

namespace {

void release(std::deque<std::shared_ptr<detail::TaskState>>& held, const detail::TaskState* st) {
  if (!held.empty() && held.front().get() == st) return held.pop_front();
  if (!held.empty() && held.back().get() == st) return held.pop_back();
  std::erase_if(held, [st](const auto& p) { return p.get() == st; });
}

// Completes `lease` with `outs`. False, counted in s.lost, when the server
// refused (the lease had ended) and when the answer was lost with the
// connection: the completion was then carried out or its lease returned the
// task, so the results are written exactly once either way, and the piranha
// goes on. A server unreachable past the deadline cuts the piranha off.
bool end_lease(detail::PiranhaState& s, ts::LeaseId lease, const std::vector<ts::Tuple>& outs) {
  try {
    if (s.client->complete(lease, s.space->name(), outs)) return true;
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() == ts::Code::Unreachable)
      s.cut_off = true;
    else if (e.code() != ts::Code::UnknownOutcome && e.code() != ts::Code::DeadlineExceeded &&
             e.code() != ts::Code::Interrupted)
      throw;
  }
  ++s.lost;
  return false;
}

// Ends the leases of the tasks taken ahead and not handed out, writing each
// back as it was, in one step; should that be refused (a lease had ended),
// one by one, so that those still held go back. When the answer is lost
// (the connection, the deadline, a retreat's interrupt) the step was done or
// not, all or nothing, and the leases of a lost session return the tasks
// anyway: nothing more is sent.
void put_back_prefetched(detail::PiranhaState& s) {
  std::vector<ts::LeaseId> leases;
  std::vector<ts::Tuple> tuples;
  for (auto& st : s.prefetched) {
    st->held = false;
    leases.push_back(st->lease);
    tuples.push_back(st->tuple);
  }
  s.prefetched.clear();
  std::erase_if(s.held, [](const auto& st) { return !st->held; });
  if (s.retreat->load()) {
    // A retreat must not wait on the server: a refusal is only counted.
    s.client->complete_all_posted(leases, s.space->name(), tuples);
    return;
  }
  try {
    if (s.client->complete_all(leases, s.space->name(), tuples)) return;
  } catch (const ts::TupleSpaceError& e) {
    if (e.code() == ts::Code::Unreachable)
      s.cut_off = true;  // their leases return them
    else if (e.code() != ts::Code::UnknownOutcome && e.code() != ts::Code::DeadlineExceeded &&
             e.code() != ts::Code::Interrupted)
      throw;
    return;
  }
  for (std::size_t i = 0; i < leases.size() && !s.cut_off && !s.retreat->load(); ++i)
    end_lease(s, leases[i], {tuples[i]});
}

}  // namespace

namespace detail {

void send_completions(PiranhaState& s) {
  if (s.unsent.empty()) return;
  if (s.unsent.size() == 1) {
    Finished& f = s.unsent.front();
    std::vector<ts::Tuple> outs = f.outs;
    outs.push_back(done_record(s.node, f.started_at, f.seconds));
    s.client->complete_posted(f.lease, s.space->name(), outs);
  } else {
    std::vector<ts::LeaseId> leases;
    std::vector<ts::Tuple> outs;
    double started = s.unsent.front().started_at, seconds = 0;
    for (const Finished& f : s.unsent) {
      leases.push_back(f.lease);
      outs.insert(outs.end(), f.outs.begin(), f.outs.end());
      started = std::min(started, f.started_at);
      seconds += f.seconds;
    }
    outs.push_back(done_record(s.node, started, seconds, static_cast<std::int64_t>(s.unsent.size())));
    s.client->complete_all_posted(leases, s.space->name(), outs);
  }
  for (Finished& f : s.unsent) s.unsettled.push_back(std::move(f));
  s.unsent.clear();
  s.unsent_bytes = 0;
}

std::optional<ts::Leased> take_ahead(PiranhaState& s, std::chrono::milliseconds limit) {
  if (!s.client->prefetching()) return std::nullopt;
  auto next = s.client->take_prefetched(limit);
  settle_completions(s, true);  // every request posted before it is answered too
  return next;
}

void hold_ahead(PiranhaState& s, ts::Leased&& task) {
  hold(s, std::move(task), false);
}

void settle_completions(PiranhaState& s, bool answered) {
  auto lost = s.client->take_lost_leases();
  std::vector<Finished> unsettled;
  if (answered) unsettled.swap(s.unsettled);
  if (lost.empty()) return;
  for (Finished& f : unsettled) {
    auto it = std::find(lost.begin(), lost.end(), f.lease);
    if (it == lost.end()) continue;
    lost.erase(it);
    // Its batch was refused whole; this task's own lease may still be held.
    f.outs.push_back(done_record(s.node, f.started_at, f.seconds));
    end_lease(s, f.lease, f.outs);
  }
  s.lost += static_cast<std::int64_t>(lost.size());
}

}  // namespace detail

namespace {

// The short tasks' completions wait for the rest of their batch.
bool batch_pending(const detail::PiranhaState& s) {
  return !s.prefetched.empty() && s.unsent_bytes < kUnsentBytes;
}

}  // namespace

bool Piranha::complete(Task& task, std::vector<ts::Tuple> outs) {
  auto& st = *task.s_;
  if (!st.held) throw std::logic_error("complete: the task was already completed or put back");
  double seconds = std::chrono::duration<double>(Clock::now() - st.taken).count();
  st.held = false;
  release(s_.held, &st);
  ++s_.tasks_completed;
  s_.task_seconds += seconds;
  s_.recent_task_seconds = s_.tasks_completed == 1 ? seconds : 0.9 * s_.recent_task_seconds + 0.1 * seconds;
  if (st.batched) {
    for (const ts::Tuple& t : outs) s_.unsent_bytes += approximate_bytes(t);
    s_.unsent.push_back(detail::Finished{st.lease, std::move(outs), st.started_at, seconds});
    if (!batch_pending(s_)) detail::send_completions(s_);
    return true;
  }
  // Posted: the piranha goes on at once, and the answer is read with its
  // next request (settle_completions).
  outs.push_back(done_record(s_.node, st.started_at, seconds));
  s_.client->complete_posted(st.lease, s_.space->name(), outs);
  return true;
}

bool Piranha::put_back(Task& task, std::vector<ts::Tuple> outs) {
  auto& st = *task.s_;
  if (!st.held) throw std::logic_error("put_back: the task was already completed or put back");
  st.held = false;
  release(s_.held, &st);
  if (s_.retreat->load()) {
    // A retreat must not wait on the server.
    s_.client->complete_posted(st.lease, s_.space->name(), outs);
    return true;
  }
  return end_lease(s_, st.lease, outs);
}

bool Piranha::should_retreat() {
  if (s_.retreat->load() || s_.cut_off) return true;
  // Renew leases at half their length, so a long task keeps its lease; a
  // failed renewal is tried again a second later. The held tasks are looked
  // through only when one may need it (a batch holds thousands).
  auto now = Clock::now();
  if (now < s_.next_renewal) return false;
  auto next = Clock::time_point::max();
  for (auto& st : s_.held) {
    if (now - st->renewed < s_.lease / 2 || now - st->renew_tried < std::chrono::seconds(1)) {
      next = std::min(next, std::max(st->renewed + s_.lease / 2, st->renew_tried + std::chrono::seconds(1)));
      continue;
    }
    st->renew_tried = now;
    try {
      s_.client->renew(st->lease, s_.lease);
      st->renewed = now;
    } catch (const ts::TupleSpaceError& e) {
      // Refused: the lease already ended, and complete() will say so. Not
      // answered: the server is away; once the lease has surely run out,
      // the work is somebody else's and this piranha stops.
      if (e.code() == ts::Code::UnknownLease)
        st->renewed = now;
      else if (now - st->renewed >= s_.lease)
        s_.cut_off = true;
    }
    next = std::min(next, std::max(st->renewed + s_.lease / 2, st->renew_tried + std::chrono::seconds(1)));
  }
  s_.next_renewal = next;
  return s_.cut_off;
}

}  // namespace piranha
