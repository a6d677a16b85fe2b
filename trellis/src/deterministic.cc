#include "piranha/trellis/deterministic.h"

#include <algorithm>
#include <deque>
#include <map>
#include <stdexcept>

#include "core.h"

namespace piranha::trellis {

struct DeterministicTrellis::Impl : detail::Sink {
  std::vector<std::vector<detail::Activation>> inbox;
  std::vector<bool> queued;
  std::deque<int> ready;
  std::map<int, std::vector<Command>> received;
  bool record = true;
  std::vector<TimePoint> next_probe;  // per node; TimePoint::max() when not periodic
  std::unique_ptr<detail::Core> core;

  Impl(const Program& p, const Registry& types, ManualClock* clock) {
    validate(p, types);
    core = std::make_unique<detail::Core>(
        p, types, "", [clock] { return clock->now(); }, *this);
    inbox.resize(core->size());
    queued.assign(core->size(), false);
    for (const auto& n : p.nodes)
      next_probe.push_back(n.probe_every ? clock->now() + *n.probe_every : TimePoint::max());
  }

  void deliver(int to, detail::Activation a) override {
    inbox[static_cast<std::size_t>(to)].push_back(std::move(a));
    if (!queued[static_cast<std::size_t>(to)]) {
      queued[static_cast<std::size_t>(to)] = true;
      ready.push_back(to);
    }
  }

  void commanded(const detail::Cell& c, const Command& cmd) override {
    if (record) received[c.index].push_back(cmd);
  }
};

DeterministicTrellis::DeterministicTrellis(const Program& program, const Registry& types, ManualClock* clock)
    : own_clock_(clock ? nullptr : std::make_unique<ManualClock>()),
      clock_(clock ? clock : own_clock_.get()),
      impl_(std::make_unique<Impl>(program, types, clock_)) {}

DeterministicTrellis::~DeterministicTrellis() = default;

void DeterministicTrellis::probe(std::string_view node) {
  int i = impl_->core->index(node);
  impl_->deliver(i, detail::Activation{Cause::Probe, -1, Value{}, impl_->core->new_trace(i)});
}

void DeterministicTrellis::command(std::string_view node, Value data) {
  int i = impl_->core->index(node);
  impl_->deliver(i, detail::Activation{Cause::Command, -1, std::move(data), {}});
}

void DeterministicTrellis::set_link(std::string_view node, std::string_view neighbour, LinkState state) {
  int i = impl_->core->index(node);
  int j = impl_->core->index(neighbour);
  impl_->deliver(i, detail::Activation{Cause::Link, j, Value(state == LinkState::Up), {}});
}

std::size_t DeterministicTrellis::run(std::size_t max_steps) {
  std::size_t n = 0;
  std::vector<detail::Activation> batch;
  while (!impl_->ready.empty()) {
    if (n >= max_steps)
      throw std::runtime_error("trellis did not settle after " + std::to_string(max_steps) +
                               " recalculations");
    int i = impl_->ready.front();
    impl_->ready.pop_front();
    impl_->queued[static_cast<std::size_t>(i)] = false;
    auto& inbox = impl_->inbox[static_cast<std::size_t>(i)];
    batch.swap(inbox);
    detail::Cell& c = impl_->core->cell(i);
    std::uint64_t changes = c.stats.changes;
    unsigned causes = impl_->core->process(i, batch);
    // The node gets its own buffer back, emptied: a scheduler over thousands
    // of monitors receives thousands of activations a tick, and would
    // otherwise grow a small buffer to that size again at every tick.
    if (inbox.empty()) batch.swap(inbox);
    if (causes == 0) continue;
    steps_.push_back(Step{c.spec->name, causes, c.stats.changes != changes});
    ++n;
  }
  return n;
}

void DeterministicTrellis::advance(Duration d) {
  TimePoint end = clock_->now() + d;
  while (true) {
    auto it = std::min_element(impl_->next_probe.begin(), impl_->next_probe.end());
    if (it == impl_->next_probe.end() || *it > end) break;
    int i = static_cast<int>(it - impl_->next_probe.begin());
    clock_->set(*it);
    *it += *impl_->core->program().nodes[static_cast<std::size_t>(i)].probe_every;
    probe(impl_->core->cell(i).spec->name);
    run();
  }
  clock_->set(end);
}

const Value& DeterministicTrellis::state(std::string_view node) const {
  return impl_->core->cell(impl_->core->index(node)).state;
}

std::vector<Command> DeterministicTrellis::commands_received(std::string_view node) const {
  auto it = impl_->received.find(impl_->core->index(node));
  return it == impl_->received.end() ? std::vector<Command>{} : it->second;
}

void DeterministicTrellis::record_commands(bool on) {
  impl_->record = on;
}

Report DeterministicTrellis::report() const {
  return impl_->core->report();
}

}  // namespace piranha::trellis
