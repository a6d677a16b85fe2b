// piranha release: lets a held job run again. Its state goes back to
// running when its feeder has reported (a ("jobstat", ...) exists: the
// feeder is waiting for results), else to queued; its ("jobheld", ...)
// reason goes, and agents start its piranhas again, each with a fresh count
// of failures.
#include <iostream>

#include "commands.h"
#include "piranha/runtime/sysspace.h"
#include "pool_command.h"

using namespace std::chrono_literals;

namespace piranha::apps {
namespace {

struct ReleaseArgs {
  std::shared_ptr<std::string> server;
  std::int64_t id = 0;
};

int release(const ReleaseArgs& a) {
  if (a.id <= 0) throw CommandFailure(2, "ID must be a job id (1, 2, ...), not " + std::to_string(a.id));
  auto client = connect(*a.server);
  auto t = client->rd(sys::kSpace, sys::job_template(a.id), 0ms);
  auto job = t ? sys::JobRecord::from_tuple(*t) : std::nullopt;
  if (!job) throw CommandFailure(1, "no job " + std::to_string(a.id) + " (see `piranha jobs --all`)");
  bool fed = client->rd(sys::kSpace, sys::jobstat_template(a.id), 0ms).has_value();
  auto state = fed ? sys::JobState::Running : sys::JobState::Queued;
  if (!sys::release_job(*client, a.id, state)) {
    auto now = client->rd(sys::kSpace, sys::job_template(a.id), 0ms);
    auto rec = now ? sys::JobRecord::from_tuple(*now) : std::nullopt;
    throw CommandFailure(1, "job " + std::to_string(a.id) + " is not held (it is " +
                                (rec ? std::string(sys::name(rec->state)) : std::string("gone")) + ")");
  }
  client->flush();
  std::cerr << "job " << a.id << " (" << job->name << ") released: " << sys::name(state)
            << " again; agents start its piranhas\n";
  return 0;
}

}  // namespace

void add_release(CLI::App& app) {
  auto a = std::make_shared<ReleaseArgs>();
  auto* cmd =
      app.add_subcommand("release", "let a held job run again (`piranha jobs` shows why it was held)");
  a->server = add_server_option(*cmd);
  cmd->add_option("ID", a->id, "the job's id (`piranha jobs`)")->required();
  cmd->footer("Exits 0 when the job is released, 1 when there is no such job or it is not held.");
  cmd->callback([a] { run_command("release", *a->server, [&] { return release(*a); }); });
}

}  // namespace piranha::apps
