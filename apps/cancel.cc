// piranha cancel: marks a live (or held) job cancelled in the system space. The job's
// feeder (its JobReporter) notices within a second, removes the job's space
// and exits; agents retreat the job's piranhas.
#include <iostream>

#include "commands.h"
#include "piranha/runtime/sysspace.h"
#include "pool_command.h"

using namespace std::chrono_literals;

namespace piranha::apps {
namespace {

struct CancelArgs {
  std::shared_ptr<std::string> server;
  std::int64_t id = 0;
};

int cancel(const CancelArgs& a) {
  if (a.id <= 0) throw CommandFailure(2, "ID must be a job id (1, 2, ...), not " + std::to_string(a.id));
  auto client = connect(*a.server);
  if (!client->rd(sys::kSpace, sys::job_template(a.id), 0ms))
    throw CommandFailure(1, "no job " + std::to_string(a.id) + " (see `piranha jobs --all`)");
  // Take, check and rewrite the record in one hand, so a job that ends right
  // now keeps its real end. The wait covers a moment when another process
  // holds the record to rewrite it.
  auto t = client->in(sys::kSpace, sys::job_template(a.id), 5s);
  if (!t) throw CommandFailure(1, "job " + std::to_string(a.id) + " vanished from the system space");
  auto job = sys::JobRecord::from_tuple(t->tuple);
  if (!job || sys::is_finished(job->state)) {
    client->out(sys::kSpace, t->tuple);
    client->flush();
    if (!job)
      throw CommandFailure(1, "job " + std::to_string(a.id) + " has a malformed record; left as it is");
    std::cerr << "job " << a.id << " (" << job->name << ") already ended: " << sys::name(job->state)
              << "; nothing to cancel\n";
    return 0;
  }
  job->state = sys::JobState::Cancelled;
  client->out(sys::kSpace, job->to_tuple());
  sys::record_job_times(*client, sys::JobTimes{job->id, 0, sys::wall_now()});
  client->flush();
  std::cerr << "job " << a.id << " (" << job->name
            << ") cancelled; its feeder stops and its piranhas retreat\n";
  return 0;
}

}  // namespace

void add_cancel(CLI::App& app) {
  auto a = std::make_shared<CancelArgs>();
  auto* cmd = app.add_subcommand("cancel", "cancel a queued, running or held job");
  a->server = add_server_option(*cmd);
  cmd->add_option("ID", a->id, "the job's id (`piranha jobs`)")->required();
  cmd->footer(
      "Exits 0 when the job is cancelled or had already ended (it says which), 1 when there is no such job.");
  cmd->callback([a] { run_command("cancel", *a->server, [&] { return cancel(*a); }); });
}

}  // namespace piranha::apps
