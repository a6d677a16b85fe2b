#include <stdexcept>

#include "runtime_state.h"

namespace piranha {

ts::Space& Feeder::space() {
  return *impl_.space;
}
const std::vector<std::string>& Feeder::args() const {
  return impl_.args;
}
std::int64_t Feeder::job_id() const {
  return impl_.job_id;
}
void Feeder::count_tasks(std::int64_t n) {
  impl_.tasks_put += n;
}

void Feeder::put_tasks(const std::vector<ts::Tuple>& tasks) {
  for (const auto& t : tasks)
    if (t.size() == 0 || ts::type_of(t[0]) != ts::Type::String || t.get<std::string>(0) != kTaskTag)
      throw std::invalid_argument("put_tasks: " + ts::to_string(t) + " is not a (\"task\", ...) tuple");
  space().out_many(tasks);
  count_tasks(static_cast<std::int64_t>(tasks.size()));
}

}  // namespace piranha
